#include "exclusions.h"

#include <algorithm>

namespace attngen::bench {

const std::vector<Exclusion> &exclusions() {
    // Times of one call measured with attention_bench on this machine (1 thread).
    static const std::vector<Exclusion> list = {
        {"reference", {"c", "n4096"}, "one call takes 24 s on (c) and 12 s at N = 4096"},
        {"cpu_basic", {"c", "n4096"}, "one call takes 5 s on (c) and 2.5 s at N = 4096"},
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
