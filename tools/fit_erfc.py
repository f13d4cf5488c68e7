"""Fit the polynomial of the cpu backend's float32 erfc (``plugins/cpu/src/ops.h``, ``erfc_f32``).

For a = |z| >= 0, ``erfc(a) = exp(-a^2) * t * S(u)`` with ``t = 1 / (1 + K a)`` and
``u = ALPHA t + BETA`` mapping t's range [1 / (1 + K * TOP), 1] onto [-1, 1]. S is a
polynomial in u, least-squares fitted at Chebyshev points in u with relative weights (near
minimax), from the C library's erfc and exp in float64. Then every float32 step the kernel
takes is simulated in NumPy float32 (t's division, u, Horner) to print the error of t * S,
in units of 2^-24 relative, per degree. Prints the constants for ops.h::

    python tools/fit_erfc.py [--degree 10] [--k 1.0]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from numpy.polynomial import chebyshev

TOP = 10.1  # erfc(a) is below float32's smallest subnormal past 10.06


def erfcx(a: np.ndarray) -> np.ndarray:
    return np.array([math.erfc(v) * math.exp(v * v) for v in a])


def fit(k: float, degree: int) -> tuple[np.ndarray, float, float]:
    """(monomial coefficients of S in u, ALPHA, BETA)."""
    tmin = 1 / (1 + k * TOP)
    n = 1000
    u = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    t = tmin + (u + 1) / 2 * (1 - tmin)
    s = erfcx((1 / t - 1) / k) / t
    coefficients = chebyshev.cheb2poly(chebyshev.chebfit(u, s, degree, w=1 / s))
    return coefficients, 2 / (1 - tmin), -2 * tmin / (1 - tmin) - 1


def float32_error(k: float, coefficients: np.ndarray, alpha: float, beta: float) -> float:
    """max |t * S - erfcx(a)| / erfcx(a) / 2^-24 over 200001 float32 a in [0, TOP]."""
    a = np.linspace(0, TOP, 200001).astype(np.float32)
    f32 = np.float32
    t = (f32(1) / (f32(1) + f32(k) * a)).astype(f32)
    u = (t * f32(alpha) + f32(beta)).astype(f32)
    acc = f32(coefficients[-1])
    for c in coefficients[-2::-1]:
        acc = (acc * u + f32(c)).astype(f32)
    got = (acc * t).astype(f32).astype(np.float64)
    want = erfcx(a.astype(np.float64))
    return float((np.abs(got - want) / want).max() / 2**-24)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--degree", type=int, default=10)
    parser.add_argument("--k", type=float, default=1.0)
    args = parser.parse_args()
    for degree in range(6, 16):
        c, alpha, beta = fit(args.k, degree)
        print(f"degree {degree:2d}: t * S within {float32_error(args.k, c, alpha, beta):.2f} x 2^-24")
    c, alpha, beta = fit(args.k, args.degree)
    print(f"\nconstexpr float K = {args.k!r}f, ALPHA = {alpha:.9g}f, BETA = {beta:.9g}f;")
    print("constexpr float S[] = {" + ", ".join(f"{v:.9g}f" for v in c) + "};  // u^0 first")


if __name__ == "__main__":
    main()
