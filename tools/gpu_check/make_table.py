#!/usr/bin/env python3
"""Merges cuda_bench's Google Benchmark JSON and torch_sdpa.py's JSON lines into a table.

    make_table.py CUDA_BENCH.json TORCH.jsonl > table.md

One row per shape: each implementation's median time and rate (GFLOP/s; GB/s of K and V for the
decode shape), and attngen's best schedule against PyTorch's best backend.
"""
import json
import sys


def main():
    bench_path, torch_path = sys.argv[1], sys.argv[2]
    rows = {}  # shape -> impl -> (ms, rate)
    notes = []
    with open(bench_path) as f:
        bench = json.load(f)
    context = bench.get("context", {})
    for b in bench.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        impl, shape = b["run_name"].split("/")[0], b["run_name"].split("/")[1]
        if b.get("error_occurred"):
            notes.append(f"{impl} {shape}: {b.get('error_message')}")
            continue
        rate = b["KV_GB/s"] if shape.startswith("e_") else b["GFLOP/s"]
        rows.setdefault(shape, {})[impl] = (b["real_time"], rate)
    device = ""
    with open(torch_path) as f:
        for line in f:
            r = json.loads(line)
            if "skipped" in r:
                notes.append("PyTorch: " + r["skipped"])
            elif "device" in r:
                device = f"{r['device']}, PyTorch {r['torch']}"
            elif "error" in r:
                notes.append(f"{r['impl']} {r['shape']}: {r['error']}")
            else:
                rate = r["kv_gbs"] if r["shape"].startswith("e_") else r["gflops"]
                rows.setdefault(r["shape"], {})[r["impl"]] = (r["ms"], rate)

    impls = ["attngen_cuda_fused", "attngen_cuda_tiled", "torch_sdpa_math", "torch_sdpa_efficient",
             "torch_sdpa_flash"]
    print(f"GPU: {device or 'unknown'}; attngen run at {context.get('date', '?')}; float32 "
          "unless the shape ends in bf16 or f16 (q, k, v and out) or kvbf16 or kvf16 (k and v), "
          "medians. Rate: GFLOP/s (4 B H Nq Nk D, causal half), for (e) GB/s of K and V read "
          "as stored.\n")
    print("| shape | " + " | ".join(f"{i} ms (rate)" for i in impls) + " | best attngen / best torch |")
    print("|---" * (len(impls) + 2) + "|")
    for shape in sorted(rows):
        cells, best_a, best_t = [], None, None
        for i in impls:
            if i in rows[shape]:
                ms, rate = rows[shape][i]
                cells.append(f"{ms:.3f} ({rate:.0f})")
                if i.startswith("attngen"):
                    best_a = ms if best_a is None else min(best_a, ms)
                else:
                    best_t = ms if best_t is None else min(best_t, ms)
            else:
                cells.append("-")
        speedup = f"{best_t / best_a:.2f}x" if best_a and best_t else "-"
        print(f"| {shape} | " + " | ".join(cells) + f" | {speedup} |")
    # A failed benchmark reports once per repetition; each reason is listed once.
    for n in dict.fromkeys(notes):
        print(f"\n- {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
