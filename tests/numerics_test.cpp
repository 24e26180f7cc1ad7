// Non-finite inputs, for every compiled attention kernel (specialized and decode ones included).
//
// The promise (docs/reliability.md, numerics): a key that a row may not see (beyond key_lengths, or
// after the causal bound) never influences that row, whatever its K and V hold, NaN and inf
// included: the row is bitwise the same as with clean data. A NaN or +inf score of an allowed
// key makes the whole row NaN (out, lse and the allowed probabilities), as PyTorch's softmax
// does; a NaN in an allowed key's value makes that column of the row's output NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "attngen/attngen.h"
#include "runtime_test_util.h"

namespace attngen::test {
namespace {

struct Outputs {
    std::vector<float> out, lse, probs;
};

class NonFiniteTest : public ::testing::TestWithParam<Kernel> {
  protected:
    void SetUp() override {
        const Kernel &k = GetParam();
        ATTNGEN_SKIP_UNLESS_SERVED(k);
        const int64_t nq =
            k.variant.max_queries > 0 ? k.variant.max_queries : QueriesBeyondEveryBound(k);
        c_.shape = ShapeFor(k, nq);
        c_.causal = k.variant.mask.causal;
        // Batch element 1 masks its last 7 keys by its length.
        c_.key_lengths = {c_.shape.nk, c_.shape.nk - 7};
        // A 16-bit kernel gets its inputs rounded to its type by StoredTensors (Run).
        c_.storage = k.variant.storage;
        c_.kv_storage = k.variant.kv_storage;
        // Every check compares the kernel with its own run on clean inputs, so the references
        // are not needed.
        c_.draw(41);
        clean_ = Run(c_.q, c_.k, c_.v);
    }

    Outputs Run(const std::vector<float> &q, const std::vector<float> &k,
                const std::vector<float> &v) {
        const Kernel &kernel = GetParam();
        AttentionCase c = c_;
        c.q = q;
        c.k = k;
        c.v = v;
        Outputs o;
        // A finite fill: an element the kernel failed to write must not pass for a NaN result.
        AttentionArgs args =
            ArgsFor(c, &o.out, &o.lse, kernel.variant.probs ? &o.probs : nullptr, 12345.0f);
        StoredTensors stored;
        stored.use_in(c, &args, 12345.0f);
        args.schedule = kernel.variant.schedule;
        CallInfo info;
        // A kernel with modifiers runs with their neutral values (the semantics these tests
        // state), by name: the dispatch would give a call without modifiers a kernel without.
        Status status =
            HasModifiers(kernel) ? attention(args, kernel, &info) : attention(args, &info);
        EXPECT_TRUE(status.ok()) << status.to_string();
        stored.widen_out(&o.out);
        EXPECT_EQ(info.kernel, kernel.name) << "the call did not reach the kernel under test";
        return o;
    }

    // Whether query row i of batch element b may see key j.
    bool Sees(int64_t b, int64_t i, int64_t j) const {
        const auto &s = c_.shape;
        if (j >= c_.key_lengths[b]) return false;
        return !c_.causal || j <= i + (s.nk - s.nq);
    }
    // Whether query head h reads key/value head kvh.
    bool Reads(int64_t h, int64_t kvh) const {
        return h / (c_.shape.heads / c_.shape.kv_heads) == kvh;
    }
    int64_t KIndex(int64_t b, int64_t kvh, int64_t j, int64_t d) const {
        const auto &s = c_.shape;
        return ((b * s.kv_heads + kvh) * s.nk + j) * s.d_k + d;
    }
    int64_t VIndex(int64_t b, int64_t kvh, int64_t j, int64_t e) const {
        const auto &s = c_.shape;
        return ((b * s.kv_heads + kvh) * s.nk + j) * s.d_v + e;
    }

