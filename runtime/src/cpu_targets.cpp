#include "cpu_targets.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "HalideRuntime.h"
#include "cuda_device.h"

namespace attngen::detail {

namespace {

constexpr int kFeatureWords = (halide_target_feature_end + 63) / 64;

// Feature names of Halide target strings that say what a CPU must support. Others
// (user_context, no_runtime, ...) describe the code, not the machine.
struct NamedFeature {
    const char *name;
    halide_target_feature_t feature;
};
constexpr NamedFeature kCpuFeatures[] = {
    {"sse41", halide_target_feature_sse41},
    {"avx", halide_target_feature_avx},
    {"avx2", halide_target_feature_avx2},
    {"fma", halide_target_feature_fma},
    {"fma4", halide_target_feature_fma4},
    {"f16c", halide_target_feature_f16c},
    {"avx512", halide_target_feature_avx512},
    {"avx512_knl", halide_target_feature_avx512_knl},
    {"avx512_skylake", halide_target_feature_avx512_skylake},
    {"avx512_cannonlake", halide_target_feature_avx512_cannonlake},
    {"avx512_sapphirerapids", halide_target_feature_avx512_sapphirerapids},
    {"arm_dot_prod", halide_target_feature_arm_dot_prod},
    {"arm_fp16", halide_target_feature_arm_fp16},
    {"armv81a", halide_target_feature_armv81a},
    {"sve", halide_target_feature_sve},
    {"sve2", halide_target_feature_sve2},
    // Not a CPU feature, but a machine one: an entry with it needs a CUDA device.
    {"cuda", halide_target_feature_cuda},
};

// Features forbidden by each value of ATTNGEN_MAX_CPU_ISA: avx512 is the AVX-512 of Skylake
// servers, without the bfloat16 instructions of the avx512_sapphirerapids entries.
const std::vector<halide_target_feature_t> kAboveAvx512 = {
    halide_target_feature_avx512_sapphirerapids};
const std::vector<halide_target_feature_t> kAboveAvx2 = {
    halide_target_feature_avx512, halide_target_feature_avx512_knl,
    halide_target_feature_avx512_skylake, halide_target_feature_avx512_cannonlake,
    halide_target_feature_avx512_sapphirerapids};

struct Limit {
    bool valid = true;
    std::string value;  // As given; empty when unset.
    std::vector<halide_target_feature_t> forbidden;
};

Limit read_limit() {
    Limit limit;
    const char *env = std::getenv("ATTNGEN_MAX_CPU_ISA");
    if (env == nullptr || *env == '\0') return limit;
    limit.value = env;
    if (limit.value == "avx512") {
        limit.forbidden = kAboveAvx512;
    } else if (limit.value == "avx2") {
        limit.forbidden = kAboveAvx2;
    } else if (limit.value == "sse41") {
        limit.forbidden = kAboveAvx2;
        for (auto f :
             {halide_target_feature_avx, halide_target_feature_avx2, halide_target_feature_fma,
              halide_target_feature_fma4, halide_target_feature_f16c}) {
            limit.forbidden.push_back(f);
        }
    } else if (limit.value == "armv8") {
        limit.forbidden = {halide_target_feature_arm_dot_prod, halide_target_feature_arm_fp16,
                           halide_target_feature_armv81a, halide_target_feature_sve,
                           halide_target_feature_sve2};
    } else {
        limit.valid = false;
    }
    return limit;
}

const Limit &limit() {
    static const Limit value = read_limit();
    return value;
}

bool has(int count, const uint64_t *features, halide_target_feature_t f) {
    const int word = f / 64;
    return word < count && (features[word] >> (f % 64)) & 1;
}

// Whether this CPU has what the avx512_sapphirerapids entries use: the bfloat16 instructions
// (AVX512-BF16: vdpbf16ps) and VNNI, besides the AVX-512 that Halide checks. Tested here too,
// from CPUID, so that an entry for it never runs where Halide's own check of the feature is
// missing or partial. Halide 14 compiles those entries for LLVM's Sapphire Rapids CPU model,
// which may also use AVX512-FP16 and AMX, which AMD's cores lack; the test
// vdpbf16ps_in_bf16_kernels (tests/check_bf16_instructions.sh) keeps them out of the entries.
bool cpu_has_avx512_bf16() {
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    const bool vnni = (ecx >> 11) & 1;
    if (eax < 1 || !__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
    const bool bf16 = (eax >> 5) & 1;
    return vnni && bf16;
#else
    return false;
#endif
}

bool cpu_is_amd() {
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
    char vendor[13] = {};
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    return std::strcmp(vendor, "AuthenticAMD") == 0;
#else
    return false;
#endif
}

// Where the AVX512-BF16 entries (the bfloat16 kernels' paired products, vdpbf16ps) run:
// ATTNGEN_BF16_DOT=auto (the default) where vdpbf16ps is faster than the float32 FMAs it
// replaces, on AMD's cores: Zen 4 runs it at twice their FLOP rate (docs/design.md, section 4),
// and on Zen 5 the bfloat16 kernel with Q K^T and P V paired took 0.63-0.65x the time of the
// float32 kernel (Q K^T alone 0.81x), where its AVX-512 entry took 1.01x (B1 H8 N2048 d64, two
// threads, 2026-12-07).
// Intel's cores with AVX512-BF16 run it at half their rate (Xeon family 6 model 207: 0.73 ns per
// 512-bit vdpbf16ps against 0.18 per vfmadd231ps, 12 independent accumulators each), and the
// paired kernels took 1.1-1.3x the time of their AVX-512 entries there; Intel's bfloat16 speed is
// in AMX, which no entry uses yet. on: wherever the CPU has the instructions (tests run the
// paired code so on any such CPU); off: never.
struct Bf16Policy {
    bool valid = true;
    std::string value;  // As given; empty when unset.
    bool run = false;   // Whether the entries may run on this CPU.
};

Bf16Policy read_bf16_policy() {
    Bf16Policy policy;
    const char *env = std::getenv("ATTNGEN_BF16_DOT");
    policy.value = env == nullptr ? "" : env;
    const bool capable = cpu_has_avx512_bf16();
    if (policy.value.empty() || policy.value == "auto") {
        policy.run = capable && cpu_is_amd();
    } else if (policy.value == "on") {
        policy.run = capable;
    } else if (policy.value == "off") {
        policy.run = false;
    } else {
        policy.valid = false;
    }
    return policy;
}

const Bf16Policy &bf16_policy() {
    static const Bf16Policy value = read_bf16_policy();
    return value;
}

// Halide's multitarget kernels ask this which of their entries may run, most capable first, and
// cache the first yes. Halide's default answer checks CPU features only, and would pick a CUDA
// entry on a machine without a GPU; a CUDA entry is therefore usable only when the driver
// probe finds a device.
int can_use_target_features(int count, const uint64_t *features) {
    for (auto f : limit().forbidden) {
        if (has(count, features, f)) return 0;
    }
    if (has(count, features, halide_target_feature_cuda) && !cuda_device_status().ok()) return 0;
    if (has(count, features, halide_target_feature_avx512_sapphirerapids) && !bf16_policy().run) {
        return 0;
    }
    return halide_default_can_use_target_features(count, features);
}

}  // namespace

void install_cpu_target_check() {
    static const bool installed = [] {
        halide_set_custom_can_use_target_features(&can_use_target_features);
        return true;
    }();
    (void)installed;
}

Status cpu_isa_limit_status() {
    if (!limit().valid) {
        return Status::InvalidArgument("ATTNGEN_MAX_CPU_ISA is '" + limit().value +
                                       "'; use avx512, avx2, sse41 or armv8, or leave it unset");
    }
    if (!bf16_policy().valid) {
        return Status::InvalidArgument("ATTNGEN_BF16_DOT is '" + bf16_policy().value +
                                       "'; use auto, on or off, or leave it unset");
    }
    return Status::Ok();
}

std::string selected_target(const std::string &targets) {
    std::stringstream list(targets);
    std::string target;
    while (std::getline(list, target, ',')) {
        if (target == "host") return target;
        uint64_t features[kFeatureWords] = {};
        std::stringstream parts(target);
        std::string part;
        int index = 0;
        while (std::getline(parts, part, '-')) {
            // The first three parts are architecture, bits and operating system.
            if (index++ < 3) continue;
            for (const auto &named : kCpuFeatures) {
                if (part == named.name)
                    features[named.feature / 64] |= uint64_t(1) << (named.feature % 64);
            }
        }
        if (can_use_target_features(kFeatureWords, features)) return target;
    }
    return "";
}

// Installed while the program starts, before any kernel can make its cached choice.
static const bool kInstalledAtStartup = (install_cpu_target_check(), true);

}  // namespace attngen::detail
