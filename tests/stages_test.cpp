// Each stage compiled as its own kernel (projection, scores, softmax, weighted_sum), against the
// fp64 reference, for every compiled schedule. The kernels are called directly, without the
// runtime, so this binary installs its own Halide error handler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "HalideBuffer.h"
#include "attngen/kernels.h"
#include "stage_kernels.h"
#include "test_util.h"

namespace attngen::test {
namespace {

using Halide::Runtime::Buffer;
using stage_kernels::StageKernel;

// Collects a kernel's error messages in the std::string passed as its user context.
void RecordError(void *user_context, const char *message) {
    if (user_context != nullptr) *static_cast<std::string *>(user_context) += message;
}

class StageTest : public ::testing::TestWithParam<std::string> {
  protected:
    static void SetUpTestSuite() {
        halide_set_error_handler(&RecordError);
        // Links the runtime's target check, which the CUDA kernels' entries need: Halide's own
        // would pick a CUDA entry on a machine without a GPU. Where there is a device, the
        // cuda_tiled kernels run on it.
        (void)attngen::cuda_status();
    }

    const StageKernel &Kernel(const std::string &op, bool causal = false) {
        const StageKernel *k = stage_kernels::find(op, GetParam(), causal);
        EXPECT_NE(k, nullptr) << "no " << op << " kernel for schedule " << GetParam();
        return *k;
    }