    // Calls check(b, h, i, row_is_affected) for every row; a row is affected when it sees the
    // poisoned key `key` of kv head 0 in batch element `batch`.
    void ForEachRow(int64_t batch, int64_t key,
                    const std::function<void(int64_t, int64_t, int64_t, bool)> &check) const {
        const auto &s = c_.shape;
        for (int64_t b = 0; b < s.batch; b++)
            for (int64_t h = 0; h < s.heads; h++)
                for (int64_t i = 0; i < s.nq; i++)
                    check(b, h, i, b == batch && Reads(h, 0) && Sees(b, i, key));
    }

    int64_t Row(int64_t b, int64_t h, int64_t i) const {
        return (b * c_.shape.heads + h) * c_.shape.nq + i;
    }

    // The row's out, lse and probs are bitwise those of the clean run.
    void ExpectRowUnchanged(const Outputs &o, int64_t row) const {
        const auto &s = c_.shape;
        EXPECT_EQ(std::memcmp(&o.out[row * s.d_v], &clean_.out[row * s.d_v], s.d_v * 4), 0)
            << "out of row " << row << " differs from the clean run";
        EXPECT_EQ(std::memcmp(&o.lse[row], &clean_.lse[row], 4), 0)
            << "lse of row " << row << ": " << o.lse[row] << " vs " << clean_.lse[row];
        if (!o.probs.empty()) {
            EXPECT_EQ(std::memcmp(&o.probs[row * s.nk], &clean_.probs[row * s.nk], s.nk * 4), 0)
                << "probs of row " << row;
        }
    }

    // Every value of the row is NaN, except probabilities of keys the row may not see (0).
    void ExpectRowNan(const Outputs &o, int64_t b, int64_t i, int64_t row) const {
        const auto &s = c_.shape;
        for (int64_t e = 0; e < s.d_v; e++) {
            EXPECT_TRUE(std::isnan(o.out[row * s.d_v + e])) << "row " << row << " e " << e;
        }
        EXPECT_TRUE(std::isnan(o.lse[row])) << "lse of row " << row << ": " << o.lse[row];
        for (int64_t j = 0; j < static_cast<int64_t>(o.probs.empty() ? 0 : s.nk); j++) {
            if (Sees(b, i, j)) {
                EXPECT_TRUE(std::isnan(o.probs[row * s.nk + j])) << "row " << row << " j " << j;
            } else {
                EXPECT_EQ(o.probs[row * s.nk + j], 0.0f) << "row " << row << " j " << j;
            }
        }
    }

    // Rows that see key 3 of kv head 0 in batch element 0 are NaN; every other row is unchanged.
    void ExpectRowsSeeingKey3Nan(const Outputs &o) const {
        ForEachRow(0, 3, [&](int64_t b, int64_t h, int64_t i, bool affected) {
            if (affected) {
                ExpectRowNan(o, b, i, Row(b, h, i));
            } else {
                ExpectRowUnchanged(o, Row(b, h, i));
            }
        });
    }

