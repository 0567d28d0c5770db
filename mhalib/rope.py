"""Rotary position embedding, RoPE (page: RoPE).

    omega_i = base^(-2i/d)                         i = 0 .. d/2 - 1
    R(m) rotates plane i by the angle m * omega_i
    q'_m = R(m) q,   k'_n = R(n) k
    q'_m . k'_n = q^T R(m)^T R(n) k = q^T R(n - m) k

The score depends on the *signed* offset ``n - m`` (key position minus query position),
not on ``|n - m|``: rotating by ``n - m`` and by ``m - n`` differ unless the plane's
components are symmetric.

Two layouts pair the ``d`` dimensions into planes:

* ``"interleaved"`` (RoFormer paper, GPT-J, Meta's LLaMA code): plane i = dims (2i, 2i+1).
* ``"half"`` (GPT-NeoX, Hugging Face's ``rotate_half``): plane i = dims (i, i + d/2).

They are the same rotation up to the permutation ``[0, 2, 4, ..., 1, 3, 5, ...]``
(``layout_permutation``); applying one layout to weights trained with the other is a
classic porting bug, and it breaks the relative-position property.

Running a model on ``s`` times its training length ``L_train`` without retraining
(``scaling=``, ``factor=s``; page: Does it extrapolate?):

* ``"interpolation"``, position interpolation (Chen et al., 2023): every position is
  squeezed back into the trained range, ``m -> m / s = m * L_train / L``; the same as
  dividing every frequency by ``s``, ``omega'_i = omega_i / s``.
* ``"ntk"``, NTK-aware scaling (bloc97, 2023): a larger base, ``base' = base * s^(d/(d-2))``,
  so ``omega'_i = omega_i * s^(-2i/(d-2))``: the fastest plane (``i = 0``) is unchanged and
  the slowest (``i = d/2 - 1``) is divided by exactly ``s``, as in interpolation.
"""
from __future__ import annotations

import math
import sys

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .sinusoidal import DEFAULT_BASE, _frequencies

LAYOUTS = ("interleaved", "half")
#: Inference-time scalings of RoPE for longer inputs (None: plain RoPE).
SCALINGS = (None, "interpolation", "ntk")


def _scaled_frequencies(d_head: int, base: float, scaling: str | None, factor: float, d_name: str) -> np.ndarray:
    """``omega_i`` for plain RoPE, position interpolation or NTK-aware scaling (module docstring)."""
    if scaling is not None and not isinstance(scaling, str):
        raise TypeError(f"scaling must be None, 'interpolation' or 'ntk', got {scaling!r} ({type(scaling).__name__})")
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be None, 'interpolation' or 'ntk'; got {scaling!r}")
    s = _checks.positive_float(factor, "factor")
    if scaling is None:
        if s != 1.0:
            raise ValueError(f"factor={factor!r} was given with scaling=None, so it would change nothing; "
                             "pass scaling='interpolation' or 'ntk' too, or drop factor")
        return _frequencies(d_head, base, d_name)
    if s < 1.0:
        raise ValueError(f"factor must be >= 1 (the new length over the training length, L / L_train), got {factor!r}")
    if scaling == "interpolation":
        return _frequencies(d_head, base, d_name) / s  # omega_i / s: positions m read as m / s
    d = _checks.even_int(d_head, d_name)
    if d == 2:
        raise ValueError(f"scaling='ntk' needs {d_name} >= 4: its exponent d/(d-2) is undefined for d = 2")
    base = _checks.positive_float(base, "base")
    return _frequencies(d, _ntk_base(base, s, d, d_name), d_name)


def _ntk_base(base: float, s: float, d: int, d_name: str) -> float:
    """NTK-aware scaling's ``base' = base * s^(d/(d-2))``, refusing one beyond float64 with a
    message that names ``factor`` (and ``base``), the arguments that make it overflow."""
    try:
        new = base * s ** (d / (d - 2))  # base' = base * s^(d/(d-2))
    except OverflowError:  # Python's float power raises where numpy would give inf
        new = math.inf
    if not math.isfinite(new):
        log10_new = math.log10(base) + d / (d - 2) * math.log10(s)  # in logs nothing overflows
        raise ValueError(
            f"scaling='ntk' with factor={s:g} and base={base:g} ({d_name} = {d}) needs the base "
            f"base * factor^(d/(d-2)) = {base:g} * {s:g}^({d}/{d - 2}) = 1e+{log10_new:.0f}, beyond the largest "
            f"float64 ({sys.float_info.max:.4g}); use a smaller factor (or base), or scaling='interpolation'"
        )
    return new


