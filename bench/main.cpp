// attention_bench: every compiled attngen schedule and the peer libraries on the shapes of
// shapes.h, at 1 and 2 threads, with the peaks the counters are fractions of. See
// docs/benchmarks.md and bench/run.sh for how RESULTS.md is made from its JSON output.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "allocator.h"
#include "attention_benchmark.h"
#include "attngen_schedules.h"
#include "cpu_identity.h"
#include "exclusions.h"
#include "failures.h"
#include "peak_benchmarks.h"
#include "peaks.h"
#include "peers/onednn_attention.h"
#include "peers/openblas_attention.h"
#include "projection_benchmark.h"
#include "shapes.h"
#ifdef ATTNGEN_BENCH_HAVE_TORCH
#include "peers/torch_attention.h"
#endif

namespace {

using attngen::bench::Implementation;

// The machine has two cores: one thread, and all of them. Every benchmark of one thread count
// runs before any of the next. Halide's thread pool, which the kernels used before the runtime
// had its own, kept using the workers it had started after halide_set_num_threads() lowered the
// count (measured: (b) with cpu_fused ran at the two-thread rate when its one-thread benchmark
// came after a two-thread one); the runtime's pool parks them, but the order stays, so that
// rounds compare with earlier ones.
const std::vector<int> kThreadCounts = {1, 2};

std::vector<Implementation> all_implementations() {
    std::vector<Implementation> implementations = attngen::bench::attngen_implementations();
    implementations.push_back(attngen::bench::openblas_implementation());
    implementations.push_back(attngen::bench::onednn_implementation());
#ifdef ATTNGEN_BENCH_HAVE_TORCH
    implementations.push_back(attngen::bench::torch_implementation());
#endif
    return implementations;
}

// Describes the run in the JSON output's context, so that make_results.py needs no copy of this
// program's tables: "shape/<id>" is "<description>; <dims>", "sweep/<id>" the sweep's N,
// "modifiers/<id>" the modifiers of a shape that has some (shapes.h), "storage/<id>" the storage
// of a shape stored in 16 bits ("bf16", "K/V f16"), and
// "implementations/schedules" and "implementations/peers" list the implementations by kind, and
// "excluded/<implementation>/<shape ids>" is the reason (see exclusions.h; the shape ids are in
// the key because one implementation may be excluded from different shapes for different reasons,
// and a context key can be added only once). "cpu" names the processor (cpu_identity.h),
// "openblas_kernels" the kernels OpenBLAS chose for it (peaks.h).
void describe_run(const std::vector<Implementation> &implementations) {
    for (const auto &shape : attngen::bench::bench_shapes()) {
        benchmark::AddCustomContext("shape/" + shape.id, shape.description + "; " + shape.dims());
        if (shape.sweep_n > 0)
            benchmark::AddCustomContext("sweep/" + shape.id, std::to_string(shape.sweep_n));
        if (shape.modifiers.any())
            benchmark::AddCustomContext("modifiers/" + shape.id, shape.modifiers.to_string());
        if (shape.sixteen_bit())
            benchmark::AddCustomContext("storage/" + shape.id, shape.storage_text());
    }
    std::string schedules, peers;
    for (const Implementation &impl : implementations) {
        std::string &list = impl.peer ? peers : schedules;
        list += (list.empty() ? "" : ",") + impl.name;
    }
    benchmark::AddCustomContext("implementations/schedules", schedules);
    benchmark::AddCustomContext("implementations/peers", peers);
    benchmark::AddCustomContext("cpu", attngen::cpu_identity());
    benchmark::AddCustomContext("openblas_kernels", attngen::bench::openblas_kernels());
    benchmark::AddCustomContext("malloc", "glibc, no mmap, freed memory kept (allocator.h)");
    for (const attngen::bench::Exclusion &e : attngen::bench::exclusions()) {
        std::string shapes;
        for (const std::string &id : e.shapes) shapes += (shapes.empty() ? "" : ",") + id;
        benchmark::AddCustomContext("excluded/" + e.implementation + "/" + shapes, e.reason);
    }
}

}  // namespace

int main(int argc, char **argv) {
    attngen::bench::keep_freed_memory_in_process();

    // Defaults that make every reported number a median of 7 repetitions; flags given on the
    // command line come later in argv and so override them.
    std::vector<char *> args = {argv[0]};
    std::string repetitions = "--benchmark_repetitions=7";
    std::string aggregates = "--benchmark_report_aggregates_only=true";
    args.push_back(repetitions.data());
    args.push_back(aggregates.data());
    for (int i = 1; i < argc; i++) args.push_back(argv[i]);
    int count = static_cast<int>(args.size());
    args.push_back(nullptr);

    benchmark::Initialize(&count, args.data());
    if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;

    const std::vector<Implementation> implementations = all_implementations();
    describe_run(implementations);
    for (int threads : kThreadCounts) {
        attngen::bench::register_peak_benchmarks(threads);
        attngen::bench::register_attention_benchmarks(implementations, threads);
        // After the attention benchmarks, whose first call installs the runtime's Halide error
        // handler: the stage kernels then report an error as a status instead of aborting.
        attngen::bench::register_projection_benchmarks(threads);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return attngen::bench::any_benchmark_failed() ? 1 : 0;
}
