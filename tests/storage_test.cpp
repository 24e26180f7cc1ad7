// 16-bit storage (bfloat16, float16) of q, k, v and out: each schedule that compiles such kernels
// against the fp64 reference on inputs rounded to the type, within twice the error of a plain
// implementation in that precision (reference/low_precision.h); the rounding of the output; the
// edge cases of float32 (empty rows, huge logits); and the calls the runtime refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <ostream>
#include <set>
#include <tuple>
#include <utility>

#include "attngen/attngen.h"
#include "runtime_test_util.h"

namespace attngen::test {
namespace {

// LowPrecision: the oracle's conversions, which every check below relies on.

TEST(LowPrecision, BFloat16RoundsHalfToEven) {
    // bfloat16 keeps 7 fraction bits: its ulp at 1 is 2^-7.
    EXPECT_EQ(reference::to_bf16_bits(1.0f + 0x1p-8f), 0x3f80);             // Tie: down to even 1.
    EXPECT_EQ(reference::to_bf16_bits(1.0f + 0x1p-7f + 0x1p-8f), 0x3f82);   // Tie: up to even.
    EXPECT_EQ(reference::to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);  // Above the tie.
    EXPECT_EQ(reference::to_bf16_bits(-2.0f), 0xc000);
    EXPECT_EQ(reference::to_bf16_bits(3.4e38f), 0x7f80);  // Rounds up to infinity.
    EXPECT_TRUE(std::isnan(reference::from_bf16_bits(reference::to_bf16_bits(NAN))));
}

TEST(LowPrecision, Float16RoundsHalfToEvenAndOverflowsAbove65504) {
    EXPECT_EQ(reference::to_f16_bits(1.0f + 0x1p-11f), 0x3c00);             // Tie: down to even 1.
    EXPECT_EQ(reference::to_f16_bits(1.0f + 0x1p-10f + 0x1p-11f), 0x3c02);  // Tie: up to even.
    EXPECT_EQ(reference::to_f16_bits(65504.0f), 0x7bff);
    EXPECT_EQ(reference::to_f16_bits(65519.0f), 0x7bff);
    EXPECT_EQ(reference::to_f16_bits(65520.0f), 0x7c00);
    EXPECT_EQ(reference::to_f16_bits(-1e6f), 0xfc00);
    EXPECT_EQ(reference::to_f16_bits(0x1p-24f), 0x0001);    // The smallest subnormal.
    EXPECT_EQ(reference::to_f16_bits(0x1p-25f), 0x0000);    // Tie: down to even 0.
    EXPECT_EQ(reference::to_f16_bits(0x1.8p-24f), 0x0002);  // Tie: up to even.
    EXPECT_EQ(reference::to_f16_bits(0x1p-14f), 0x0400);    // The smallest normal.
    EXPECT_TRUE(std::isnan(reference::from_f16_bits(reference::to_f16_bits(NAN))));
}

TEST(LowPrecision, EveryBitPatternRoundTrips) {
    for (DType storage : {DType::kBFloat16, DType::kFloat16}) {
        for (uint32_t b = 0; b <= 0xffff; b++) {
            const float x = reference::from_bits(storage, static_cast<uint16_t>(b));
            if (std::isnan(x)) continue;
            ASSERT_EQ(reference::to_bits(storage, x), b) << dtype_name(storage) << " " << b;
        }
    }
}

// A schedule and a storage type that it has a compiled kernel for.
struct ScheduleStorage {
    std::string first;
    DType second;

    friend void PrintTo(const ScheduleStorage &s, std::ostream *os) {
        *os << s.first << " " << dtype_name(s.second);
    }
};

std::vector<ScheduleStorage> CompiledScheduleStorages() {
    std::set<std::pair<std::string, int>> seen;
    std::vector<ScheduleStorage> list;
    for (const std::string &schedule : TestedSchedules("attention")) {
        for (const Kernel &k : list_kernels()) {
            const Variant &v = k.variant;
            if (v.op != Op::kAttention || v.schedule != schedule || v.storage == DType::kFloat32 ||
                !k.serves_calls) {
                continue;
            }
            if (seen.insert({schedule, static_cast<int>(v.storage)}).second) {
                list.push_back({schedule, v.storage});
            }
        }
    }
    return list;
}

class StorageTest : public ::testing::TestWithParam<ScheduleStorage> {
  protected:
    DType storage() const { return GetParam().second; }

