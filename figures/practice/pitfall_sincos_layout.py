"""Bug: concatenated [sin | cos] vs the paper's interleaved sin/cos layout.

Both layouts hold the same numbers in a different order, so dot products between
positions agree exactly; but a model (or a checkpoint) built for one layout reads the
other as different features: the vectors themselves differ. Page: numerics and pitfalls.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(n_positions: Annotated[int, Range(1, 4096)] = 50, d_model: Annotated[int, Range(2, 4096)] = 16) -> dict:
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")

    inter = mhalib.sinusoidal_encoding(n_positions, d_model)
    concat = np.concatenate([inter[:, 0::2], inter[:, 1::2]], axis=1)  # (n, D): all sines, then all cosines
    return dict(d_model=d_model, n_positions=n_positions,
                max_vector_difference=float(np.abs(inter - concat).max()),
                max_gram_difference=float(np.abs(inter @ inter.T - concat @ concat.T).max()),
                permutation=mhalib.layout_permutation(d_model))


def table(data: dict) -> str:
    return markdown_table([f"comparison at d_model = {data['d_model']}, {style.counted(data['n_positions'], 'position')}", "largest difference"], [
        ["the vectors PE(p), interleaved vs concatenated", style.fixed(data['max_vector_difference'], 3)],
        ["the dot products PE(p)·PE(q)", style.sci(data['max_gram_difference'], 1)],
    ], "lr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
