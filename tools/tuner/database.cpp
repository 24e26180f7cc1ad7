#include "database.h"

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "cpu_identity.h"

namespace attngen::tuner {

using nlohmann::json;

namespace {

constexpr const char *kFormat = "attngen-tuning/2";

}  // namespace

std::string now_utc() {
    const std::time_t t = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return text;
}

// The processor with its family, model and vector width (cpu_identity.h), and the thread count.
std::string machine_description() {
    return cpu_identity() + ", " + std::to_string(std::thread::hardware_concurrency()) + " threads";
}

bool TuningDatabase::save(const std::string &path, std::string *error) const {
    json j;
    j["format"] = kFormat;
    j["target"] = target;
    j["machine"] = machine;
    j["created"] = created;
    j["command"] = command;
    j["budget_seconds"] = budget_seconds;
    j["elapsed_seconds"] = elapsed_seconds;
    j["buckets"] = json::array();
    for (const auto &b : buckets) {
        json e;
        // The winner's kernel: the bucket with the winning schedule and parameters, the variant
        // the build compiles (cmake/AttngenOwnKernels.cmake) where it improves.
        e["variant"] = b.winner.in(b.bucket).to_string();
        e["improves"] = b.improves;
        e["default"] = b.default_kernel.to_string();
        e["candidates"] = b.candidates;
        e["failed"] = b.failed;
        e["seconds"] = b.seconds;
        e["shapes"] = json::array();
        for (const auto &s : b.shapes) {
            e["shapes"].push_back({{"shape", s.shape},
                                   {"time_ms", s.time_ms},
                                   {"default_ms", s.default_ms},
                                   {"baselines_ms", s.baselines_ms}});
        }
        j["buckets"].push_back(e);
    }
    const std::string temp = path + ".tmp";
    {
        std::ofstream out(temp);
        out << j.dump(2) << "\n";
        if (!out) {
            *error = path + ": cannot write";
            return false;
        }
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
        *error = path + ": cannot write";
        return false;
    }
    return true;
}

bool TuningDatabase::load(const std::string &path, TuningDatabase *db, std::string *error) {
    std::ifstream in(path);
    if (!in) {
        *error = path + ": cannot open";
        return false;
    }
    try {
        const json j = json::parse(in);
        if (j.value("format", "") != kFormat) {
            *error = path + ": not an attngen tuning database (format " + kFormat + ")";
            return false;
        }
        TuningDatabase d;
        d.target = j.at("target");
        d.machine = j.value("machine", "");
        d.created = j.value("created", "");
        d.command = j.value("command", "");
        d.budget_seconds = j.value("budget_seconds", 0.0);
        d.elapsed_seconds = j.value("elapsed_seconds", 0.0);
        for (const auto &e : j.at("buckets")) {
            BucketResult b;
            const std::string spec = e.at("variant");
            const Status parsed = Variant::parse(spec, &b.bucket);
            if (!parsed.ok()) throw std::runtime_error(parsed.message());
            b.winner = Candidate{b.bucket.schedule, b.bucket.tuning};
            b.bucket.schedule.clear();
            b.bucket.tuning.clear();
            b.bucket.tuned_for.clear();
            b.improves = e.at("improves");
            if (e.contains("default")) {
                const Status read = Variant::parse(e.at("default"), &b.default_kernel);
                if (!read.ok()) throw std::runtime_error(read.message());
            }
            b.candidates = e.value("candidates", 0);
            b.failed = e.value("failed", 0);
            b.seconds = e.value("seconds", 0.0);
            for (const auto &s : e.at("shapes")) {
                ShapeResult r;
                r.shape = s.at("shape");
                r.time_ms = s.at("time_ms");
                r.default_ms = s.at("default_ms");
                r.baselines_ms = s.value("baselines_ms", std::map<std::string, double>{});
                b.shapes.push_back(r);
            }
            d.buckets.push_back(b);
        }
        *db = d;
        return true;
    } catch (const std::exception &e) {
        *error = path + ": malformed tuning database: " + e.what();
        return false;
    }
}

}  // namespace attngen::tuner
