"""Floating-point limits of softmax and masking (page: numerics and pitfalls).

``exp(x)`` overflows once ``x > ln(max_float)``: about 88.72 in float32 (max ~ 2^128, so
the threshold is ~ 128 ln 2) and about 11.09 in float16 (max 65504). A softmax that
exponentiates raw scores therefore returns inf/inf = NaN for scores that are perfectly
ordinary; subtracting the row maximum first (``mhalib.softmax``) never overflows.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from . import _checks


def exp_overflow_threshold(dtype: DTypeLike = "float32") -> float:
    """The largest ``x`` with finite ``exp(x)`` in ``dtype``: ``ln(finfo(dtype).max)``.

    Computed in float64, or in ``dtype``'s own precision where that is wider, so a type
    wider than float64 gets its own value
    (``np.longdouble``, 80-bit on x86: about 11356.52, beyond float64's 709.78), returned as a
    Python float. A dtype that is not a numpy float dtype (integers, bool, None) is refused
    with a ``ValueError``.
    """
    dt = _checks.float_dtype(dtype, "dtype")
    wide = np.promote_types(dt, np.float64)  # float64, or longdouble: its max does not fit float64
    return float(np.log(np.finfo(dt).max.astype(wide)))


def naive_softmax(x: ArrayLike, axis: int = -1) -> np.ndarray:
    """DEMONSTRATION ONLY: ``exp(x) / sum(exp(x))`` without subtracting the maximum.

    Kept so the numerics page can show it failing: in float32 any score above ~88.72
    overflows to inf and the row becomes NaN. Computed in ``x``'s own dtype. Use
    ``mhalib.softmax`` for real work.
    """
    arr = _checks.float_array(x, "x", finite=False)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(arr)
        return e / e.sum(axis=axis, keepdims=True)


def masked_fill_value(value: float, dtype: DTypeLike = "float16") -> float:
    """What a mask constant such as ``-1e9`` becomes when stored in ``dtype``.

    ``-1e9`` is below float16's range (min -65504) and becomes ``-inf``; that is harmless
    for a partly masked row but a fully masked row then gives NaN in a naive softmax.

    The constant is rounded once, from its exact value, to the nearest value of ``dtype``
    (ties to even; past the largest, ``-inf``), as ``torch.masked_fill`` stores it: an
    integer or a longdouble is not taken through float64 first (``-(2**60 + 2**36 + 1)``,
    rounded to float64, lands on a float32 midpoint and then on the wrong side: pass sixty).
    ``-inf``, the constant of an exact mask, stays ``-inf``. A Python float for float16,
    float32 and float64; an ``np.longdouble`` for a type wider than float64 (a float could
    not hold it). Refused: a ``value`` that is not a real number (``TypeError``), one that
    is NaN or ``+inf`` or beyond float64's range (``10**400``; ``ValueError``), and a
    ``dtype`` that is not a numpy float dtype (``'int8'``, ``'bool'``, None:
    ``ValueError``), where a mask constant would silently become 0 or 1.
    """
    v = _checks.finite_real(value, "value", neg_inf=True)
    dt = _checks.float_dtype(dtype, "dtype")
    if v == 0:  # (a zero keeps its sign: -0.0 is stored as -0.0)
        return float(v) if dt.itemsize <= 8 else dt.type(v)
    if v == -math.inf:
        exact = None
    elif isinstance(value, (numbers.Integral, np.integer)):
        exact = Fraction(int(value))
    else:  # a float of any width: its exact value
        exact = Fraction(*value.as_integer_ratio()) if isinstance(value, np.floating) else Fraction(value)
    stored = _rounded_to(exact, dt)
    return stored if dt.itemsize > 8 else float(stored)


def _rounded_to(exact: Fraction | None, dt: np.dtype) -> np.floating:
    """``exact`` (None: -inf) rounded once to the nearest value of float type ``dt``, ties to
    even, ``+-inf`` where it rounds past the largest (IEEE 754's rule): from the type's
    precision and exponent range, in integers."""
    if exact is None:
        return dt.type(-np.inf)
    if exact == 0:
        return dt.type(0.0)
    info = np.finfo(dt)
    bits = info.nmant + 1  # the significand's bits, the leading one included
    size = abs(exact)
    e = size.numerator.bit_length() - size.denominator.bit_length()  # 2**(e - 1) < size < 2**(e + 1)
    e -= size < Fraction(2) ** e  # now 2**e <= size < 2**(e + 1)
    k = max(e, int(info.minexp)) - bits + 1  # the spacing there is 2**k (below the normals: fixed)
    steps = round(size / Fraction(2) ** k)  # the nearest multiple of 2**k, ties to even (Fraction's round)
    if steps * Fraction(2) ** k > Fraction(*info.max.as_integer_ratio()):
        return dt.type(-np.inf if exact < 0 else np.inf)
    if steps == 2**bits:  # carried into the next power of two
        steps, k = steps // 2, k + 1
    size = np.ldexp(np.asarray(steps, dtype=np.uint64).astype(dt), k)  # steps < 2**bits <= 2**64: exact
    return -size if exact < 0 else size


def stored_as(a: np.ndarray, dtype: DTypeLike) -> np.ndarray:
    """``a`` cast to ``dtype``, each entry rounded once to the nearest (ties to even), as a
    store into a ``dtype`` buffer does. numpy's cast from longdouble to float16 goes through
    float64 and rounds twice (1 + 2**-11 + 2**-60 went to the tie 1 + 2**-11, then to 1:
    pass sixty-one); there the float64 step rounds to odd (a value between two float64s
    takes the one with an odd last bit), which the second rounding, 42 bits shorter, then
    rounds as the exact value would. Every other cast numpy makes is one rounding."""
    dt = np.dtype(dtype)
    if not (a.dtype == np.longdouble and a.dtype.itemsize > 8 and dt == np.float16):
        return a.astype(dt)
    with np.errstate(over="ignore", invalid="ignore"):
        near = a.astype(np.float64)  # (shape of a) nearest float64
        between = np.isfinite(near) & (a != near.astype(np.longdouble))  # inexact: x lies strictly between
        even = (near.view(np.uint64) & 1) == 0
        odd = np.where(between & even, np.nextafter(near, np.where(a > near, np.inf, -np.inf)), near)
    return odd.astype(dt)
