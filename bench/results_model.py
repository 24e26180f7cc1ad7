"""The data of bench/make_results.py: its constants, the benchmark results of the rounds (load,
Result, Run) and the small formatting helpers that the other results_*.py modules share."""

import json
import os
import statistics

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
RESULTS_MD = os.path.join(BENCH_DIR, "RESULTS.md")
PLOT_PNG = os.path.join(BENCH_DIR, "results_gflops.png")
# Why a speed target was missed, measured outside the rounds (profiles, paired experiments):
# printed under a target only when the rounds being written miss it.
MISS_ANALYSIS = os.path.join(BENCH_DIR, "miss_analysis.json")

# Halide 14's autoschedulers: the names of the schedules whose kernels Halide's autoscheduler
# plugins plan (schedules/autoschedulers/info.cpp), which the benchmarks report them by.
AUTOSCHEDULERS = ("Adams2019", "Li2018", "Mullapudi2016")
# The hand schedule that the targets are about.
FUSED = "cpu_fused"
# The targets are stated for the machine's two threads.
TARGET_THREADS = 2
# The shapes with score and mask modifiers (bench/shapes.cpp, issue 40), in the order of their
# section of RESULTS.md; another shape with modifiers comes after them.
MODIFIER_SHAPES = ("w", "p", "bs", "bb")
# The shapes stored in 16 bits (bench/shapes.cpp), in the order of their section.
STORAGE_SHAPES = ("b_bf16", "c_bf16", "f_bf16", "b_f16", "e_kvbf16", "e_kvf16")
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
        self.modifiers = {}  # id -> "window_left1024", for the shapes with modifiers
        self.storage = {}  # id -> "bf16" or "K/V f16", for the shapes stored in 16 bits
        self.excluded = {}  # implementation -> [(shape ids, reason)]
        for key, value in context.items():
            if key.startswith("shape/"):
                self.shapes[key[len("shape/"):]] = value
            elif key.startswith("sweep/"):
                self.sweep[key[len("sweep/"):]] = int(value)
            elif key.startswith("modifiers/"):
                self.modifiers[key[len("modifiers/"):]] = value
            elif key.startswith("storage/"):
                self.storage[key[len("storage/"):]] = value
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
        # Main shapes (letters) first, then the sweep-only points by N, then the shapes stored
        # in 16 bits, then the shapes with modifiers; the last
        # two have sections of their own.
        def order(shape):
            sweep_only = shape.startswith("n")
            modified = shape in self.modifiers
            stored = shape in self.storage
            rank = (MODIFIER_SHAPES.index(shape) if shape in MODIFIER_SHAPES
                    else len(MODIFIER_SHAPES))
            return (modified, rank if modified else 0, stored,
                    STORAGE_SHAPES.index(shape) if shape in STORAGE_SHAPES else 0, sweep_only,
                    self.sweep.get(shape, 0) if sweep_only else 0, shape)

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


def geometric_mean(values):
    product = 1.0
    for v in values:
        product *= v
    return product ** (1.0 / len(values)) if values else 0.0
