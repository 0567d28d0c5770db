"""Sinusoidal positional encoding (page: sinusoidal positional encoding).

    omega_i    = base^(-2i/D)                 angular frequency of pair i, radians per position
    lambda_i   = 2*pi / omega_i               wavelength, positions per full cycle
    PE[p, 2i]   = sin(p * omega_i)
    PE[p, 2i+1] = cos(p * omega_i)            i = 0 .. D/2 - 1

Each (sin, cos) pair is a point on a circle turning by ``omega_i`` per position, so a
shift by ``k`` positions is a fixed rotation of every pair:
``PE(p + k) = PE(p) @ M_k.T`` with ``M_k`` block-diagonal (``offset_matrix``).

Allowed bases: any finite ``base > 0`` for which the results are finite. Every base >= 1
is (then ``omega_i <= 1``); a base below 1 makes the frequencies grow past 1 rad per
position, and a tiny one (``5e-324``) makes them overflow, which is refused with a
``ValueError`` rather than returning inf or NaN.
"""
from __future__ import annotations

import sys

import numpy as np

from . import _checks

DEFAULT_BASE = 10000.0
"""The frequency base of "Attention Is All You Need" (sinusoidal PE) and of RoFormer (RoPE).

Pair ``i`` of a ``D``-dimensional encoding turns by ``DEFAULT_BASE^(-2i/D)`` radians per
position, so wavelengths run from ``2*pi`` to almost ``2*pi*10000`` positions (pages:
sinusoidal positional encoding; RoPE).
"""


# --8<-- [start:frequencies]
def _frequencies(dim: int, base: float, dim_name: str) -> np.ndarray:
    """``base^(-2i/dim)`` for ``i = 0 .. dim/2 - 1``, refusing a base that makes
    one overflow.

    Shared by sinusoidal PE (``dim = d_model``) and RoPE (``dim = d_head``).
    """
    D = _checks.even_int(dim, dim_name)
    base = _checks.positive_float(base, "base")
    two_i = np.arange(0, D, 2, dtype=np.float64)  # (D/2,) even dimensions 2i
    with np.errstate(over="ignore"):
        omega = base ** (-two_i / D)  # (D/2,) radians per position; omega_0 = 1
    if not np.isfinite(omega).all():
        raise _frequency_overflow(base, D, dim_name)
    return omega
# --8<-- [end:frequencies]


def _frequency_overflow(base: float, D: int, dim_name: str) -> ValueError:
    return ValueError(
        f"base={base!r} with {dim_name} = {D} makes the angular frequencies base^(-2i/{D}) "
        f"overflow float64 (the largest, base^(-{D - 2}/{D}), exceeds {np.finfo(np.float64).max:.4g}); "
        "base must be a finite number > 0 that keeps every frequency finite: any base >= 1 does "
        f"(the usual one is {DEFAULT_BASE:g})"
    )


def _positions_limit(last: int, what: str) -> None:
    """Refuse integer positions beyond the float64 range (they cannot be turned into angles)."""
    if abs(last) > sys.float_info.max:
        raise ValueError(f"{what} exceeds the largest float64 ({sys.float_info.max:.4g}); positions must be floats")


def _table_fits(n: int, D: int) -> None:
    """Refuse a table larger than this machine's memory: the ``(n, D)`` float64 table and, as
    it is built, the ``(n, D/2)`` angles and one ``(n, D/2)`` array of their sines or cosines."""
    table = n * D * 8
    _checks.fits_in_memory(2 * table, f"sinusoidal_encoding's ({n}, {D}) float64 table "
                           f"({_checks.human_bytes(table)}), with its angles and sines as it is built,",
                           "use fewer positions (n_positions) or a smaller d_model")


