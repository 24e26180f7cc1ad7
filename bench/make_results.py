#!/usr/bin/python3
"""Writes bench/RESULTS.md and bench/results_gflops.png from attention_bench's JSON output.

Usage: /usr/bin/python3 bench/make_results.py ROUND.json [ROUND.json ...]

Each file is one run of attention_bench with --benchmark_repetitions=7 and
--benchmark_report_aggregates_only=true (bench/run.sh makes three). For every benchmark the
reported value is the median over the files of each file's median of 7: a burst of load from
another process during one round moves one round's median, not the result. Every number in
RESULTS.md is computed here from the files; none is written by hand.

This script writes the page (write_markdown) and runs the rest, which lives beside it in bench/:
results_model.py (the constants, loading the rounds: Result, Run, and the formatting helpers),
results_targets.py (the Targets section: verdicts, round by round, the miss analysis) and
results_tables.py (the tables, the tuning databases' section and the plot).

Needs Debian's python3 with matplotlib (python3-matplotlib); another python3 earlier on PATH may
lack it.
"""

import argparse
import os
import sys

# The modules beside this script: Python puts the script's directory first on sys.path when it
# runs the script, from any working directory.
from results_model import (FMA_FRAC_MIN, FUSED, MISS_ANALYSIS, OTHER_LOAD_TOLERANCE, PLOT_PNG,
                           REPO_DIR, RESULTS_MD, TARGET_THREADS, Run)
from results_tables import (autoscheduler_table, plot, projection_table, shape_table,
                            tuning_section)
from results_targets import load_miss_analysis, targets


def shape_section(run, shape):
    """The lines of one shape's table, with a note for each implementation it lacks."""
    out = [f"### ({shape}) {run.shapes[shape]}", "", shape_table(run, shape)]
    for impl in run.schedules + run.peers:
        if any(run.get(shape, impl, t) or ("attention", shape, impl, t) in run.errors
               for t in run.thread_counts):
            continue
        reasons = [reason for shapes, reason in run.excluded.get(impl, []) if shape in shapes]
        out.append("")
        if reasons:
            out.append(f"{impl} is not timed on this shape: {reasons[0]}.")
        else:
            out.append(f"{impl} has no kernel for this shape or was filtered out.")
    out.append("")
    return out


