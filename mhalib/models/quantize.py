"""Weights stored as small integers: symmetric quantization in groups (page: look inside a real model).

A weight matrix ``W (N, K)`` (a ``torch.nn.Linear`` weight: one row per output channel, or an
embedding table: one row per token) is cut into groups of ``g`` consecutive entries along each
row. Each group gets one scale ``s``, and each weight an integer ``q`` with ``bits`` bits:

    M     = 2**(bits - 1) - 1                 (127 for 8 bits, 511 for 10)
    s     = 2**(c / STEPS),  c = ceil(STEPS * log2(max|W_group| / M))
    q     = round(W / s),    |q| <= M
    W'    = q * s                             (what the model computes with)

The scale is the smallest power of ``2**(1/STEPS)`` that is at least ``max|W_group| / M``, so no
weight is clipped, and it is stored as one byte: the exponent ``c`` relative to the smallest
exponent of the matrix (``base``), plus 1; the byte 0 marks a group of zeros. Rounding puts
every weight within ``s / 2`` of its true value, and ``s`` is at most ``2**(1/STEPS)`` (4.4 %)
above the ideal ``max|W_group| / M``. With ``g = K`` this is the usual "per output channel"
quantization; smaller groups follow a row's large and small stretches more closely, for one
more byte per group.

Example: ``W = [[0.5, -1.27]]`` with 8 bits and one group: ``max|W| / M = 0.01``, ``c =
ceil(16 log2 0.01) = -106``, ``s = 2**(-106/16) = 0.01012``, ``q = [49, -125]``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks

#: Scale exponents per octave: neighbouring scales differ by 2**(1/16), 4.4 %.
STEPS = 16
#: The exponents one byte can hold above a matrix's smallest (the byte 0 is a zero group).
SPAN = 254


@dataclass(frozen=True)
class Quantized:
    """A matrix as integers and one-byte scale codes (see the module docstring).

    ``q (N, K)`` int16 in ``[-M, M]``; ``codes (N, K // group)`` uint8, 0 for a group of
    zeros, else ``c - base + 1``; ``base`` the smallest exponent ``c``."""

    q: np.ndarray
    codes: np.ndarray
    base: int
    bits: int
    group: int

    @property
    def scales(self) -> np.ndarray:
        """``s`` of every group, ``(N, K // group)`` float64; 0 for a group of zeros."""
        return np.where(self.codes == 0, 0.0, np.exp2((self.base + self.codes.astype(np.int64) - 1) / STEPS))

    def dequantize(self) -> np.ndarray:
        """``W' = q * s`` as float32, ``(N, K)``."""
        N, K = self.q.shape
        s = np.repeat(self.scales, self.group, axis=1)  # (N, K // g) -> (N, K)
        return (self.q * s).astype(np.float32)


def quantize(weight: ArrayLike, bits: int, group: int) -> Quantized:
    """Quantize ``weight (N, K)`` to ``bits``-bit integers with one scale per ``group`` entries of a row.

    ``bits`` is 2 to 16; ``group`` must divide ``K``. A matrix whose nonzero groups span more
    than ``SPAN / STEPS`` (about 16) octaves of scale cannot be coded in one byte per scale and
    is refused, as is anything that is not a finite 2-D real matrix, and a group whose largest
    |value| is so small (below about 1.5e-36 at 8 bits) that its scale would be a subnormal float32,
    or so large that its dequantized weight would be beyond float32's largest (about 3.4e38).
    """
    W = _checks.float_array(weight, "weight")
    if W.ndim != 2:
        raise ValueError(f"weight must be a 2-D matrix (N, K), one group row per output channel, got shape {W.shape}")
    N, K = W.shape
    bits, group, n_groups = _bits_and_groups(bits, group, K, "K (weight.shape[1])")
    M = 2 ** (bits - 1) - 1
    W = W.astype(np.float64)
    blocks = W.reshape(N, n_groups, group)  # (N, K) -> (N, K // g, g)
    peak = np.abs(blocks).max(axis=-1)  # (N, K // g)
    nonzero = peak > 0
    smallest = np.finfo(np.float32).tiny * M  # a scale below float32's smallest normal number loses digits
    if (peak[nonzero] < smallest).any():  # (5e-324 / 127 is 0: log2 gave -inf, cast to a garbage exponent)
        raise ValueError(f"weight holds a group whose largest |value| is {peak[nonzero].min():.3g}, below "
                         f"{smallest:.3g}: its scale (that value / {M}) would fall below float32's smallest normal "
                         "number, where the dequantized weights lose their digits; scale the weights up first")
    exps = np.zeros(peak.shape, dtype=np.int64)
    exps[nonzero] = np.ceil(STEPS * np.log2(peak[nonzero] / M)).astype(np.int64)
    # log2 and exp2 round: a peak within a few ulps of a power of 2**(1/STEPS) times M can land one
    # step off (a step low clips the peak: pass seventy-four). Those few are decided exactly.
    near = nonzero & (np.abs(np.exp2(exps / STEPS) * M - peak) <= 1e-9 * peak)
    for i in zip(*np.nonzero(near)):
        exps[i] = _smallest_exponent(float(peak[i]), M)
    base = int(exps[nonzero].min()) if nonzero.any() else 0
    if nonzero.any() and int(exps[nonzero].max()) - base >= SPAN:
        span = (int(exps[nonzero].max()) - base) / STEPS
        raise ValueError(f"weight's group scales span {span:.1f} octaves; one byte per scale holds {SPAN / STEPS:.1f} "
                         "(use a larger group or split the matrix)")
    codes = np.where(nonzero, exps - base + 1, 0).astype(np.uint8)
    scales = np.where(nonzero, np.exp2(exps / STEPS), 1.0)[..., None]  # (N, K // g, 1)
    q = np.clip(np.rint(blocks / scales), -M, M).astype(np.int16)  # (N, K // g, g)
    largest = float((np.abs(q).max(axis=-1) * scales[..., 0]).max()) if q.size else 0.0  # the largest |q s|
    if largest > float(np.finfo(np.float32).max):  # (1e39 dequantized to inf, silently)
        raise ValueError(f"weight holds a value of {float(np.abs(W).max()):.3g}, whose dequantized weight "
                         f"({largest:.4g}) is beyond float32's largest, {float(np.finfo(np.float32).max):.4g}: "
                         "scale the weights down first")
    q = q.reshape(N, K)  # (N, K // g, g) -> (N, K)
    return Quantized(q=q, codes=codes, base=base, bits=bits, group=group)


def _smallest_exponent(peak: float, M: int) -> int:
    """The smallest integer ``c`` with ``M * 2**(c / STEPS) >= peak``, decided in exact
    arithmetic: ``M**STEPS * 2**c >= peak**STEPS``."""
    target = Fraction(peak) ** STEPS / M ** STEPS
    c = math.ceil(STEPS * math.log2(peak / M))
    while Fraction(2) ** c < target:
        c += 1
    while Fraction(2) ** (c - 1) >= target:
        c -= 1
    return c


def _bits_and_groups(bits, group, K: int, k_name: str) -> tuple[int, int, int]:
    """``bits`` (2 to 16), ``group`` (dividing ``K``, named ``k_name``) and the number of groups
    per row, checked."""
    bits = _checks.positive_int(bits, "bits")
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be from 2 to 16 (the integers are stored in int16), got {bits}")
    group = _checks.positive_int(group, "group")
    return bits, group, _checks.divisible(K, group, k_name, "group")


def stored_bytes(shape: tuple[int, int], bits: int, group: int) -> int:
    """Bytes of a quantized ``(N, K)`` matrix packed as the browser reads it: ``bits`` per weight
    (rounded up to whole bytes) and one byte per group, ``ceil(N K bits / 8) + N K / group``.
    ``shape``, ``bits`` and ``group`` are checked as :func:`quantize` checks them (a group that
    does not divide ``K`` counted a floor, one larger than ``K`` no scale at all)."""
    if not (isinstance(shape, (tuple, list)) and len(shape) == 2):
        raise TypeError(f"shape must be a pair (N, K), got {shape!r}")
    N, K = (_checks.positive_int(n, name) for n, name in zip(shape, ("N (shape[0])", "K (shape[1])")))
    bits, _, n_groups = _bits_and_groups(bits, group, K, "K (shape[1])")
    return math.ceil(N * K * bits / 8) + N * n_groups
