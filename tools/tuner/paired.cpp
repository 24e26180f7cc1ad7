#include "paired.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "host_target.h"
#include "measure.h"
#include "schedule.h"
#include "search.h"
#include "subprocess.h"

namespace attngen::tuner {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Halide's messages end with a newline, and some span lines; a row of the table takes one.
std::string trimmed(const std::string &message) {
    std::string line = message;
    for (char &ch : line) {
        if (ch == '\n') ch = ' ';
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
}

// The value at fraction f of the sorted values, interpolated between neighbours.
double quantile(std::vector<double> values, double f) {
    std::sort(values.begin(), values.end());
    const double at = f * static_cast<double>(values.size() - 1);
    const std::size_t below = static_cast<std::size_t>(std::floor(at));
    const std::size_t above = std::min(below + 1, values.size() - 1);
    return values[below] + (at - static_cast<double>(below)) * (values[above] - values[below]);
}

}  // namespace

bool parse_candidate(const std::string &text, Candidate *candidate, std::string *error) {
    std::string name = text, params;
    const std::size_t colon = text.find(':'), brace = text.find('{');
    if (colon != std::string::npos && (brace == std::string::npos || colon < brace)) {
        name = text.substr(0, colon);
        params = text.substr(colon + 1);
    } else if (brace != std::string::npos) {
        if (text.back() != '}') {
            *error = "candidate '" + text + "' opens '{' without closing it";
            return false;
        }
        name = text.substr(0, brace);
        params = text.substr(brace + 1, text.size() - brace - 2);
    }
    if (name.empty()) {
        *error = "candidate '" + text + "' names no schedule";
        return false;
    }
    Candidate c;
    c.schedule = name;
    const Status parsed = parse_tuning(params, &c.params);
    if (!parsed.ok()) {
        *error = "candidate '" + text + "': " + parsed.message();
        return false;
    }
    if (name == kDefaultBuild && !c.params.empty()) {
        *error = "candidate '" + text + "': the default build's kernel takes no parameters";
        return false;
    }
    *candidate = c;
    return true;
}

std::vector<PairedResult> compare_candidates(const TuneShape &shape,
                                             const std::vector<Candidate> &candidates,
                                             const std::string &target,
                                             const PairedOptions &options, std::string *error) {
    std::vector<PairedResult> results(candidates.size());
    std::vector<Variant> compiled_kernels;
    for (std::size_t c = 0; c < candidates.size(); c++) {
        results[c].candidate = candidates[c];
        // "default" is what the build compiles for the shape without a tuning.
        auto [bucket, compiled] = candidates[c].schedule == kDefaultBuild
                                      ? hand_default(shape, target)
                                      : std::make_pair(bucket_of(shape, target), candidates[c]);
        compiled_kernels.push_back(compiled.in(bucket));
    }
    // Where the target's code may hold instructions this machine lacks, each candidate first
    // runs once in a child process (before this one starts Halide's threads, which fork() would
    // not copy), so that one that dies of SIGILL fails alone instead of taking the comparison
    // down with it.
    if (const std::string lacks = llvm_cpu_may_exceed_host(Halide::Target(target));
        !lacks.empty()) {
        MeasureOptions once;
        once.runs = 1;
        once.threads = options.threads;
        constexpr double kProbeTimeoutSeconds = 600;
        for (std::size_t c = 0; c < candidates.size(); c++) {
            const Measurement m =
                measure_in_child(compiled_kernels[c], shape, target, once, kProbeTimeoutSeconds);
            if (m.outcome == Measurement::Outcome::kCrashed) {
                results[c].error =
                    "crashed (" + trimmed(m.detail) + "); this machine lacks " + lacks;
            }
        }
    }
    prepare_timing_process(options.threads);
    std::vector<std::unique_ptr<JitAttention>> kernels(candidates.size());
    TimedProblem problem(shape);
    for (std::size_t c = 0; c < candidates.size(); c++) {
        PairedResult &r = results[c];
        if (!r.error.empty()) continue;
        const Variant &kernel = compiled_kernels[c];
        try {
            kernels[c] = std::make_unique<JitAttention>(kernel, Halide::Target(target), shape);
        } catch (const std::exception &e) {
            r.error = "compile failed: " + trimmed(e.what());
            continue;
        }
        const std::string wrong = check_against_reference(*kernels[c], check_shape(kernel, shape));
        if (!wrong.empty()) {
            r.error = "wrong result: " + trimmed(wrong);
            kernels[c].reset();
            continue;
        }
        // A warm-up call (the first call starts the pool's threads and maps the scratch), then
        // a few that size the candidate's rounds.
        if (problem.run(*kernels[c]) != 0) {
            r.error = "run failed: " + trimmed(kernels[c]->last_error());
            kernels[c].reset();
            continue;
        }
        constexpr int kSizingCalls = 3;
        const auto start = Clock::now();
        for (int call = 0; call < kSizingCalls; call++) problem.run(*kernels[c]);
        const double call_seconds = std::max(seconds_since(start) / kSizingCalls, 1e-6);
        r.calls = std::max(1, static_cast<int>(std::ceil(options.round_seconds / call_seconds)));
    }
    if (!results.empty() && !results[0].ok()) {
        *error = "the first candidate, " + results[0].candidate.describe() +
                 ", which the others are compared with: " + results[0].error;
        return {};
    }

    // times[c][round]: the mean time of one call, in milliseconds.
    std::vector<std::vector<double>> times(candidates.size());
    for (int round = 0; round < options.rounds; round++) {
        // Every other round takes the candidates in reverse order, so that a load that grows or
        // fades within a round does not always fall on the same one.
        for (std::size_t turn = 0; turn < candidates.size(); turn++) {
            const std::size_t c = round % 2 == 0 ? turn : candidates.size() - 1 - turn;
            if (!kernels[c]) continue;
            const auto start = Clock::now();
            for (int call = 0; call < results[c].calls; call++) {
                if (problem.run(*kernels[c]) != 0) {
                    *error = results[c].candidate.describe() +
                             " failed while timed: " + trimmed(kernels[c]->last_error());
                    return {};
                }
            }
            times[c].push_back(seconds_since(start) * 1e3 / results[c].calls);
        }
    }
    for (std::size_t c = 0; c < candidates.size(); c++) {
        PairedResult &r = results[c];
        if (!r.ok() || times[c].empty()) continue;
        r.median_ms = quantile(times[c], 0.5);
        r.min_ms = *std::min_element(times[c].begin(), times[c].end());
        std::vector<double> ratios;
        for (std::size_t round = 0; round < times[c].size(); round++) {
            ratios.push_back(times[c][round] / times[0][round]);
        }
        r.ratio_median = quantile(ratios, 0.5);
        r.ratio_q1 = quantile(ratios, 0.25);
        r.ratio_q3 = quantile(ratios, 0.75);
    }
    return results;
}

}  // namespace attngen::tuner
