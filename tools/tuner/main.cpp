// attngen-tune: searches schedule parameters for attention shapes on this machine and writes a
// tuning database that the build compiles kernels from. `attngen tune ...` runs this program.
//
//   attngen-tune --shapes SPEC... --budget SECONDS --out FILE [--target T] [--resume]
//   attngen-tune --report FILE
//   attngen-tune --compare CANDIDATE... --shapes SPEC [--rounds N]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "host_target.h"
#include "paired.h"
#include "report.h"
#include "search.h"
#include "tune_shape.h"

namespace {

using namespace attngen::tuner;

// On a terminal, one line redrawn in place; otherwise a plain line per measurement.
void show_progress(const Progress &p) {
    static const bool terminal = isatty(STDERR_FILENO);
    const int minutes = static_cast<int>(p.seconds_left) / 60,
              seconds = static_cast<int>(p.seconds_left) % 60;
    if (terminal) {
        std::fprintf(stderr,
                     "\r\033[K[%d/%d %s] %d candidates, best %.2fx the default, %dm%02ds left",
                     p.bucket, p.buckets, p.bucket_key.c_str(), p.candidates, p.best_speedup,
                     minutes, seconds);
    } else {
        std::fprintf(stderr, "tune [%d/%d %s] #%d best %.2fx, %dm%02ds left: %s\n", p.bucket,
                     p.buckets, p.bucket_key.c_str(), p.candidates, p.best_speedup, minutes,
                     seconds, p.last.c_str());
    }
    std::fflush(stderr);
}

int fail(const std::string &message, int code = 2) {
    std::fprintf(stderr, "attngen tune: error: %s\n", message.c_str());
    return code;
}

// The table of --compare: each candidate's time and its time over the first one's.
int print_comparison(const TuneShape &shape, const std::string &target, int threads, int rounds,
                     const std::vector<PairedResult> &results) {
    std::printf("%s on %s, %s, %d rounds\n", shape.spec().c_str(), target.c_str(),
                threads > 0 ? (std::to_string(threads) + " threads").c_str() : "all cores", rounds);
    std::printf("%-56s %10s %10s %8s  %s\n", "candidate", "median ms", "min ms", "calls",
                "time / first's (median, quartiles)");
    int failed = 0;
    for (const PairedResult &r : results) {
        if (!r.ok()) {
            std::printf("%-56s %s\n", r.candidate.describe().c_str(), r.error.c_str());
            failed++;
            continue;
        }
        std::printf("%-56s %10.3f %10.3f %8d  %.3f (%.3f-%.3f)\n", r.candidate.describe().c_str(),
                    r.median_ms, r.min_ms, r.calls, r.ratio_median, r.ratio_q1, r.ratio_q3);
    }
    if (failed > 0) {
        std::fprintf(stderr, "attngen tune: error: %d candidate(s) failed (see above)\n", failed);
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"attngen tune: search schedule parameters on this machine"};
    std::string generator = "attention", out, report, target, strategy = "search", cache;
    std::vector<std::string> specs, schedules, compare;
    double budget = 600, timeout = 120, min_speedup = 1.0;
    bool resume = false, no_autoschedulers = false;
    int threads = 0, runs = 5, rounds = PairedOptions{}.rounds;
    uint32_t seed = 1;
    app.add_option("--generator", generator, "Generator to tune (attention)")
        ->check(CLI::IsMember({"attention"}));
    app.add_option("--shapes", specs,
                   "Shapes, e.g. b=1,h=8,kv=2,nq=17,nk=30000,d=64[,dv=96][,causal] "
                   "(default: the built-in set)");
    app.add_option("--budget", budget, "Seconds for the whole search")->check(CLI::PositiveNumber);
    app.add_option("--out", out, "Tuning database to write (JSON)");
    // The build's CPU targets, most capable first, separated by commas.
    const std::string build_targets = ATTNGEN_TUNE_TARGETS;
    app.add_option("--target", target,
                   "Halide target to compile and measure for (default: the first of " +
                       build_targets + " that this machine runs)");
    app.add_flag("--resume", resume, "Reuse the measurements cached by an interrupted run");
    app.add_option("--cache", cache, "Measurement cache (default: <out>.cache)");
    app.add_option("--report", report, "Print the table of a tuning database and exit");
    app.add_option("--strategy", strategy, "search (random, then local) or grid")
        ->check(CLI::IsMember({"search", "grid"}));
    app.add_option("--schedules", schedules,
                   "Schedules to search (default: cpu_fused,cpu_tiled; cuda_fused,cuda_tiled for "
                   "a CUDA target)")
        ->delimiter(',');
    app.add_flag("--no-autoschedulers", no_autoschedulers, "Skip Halide's autoschedulers");
    app.add_option("--candidate-timeout", timeout, "Seconds before a candidate is stopped");
    app.add_option("--threads", threads, "Halide threads while measuring (default: all)");
    app.add_option("--runs", runs, "Timed runs per candidate (the median counts)");
    app.add_option("--seed", seed, "Random seed of the search");
    app.add_option("--min-speedup", min_speedup,
                   "Speedup over the default a winner needs (0: the best non-default candidate)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--compare", compare,
                   "Time these candidates against the first, taking turns in one process, on the "
                   "one shape of --shapes: cpu_fused, cpu_fused:key_tile=5,query_vectors=4, "
                   "Adams2019, default (the build's kernel for the shape)");
    app.add_option("--rounds", rounds, "Rounds of --compare (the median ratio counts)")
        ->check(CLI::PositiveNumber);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        return fail(std::string(e.what()) + " (see attngen tune --help)");
    }

