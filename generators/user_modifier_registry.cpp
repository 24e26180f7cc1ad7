#include "user_modifier_registry.h"

#include <map>
#include <sstream>

#include "schedule.h"

namespace attngen::generators {

namespace {

template <typename Function>
std::map<std::string, Function> &registry() {
    static std::map<std::string, Function> functions;
    return functions;
}

template <typename Function>
void add(const char *kind, const char *name, Function function) {
    auto &functions = registry<Function>();
    const auto [it, added] = functions.emplace(name, function);
    if (!added && it->second != function) {
        schedules::schedule_error(std::string("two ") + kind + " modifiers are named '" + name +
                                  "'");
    }
}

template <typename Function>
Function find(const char *kind, const std::string &name) {
    const auto &functions = registry<Function>();
    const auto found = functions.find(name);
    if (found == functions.end()) {
        schedules::schedule_error(std::string("no ") + kind + " modifier named '" + name +
                                  "' is loaded: attngen_add_kernel's " +
                                  (kind[0] == 's' ? "SCORE_MOD" : "MASK_MOD") +
                                  " file.cpp:" + name + " compiles it into the kernel");
    }
    return found->second;
}

}  // namespace

ScoreModifierFunction registered_score_modifier(const std::string &name) {
    return find<ScoreModifierFunction>("score", name);
}

MaskModifierFunction registered_mask_modifier(const std::string &name) {
    return find<MaskModifierFunction>("mask", name);
}

std::vector<ExtraInput> parse_extra_inputs(const std::string &spec) {
    std::vector<ExtraInput> inputs;
    std::istringstream items(spec);
    for (std::string item; std::getline(items, item, '+');) {
        const std::size_t a = item.find(':'), b = item.rfind(':');
        const std::string type = a == b ? "" : item.substr(a + 1, b - a - 1);
        const std::string rank = a == b ? "" : item.substr(b + 1);
        ExtraInput in;
        in.name = item.substr(0, a);
        in.type = type == "f32" ? Halide::Float(32) : Halide::Int(32);
        in.rank = rank.size() == 1 && rank[0] >= '1' && rank[0] <= '4' ? rank[0] - '0' : 0;
        if (a == b || in.name.empty() || (type != "f32" && type != "i32") || in.rank == 0) {
            schedules::schedule_error("input '" + item +
                                      "' is not name:type:rank with type f32 or i32 and rank 1 "
                                      "to 4");
        }
        for (const ExtraInput &seen : inputs) {
            if (seen.name == in.name) schedules::schedule_error("input '" + in.name + "' twice");
        }
        inputs.push_back(in);
    }
    return inputs;
}

}  // namespace attngen::generators

extern "C" void attngen_register_score_modifier(const char *name,
                                                attngen::ScoreModifierFunction function) {
    attngen::generators::add("score", name, function);
}

extern "C" void attngen_register_mask_modifier(const char *name,
                                               attngen::MaskModifierFunction function) {
    attngen::generators::add("mask", name, function);
}
