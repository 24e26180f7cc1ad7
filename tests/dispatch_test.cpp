// Which compiled target the kernels run on this CPU, under each ATTNGEN_MAX_CPU_ISA limit.
// ctest runs this binary once per limit (see CMakeLists.txt). It is a binary of its own
// because Halide's multitarget wrappers remember their choice from a kernel's first call: the
// recorder below must see that first call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "HalideRuntime.h"
#include "attngen/attngen.h"

namespace attngen::test {
namespace {

// Every feature query a multitarget wrapper makes, with the answer.
struct Query {
    std::vector<uint64_t> features;
    bool accepted;
};
std::mutex queries_mutex;
std::vector<Query> queries;
halide_can_use_target_features_t runtime_check = nullptr;

int Recorder(int count, const uint64_t *features) {
    const int accepted = runtime_check(count, features);
    std::lock_guard<std::mutex> lock(queries_mutex);
    queries.push_back({std::vector<uint64_t>(features, features + count), accepted != 0});
    return accepted;
}

// The ISA features among a query's bits, and those that a target string names, as one
// comparable set; the wrappers' queries also carry bits such as user_context.
constexpr std::pair<const char *, halide_target_feature_t> kIsaFeatures[] = {
    {"sse41", halide_target_feature_sse41},
    {"avx", halide_target_feature_avx},
    {"avx2", halide_target_feature_avx2},
    {"fma", halide_target_feature_fma},
    {"f16c", halide_target_feature_f16c},
    {"avx512", halide_target_feature_avx512},
    {"avx512_skylake", halide_target_feature_avx512_skylake},
    {"avx512_cannonlake", halide_target_feature_avx512_cannonlake},
    {"avx512_sapphirerapids", halide_target_feature_avx512_sapphirerapids},
    {"arm_dot_prod", halide_target_feature_arm_dot_prod},
    {"arm_fp16", halide_target_feature_arm_fp16},
};

std::vector<bool> IsaBits(const std::vector<uint64_t> &features) {
    std::vector<bool> bits;
    for (const auto &[name, f] : kIsaFeatures) {
        bits.push_back(f / 64 < static_cast<int>(features.size()) &&
                       (features[f / 64] >> (f % 64)) & 1);
    }
    return bits;
}

std::vector<bool> IsaBits(const std::string &target) {
    std::vector<std::string> parts;
    std::stringstream text(target);
    std::string part;
    while (std::getline(text, part, '-')) parts.push_back(part);
    std::vector<bool> bits;
    for (const auto &[name, f] : kIsaFeatures) {
        bits.push_back(std::find(parts.begin() + 3, parts.end(), name) != parts.end());
    }
    return bits;
}

std::string Limit() {
    const char *env = std::getenv("ATTNGEN_MAX_CPU_ISA");
    return env == nullptr ? "" : env;
}

// ATTNGEN_BF16_DOT: where the entries for AVX512-BF16 run (runtime/src/cpu_targets.cpp).
std::string Bf16Dot() {
    const char *env = std::getenv("ATTNGEN_BF16_DOT");
    return env == nullptr ? "" : env;
}

bool Bf16DotIsValid() {
    const std::string b = Bf16Dot();
    return b.empty() || b == "auto" || b == "on" || b == "off";
}

bool LimitIsValid() {
    const std::string l = Limit();
    return Bf16DotIsValid() &&
           (l.empty() || l == "avx512" || l == "avx2" || l == "sse41" || l == "armv8");
}

// Whether this CPU has every feature a target string names, checked independently of Halide:
// with GCC's CPU checks on x86, with the kernel's hardware capabilities on ARM64.
bool CpuSupportsTarget(const std::string &target) {
    std::stringstream parts(target);
    std::string part;
    for (int index = 0; std::getline(parts, part, '-'); index++) {
        if (index < 3) continue;
        bool ok = true;
#if defined(__x86_64__)
        if (part == "sse41") ok = __builtin_cpu_supports("sse4.1");
        if (part == "avx") ok = __builtin_cpu_supports("avx");
        if (part == "avx2") ok = __builtin_cpu_supports("avx2");
        if (part == "fma") ok = __builtin_cpu_supports("fma");
        if (part == "avx512" || part == "avx512_skylake") {
            ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq");
        }
        if (part == "avx512_cannonlake") {
            ok = __builtin_cpu_supports("avx512ifma") && __builtin_cpu_supports("avx512vbmi");
        }
        if (part == "avx512_sapphirerapids") {
            ok = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vnni");
        }
#elif defined(__aarch64__)
        const unsigned long hwcap = getauxval(AT_HWCAP);
        if (part == "arm_dot_prod") ok = hwcap & HWCAP_ASIMDDP;
        if (part == "arm_fp16") ok = (hwcap & HWCAP_FPHP) && (hwcap & HWCAP_ASIMDHP);
#endif
        if (!ok) return false;
    }
    return true;
}

bool AllowedByLimit(const std::string &target) {
    if (target.find("avx512_sapphirerapids") != std::string::npos) {
        // By default on AMD's cores only, where vdpbf16ps outruns the float32 FMAs.
        const std::string dot = Bf16Dot();
        if (dot == "off") return false;
#if defined(__x86_64__)
        if (dot != "on" && !__builtin_cpu_is("amd")) return false;
#endif
    }
    const std::string limit = Limit();
    if (limit == "avx512") return target.find("avx512_sapphirerapids") == std::string::npos;
    if (limit == "avx2") return target.find("avx512") == std::string::npos;
    if (limit == "sse41") {
        return target.find("avx") == std::string::npos && target.find("fma") == std::string::npos;
    }
    if (limit == "armv8") return target.find("arm_") == std::string::npos;
    return true;
}

// The first target of a kernel's list that this CPU supports and the limit allows.
std::string ExpectedTarget(const std::string &targets) {
    std::stringstream list(targets);
    std::string target;
    while (std::getline(list, target, ',')) {
        if (target == "host" || (CpuSupportsTarget(target) && AllowedByLimit(target))) {
            return target;
        }
    }
    return "";
}

// A kernel's ','-joined target list.
std::vector<std::string> Targets(const std::string &list) {
    std::vector<std::string> targets;
    std::stringstream all(list);
    std::string target;
    while (std::getline(all, target, ',')) targets.push_back(target);
    return targets;
}

// The target that a multitarget wrapper ran, from the queries recorded (queries_mutex held): it
// asks about every target but the last, the fallback, and runs the first one in list order whose
// features were accepted.
std::string WrapperChoice(const std::vector<std::string> &targets) {
    std::size_t chosen = targets.size() - 1;
    for (const auto &query : queries) {
        for (std::size_t t = 0; t + 1 < targets.size(); t++) {
            if (query.accepted && IsaBits(query.features) == IsaBits(targets[t]) && t < chosen) {
                chosen = t;
            }
        }
    }
    return targets[chosen];
}

TEST(Dispatch, KernelsRunTheMostCapableTargetThatTheCpuAndTheLimitAllow) {
    if (!LimitIsValid()) GTEST_SKIP() << "ATTNGEN_MAX_CPU_ISA is invalid; the next test covers it";
    runtime_check = halide_set_custom_can_use_target_features(&Recorder);
    // One small call per schedule: each wrapper makes its choice now.
    std::vector<float> q(2 * 3 * 4, 0.5f), out(2 * 3 * 4);
    for (const auto &schedule : available_schedules()) {
        // Planned for larger calls than this one (see is_autoscheduler_baseline).
        if (is_autoscheduler_baseline(schedule)) continue;
        AttentionArgs args;
        args.q = args.k = args.v = TensorView::f32(q.data(), {1, 2, 3, 4});
        args.out = TensorView::f32(out.data(), {1, 2, 3, 4});
        args.schedule = schedule;
        Status s = attention(args);
        ASSERT_TRUE(s.ok()) << schedule << ": " << s.to_string();
    }
    halide_set_custom_can_use_target_features(runtime_check);

    const Kernel kernel = list_kernels().front();
    const std::string selected = kernel.selected_target;
    ASSERT_FALSE(selected.empty()) << "no compiled target runs on this CPU";
    EXPECT_TRUE(AllowedByLimit(selected)) << selected << " under ATTNGEN_MAX_CPU_ISA=" << Limit();

    // The runtime's answer is the first target of the list that this CPU supports (checked
    // here with GCC's own CPU detection) and the limit allows.
    EXPECT_EQ(selected, ExpectedTarget(kernel.targets)) << "compiled for " << kernel.targets;

    // And the wrappers made the same choice. A wrapper asks about every target but the last,
    // the fallback, and runs the first one in list order whose features were accepted.
    if (kernel.targets.find(',') == std::string::npos) return;  // One target: no queries.
    std::lock_guard<std::mutex> lock(queries_mutex);
    ASSERT_FALSE(queries.empty()) << "the multitarget wrappers asked nothing";
    EXPECT_EQ(WrapperChoice(Targets(kernel.targets)), selected);
}

// A float32 call of two queries, through the dispatch.
Status TinyCall() {
    std::vector<float> q(8, 0.5f), out(8);
    AttentionArgs args;
    args.q = args.k = args.v = TensorView::f32(q.data(), {1, 1, 2, 4});
    args.out = TensorView::f32(out.data(), {1, 1, 2, 4});
    return attention(args);
}

TEST(Dispatch, AnUnknownIsaLimitIsAnError) {
    if (LimitIsValid() || !Bf16DotIsValid()) {
        GTEST_SKIP() << "runs only under an invalid ATTNGEN_MAX_CPU_ISA (see CMakeLists.txt)";
    }
    const Status s = TinyCall();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("ATTNGEN_MAX_CPU_ISA"), std::string::npos) << s.message();
}

TEST(Dispatch, AnUnknownBf16DotSettingIsAnError) {
    if (Bf16DotIsValid()) {
        GTEST_SKIP() << "runs only under an invalid ATTNGEN_BF16_DOT (see CMakeLists.txt)";
    }
    const Status s = TinyCall();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("ATTNGEN_BF16_DOT"), std::string::npos) << s.message();
}

