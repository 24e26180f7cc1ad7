// The composed attention kernel against the fp64 reference, for every compiled schedule.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "attngen/attngen.h"
#include "runtime_test_util.h"

namespace attngen::test {
namespace {

struct Outputs {
    std::vector<float> out, lse, probs;
    std::string kernel;
};

class AttentionTest : public ::testing::TestWithParam<std::string> {
  protected:
    // Runs the case through attngen::attention with this test's schedule.
    Outputs Run(const AttentionCase &c, bool with_probs) {
        const auto &s = c.shape;
        Outputs o;
        o.out.assign(s.batch * s.heads * s.nq * s.d_v, NAN);
        o.lse.assign(s.batch * s.heads * s.nq, NAN);
        if (with_probs) o.probs.assign(s.batch * s.heads * s.nq * s.nk, NAN);
        AttentionArgs args;
        args.q = TensorView::f32(c.q.data(), {s.batch, s.heads, s.nq, s.d_k});
        args.k = TensorView::f32(c.k.data(), {s.batch, s.kv_heads, s.nk, s.d_k});
        args.v = TensorView::f32(c.v.data(), {s.batch, s.kv_heads, s.nk, s.d_v});
        args.out = TensorView::f32(o.out.data(), {s.batch, s.heads, s.nq, s.d_v});
        args.lse = TensorView::f32(o.lse.data(), {s.batch, s.heads, s.nq});
        if (with_probs)
            args.probs = TensorView::f32(o.probs.data(), {s.batch, s.heads, s.nq, s.nk});
        if (!c.key_lengths.empty()) {
            args.key_lengths = TensorView::i64(c.key_lengths.data(), {s.batch});
        }
        args.causal = c.causal;
        args.scale = c.scale;
        args.schedule = GetParam();
        CallInfo info;
        Status status = attention(args, &info);
        EXPECT_TRUE(status.ok()) << status.to_string();
        o.kernel = info.kernel;
        return o;
    }