    std::string errors_;
};

// A Halide buffer over a C-order array of logical shape [outer .. inner].
Buffer<float> View(std::vector<float> &v, std::vector<int> shape) {
    std::reverse(shape.begin(), shape.end());
    return Buffer<float>(v.data(), shape);
}
// After a kernel ran: a CUDA entry (cuda_tiled on a machine with a GPU) left its outputs on the
// device; they come back to the host arrays and every device copy is freed.
void ToHost(std::initializer_list<Buffer<float> *> outputs,
            std::initializer_list<halide_buffer_t *> inputs = {}) {
    for (auto *b : outputs) {
        b->copy_to_host();
        b->device_free();
    }
    for (auto *b : inputs) halide_device_free(nullptr, b);
}

Buffer<int32_t> Lengths(std::vector<int32_t> &v) {
    return Buffer<int32_t>(v.data(), {static_cast<int>(v.size())});
}

// Rows below, at and above the GEMM's register tile (6 rows) and its 60-row blocks; output
// widths below, at and above one vector, the register tile's 2 or 4 vectors on every target and
// the 256-column blocks; input widths past the 256-feature chunks (cpu_gemm.h).
TEST_P(StageTest, ProjectionMatchesReferenceAcrossWidths) {
    const auto &kernel = Kernel("projection");
    const int B = 2;
    for (int N : {5, 6, 13, 61}) {
        for (int d_in : {1, 7, 16, 33, 257}) {
            for (int d_out : {1, 7, 8, 9, 16, 17, 33, 63, 64, 65, 257}) {
                SCOPED_TRACE("N=" + std::to_string(N) + " d_in=" + std::to_string(d_in) +
                             " d_out=" + std::to_string(d_out));
                auto x = random_values(B * N * d_in, 1), w = random_values(d_in * d_out, 2),
                     bias = random_values(d_out, 3);
                std::vector<float> y(B * N * d_out, NAN), y32(y.size());
                std::vector<double> y64(y.size());
                auto xd = to_double(x), wd = to_double(w), bd = to_double(bias);
                reference::projection<double>(B * N, d_in, d_out, xd.data(), wd.data(), bd.data(),
                                              y64.data());
                reference::projection<float>(B * N, d_in, d_out, x.data(), w.data(), bias.data(),
                                             y32.data());
                auto bx = View(x, {B, N, d_in}), bw = View(w, {d_in, d_out}),
                     bb = View(bias, {d_out}), by = View(y, {B, N, d_out});
                ASSERT_EQ(kernel.projection(&errors_, bx.raw_buffer(), bw.raw_buffer(),
                                            bb.raw_buffer(), by.raw_buffer()),
                          0)
                    << errors_;
                ToHost({&by}, {bx.raw_buffer(), bw.raw_buffer(), bb.raw_buffer()});
                EXPECT_TRUE(Matches(y, y64, y32));
            }
        }
    }
}

// Runs the scores kernel and checks allowed entries against the reference and masked ones for
// -inf.
void CheckScores(const StageKernel &kernel, const reference::AttentionShape &s, bool causal,
                 std::vector<int64_t> lengths64, std::vector<float> q, std::vector<float> k,
                 float scale, std::string *errors, std::vector<float> *result = nullptr) {
    const int B = s.batch, H = s.heads, G = s.kv_heads, Nq = s.nq, Nk = s.nk, D = s.d_k;
    std::vector<int32_t> lengths(lengths64.begin(), lengths64.end());
    std::vector<float> scores(B * H * Nq * Nk, NAN), s32(scores.size());
    std::vector<double> s64(scores.size());
    auto qd = to_double(q), kd = to_double(k);
    reference::scores<double>(s, qd.data(), kd.data(), scale, s64.data());
    reference::scores<float>(s, q.data(), k.data(), scale, s32.data());
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < Nq; i++)
                for (int j = 0; j < Nk; j++) {
                    if (reference::allowed(s, lengths64, MaskSpec{causal}, b, i, j)) continue;
                    s64[((b * H + h) * Nq + i) * Nk + j] = -INFINITY;
                    s32[((b * H + h) * Nq + i) * Nk + j] = -INFINITY;
                }
    auto bq = View(q, {B, H, Nq, D}), bk = View(k, {B, G, Nk, D}),
         bs = View(scores, {B, H, Nq, Nk});
    auto bl = Lengths(lengths);
    ASSERT_EQ(kernel.scores(errors, bq.raw_buffer(), bk.raw_buffer(), bl.raw_buffer(), scale,
                            bs.raw_buffer()),
              0)
        << *errors;
    ToHost({&bs}, {bq.raw_buffer(), bk.raw_buffer(), bl.raw_buffer()});
    EXPECT_TRUE(Matches(scores, s64, s32));
    if (result != nullptr) *result = scores;
}

TEST_P(StageTest, ScoresMatchReferenceWithMaskedEntriesMinusInf) {
    const reference::AttentionShape s{2, 4, 2, 7, 13, 9, 9};
    auto q = random_values(2 * 4 * 7 * 9, 4), k = random_values(2 * 2 * 13 * 9, 5);
    for (bool causal : {false, true}) {
        SCOPED_TRACE(causal ? "causal" : "not causal");
        CheckScores(Kernel("scores", causal), s, causal, {13, 5}, q, k, 0.3f, &errors_);
    }
}

TEST_P(StageTest, ScoresAreSymmetricWhenQueryAndKeyWeightsAreEqual) {
    // Q = X W and K = X W with the same W: the raw score matrix X W W^T X^T is symmetric.
    const int N = 12, d_model = 16, d_k = 8;
    auto x = random_values(N * d_model, 6), w = random_values(d_model * d_k, 7);
    std::vector<float> zero_bias(d_k, 0.0f), projected(N * d_k, NAN);
    auto bx = View(x, {1, N, d_model}), bw = View(w, {d_model, d_k}), bb = View(zero_bias, {d_k}),
         by = View(projected, {1, N, d_k});
    ASSERT_EQ(Kernel("projection")
                  .projection(&errors_, bx.raw_buffer(), bw.raw_buffer(), bb.raw_buffer(),
                              by.raw_buffer()),
              0)
        << errors_;
    ToHost({&by}, {bx.raw_buffer(), bw.raw_buffer(), bb.raw_buffer()});
    std::vector<float> scores;
    const reference::AttentionShape s{1, 1, 1, N, N, d_k, d_k};
    CheckScores(Kernel("scores"), s, false, {N}, projected, projected, 1.0f, &errors_, &scores);
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < i; j++) {
            EXPECT_NEAR(scores[i * N + j], scores[j * N + i],
                        1e-6f * (1 + std::fabs(scores[i * N + j])))
                << i << ", " << j;
        }
    }
}

