// What every benchmarked implementation (an attngen schedule or a peer library) provides: a
// computation prepared for one shape, run again and again by the timing loop.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "problem_data.h"
#include "shapes.h"
#include "thread_runtimes.h"

namespace attngen::bench {

// One shape's computation with its buffers and scratch allocated, ready to run.
class Computation {
  public:
    virtual ~Computation() = default;
    // Computes the whole output from the shape's ProblemData. Returns an empty string, or
    // what went wrong.
    virtual std::string run() = 0;
    // The output of the last run, in the layout of problem_data.h.
    virtual const float *output() const = 0;
    // What ran, when the implementation chooses among variants (an attngen kernel name); shown
    // as the benchmark's label.
    virtual std::string label() const { return ""; }
};

struct Implementation {
    std::string name;  // The schedule or peer name: the third part of a benchmark name.
    bool peer = false;
    ThreadRuntimes runtimes = 0;  // The pools its work runs on.
    // Whether it computes `shape` at all (a schedule may lack a causal or a layer kernel).
    std::function<bool(const BenchShape &)> supports;
    // Sets the number of threads of its pools. Called before prepare(), since some libraries
    // choose their algorithm by the thread count when a computation is created.
    std::function<void(int threads)> set_threads;
    // May throw (oneDNN and libtorch report errors by exceptions).
    std::function<std::unique_ptr<Computation>(const BenchShape &, const ProblemData &,
                                               int threads)>
        prepare;
};

}  // namespace attngen::bench
