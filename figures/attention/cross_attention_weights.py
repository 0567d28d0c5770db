"""Cross-attention weights of the worked example: 4 target rows over 5 source columns, with and without the padding mask.

The weights of head 1 of mhalib.examples.encoder_decoder_attention (left): every target token
spreads its weight over the 3 real source tokens and gives the 2 padding positions exactly 0.
Right: the same cross-attention called without the mask, where the padding positions take
part of every row. The data also hold both heads, the weight each row puts on the padding
without the mask, and how much that changes the layer's output. Page: cross-attention.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range

#: A phone gets the two panels one under the other (style.narrow()).
NARROW = True


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"weights": ("target", "source"), "weights_unmasked": ("target", "source"),
               "pad_weight_unmasked": (None, "target")}


def data(seed: Annotated[int, Range(0, None)] = 0) -> dict:
    ex = examples.translation_pair(seed)
    run = examples.encoder_decoder_attention(ex)
    n_real = int(ex["src_lengths"][0])
    # the same cross-attention with the padding mask forgotten
    out_unmasked, w_unmasked = mhalib.multi_head_attention(run["h"], *ex["cross"], n_heads=ex["n_heads"],
                                                           context=run["memory"])
    masked, unmasked = run["cross_weights"][0], w_unmasked[0]  # (H, T, S) each
    on_pad = unmasked[:, :, n_real:].sum(axis=-1)  # (H, T): weight on the padding positions
    return dict(source=ex["source"], target=ex["target"], n_heads=ex["n_heads"], n_real=n_real,
                S=len(ex["source"]), T=len(ex["target"]),
                weights=masked, weights_unmasked=unmasked,
                pad_weight_masked=float(masked[:, :, n_real:].max()),
                pad_weight_unmasked=on_pad, pad_weight_unmasked_min=float(on_pad.min()),
                pad_weight_unmasked_max=float(on_pad.max()),
                # the padding positions share one embedding, so one encoder output, key and weight
                pads_weight_difference=float(np.abs(unmasked[:, :, n_real:] - unmasked[:, :, n_real:n_real + 1]).max()),
                output_change=float(np.abs(out_unmasked - run["out"]).max()),
                output_scale=float(np.abs(run["out"]).max()))


def draw(data: dict):
    narrow = style.narrow()
    if narrow:
        fig, axes = style.new_figure(3.6, 5.6, nrows=2)
    else:
        fig, axes = style.new_figure(6.0, 2.9, ncols=2, sharey=True)
        fig.get_layout_engine().set(wspace=0.08)
    panels = (("weights", "head 1, padding masked"), ("weights_unmasked", "head 1, mask forgotten"))
    for k, (ax, (key, title)) in enumerate(zip(axes, panels)):
        w = np.asarray(data[key])[0]  # (T, S), head 1
        _, texts = style.heatmap(w, data["target"], data["source"], ax=ax, vmin=0, vmax=1, annotate="{:.2f}",
                                 fontsize=11, title=title, xlabel="key (source)",
                                 ylabel="query (target)" if narrow or not k else None)
        for text, value in zip(texts, w.ravel()):  # row by row, as heatmap writes them
            if value == 0.0:
                text.set_text("0")  # exactly zero, not a rounded small weight
        ax.tick_params(axis="x", rotation=90)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
