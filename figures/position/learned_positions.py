"""A learned position table at initialisation: max_positions rows of d_model numbers, and their cosine similarities.

At initialisation (N(0, 0.02^2), GPT-2's scheme) the rows are unrelated: similarity is 1
on the diagonal and near 0 elsewhere. Whatever order the table has after training is
learned from data. Row max_positions does not exist. Page: learned positional embeddings.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
from matplotlib.ticker import MaxNLocator

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(max_positions: Annotated[int, Range(2, 1024)] = 64, d_model: Annotated[int, Range(1, 1024)] = 32,
         seed: Annotated[int, Range(0, None)] = 0) -> dict:

    table = mhalib.learned_position_table(max_positions, d_model, seed=seed)
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    sim = unit @ unit.T
    try:
        mhalib.lookup_positions(table, max_positions + 1)
        error = None
    except ValueError as exc:
        error = str(exc)
    off = sim[~np.eye(max_positions, dtype=bool)]
    return dict(table=table, similarity=sim, error_past_max=error, max_positions=max_positions, d_model=d_model,
                seed=seed, mean_abs_offdiag=float(np.abs(off).mean()), param_count=max_positions * d_model)


def draw(data: dict):
    # both panels' rows are positions: one y axis label, colour bars with three ticks, 5.8 in in all
    fig, (a, b) = style.new_figure(5.8, 3.4, ncols=2)
    style.heatmap(data["table"], ax=a, cmap=style.DIVERGING, vmin=-0.06, vmax=0.06,
                  xlabel="dimension", ylabel="position", title=f"the table P:\n{data['max_positions']} × {data['d_model']}")
    style.heatmap(data["similarity"], ax=b, cmap=style.DIVERGING, vmin=-1, vmax=1,
                  xlabel="position", title="cosine similarity\nof its rows")
    for axis in (a.yaxis, b.xaxis, b.yaxis):  # the same position ticks on all three axes
        axis.set_major_locator(MaxNLocator(4, integer=True))
    for ax, ticks, label in ((a, (-0.06, 0, 0.06), None), (b, (-1, 0, 1), "cosine")):
        cb = fig.colorbar(ax.images[0], ax=ax, fraction=0.08, pad=0.04, ticks=ticks)
        cb.outline.set_visible(False)
        if label:
            cb.set_label(label)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