def sinusoidal_frequencies(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """Angular frequencies ``omega_i = base^(-2i/D)``, shape ``(D/2,)``, in radians per position.

    Example: for ``d_model=4``, ``[1, 1/100]``: dims 0-1 turn 1 rad per position, dims 2-3 0.01.
    A base so small that a frequency overflows (``base=5e-324``) is refused.
    """
    return _frequencies(d_model, base, "d_model")


def wavelengths(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """Wavelengths ``2*pi / omega_i`` in positions, shape ``(D/2,)``.

    Example: for ``d_model=512`` the pair starting at dimension 64 has angular frequency
    ``10000^(-64/512) = 1/sqrt(10)`` and wavelength ``2*pi*sqrt(10) = 19.87`` positions.
    A base so large that a wavelength overflows (``1.7e308`` with a large ``d_model``) is refused.
    """
    omega = sinusoidal_frequencies(d_model, base)
    with np.errstate(over="ignore"):
        lam = 2.0 * np.pi / omega
    if not np.isfinite(lam).all():
        raise ValueError(
            f"the wavelengths 2*pi/omega_i overflow float64: base={base!r} with d_model={d_model} has "
            f"frequencies down to {omega.min():.4g}; choose a smaller base"
        )
    return lam


# --8<-- [start:sinusoidal-signature]
def sinusoidal_encoding(n_positions: int, d_model: int,
                        base: float = DEFAULT_BASE, *,
                        start: int = 0) -> np.ndarray:
# --8<-- [end:sinusoidal-signature]
    """The table ``PE`` of shape ``(n_positions, D)`` for positions ``start .. start+n-1``.

    Sine on even dimensions, cosine on odd ones, interleaved as in the original paper.
    Every entry lies in [-1, 1]; parameters whose angles ``p * omega_i`` would overflow
    (a tiny base with far positions) are refused, and so is a table that would not fit in
    this machine's memory (about ``16 n D`` bytes at the peak: ``(10**7, 1024)`` needs 153 GiB).
    Positions at or beyond ``2**53`` (``start + n_positions - 1 >= 2**53``) are refused with a
    ``ValueError``: float64 cannot tell them apart, so their rows would coincide. So are angles
    ``p * omega_i`` past about 1.1e9 rad on a plane whose frequency is not 1 (earlier where
    ``|ln omega_i|`` is large), which float64 holds only to more than 1e-6 rad
    (``_checks.exact_angles``): every entry returned is within 1e-6 of the true sine or cosine.
    """
    # --8<-- [start:sinusoidal]
    n = _checks.positive_int(n_positions, "n_positions")
    start = _checks.nonnegative_int(start, "start")
    _positions_limit(start + n - 1, "the last position start + n_positions - 1")
    omega = sinusoidal_frequencies(d_model, base)  # (D/2,) frequencies omega_i
    _table_fits(n, 2 * omega.size)  # the table, its angles and their sines
    p = np.arange(start, start + n, dtype=np.float64)  # (n,) the positions
    with np.errstate(over="ignore"):
        angles = p[:, None] * omega[None, :]  # (n, 1) * (1, D/2) -> (n, D/2)
    _checks.no_overflow(angles, "the angles position * omega_i",
                        "positions up to start + n_positions - 1 times "
                        f"frequencies up to {omega.max():.4g} (base={base!r}); "
                        "use a smaller start or a base >= 1")
    _checks.exact_positions(start + n - 1, "the last position start + n_positions - 1")
    _checks.exact_angles(angles, "the angles position * omega_i",
                         f"base={base!r}: use a base >= 1", omega=omega)
    pe = np.empty((n, 2 * omega.size))  # (n, D)
    pe[:, 0::2] = np.sin(angles)  # even dimensions 2i: sin(p * omega_i)
    pe[:, 1::2] = np.cos(angles)  # odd dimensions 2i+1: cos of the same angle
    return pe
    # --8<-- [end:sinusoidal]


def offset_matrix(k: int, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """The ``(D, D)`` block rotation with ``PE(p + k) = PE(p) @ M_k.T`` for every ``p``.

    Block ``i`` is ``[[cos(k w), sin(k w)], [-sin(k w), cos(k w)]]`` with ``w = omega_i``,
    from ``sin(a+b) = sin a cos b + cos a sin b`` and ``cos(a+b) = cos a cos b - sin a sin b``.
    It depends on ``k`` only, not on ``p``: that is the "relative offsets are linear" claim.
    Parameters whose angles ``k * omega_i`` would overflow are refused, and so is an offset
    ``|k| >= 2**53``, which float64 cannot tell from its neighbours (``M_{2**53 + 1}`` would
    equal ``M_{2**53}``).
    """
    k = _checks.integer(k, "k")
    _positions_limit(k, "the offset |k|")
    omega = sinusoidal_frequencies(d_model, base)  # (D/2,)
    with np.errstate(over="ignore"):
        angles = k * omega  # (D/2,)
    _checks.no_overflow(angles, "the angles k * omega_i",
                        f"the offset k times frequencies up to {omega.max():.4g} (base={base!r}); "
                        "use a smaller k or a base >= 1")
    _checks.exact_positions(k, "the offset |k|")
    _checks.exact_angles(angles, "the angles k * omega_i",
                         f"base={base!r}: use a base >= 1", omega=omega)
    c, s = np.cos(angles), np.sin(angles)
    D = 2 * omega.size
    m = np.zeros((D, D))
    idx = np.arange(0, D, 2)
    m[idx, idx], m[idx, idx + 1] = c, s
    m[idx + 1, idx], m[idx + 1, idx + 1] = -s, c
    return m