// Softmax of scores [B, H, Nq, Nk] over the allowed keys, in double and in float.
template <typename T>
void ReferenceSoftmax(const reference::AttentionShape &s, const std::vector<int64_t> &lengths,
                      bool causal, const std::vector<float> &scores, std::vector<T> *probs,
                      std::vector<T> *lse) {
    probs->assign(scores.size(), T(0));
    lse->assign(s.batch * s.heads * s.nq, -INFINITY);
    for (int64_t b = 0; b < s.batch; b++)
        for (int64_t h = 0; h < s.heads; h++)
            for (int64_t i = 0; i < s.nq; i++) {
                const int64_t row = (b * s.heads + h) * s.nq + i;
                auto allowed = [&](int64_t j) {
                    return reference::allowed(s, lengths, MaskSpec{causal}, b, i, j);
                };
                T max = -INFINITY, sum = 0;
                int64_t count = 0;
                for (int64_t j = 0; j < s.nk; j++) {
                    if (!allowed(j)) continue;
                    count++;
                    max = std::max<T>(max, scores[row * s.nk + j]);
                }
                if (count == 0) continue;
                for (int64_t j = 0; j < s.nk; j++) {
                    if (allowed(j)) sum += std::exp(T(scores[row * s.nk + j]) - max);
                }
                for (int64_t j = 0; j < s.nk; j++) {
                    if (allowed(j)) {
                        (*probs)[row * s.nk + j] = std::exp(T(scores[row * s.nk + j]) - max) / sum;
                    }
                }
                (*lse)[row] = max + std::log(sum);
            }
}

void CheckSoftmax(const StageKernel &kernel, const reference::AttentionShape &s, bool causal,
                  const std::vector<int64_t> &lengths64, std::vector<float> scores,
                  std::string *errors, std::vector<float> *probs_out = nullptr,
                  std::vector<float> *lse_out = nullptr) {
    const int B = s.batch, H = s.heads, Nq = s.nq, Nk = s.nk;
    std::vector<int32_t> lengths(lengths64.begin(), lengths64.end());
    std::vector<float> probs(B * H * Nq * Nk, NAN), lse(B * H * Nq, NAN), p32, l32;
    std::vector<double> p64, l64;
    ReferenceSoftmax(s, lengths64, causal, scores, &p64, &l64);
    ReferenceSoftmax(s, lengths64, causal, scores, &p32, &l32);
    auto bs = View(scores, {B, H, Nq, Nk}), bp = View(probs, {B, H, Nq, Nk}),
         bl = View(lse, {B, H, Nq});
    auto blen = Lengths(lengths);
    ASSERT_EQ(kernel.softmax(errors, bs.raw_buffer(), blen.raw_buffer(), bp.raw_buffer(),
                             bl.raw_buffer()),
              0)
        << *errors;
    ToHost({&bp, &bl}, {bs.raw_buffer(), blen.raw_buffer()});
    EXPECT_TRUE(Matches(probs, p64, p32)) << "probs";
    EXPECT_TRUE(Matches(lse, l64, l32)) << "lse";
    if (probs_out != nullptr) *probs_out = probs;
    if (lse_out != nullptr) *lse_out = lse;
}

TEST_P(StageTest, SoftmaxRowsSumToOneAndMatchReference) {
    const reference::AttentionShape s{2, 3, 3, 9, 21, 1, 1};
    auto scores = random_values(2 * 3 * 9 * 21, 8, -5.0f, 5.0f);
    for (bool causal : {false, true}) {
        SCOPED_TRACE(causal ? "causal" : "not causal");
        std::vector<float> probs;
        CheckSoftmax(Kernel("softmax", causal), s, causal, {21, 16}, scores, &errors_, &probs);
        for (int row = 0; row < 2 * 3 * 9; row++) {
            double sum = 0;
            for (int j = 0; j < 21; j++) sum += probs[row * 21 + j];
            EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << row;
        }
    }
}

TEST_P(StageTest, SoftmaxFullyMaskedRowGivesZeros) {
    const reference::AttentionShape s{2, 1, 1, 4, 6, 1, 1};
    auto scores = random_values(2 * 4 * 6, 9);
    std::vector<float> probs, lse;
    CheckSoftmax(Kernel("softmax"), s, false, {0, 6}, scores, &errors_, &probs, &lse);
    for (int n = 0; n < 4 * 6; n++) EXPECT_EQ(probs[n], 0.0f);
    for (int n = 0; n < 4; n++) EXPECT_EQ(lse[n], -INFINITY);
}

