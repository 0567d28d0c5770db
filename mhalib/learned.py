"""Learned absolute position embeddings (page: learned positional embeddings).

    x_p = E[token_p] + P[p],      P is a (max_positions, D) table of parameters

The table is trained like any weight; here it is drawn at initialisation, N(0, std^2)
with GPT-2's std = 0.02, from an explicit seed. It has exactly ``max_positions`` rows: a
position at or past that has no vector at all, which is the hard length limit of the method.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks


def _table_fits(n: int, D: int) -> None:
    """Refuse a ``(n, D)`` float64 table larger than this machine's memory, before drawing it."""
    _checks.fits_in_memory(n * D * 8, f"learned_position_table's ({n}, {D}) float64 table",
                           "use fewer positions (max_positions) or a smaller d_model")


# --8<-- [start:learned]
def learned_position_table(max_positions: int, d_model: int, *, seed: int,
                           std: float = 0.02) -> np.ndarray:
    """A freshly initialised position table ``(max_positions, D)``, drawn from
    ``N(0, std^2)``.

    A ``std`` so large that a draw overflows float64 (``1e308``) is refused, and so is one
    so small that a draw falls below float64's normal range (``2.2e-308``), where it keeps
    fewer digits or reads 0 (``std=5e-324`` gave 0.0 for 42% of a table), and so is a
    table larger than this machine's memory, before it is drawn, with its size.
    """
    n = _checks.positive_int(max_positions, "max_positions")
    D = _checks.positive_int(d_model, "d_model")
    _table_fits(n, D)
    seed = _checks.nonnegative_int(seed, "seed")
    std = _checks.positive_float(std, "std")
    with np.errstate(over="ignore", invalid="ignore"):
        table = np.random.default_rng(seed).normal(0.0, std, size=(n, D))
    why = f"std={std!r} is too large; choose a smaller std"
    table = _checks.no_overflow(table, "the N(0, std^2) draws", why)  # (n, D)
    too_small = f"std={std!r} is too small"
    return _checks.in_normal_range(table, too_small, "choose a larger std")


def lookup_positions(table: ArrayLike, n_positions: int, *,
                     start: int = 0) -> np.ndarray:
    """Rows ``start .. start+n-1`` of ``table``, as a copy (adding them to the embeddings
    in place never changes the table: a view did, and every later lookup read the
    changed rows: pass sixty-nine); refuses rows it lacks."""
    table = _checks.float_array(table, "table")
    if table.ndim != 2:
        raise ValueError("table must be 2-D (max_positions, d_model), "
                         f"got {table.shape}")
    n = _checks.positive_int(n_positions, "n_positions")
    start = _checks.nonnegative_int(start, "start")
    if start + n > table.shape[0]:
        raise ValueError(
            f"positions {start}..{start + n - 1} requested, but the learned "
            f"table has rows for 0..{table.shape[0] - 1} only "
            f"(max_positions={table.shape[0]}); a learned table has no vector "
            "for a position it was not built with"
        )
    return table[start:start + n].copy()  # (n_positions, D): row p for position p
# --8<-- [end:learned]
