"""softmax, log_softmax, logsumexp and layer_norm (``ndplane.composite``) on the device against
their algorithm in float64. A backend declaring ``fused:<op>`` runs its fused kernel here; one
without it runs the generic road, so both are held to the same oracle."""

from __future__ import annotations

import numpy as np
import pytest

import ndplane as nd
from ndplane.composite import layer_norm, log_softmax, logsumexp, softmax
from ndplane.conformance import _helpers as h

_FNS = {"softmax": softmax, "log_softmax": log_softmax, "logsumexp": logsumexp}
# float16 is computed in float16 by the generic road (every op rounds), in float32 by fused kernels.
_TOL = {"float16": 8e-3, "float32": 2e-5, "float64": 1e-12}


def _data(shape: tuple[int, ...], dtype: nd.DType, seed: int, specials: bool) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(shape) * 4
    if specials and len(shape) == 2 and shape[0] >= 4 and shape[1] >= 3:
        x[1, 1] = -np.inf  # one -inf: a zero of softmax
        x[2, :] = -np.inf  # a row of -inf: nan (softmax), -inf (logsumexp)
        x[3, 0] = np.nan  # a nan row stays nan
    return x.astype(h.np_dtype(dtype))


@pytest.mark.parametrize("op", sorted(_FNS))
def test_row_composites_match_their_algorithm(device: nd.Device, op: str) -> None:
    for dtype in h.supported(device, ("float",)):
        tol = _TOL[dtype.name]
        for shape in [(3, 7), (1, 1), (5, 1000), (64, 33), (6, 4099), (0, 4)]:
            x = _data(shape, dtype, len(shape) + shape[-1], specials=True)
            got = h.host(_FNS[op](nd.asarray(x, device=device))).astype(np.float64)
            want = h.composite_reference(op, x).astype(h.np_dtype(dtype)).astype(np.float64)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=f"{op} {shape} {dtype.name} on {device}")  # fmt: skip
            np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"{op} {shape} inf")


@pytest.mark.parametrize("op", sorted(_FNS))
def test_row_composites_along_any_axis(device: nd.Device, op: str) -> None:
    dtype = h.default(device, "real floating")
    x = _data((4, 3, 5), dtype, 1, specials=False)
    a = nd.asarray(x, device=device)
    for axis in (-1, 0, 1):
        got = h.host(_FNS[op](a, axis=axis))
        want = np.moveaxis(h.composite_reference(op, np.moveaxis(x, axis, -1)), -1, axis) if op != "logsumexp" \
            else h.composite_reference(op, np.moveaxis(x, axis, -1))  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=_TOL[dtype.name], atol=_TOL[dtype.name], err_msg=f"axis {axis}")


def test_layer_norm_matches_its_algorithm(device: nd.Device) -> None:
    for dtype in h.supported(device, ("float",)):
        tol = 4 * _TOL[dtype.name]
        for shape in [(3, 7), (1, 1), (5, 1000), (64, 33)]:
            x = _data(shape, dtype, shape[-1], specials=False)
            w = _data(shape[1:], dtype, 2, specials=False)
            b = _data(shape[1:], dtype, 3, specials=False)
            for weight, bias in ((None, None), (w, None), (w, b)):
                got = layer_norm(nd.asarray(x, device=device),
                                 None if weight is None else nd.asarray(weight, device=device),
                                 None if bias is None else nd.asarray(bias, device=device))  # fmt: skip
                want = h.composite_reference("layer_norm", x, weight, bias)
                np.testing.assert_allclose(h.host(got).astype(np.float64), want, rtol=tol, atol=tol,
                                           err_msg=f"layer_norm {shape} {dtype.name}")  # fmt: skip
