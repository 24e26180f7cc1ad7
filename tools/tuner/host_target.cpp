#include "host_target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace attngen::tuner {

using Feature = Halide::Target::Feature;

namespace {

// The instruction-set features of Halide 14's CPU targets: a target that names one needs the
// CPU to have it. The other features (user_context, no_runtime, ...) change how code is
// generated, not which instructions it uses.
const std::vector<Feature> &instruction_sets() {
    static const std::vector<Feature> features = {Feature::SSE41,
                                                  Feature::AVX,
                                                  Feature::AVX2,
                                                  Feature::FMA,
                                                  Feature::FMA4,
                                                  Feature::F16C,
                                                  Feature::AVX512,
                                                  Feature::AVX512_KNL,
                                                  Feature::AVX512_Skylake,
                                                  Feature::AVX512_Cannonlake,
                                                  Feature::AVX512_SapphireRapids,
                                                  Feature::ARMv7s,
                                                  Feature::ARMDotProd,
                                                  Feature::ARMFp16,
                                                  Feature::ARMv81a,
                                                  Feature::SVE,
                                                  Feature::SVE2};
    return features;
}

std::string arch_and_bits(const Halide::Target &t) {
    const std::string name = t.to_string();
    // The first two fields of a target string: "x86-64", "arm-64".
    const auto first = name.find('-');
    const auto second = first == std::string::npos ? first : name.find('-', first + 1);
    return name.substr(0, second);
}

}  // namespace

std::string missing_on_host(const Halide::Target &target) {
    const Halide::Target host = Halide::get_host_target();
    if (target.arch != host.arch || target.bits != host.bits) return arch_and_bits(target);
    std::string missing;
    for (Feature f : instruction_sets()) {
        if (target.has_feature(f) && !host.has_feature(f)) {
            missing += (missing.empty() ? "" : ", ") + Halide::Target::feature_to_name(f);
        }
    }
    return missing;
}

#if defined(__x86_64__) || defined(__i386__)
// CPUID leaf 7, EDX bit 23 (read directly: clang 14's __builtin_cpu_supports does not know
// "avx512fp16", and the sanitizer build compiles with clang).
static bool host_has_avx512_fp16() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    return (edx & (1u << 23)) != 0;
}
#endif

std::string llvm_cpu_may_exceed_host(const Halide::Target &target) {
#if defined(__x86_64__) || defined(__i386__)
    if (target.arch == Halide::Target::X86 && target.has_feature(Feature::AVX512_SapphireRapids) &&
        !host_has_avx512_fp16()) {
        return "AVX512-FP16, of the Sapphire Rapids CPU that LLVM 14 compiles "
               "avx512_sapphirerapids for";
    }
#endif
    (void)target;
    return "";
}

std::string first_runnable(const std::vector<std::string> &targets) {
    for (const std::string &t : targets) {
        if (Halide::Target::validate_target_string(t) &&
            missing_on_host(Halide::Target(t)).empty()) {
            return t;
        }
    }
    return "";
}

}  // namespace attngen::tuner
