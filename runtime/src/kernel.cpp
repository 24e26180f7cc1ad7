#include "attngen/kernel.h"

#include <sstream>

namespace attngen {

bool Kernel::cuda() const {
    std::stringstream list(targets);
    for (std::string target; std::getline(list, target, ',');) {
        std::stringstream parts(target);
        for (std::string part; std::getline(parts, part, '-');) {
            if (part == "cuda") return true;
        }
    }
    return false;
}

Kernel Kernel::compiled(const char *name, const char *variant_spec, const char *targets,
                        KernelArgvFn argv, KernelMetadataFn metadata) {
    Kernel k;
    k.name = name;
    k.targets = targets;
    if (Variant::parse(variant_spec, &k.variant).ok()) {
        k.argv = argv;
        k.metadata = metadata;
    }
    return k;
}

}  // namespace attngen
