#!/usr/bin/env python3
"""Fits the rational function that capped_tanh (generators/algorithm/score_modifiers.cpp) uses.

tanh(x) ~ x P(x^2) / Q(x^2) on [0, X], with P and Q of degree 4 and P(0) = Q(0) = 1, so that
tanh(x) ~ x near 0 with a small relative error. The coefficients minimize the largest relative
error (Lawson's iteratively reweighted least squares on the linearized residual
x P(y) - tanh(x) Q(y), on Chebyshev points): a near-minimax fit. Prints the largest relative
error in double precision, then the coefficients rounded to float32 and the largest relative
error of a float32 evaluation (Horner, as the kernels run it) with the argument clamped to
[-X, X], over a dense grid and past X, and how far above 1 it goes (the kernels do not clamp the
result). X = 9: tanh(9) rounds to 1 in float32, so a clamped argument saturates.
Needs NumPy (python3-numpy).
"""
import argparse

import numpy as np

POINTS = 4000
ITERATIONS = 200


def fit(degree_p, degree_q, bound):
    xs = (np.cos(np.pi * np.arange(POINTS) / (POINTS - 1)) * 0.5 + 0.5) * bound
    xs = xs[xs > 1e-4]
    f = np.tanh(xs)
    y = xs * xs
    matrix = np.concatenate(
        [np.stack([xs * y**k for k in range(1, degree_p + 1)], 1),
         np.stack([-f * y**k for k in range(1, degree_q + 1)], 1)], 1)
    rhs = f - xs
    weights = np.ones_like(xs)
    for _ in range(ITERATIONS):
        scale = weights / f
        solution = np.linalg.lstsq(matrix * scale[:, None], rhs * scale, rcond=None)[0]
        p = np.concatenate([[1.0], solution[:degree_p]])
        q = np.concatenate([[1.0], solution[degree_p:]])
        errors = np.abs(xs * np.polyval(p[::-1], y) / np.polyval(q[::-1], y) - f) / f
        # A damped Lawson step: the undamped one oscillates on this linearized problem.
        weights = weights * (errors / errors.max())**0.3
        weights /= weights.max()
    return p, q, errors.max()


def evaluate_float32(x, p, q, bound):
    x = np.clip(x.astype(np.float32), np.float32(-bound), np.float32(bound))
    y = x * x
    num = np.full_like(x, p[-1])
    for c in p[-2::-1]:
        num = num * y + c
    den = np.full_like(x, q[-1])
    for c in q[-2::-1]:
        den = den * y + c
    return x * num / den


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--degree-p", type=int, default=4)
    parser.add_argument("--degree-q", type=int, default=4)
    parser.add_argument("--bound", type=float, default=9.0)
    args = parser.parse_args()
    p, q, worst = fit(args.degree_p, args.degree_q, args.bound)
    print(f"largest relative error (double): {worst:.3e}")
    p32, q32 = p.astype(np.float32), q.astype(np.float32)
    x = np.concatenate([np.geomspace(1e-30, 1e-3, 100001),
                        np.linspace(1e-3, 2 * args.bound, 2000001)]).astype(np.float32)
    exact = np.tanh(x.astype(np.float64))
    approx = evaluate_float32(x, p32, q32, args.bound)
    error = np.abs(approx - exact) / exact
    print(f"largest relative error (float32): {error.max():.3e} at x = {x[error.argmax()]:.6g}")
    above = float(approx.max()) - 1
    print(f"largest value (float32): 1 + {above:.3e} at x = {x[approx.argmax()]:.6g}")
    for name, coeffs in (("p", p32), ("q", q32)):
        for k, c in enumerate(coeffs):
            print(f"{name}{k} = {float(c):.10e}")


if __name__ == "__main__":
    main()
