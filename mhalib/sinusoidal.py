"""Sinusoidal positional encoding (page: sinusoidal positional encoding).

    omega_i    = base^(-2i/D)                 angular frequency of pair i, radians per position
    lambda_i   = 2*pi / omega_i               wavelength, positions per full cycle
    PE[p, 2i]   = sin(p * omega_i)
    PE[p, 2i+1] = cos(p * omega_i)            i = 0 .. D/2 - 1

Each (sin, cos) pair is a point on a circle turning by ``omega_i`` per position, so a
shift by ``k`` positions is a fixed rotation of every pair:
``PE(p + k) = PE(p) @ M_k.T`` with ``M_k`` block-diagonal (:func:`offset_matrix`).
"""
from __future__ import annotations

import numpy as np

from . import _checks

DEFAULT_BASE = 10000.0
"""The frequency base of "Attention Is All You Need" (sinusoidal PE) and of RoFormer (RoPE).

Pair ``i`` of a ``D``-dimensional encoding turns by ``DEFAULT_BASE^(-2i/D)`` radians per
position, so wavelengths run from ``2*pi`` to almost ``2*pi*10000`` positions (pages:
sinusoidal positional encoding; RoPE).
"""


def sinusoidal_frequencies(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """Angular frequencies ``omega_i = base^(-2i/D)``, shape ``(D/2,)``, in radians per position.

    Example: for ``d_model=4``, ``[1, 1/100]``: dims 0-1 turn 1 rad per position, dims 2-3 0.01.
    """
    D = _checks.even_int(d_model, "d_model")
    base = _checks.positive_float(base, "base")
    two_i = np.arange(0, D, 2, dtype=np.float64)  # (D/2,) the even dimension indices 2i
    return base ** (-two_i / D)


def wavelengths(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """Wavelengths ``2*pi / omega_i`` in positions, shape ``(D/2,)``.

    Example: for ``d_model=512`` the pair starting at dimension 64 has angular frequency
    ``10000^(-64/512) = 1/sqrt(10)`` and wavelength ``2*pi*sqrt(10) = 19.87`` positions.
    """
    return 2.0 * np.pi / sinusoidal_frequencies(d_model, base)


def sinusoidal_encoding(n_positions: int, d_model: int, base: float = DEFAULT_BASE, *, start: int = 0) -> np.ndarray:
    """The table ``PE`` of shape ``(n_positions, D)`` for positions ``start .. start+n-1``.

    Sine on even dimensions, cosine on odd ones, interleaved as in the original paper.
    Every entry lies in [-1, 1].
    """
    n = _checks.positive_int(n_positions, "n_positions")
    start = _checks.nonnegative_int(start, "start")
    omega = sinusoidal_frequencies(d_model, base)  # (D/2,)
    angles = np.arange(start, start + n, dtype=np.float64)[:, None] * omega[None, :]  # (n, D/2)
    pe = np.empty((n, 2 * omega.size))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def offset_matrix(k: int, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """The ``(D, D)`` block rotation with ``PE(p + k) = PE(p) @ M_k.T`` for every ``p``.

    Block ``i`` is ``[[cos(k w), sin(k w)], [-sin(k w), cos(k w)]]`` with ``w = omega_i``,
    from ``sin(a+b) = sin a cos b + cos a sin b`` and ``cos(a+b) = cos a cos b - sin a sin b``.
    It depends on ``k`` only, not on ``p``: that is the "relative offsets are linear" claim.
    """
    k = _checks.integer(k, "k")
    omega = sinusoidal_frequencies(d_model, base)
    c, s = np.cos(k * omega), np.sin(k * omega)
    D = 2 * omega.size
    m = np.zeros((D, D))
    idx = np.arange(0, D, 2)
    m[idx, idx], m[idx, idx + 1] = c, s
    m[idx + 1, idx], m[idx + 1, idx + 1] = -s, c
    return m