    // Runs the case and checks out and lse (and probs when asked) against the reference.
    void Check(AttentionCase &c, bool with_probs = false, uint32_t seed = 1,
               float magnitude = 1.0f) {
        c.prepare(seed, magnitude);
        Outputs o = Run(c, with_probs);
        EXPECT_TRUE(Matches(o.out, c.out, c.out32)) << "out, kernel " << o.kernel;
        EXPECT_TRUE(Matches(o.lse, c.lse, c.lse32)) << "lse, kernel " << o.kernel;
        if (with_probs) EXPECT_TRUE(Matches(o.probs, c.probs, c.probs32)) << "probs";
    }
};

AttentionCase Make(int64_t batch, int64_t heads, int64_t kv_heads, int64_t nq, int64_t nk,
                   int64_t d_k, int64_t d_v) {
    AttentionCase c;
    c.shape = {batch, heads, kv_heads, nq, nk, d_k, d_v};
    return c;
}

TEST_P(AttentionTest, SelfAttentionMatchesReference) {
    auto c = Make(1, 2, 2, 17, 17, 16, 16);
    Check(c);
}

TEST_P(AttentionTest, CrossAttentionWithOtherKeyLength) {
    auto c = Make(2, 2, 2, 5, 23, 8, 8);
    Check(c);
    auto longer_queries = Make(1, 1, 1, 40, 7, 8, 8);
    Check(longer_queries);
}

TEST_P(AttentionTest, ValueDimDiffersFromKeyDim) {
    auto c = Make(1, 2, 2, 9, 13, 8, 24);
    Check(c);
    auto narrow_values = Make(1, 2, 2, 9, 13, 32, 3);
    Check(narrow_values);
}

TEST_P(AttentionTest, CausalSquareMatchesReference) {
    auto c = Make(1, 2, 2, 33, 33, 16, 16);
    c.causal = true;
    Check(c, true);
}

TEST_P(AttentionTest, CausalDecodeStepAgainstCache) {
    for (int64_t nq : {1, 4}) {
        auto c = Make(2, 2, 2, nq, 40, 16, 16);
        c.causal = true;
        Check(c, true);
    }
}

TEST_P(AttentionTest, CausalWithMoreQueriesThanKeysMasksEarlyRows) {
    // Bottom-right alignment: query i sees keys j <= i - 6, so rows 0..5 see nothing.
    auto c = Make(1, 1, 1, 10, 4, 8, 8);
    c.causal = true;
    c.prepare(3);
    Outputs o = Run(c, true);
    for (int i = 0; i < 6; i++) {
        EXPECT_EQ(o.lse[i], -INFINITY) << "row " << i;
        for (int e = 0; e < 8; e++) EXPECT_EQ(o.out[i * 8 + e], 0.0f) << "row " << i;
    }
    EXPECT_TRUE(Matches(o.out, c.out, c.out32));
    EXPECT_TRUE(Matches(o.lse, c.lse, c.lse32));
    EXPECT_TRUE(Matches(o.probs, c.probs, c.probs32));
}

TEST_P(AttentionTest, KeyLengthsPadEachBatchElement) {
    auto c = Make(3, 2, 2, 7, 17, 8, 8);
    c.key_lengths = {5, 17, 1};
    Check(c, true);
    c.causal = true;
    Check(c, true);
}

TEST_P(AttentionTest, FullyMaskedRowGivesZerosAndMinusInfLse) {
    auto c = Make(2, 2, 2, 3, 5, 4, 4);
    c.key_lengths = {0, 5};
    c.prepare(4);
    Outputs o = Run(c, true);
    // Batch element 0 has no key at all.
    for (int64_t n = 0; n < 2 * 3 * 4; n++) EXPECT_EQ(o.out[n], 0.0f);
    for (int64_t n = 0; n < 2 * 3; n++) EXPECT_EQ(o.lse[n], -INFINITY);
    for (int64_t n = 0; n < 2 * 3 * 5; n++) EXPECT_EQ(o.probs[n], 0.0f);
    for (float x : o.out) EXPECT_FALSE(std::isnan(x));
    EXPECT_TRUE(Matches(o.out, c.out, c.out32));
}

TEST_P(AttentionTest, BatchAndHeadCounts) {
    for (int64_t batch : {1, 3}) {
        for (int64_t heads : {1, 2, 8}) {
            SCOPED_TRACE("B=" + std::to_string(batch) + " H=" + std::to_string(heads));
            auto c = Make(batch, heads, heads, 11, 19, 8, 8);
            Check(c);
        }
    }
}

TEST_P(AttentionTest, GroupedQueryHeadsShareKeyValueHeads) {
    for (auto [heads, kv_heads] : {std::pair<int64_t, int64_t>{8, 2}, {4, 1}, {6, 3}}) {
        SCOPED_TRACE("H=" + std::to_string(heads) + " H_kv=" + std::to_string(kv_heads));
        auto c = Make(2, heads, kv_heads, 9, 14, 8, 12);
        Check(c);
        c.causal = true;
        Check(c);
    }
}

TEST_P(AttentionTest, SequenceLengthsBelowAtAndAboveVectorAndTileSizes) {
    for (int64_t n : {1, 3, 17, 64, 100, 257}) {
        for (int64_t d : {16, 64}) {
            SCOPED_TRACE("N=" + std::to_string(n) + " d=" + std::to_string(d));
            auto c = Make(1, 2, 2, n, n, d, d);
            Check(c);
            c.causal = true;
            Check(c);
        }
    }
}

TEST_P(AttentionTest, HeadDimsBelowAtAndAboveVectorWidth) {
    for (int64_t d : {1, 3, 4, 7, 8, 9, 15, 16, 17, 33, 64, 65, 128}) {
        SCOPED_TRACE("d=" + std::to_string(d));
        auto c = Make(1, 1, 1, 6, 10, d, d);
        Check(c);
    }
}

TEST_P(AttentionTest, HugeLogitsStayFinite) {
    // Scores near 1e4: exp of an unshifted score would overflow to inf.
    auto c = Make(1, 2, 2, 12, 12, 16, 16);
    c.scale = 1.0f;
    c.prepare(5, 50.0f);
    double max_score = 0;
    for (std::size_t n = 0; n < c.lse.size(); n++) max_score = std::max(max_score, c.lse[n]);
    ASSERT_GT(max_score, 3000.0) << "inputs do not reach huge logits";
    Outputs o = Run(c, true);
    for (float x : o.out) ASSERT_TRUE(std::isfinite(x));
    for (float x : o.lse) ASSERT_TRUE(std::isfinite(x));
    EXPECT_TRUE(Matches(o.out, c.out, c.out32));
    EXPECT_TRUE(Matches(o.lse, c.lse, c.lse32));
    EXPECT_TRUE(Matches(o.probs, c.probs, c.probs32));
}

TEST_P(AttentionTest, ProbabilityRowsSumToOne) {
    auto c = Make(2, 2, 2, 13, 29, 8, 8);
    c.key_lengths = {29, 10};
    c.causal = true;
    c.prepare(6);
    Outputs o = Run(c, true);
    for (int64_t row = 0; row < 2 * 2 * 13; row++) {
        double sum =
            std::accumulate(o.probs.begin() + row * 29, o.probs.begin() + (row + 1) * 29, 0.0);
        EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << row;
    }
    EXPECT_TRUE(Matches(o.probs, c.probs, c.probs32));
}

TEST_P(AttentionTest, ScaleOverride) {
    auto c = Make(1, 2, 2, 8, 8, 16, 16);
    c.scale = 0.03f;
    Check(c);
    c.scale = 0.0f;  // Uniform weights: out is the mean of the allowed values.
    Check(c, true);
}

// [B, H, N, D] -> [B, N, H, D].
template <typename T>
std::vector<T> ToBshd(const std::vector<T> &bhsd, int64_t B, int64_t H, int64_t N, int64_t D) {
    std::vector<T> bshd(bhsd.size());
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t n = 0; n < N; n++)
                for (int64_t d = 0; d < D; d++)
                    bshd[((b * N + n) * H + h) * D + d] = bhsd[((b * H + h) * N + n) * D + d];
    return bshd;
}

TEST_P(AttentionTest, StridedBshdLayoutGivesSameResult) {
    // [B, N, H, D] storage passed as a [B, H, N, D] view with permuted strides.
    const int64_t B = 2, H = 3, N = 11, D = 8;
    auto c = Make(B, H, H, N, N, D, D);
    c.prepare(7);
    auto q = ToBshd(c.q, B, H, N, D), k = ToBshd(c.k, B, H, N, D), v = ToBshd(c.v, B, H, N, D);
    std::vector<float> out(B * N * H * D, NAN);
    const std::initializer_list<int64_t> strides = {N * H * D, D, H * D, 1};
    AttentionArgs args;
    args.q = TensorView::f32(q.data(), {B, H, N, D}).with_strides(strides);
    args.k = TensorView::f32(k.data(), {B, H, N, D}).with_strides(strides);
    args.v = TensorView::f32(v.data(), {B, H, N, D}).with_strides(strides);
    args.out = TensorView::f32(out.data(), {B, H, N, D}).with_strides(strides);
    args.schedule = GetParam();
    Status status = attention(args);
    ASSERT_TRUE(status.ok()) << status.to_string();
    EXPECT_TRUE(Matches(out, ToBshd(c.out, B, H, N, D), ToBshd(c.out32, B, H, N, D)));
}

TEST_P(AttentionTest, SingleKeyGivesItsValueToEveryRow) {
    // Nk = 1: every row's only weight is 1, so out is that key's value and lse its score.
    auto c = Make(2, 2, 1, 7, 1, 5, 3);
    Check(c, true);
    c.causal = true;  // Bottom-right: only the last query sees the key.
    Check(c, true);
}

TEST_P(AttentionTest, PaddedRowAndHeadStridesGiveSameResult) {
    // Rows padded to a multiple of 8 floats plus a gap between heads, as in a buffer that keeps
    // room for alignment: only the innermost dimension is contiguous.
    const int64_t B = 2, H = 2, N = 9, D = 5, row = 8, head = N * row + 3;
    auto c = Make(B, H, H, N, N, D, D);
    c.causal = true;
    c.prepare(9);
    auto pad = [&](const std::vector<float> &dense, float fill) {
        std::vector<float> padded(B * H * head, fill);
        for (int64_t bh = 0; bh < B * H; bh++)
            for (int64_t n = 0; n < N; n++)
                for (int64_t d = 0; d < D; d++)
                    padded[bh * head + n * row + d] = dense[(bh * N + n) * D + d];
        return padded;
    };
    // The padding holds NaN: a kernel that read it would spoil its output.
    auto q = pad(c.q, NAN), k = pad(c.k, NAN), v = pad(c.v, NAN);
    std::vector<float> out(B * H * head, -7.0f);
    const std::initializer_list<int64_t> strides = {H * head, head, row, 1};
    AttentionArgs args;
    args.q = TensorView::f32(q.data(), {B, H, N, D}).with_strides(strides);
    args.k = TensorView::f32(k.data(), {B, H, N, D}).with_strides(strides);
    args.v = TensorView::f32(v.data(), {B, H, N, D}).with_strides(strides);
    args.out = TensorView::f32(out.data(), {B, H, N, D}).with_strides(strides);
    args.causal = true;
    args.schedule = GetParam();
    Status status = attention(args);
    ASSERT_TRUE(status.ok()) << status.to_string();
    std::vector<float> dense(B * H * N * D);
    for (int64_t bh = 0; bh < B * H; bh++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t d = 0; d < D; d++)
                dense[(bh * N + n) * D + d] = out[bh * head + n * row + d];
    EXPECT_TRUE(Matches(dense, c.out, c.out32));
    // The kernel wrote nothing into the padding.
    for (int64_t bh = 0; bh < B * H; bh++)
        for (int64_t x = 0; x < head; x++)
            if (x >= N * row || x % row >= D) ASSERT_EQ(out[bh * head + x], -7.0f) << x;
}

TEST_P(AttentionTest, HeadDim64UsesSpecializedKernelWhenCompiled) {
    auto c = Make(1, 2, 2, 20, 20, 64, 64);
    c.prepare(8);
    Outputs o = Run(c, false);
    EXPECT_TRUE(Matches(o.out, c.out, c.out32)) << o.kernel;
    bool has_specialized = false;
    for (const auto &k : list_kernels()) {
        const Variant &v = k.variant;
        if (v.schedule == GetParam() && v.op == Op::kAttention && !v.mask.causal && !v.probs &&
            v.d_k == 64 && v.d_v == 64) {
            has_specialized = true;
        }
    }
    if (has_specialized) {
        EXPECT_NE(o.kernel.find("_d64_"), std::string::npos) << o.kernel;
    } else {
        EXPECT_EQ(o.kernel.find("_d64_"), std::string::npos) << o.kernel;
    }
}

std::string ScheduleName(const ::testing::TestParamInfo<std::string> &info) {
    return info.param;
}

INSTANTIATE_TEST_SUITE_P(Schedules, AttentionTest, ::testing::ValuesIn(TestedSchedules()),
                         ScheduleName);

}  // namespace
}  // namespace attngen::test
