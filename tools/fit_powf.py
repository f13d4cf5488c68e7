"""Fit the two polynomials of the cpu backend's float32 pow (``plugins/cpu/src/ops.h``, ``powf_core``).

``powf_core(x, y)`` is ``2^t`` with ``t = y log2(x)`` in float64. For ``x = 2^k m`` with
``m`` in [sqrt(1/2), sqrt(2)), ``log2(m) = s Q(s^2)`` with ``s = (m - 1) / (m + 1)``, so
``|s| <= (sqrt(2) - 1) / (sqrt(2) + 1)`` and ``Q(z) = (2 / ln 2) atanh(sqrt(z)) / sqrt(z)``.
For ``t = n + f`` with ``n`` an integer and ``|f| <= 1/2``, ``2^f = 1 + f R(f)``, exact at
``f = 0``. Both are least-squares fits at Chebyshev points with weights that make the error
they minimise relative (near minimax), against mpmath at 200 bits. Prints, per degree, the
largest relative error of ``s Q(s^2)`` and of ``1 + f R(f)`` with the float64 coefficients,
and the constants of the chosen degrees in hexadecimal for ops.h::

    python tools/fit_powf.py [--q-degree 4] [--r-degree 5]    # needs mpmath (pip install mpmath)

The kernel needs about 2^-36 on ``log2(m)`` (``|y log2(m)|`` reaches 300 where ``t`` is still
in float32's range) and 2^-27 on ``2^f``: with those, the float32 result is within 0.56 ulp.
"""

from __future__ import annotations

import argparse

import mpmath
import numpy as np
from numpy.polynomial import chebyshev, polynomial

mpmath.mp.prec = 200
S_MAX = (mpmath.sqrt(2) - 1) / (mpmath.sqrt(2) + 1)
Z_MAX = float(S_MAX**2) * 1.0001


def q_exact(z: mpmath.mpf) -> mpmath.mpf:
    if z == 0:
        return 2 / mpmath.log(2)
    return 2 / mpmath.log(2) * mpmath.atanh(mpmath.sqrt(z)) / mpmath.sqrt(z)


def r_exact(f: mpmath.mpf) -> mpmath.mpf:
    return mpmath.log(2) if f == 0 else (mpmath.power(2, f) - 1) / f


def fit(exact, lo: float, hi: float, degree: int, weight) -> np.ndarray:
    """Monomial coefficients (degree 0 first) of the weighted fit of ``exact`` on [lo, hi]."""
    n = 600
    u = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    x = lo + (u + 1) / 2 * (hi - lo)
    y = np.array([float(exact(mpmath.mpf(float(v)))) for v in x])
    in_u = chebyshev.cheb2poly(chebyshev.chebfit(u, y, degree, w=weight(x, y)))
    # u = a x + b
    a, b = 2 / (hi - lo), -(lo + hi) / (hi - lo)
    out = np.zeros(1)
    for k, c in enumerate(in_u):
        out = polynomial.polyadd(out, c * polynomial.polypow([b, a], k))
    return out


def horner(coefficients: np.ndarray, x: mpmath.mpf) -> mpmath.mpf:
    acc = mpmath.mpf(0)
    for c in coefficients[::-1]:
        acc = acc * x + mpmath.mpf(float(c))
    return acc


def log_error(q: np.ndarray) -> float:
    """max |s Q(s^2) - log2(m)| / |log2(m)| over m in [sqrt(1/2), sqrt(2))."""
    worst = mpmath.mpf(0)
    for s in np.linspace(-float(S_MAX), float(S_MAX), 4001):
        if s == 0:
            continue
        sm = mpmath.mpf(float(s))
        exact = 2 / mpmath.log(2) * mpmath.atanh(sm)
        worst = max(worst, abs(sm * horner(q, sm * sm) / exact - 1))
    return float(worst)


def exp2_error(r: np.ndarray) -> float:
    """max |1 + f R(f) - 2^f| / 2^f over |f| <= 1/2."""
    worst = mpmath.mpf(0)
    for f in np.linspace(-0.5, 0.5, 4001):
        fm = mpmath.mpf(float(f))
        worst = max(worst, abs((1 + fm * horner(r, fm)) / mpmath.power(2, fm) - 1))
    return float(worst)


def fit_q(degree: int) -> np.ndarray:
    return fit(q_exact, 0.0, Z_MAX, degree, lambda x, y: 1 / np.abs(y))


def fit_r(degree: int) -> np.ndarray:
    # the error of 1 + f R(f) relative to 2^f is f (R~ - R) / 2^f
    return fit(r_exact, -0.5, 0.5, degree, lambda x, y: np.abs(x) / 2.0**x + 1e-3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--q-degree", type=int, default=4)
    parser.add_argument("--r-degree", type=int, default=5)
    args = parser.parse_args()
    for degree in range(3, 7):
        print(f"Q degree {degree}: log2(m) within 2^{np.log2(log_error(fit_q(degree))):.1f}")
    for degree in range(4, 8):
        print(f"R degree {degree}: 2^f within 2^{np.log2(exp2_error(fit_r(degree))):.1f}")
    q, r = fit_q(args.q_degree), fit_r(args.r_degree)
    print("Q (z^0 first):", ", ".join(float.hex(float(c)) for c in q))
    print("R (f^0 first):", ", ".join(float.hex(float(c)) for c in r))


if __name__ == "__main__":
    main()
