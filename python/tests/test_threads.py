"""Several Python threads calling at once get correct results, and Python runs while a kernel
does: the GIL is released for the kernel's whole run."""

import threading
import time

import numpy as np

import attngen
from conftest import assert_close, randn, reference


def test_threads_calling_at_once_agree_with_the_reference():
    shapes = [(1, 4, 64, 300, 64), (1, 2, 33, 129, 96), (2, 4, 17, 200, 64), (1, 8, 7, 257, 64)]
    cases = []
    for t, (B, H, Nq, Nk, d) in enumerate(shapes):
        q, k, v = (randn(B, H, N, d, seed=3 * t + i) for i, N in enumerate((Nq, Nk, Nk)))
        causal = t % 2 == 1
        cases.append((q, k, v, causal, reference(q, k, v, causal=causal)[0]))
    results = [[] for _ in cases]
    barrier = threading.Barrier(len(cases))

    def work(t):
        q, k, v, causal, _ = cases[t]
        barrier.wait()
        for _ in range(20):
            results[t].append(attngen.attention(q, k, v, causal=causal))

    workers = [threading.Thread(target=work, args=(t,)) for t in range(len(cases))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for t, case in enumerate(cases):
        assert len(results[t]) == 20
        assert_close(results[t][0], case[4])
        for out in results[t][1:]:
            np.testing.assert_array_equal(out, results[t][0])


def test_python_runs_while_a_kernel_runs():
    # One long call in a worker thread (B1 H16 N2048 d64: about 17 GFLOP, tens of milliseconds
    # or more) while this thread records the time in a loop. Were the GIL held during the
    # kernel, this thread could not run from the call's start until the kernel returned: the
    # largest gap between its records within the call would be nearly the whole call (the
    # interpreter hands the GIL over at most every switch interval, 5 ms, around the call's
    # Python lines). With the GIL released, the gaps are the operating system's time slices.
    q, k, v = (randn(1, 16, 2048, 64, seed=s) for s in range(3))
    span = {}
    started = threading.Event()

    def call():
        started.set()
        span["start"] = time.perf_counter()
        attngen.attention(q, k, v)
        span["end"] = time.perf_counter()

    worker = threading.Thread(target=call)
    ticks = []
    worker.start()
    started.wait()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    start, end = span["start"], span["end"]
    assert end - start > 0.030, f"the call took {end - start:.3f} s: too short to tell"
    points = [start] + [t for t in ticks if start < t < end] + [end]
    gap = max(b - a for a, b in zip(points, points[1:]))
    assert gap < (end - start) / 2, (
        f"this thread did not run for {gap * 1e3:.0f} ms of a {(end - start) * 1e3:.0f} ms call: "
        "is the GIL held while the kernel runs?")
