// The allowed keys of a mask reach both formulations of attention through one KeyMask
// (generators/algorithm/mask.h): a key range [begin, end) per query and a per-key predicate. No
// mask kind of the spec uses a lower bound or a predicate yet, so this test builds a KeyMask by
// hand (a sliding window that ends at the causal bound, and every third key left out) and checks
// the composed attention (with its bands before and after the dense part) and the online softmax
// (whose groups walk only the key blocks between their first query's begin and last query's
// end) against a plain double loop. JIT-compiled with plain schedules: this is about which keys
// count, not about speed.
#include "algorithm/mask.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "Halide.h"
#include "algorithm/attention.h"
#include "algorithm/dims.h"
#include "algorithm/online_attention.h"

namespace attngen::test {
namespace {

using Halide::Buffer;
using Halide::Expr;
using Halide::Func;

constexpr int kD = 8, kNq = 70, kNk = 90, kWindow = 40;

// Query i's position among the keys (bottom-right alignment).
int position(int i) {
    return i + kNk - kNq;
}

// The hand-made mask: keys (p(i) - kWindow, p(i)] of query i, without those with j % 3 == 1.
bool allowed(int i, int j) {
    return j <= position(i) && j > position(i) - kWindow && j % 3 != 1;
}

algorithm::KeyMask window_mask() {
    const auto &v = algorithm::dims();
    algorithm::KeyMask mask;
    mask.spec.causal = true;  // A range that varies by query: the reductions get bands.
    // Clamped into [0, Nk], as a mask's bounds must be for bounds inference to bound the keys
    // that the reductions read.
    auto end = [](Expr i) { return Halide::clamp(i + (kNk - kNq) + 1, 0, kNk); };
    auto begin = [](Expr i) { return Halide::clamp(i + (kNk - kNq) - kWindow + 1, 0, kNk); };
    const Expr first = (v.i / algorithm::kCausalGroup) * algorithm::kCausalGroup;
    const Expr last = Halide::min(first + algorithm::kCausalGroup - 1, kNq - 1);
    mask.end = Func("window_end");
    mask.end(v.i, v.b) = end(v.i);
    mask.begin = Func("window_begin");
    mask.begin(v.i, v.b) = begin(v.i);
    // The group's common keys: from its last query's begin to its first query's end (the window
    // is wider than a group, so the range is never empty).
    mask.dense_begin = Func("window_dense_begin");
    mask.dense_begin(v.i, v.b) = begin(last);
    mask.dense_end = Func("window_dense_end");
    mask.dense_end(v.i, v.b) = end(first);
    mask.allowed = Func("every_third_key_out");
    mask.allowed(v.j, v.i, v.b) = v.j % 3 != 1;
    return mask;
}

struct Inputs {
    Buffer<float> q{kD, kNq, 1, 1}, k{kD, kNk, 1, 1}, v{kD, kNk, 1, 1};
    Inputs() {
        std::mt19937 rng(5);
        std::normal_distribution<float> normal;
        for (Buffer<float> *b : {&q, &k, &v}) b->for_each_value([&](float &x) { x = normal(rng); });
    }
};

// out and lse of every query over its allowed keys, in double.
void reference(const Inputs &in, float scale, std::vector<double> *out, std::vector<double> *lse) {
    out->assign(kNq * kD, 0);
    lse->assign(kNq, -std::numeric_limits<double>::infinity());
    for (int i = 0; i < kNq; i++) {
        std::vector<double> s(kNk, 0);
        double max = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int j = 0; j < kNk; j++) {
            if (!allowed(i, j)) continue;
            for (int d = 0; d < kD; d++) s[j] += double(in.q(d, i, 0, 0)) * in.k(d, j, 0, 0);
            s[j] *= scale;
            max = std::max(max, s[j]);
        }
        for (int j = 0; j < kNk; j++) {
            if (allowed(i, j)) sum += std::exp(s[j] - max);
        }
        for (int j = 0; j < kNk; j++) {
            if (!allowed(i, j)) continue;
            const double p = std::exp(s[j] - max) / sum;
            for (int e = 0; e < kD; e++) (*out)[i * kD + e] += p * in.v(e, j, 0, 0);
        }
        (*lse)[i] = max + std::log(sum);
    }
}

// A Buffer as a Func of the algorithms.
Func input(const Buffer<float> &b) {
    const auto &v = algorithm::dims();
    Func f;
    f(v.d, v.j, v.h, v.b) = b(v.d, v.j, v.h, v.b);
    return f;
}

algorithm::AttentionShape shape() {
    algorithm::AttentionShape s;
    s.nq = kNq;
    s.nk = kNk;
    s.d_k = s.d_v = kD;
    s.heads = s.kv_heads = 1;
    return s;
}

void expect_matches(Func out_f, Func lse_f, const Inputs &in, float scale) {
    Buffer<float> out(kD, kNq, 1, 1), lse(kNq, 1, 1);
    Halide::Pipeline({out_f, lse_f}).realize({out, lse});
    std::vector<double> want_out, want_lse;
    reference(in, scale, &want_out, &want_lse);
    for (int i = 0; i < kNq; i++) {
        EXPECT_NEAR(lse(i, 0, 0), want_lse[i], 1e-4) << "query " << i;
        for (int e = 0; e < kD; e++) {
            EXPECT_NEAR(out(e, i, 0, 0), want_out[i * kD + e], 1e-4) << "query " << i;
        }
    }
}

TEST(Mask, ComposedAttentionSeesOnlyTheRangeAndThePredicate) {
    const Inputs in;
    const float scale = 0.3f;
    algorithm::AttentionFuncs f = algorithm::define_attention(input(in.q), input(in.k), input(in.v),
                                                              window_mask(), shape(), Expr(scale));
    for (Func g : {f.scores.dot, f.scores.scores, f.softmax.row_max, f.softmax.weights,
                   f.softmax.row_sum, f.weighted_sum.acc}) {
        g.compute_root();
    }
    f.mask.compute_root();
    expect_matches(f.out, f.lse, in, scale);
}

TEST(Mask, OnlineSoftmaxWalksOnlyTheGroupsKeyBlocks) {
    const Inputs in;
    const float scale = 0.3f;
    // Blocks of 16 keys: the window's first blocks fall before every group's begin.
    algorithm::OnlineBlocking blocking;
    blocking.key_block = 16;
    blocking.query_group = 32;
    algorithm::OnlineAttentionFuncs f = algorithm::define_online_attention(
        input(in.q), input(in.k), input(in.v), window_mask(), shape(), Expr(scale), blocking);
    for (Func g : {f.scores.dot, f.block_max, f.block_weights, f.block_sum, f.block_acc,
                   f.group_begin, f.group_end, f.running_grouped}) {
        g.compute_root();
    }
    f.mask.compute_root();
    expect_matches(f.out, f.lse, in, scale);
}

}  // namespace
}  // namespace attngen::test
