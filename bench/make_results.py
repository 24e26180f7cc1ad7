#!/usr/bin/python3
"""Writes bench/RESULTS.md and bench/results_gflops.png from attention_bench's JSON output.

Usage: /usr/bin/python3 bench/make_results.py ROUND.json [ROUND.json ...]

Each file is one run of attention_bench with --benchmark_repetitions=7 and
--benchmark_report_aggregates_only=true (bench/run.sh makes three). For every benchmark the
reported value is the median over the files of each file's median of 7: a burst of load from
another process during one round moves one round's median, not the result. Every number in
RESULTS.md is computed here from the files; none is written by hand.

Needs Debian's python3 with matplotlib (python3-matplotlib); another python3 earlier on PATH may
lack it.
"""

import argparse
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")  # No display: write the PNG only.
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
RESULTS_MD = os.path.join(BENCH_DIR, "RESULTS.md")
PLOT_PNG = os.path.join(BENCH_DIR, "results_gflops.png")
# Why a speed target was missed, measured outside the rounds (profiles, paired experiments):
# printed under a target only when the rounds being written miss it.
MISS_ANALYSIS = os.path.join(BENCH_DIR, "miss_analysis.json")

# Halide 14's autoschedulers: the schedule names that CMake gives the autoscheduled kernels
# (ATTNGEN_AUTOSCHEDULERS in cmake/AttngenKernels.cmake).
AUTOSCHEDULERS = ("Adams2019", "Li2018", "Mullapudi2016")
# The hand schedule that the targets are about.
FUSED = "cpu_fused"
# The targets are stated for the machine's two threads.
TARGET_THREADS = 2
# The projection benchmarks (bench/projection_benchmark.h): the schedule whose projection GEMMs
# the issue holds to "within about 10% of OpenBLAS sgemm", and that sgemm.
PROJECTION_SCHEDULE = "cpu_tiled"
PROJECTION_PEER = "openblas"
PROJECTION_THRESHOLD = 0.9
# A round of a benchmark is clean when other processes took at most this many cores beyond the
# ones the benchmark leaves free (the other_load counter, bench/cpu_usage.h).
OTHER_LOAD_TOLERANCE = 0.25
# ... and when the machine's compute, probed right before each repetition's timed loop, was at
# least this fraction of the best the process saw (the median fma_frac counter,
# bench/compute_probe.h). On a quiet machine a benchmark's median reading is 0.93-1.01; a host
# that halves the machine's compute makes it about 0.5. Rounds recorded before the probe existed
# have no fma_frac and are judged by other_load alone.
FMA_FRAC_MIN = 0.8


class Result:
    """The combined medians of one benchmark over its clean rounds (all rounds when none is
    clean)."""

    def __init__(self, rounds, threads, cpus):
        self.all_rounds = rounds  # One dict of the JSON "median" entry per round.
        free_cores = max(0, cpus - threads)
        clean = [r for r in rounds
                 if r.get("other_load", 0.0) <= free_cores + OTHER_LOAD_TOLERANCE
                 and r.get("fma_frac", 1.0) >= FMA_FRAC_MIN]
        self.clean_rounds = len(clean)
        self.rounds = clean or rounds
        times = [r["real_time"] * _to_ms(r["time_unit"]) for r in self.rounds]
        self.time_ms = statistics.median(times)
        # Spread of the round medians relative to their median: how repeatable the number is.
        self.spread = (max(times) - min(times)) / self.time_ms if self.time_ms > 0 else 0.0
        self.label = rounds[0].get("label", "")

    def counter(self, name):
        values = [r[name] for r in self.rounds if name in r]
        return statistics.median(values) if values else None

    def round_entry(self, index):
        """This benchmark's JSON "median" entry of round `index` (0-based, in the order of the
        files), or None when it has none there."""
        return next((r for r in self.all_rounds if r["round"] == index), None)

    def round_time_ms(self, index):
        """This benchmark's median in round `index`, or None when it has none there."""
        r = self.round_entry(index)
        return r["real_time"] * _to_ms(r["time_unit"]) if r else None


