"""The three masks of an encoder-decoder on one example: source padding, target causal, cross padding.

The source "the cat sleeps" is padded to 5 tokens and the target "<s> le chat dort" has 4
(mhalib.examples.translation_pair). Left: the encoder's self-attention may read the 3 real
source tokens (mhalib.padding_mask). Middle: the decoder's self-attention is causal
(mhalib.causal_mask). Right: the cross-attention, 4 target rows by 5 source columns, may
read the 3 real source tokens. The data also check, on the weights that
mhalib.examples.encoder_decoder_attention computes, that every forbidden cell gets weight 0
and every row sums to 1. Page: cross-attention.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
from matplotlib.colors import ListedColormap

from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range

#: A phone gets the three masks one under the other (style.narrow()).
NARROW = True

#: (key of the mask, panel title, rows' tokens, columns' tokens)
PANELS = (("encoder", "encoder\nself-attention", "source", "source"),
          ("decoder", "decoder\nself-attention", "target", "target"),
          ("cross", "cross-attention\n(decoder reads encoder)", "target", "source"))


def data(seed: Annotated[int, Range(0, None)] = 0) -> dict:
    ex = examples.translation_pair(seed)
    run = examples.encoder_decoder_attention(ex)
    masks = run["masks"]
    weights = dict(encoder=run["enc_weights"][0], decoder=run["dec_weights"][0], cross=run["cross_weights"][0])
    checks = {}
    for name, w in weights.items():  # w (H, rows, cols)
        allowed = masks[name]
        checks[name] = dict(
            shape=list(allowed.shape), allowed=int(allowed.sum()), cells=int(allowed.size),
            zero_where_masked=bool(np.all(w[:, ~allowed] == 0.0)),
            positive_where_allowed=bool(np.all(w[:, allowed] > 0.0)),
            max_row_sum_error=float(np.abs(w.sum(axis=-1) - 1.0).max()))
    return dict(source=ex["source"], target=ex["target"], S=len(ex["source"]), T=len(ex["target"]),
                n_real=int(ex["src_lengths"][0]), n_pad=len(ex["source"]) - int(ex["src_lengths"][0]),
                d_model=int(ex["X_src"].shape[-1]), n_heads=int(ex["n_heads"]),
                masks=masks, checks=checks)


def draw(data: dict):
    narrow = style.narrow()
    S, T = data["S"], data["T"]
    if narrow:
        fig, axes = style.new_figure(3.6, 8.4, nrows=3, height_ratios=[S, T, T])
    else:
        fig, axes = style.new_figure(6.6, 3.0, ncols=3, width_ratios=[S, T, S])
        fig.get_layout_engine().set(wspace=0.12)
    col = style.colors()
    cells = (col["grid"], style.palette()[0])  # forbidden, allowed
    two = ListedColormap(cells)
    marks = [max(("#111111", "#ffffff"), key=lambda ink, c=c: style.contrast(ink, c)) for c in cells]
    tokens = dict(source=data["source"], target=data["target"])
    for ax, (key, title, rows, cols) in zip(axes, PANELS):
        mask = np.asarray(data["masks"][key], dtype=float)
        style.heatmap(mask, tokens[rows], tokens[cols], ax=ax, vmin=0, vmax=1, cmap=two, title=title,
                      xlabel=f"key ({cols})", ylabel=f"query ({rows})")
        ax.set_aspect("equal")
        ax.tick_params(axis="x", rotation=90)
        for (i, j), ok in np.ndenumerate(mask):
            ax.text(j, i, "✓" if ok else "✗", ha="center", va="center", fontsize=11, color=marks[int(ok)])
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
