// The tuning database: a JSON file per target that says, for each kernel bucket, which schedule
// and parameters won, how fast they ran on the tuned shapes, against the hand-written defaults
// and Halide's autoschedulers, and on which machine. The build reads it (cmake/AttngenTuning.cmake)
// to compile one kernel per bucket.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "jit_attention.h"
#include "tune_shape.h"

namespace attngen::tuner {

struct ShapeResult {
    std::string shape;                           // TuneShape::spec().
    double time_ms = 0;                          // The winner (the default if none improves).
    double default_ms = 0;                       // cpu_fused with its defaults.
    std::map<std::string, double> baselines_ms;  // Autoscheduler name -> time; absent if it failed.
};

struct BucketResult {
    Variant bucket;  // What the kernel is specialized to (no schedule, no tuning).
    // The kernel that the default build runs for the bucket's first shape, which the winner was
    // measured against.
    Variant default_kernel;
    // Whether the winner beats the default build's kernel; if not, the build compiles no
    // kernel for the bucket and its shapes keep running the default one.
    bool improves = false;
    Candidate winner;
    std::vector<ShapeResult> shapes;
    int candidates = 0;  // Measured, failures included.
    int failed = 0;
    double seconds = 0;  // Spent on this bucket.
};

struct TuningDatabase {
    std::string target;   // Halide target the kernels were measured on.
    std::string machine;  // Processor (cpu_identity.h) and hardware threads.
    std::string created;  // ISO 8601, UTC.
    std::string command;  // How it was produced.
    double budget_seconds = 0;
    double elapsed_seconds = 0;
    std::vector<BucketResult> buckets;

    // Returns false and sets *error on I/O or format errors.
    bool save(const std::string &path, std::string *error) const;
    static bool load(const std::string &path, TuningDatabase *db, std::string *error);
};

// The current time as ISO 8601 UTC, and the processor with its family, model, vector width and
// thread count: how a database records when and where it was measured.
std::string now_utc();
std::string machine_description();

}  // namespace attngen::tuner