def _to_ms(unit):
    return {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def parse_name(run_name):
    """'attention/b/cpu_fused/threads:2/real_time' -> ('attention', 'b', 'cpu_fused', 2)."""
    parts = [p for p in run_name.split("/") if p != "real_time"]
    threads = int(parts[-1].split(":")[1])
    if parts[0] == "attention":
        return "attention", parts[1], parts[2], threads
    if parts[0] == "projection":
        return "projection", None, parts[1], threads
    return "peak", None, parts[1], threads


def load(paths):
    """Returns (contexts, results, errors): results maps (kind, shape, impl, threads) to a
    Result; errors maps the same key to the error messages of the rounds where it failed."""
    contexts, medians, errors = [], {}, {}
    for index, path in enumerate(paths):
        with open(path) as f:
            data = json.load(f)
        contexts.append(data["context"])
        round_errors = {}  # A failing benchmark reports an error per repetition: keep one.
        for entry in data["benchmarks"]:
            key = parse_name(entry["run_name"])
            entry["round"] = index  # Per-round comparisons pair benchmarks of one round.
            if entry.get("error_occurred"):
                round_errors.setdefault(key, entry.get("error_message", ""))
            elif entry.get("run_type") == "aggregate" and entry.get("aggregate_name") == "median":
                medians.setdefault(key, []).append(entry)
            elif entry.get("run_type") == "iteration" and entry.get("repetitions", 1) == 1:
                # A run with a single repetition has no aggregates; its one value is the median.
                medians.setdefault(key, []).append(entry)
        for key, message in round_errors.items():
            errors.setdefault(key, []).append(message)
    cpus = contexts[0].get("num_cpus", 1)
    results = {key: Result(rounds, key[3], cpus) for key, rounds in medians.items()}
    return contexts, results, errors


class Run:
    """Everything RESULTS.md is made from."""

    def __init__(self, paths):
        self.paths = paths
        self.contexts, self.results, self.errors = load(paths)
        context = self.contexts[0]
        self.context = context
        self.shapes = {}  # id -> "description; dims"
        self.sweep = {}  # id -> N
        self.excluded = {}  # implementation -> [(shape ids, reason)]
        for key, value in context.items():
            if key.startswith("shape/"):
                self.shapes[key[len("shape/"):]] = value
            elif key.startswith("sweep/"):
                self.sweep[key[len("sweep/"):]] = int(value)
            elif key.startswith("excluded/"):
                # "excluded/<implementation>/<shape ids>": reason. JSON written before an
                # implementation could have two exclusions says "excluded/<implementation>":
                # "<shape ids>: <reason>".
                impl, _, shapes = key[len("excluded/"):].partition("/")
                reason = value
                if not shapes:
                    shapes, _, reason = value.partition(": ")
                self.excluded.setdefault(impl, []).append((shapes.split(","), reason))
        self.schedules = _split(context.get("implementations/schedules", ""))
        self.peers = _split(context.get("implementations/peers", ""))
        # Main shapes (letters) first, then the sweep-only points by N.
        def order(shape):
            sweep_only = shape.startswith("n")
            return (sweep_only, self.sweep.get(shape, 0) if sweep_only else 0, shape)

        self.shape_order = sorted(self.shapes, key=order)
        self.thread_counts = sorted({k[3] for k in self.results} | {k[3] for k in self.errors})

    def get(self, shape, impl, threads):
        return self.results.get(("attention", shape, impl, threads))

    def peak(self, name, threads):
        return self.results.get(("peak", None, name, threads))

    def projection(self, impl, threads):
        return self.results.get(("projection", None, impl, threads))

    def projection_impls(self):
        """The implementations of the projection benchmarks, OpenBLAS last."""
        impls = sorted({k[2] for k in list(self.results) + list(self.errors)
                        if k[0] == "projection"})
        return [i for i in impls if i != PROJECTION_PEER] + (
            [PROJECTION_PEER] if PROJECTION_PEER in impls else [])

    def fastest_peer(self, shape, threads):
        """(peer name, Result) of the fastest peer, or (None, None)."""
        timed = [(p, self.get(shape, p, threads)) for p in self.peers]
        timed = [(p, r) for p, r in timed if r is not None]
        if not timed:
            return None, None
        return min(timed, key=lambda pr: pr[1].time_ms)

    def is_decode(self, shape):
        return " Nq1 " in self.shapes.get(shape, "")

    def repetitions(self):
        """The repetitions per round, e.g. "7"."""
        reps = {r.get("repetitions") for res in self.results.values() for r in res.rounds}
        reps.discard(None)
        return "/".join(str(r) for r in sorted(reps)) if reps else "?"


def _split(text):
    return [x for x in text.split(",") if x]


def fmt_ms(ms):
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def fmt(value, digits=2):
    return "–" if value is None else f"{value:.{digits}f}"


def shape_table(run, shape):
    decode = run.is_decode(shape)
    rate_header = "KV GB/s | read GB/s | bw_frac" if decode else "GFLOP/s | peak_frac"
    rate_columns = 3 if decode else 2
    lines = [
        f"| implementation | threads | median ms | {rate_header} | x fastest peer | "
        "cores busy | clean rounds | round spread | kernel / primitives |",
        "|---|---:|---:|" + "---:|" * rate_columns + "---:|---:|---:|---:|---|",
    ]
    for threads in run.thread_counts:
        peer_name, peer = run.fastest_peer(shape, threads)
        for impl in run.schedules + run.peers:
            result = run.get(shape, impl, threads)
            key = ("attention", shape, impl, threads)
            if result is None:
                if key in run.errors:
                    lines.append(f"| {impl} | {threads} | failed (see below) |" +
                                 " |" * (rate_columns + 5))
                continue
            if decode:
                rates = [fmt(result.counter("KV_GBps"), 1), fmt(result.counter("read_GBps"), 1),
                         fmt(result.counter("bw_frac"))]
            else:
                rates = [fmt(result.counter("GFLOPs"), 1), fmt(result.counter("peak_frac"))]
            ratio = peer.time_ms / result.time_ms if peer else None
            lines.append(
                f"| {impl} | {threads} | {fmt_ms(result.time_ms)} | {' | '.join(rates)} | "
                f"{fmt(ratio)} | {fmt(result.counter('cpu_util'), 1)} | "
                f"{clean_rounds(result)} | {result.spread * 100:.1f}% | {result.label} |")
    return "\n".join(lines)


def clean_rounds(result):
    """'3/3', or a warning when no round was clean and all of them were used."""
    total = len(result.all_rounds)
    if result.clean_rounds == 0:
        return f"**0/{total}**"
    return f"{result.clean_rounds}/{total}"


def speedups_by_round(run, ours, peers):
    """Within each round that timed both, in file order: (round index, name of the fastest of
    `peers` (name -> Result) in that round, its time over `ours`)."""
    rounds = []
    for index in range(len(run.paths)):
        ours_ms = ours.round_time_ms(index)
        peer_ms = {name: ms for name, ms in
                   ((name, p.round_time_ms(index)) for name, p in peers.items()) if ms is not None}
        if ours_ms and peer_ms:
            fastest = min(peer_ms, key=peer_ms.get)
            rounds.append((index, fastest, peer_ms[fastest] / ours_ms))
    return rounds


def machine_note(result, index):
    """' (machine at 0.52 of its compute)' when `result`'s round `index` ran while the compute
    probe read below FMA_FRAC_MIN, else ''."""
    entry = result.round_entry(index)
    frac = entry.get("fma_frac") if entry else None
    if frac is None or frac >= FMA_FRAC_MIN:
        return ""
    return f" (machine at {frac:.2f} of its compute)"


def ratio_label(value, threshold):
    """'1.24x'; with a third digit where two would print a value below the threshold as the
    threshold itself (1.297 as 1.30 next to a target of 1.3)."""
    label = f"{value:.2f}"
    if value < threshold and float(label) >= threshold:
        label = f"{value:.3f}"
    return label + "x"


def round_by_round_text(values, labels, threshold, unit=""):
    """'; round by round <labels> (at least <threshold> in m of n)', or nothing with fewer than
    two rounds: the per-round values of one target next to its verdict on the medians."""
    if len(values) < 2:
        return ""
    met = sum(v >= threshold for v in values)
    return (f"; round by round {', '.join(labels)} "
            f"(at least {threshold}{unit} in {met} of {len(values)})")


def load_miss_analysis(path):
    """The analyses of missed speed targets by shape letter ({} without the file)."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return {k: v for k, v in json.load(f).items() if not k.startswith("_")}


def targets(run, analysis=None):
    """Lines of the Targets section: each target with its numbers and met / missed, and for a
    missed speed target the analysis of why, where bench/miss_analysis.json has one."""
    t = TARGET_THREADS
    lines = []
    analysis = analysis or {}

    def verdict(value, threshold, *results):
        if value is None:
            return "no data"
        text = "**met**" if value >= threshold else "**missed**"
        if any(r is not None and r.clean_rounds == 0 for r in results):
            text += " (from disturbed rounds only, see the tables)"
        return text

    def fused_over_peer(shape):
        fused = run.get(shape, FUSED, t)
        peer_name, peer = run.fastest_peer(shape, t)
        if fused is None or peer is None:
            return None, "no data", (fused, peer)
        ratio = peer.time_ms / fused.time_ms
        return ratio, (f"{FUSED} {fmt_ms(fused.time_ms)} ms vs {peer_name} "
                       f"{fmt_ms(peer.time_ms)} ms"), (fused, peer)

    def rate_needed(gflops, frac, ratio, threshold):
        """The FLOP rate at which cpu_fused would reach `threshold` where it reached `ratio` at
        `gflops` (`frac` of the sgemm peak): the rate, and that fraction of the peak. Above 1 the
        target asks for more than OpenBLAS's own GEMM does on this machine."""
        return (f"{threshold}x would take {gflops * threshold / ratio:.0f} GFLOP/s, "
                f"{frac * threshold / ratio:.2f} of the sgemm peak measured in the same process "
                f"({FUSED} ran at {frac:.2f} of it)")

    def what_it_would_take(fused, ratio, threshold):
        """For a speed target missed on the medians: the rate it needs."""
        frac = fused.counter("peak_frac") if fused else None
        if ratio is None or ratio >= threshold or not frac:
            return ""
        return ": " + rate_needed(fused.counter("GFLOPs"), frac, ratio, threshold)

    def round_by_round(shape, threshold, ratio):
        """The ratio within each round (the fastest peer of that round over cpu_fused of that
        round, disturbed rounds included): how far the verdict on the medians stands from the
        threshold when the machine's noise moves one round. When the medians meet the target
        but a round does not, the rate that the round's peer asked for, which tells a peer's
        fast round (a rate near the sgemm peak) from a slow round of cpu_fused."""
        fused = run.get(shape, FUSED, t)
        peers = {p: r for p in run.peers if (r := run.get(shape, p, t)) is not None}
        if fused is None or not peers:
            return ""
        rounds = speedups_by_round(run, fused, peers)
        ratios = [r for _, _, r in rounds]
        labels = [ratio_label(r, threshold) + machine_note(fused, index)
                  for index, _, r in rounds]
        text = round_by_round_text(ratios, labels, threshold, "x")
        if ratio is None or ratio < threshold or min(ratios, default=threshold) >= threshold:
            return text
        worst, peer_name, worst_ratio = min(rounds, key=lambda r: r[2])
        entry = fused.round_entry(worst)
        if entry is None or "GFLOPs" not in entry or "peak_frac" not in entry:
            return text
        return (text + f"; against {peer_name} in round {worst + 1}, "
                + rate_needed(entry["GFLOPs"], entry["peak_frac"], worst_ratio, threshold))

    for shape, threshold in (("b", 1.3), ("c", 1.3), ("f", 1.3), ("d", 2.0)):
        ratio, detail, results = fused_over_peer(shape)
        ratio_text = ratio_label(ratio, threshold) if ratio is not None else f"{fmt(ratio)}x"
        lines.append(f"- ({shape}) {FUSED} speed / fastest peer >= {threshold}x: "
                     f"{ratio_text} ({detail}) — {verdict(ratio, threshold, *results)}"
                     f"{what_it_would_take(results[0], ratio, threshold)}"
                     f"{round_by_round(shape, threshold, ratio)}")
        why = analysis.get(shape)
        if ratio is not None and ratio < threshold and why:
            lines.append(f"  - Why ({why['measured']}; {why['how']}): {why['why']}")

    fused_c = run.get("c", FUSED, t)
    frac = fused_c.counter("peak_frac") if fused_c else None
    lines.append(f"- (c) {FUSED} fraction of the sgemm peak >= 0.85: {fmt(frac)} "
                 f"— {verdict(frac, 0.85, fused_c)}")

    fused_e = run.get("e", FUSED, t)
    bw = fused_e.counter("bw_frac") if fused_e else None
    gbps = fused_e.counter("KV_GBps") if fused_e else None
    rounds_e = ""
    if fused_e:
        # The reference bandwidth is measured next to each round's timed loop and moves with
        # the host's other tenants, so each round's fraction comes with its reference.
        measured = [r for r in sorted(fused_e.all_rounds, key=lambda r: r["round"])
                    if "bw_frac" in r and "read_GBps" in r and "KV_GBps" in r]
        rounds_e = round_by_round_text(
            [r["bw_frac"] for r in measured],
            [f"{r['bw_frac']:.2f} ({r['KV_GBps']:.1f} of {r['read_GBps']:.1f} GB/s)"
             for r in measured], 0.85)
    lines.append(f"- (e) decode, {FUSED} fraction of the read bandwidth >= 0.85: {fmt(bw)} "
                 f"({fmt(gbps, 1)} GB/s of K and V) — {verdict(bw, 0.85, fused_e)}{rounds_e}")

    lines.append(projection_target(run, verdict))

    autos = [a for a in AUTOSCHEDULERS if a in run.schedules]
    if not autos:
        lines.append("- every autoscheduler slower than cpu_fused: no data (this build has no "
                     "autoscheduled kernels; configure with ATTNGEN_BUILD_AUTOSCHEDULED=ON)")
        return lines, []
    slowdowns = []  # (autoscheduler, shape, t_auto / t_fused)
    for auto in autos:
        for shape in run.shape_order:
            fused, other = run.get(shape, FUSED, t), run.get(shape, auto, t)
            if fused and other:
                slowdowns.append((auto, shape, other.time_ms / fused.time_ms))
    if slowdowns:
        slowest_gap = min(slowdowns, key=lambda x: x[2])
        all_slower = all(s > 1.0 for _, _, s in slowdowns)
        lines.append(
            f"- every autoscheduler slower than {FUSED} on every shape it ran: "
            f"{'**met**' if all_slower else '**missed**'} (smallest gap: {slowest_gap[0]} on "
            f"({slowest_gap[1]}) takes {slowest_gap[2]:.2f}x the time of {FUSED}; all ratios "
            "in the table below)")
    else:
        lines.append(f"- every autoscheduler slower than {FUSED}: no data")
    return lines, slowdowns


def projection_target(run, verdict):
    """The target line of the projection GEMMs: cpu_tiled's speed over OpenBLAS sgemm's on the
    same product, on the medians and round by round."""
    t = TARGET_THREADS
    ours, peer = run.projection(PROJECTION_SCHEDULE, t), run.projection(PROJECTION_PEER, t)
    head = (f"- projection GEMM (2048 x 512 x 512), {PROJECTION_SCHEDULE} speed / OpenBLAS "
            f"sgemm >= {PROJECTION_THRESHOLD} (within about 10%): ")
    if ours is None or peer is None:
        return head + "no data"
    ratio = peer.time_ms / ours.time_ms
    ratios = [r for _, _, r in speedups_by_round(run, ours, {PROJECTION_PEER: peer})]
    return (head + f"{ratio_label(ratio, PROJECTION_THRESHOLD)} ({PROJECTION_SCHEDULE} "
            f"{fmt_ms(ours.time_ms)} ms vs {PROJECTION_PEER} {fmt_ms(peer.time_ms)} ms) — "
            f"{verdict(ratio, PROJECTION_THRESHOLD, ours, peer)}"
            + round_by_round_text(ratios, [ratio_label(r, PROJECTION_THRESHOLD) for r in ratios],
                                  PROJECTION_THRESHOLD, "x"))


def projection_table(run):
    """The projection benchmarks: every stage kernel and OpenBLAS's sgemm on one product."""
    lines = [
        "| implementation | threads | median ms | GFLOP/s | peak_frac | x openblas | "
        "cores busy | clean rounds | round spread | kernel |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for threads in run.thread_counts:
        peer = run.projection(PROJECTION_PEER, threads)
        for impl in run.projection_impls():
            result = run.projection(impl, threads)
            if result is None:
                if ("projection", None, impl, threads) in run.errors:
                    lines.append(f"| {impl} | {threads} | failed (see below) |" + " |" * 7)
                continue
            ratio = peer.time_ms / result.time_ms if peer else None
            lines.append(
                f"| {impl} | {threads} | {fmt_ms(result.time_ms)} | "
                f"{fmt(result.counter('GFLOPs'), 1)} | {fmt(result.counter('peak_frac'))} | "
                f"{fmt(ratio)} | {fmt(result.counter('cpu_util'), 1)} | "
                f"{clean_rounds(result)} | {result.spread * 100:.1f}% | {result.label} |")
    return "\n".join(lines)


def autoscheduler_table(run, slowdowns):
    shapes = [s for s in run.shape_order if any(x[1] == s for x in slowdowns)]
    autos = [a for a in AUTOSCHEDULERS if any(x[0] == a for x in slowdowns)]
    by_key = {(a, s): v for a, s, v in slowdowns}
    lines = ["| time / time of cpu_fused | " + " | ".join(f"({s})" for s in shapes) + " |",
             "|---|" + "---:|" * len(shapes)]
    for auto in autos:
        cells = [fmt(by_key.get((auto, s))) for s in shapes]
        lines.append(f"| {auto} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(run, path):
    points = sorted(run.sweep.items(), key=lambda kv: kv[1])
    fig, ax = plt.subplots(figsize=(9.5, 5))
    any_disturbed = False
    for impl in run.schedules + run.peers:
        xs, ys, disturbed = [], [], []
        for shape, n in points:
            result = run.get(shape, impl, TARGET_THREADS)
            if result is not None:
                xs.append(n)
                ys.append(result.counter("GFLOPs"))
                disturbed.append(result.clean_rounds == 0)
        if xs:
            style = "--" if impl in run.peers else "-"
            line, = ax.plot(xs, ys, style, marker="o", label=impl)
            # Points without a clean round: hollow, on top of the filled marker.
            bad = [(x, y) for x, y, d in zip(xs, ys, disturbed) if d]
            if bad:
                any_disturbed = True
                ax.plot([x for x, _ in bad], [y for _, y in bad], "o", markersize=9,
                        markerfacecolor="white", markeredgecolor=line.get_color())
    peak = run.peak("sgemm", TARGET_THREADS)
    if peak is not None:
        ax.axhline(peak.counter("GFLOPs"), color="gray", linestyle=":",
                   label="sgemm 2048³ (OpenBLAS)")
    ax.set_xscale("log", base=2)
    ax.set_xticks([n for _, n in points])
    ax.set_xticklabels([str(n) for _, n in points])
    ax.set_xlabel("sequence length N (self-attention, B1 H8 d64, non-causal)")
    ax.set_ylabel("GFLOP/s (4 N² H d / time)")
    title = (f"attention, {TARGET_THREADS} threads: attngen schedules (solid) and peers "
             "(dashed)")
    if any_disturbed:
        title += "\nhollow: no round on a quiet machine"
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def geometric_mean(values):
    product = 1.0
    for v in values:
        product *= v
    return product ** (1.0 / len(values)) if values else 0.0


def tuning_section(path):
    """The tuned-versus-default-versus-autoschedulers table of a tuning database (attngen tune
    measures all three in one process per shape, on the shapes the defaults were not written
    for)."""
    with open(path) as f:
        db = json.load(f)
    autos = sorted({name for b in db["buckets"] for s in b["shapes"] for name in s["baselines_ms"]})
    rel = os.path.relpath(path, REPO_DIR)
    out = ["## Tuned kernels", ""]
    out.append(f"From the tuning database `{rel}`, which `attngen tune` wrote (command: "
               f"`{db.get('command', '?')}`) on {db.get('machine', '?')}, created "
               f"{db.get('created', '?')}, in {db.get('elapsed_seconds', 0):.0f} s. Each row's "
               "times were measured by the tuner in one process: the tuned kernel, the hand "
               "default that the build without the database runs for that shape, and Halide's "
               "autoschedulers applied to the same algorithm (a missing cell: it failed the "
               "correctness check, did not compile in time, or the budget ran out first). "
               "A bucket whose best candidate did not beat the default keeps the default "
               "(1.00x).")
    out.append("")
    header = ["shape", "kernel", "tuned ms", "default ms", "x default"]
    header += [f"{a} ms" for a in autos] + ["x best autoscheduler"]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * 2 + "---:|" * (len(header) - 2))
    speedups, vs_auto = [], []
    for b in db["buckets"]:
        if b.get("improves"):
            params = ",".join(f"{k}={v}" for k, v in sorted(b["params"].items()))
            kernel = f"{b['schedule']} {{{params}}}"
        else:
            kernel = "default kept"
        for s in b["shapes"]:
            tuned, default = s["time_ms"], s["default_ms"]
            speedup = default / tuned if tuned > 0 and default > 0 else 0
            if speedup:
                speedups.append(speedup)
            cells = [s["shape"], kernel, f"{tuned:.2f}", f"{default:.2f}", f"{speedup:.2f}x"]
            best_auto = min(s["baselines_ms"].values(), default=0)
            for a in autos:
                ms = s["baselines_ms"].get(a)
                cells.append(f"{ms:.1f}" if ms else "-")
            if best_auto and tuned > 0:
                vs_auto.append(best_auto / tuned)
                cells.append(f"{best_auto / tuned:.1f}x")
            else:
                cells.append("-")
            out.append("| " + " | ".join(cells) + " |")
    out.append("")
    if speedups:
        mean = geometric_mean(speedups)
        verdict = "met" if mean >= 1.15 and min(speedups) >= 0.97 else "missed"
        out.append(f"Geometric mean of tuned over default: **{mean:.3f}x** over "
                   f"{len(speedups)} shapes (lowest {min(speedups):.3f}x); the tuner's issue asks "
                   f"for at least 1.15x and never below 0.97x: **{verdict}**.")
    if vs_auto:
        out.append(f"The tuned kernels are {min(vs_auto):.1f}x to {max(vs_auto):.1f}x faster than "
                   "the best autoscheduler of each shape.")
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
            parts.append(f"sgemm 2048³ (OpenBLAS): **{sgemm.counter('GFLOPs'):.1f} GFLOP/s**")
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
        out.append(f"### ({shape}) {run.shapes[shape]}")
        out.append("")
        out.append(shape_table(run, shape))
        notes = []
        for impl in run.schedules + run.peers:
            if any(run.get(shape, impl, t) or ("attention", shape, impl, t) in run.errors
                   for t in run.thread_counts):
                continue
            reasons = [reason for shapes, reason in run.excluded.get(impl, [])
                       if shape in shapes]
            if reasons:
                notes.append(f"{impl} is not timed on this shape: {reasons[0]}.")
            else:
                notes.append(f"{impl} has no kernel for this shape or was filtered out.")
        for note in notes:
            out.append("")
            out.append(note)
        out.append("")
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
