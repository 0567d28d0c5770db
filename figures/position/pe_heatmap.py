"""Sinusoidal positional encoding: heatmap of PE[position, dimension].

Shows the table PE of shape (n_positions, d_model): sine on even dimensions, cosine on
odd ones, the first pairs turning fast and the last ones barely moving.
Page: sinusoidal positional encoding.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli, style


def data(n_positions: int = 64, d_model: int = 128, base: float = 10000.0) -> dict:
    pe = mhalib.sinusoidal_encoding(n_positions, d_model, base)
    first_pair_cycles = (n_positions - 1) * mhalib.sinusoidal_frequencies(d_model, base)[0] / (2 * np.pi)
    return dict(pe=pe, n_positions=n_positions, d_model=d_model, base=base,
                min=float(pe.min()), max=float(pe.max()), first_pair_cycles=float(first_pair_cycles))


def draw(d: dict):
    n, D = d["pe"].shape
    small = D <= 8 and n <= 12
    fig, ax = style.new_figure(6.4 if not small else 4.8, 4.0 if not small else 3.4)
    style.heatmap(
        d["pe"], ax=ax, cmap=style.DIVERGING, vmin=-1, vmax=1, colorbar="PE value",
        annotate="{:.2f}" if small else False,
        row_labels=[str(p) for p in range(n)] if small else None,
        col_labels=[str(i) for i in range(D)] if small else None,
        xlabel="dimension (even: sin, odd: cos)", ylabel="position",
        title=f"Sinusoidal PE, d_model = {D}",
    )
    return fig


#: The interactive version of this figure (docs/javascripts/explorers.js, widget "pe").
EXPLORER = "pe"


def explorer(data: dict) -> dict:
    """The sinusoidal explorer recomputes the table in the browser from its size and base."""
    return dict(base=data["base"], d_model=data["d_model"], n_positions=data["n_positions"])


main = cli.main_for(__name__)


if __name__ == "__main__":
    raise SystemExit(main())