// The bfloat16 kernels of the block path also have an entry for AVX512-BF16 (vdpbf16ps): a CPU
// runs it only if it has those instructions, the limit allows them (not under avx512) and
// ATTNGEN_BF16_DOT does (by default on AMD's cores only).
TEST(Dispatch, KernelsRunTheirBfloat16EntryOnlyWhereTheCpuHasAvx512Bf16) {
    if (!LimitIsValid()) GTEST_SKIP() << "ATTNGEN_MAX_CPU_ISA is invalid";
    const std::vector<Kernel> kernels = list_kernels();
    const auto kernel = std::find_if(kernels.begin(), kernels.end(), [](const Kernel &k) {
        return k.targets.find("avx512_sapphirerapids") != std::string::npos;
    });
    if (kernel == kernels.end()) GTEST_SKIP() << "no kernel of this build has such an entry";
    std::vector<uint16_t> q(2 * 3 * 4, 0x3f00), out(2 * 3 * 4);  // bfloat16 0.5.
    AttentionArgs args;
    args.q = args.k = args.v = TensorView::contiguous(q.data(), DType::kBFloat16, {1, 2, 3, 4});
    args.out = TensorView::contiguous(out.data(), DType::kBFloat16, {1, 2, 3, 4});
    {
        std::lock_guard<std::mutex> lock(queries_mutex);
        queries.clear();
    }
    runtime_check = halide_set_custom_can_use_target_features(&Recorder);
    const Status s = attention(args, *kernel);
    halide_set_custom_can_use_target_features(runtime_check);
    ASSERT_TRUE(s.ok()) << kernel->name << ": " << s.to_string();
    EXPECT_EQ(out[0], 0x3f00) << kernel->name;
    const std::string expected = ExpectedTarget(kernel->targets);
    EXPECT_EQ(kernel->selected_target, expected)
        << kernel->name << " compiled for " << kernel->targets;

    // The wrapper asked about its AVX512-BF16 entry (a wrapper asks about every target but the
    // last, in an order of its own), was answered as expected, and ran the first target of its
    // list whose features were accepted.
    const std::vector<std::string> targets = Targets(kernel->targets);
    std::lock_guard<std::mutex> lock(queries_mutex);
    bool asked = false;
    for (const auto &query : queries) {
        if (IsaBits(query.features) == IsaBits(targets.front())) {
            asked = true;
            EXPECT_EQ(query.accepted, expected == targets.front());
        }
    }
    EXPECT_TRUE(asked) << "the wrapper never asked about " << targets.front();
    EXPECT_EQ(WrapperChoice(targets), expected);
}

}  // namespace
}  // namespace attngen::test