    struct Outputs {
        std::vector<float> out, lse;
        std::string kernel;
    };

    // Runs the case (its inputs already rounded, see AttentionCase::storage) in this test's
    // storage type and schedule.
    Outputs Run(const AttentionCase &c) {
        Outputs o;
        AttentionArgs args = ArgsFor(c, &o.out, &o.lse, nullptr);
        StoredTensors stored;
        stored.use_in(c, &args);
        args.schedule = GetParam().first;
        CallInfo info;
        const Status status = attention(args, &info);
        EXPECT_TRUE(status.ok()) << status.to_string();
        stored.widen_out(&o.out);
        o.kernel = info.kernel;
        return o;
    }

    AttentionCase Make(int64_t batch, int64_t heads, int64_t kv_heads, int64_t nq, int64_t nk,
                       int64_t d_k, int64_t d_v) const {
        AttentionCase c;
        c.shape = {batch, heads, kv_heads, nq, nk, d_k, d_v};
        c.storage = storage();
        return c;
    }

    void Check(AttentionCase &c, uint32_t seed, float magnitude = 1.0f) {
        c.prepare(seed, magnitude);
        const Outputs o = Run(c);
        const double factor = NaiveErrorFactor(storage());
        EXPECT_TRUE(Matches(o.out, c.out, c.out32, factor)) << "out, kernel " << o.kernel;
        EXPECT_TRUE(Matches(o.lse, c.lse, c.lse32, factor)) << "lse, kernel " << o.kernel;
        const std::string type = storage() == DType::kBFloat16 ? "_bf16" : "_f16";
        EXPECT_NE(o.kernel.find(type), std::string::npos) << o.kernel;
    }
};

// Query and key counts below, at and above a vector of 16 floats (AVX-512), cpu_fused's
// groups of 32 queries and its score tiles of 6 keys; head dims of the generic kernels (24, 20)
// and of the specialized ones (64).
TEST_P(StorageTest, MatchesReferenceAtSizesAroundTheTiles) {
    const std::pair<int64_t, int64_t> sizes[] = {{1, 1},   {1, 37},  {15, 17}, {16, 16},
                                                 {17, 33}, {32, 32}, {33, 70}, {70, 100}};
    uint32_t seed = 1;
    for (const auto &[nq, nk] : sizes) {
        for (const bool causal : {false, true}) {
            // An odd d_k: the paired form of bfloat16 products adds its last feature alone.
            for (const int64_t d : {23, 64}) {
                SCOPED_TRACE("Nq " + std::to_string(nq) + " Nk " + std::to_string(nk) + " d " +
                             std::to_string(d) + (causal ? " causal" : ""));
                AttentionCase c = Make(2, 4, 2, nq, nk, d, d == 64 ? 64 : 20);
                c.causal = causal;
                c.key_lengths = {nk, std::max<int64_t>(1, nk - 7)};
                Check(c, seed++);
            }
        }
    }
}

// Scores of a few hundred: the exponentials' arguments spread over their whole range.
TEST_P(StorageTest, MatchesReferenceWithLargeScores) {
    AttentionCase c = Make(1, 2, 2, 33, 47, 64, 64);
    Check(c, 7, 6.0f);
}

// With every score 0 the weights are equal and out is the mean of the values, computed exactly
// in float32: means of two neighbours of the storage type fall on ties, which must round to the
// even neighbour as the hardware's conversions do.
TEST_P(StorageTest, OutputRoundsHalfToEven) {
    const DType st = storage();
    const float ulp = st == DType::kBFloat16 ? 0x1p-7f : 0x1p-10f;
    // The smallest subnormal of the type (2^-133 for bfloat16, whose exponent is float32's).
    const float tiny = reference::from_bits(st, 1);
    AttentionCase c = Make(1, 1, 1, 1, 2, 16, 5);
    c.q.assign(16, 0.0f);
    c.k.assign(2 * 16, 0.5f);
    // Feature e averages 1 + n ulp and 1 + (n + 1) ulp: the tie rounds to 1 + n or 1 + (n + 1)
    // ulp, whichever is even; the fourth feature is a tie between -1 and -(1 + ulp), the last one
    // between the two smallest subnormals.
    c.v = {1.0f,       1.0f + ulp,     1.0f + 2 * ulp, -1.0f,       tiny,
           1.0f + ulp, 1.0f + 2 * ulp, 1.0f + 3 * ulp, -1.0f - ulp, 2 * tiny};
    const Outputs o = Run(c);
    const std::vector<float> expected = {1.0f, 1.0f + 2 * ulp, 1.0f + 2 * ulp, -1.0f, 2 * tiny};
    for (int e = 0; e < 5; e++) EXPECT_EQ(o.out[e], expected[e]) << "feature " << e;
}

// With one key, each row's weight is exactly 1 and out is that key's value: every bit pattern of
// the type, in the values of 256 heads, passes the kernel's widening and narrowing unchanged
// (subnormals, the largest finite values and infinities included; NaN stays NaN, -0 may come
// out as +0 from the sum that starts at 0).
TEST_P(StorageTest, EveryValueOfTheTypePassesThroughUnchanged) {
    const DType st = storage();
    AttentionCase c = Make(1, 256, 256, 1, 1, 4, 256);
    c.q.assign(256 * 4, 0.25f);
    c.k.assign(256 * 4, 0.5f);
    for (uint32_t b = 0; b <= 0xffff; b++) {
        c.v.push_back(reference::from_bits(st, static_cast<uint16_t>(b)));
    }
    Outputs o;
    AttentionArgs args = ArgsFor(c, &o.out, &o.lse, nullptr);
    StoredTensors stored;
    stored.use_in(c, &args);
    args.schedule = GetParam().first;
    ASSERT_TRUE(attention(args).ok());
    int mismatches = 0;
    for (uint32_t b = 0; b <= 0xffff; b++) {
        const uint16_t got = stored.out_bits()[b];
        const bool nan = std::isnan(c.v[b]);
        const bool ok = nan ? std::isnan(reference::from_bits(st, got))
                            : got == b || (c.v[b] == 0.0f && got == 0);
        if (!ok && mismatches++ < 5) ADD_FAILURE() << "value bits " << b << " came out " << got;
    }
    EXPECT_EQ(mismatches, 0);
}

// Causal with more queries than keys: the first rows see no key and give out = 0 (not NaN) and
// lse = -inf, as in float32.
TEST_P(StorageTest, FullyMaskedRowsGiveZeros) {
    AttentionCase c = Make(1, 2, 2, 20, 6, 24, 20);
    c.causal = true;
    c.prepare(3);
    const Outputs o = Run(c);
    for (int64_t h = 0; h < 2; h++) {
        for (int64_t i = 0; i < 20; i++) {
            const int64_t row = h * 20 + i;
            if (i < 20 - 6) {
                EXPECT_EQ(o.lse[row], -INFINITY) << "row " << row;
                for (int64_t e = 0; e < 20; e++) EXPECT_EQ(o.out[row * 20 + e], 0.0f);
            } else {
                EXPECT_TRUE(std::isfinite(o.lse[row])) << "row " << row;
            }
        }
    }
    EXPECT_TRUE(Matches(o.out, c.out, c.out32, NaiveErrorFactor(storage())));
}

// Inputs near the top of float16's range give scores far beyond it (64 x 240^2 / 8 = 460800):
// the scores are float32, so no finite row turns into NaN or infinity. Query 0 matches key 2 best,
// by a margin that leaves the others a weight below 2^-64: out is key 2's value exactly.
TEST_P(StorageTest, HugeLogitsStayFinite) {
    AttentionCase c = Make(1, 1, 1, 1, 4, 64, 8);
    c.q.assign(64, 240.0f);
    c.k.assign(4 * 64, 200.0f);
    for (int d = 0; d < 64; d++) c.k[2 * 64 + d] = 240.0f;
    c.v.clear();
    for (int j = 0; j < 4; j++)
        for (int e = 0; e < 8; e++) c.v.push_back(static_cast<float>(j * 8 + e) / 64.0f);
    const Outputs o = Run(c);
    // The largest score: 64 * 240 * 240 / 8, within a few float32 roundings (ulp 0.03).
    EXPECT_NEAR(o.lse[0], 460800.0f, 0.25f);
    for (int e = 0; e < 8; e++) EXPECT_EQ(o.out[e], c.v[2 * 8 + e]) << "feature " << e;
}

INSTANTIATE_TEST_SUITE_P(Compiled, StorageTest, ::testing::ValuesIn(CompiledScheduleStorages()),
                         [](const ::testing::TestParamInfo<ScheduleStorage> &info) {
                             return info.param.first + "_" + dtype_name(info.param.second);
                         });
// A build whose variant table has no 16-bit kernel instantiates none.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StorageTest);

// The calls the runtime refuses, whatever kernels the build has: each gets an InvalidArgument
// naming the tensor, and the output keeps its contents.
class StorageRefusalTest : public ::testing::Test {
  protected:
    void SetUp() override {
        c_.shape = {1, 2, 2, 5, 7, 8, 8};
        c_.storage = DType::kBFloat16;
        c_.draw(9);
        args_ = ArgsFor(c_, &out32_, &lse_, nullptr, 3.0f);
        stored_.use_in(c_, &args_, 3.0f);
    }