TEST_P(StageTest, SoftmaxOfHugeLogitsStaysFinite) {
    const reference::AttentionShape s{1, 2, 2, 5, 17, 1, 1};
    auto scores = random_values(2 * 5 * 17, 10, 9000.0f, 11000.0f);
    std::vector<float> probs, lse;
    CheckSoftmax(Kernel("softmax"), s, false, {17}, scores, &errors_, &probs, &lse);
    for (float p : probs) EXPECT_TRUE(std::isfinite(p));
    for (float l : lse) EXPECT_TRUE(std::isfinite(l));
}

TEST_P(StageTest, SoftmaxNanOrPositiveInfScoreMakesOnlyItsRowNan) {
    // The softmax finds such rows once per row (softmax.h) rather than in each exponential: rows
    // 1 and 2 hold a NaN and a +inf among their allowed keys and must be NaN, row 3's -inf key
    // gets probability 0, and row 4's NaN lies beyond the key length of batch element 1
    // (rows 4 to 7), where it must change nothing. Every other row must match the reference.
    const int Nq = 4, Nk = 19;
    const reference::AttentionShape s{2, 1, 1, Nq, Nk, 1, 1};
    const std::vector<int64_t> lengths64{Nk, 11};
    std::vector<int32_t> lengths(lengths64.begin(), lengths64.end());
    auto scores = random_values(2 * Nq * Nk, 14, -4.0f, 4.0f);
    std::vector<double> p64, l64;
    std::vector<float> p32, l32;
    ReferenceSoftmax(s, lengths64, false, scores, &p64, &l64);
    ReferenceSoftmax(s, lengths64, false, scores, &p32, &l32);
    scores[1 * Nk + 3] = NAN;
    scores[2 * Nk + 5] = INFINITY;
    scores[3 * Nk + 2] = -INFINITY;
    scores[4 * Nk + 15] = NAN;
    std::vector<float> probs(2 * Nq * Nk, 12345.0f), lse(2 * Nq, 12345.0f);
    auto bs = View(scores, {2, 1, Nq, Nk}), bp = View(probs, {2, 1, Nq, Nk}),
         bl = View(lse, {2, 1, Nq});
    auto blen = Lengths(lengths);
    ASSERT_EQ(Kernel("softmax").softmax(&errors_, bs.raw_buffer(), blen.raw_buffer(),
                                        bp.raw_buffer(), bl.raw_buffer()),
              0)
        << errors_;
    ToHost({&bp, &bl}, {bs.raw_buffer(), blen.raw_buffer()});
    for (int row = 0; row < 2 * Nq; row++) {
        SCOPED_TRACE("row " + std::to_string(row));
        const int end = row < Nq ? Nk : 11;
        if (row == 1 || row == 2) {
            EXPECT_TRUE(std::isnan(lse[row])) << lse[row];
            for (int j = 0; j < Nk; j++) {
                if (j < end) {
                    EXPECT_TRUE(std::isnan(probs[row * Nk + j])) << j;
                } else {
                    EXPECT_EQ(probs[row * Nk + j], 0.0f) << j;
                }
            }
            continue;
        }
        EXPECT_TRUE(std::isfinite(lse[row])) << lse[row];
        for (int j = 0; j < Nk; j++) EXPECT_TRUE(std::isfinite(probs[row * Nk + j])) << j;
        if (row == 3) {
            // Exactly 0: exponentials below 2^-64 are 0 (docs/reliability.md).
            EXPECT_EQ(probs[row * Nk + 2], 0.0f);
            continue;
        }
        const auto p = [&](const auto &all) {
            return std::vector<typename std::decay_t<decltype(all)>::value_type>(
                all.begin() + row * Nk, all.begin() + (row + 1) * Nk);
        };
        EXPECT_TRUE(Matches(p(probs), p(p64), p(p32))) << "probs";
        EXPECT_TRUE(Matches({lse[row]}, {l64[row]}, {l32[row]})) << "lse";
    }
}

