#include "measurement_cache.h"

#include <nlohmann/json.hpp>

namespace attngen::tuner {

Cache::Cache(const std::string &path, bool resume) : path_(path) {
    if (path.empty()) return;
    if (resume) {
        std::ifstream in(path);
        std::string line;
        while (std::getline(in, line)) {
            try {
                const auto j = nlohmann::json::parse(line);
                Measurement m;
                m.outcome = static_cast<Measurement::Outcome>(j.at("outcome").get<int>());
                m.median_ms = j.at("median_ms");
                m.compile_s = j.at("compile_s");
                m.runs = j.at("runs");
                m.detail = j.at("detail");
                entries_[j.at("key").get<std::string>()] = m;
            } catch (const std::exception &) {
                // A line cut short by an interruption: measure that candidate again.
            }
        }
    }
    out_.open(path, resume ? std::ios::app : std::ios::trunc);
}

const Measurement *Cache::find(const std::string &key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
}

void Cache::add(const std::string &key, const Measurement &m) {
    entries_[key] = m;
    if (!out_.is_open()) return;
    nlohmann::json j{{"key", key},
                     {"outcome", static_cast<int>(m.outcome)},
                     {"median_ms", m.median_ms},
                     {"compile_s", m.compile_s},
                     {"runs", m.runs},
                     {"detail", m.detail}};
    out_ << j.dump() << "\n";
    out_.flush();
}

}  // namespace attngen::tuner
