#include "cpu_identity.h"

#include <fstream>
#include <map>
#include <sstream>

namespace attngen {

namespace {

// The fields of the first processor in /proc/cpuinfo (x86 names its fields per processor; an
// ARM kernel lists some of them once, after the processors, and those are read too).
std::map<std::string, std::string> first_processor_fields(std::istream &in) {
    std::map<std::string, std::string> fields;
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        key.erase(key.find_last_not_of(" \t") + 1);
        std::string value = colon + 1 < line.size() ? line.substr(colon + 1) : "";
        value.erase(0, value.find_first_not_of(" \t"));
        fields.emplace(key, value);  // The first occurrence wins.
    }
    return fields;
}

bool has_flag(const std::string &flags, const std::string &flag) {
    std::istringstream words(flags);
    std::string word;
    while (words >> word) {
        if (word == flag) return true;
    }
    return false;
}

}  // namespace

std::string cpu_identity(std::istream &cpuinfo) {
    const auto fields = first_processor_fields(cpuinfo);
    auto field = [&](const char *name) {
        const auto it = fields.find(name);
        return it == fields.end() ? std::string() : it->second;
    };
    std::string parts;
    auto add = [&](const std::string &part) {
        if (!part.empty()) parts += (parts.empty() ? "" : ", ") + part;
    };
    add(field("model name"));
    if (!field("cpu family").empty() && !field("model").empty()) {
        add("family " + field("cpu family") + " model " + field("model"));
    } else if (!field("CPU part").empty()) {
        add("implementer " + field("CPU implementer") + " part " + field("CPU part"));
    }
    const std::string flags = field("flags").empty() ? field("Features") : field("flags");
    if (has_flag(flags, "avx512f")) {
        add("AVX-512");
    } else if (has_flag(flags, "avx2")) {
        add("AVX2");
    } else if (has_flag(flags, "sse4_1")) {
        add("SSE4.1");
    } else if (has_flag(flags, "asimd")) {
        add("NEON");
    }
    return parts.empty() ? "unknown" : parts;
}

std::string cpu_identity() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    return cpu_identity(cpuinfo);
}

}  // namespace attngen
