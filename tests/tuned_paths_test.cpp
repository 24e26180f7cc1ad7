// The paths of cpu_fused that only tuned kernels take: the key-block path (an online softmax over
// blocks of keys, with and without key splits) and the decode path for kernels that serve up to
// 64 queries. The default build compiles none of them, so these tests JIT-compile each one for the
// host, as the autotuner does, and compare it with the fp64 reference at lengths below, at and
// above the vector width, the query group and the key block. The tuner's own check runs one small
// problem per candidate; this is the correctness list a kernel built from a tuning database
// relies on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "jit_attention.h"
#include "measure.h"
#include "schedule.h"
#include "tune_shape.h"

namespace attngen::tuner {
namespace {

// The parameter of a search space named `name`, or null.
const schedules::TunableParam *FindParam(const schedules::SearchSpace &space,
                                         const std::string &name) {
    for (const schedules::TunableParam &param : space.params) {
        if (param.name == name) return &param;
    }
    return nullptr;
}

// Schedule parameters from "name=value,..."; a malformed text fails the test.
std::map<std::string, int> Tuning(const std::string &text) {
    std::map<std::string, int> tuning;
    const Status parsed = parse_tuning(text, &tuning);
    EXPECT_TRUE(parsed.ok()) << parsed.to_string();
    return tuning;
}

struct PathCase {
    std::string params;  // The candidate's parameters, as in a tuning database.
    int max_queries;     // The bucket's query bound (0: any).
    int head_dim;        // The bucket's d_k = d_v (0: run-time head dims).
};

void PrintTo(const PathCase &p, std::ostream *os) {
    *os << p.params << " max_queries=" << p.max_queries << " head_dim=" << p.head_dim;
}

std::string Name(const ::testing::TestParamInfo<PathCase> &info) {
    std::string name = info.param.params + "_q" + std::to_string(info.param.max_queries) + "_d" +
                       std::to_string(info.param.head_dim);
    for (char &c : name) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return name;
}

// A problem for check_against_reference: two batch elements of 4 query heads over 2 KV heads.
TuneShape check_shape(int64_t nq, int64_t nk, int64_t d_k, int64_t d_v) {
    TuneShape s;
    s.batch = 2;
    s.heads = 4;
    s.kv_heads = 2;
    s.nq = nq;
    s.nk = nk;
    s.d_k = d_k;
    s.d_v = d_v;
    return s;
}

class TunedPathTest : public ::testing::TestWithParam<PathCase> {};

TEST_P(TunedPathTest, MatchesReferenceAcrossTileEdges) {
    const PathCase &p = GetParam();
    Variant bucket;
    bucket.max_queries = p.max_queries;
    bucket.d_k = bucket.d_v = p.head_dim;
    const Candidate candidate{"cpu_fused", Tuning(p.params)};
    TuneShape estimate;
    estimate.nq = 64;
    estimate.nk = 512;
    JitAttention kernel(candidate.in(bucket), Halide::get_host_target(), estimate);

    // Query counts around the vector widths (4, 8, 16) and the query group (up to 64), key counts
    // around the key blocks (256 to 1024) and none a multiple of a tile; head dims below and
    // above a vector, d_v different from d_k. Decode-path buckets get at most their bound.
    const std::vector<int64_t> query_counts = p.max_queries > 0
                                                  ? std::vector<int64_t>{1, 5, 17, p.max_queries}
                                                  : std::vector<int64_t>{1, 17, 33, 70};
    // Buckets with a query bound (which may take the decode path) also get a key count above
    // the decode path's default chunk of 2048 keys.
    const std::vector<int64_t> key_counts = p.max_queries > 0
                                                ? std::vector<int64_t>{9, 257, 1100, 2100}
                                                : std::vector<int64_t>{9, 257, 1100};
    for (int64_t nq : query_counts) {
        for (int64_t nk : key_counts) {
            const TuneShape s = check_shape(nq, nk,
                                            p.head_dim > 0 ? p.head_dim
                                            : nq % 2 == 0  ? 24
                                                           : 7,
                                            p.head_dim > 0 ? p.head_dim
                                            : nq % 2 == 0  ? 20
                                                           : 33);
            SCOPED_TRACE(s.spec());
            EXPECT_EQ(check_against_reference(kernel, s), "");
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    CpuFused, TunedPathTest,
    ::testing::Values(
        PathCase{"key_block=256", 0, 0}, PathCase{"key_block=512,key_splits=4", 0, 0},
        PathCase{"key_block=256,key_splits=8,value_rows=8,value_vectors=1", 0, 0},
        PathCase{"key_block=256,query_vectors=1,key_tile=4,value_rows=2,value_vectors=3", 0, 0},
        PathCase{"key_block=512,key_splits=2,query_vectors=3,key_tile=8,value_rows=8,"
                 "value_vectors=3",
                 0, 96},
        PathCase{"key_block=2048,key_tile=3,value_vectors=5", 0, 80},
        PathCase{"key_block=1024,key_splits=2", 64, 64}, PathCase{"split_keys=1", 64, 0},
        PathCase{"features_tile=1", 0, 0}, PathCase{"features_tile=0,value_tile=6", 0, 64},
        PathCase{"features_tile=1,query_vectors=1,value_rows=2,value_vectors=3", 0, 0},
        PathCase{"features_tile=1,query_vectors=3,value_rows=8,value_vectors=1", 0, 80},
        // 1100 keys of 128 values pass the size from which P V splits its keys (2048 x 64).
        PathCase{"features_tile=1,value_key_chunk=128", 0, 128},
        PathCase{"split_keys=1,decode_key_chunk=256,decode_key_unroll=4", 64, 0}),
    Name);

// The tuner measures each schedule's starting points first: for cpu_fused, each path with its
// own defaults. A starting point must be a valid kernel as written, or the search would skip it.
TEST(CpuFusedSearchSpace, OffersEachPathWithItsDefaultsAsAStartingPoint) {
    for (bool causal : {false, true}) {
        schedules::Context ctx;
        ctx.target = Halide::Target("x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41");
        ctx.variant.max_queries = 64;
        ctx.variant.mask.causal = causal;
        const schedules::SearchSpace space =
            schedules::find_schedule("cpu_fused")->attention_search_space(ctx);
        std::vector<std::string> paths;
        for (const auto &point : space.starting_points) {
            const std::map<std::string, int> values = space.with_defaults(point);
            SCOPED_TRACE(format_tuning(values));
            EXPECT_EQ(space.check(values, ctx), "");
            EXPECT_EQ(space.canonical(values), values);
            paths.push_back(point.count("key_block") != 0       ? "key_block"
                            : point.count("features_tile") != 0 ? "features_tile"
                                                                : "split_keys");
        }
        // The key-block path and the choice of P V tile serve non-causal kernels only.
        const long key_block_points = std::count(paths.begin(), paths.end(), "key_block");
        EXPECT_EQ(key_block_points > 0, !causal);
        EXPECT_EQ(std::count(paths.begin(), paths.end(), "features_tile"), causal ? 0 : 1);
        EXPECT_EQ(std::count(paths.begin(), paths.end(), "split_keys"), 1);
    }
}

// The block path's P V tile by default: across value features where whole tiles of features
// divide d_v (measured faster there), across queries elsewhere, and never for causal kernels.
// With 16 vector registers the across-queries tile is narrower, so that it stays in registers.
TEST(CpuFusedSearchSpace, DefaultTilesFollowTheValueHeadDimAndTheRegisters) {
    auto fallback = [](const schedules::SearchSpace &space, const std::string &name) {
        const schedules::TunableParam *param = FindParam(space, name);
        return param == nullptr ? -1 : param->fallback;  // -1: not a parameter of this space.
    };
    const schedules::Schedule *fused = schedules::find_schedule("cpu_fused");
    schedules::Context ctx;
    ctx.target = Halide::Target("x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41");
    for (const auto &[d_v, expected] :
         std::vector<std::pair<int, int>>{{64, 1}, {128, 1}, {256, 1}, {80, 0}, {96, 0}, {0, 0}}) {
        ctx.variant.d_v = d_v;
        EXPECT_EQ(fallback(fused->attention_search_space(ctx), "features_tile"), expected)
            << "d_v " << d_v;
    }
    ctx.variant.mask.causal = true;
    ctx.variant.d_v = 64;
    EXPECT_EQ(fallback(fused->attention_search_space(ctx), "features_tile"), -1);
    EXPECT_EQ(fallback(fused->attention_search_space(ctx), "value_tile"), 8);
    ctx.target = Halide::Target("x86-64-linux-avx-avx2-f16c-fma-sse41");
    EXPECT_EQ(fallback(fused->attention_search_space(ctx), "value_tile"), 4);
    ctx.variant.mask.causal = false;
    ctx.variant.d_v = 80;  // Two 8-lane vectors of features divide 80.
    EXPECT_EQ(fallback(fused->attention_search_space(ctx), "features_tile"), 1);
}

// Decode kernels of a 16-bit KV cache keep more keys in flight than float32 ones: with half the
// bytes per key the scores pass waits on each key's chain of multiply-adds, not on memory
// (schedules/cpu_fused/defaults.cpp). Their default is one of the search space's values, so that
// the tuner starts from it.
TEST(CpuFusedSearchSpace, DecodeKernelsOf16BitCachesUnrollMoreKeys) {
    const schedules::Schedule *fused = schedules::find_schedule("cpu_fused");
    schedules::Context ctx;
    ctx.target = Halide::Target("x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41");
    ctx.variant.max_queries = 8;
    for (const auto &[kv, expected] : std::vector<std::pair<DType, int>>{
             {DType::kFloat32, 2}, {DType::kBFloat16, 8}, {DType::kFloat16, 8}}) {
        ctx.variant.kv_storage = kv;
        const schedules::SearchSpace space = fused->attention_search_space(ctx);
        SCOPED_TRACE(dtype_name(kv));
        const schedules::TunableParam *param = FindParam(space, "decode_key_unroll");
        ASSERT_NE(param, nullptr);
        EXPECT_EQ(param->fallback, expected);
        EXPECT_NE(std::find(param->values.begin(), param->values.end(), expected),
                  param->values.end());
    }
}

// Tuned values can still reach a target they were not searched on (a tuning passed by hand, or
// tuning_target left out). Register tiles searched on AVX-512 (32 vector registers) that do not fit
// AVX2's or SSE4.1's 16, or P V rows that do not divide a narrower target's query group, take that
// target's defaults; what fits is kept, and on the tuned target nothing changes.
TEST(ScheduleParams, TunedTilesThatDoNotFitTheTargetTakeItsDefaults) {
    const Halide::Target avx512("x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41"),
        avx2("x86-64-linux-avx-avx2-f16c-fma-sse41"), sse41("x86-64-linux-sse41");
    using Values = std::map<std::string, int>;
    // The parameters `schedule` is scheduled with on `target` when tuned with `tuned`, of those
    // named in `expected`, against `expected`.
    auto expect = [](const char *schedule, const Halide::Target &target, const char *tuned,
                     const Values &expected) {
        schedules::Context ctx;
        ctx.target = target;
        ctx.variant.d_v = 256;
        ctx.params = Tuning(tuned);
        const Values all = schedules::find_schedule(schedule)->attention_params(ctx);
        Values got;
        for (const auto &entry : expected) got[entry.first] = all.at(entry.first);
        EXPECT_EQ(got, expected) << schedule << " on " << target.to_string() << " tuned " << tuned;
    };
    // The checked-in database's d256 winner: its 4 x 4 P V tile needs 21 registers.
    const char *d256 = "features_tile=1,query_vectors=2,key_tile=6,value_rows=4,value_vectors=4";
    expect("cpu_fused", avx512, d256,
           {{"query_vectors", 2}, {"key_tile", 6}, {"value_rows", 4}, {"value_vectors", 4}});
    expect("cpu_fused", avx2, d256,
           {{"query_vectors", 2}, {"key_tile", 6}, {"value_rows", 4}, {"value_vectors", 2}});
    // 3 x 8 scores need 28 registers: first the key tile, then the query vectors go back.
    expect("cpu_fused", avx2, "features_tile=0,query_vectors=3,key_tile=8",
           {{"query_vectors", 2}, {"key_tile", 6}, {"value_tile", 4}});
    expect("cpu_fused", avx2, "features_tile=0,key_tile=7", {{"key_tile", 6}});
    // A tile that fits is kept, even where it is not the target's default.
    expect("cpu_fused", avx2, "features_tile=0,value_tile=6", {{"value_tile", 6}});
    // One query vector of SSE4.1 is 4 queries: 8 P V rows no longer divide the group.
    expect("cpu_fused", sse41, "features_tile=1,query_vectors=1,value_rows=8,value_vectors=1",
           {{"value_rows", 4}, {"value_vectors", 2}});
    // cpu_tiled's 8 x 3 tile (28 registers) on AVX2: its default 4 x 2.
    expect("cpu_tiled", avx2, "rows=8,lane_vectors=3", {{"rows", 4}, {"lane_vectors", 2}});
    expect("cpu_tiled", avx512, "rows=8,lane_vectors=3", {{"rows", 8}, {"lane_vectors", 3}});
}

// A library compiled for several targets runs its generator once per target with the same
// parameters; tuned values apply only to the target they were measured for, whatever features say
// how the kernel is linked, and every other target (a narrower ISA, the same one with CUDA) takes
// the schedule's defaults.
TEST(ScheduleParams, TuningAppliesOnlyToTheTargetItWasMeasuredFor) {
    const std::string avx512 = "x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41",
                      avx2 = "x86-64-linux-avx-avx2-f16c-fma-sse41";
    const Halide::Target avx2_linked = Halide::Target(avx2)
                                           .with_feature(Halide::Target::NoRuntime)
                                           .with_feature(Halide::Target::UserContext);
    EXPECT_TRUE(schedules::tuning_applies(Halide::Target(avx2), ""));
    EXPECT_TRUE(schedules::tuning_applies(Halide::Target(avx2), avx2));
    EXPECT_TRUE(schedules::tuning_applies(avx2_linked, avx2));
    EXPECT_TRUE(schedules::tuning_applies(Halide::Target(avx512 + "-jit"), avx512));
    EXPECT_FALSE(schedules::tuning_applies(avx2_linked, avx512));
    EXPECT_FALSE(schedules::tuning_applies(Halide::Target(avx512), avx2));
    EXPECT_FALSE(schedules::tuning_applies(Halide::Target(avx2), "x86-64-linux-sse41"));
    EXPECT_FALSE(
        schedules::tuning_applies(Halide::Target(avx2 + "-cuda-cuda_capability_80"), avx2));
    EXPECT_FALSE(schedules::tuning_applies(Halide::Target("arm-64-linux"), avx2));
    try {
        schedules::tuning_applies(Halide::Target(avx2), "x86-64-linux-avx3");
        ADD_FAILURE() << "an invalid tuning target was accepted";
    } catch (const Halide::Error &e) {
        EXPECT_NE(std::string(e.what()).find("tuning_target 'x86-64-linux-avx3' is not a Halide "
                                             "target"),
                  std::string::npos)
            << e.what();
    }
}

// The CUDA schedules' search spaces: every value of every parameter (one at a time, over the
// defaults) that the constraint accepts must compile for a CUDA target, and the ones it rejects
// must be refused by the schedule itself with the same reason. No device is needed to compile;
// the kernels' results on a device are the CUDA tests' job.
TEST(CudaSearchSpace, EveryAcceptedValueCompilesAndTheRestAreRefused) {
    const Halide::Target target("x86-64-linux-avx2-cuda-cuda_capability_80");
    TuneShape estimate;
    estimate.nq = 64;
    estimate.nk = 512;
    struct Case {
        std::string schedule;
        int max_queries;
        bool causal;
        std::string only;  // The one parameter to vary, or all when empty.
    };
    // The decode kernel varies only its own parameter: the others are the causal case's.
    for (const Case &c :
         {Case{"cuda_fused", 0, true, ""}, Case{"cuda_fused", 16, false, "decode_key_splits"},
          Case{"cuda_tiled", 0, false, ""}}) {
        schedules::Context ctx;
        ctx.target = target;
        ctx.variant.max_queries = c.max_queries;
        ctx.variant.mask.causal = c.causal;
        const schedules::SearchSpace space =
            schedules::find_schedule(c.schedule)->attention_search_space(ctx);
        ASSERT_FALSE(space.params.empty()) << c.schedule;
        Variant bucket;
        bucket.max_queries = c.max_queries;
        bucket.mask.causal = c.causal;
        bucket.d_k = bucket.d_v = 64;
        int accepted = 0, refused = 0;
        for (const auto &param : space.params) {
            if (!c.only.empty() && param.name != c.only) continue;
            for (int value : param.values) {
                std::map<std::string, int> values = space.defaults();
                values[param.name] = value;
                if (values != space.defaults() && space.canonical(values) == space.defaults()) {
                    continue;  // The same kernel as the defaults.
                }
                const std::string reason = space.check(values, ctx);
                SCOPED_TRACE(c.schedule + " " + format_tuning(values));
                try {
                    JitAttention kernel(Candidate{c.schedule, values}.in(bucket), target, estimate);
                    EXPECT_EQ(reason, "");
                    accepted++;
                } catch (const Halide::Error &e) {
                    EXPECT_NE(reason, "");
                    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
                    refused++;
                }
            }
        }
        EXPECT_GT(accepted, 3) << c.schedule;
        // 64 queries by 32 keys or 32 value threads exceed 1024 threads.
        if (c.schedule == "cuda_fused" && c.only.empty()) EXPECT_GT(refused, 0);
    }
}

// cuda_fused's CPU entry (a library with CUDA and CPU entries) walks the same key blocks and query
// groups as its GPU kernel, in the register tiles of cpu_fused's key-block path, so a tuned layout
// must give the reference's results there too.
TEST(CudaFusedCpuEntry, TunedLayoutMatchesReference) {
    Variant bucket;
    const Candidate candidate{"cuda_fused", Tuning("key_block=16,query_group=64")};
    TuneShape estimate;
    JitAttention kernel(candidate.in(bucket), Halide::get_host_target(), estimate);
    for (int64_t nq : {1, 17, 70}) {
        for (int64_t nk : {9, 100}) {
            const TuneShape s = check_shape(nq, nk, 24, 20);
            SCOPED_TRACE(s.spec());
            EXPECT_EQ(check_against_reference(kernel, s), "");
        }
    }
}

// A decode kernel's groups hold max_queries queries (3 here: fewer than a vector, and not a
// multiple of the value rows of cpu_fused's tiles) and its keys are split 16 ways; the CPU entry
// walks the same groups and splits.
TEST(CudaFusedCpuEntry, DecodeGroupsOfThreeQueriesMatchReference) {
    Variant bucket;
    bucket.max_queries = 3;
    const Candidate candidate{"cuda_fused", {}};
    TuneShape estimate;
    JitAttention kernel(candidate.in(bucket), Halide::get_host_target(), estimate);
    for (int64_t nq : {1, 3}) {
        for (int64_t nk : {5, 600}) {
            const TuneShape s = check_shape(nq, nk, 24, 20);
            SCOPED_TRACE(s.spec());
            EXPECT_EQ(check_against_reference(kernel, s), "");
        }
    }
}

}  // namespace
}  // namespace attngen::tuner