def rope_frequencies(d_head: int, base: float = DEFAULT_BASE, *, scaling: str | None = None,
                     factor: float = 1.0) -> np.ndarray:
    """Per-plane angular frequencies ``omega_i = base^(-2i/d)``, shape ``(d/2,)``.

    Args:
        d_head: the head width ``d`` (even).
        base: the frequency base (10000 in RoFormer).
        scaling: None (plain RoPE), ``"interpolation"`` or ``"ntk"``, for running at
            ``factor`` times the training length without retraining:

                interpolation:  omega'_i = omega_i / s            (positions m -> m L_train / L)
                ntk:            omega'_i = (base s^(d/(d-2)))^(-2i/d) = omega_i s^(-2i/(d-2))

        factor: ``s = L / L_train >= 1``; only with a ``scaling``.

    Example: ``rope_frequencies(4)`` is ``[1, 0.01]``; with ``factor=4`` interpolation
    gives ``[0.25, 0.0025]`` and NTK-aware scaling ``[1, 0.0025]`` (base' = 10000 * 4^2 =
    160000, whose ``-1/2`` power is 1/400). Any ``base >= 1`` gives finite frequencies; a
    base so small that one overflows (``5e-324``) is refused, and so is an NTK base
    ``base * factor^(d/(d-2))`` beyond float64, with a message naming ``factor``.
    """
    return _scaled_frequencies(d_head, base, scaling, factor, "d_head")


def rotation_matrix(angle: float) -> np.ndarray:
    """The 2x2 rotation ``[[cos a, -sin a], [sin a, cos a]]`` (counter-clockwise by ``a``).

    A float angle keeps its float type; an integer angle, Python's or numpy's of any width,
    is turned in float64 (numpy alone would take an ``int8`` to float16 and an ``int16`` to
    float32, and ``cos(200)`` of a ``uint8`` would keep 3 digits)."""
    if isinstance(angle, bool) or not isinstance(angle, (int, float, np.integer, np.floating)):
        raise TypeError(f"angle must be a real number, got {angle!r}")
    if not np.isfinite(angle):
        raise ValueError(f"angle must be finite, got {angle}")
    if isinstance(angle, (int, np.integer)) and abs(int(angle)) >= 2**53:  # (a float is its own angle)
        raise ValueError(f"angle must stay below 2**53 = {2**53} in magnitude as an integer, got {int(angle)}: "
                         "float64, in which it is turned, does not hold every integer past it (2**53 + 1 "
                         "rounds to 2**53), so the rotation would be by another angle")
    if isinstance(angle, (int, np.integer)):
        angle = np.float64(int(angle))  # exact below 2**53
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


def layout_permutation(d_head: int) -> np.ndarray:
    """Index array ``[0, 2, ..., d-2, 1, 3, ..., d-1]`` taking interleaved pairs to half-split ones.

    For any ``x``: ``apply_rope(x[..., p], layout="half") == apply_rope(x, layout="interleaved")[..., p]``.
    """
    d = _checks.even_int(d_head, "d_head")
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


# --8<-- [start:rope-signature]
def apply_rope(x: ArrayLike, positions: ArrayLike | None = None, *,
               base: float = DEFAULT_BASE,
               layout: str = "interleaved",
               scaling: str | None = None, factor: float = 1.0) -> np.ndarray:
