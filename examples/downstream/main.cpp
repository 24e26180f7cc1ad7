// Runs the three kernels that CMakeLists.txt generates through the attngen runtime, which validates
// each call exactly as for its own kernels, and checks the results against reference.cpp.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "attngen/attngen.h"
#include "cross_dk64_dv32_kernel.h"
#include "encoder_d256_tuned_kernel.h"
#include "gqa_causal_d96_kernel.h"
#include "reference.h"

namespace {

std::vector<float> random_values(int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(n);
    for (float &x : values) x = normal(rng);
    return values;
}

// float32 results may differ from the double reference by rounding only: a few ulp of the
// largest terms, far below these bounds for sums over at most a few hundred products.
bool close(const char *what, const std::vector<float> &got, const std::vector<double> &want) {
    for (size_t i = 0; i < want.size(); i++) {
        const bool both_minus_inf = std::isinf(want[i]) && got[i] == float(want[i]);
        if (!both_minus_inf && !(std::fabs(got[i] - want[i]) <= 1e-4 + 1e-4 * std::fabs(want[i]))) {
            std::fprintf(stderr, "%s[%zu] = %.7g, reference %.7g\n", what, i, got[i], want[i]);
            return false;
        }
    }
    return true;
}

// One call of a generated kernel through attngen::attention, checked against the reference.
bool run_case(const char *label, const attngen::Kernel &kernel, const Shape &s, bool causal,
              const std::vector<int32_t> &key_lengths) {
    const auto q = random_values(s.batch * s.heads * s.nq * s.d_k, 1);
    const auto k = random_values(s.batch * s.kv_heads * s.nk * s.d_k, 2);
    const auto v = random_values(s.batch * s.kv_heads * s.nk * s.d_v, 3);
    std::vector<float> out(s.batch * s.heads * s.nq * s.d_v), lse(s.batch * s.heads * s.nq);

    attngen::AttentionArgs args;
    args.q = attngen::TensorView::f32(q.data(), {s.batch, s.heads, s.nq, s.d_k});
    args.k = attngen::TensorView::f32(k.data(), {s.batch, s.kv_heads, s.nk, s.d_k});
    args.v = attngen::TensorView::f32(v.data(), {s.batch, s.kv_heads, s.nk, s.d_v});
    args.out = attngen::TensorView::f32(out.data(), {s.batch, s.heads, s.nq, s.d_v});
    args.lse = attngen::TensorView::f32(lse.data(), {s.batch, s.heads, s.nq});
    if (!key_lengths.empty())
        args.key_lengths = attngen::TensorView::i32(key_lengths.data(), {s.batch});
    args.causal = causal;
    attngen::CallInfo info;
    attngen::Status status = attngen::attention(args, kernel, &info);
    if (!status.ok()) {
        std::fprintf(stderr, "%s: %s\n", label, status.to_string().c_str());
        return false;
    }

    std::vector<double> want_out, want_lse;
    reference_attention(s, q, k, v, causal, key_lengths, &want_out, &want_lse);
    const bool ok = close("out", out, want_out) && close("lse", lse, want_lse);
    std::printf("%-44s %-16s %s\n", label, info.kernel.c_str(), ok ? "ok" : "MISMATCH");
    return ok;
}

}  // namespace

int main() {
    bool ok = true;
    const attngen::Kernel gqa = gqa_causal_d96_kernel();
    const attngen::Kernel cross = cross_dk64_dv32_kernel();
    const attngen::Kernel encoder = encoder_d256_tuned_kernel();

    // Causal grouped-query self-attention, then a decode-like call with fewer queries than keys
    // (the mask is aligned bottom-right) and padded keys.
    ok &= run_case("gqa causal d96, Nq = Nk = 37", gqa, {2, 8, 2, 37, 37, 96, 96}, true, {});
    ok &= run_case("gqa causal d96, Nq 3 < Nk 40, key lengths", gqa, {2, 8, 2, 3, 40, 96, 96}, true,
                   {40, 25});
    // Cross-attention: another sequence length for the memory, d_v != d_k.
    ok &=
        run_case("cross d_k 64 d_v 32, Nq 11, Nk 29", cross, {1, 4, 4, 11, 29, 64, 32}, false, {});
    // The tuned d256 kernel, with query and key counts that its register tiles and key chunks
    // do not divide, so that every loop has a remainder.
    ok &= run_case("encoder d256 tuned, Nq 75, Nk 150, key lengths", encoder,
                   {2, 2, 2, 75, 150, 256, 256}, false, {150, 101});

    // The runtime checks that a call fits the kernel's specialization before it runs: this
    // kernel is causal with head dim 96, so a head dim of 64 is refused with the reason.
    std::vector<float> q(8 * 4 * 64), kv(2 * 4 * 64), out(8 * 4 * 64);
    attngen::AttentionArgs wrong;
    wrong.q = attngen::TensorView::f32(q.data(), {1, 8, 4, 64});
    wrong.k = wrong.v = attngen::TensorView::f32(kv.data(), {1, 2, 4, 64});
    wrong.out = attngen::TensorView::f32(out.data(), {1, 8, 4, 64});
    wrong.causal = true;
    attngen::Status refused = attngen::attention(wrong, gqa);
    if (refused.code() != attngen::StatusCode::kInvalidArgument) {
        std::fprintf(stderr, "a head dim of 64 for a d96 kernel gave: %s\n",
                     refused.to_string().c_str());
        ok = false;
    } else {
        std::printf("%-44s refused: %s\n", "gqa causal d96 called with d 64",
                    refused.message().c_str());
    }

    std::printf(ok ? "downstream: all checks passed\n" : "downstream: FAILED\n");
    return ok ? 0 : 1;
}