def write_markdown(run, path, tuning=None, analysis=None):
    rel_paths = [os.path.relpath(p, REPO_DIR) for p in run.paths]
    command = "/usr/bin/python3 bench/make_results.py " + " ".join(rel_paths)
    for t in tuning or []:
        command += " --tuning " + os.path.relpath(t, REPO_DIR)
    ctx = run.context
    out = []
    out.append("# attngen benchmark results")
    out.append("")
    out.append("Generated; do not edit. Regenerate everything (build, three rounds, this file) "
               "with `./bench/run.sh`; this file alone from the recorded JSON with:")
    out.append("")
    out.append(f"    {command}")
    out.append("")
    loads = ", ".join(f"{c.get('load_avg', ['?'])[0]:.2f}" if c.get("load_avg") else "?"
                      for c in run.contexts)
    out.append(f"Binary: `{ctx.get('executable')}`; implementations: "
               f"{', '.join(run.schedules)} (attngen schedules), {', '.join(run.peers)} (peers).")
    out.append("")
    cpu = f" ({ctx['cpu']})" if ctx.get('cpu') else ""
    out.append(f"Machine: {ctx.get('num_cpus')} CPUs{cpu} at {ctx.get('mhz_per_cpu')} MHz "
               f"(host `{ctx.get('host_name')}`); rounds started {run.contexts[0].get('date')} "
               f"... {run.contexts[-1].get('date')}; 1-minute load average at the start of "
               f"each round: {loads}.")
    out.append("")
    out.append(f"Each number is the median over the clean rounds (of {len(run.paths)}) of the "
               f"median of {run.repetitions()} repetitions (real time). A round of a benchmark "
               "is clean when other processes took at most "
               f"{OTHER_LOAD_TOLERANCE} of a core beyond the cores the benchmark leaves free "
               "during its timed loop (the *other_load* counter, from /proc/stat) and the "
               "machine's compute, probed with the benchmark's threads right before each "
               "repetition, was at least "
               f"{FMA_FRAC_MIN} of the best the process saw (the *fma_frac* counter, "
               "bench/compute_probe.h: compute that the host's other tenants take from this "
               "machine's cores without descheduling them shows in neither /proc/stat nor the "
               "process's own CPU time); *clean "
               "rounds* counts them, and **0/3** marks a benchmark that no round measured on a "
               "quiet machine, whose number is then the median of all rounds. *round spread* is "
               "(slowest - fastest round median) / median over the rounds used. *x fastest peer* is the fastest "
               "peer's time divided by this row's time, at the same thread count (above 1: "
               "faster than every peer). *cores busy* is the process's CPU time over the real "
               "time of the timed loop: the cores the implementation kept busy, spinning idle "
               "workers included; well below the thread count it means the implementation left "
               "a core idle, or that another process took it. *peak_frac* is of the sgemm peak measured "
               "in the same process with the same thread count (the best of 5 runs, taken when "
               "the first benchmark of that thread count started). A decode benchmark's "
               "*bw_frac* is of the read bandwidth (best of 3 passes over 256 MiB, *read GB/s*) "
               "measured in every repetition right before its timed loop, because the bandwidth "
               "the host's other tenants leave this machine moves within minutes while the load "
               "counters cannot see it; a repetition is disturbed when other processes ran during "
               "either measurement. It can exceed 1: the reference is one plain pass (a sum) over "
               "its array, a measured yardstick rather than a ceiling that no kernel can pass. "
               "The peak lines below are the medians of the peak benchmarks themselves.")
    out.append("")
    if ctx.get("library_build_type") == "debug":
        out.append("Google Benchmark reports its own library as a debug build (Debian's "
                   "libbenchmark); that concerns only its bookkeeping between timed "
                   "iterations, not the measured code, which is built Release.")
        out.append("")
    relevant = {impl: v for impl, v in run.excluded.items()
                if impl in run.schedules + run.peers}
    if relevant:
        out.append("Not timed (bench/exclusions.cpp):")
        out.append("")
        for impl, entries in relevant.items():
            for shapes, reason in entries:
                out.append(f"- {impl} on " + ", ".join(f"({s})" for s in shapes) + f": {reason}")
        out.append("")
    out.append("## Peaks")
    out.append("")
    for threads in run.thread_counts:
        sgemm, bw = run.peak("sgemm", threads), run.peak("read_bandwidth", threads)
        parts = []
        if sgemm:
            kernels = ctx.get("openblas_kernels")
            kernels = f", its {kernels} kernels" if kernels else ""
            parts.append(f"sgemm 2048³ (OpenBLAS{kernels}): "
                         f"**{sgemm.counter('GFLOPs'):.1f} GFLOP/s**")
        if bw:
            parts.append(f"read bandwidth (sum of 256 MiB): **{bw.counter('GBps'):.1f} GB/s**")
        if parts:
            out.append(f"- {threads} thread{'s' if threads > 1 else ''}: " + "; ".join(parts))
    out.append("")
    out.append("## Targets")
    out.append("")
    out.append(f"At {TARGET_THREADS} threads; computed from the tables below. Each verdict is "
               "on the medians over the rounds, as the targets are stated; *round by round* "
               "gives the same ratio within each round (the fastest peer's median of that round "
               f"over {FUSED}'s), which shows how far a verdict stands from its threshold. A "
               "speed target missed on the medians, or met on them but missed in a round, ends "
               f"with the FLOP rate at which {FUSED} would have met it (against the worst round "
               "in the second case), as a fraction of the sgemm peak: near or above 1, the "
               "target asked for what OpenBLAS's own GEMM reaches on this machine.")
    out.append("")
    target_lines, slowdowns = targets(run, analysis)
    out.extend(target_lines)
    if slowdowns:
        out.append("")
        out.append(autoscheduler_table(run, slowdowns))
    out.append("")
    for t in tuning or []:
        out.extend(tuning_section(t))
    out.append("## Sequence-length sweep")
    out.append("")
    out.append(f"![GFLOP/s against N at {TARGET_THREADS} threads](results_gflops.png)")
    out.append("")
    sweep_ids = ", ".join(f"({s}) N={n}" for s, n in sorted(run.sweep.items(),
                                                             key=lambda kv: kv[1]))
    out.append(f"Points: {sweep_ids}; (a) and (b) are the sweep's N = 512 and 2048.")
    out.append("")
    if run.projection_impls():
        out.append("## Projection")
        out.append("")
        out.append("One projection of the layer shape (g): y [2048, 512] = x [2048, 512] "
                   "w_q [512, 512] with (g)'s inputs, by each schedule's projection stage kernel "
                   "(with a zero bias: the layer has none) and by OpenBLAS's cblas_sgemm "
                   "(bench/projection_benchmark.h); 2 x 2048 x 512 x 512 FLOP per call.")
        out.append("")
        out.append(projection_table(run))
        out.append("")
    out.append("## Shapes")
    out.append("")
    for shape in run.shape_order:
        if shape not in run.modifiers and shape not in run.storage:
            out.extend(shape_section(run, shape))
    stored = [shape for shape in run.shape_order if shape in run.storage]
    if stored:
        out.append("## Shapes stored in 16 bits")
        out.append("")
        out.append("Shapes (b), (c), (f) and (e) with their tensors in bfloat16 or float16 "
                   "(docs/api.md): the inputs are the float32 shape's rounded to the type, and "
                   "each output is checked against the fp64 reference on those rounded inputs "
                   "(3e-2 of the largest output for bfloat16 outputs, 4e-3 for float16, "
                   "bench/reference_check.h). The peers compute in their own low precision: "
                   "oneDNN's bfloat16 matmuls with float32 scores and bfloat16 probabilities, "
                   "torch's SDPA on bfloat16 tensors; neither computes float16 on this CPU, nor "
                   "multiplies float32 queries by 16-bit keys, and OpenBLAS has no 16-bit "
                   "GEMM. A decode shape's KV GB/s counts the bytes as stored.")
        out.append("")
        for shape in stored:
            out.extend(shape_section(run, shape))
    modified = [shape for shape in run.shape_order if shape in run.modifiers]
    if modified:
        out.append("## Shapes with modifiers")
        out.append("")
        out.append("Score and mask modifiers (docs/modifiers.md). The attngen schedules take them "
                   "as kernel inputs (the kernel column names the variant that ran). The peers "
                   "apply the same ones as a dense additive mask (0 or -inf, plus ALiBi and the "
                   "bias) after a tanh pass for the softcap, over every (query, key) pair, by "
                   "blocks of query rows so that N = 16384 needs no [H, N, N] matrix "
                   "(bench/peers/additive_mask.h): OpenBLAS's and oneDNN's compositions, and "
                   "torch's SDPA with a float attn_mask (with a softcap, which SDPA lacks, "
                   "matmul, tanh, softmax and matmul). GFLOP/s and peak_frac count 4 d FLOPs "
                   "for each allowed (query, key) pair only (bench/shapes.h), for every "
                   "implementation.")
        out.append("")
        for shape in modified:
            out.extend(shape_section(run, shape))
    failed = sorted(run.errors)
    if failed:
        out.append("## Failed benchmarks")
        out.append("")
        out.append("A kernel error or an output that differs from the fp64 reference, with the "
                   "message of the first round where it failed:")
        out.append("")
        for key in failed:
            messages = run.errors[key]
            name = "/".join(k for k in key[:3] if k is not None)
            out.append(f"- {name}/threads:{key[3]}, in {len(messages)} of "
                       f"{len(run.paths)} rounds: {messages[0]}")
        out.append("")
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", nargs="+", help="attention_bench --benchmark_out files, one "
                        "per round")
    parser.add_argument("--markdown", default=RESULTS_MD, help="output (default: %(default)s)")
    parser.add_argument("--plot", default=PLOT_PNG, help="output (default: %(default)s)")
    parser.add_argument("--tuning", action="append", default=[],
                        help="a tuning database (attngen tune --out) whose tuned, default and "
                        "autoscheduler times get a section of their own (repeatable)")
    parser.add_argument("--miss-analysis", default=MISS_ANALYSIS,
                        help="why missed speed targets were missed, measured outside the rounds "
                        "(default: %(default)s; an empty value leaves it out)")
    args = parser.parse_args()
    run = Run(args.json)
    if not run.results:
        sys.exit("make_results: no benchmark results in " + ", ".join(args.json))
    plot(run, args.plot)
    write_markdown(run, args.markdown, args.tuning, load_miss_analysis(args.miss_analysis))
    print(f"make_results: wrote {args.markdown} and {args.plot}")


if __name__ == "__main__":
    main()
