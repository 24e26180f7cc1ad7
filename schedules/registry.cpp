#include <algorithm>
#include <cstdlib>
#include <memory>

#include "cpu_basic.h"
#include "cpu_fused.h"
#include "cpu_tiled.h"
#include "cuda_fused.h"
#include "cuda_tiled.h"
#include "reference_schedule.h"
#include "schedule.h"

namespace attngen::schedules {

namespace {

const std::vector<std::unique_ptr<Schedule>> &all_schedules() {
    static const std::vector<std::unique_ptr<Schedule>> schedules = [] {
        std::vector<std::unique_ptr<Schedule>> s;
        s.push_back(std::make_unique<Reference>());
        s.push_back(std::make_unique<CpuBasic>());
        s.push_back(std::make_unique<CpuTiled>());
        s.push_back(std::make_unique<CpuFused>());
        s.push_back(std::make_unique<CudaTiled>());
        s.push_back(std::make_unique<CudaFused>());
        return s;
    }();
    return schedules;
}

}  // namespace

// Reports a mistake in a generator's parameters the way Halide reports its own: the generator
// prints the message and fails.
void schedule_error(const std::string &message) {
    // Halide's user_error macro is undefined at the end of Halide.h; this is its expansion.
    Halide::Internal::ErrorReport(__FILE__, __LINE__, nullptr, Halide::Internal::ErrorReport::User)
        << message << "\n";
    std::abort();  // ErrorReport throws or aborts in its destructor; this is never reached.
}

const Schedule *find_schedule(const std::string &name) {
    for (const auto &s : all_schedules()) {
        if (name == s->name()) return s.get();
    }
    return nullptr;
}

std::vector<std::string> schedule_names() {
    std::vector<std::string> names;
    for (const auto &s : all_schedules()) names.emplace_back(s->name());
    return names;
}

const Schedule &schedule_or_error(const std::string &name) {
    const Schedule *s = find_schedule(name);
    if (s == nullptr) {
        std::string known;
        for (const auto &n : schedule_names()) known += (known.empty() ? "" : ", ") + n;
        schedule_error("unknown schedule '" + name + "' (known: " + known + ")");
    }
    return *s;
}

void Schedule::online_attention(algorithm::OnlineAttentionFuncs &, bool, const Context &) const {
    schedule_error(std::string("schedule '") + name() +
                   "' has no schedule for the online formulation");
}

int Context::param(const std::string &name, int fallback) const {
    auto it = params.find(name);
    return it == params.end() ? fallback : it->second;
}

void Context::check_params(const std::vector<std::string> &known) const {
    for (const auto &[name, value] : params) {
        if (std::find(known.begin(), known.end(), name) == known.end()) {
            std::string list;
            for (const auto &k : known) list += (list.empty() ? "" : ", ") + k;
            schedule_error("unknown schedule parameter '" + name +
                           "' (this schedule reads: " + list + ")");
        }
    }
}

std::string format_params(const std::map<std::string, int> &params) {
    std::string text;
    for (const auto &[name, value] : params) {
        text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
    }
    return text;
}

std::map<std::string, int> SearchSpace::defaults() const {
    std::map<std::string, int> values;
    for (const auto &p : params) values[p.name] = p.fallback;
    return values;
}

std::map<std::string, int> SearchSpace::canonical(std::map<std::string, int> values) const {
    if (irrelevant_to_defaults) irrelevant_to_defaults(values);
    return values;
}

std::map<std::string, int> SearchSpace::with_defaults(
    const std::map<std::string, int> &values) const {
    std::map<std::string, int> full = defaults();
    for (const auto &[name, value] : values) full[name] = value;
    return full;
}

std::string SearchSpace::check(const std::map<std::string, int> &values, const Context &ctx) const {
    const std::map<std::string, int> known = defaults();
    for (const auto &[name, value] : values) {
        if (known.count(name) == 0) return "unknown parameter '" + name + "'";
    }
    return constraint ? constraint(with_defaults(values), ctx) : "";
}

int vector_registers(const Halide::Target &target) {
    if (target.arch == Halide::Target::ARM) return 32;
    return target.has_feature(Halide::Target::AVX512) ? 32 : 16;
}

bool tuning_applies(const Halide::Target &target, const std::string &tuning_target) {
    if (tuning_target.empty()) return true;
    if (!Halide::Target::validate_target_string(tuning_target)) {
        schedule_error("tuning_target '" + tuning_target + "' is not a Halide target");
    }
    const auto code_features = [](Halide::Target t) {
        for (auto f : {Halide::Target::NoRuntime, Halide::Target::UserContext, Halide::Target::JIT})
            t = t.without_feature(f);
        return t;
    };
    return code_features(target) == code_features(Halide::Target(tuning_target));
}

std::map<std::string, int> parse_params(const std::string &text) {
    std::map<std::string, int> params;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(start, end - start);
        // name=value, or name:value (the form generator arguments carry, as they are name=value
        // themselves).
        std::size_t eq = item.find('=');
        if (eq == std::string::npos) eq = item.find(':');
        const char *digits = eq == std::string::npos ? nullptr : item.c_str() + eq + 1;
        char *rest = nullptr;
        const long value = digits == nullptr ? 0 : std::strtol(digits, &rest, 10);
        if (digits == nullptr || eq == 0 || rest == digits || *rest != '\0') {
            schedule_error("malformed schedule parameter '" + item + "' in '" + text +
                           "' (expected name=integer or name:integer)");
        }
        params[item.substr(0, eq)] = static_cast<int>(value);
        start = end + 1;
    }
    return params;
}

}  // namespace attngen::schedules
