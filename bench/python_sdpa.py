"""The Python module's speed (docs/python.md, "Speed"): what a call through Python costs over
the C++ call, and attngen.torch.scaled_dot_product_attention against PyTorch's attention on
shapes (b) and (f) of bench/shapes.cpp.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python_sdpa.py [--rounds 15]

Every timing is the median over rounds; the variants of one comparison take turns within each
round, so that a slow spell of a shared machine falls on all of them. Both libraries use two
threads.
"""

import argparse
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import attngen
import attngen.torch
from attngen import _attngen


def timed(fn):
    """fn as a timer: calls -> seconds per call of fn, over that many calls."""
    def run(calls):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - start) / calls
    return run


def medians(timers, rounds, calls):
    """{name: median seconds per call}, the timers taking turns in each round."""
    samples = {name: [] for name in timers}
    for timer in timers.values():
        timer(1)  # Warm up: first-call costs (thread pool, allocations) are not per-call costs.
    for _ in range(rounds):
        for name, timer in timers.items():
            samples[name].append(timer(calls))
    return {name: statistics.median(s) for name, s in samples.items()}


def overhead(rounds, calls):
    """Python's cost per call over the C++ call, on a small shape: B1 H2 Nq=Nk=16 d64."""
    shape = (1, 2, 16, 64)
    q, k, v = (np.random.default_rng(s).standard_normal(shape, dtype=np.float32) for s in range(3))
    out = np.empty(shape, np.float32)
    tq, tk, tv, tout = (torch.from_numpy(a) for a in (q, k, v, out))
    result = medians({
        # The C++ loop in the module, GIL released: attngen::attention(args) back to back.
        "C++ attngen::attention":
            lambda calls: _attngen._time_attention_calls(q, k, v, calls, out=out),
        "attention(numpy, out=)": timed(lambda: attngen.attention(q, k, v, out=out)),
        "attention(numpy)": timed(lambda: attngen.attention(q, k, v)),
        "attention(torch, out=)": timed(lambda: attngen.attention(tq, tk, tv, out=tout)),
        "attention(torch)": timed(lambda: attngen.attention(tq, tk, tv)),
        "torch.scaled_dot_product_attention":
            timed(lambda: attngen.torch.scaled_dot_product_attention(tq, tk, tv)),
    }, rounds, calls)
    base = result["C++ attngen::attention"]
    print(f"\nPer-call cost on B1 H2 Nq=Nk=16 d64, medians of {rounds} rounds of {calls} calls:")
    print(f"  {'C++ attngen::attention':40s} {base * 1e6:8.2f} us")
    for name, t in result.items():
        if name != "C++ attngen::attention":
            print(f"  {name:40s} {t * 1e6:8.2f} us  (+{(t - base) * 1e6:.2f} us over C++)")


def torch_math(q, k, v):
    """softmax(q k^T * scale) v in PyTorch operations, as a model written without a fused
    attention would compute it."""
    scale = q.shape[-1] ** -0.5
    return torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v


def speed(rounds):
    """attngen.torch.scaled_dot_product_attention against PyTorch 1.13's attention:
    F._scaled_dot_product_attention (the attention that nn.MultiheadAttention's forward calls)
    and the same written as torch operations."""
    print(f"\nShapes of bench/shapes.cpp, float32, medians of {rounds} rounds:")
    for name, (B, H, Nq, Nk, d) in {"b": (1, 8, 2048, 2048, 64), "f": (1, 8, 256, 1024, 64)}.items():
        g = torch.Generator().manual_seed(0)
        q = torch.randn(B, H, Nq, d, generator=g)
        k, v = torch.randn(B, H, Nk, d, generator=g), torch.randn(B, H, Nk, d, generator=g)
        ours = attngen.torch.scaled_dot_product_attention(q, k, v)
        torch.testing.assert_close(ours, torch_math(q, k, v), atol=1e-4, rtol=1e-3)
        result = medians({
            "attngen.torch.scaled_dot_product_attention":
                timed(lambda: attngen.torch.scaled_dot_product_attention(q, k, v)),
            "F._scaled_dot_product_attention":
                timed(lambda: F._scaled_dot_product_attention(q, k, v, None, 0.0, False, False)),
            "softmax(q k^T * scale) v": timed(lambda: torch_math(q, k, v)),
        }, rounds, calls=1)
        ours = result.pop("attngen.torch.scaled_dot_product_attention")
        flops = 2 * B * H * Nq * Nk * 2 * d
        print(f"  ({name}) B{B} H{H} Nq{Nq} Nk{Nk} d{d}: attngen {ours * 1e3:.2f} ms "
              f"({flops / ours / 1e9:.0f} GFLOP/s)")
        for other, t in result.items():
            print(f"      {other:36s} {t * 1e3:8.2f} ms   attngen {t / ours:.1f}x as fast")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000, help="calls per round, small shape")
    args = parser.parse_args()
    torch.set_num_threads(2)
    attngen.set_num_threads(2)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    overhead(args.rounds, args.calls)
    speed(args.rounds)


if __name__ == "__main__":
    main()
