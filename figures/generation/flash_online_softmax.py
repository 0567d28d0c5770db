"""One query row through four key blocks: the running maximum, running sum and output of the online softmax.

For one query against 16 keys in blocks of 4 (random q, k, v, one seed), after each block:
the running maximum m of the scores seen so far, the running sum l of exp(score - m), and
the first output coordinate o, rescaled whenever m grows; after the last block o equals the
exact softmax output (dashed). Computed with mhalib.tiled_attention(trace=True).
Page: FlashAttention.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

#: A phone gets the three panels one under another (style.narrow()).
NARROW = True


def data(n_keys: Annotated[int, Range(2, 256)] = 16, block: Annotated[int, Range(1, 256)] = 4,
         d: Annotated[int, Range(1, 64)] = 8, seed: Annotated[int, Range(0, None)] = 3) -> dict:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(1, d))  # one query row
    k = rng.normal(size=(n_keys, d)) * 1.5
    v = rng.normal(size=(n_keys, d))
    out, trace = mhalib.tiled_attention(q, k, v, block_q=1, block_k=block, trace=True)
    exact, weights = mhalib.scaled_dot_product_attention(q, k, v)
    scores = (q @ k.T)[0] / np.sqrt(d)
    m = np.array([row[0] for row in trace["m"]])
    l = np.array([row[0] for row in trace["l"]])
    o = np.array([row[0, 0] for row in trace["o"]])
    return dict(n_keys=n_keys, block=block, d=d, seed=seed, scores=scores, key_blocks=trace["key_blocks"],
                m=m, l=l, o=o, exact_o=float(exact[0, 0]), exact_max=float(scores.max()),
                exact_sum=float(np.exp(scores - scores.max()).sum()),
                final_error=float(np.abs(out - exact).max()), n_blocks=len(trace["m"]),
                rescale_example=float(np.exp(2.0 - 5.0)))  # the factor when the maximum grows from 2 to 5


def draw(data: dict):
    if style.narrow():
        fig, (a, b, c) = style.new_figure(5.6, 9.6, nrows=3)
    else:
        fig, (a, b, c) = style.new_figure(9.0, 3.6, ncols=3)
    col = style.colors()
    palette = style.palette()
    blocks = np.arange(1, data["n_blocks"] + 1)
    s = np.asarray(data["scores"])
    for j, (start, stop) in enumerate(data["key_blocks"]):
        a.plot(np.full(stop - start, j + 1), s[start:stop], "o", color=col["muted"], ms=4, alpha=0.8, zorder=3,
               label="score of a key" if j == 0 else None)
    a.plot(blocks, data["m"], "_-", ms=18, mew=2, color=palette[0], label="running max m")
    a.set(xlabel="key block", ylabel="score", title="scores and running max")
    a.legend(fontsize=11)
    b.plot(blocks, data["l"], "s-", color=palette[1], label="running sum l")
    b.axhline(data["exact_sum"], color=col["muted"], ls="--", lw=1, label="exact Σ exp(s − max s)")
    b.set(xlabel="key block", title="sum of exp(score − m)")
    b.legend(fontsize=11, loc="best")
    c.plot(blocks, data["o"], "^-", color=palette[2], label="o, first coordinate")
    c.axhline(data["exact_o"], color=col["muted"], ls="--", lw=1, label="exact output")
    c.set(xlabel="key block", title="output after each block")
    c.legend(fontsize=11)
    for ax in (a, b, c):
        if len(blocks) <= 12:
            ax.set_xticks(blocks)  # every block
        else:  # a label on each of 256 blocks ran into one bar: whole steps instead
            style.whole_ticks(ax, "x")
        ax.grid(alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