    if (!report.empty()) {
        TuningDatabase db;
        std::string error;
        if (!TuningDatabase::load(report, &db, &error)) return fail(error);
        print_report(db, std::cout);
        return 0;
    }
    std::vector<Candidate> candidates;
    for (const std::string &text : compare) {
        Candidate c;
        std::string error;
        if (!parse_candidate(text, &c, &error)) return fail(error);
        candidates.push_back(c);
    }
    if (!candidates.empty()) {
        if (!out.empty()) return fail("--compare writes no tuning database; drop --out");
        if (specs.size() != 1) return fail("--compare takes exactly one shape in --shapes");
    } else if (out.empty()) {
        return fail("--out is required (or --report FILE, or --compare)");
    }

    TuneOptions options;
    if (specs.empty()) specs = default_shape_specs();
    for (const auto &spec : specs) {
        TuneShape shape;
        std::string error;
        if (!TuneShape::parse(spec, &shape, &error)) return fail(error);
        options.shapes.push_back(shape);
    }
    if (target.empty()) {
        std::vector<std::string> candidates;
        std::stringstream list(build_targets);
        for (std::string t; std::getline(list, t, ',');) candidates.push_back(t);
        target = first_runnable(candidates);
        if (target.empty()) {
            return fail("this machine runs none of the build's targets (" + build_targets +
                        "); pass --target");
        }
    }
    if (!Halide::Target::validate_target_string(target)) {
        return fail("--target " + target + " is not a Halide target");
    }
    // Candidates are compiled for the target and timed here, so this machine must run its code.
    if (const std::string missing = missing_on_host(Halide::Target(target)); !missing.empty()) {
        return fail("--target " + target + " needs " + missing +
                    ", which this machine lacks; the tuner times its candidates here");
    }
    if (!candidates.empty()) {
        PairedOptions paired;
        paired.rounds = rounds;
        paired.threads = threads;
        std::string error;
        const std::vector<PairedResult> results =
            compare_candidates(options.shapes[0], candidates, target, paired, &error);
        if (!error.empty()) return fail(error, 1);
        return print_comparison(options.shapes[0], target, threads, rounds, results);
    }
    options.target = target;
    options.budget_seconds = budget;
    options.cache_path = cache.empty() ? out + ".cache" : cache;
    options.resume = resume;
    options.autoschedulers = !no_autoschedulers;
    if (schedules.empty()) {
        schedules = gpu_target(target) ? std::vector<std::string>{"cuda_fused", "cuda_tiled"}
                                       : std::vector<std::string>{"cpu_fused", "cpu_tiled"};
    }
    options.schedules = schedules;
    options.strategy = strategy;
    options.candidate_timeout_seconds = timeout;
    options.measure.threads = threads;
    options.measure.runs = runs;
    options.seed = seed;
    options.min_speedup = min_speedup;

    std::string error;
    TuningDatabase db = tune(options, show_progress, &error);
    if (!error.empty()) return fail(error);
    std::fprintf(stderr, "\n");
    std::string command;
    for (int i = 0; i < argc; i++)
        command += (i ? " " : "") + std::string(i == 0 ? "attngen-tune" : argv[i]);
    db.command = command;
    if (!db.save(out, &error)) return fail(error, 1);
    print_report(db, std::cout);
    return 0;
}