    void ExpectRefused(const std::string &message) {
        const Status status = attention(args_);
        EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
        EXPECT_NE(status.message().find(message), std::string::npos) << status.to_string();
        for (uint16_t b : stored_.out_bits()) ASSERT_EQ(b, reference::to_bf16_bits(3.0f));
        for (float x : lse_) ASSERT_EQ(x, 3.0f);
    }

    AttentionCase c_;
    std::vector<float> out32_, lse_;
    AttentionArgs args_;
    StoredTensors stored_;
};

TEST_F(StorageRefusalTest, ValuesOfAnotherTypeThanTheKeys) {
    args_.v = TensorView::f32(c_.v.data(), {1, 2, 7, 8});
    ExpectRefused("v has dtype float32 but k has bfloat16");
}

TEST_F(StorageRefusalTest, TypesThatNoKernelIsCompiledForAreNamed) {
    // Bfloat16 queries with float32 keys and values are a valid call but no variant of this
    // build (the KV cache kernels have float32 queries): a NotFound that names both types.
    args_.k = TensorView::f32(c_.k.data(), {1, 2, 7, 8});
    args_.v = TensorView::f32(c_.v.data(), {1, 2, 7, 8});
    const Status status = attention(args_);
    EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.to_string();
    EXPECT_NE(status.message().find("storing bfloat16 with k and v in float32"), std::string::npos)
        << status.to_string();
    for (uint16_t b : stored_.out_bits()) ASSERT_EQ(b, reference::to_bf16_bits(3.0f));
}

TEST_F(StorageRefusalTest, OutputOfAnotherTypeThanTheInputs) {
    std::vector<uint16_t> half(2 * 5 * 8);
    args_.out = TensorView::contiguous(half.data(), DType::kFloat16, {1, 2, 5, 8});
    ExpectRefused("out has dtype float16 but q has bfloat16");
}

TEST_F(StorageRefusalTest, StridedInnermostDimensionOf16BitTensor) {
    args_.v = args_.v.with_strides({2 * 7 * 8, 7 * 8, 8, 2});
    args_.v.shape[3] = 4;
    args_.out.shape[3] = 4;
    args_.out = args_.out.with_strides({2 * 5 * 4, 5 * 4, 4, 1});
    ExpectRefused("v has stride 2 in its last dimension");
}

TEST_F(StorageRefusalTest, LseMustStayFloat32) {
    std::vector<uint16_t> half(2 * 5);
    args_.lse = TensorView::contiguous(half.data(), DType::kBFloat16, {1, 2, 5});
    const Status status = attention(args_);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
    EXPECT_NE(status.message().find("lse has dtype bfloat16, expected float32"), std::string::npos)
        << status.to_string();
}

}  // namespace
}  // namespace attngen::test