TEST_P(StageTest, SoftmaxAcrossRowLengths) {
    for (int nk : {1, 3, 8, 15, 16, 17, 100, 257}) {
        SCOPED_TRACE("Nk=" + std::to_string(nk));
        const reference::AttentionShape s{1, 1, 1, 3, nk, 1, 1};
        CheckSoftmax(Kernel("softmax"), s, false, {nk}, random_values(3 * nk, 11, -3, 3), &errors_);
    }
}

TEST_P(StageTest, WeightedSumMatchesReferenceOverAllowedKeys) {
    const int B = 2, H = 4, G = 2, Nq = 5, Nk = 19;
    for (int d_v : {1, 7, 16, 33}) {
        for (bool causal : {false, true}) {
            SCOPED_TRACE("d_v=" + std::to_string(d_v) + (causal ? " causal" : ""));
            std::vector<int64_t> lengths64{19, 7};
            std::vector<int32_t> lengths{19, 7};
            const reference::AttentionShape s{B, H, G, Nq, Nk, 1, d_v};
            auto p = random_values(B * H * Nq * Nk, 12, 0.0f, 1.0f);
            auto v = random_values(B * G * Nk * d_v, 13);
            std::vector<float> out(B * H * Nq * d_v, NAN), o32(out.size());
            std::vector<double> o64(out.size());
            for (int b = 0; b < B; b++)
                for (int h = 0; h < H; h++)
                    for (int i = 0; i < Nq; i++)
                        for (int e = 0; e < d_v; e++) {
                            double acc = 0;
                            float acc32 = 0;
                            for (int j = 0; j < Nk; j++) {
                                if (!reference::allowed(s, lengths64, MaskSpec{causal}, b, i, j)) {
                                    continue;
                                }
                                float pj = p[((b * H + h) * Nq + i) * Nk + j];
                                float vj = v[((b * G + h / (H / G)) * Nk + j) * d_v + e];
                                acc += double(pj) * vj;
                                acc32 += pj * vj;
                            }
                            o64[((b * H + h) * Nq + i) * d_v + e] = acc;
                            o32[((b * H + h) * Nq + i) * d_v + e] = acc32;
                        }
            auto bp = View(p, {B, H, Nq, Nk}), bv = View(v, {B, G, Nk, d_v}),
                 bo = View(out, {B, H, Nq, d_v});
            auto bl = Lengths(lengths);
            ASSERT_EQ(Kernel("weighted_sum", causal)
                          .weighted_sum(&errors_, bp.raw_buffer(), bv.raw_buffer(), bl.raw_buffer(),
                                        bo.raw_buffer()),
                      0)
                << errors_;
            ToHost({&bo}, {bp.raw_buffer(), bv.raw_buffer(), bl.raw_buffer()});
            EXPECT_TRUE(Matches(out, o64, o32));
        }
    }
}

TEST_P(StageTest, KernelErrorIsReportedNotFatal) {
    // A key buffer narrower than the queries: the kernel must refuse, not read out of bounds.
    std::vector<float> q(1 * 1 * 4 * 8, 1.0f), k(1 * 1 * 4 * 4, 1.0f), scores(16);
    std::vector<int32_t> lengths{4};
    auto bq = View(q, {1, 1, 4, 8}), bk = View(k, {1, 1, 4, 4}), bs = View(scores, {1, 1, 4, 4});
    auto bl = Lengths(lengths);
    int result = Kernel("scores").scores(&errors_, bq.raw_buffer(), bk.raw_buffer(),
                                         bl.raw_buffer(), 1.0f, bs.raw_buffer());
    EXPECT_NE(result, 0);
    EXPECT_NE(errors_.find("k"), std::string::npos) << errors_;
}

std::vector<std::string> StageSchedules() {
    std::set<std::string> names;
    for (const StageKernel &k : stage_kernels::all()) {
        names.insert(k.schedule());
    }
    return {names.begin(), names.end()};
}

std::string ScheduleName(const ::testing::TestParamInfo<std::string> &info) {
    return info.param;
}

INSTANTIATE_TEST_SUITE_P(Schedules, StageTest, ::testing::ValuesIn(StageSchedules()), ScheduleName);

}  // namespace
}  // namespace attngen::test
