"""ALiBi, attention with linear biases (page: ALiBi).

    slope m_h:  for H a power of two, m_h = 2^(-8 h / H),  h = 1 .. H
    bias[h, i, j] = -m_h * (i - j)      for keys j <= i (causal)
                  = -m_h * |i - j|      without a causal mask (symmetric)

For 8 heads the slopes are 1/2, 1/4, ..., 1/256. For other head counts the ALiBi authors
take the 2^floor(log2 H) slopes of the nearest lower power of two, then fill the rest with
every other slope of the next power of two (``alibi_slopes``).

The authors' code adds ``m_h * j`` instead, identical in every row. That differs from
``-m_h (i - j)`` by ``m_h * i``, a constant within row ``i``, and softmax ignores a
constant added to a whole row, so causal attention is unchanged (``form="row_constant"``).
"""
from __future__ import annotations

import math

import numpy as np

from . import _checks


# --8<-- [start:slopes]
def _power_of_two_slopes(n: int) -> list[float]:
    # m_h = 2^(-8h/n) = 2^(-r/n) * 2^-q, where 8h = q n + r: a whole power of two is
    # exact (the authors raise a rounded 2^(-8/n) to the power h, which drifts: their
    # 2^-1 at 16 heads is 0.5000000000000001, and 255 heads are 50 ulp off)
    slopes = []
    for h in range(1, n + 1):
        q, r = divmod(8 * h, n)
        slopes.append(math.ldexp(2.0 ** (-r / n), -q))  # 2^(-r/n) times 2^-q, exactly
    return slopes


def alibi_slopes(n_heads: int) -> np.ndarray:
    """Per-head slopes ``m_h``, shape ``(H,)``, by the ALiBi authors' recipe.

    Example: 8 heads give ``[1/2, 1/4, ..., 1/256]``; 12 heads give those 8
    followed by ``2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5`` (every other one of 16).
    """
    H = _checks.positive_int(n_heads, "n_heads")
    _checks.fits_in_memory(64 * H, f"alibi_slopes' {H:,} slopes", "use fewer heads")
    low = 1 << (H.bit_length() - 1)  # largest power of two <= H (float log2 can round up)
    slopes = _power_of_two_slopes(low)
    if low < H:
        slopes += _power_of_two_slopes(2 * low)[0::2][: H - low]
    return np.array(slopes)  # (H,)
# --8<-- [end:slopes]


def _bias_fits(T: int, H: int) -> None:
    """Refuse a bias larger than this machine's memory: the ``(H, T, T)`` float64 bias, its
    masked copy, and the ``(T, T)`` float64 distances it is made from."""
    _checks.fits_in_memory(2 * H * T * T * 8 + T * T * 8,
                           f"alibi_bias's ({H}, {T}, {T}) float64 bias, with its masked copy and "
                           "the (T, T) distances,",
                           "use a smaller T or fewer heads, or add the bias one block of rows at a time")


# --8<-- [start:bias-signature]
def alibi_bias(T: int, n_heads: int, *, causal: bool = True,
               form: str = "relative") -> np.ndarray:
# --8<-- [end:bias-signature]
    """ALiBi bias of shape ``(H, T, T)``, to add to the attention scores.

    Args:
        T: sequence length.
        n_heads: number of heads ``H``.
        causal: if True, future keys (``j > i``) get ``-inf`` (the bias then carries the
            causal mask); if False, the symmetric ``-m |i - j|`` for encoders.
        form: ``"relative"``, the paper's ``-m (i - j)``; or ``"row_constant"``, the
            authors' code's ``m * j`` (causal only), equal after softmax.

    A bias larger than this machine's memory is refused before it is allocated, with its
    size (``mhalib._checks.MemoryRefused``, a ``ValueError`` and a ``MemoryError``).
    """
    # --8<-- [start:bias]
    T = _checks.positive_int(T, "T")
    causal = _checks.boolean(causal, "causal")
    form = _checks.choice(form, "form", ("relative", "row_constant"))
    if form == "row_constant" and not causal:
        raise ValueError("form='row_constant' is only equivalent under a "
                         "causal mask; pass causal=True")
    m = alibi_slopes(n_heads)[:, None, None]  # (H,) -> (H, 1, 1)
    _bias_fits(T, m.shape[0])
    i = np.arange(T)[:, None]  # (T, 1) query positions
    j = np.arange(T)[None, :]  # (1, T) key positions
    if form == "row_constant":  # the authors' code: every row is m * j
        distance = (j * np.ones_like(i)).astype(np.float64)  # (T, T)
    else:  # the paper's -m (i - j) on the causal side; -m |i - j| everywhere
        distance = (-np.abs(i - j)).astype(np.float64)  # (T, T), +0 on the diagonal
    bias = m * distance  # (H, 1, 1) * (T, T) -> (H, T, T)
    if causal:
        bias = np.where(j <= i, bias, -np.inf)  # future keys: -inf, weight 0
    return bias
    # --8<-- [end:bias]
