// The dispatch's rules for which kernels serve calls on a CPU (detail::serves_calls) and which of
// them takes a call (detail::choose_kernel), on entries made up here: one build cannot hold every
// case, and the machine decides which it can show.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "attngen/kernels.h"
#include "kernel_choice.h"

namespace attngen::detail {
namespace {

constexpr const char *kAvx512 = "x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41";
constexpr const char *kAvx2 = "x86-64-linux-avx-avx2-f16c-fma-sse41";

// A made-up cpu_fused attention kernel, tuned where `tuning` is not empty; a CUDA one with cuda.
Kernel Entry(const char *tuning, bool cuda = false) {
    Kernel k;
    k.name = "made_up";
    k.variant.schedule = "cpu_fused";
    if (tuning[0] != '\0') EXPECT_TRUE(parse_tuning(tuning, &k.variant.tuning).ok());
    k.targets = cuda ? std::string(kAvx2) + "-cuda-cuda_capability_80," + kAvx2 : "";
    return k;
}

TEST(DispatchRules, AKernelServesWhereTheCpuRunsOneOfItsTargets) {
    EXPECT_TRUE(serves_calls(Entry(""), kAvx2, kAvx2));
    EXPECT_FALSE(serves_calls(Entry(""), "", kAvx2));
}

TEST(DispatchRules, ATunedKernelServesOnlyWhereTheBuildRunsItsTarget) {
    // Tuned on AVX-512 machines: on one of those it serves.
    EXPECT_TRUE(serves_calls(Entry("value_key_chunk=128"), kAvx512, kAvx512));
    // On an AVX2 machine it cannot run at all.
    EXPECT_FALSE(serves_calls(Entry("value_key_chunk=128"), "", kAvx2));
    // Tuned on AVX2 machines: an AVX-512 machine runs its code, but the build's other kernels run
    // AVX-512 code there, and the tuning was not measured on such a machine.
    EXPECT_FALSE(serves_calls(Entry("value_key_chunk=128"), kAvx2, kAvx512));
}

TEST(DispatchRules, ACudaKernelAlwaysServesThroughItsCpuEntry) {
    EXPECT_TRUE(serves_calls(Entry("", true), "", kAvx512));
}

// choose_kernel over made-up entries for one attention call (B1 H8 Nq256 Nk1024 d64): `serves`
// stands for what this CPU runs.
Status Choose(const std::vector<Kernel> &entries, const std::vector<bool> &serving,
              const Kernel **chosen) {
    KernelRequest request;
    request.heads = request.kv_heads = 8;
    request.d_k = request.d_v = 64;
    request.queries = 256;
    request.keys = 1024;
    auto serves = [&](const Kernel &k) { return serving[&k - entries.data()]; };
    return choose_kernel(request, "cpu_fused", entries, serves, chosen);
}

Kernel WithHeadDim(Kernel e, int d) {
    e.variant.d_k = e.variant.d_v = d;
    return e;
}

TEST(DispatchRules, TheMostSpecializedServingKernelIsChosen) {
    const std::vector<Kernel> entries = {Entry(""), WithHeadDim(Entry(""), 64),
                                         WithHeadDim(Entry(""), 128)};
    const Kernel *chosen = nullptr;
    ASSERT_TRUE(Choose(entries, {true, true, true}, &chosen).ok());
    EXPECT_EQ(chosen, &entries[1]);
    // The d64 kernel does not serve here: the generic one takes the call.
    ASSERT_TRUE(Choose(entries, {true, false, true}, &chosen).ok());
    EXPECT_EQ(chosen, &entries[0]);
}

TEST(DispatchRules, ACallThatOnlyUnrunnableKernelsMatchIsUnavailable) {
    std::vector<Kernel> entries = {Entry(""), WithHeadDim(Entry(""), 128)};
    entries[0].targets = kAvx512;
    const Kernel *chosen = nullptr;
    const Status status = Choose(entries, {false, true}, &chosen);
    EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.to_string();
    EXPECT_NE(status.message().find(std::string("is compiled for ") + kAvx512 +
                                    ", none of which this CPU runs"),
              std::string::npos)
        << status.message();
    EXPECT_EQ(chosen, nullptr);
}

TEST(DispatchRules, ATunedKernelLeftToTheDefaultsIsNoReasonToRefuseACall) {
    // Only a tuned kernel matches, and it does not serve here: the build has no kernel for the
    // call on this CPU, which is not the CPU's fault.
    const std::vector<Kernel> entries = {WithHeadDim(Entry("key_tile=5"), 64)};
    const Kernel *chosen = nullptr;
    const Status status = Choose(entries, {false}, &chosen);
    EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.to_string();
    EXPECT_EQ(chosen, nullptr);
}

ScheduleInfo Info(const char *name, int priority, bool cuda = false, int max_head_dims = 0) {
    ScheduleInfo s;
    s.name = name;
    s.priority = priority;
    s.cuda = cuda;
    s.max_head_dims_on_gpu = max_head_dims;
    return s;
}

Kernel Compiled(const char *schedule, Op op = Op::kAttention) {
    Kernel k;
    k.variant.schedule = schedule;
    k.variant.op = op;
    return k;
}

// An empty schedule name takes the compiled schedule of highest priority for the call's device
// that has a kernel of the call's op.
TEST(DispatchRules, TheDefaultScheduleIsTheCompiledOneOfHighestPriority) {
    const std::vector<ScheduleInfo> schedules = {Info("slow", 10), Info("fast", 40),
                                                 Info("unbuilt", 99), Info("gpu", 20, true)};
    const std::vector<Kernel> kernels = {Compiled("slow"), Compiled("fast"), Compiled("gpu"),
                                         Compiled("slow", Op::kMha)};
    KernelRequest request;
    std::string schedule;
    ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
    EXPECT_EQ(schedule, "fast");
    request.op = Op::kMha;
    ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
    EXPECT_EQ(schedule, "slow");
    request.op = Op::kAttention;
    request.cuda = true;
    ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
    EXPECT_EQ(schedule, "gpu");
    request.op = Op::kMha;
    const Status none = default_schedule(request, schedules, kernels, &schedule);
    EXPECT_EQ(none.code(), StatusCode::kNotFound);
    EXPECT_NE(none.message().find("no CUDA mha kernels"), std::string::npos) << none.message();
}

// A call for the probabilities goes to the schedule of highest priority that compiled a kernel
// with them (for modifiers, only the reference schedule by default); where none did, to the one
// it would run on otherwise, whose kernels then name what they lack.
TEST(DispatchRules, ACallForProbabilitiesGoesToASchedulesThatCompiledThem) {
    const std::vector<ScheduleInfo> schedules = {Info("slow", 10), Info("fast", 40)};
    std::vector<Kernel> kernels = {Compiled("slow"), Compiled("fast")};
    kernels[0].variant.probs = true;
    KernelRequest request;
    std::string schedule;
    ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
    EXPECT_EQ(schedule, "fast");
    request.probs = true;
    ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
    EXPECT_EQ(schedule, "slow");
    kernels[0].variant.probs = false;
    ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
    EXPECT_EQ(schedule, "fast");
}

// A call goes to the schedule of highest priority with a kernel that fits it: with a bfloat16
// KV cache, cpu_fused compiles decode kernels only, and a call of more queries goes to the
// schedule with a kernel for any number.
TEST(DispatchRules, ACallGoesToTheFirstScheduleWithAKernelThatFitsIt) {
    const std::vector<ScheduleInfo> schedules = {Info("slow", 10), Info("fast", 40)};
    std::vector<Kernel> kernels = {Compiled("slow"), Compiled("fast"), Compiled("slow"),
                                   Compiled("fast")};
    for (Kernel *k : {&kernels[2], &kernels[3]}) k->variant.kv_storage = DType::kBFloat16;
    kernels[3].variant.max_queries = 8;
    KernelRequest request;
    request.kv_storage = DType::kBFloat16;
    std::string schedule;
    for (const auto &[queries, expected] : {std::pair{1, "fast"}, {8, "fast"}, {9, "slow"}}) {
        request.queries = queries;
        ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
        EXPECT_EQ(schedule, expected) << queries << " queries";
    }
    // With no kernel that fits (float16 keys and values), the preferred schedule, whose kernels
    // then say what they lack.
    request.kv_storage = DType::kFloat16;
    ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
    EXPECT_EQ(schedule, "fast");
}

// On a GPU a schedule with a head-dim limit leaves wider calls to the next one.
TEST(DispatchRules, ACallTooWideForAGpuScheduleGoesToTheNext) {
    const std::vector<ScheduleInfo> schedules = {Info("fused", 20, true, 320),
                                                 Info("tiled", 10, true)};
    const std::vector<Kernel> kernels = {Compiled("fused"), Compiled("tiled")};
    KernelRequest request;
    request.cuda = true;
    request.d_k = request.d_v = 160;
    std::string schedule;
    ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
    EXPECT_EQ(schedule, "fused");
    request.d_v = 161;
    ASSERT_TRUE(default_schedule(request, schedules, kernels, &schedule).ok());
    EXPECT_EQ(schedule, "tiled");
}

// The baselines are told apart by the schedules' own facts (schedules/autoschedulers/info.cpp),
// whether or not this build compiled any.
TEST(DispatchRules, AutoschedulerBaselinesAreKnownByTheBuildsNames) {
    for (const char *name : {"Adams2019", "Li2018", "Mullapudi2016"})
        EXPECT_TRUE(is_autoscheduler_baseline(name)) << name;
    for (const char *name : {"cpu_fused", "reference", "Adams", "Li2018,", ""})
        EXPECT_FALSE(is_autoscheduler_baseline(name)) << name;
}

// Modifiers: a kernel covers a call whose modifiers are among its own, with the same causal
// rule, and among the kernels that cover a call the one with the fewest unused modifiers wins.
Kernel WithSpec(const char *spec) {
    Kernel k;
    EXPECT_TRUE(Variant::parse(spec, &k.variant).ok()) << spec;
    k.name = spec;
    return k;
}

TEST(DispatchRules, AKernelWithMoreModifiersCoversACallWithFewer) {
    const Kernel all = WithSpec(
        "op:attention,mask:causal+window+prefix+segments,score:softcap+alibi+bias,"
        "schedule:cpu_fused");
    KernelRequest call;
    call.mask.causal = true;
    call.mask.window = true;
    call.score.alibi = true;
    EXPECT_TRUE(fits(all.variant, call));
    call.mask.causal = false;  // Causal is never neutralized: another kernel's job.
    EXPECT_FALSE(fits(all.variant, call));
    const Kernel window = WithSpec("op:attention,mask:window,schedule:cpu_fused");
    call.score.alibi = false;
    EXPECT_TRUE(fits(window.variant, call));
    call.mask.segments = true;
    EXPECT_FALSE(fits(window.variant, call));
}

TEST(DispatchRules, TheKernelWithFewestUnusedModifiersTakesTheCall) {
    const std::vector<Kernel> entries = {
        WithSpec("op:attention,mask:window+segments,score:softcap+alibi+bias,schedule:cpu_fused"),
        WithSpec("op:attention,mask:window,d_k:64,d_v:64,schedule:cpu_fused"),
        WithSpec("op:attention,mask:window,schedule:cpu_fused")};
    KernelRequest request;
    request.heads = request.kv_heads = 8;
    request.d_k = request.d_v = 64;
    request.queries = 256;
    request.keys = 1024;
    request.mask.window = true;
    const Kernel *chosen = nullptr;
    auto all = [](const Kernel &) { return true; };
    ASSERT_TRUE(choose_kernel(request, "cpu_fused", entries, all, &chosen).ok());
    EXPECT_EQ(chosen, &entries[1]);  // Exact modifiers, then the specialized head dim.
    request.score.softcap = true;
    ASSERT_TRUE(choose_kernel(request, "cpu_fused", entries, all, &chosen).ok());
    EXPECT_EQ(chosen, &entries[0]);
    request.mask.causal = true;
    EXPECT_EQ(choose_kernel(request, "cpu_fused", entries, all, &chosen).code(),
              StatusCode::kNotFound);
}

TEST(DispatchRules, AKernelWithUserModifiersTakesOnlyTheCallsThatNameIt) {
    KernelRequest call;
    call.mask.causal = true;
    for (const char *spec : {"op:attention,mask:causal,score_mod:t5_bias,schedule:cpu_fused",
                             "op:attention,mask:causal,mask_mod:dilated,schedule:cpu_fused"}) {
        const Kernel user = WithSpec(spec);
        EXPECT_FALSE(fits(user.variant, call)) << spec;
        const Kernel *chosen = nullptr;
        EXPECT_EQ(choose_kernel(
                      call, "cpu_fused", {user}, [](const Kernel &) { return true; }, &chosen)
                      .code(),
                  StatusCode::kNotFound)
            << spec;
    }
}

}  // namespace
}  // namespace attngen::detail
