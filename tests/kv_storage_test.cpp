// Float32 queries and output with a 16-bit KV cache (Variant::kv_storage): every compiled kernel
// of such a variant against the fp64 reference on the rounded keys and values, and against the
// float32 kernel of the same schedule on the same values widened (the widening is exact, so a
// kernel that only converts where it reads computes the float32 kernel's result); the dispatch
// for decode steps and for longer calls. StorageRefusalTest (storage_test.cpp) has the calls
// the runtime refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "attngen/attngen.h"
#include "runtime_test_util.h"

namespace attngen::test {
namespace {

// The kernels with float32 queries and a 16-bit KV cache.
std::vector<Kernel> KvStorageKernels() {
    std::vector<Kernel> kernels;
    for (const Kernel &k : AttentionKernels()) {
        if (k.variant.storage == DType::kFloat32 && k.variant.kv_storage != DType::kFloat32 &&
            k.serves_calls) {
            kernels.push_back(k);
        }
    }
    return kernels;
}

// The float32 kernel of the same variant but for its KV type, if the build has one.
const Kernel *Float32Twin(const Kernel &k) {
    static const std::vector<Kernel> kernels = list_kernels();
    Variant twin = k.variant;
    twin.kv_storage = DType::kFloat32;
    for (const Kernel &other : kernels) {
        if (other.variant == twin && other.serves_calls) return &other;
    }
    return nullptr;
}

class KvStorageTest : public ::testing::TestWithParam<Kernel> {
  protected:
    struct Outputs {
        std::vector<float> out, lse;
    };

    AttentionCase Make(int64_t heads, int64_t kv_heads, int64_t nq, int64_t nk, int64_t d_k,
                       int64_t d_v) const {
        AttentionCase c;
        c.shape = {2, heads, kv_heads, nq, nk, d_k, d_v};
        c.causal = GetParam().variant.mask.causal;
        c.key_lengths = {nk, nk - nk / 3};
        c.kv_storage = GetParam().variant.kv_storage;
        return c;
    }

    // Runs the case with the kernel given, its keys and values in the case's KV type.
    static Outputs Run(const AttentionCase &c, const Kernel &kernel) {
        Outputs o;
        AttentionArgs args = ArgsFor(c, &o.out, &o.lse, nullptr);
        StoredTensors stored;
        stored.use_in(c, &args);
        const Status status = attention(args, kernel);
        EXPECT_TRUE(status.ok()) << status.to_string();
        return o;
    }
};

// Sizes below, at and above the decode path's vectors (16 floats with AVX-512, 8 with AVX2) and
// key chunks, and head dims 24 (a partial vector), 64 and 128, up to the kernel's query bound.
TEST_P(KvStorageTest, MatchesReferenceOnTheRoundedCache) {
    const Kernel &k = GetParam();
    const int64_t most = k.variant.max_queries > 0 ? k.variant.max_queries : 20;
    for (const auto &[nq, nk, d] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 24},
                                                            {1, 15, 64},
                                                            {1, 17, 128},
                                                            {2, 100, 64},
                                                            {most, 33, 24},
                                                            {most, 300, 128},
                                                            {3, 1030, 64}}) {
        if (nq > most) continue;
        AttentionCase c = Make(4, 2, nq, nk, d, d);
        c.prepare(static_cast<uint32_t>(nq * 1000 + nk));
        const Outputs o = Run(c, k);
        // The kernel computes in float32 from exactly widened values: a float32 kernel's bound.
        EXPECT_TRUE(Matches(o.out, c.out, c.out32)) << k.name << " nq " << nq << " nk " << nk;
        EXPECT_TRUE(Matches(o.lse, c.lse, c.lse32)) << k.name << " nq " << nq << " nk " << nk;
    }
}

TEST_P(KvStorageTest, EqualsTheFloat32KernelOnTheWidenedCache) {
    const Kernel &k = GetParam();
    const Kernel *twin = Float32Twin(k);
    if (twin == nullptr) GTEST_SKIP() << "no float32 kernel of " << k.variant.to_string();
    for (const auto &[nq, nk, d] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 4099, 128}, {2, 77, 64}}) {
        if (k.variant.max_queries > 0 && nq > k.variant.max_queries) continue;
        AttentionCase c = Make(8, 2, nq, nk, d, d);
        c.draw(5);
        c.compute_references();  // Rounds k and v to the KV type.
        const Outputs mixed = Run(c, k);
        AttentionCase widened = c;
        widened.kv_storage = DType::kFloat32;
        const Outputs plain = Run(widened, *twin);
        ASSERT_EQ(mixed.out.size(), plain.out.size());
        // Equal up to the order of the float32 operations, which LLVM may contract into fused
        // multiply-adds differently in two kernels (the reference schedule's do differ in the
        // last bits; cpu_fused's decode kernels agree exactly): a few ulps of the row's scale.
        for (std::size_t n = 0; n < plain.out.size(); n++) {
            ASSERT_NEAR(mixed.out[n], plain.out[n], 4e-7)
                << k.name << " against " << twin->name << ", nq " << nq << ", element " << n;
        }
        for (std::size_t n = 0; n < plain.lse.size(); n++) {
            ASSERT_NEAR(mixed.lse[n], plain.lse[n], 4e-7 * std::abs(plain.lse[n]) + 1e-7)
                << k.name << " against " << twin->name << ", nq " << nq << ", row " << n;
        }
    }
}