    AttentionCase c_;
    Outputs clean_;
};

TEST_P(NonFiniteTest, NanAndInfInMaskedKeysDoNotLeak) {
    const auto &s = c_.shape;
    // The last 7 keys of batch element 1 are beyond its length for every row; with a causal mask,
    // key nk - nq + 2 of batch element 0 is beyond the bound of rows 0 and 1 only.
    const int64_t causal_key = s.nk - s.nq + 2;
    for (float poison : {NAN, INFINITY, -INFINITY}) {
        SCOPED_TRACE("poison " + std::to_string(poison));
        auto k = c_.k, v = c_.v;
        for (int64_t kvh = 0; kvh < s.kv_heads; kvh++) {
            for (int64_t j = c_.key_lengths[1]; j < s.nk; j++) {
                for (int64_t d = 0; d < s.d_k; d++) k[KIndex(1, kvh, j, d)] = poison;
                for (int64_t e = 0; e < s.d_v; e++) v[VIndex(1, kvh, j, e)] = poison;
            }
        }
        if (c_.causal) {
            for (int64_t d = 0; d < s.d_k; d++) k[KIndex(0, 0, causal_key, d)] = poison;
            for (int64_t e = 0; e < s.d_v; e++) v[VIndex(0, 0, causal_key, e)] = poison;
        }
        Outputs o = Run(c_.q, k, v);
        ForEachRow(0, c_.causal ? causal_key : s.nk, [&](int64_t b, int64_t h, int64_t i, bool) {
            // Rows that see the poisoned causal key are checked by the tests below.
            if (c_.causal && b == 0 && Reads(h, 0) && Sees(b, i, causal_key)) return;
            ExpectRowUnchanged(o, Row(b, h, i));
        });
    }
}

TEST_P(NonFiniteTest, NanInAllowedKeyMakesRowNan) {
    // Key 3 is allowed for every row of batch element 0 (causal rows see keys <= i + 8 or more).
    auto k = c_.k;
    k[KIndex(0, 0, 3, 0)] = NAN;
    Outputs o = Run(c_.q, k, c_.v);
    ExpectRowsSeeingKey3Nan(o);
}

TEST_P(NonFiniteTest, PositiveInfScoreMakesRowNan) {
    // q[..., 0] = 1 and k[key 3, 0] = +inf give key 3 the score +inf in every row that sees it.
    const auto &s = c_.shape;
    auto q = c_.q, k = c_.k;
    for (int64_t n = 0; n < s.batch * s.heads * s.nq; n++) q[n * s.d_k] = 1.0f;
    Outputs with_ones = Run(q, c_.k, c_.v);
    k[KIndex(0, 0, 3, 0)] = INFINITY;
    Outputs o = Run(q, k, c_.v);
    clean_ = with_ones;
    ExpectRowsSeeingKey3Nan(o);
}

TEST_P(NonFiniteTest, NanInQueryMakesOnlyItsRowNan) {
    // The softmax finds NaN rows once per row, in vector lanes of a block of queries: the other
    // rows of the block, head and batch element must stay bitwise clean.
    const auto &s = c_.shape;
    const int64_t b = 0, h = s.heads - 1, i = s.nq / 2;
    auto q = c_.q;
    q[Row(b, h, i) * s.d_k + s.d_k - 1] = NAN;
    Outputs o = Run(q, c_.k, c_.v);
    for (int64_t bb = 0; bb < s.batch; bb++)
        for (int64_t hh = 0; hh < s.heads; hh++)
            for (int64_t ii = 0; ii < s.nq; ii++) {
                if (bb == b && hh == h && ii == i) {
                    ExpectRowNan(o, b, i, Row(b, h, i));
                } else {
                    ExpectRowUnchanged(o, Row(bb, hh, ii));
                }
            }
}

TEST_P(NonFiniteTest, NegativeInfScoreLeavesItsKeyWithoutInfluence) {
    // q[..., 0] = 1 and k[key 3, 0] = -inf give key 3 the score -inf in every row that sees it:
    // an ordinary score whose weight vanishes, so that key 3's value, however large, leaves the
    // rows finite and as they are with the opposite value.
    const auto &s = c_.shape;
    auto q = c_.q, k = c_.k;
    for (int64_t n = 0; n < s.batch * s.heads * s.nq; n++) q[n * s.d_k] = 1.0f;
    k[KIndex(0, 0, 3, 0)] = -INFINITY;
    auto v_high = c_.v, v_low = c_.v;
    // Large but finite in the storage type: float16 ends at 65504.
    const float large = c_.kv_type() == DType::kFloat16 ? 6e4f : 1e6f;
    for (int64_t e = 0; e < s.d_v; e++) {
        v_high[VIndex(0, 0, 3, e)] = large;
        v_low[VIndex(0, 0, 3, e)] = -large;
    }
    Outputs high = Run(q, k, v_high), low = Run(q, k, v_low);
    ForEachRow(0, 3, [&](int64_t b, int64_t h, int64_t i, bool affected) {
        const int64_t row = Row(b, h, i);
        EXPECT_TRUE(std::isfinite(high.lse[row])) << "lse of row " << row << ": " << high.lse[row];
        EXPECT_EQ(std::memcmp(&high.lse[row], &low.lse[row], 4), 0) << "lse of row " << row;
        for (int64_t e = 0; e < s.d_v; e++) {
            const float a = high.out[row * s.d_v + e], z = low.out[row * s.d_v + e];
            EXPECT_TRUE(std::isfinite(a)) << "row " << row << " e " << e << ": " << a;
            EXPECT_NEAR(a, z, 1e-6f * (1.0f + std::fabs(z))) << "row " << row << " e " << e;
        }
        if (affected && !high.probs.empty()) {
            EXPECT_EQ(high.probs[row * s.nk + 3], 0.0f) << "row " << row;
        }
    });
}

TEST_P(NonFiniteTest, HugeFiniteScoreTakesTheWholeWeight) {
    // q[..., 0] = big and k[key 3, 0] = big give key 3 a finite score far above the others' in
    // every row that sees it: its weight is exactly 1 and every other key's exactly 0, so such a
    // row's out is key 3's value and its lse the score. From scores of about 1e12 up, cpu_fused
    // gave these rows NaN or -inf (the weights' exponent contracted into a multiply-add, whose
    // rounding differed from the maximum's by up to half an ulp of the score). Float16 stops at
    // 65504, below such scores, but its rows must come out right all the same.
    const auto &s = c_.shape;
    const auto big = [](DType t) { return t == DType::kFloat16 ? 6e4f : 1e15f; };
    auto q = c_.q, k = c_.k;
    for (int64_t n = 0; n < s.batch * s.heads * s.nq; n++) q[n * s.d_k] = big(c_.storage);
    k[KIndex(0, 0, 3, 0)] = big(c_.kv_type());
    const Outputs o = Run(q, k, c_.v);
    ForEachRow(0, 3, [&](int64_t b, int64_t h, int64_t i, bool affected) {
        const int64_t row = Row(b, h, i);
        if (!affected) return;
        double score = 0;
        for (int64_t d = 0; d < s.d_k; d++) {
            score += double(reference::round_to(c_.storage, q[row * s.d_k + d])) *
                     reference::round_to(c_.kv_type(), k[KIndex(0, 0, 3, d)]);
        }
        score *= c_.effective_scale();
        EXPECT_NEAR(o.lse[row], score, 1e-5 * std::fabs(score)) << "lse of row " << row;
        for (int64_t e = 0; e < s.d_v; e++) {
            const float want = reference::round_to(
                c_.storage, reference::round_to(c_.kv_type(), c_.v[VIndex(0, 0, 3, e)]));
            EXPECT_EQ(o.out[row * s.d_v + e], want) << "row " << row << " e " << e;
        }
    });
}

TEST_P(NonFiniteTest, NanInAllowedValueMakesItsOutputColumnNan) {
    const auto &s = c_.shape;
    const int64_t column = 1;
    auto v = c_.v;
    v[VIndex(0, 0, 3, column)] = NAN;
    Outputs o = Run(c_.q, c_.k, v);
    ForEachRow(0, 3, [&](int64_t b, int64_t h, int64_t i, bool affected) {
        const int64_t row = Row(b, h, i);
        if (!affected) {
            ExpectRowUnchanged(o, row);
            return;
        }
        for (int64_t e = 0; e < s.d_v; e++) {
            const float x = o.out[row * s.d_v + e];
            if (e == column) {
                EXPECT_TRUE(std::isnan(x)) << "row " << row << " e " << e;
            } else {
                EXPECT_EQ(std::memcmp(&x, &clean_.out[row * s.d_v + e], 4), 0)
                    << "row " << row << " e " << e << ": " << x;
            }
        }
        EXPECT_EQ(std::memcmp(&o.lse[row], &clean_.lse[row], 4), 0) << "lse of row " << row;
    });
}

INSTANTIATE_TEST_SUITE_P(Compiled, NonFiniteTest, ::testing::ValuesIn(AttentionKernels()),
                         KernelName);

}  // namespace
}  // namespace attngen::test
