#include <memory>

#include "cpu_basic.h"
#include "reference.h"
#include "schedule.h"

namespace attngen::schedules {

namespace {

const std::vector<std::unique_ptr<Schedule>> &all_schedules() {
    static const std::vector<std::unique_ptr<Schedule>> schedules = [] {
        std::vector<std::unique_ptr<Schedule>> s;
        s.push_back(std::make_unique<Reference>());
        s.push_back(std::make_unique<CpuBasic>());
        return s;
    }();
    return schedules;
}

}  // namespace

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
        // Halide's user_error macro is undefined at the end of Halide.h; this is its expansion.
        Halide::Internal::ErrorReport(__FILE__, __LINE__, nullptr,
                                      Halide::Internal::ErrorReport::User)
            << "unknown schedule '" << name << "' (known: " << known << ")\n";
    }
    return *s;
}

}  // namespace attngen::schedules
