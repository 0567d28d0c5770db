"""A learned position table at initialisation: max_positions rows of d_model numbers, and their cosine similarities.

At initialisation (N(0, 0.02^2), GPT-2's scheme) the rows are unrelated: similarity is 1
on the diagonal and near 0 elsewhere. Whatever order the table has after training is
learned from data. Row max_positions does not exist. Page: learned positional embeddings.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

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
    fig, (a, b) = style.new_figure(9.0, 3.8, ncols=2)
    style.heatmap(data["table"], ax=a, cmap=style.DIVERGING, vmin=-0.06, vmax=0.06, colorbar=True,
                   xlabel="dimension", ylabel="position", title=f"P: {data['max_positions']} × {data['d_model']} table")
    style.heatmap(data["similarity"], ax=b, cmap=style.DIVERGING, vmin=-1, vmax=1, colorbar="cosine",
                   xlabel="position", ylabel="position", title="cosine similarity of rows")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
