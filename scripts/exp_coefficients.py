#!/usr/bin/env python3
"""Fits the polynomial that exp2_nonpositive (generators/algorithm/numerics.cpp) uses for 2^r.

2^r ~ 1 + c1 r + ... + c5 r^5 on [-1/2, 1/2], with the constant term fixed at 1 so that 2^0 is
exactly 1, and the other coefficients chosen to minimize the largest relative error (Lawson's
iteratively reweighted least squares on Chebyshev points, a near-minimax fit). Prints the
largest relative error in double precision and the coefficients rounded to float32.
`--degree 6` gives the more accurate and slower fit that numerics.cpp compares against.
Plain Python: no packages needed.
"""
import argparse
import math
import struct

POINTS = 2001
ITERATIONS = 60


def solve(matrix, rhs):
    """Gauss-Jordan elimination with partial pivoting."""
    n = len(rhs)
    m = [row[:] + [rhs[i]] for i, row in enumerate(matrix)]
    for i in range(n):
        pivot = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[pivot] = m[pivot], m[i]
        for r in range(n):
            if r != i:
                f = m[r][i] / m[i][i]
                for c in range(i, n + 1):
                    m[r][c] -= f * m[i][c]
    return [m[i][n] / m[i][i] for i in range(n)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--degree", type=int, default=5)
    degree = parser.parse_args().degree
    # r = x - round(x) lies within half a step of the rounding.
    xs = [math.cos(math.pi * i / (POINTS - 1)) * 0.5 for i in range(POINTS)]
    fs = [2.0**x for x in xs]
    weights = [1.0 / POINTS] * POINTS
    for _ in range(ITERATIONS):
        ata = [[0.0] * degree for _ in range(degree)]
        atb = [0.0] * degree
        for x, f, w in zip(xs, fs, weights):
            scale = w / (f * f)
            row = [x**k for k in range(1, degree + 1)]
            for i in range(degree):
                atb[i] += scale * row[i] * (f - 1)
                for j in range(degree):
                    ata[i][j] += scale * row[i] * row[j]
        coeffs = solve(ata, atb)
        errors = [(1 + sum(c * x**k for k, c in enumerate(coeffs, 1)) - f) / f
                  for x, f in zip(xs, fs)]
        weights = [w * abs(e) + 1e-300 for w, e in zip(weights, errors)]
        total = sum(weights)
        weights = [w / total for w in weights]
    print(f"largest relative error: {max(abs(e) for e in errors):.3e}")
    for k, c in enumerate(coeffs, 1):
        c32 = struct.unpack("f", struct.pack("f", c))[0]
        print(f"c{k} = {c32:.10e}")


if __name__ == "__main__":
    main()
