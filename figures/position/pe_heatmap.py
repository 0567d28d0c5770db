"""Sinusoidal positional encoding: heatmap of PE[position, dimension].

Shows the table PE of shape (n_positions, d_model): sine on even dimensions, cosine on
odd ones, the first pairs turning fast and the last ones barely moving.
Page: sinusoidal positional encoding.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(n_positions: Annotated[int, Range(1, 2048)] = 64, d_model: Annotated[int, Range(2, 2048)] = 128,
         base: Annotated[float, Range(1.01, 1_000_000_000)] = 10000.0) -> dict:
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")
    pe = mhalib.sinusoidal_encoding(n_positions, d_model, base)
    first_pair_cycles = (n_positions - 1) * mhalib.sinusoidal_frequencies(d_model, base)[0] / (2 * np.pi)
    return dict(pe=pe, n_positions=n_positions, d_model=d_model, base=base,
                min=float(pe.min()), max=float(pe.max()), first_pair_cycles=float(first_pair_cycles))


def draw(data: dict, ax=None):

    n, D = data["pe"].shape
    small = D <= 8 and n <= 12
    if ax is None:
        _, ax = style.new_figure(5.8 if not small else 5.4, 4.0 if not small else 3.4)  # (cells hold "<-.99")
    style.heatmap(
        data["pe"], ax=ax, cmap=style.DIVERGING, vmin=-1, vmax=1, colorbar="PE value",
        annotate="{:.2f}" if small else False, compact=True,  # "-0.99999" lost its sign at a cell's edge
        row_labels=[str(p) for p in range(n)] if small else None,
        col_labels=[str(i) for i in range(D)] if small else None,
        xlabel="dimension (even: sin, odd: cos)", ylabel="position",
        title=f"Sinusoidal PE, $d_{{\\mathrm{{model}}}}$ = {D}",
    )
    return ax.figure


#: The interactive version of this figure (docs/javascripts/explorers.js, widget "pe").
EXPLORER = "pe"


def explorer(data: dict) -> dict:
    """The sinusoidal explorer recomputes the table in the browser from its size and base."""
    return dict(base=data["base"], d_model=data["d_model"], n_positions=data["n_positions"])


main = cli.main_for(__name__)


if __name__ == "__main__":
    raise SystemExit(main())
