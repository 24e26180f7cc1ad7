// Paired timing of a few candidates on one shape (`attngen tune --compare`).
//
// On a shared machine two measurements taken minutes apart differ by more than most schedule
// changes gain: the host's other tenants move a kernel's time by 5-10% within minutes. The
// search (search.h) lives with that, as it compares many candidates once each. A question about
// a few candidates ("does key_tile 5 beat 6 here?") needs a sharper answer: every candidate is
// compiled and checked once, then the rounds take turns over them in one process, each round
// timing every candidate for about the same short time, so that a spell of load falls on all of
// them alike. Each round gives every candidate's time over the first one's; the median of those
// ratios over the rounds is the answer, and their spread says how far to trust it.
#pragma once

#include <string>
#include <vector>

#include "jit_attention.h"
#include "tune_shape.h"

namespace attngen::tuner {

// Parses a candidate as the command line writes it: a schedule name ("cpu_fused", or one of
// Halide's autoschedulers), optionally followed by parameters, "cpu_fused:key_tile=5,
// query_vectors=4" or, as describe() prints it, "cpu_fused{key_tile=5,query_vectors=4}".
// "default" is the kernel that the default build runs for the shape (hand_default in
// search.h). On failure returns false and sets *error to what is wrong. Whether the schedule
// knows the parameters is only found when the candidate is compiled.
bool parse_candidate(const std::string &text, Candidate *candidate, std::string *error);

// The schedule name that parse_candidate gives "default".
constexpr const char *kDefaultBuild = "default";

struct PairedOptions {
    int rounds = 15;             // Rounds over all candidates.
    double round_seconds = 0.1;  // Time per candidate and round, in whole calls.
    int threads = 0;             // Threads of the runtime's pool; 0 keeps one per core.
};

struct PairedResult {
    Candidate candidate;
    std::string error;  // Why the candidate was not timed: compile error, wrong result.
    int calls = 0;      // Timed calls per round.
    double median_ms = 0, min_ms = 0;  // Over the rounds, of the mean time of a call.
    // The candidate's time over the first candidate's, in the same round: median, and the
    // first and third quartiles over the rounds. 1 for the first candidate itself.
    double ratio_median = 0, ratio_q1 = 0, ratio_q3 = 0;
    bool ok() const { return error.empty(); }
};

// Compiles each candidate for `target` (for the shape's bucket; "default" for the default
// build's), checks it against the fp64 reference, then times the ones that passed in
// options.rounds rounds. Candidates that fail carry their error and are not timed. Returns the
// results in the order given; sets *error (and returns nothing) when the first candidate, which
// the others are compared with, fails or a run fails.
std::vector<PairedResult> compare_candidates(const TuneShape &shape,
                                             const std::vector<Candidate> &candidates,
                                             const std::string &target,
                                             const PairedOptions &options, std::string *error);

}  // namespace attngen::tuner
