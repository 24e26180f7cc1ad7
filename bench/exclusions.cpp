#include "exclusions.h"

#include <algorithm>

namespace attngen::bench {

const std::vector<Exclusion> &exclusions() {
    // Approximate times of one call, measured with attention_bench on this machine (1 thread).
    static const std::vector<Exclusion> list = {
        {"reference",
         {"c", "c_bf16", "g", "n4096"},
         "one call takes about 24 s on (c) (in float32 or bfloat16), 37 s on (g) and 19 s at "
         "N = 4096"},
        {"cpu_basic", {"c", "n4096"}, "one call takes about 5 s on (c) and 2 s at N = 4096"},
        {"Adams2019", {"c", "n4096"}, "one call takes about 7 s on (c) and 4 s at N = 4096"},
        {"Li2018", {"c", "n4096"}, "one call takes about 9 s on (c) and 4 s at N = 4096"},
        // kernels/CMakeLists.txt: the build has no Li2018 kernel that runs one query.
        {"Li2018",
         {"e"},
         "Halide 14's Li2018 stops on a kernel planned for one query (\"Atomic predicated store "
         "is not supported\"), and its kernels planned for 8 or more queries fail on one"},
        {"Mullapudi2016", {"c", "n4096"}, "one call takes about 4 s on (c) and 2 s at N = 4096"},
        // The modifier shapes at N = 16384 (shapes.cpp): only cpu_fused's key-block path skips
        // the key blocks that a window or the documents hide; these schedules compute every
        // one of the N^2 pairs of each head, 8 times the pairs of (c). Times scaled from (c).
        {"reference",
         {"w", "p"},
         "it computes all N^2 pairs of each head, 8x those of (c): about 190 s per call"},
        {"cpu_basic",
         {"w", "p"},
         "it computes all N^2 pairs of each head, 8x those of (c): about 40 s per call"},
        {"cpu_tiled",
         {"w", "p"},
         "it computes all N^2 pairs of each head, 8x those of (c): about 8 s per call at 1 "
         "thread, without the per-key tests of the modifiers"},
        {"Adams2019", {"w", "p", "bs", "bb"}, "the autoscheduled kernels have no modifiers"},
        {"Li2018", {"w", "p", "bs", "bb"}, "the autoscheduled kernels have no modifiers"},
        {"Mullapudi2016", {"w", "p", "bs", "bb"}, "the autoscheduled kernels have no modifiers"},
    };
    return list;
}

bool is_excluded(const std::string &implementation, const std::string &shape) {
    for (const Exclusion &e : exclusions()) {
        if (e.implementation == implementation &&
            std::find(e.shapes.begin(), e.shapes.end(), shape) != e.shapes.end())
            return true;
    }
    return false;
}

}  // namespace attngen::bench