# --8<-- [end:rope-signature]
    """Rotate every plane of ``x (..., T, d)`` by ``position * omega_i``.

    Args:
        x: queries or keys, ``(..., T, d)`` with even ``d``. RoPE is applied to Q and K
            only, never to V, and in every layer.
        positions: ``(T,)`` (or broadcastable to ``(..., T)``) integer or real positions;
            defaults to ``0 .. T-1``. They broadcast against ``x``'s leading axes as numpy
            broadcasts: for heads ``x (B, H, T, d)``, per-sequence positions (``position_ids
            (B, T)`` in ``transformers``) go in as ``positions[:, None, :]``, ``(B, 1, T)``; a
            ``(B, T)`` array lines up with ``(H, T)`` instead, one row of positions per head.
        base: the frequency base (:data:`DEFAULT_BASE` = 10000 in RoFormer and LLaMA-2).
        layout: ``"interleaved"`` (planes (2i, 2i+1)) or ``"half"`` (planes (i, i+d/2)).
        scaling: None, ``"interpolation"`` or ``"ntk"``, with ``factor = L / L_train``: the
            frequencies of ``rope_frequencies`` with the same options. Interpolation
            equals plain RoPE at positions ``positions / factor``; NTK-aware scaling
            equals plain RoPE with ``base * factor^(d/(d-2))``.
        factor: ``s >= 1``, only with a ``scaling``.

    Returns:
        The rotated array, same shape and float type as ``x`` (float16 and float32 stay
        so; the angles and products are worked in float64 and rounded once; integers give
        float64). Norms are unchanged; position 0 is the identity.
        ``T = 0`` gives an empty array. Refused with a ``ValueError``: angles
        ``position * omega_i`` that overflow (a tiny base with far positions), positions
        ``|p| >= 2**53`` (float64 cannot tell ``p`` from ``p + 1`` there, so neighbouring
        positions would get the same rotation), angles past about 1.1e9 rad on a plane whose
        frequency is not 1 (float64 holds them only to more than 1e-6 rad; earlier on a plane
        whose ``|ln theta_i|`` is large: ``_checks.exact_angles``), and planes whose rotation
        exceeds the float range of ``x`` (a float16 plane (60000, 60000) turned by 1 rad has a
        coordinate of 82 889).
    """
    # --8<-- [start:rope]
    x = _checks.float_array(x, "x", min_ndim=2)
    layout = _checks.choice(layout, "layout", LAYOUTS)
    d = x.shape[-1]  # x is (..., T, d)
    theta = _scaled_frequencies(d, base, scaling, factor,
                                "d_head (the last axis of x)")  # (d/2,)
    pos = _rope_positions(positions, x)  # (T,) or (..., T); 0 .. T-1 by default
    with np.errstate(over="ignore"):
        angles = pos[..., None] * theta  # (..., T, 1) * (d/2,) -> (..., T, d/2)
    _checks.no_overflow(angles, "the angles position * theta_i",
                        f"positions up to {np.abs(pos).max(initial=0):.4g} "
                        f"times frequencies up to {theta.max():.4g} "
                        f"(base={base!r}); use nearer positions or a base >= 1")
    _checks.exact_positions(pos, "positions")  # from 2**53, p + 1 reads as p in float64
    _checks.exact_angles(angles, "the angles position * theta_i",
                         f"base={base!r}: use a base >= 1", omega=theta)
    cos, sin = np.cos(angles), np.sin(angles)  # (..., T, d/2) each
    if layout == "interleaved":
        # (..., T, d/2) each: plane i is dimensions (2i, 2i+1)
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        # (..., T, d/2) each: plane i is dimensions (i, i + d/2)
        a, b = x[..., : d // 2], x[..., d // 2:]
    with np.errstate(over="ignore", invalid="ignore"):
        ra, rb = a * cos - b * sin, a * sin + b * cos  # each plane turned
    out = np.empty(np.broadcast_shapes(x.shape, ra.shape[:-1] + (d,)),
                   dtype=x.dtype)  # (..., T, d), x's float type
    with np.errstate(over="ignore", invalid="ignore"):  # rounded once
        if layout == "interleaved":
            out[..., 0::2], out[..., 1::2] = ra, rb  # planes back in place
        else:
            out[..., : d // 2], out[..., d // 2:] = ra, rb
    return _checks.no_overflow(out, "the rotated x", "a plane of x has a "
                               f"norm beyond the {x.dtype} range")
    # --8<-- [end:rope]


def _rope_positions(positions, x: np.ndarray) -> np.ndarray:
    """``positions`` as floats broadcastable to ``x``'s ``(..., T)``; ``0 .. T-1`` when None."""
    if positions is None:
        return np.arange(x.shape[-2], dtype=np.float64)
    pos = _checks.float_array(positions, "positions", min_ndim=1)
    try:
        ok = np.broadcast_shapes(pos.shape, x.shape[:-1]) == x.shape[:-1]
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"positions of shape {pos.shape} does not broadcast to x's (..., T) = {x.shape[:-1]}")
    return pos