// One key per row gives each row a weight of exactly 1, so out is the key's value and lse its
// score, both float32: every bit pattern of the cache type must come out as its exact float32
// value, through the values (subnormals, the largest finite values and infinities included; NaN
// stays NaN; -0 may come out as +0 from the sum that starts at 0) and through the keys (q = 1 and
// scale 1: the score is the key, and lse the score up to its roundings; a NaN or +inf key makes its
// row NaN and a -inf key leaves its row without weight, as docs/reliability.md says). 65536 rows of
// one feature each.
TEST_P(KvStorageTest, EveryValueOfTheCacheTypeIsReadExactly) {
    const Kernel &kernel = GetParam();
    const DType type = kernel.variant.kv_storage;
    AttentionCase c;
    c.shape = {256, 256, 256, 1, 1, 1, 1};
    c.causal = kernel.variant.mask.causal;  // Nq = Nk: the key is visible to the query.
    c.kv_storage = type;
    c.scale = 1.0f;
    c.q.assign(65536, 1.0f);
    std::vector<float> every;
    for (uint32_t b = 0; b <= 0xffff; b++) {
        every.push_back(reference::from_bits(type, static_cast<uint16_t>(b)));
    }

    c.k.assign(65536, 0.0f);
    c.v = every;
    Outputs o = Run(c, kernel);
    int mismatches = 0;
    for (uint32_t b = 0; b <= 0xffff; b++) {
        const float want = every[b], got = o.out[b];
        // -0 may come out as +0, which compares equal.
        const bool ok = std::isnan(want) ? std::isnan(got) : got == want;
        if (!ok && mismatches++ < 5) ADD_FAILURE() << "value bits " << b << " came out " << got;
    }

    c.k = every;
    c.v.assign(65536, 1.0f);
    o = Run(c, kernel);
    for (uint32_t b = 0; b <= 0xffff; b++) {
        const float key = every[b];
        // The kernels' softmax works with the score in base 2, score log2(e) as a float: keys
        // beyond float32's largest over log2(e) (2.36e38, bfloat16's top 1.3%) give an infinite
        // exponent, and their rows go as those of an infinite key.
        const float base_two = key * 1.44269504088896341f;
        bool ok;
        if (std::isnan(key) || base_two == INFINITY) {
            ok = std::isnan(o.lse[b]) && std::isnan(o.out[b]);
        } else if (base_two == -INFINITY) {
            ok = o.lse[b] == -INFINITY && o.out[b] == 0.0f;
        } else {
            // lse is the score up to the roundings of its base-2 form: a few ulps of the key, and
            // near 0 a few of 1.0's (2^-22), where a key with a wrong sign, exponent or class
            // would be off by far more; out is 1 to an ulp or two (the weight exp(s - m) of a
            // large score is 1 to the rounding of s log2(e)). The values above pass through
            // exactly, and the keys are widened by the same code.
            const float tolerance =
                4 * std::numeric_limits<float>::epsilon() * std::abs(key) + 0x1p-22f;
            ok = std::abs(o.lse[b] - key) <= tolerance &&
                 std::abs(o.out[b] - 1.0f) <= 2 * std::numeric_limits<float>::epsilon();
        }
        if (!ok && mismatches++ < 10) {
            ADD_FAILURE() << "key bits " << b << " gave lse " << o.lse[b] << ", out " << o.out[b];
        }
    }
    EXPECT_EQ(mismatches, 0) << kernel.name;
}

INSTANTIATE_TEST_SUITE_P(Compiled, KvStorageTest, ::testing::ValuesIn(KvStorageKernels()),
                         [](const ::testing::TestParamInfo<Kernel> &info) {
                             return info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KvStorageTest);

// The dispatch: a decode step with a bfloat16 cache takes the decode kernel, a longer call the
// schedule that has a kernel for it.
TEST(KvStorageDispatch, DecodeStepsAndLongerCallsFindTheirKernels) {
    bool any = false;
    for (const Kernel &k : KvStorageKernels()) any |= k.variant.max_queries > 0;
    if (!any) GTEST_SKIP() << "this build compiles no decode kernel with a 16-bit KV cache";
    for (const int64_t nq : {1, 8, 9, 40}) {
        AttentionCase c;
        c.shape = {1, 4, 2, nq, 50, 64, 64};
        c.kv_storage = DType::kBFloat16;
        c.prepare(static_cast<uint32_t>(nq));
        std::vector<float> out, lse;
        AttentionArgs args = ArgsFor(c, &out, &lse, nullptr);
        StoredTensors stored;
        stored.use_in(c, &args);
        CallInfo info;
        const Status status = attention(args, &info);
        ASSERT_TRUE(status.ok()) << "nq " << nq << ": " << status.to_string();
        EXPECT_NE(info.kernel.find("kvbf16"), std::string::npos) << info.kernel;
        if (nq <= 8) EXPECT_NE(info.kernel.find("_q8_"), std::string::npos) << info.kernel;
        EXPECT_TRUE(Matches(out, c.out, c.out32)) << info.kernel << " nq " << nq;
    }
}

}  // namespace
}  // namespace attngen::test
