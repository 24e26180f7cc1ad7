// The tuner's measuring environment: the targets it may measure for on this machine, the thread
// pool its candidates run on (the one the built kernels run on), and the paired timing of a few
// candidates (attngen tune --compare).
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <string>
#include <thread>

#include "host_target.h"
#include "jit_attention.h"
#include "measure.h"
#include "paired.h"
#include "thread_pool.h"
#include "tune_shape.h"

namespace attngen::tuner {
namespace {

TEST(HostTarget, TheHostTargetRunsHere) {
    EXPECT_EQ(missing_on_host(Halide::get_host_target()), "");
}

TEST(HostTarget, NamesWhatTheMachineLacks) {
    const Halide::Target host = Halide::get_host_target();
    if (host.arch == Halide::Target::X86) {
        // An x86 target with an ARM extension: no machine runs it.
        EXPECT_EQ(missing_on_host(Halide::Target("x86-64-linux-sse41-arm_dot_prod")),
                  "arm_dot_prod");
        EXPECT_EQ(missing_on_host(Halide::Target("arm-64-linux")), "arm-64");
    } else {
        EXPECT_EQ(missing_on_host(Halide::Target("x86-64-linux-sse41")), "x86-64");
    }
}

TEST(HostTarget, FirstRunnableSkipsTargetsTheMachineCannotRun) {
    const std::string host = Halide::get_host_target().to_string();
    EXPECT_EQ(first_runnable({"x86-64-linux-sse41-arm_dot_prod", "not-a-target", host}), host);
    EXPECT_EQ(first_runnable({"x86-64-linux-sse41-arm_dot_prod"}), "");
    EXPECT_EQ(first_runnable({}), "");
}

// The tuner times its candidates on the thread pool that the built kernels run on
// (runtime/src/thread_pool.h). After a call, a worker of that pool spins for the pool's spin
// time; Halide's JIT pool puts its workers to sleep almost at once.
TEST(JitAttention, CandidatesRunOnTheRuntimesThreadPool) {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: workers never spin";
    detail::set_pool_threads(2);
    detail::set_pool_spin_microseconds(400000);
    Variant bucket;
    bucket.d_k = bucket.d_v = 64;
    TuneShape estimate;
    JitAttention kernel(Candidate{"cpu_fused", {}}.in(bucket), Halide::get_host_target(), estimate);
    // Two batch elements of 4 heads, 64 queries: 16 parallel tasks.
    Halide::Buffer<float> q(64, 64, 4, 2), out(64, 64, 4, 2), lse(64, 4, 2);
    q.fill(0.5f);
    Halide::Buffer<int32_t> lengths(2);
    lengths.fill(64);
    ASSERT_EQ(kernel.run(q, q, q, lengths, 0.125f, out, lse, estimate), 0) << kernel.last_error();
    auto process_cpu_seconds = [] {
        timespec t{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return t.tv_sec + 1e-9 * t.tv_nsec;
    };
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_GT(process_cpu_seconds() - before, 0.03) << "no worker of the runtime's pool spun";
    EXPECT_FLOAT_EQ(out(5, 7, 1, 1), 0.5f);
    detail::set_pool_spin_microseconds(-1);
    detail::set_pool_threads(0);
}

Candidate parsed(const std::string &text) {
    Candidate c;
    std::string error;
    EXPECT_TRUE(parse_candidate(text, &c, &error)) << text << ": " << error;
    return c;
}

std::string rejection(const std::string &text) {
    Candidate c;
    std::string error;
    EXPECT_FALSE(parse_candidate(text, &c, &error)) << text;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "not one line: " << error;
    return error;
}

TuneShape shape_of(const std::string &spec) {
    TuneShape shape;
    std::string error;
    EXPECT_TRUE(TuneShape::parse(spec, &shape, &error)) << spec << ": " << error;
    return shape;
}

// A shape's modifiers are part of its bucket: they pick the kernel that the default build runs
// for such calls, and the candidates are timed and checked with their values.
TEST(TuneShape, ModifiersParseAndWriteBack) {
    const TuneShape s = shape_of("h=8,nq=16384,d=64,causal,window_left=1024");
    EXPECT_EQ(s.mask().to_string(), "causal+window");
    EXPECT_EQ(s.window_left, 1024);
    EXPECT_EQ(s.window_right, -1);
    EXPECT_EQ(s.spec(), "b=1,h=8,kv=8,nq=16384,nk=16384,d=64,dv=64,causal,window_left=1024");
    const TuneShape all = shape_of(
        "nq=64,nk=80,causal,window_left=0,window_right=3,docs=16,prefix=5,softcap=30,alibi,bias");
    EXPECT_EQ(all.mask().to_string(), "causal+window+prefix+segments");
    EXPECT_EQ(all.score().to_string(), "softcap+alibi+bias");
    EXPECT_EQ(shape_of(all.spec()).spec(), all.spec());
}

TEST(TuneShape, RejectsModifiersThatNoCallHas) {
    TuneShape s;
    std::string error;
    for (const char *spec :
         {"nq=8,window_left=-1", "nq=8,docs=0", "nq=8,prefix=4", "nq=8,nk=8,causal,prefix=9",
          "nq=8,softcap=0", "nq=8,alibi=2", "nq=8,window=4"}) {
        EXPECT_FALSE(TuneShape::parse(spec, &s, &error)) << spec;
        EXPECT_NE(error.find(spec), std::string::npos) << spec << ": " << error;
    }
}

TEST(TuneShape, ModifiersChooseTheBucketsKernel) {
    const std::string host = Halide::get_host_target().to_string();
    const Variant window = bucket_of(shape_of("h=8,nq=4096,d=64,causal,window_left=512"), host);
    EXPECT_TRUE(window.mask.window) << bucket_key(window);
    EXPECT_NE(bucket_key(window).find("window"), std::string::npos) << bucket_key(window);
    const Variant capped = bucket_of(shape_of("h=8,nq=2048,d=64,softcap=30,alibi"), host);
    EXPECT_TRUE(capped.score.covers(shape_of("nq=1,softcap=30,alibi").score()))
        << bucket_key(capped);
    EXPECT_NE(bucket_key(capped).find("softcap"), std::string::npos) << bucket_key(capped);
}

// The check before timing runs the candidate with the shape's modifiers and compares it with the
// reference given the same values: a candidate that ignored them would fail it.
TEST(TuneShape, CandidatesAreCheckedWithTheShapesModifiers) {
    const std::string host = Halide::get_host_target().to_string();
    const TuneShape shape =
        shape_of("h=2,nq=40,nk=70,d=32,causal,window_left=6,docs=16,softcap=5,alibi,bias");
    const Variant bucket = bucket_of(shape, host);
    ASSERT_FALSE(bucket.mask == MaskSpec{}) << "no kernel of the build has these modifiers";
    const Variant kernel = Candidate{"reference", {}}.in(bucket);
    JitAttention jit(kernel, Halide::Target(host), shape);
    EXPECT_EQ(check_against_reference(jit, check_shape(kernel, shape)), "");
    // Run with neutral values instead (the shape without modifiers), the same kernel gives
    // another result: the check above compared the modifiers' values, not their absence.
    const TuneShape small = check_shape(kernel, shape);
    TuneShape plain = small;
    plain.window_left = -1;
    plain.doc_length = 0;
    plain.softcap = 0;
    plain.alibi = plain.bias = false;
    Halide::Buffer<float> q(32, int(small.nq), 2, 2), k(32, int(small.nk), 2, 2),
        out_a(32, int(small.nq), 2, 2), out_b(32, int(small.nq), 2, 2), lse(int(small.nq), 2, 2);
    q.for_each_element([&](int d, int i, int h, int b) { q(d, i, h, b) = float((d + i) % 7) / 7; });
    k.for_each_element([&](int d, int j, int h, int b) { k(d, j, h, b) = float((d * j) % 5) / 5; });
    Halide::Buffer<int32_t> lengths(2);
    lengths.fill(int(small.nk));
    ASSERT_EQ(jit.run(q, k, k, lengths, 0.5f, out_a, lse, small), 0) << jit.last_error();
    ASSERT_EQ(jit.run(q, k, k, lengths, 0.5f, out_b, lse, plain), 0) << jit.last_error();
    int differing = 0;
    out_a.for_each_element([&](const int *pos) { differing += out_a(pos) != out_b(pos); });
    EXPECT_GT(differing, 0);
}

// Storage types are part of a shape and its bucket: a bfloat16 call runs a bfloat16 kernel, and a
// decode step against a 16-bit cache the kernel with that cache's type.
TEST(TuneShape, StorageTypesParseWriteBackAndChooseTheBucket) {
    const TuneShape bf16 = shape_of("h=8,nq=256,nk=512,d=64,dtype=bf16");
    EXPECT_EQ(bf16.storage, DType::kBFloat16);
    EXPECT_EQ(bf16.kv_storage, DType::kBFloat16);
    EXPECT_EQ(bf16.spec(), "b=1,h=8,kv=8,nq=256,nk=512,d=64,dv=64,dtype=bf16");
    const TuneShape cache = shape_of("h=32,nq=1,nk=4096,d=128,kv_dtype=f16");
    EXPECT_EQ(cache.storage, DType::kFloat32);
    EXPECT_EQ(cache.kv_storage, DType::kFloat16);
    EXPECT_EQ(shape_of(cache.spec()).spec(), cache.spec());
    EXPECT_EQ(shape_of("nq=8").spec(), "b=1,h=8,kv=8,nq=8,nk=8,d=64,dv=64");

    const std::string host = Halide::get_host_target().to_string();
    const Variant b = bucket_of(bf16, host);
    EXPECT_EQ(b.storage, DType::kBFloat16) << bucket_key(b);
    EXPECT_EQ(bucket_key(b), "attention_bf16_dk64_dv64");
    const Variant c = bucket_of(cache, host);
    EXPECT_EQ(c.storage, DType::kFloat32) << bucket_key(c);
    EXPECT_EQ(c.kv_storage, DType::kFloat16) << bucket_key(c);
    EXPECT_EQ(bucket_key(c).rfind("attention_kvf16_dk128_dv128", 0), 0u) << bucket_key(c);

    TuneShape s;
    std::string error;
    EXPECT_FALSE(TuneShape::parse("nq=8,dtype=f64", &s, &error));
    EXPECT_NE(error.find("dtype=f64"), std::string::npos) << error;
    EXPECT_NE(error.find("bf16"), std::string::npos) << error;
}

// A 16-bit candidate gets inputs of its type and is checked against the fp64 reference on the
// same rounded inputs (the reference schedule: it compiles in about a second).
TEST(TuneShape, SixteenBitCandidatesAreCheckedInTheirType) {
    const std::string host = Halide::get_host_target().to_string();
    const TuneShape shape = shape_of("h=2,nq=40,nk=70,d=32,causal,dtype=bf16");
    const Variant bucket = bucket_of(shape, host);
    ASSERT_EQ(bucket.storage, DType::kBFloat16) << "no bfloat16 kernel in the build";
    const Variant kernel = Candidate{"reference", {}}.in(bucket);
    JitAttention jit(kernel, Halide::Target(host), shape);
    EXPECT_EQ(check_against_reference(jit, check_shape(kernel, shape)), "");
    TimedProblem problem(shape);
    EXPECT_EQ(problem.q.type(), Halide::UInt(16));
    EXPECT_EQ(problem.out.type(), Halide::UInt(16));
    EXPECT_EQ(problem.run(jit), 0) << jit.last_error();
}

TEST(PairedTiming, ParsesCandidatesAsTheCommandLineWritesThem) {
    EXPECT_EQ(parsed("cpu_fused"), (Candidate{"cpu_fused", {}}));
    const Candidate tiles{"cpu_fused", {{"key_tile", 5}, {"query_vectors", 4}}};
    EXPECT_EQ(parsed("cpu_fused:key_tile=5,query_vectors=4"), tiles);
    // As describe() prints it, so that a line of the table can be pasted back.
    EXPECT_EQ(parsed("cpu_fused{key_tile=5,query_vectors=4}"), tiles);
    EXPECT_EQ(parsed(tiles.describe()), tiles);
    EXPECT_EQ(parsed("Adams2019"), (Candidate{"Adams2019", {}}));
    EXPECT_EQ(parsed("default"), (Candidate{kDefaultBuild, {}}));
}

TEST(PairedTiming, RejectsMalformedCandidatesNamingThem) {
    EXPECT_NE(rejection("cpu_fused:key_tile").find("key_tile"), std::string::npos);
    EXPECT_NE(rejection("cpu_fused:key_tile=five").find("five"), std::string::npos);
    EXPECT_NE(rejection(":key_tile=5").find("names no schedule"), std::string::npos);
    EXPECT_NE(rejection("cpu_fused{key_tile=5").find("without closing"), std::string::npos);
    EXPECT_NE(rejection("default:key_tile=5").find("no parameters"), std::string::npos);
}

// Small enough to compile and time in seconds; 40 queries and 70 keys are not multiples of any
// tile.
TuneShape small_shape() {
    TuneShape shape;
    std::string error;
    EXPECT_TRUE(TuneShape::parse("h=2,nq=40,nk=70,d=64", &shape, &error)) << error;
    return shape;
}

TEST(PairedTiming, TimesEachCandidateInEveryRoundAgainstTheFirst) {
    PairedOptions options;
    options.rounds = 3;
    options.round_seconds = 0.002;
    const std::vector<Candidate> candidates{parsed("default"), parsed("cpu_fused:key_tile=4"),
                                            parsed("cpu_fused:warp_factor=3")};
    std::string error;
    const auto results = compare_candidates(small_shape(), candidates,
                                            Halide::get_host_target().to_string(), options, &error);
    ASSERT_EQ(error, "");
    ASSERT_EQ(results.size(), 3u);
    // The first is its own yardstick: every round's ratio is exactly 1.
    EXPECT_TRUE(results[0].ok()) << results[0].error;
    EXPECT_EQ(results[0].ratio_median, 1.0);
    EXPECT_EQ(results[0].ratio_q1, 1.0);
    EXPECT_EQ(results[0].ratio_q3, 1.0);
    for (int c = 0; c < 2; c++) {
        const PairedResult &r = results[c];
        ASSERT_TRUE(r.ok()) << r.error;
        EXPECT_GE(r.calls, 1);
        EXPECT_GT(r.min_ms, 0.0);
        EXPECT_LE(r.min_ms, r.median_ms);
        EXPECT_LE(r.ratio_q1, r.ratio_median);
        EXPECT_LE(r.ratio_median, r.ratio_q3);
        EXPECT_GT(r.ratio_q1, 0.0);
    }
    EXPECT_EQ(results[1].candidate, candidates[1]);
    // A parameter the schedule does not know fails that candidate alone, naming the parameter.
    EXPECT_FALSE(results[2].ok());
    EXPECT_NE(results[2].error.find("warp_factor"), std::string::npos) << results[2].error;
}

TEST(PairedTiming, AFailingFirstCandidateIsAnError) {
    PairedOptions options;
    options.rounds = 1;
    std::string error;
    const auto results =
        compare_candidates(small_shape(), {parsed("cpu_warp"), parsed("cpu_fused")},
                           Halide::get_host_target().to_string(), options, &error);
    EXPECT_TRUE(results.empty());
    EXPECT_NE(error.find("cpu_warp"), std::string::npos) << error;
}

}  // namespace
}  // namespace attngen::tuner
