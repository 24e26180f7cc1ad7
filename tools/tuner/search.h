// The search: for each bucket of the shapes to tune, measure the hand-written default and
// Halide's autoschedulers, then sample candidates at random and refine the best by local search
// (one parameter one step at a time) until the bucket's share of the budget is spent. A
// candidate's score is the geometric mean, over the bucket's shapes, of its time over the
// default's; the winner is the best score, the default if nothing beats it. Every measurement
// is appended to a cache file, so that an interrupted run resumes without measuring again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "database.h"
#include "measure.h"
#include "tune_shape.h"

namespace attngen::tuner {

struct TuneOptions {
    std::vector<TuneShape> shapes;
    std::string target;           // Halide target string to compile and run for.
    double budget_seconds = 600;  // For everything, baselines included.
    std::string cache_path;       // One JSON line per measurement.
    bool resume = false;          // Reuse the cache's measurements.
    bool autoschedulers = true;   // Measure Adams2019, Li2018 and Mullapudi2016 as baselines.
    std::vector<std::string> schedules{"cpu_fused", "cpu_tiled"};
    std::string strategy = "search";  // "search", or "grid" (cpu_fused's grid in order).
    MeasureOptions measure;
    double candidate_timeout_seconds = 120;
    uint32_t seed = 1;
    // A winner must beat the default by this factor (its speedup); 0 takes the fastest candidate
    // other than the default whatever its speed, for tests of the path from database to kernel.
    double min_speedup = 1.0;
};

// Whether a Halide target string names a GPU (cuda, ...): its defaults are the CUDA schedules.
bool gpu_target(const std::string &target);

// The hand default that tuned kernels are measured against: the kernel the default build runs
// for the shape (default_kernel in tune_shape.h), its schedule with every parameter at the value
// the build compiles it with (the schedule's defaults and the variant's own tuning), as a
// candidate in the bucket of that kernel.
std::pair<Variant, Candidate> hand_default(const TuneShape &shape, const std::string &target);

struct Progress {
    int bucket = 0, buckets = 0;
    std::string bucket_key;
    int candidates = 0;       // Measured in this bucket so far.
    double best_speedup = 0;  // Default time over the best's, geometric mean over the shapes.
    double seconds_left = 0;  // Of the whole budget.
    std::string last;         // The last candidate and its outcome.
};

using ProgressFn = std::function<void(const Progress &)>;

// Returns the database; on errors the message goes to *error and the database is empty.
TuningDatabase tune(const TuneOptions &options, const ProgressFn &progress, std::string *error);

}  // namespace attngen::tuner
