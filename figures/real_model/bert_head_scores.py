"""Head-type scores of all-MiniLM-L6-v2: seven 6 x 12 maps (layers x heads), averaged over the built-in sentences.

Previous token, next token, self, to [CLS], to [SEP], to punctuation: the mean attention
weight on that key; entropy: mean row entropy / ln T (1 = uniform). Definitions in
mhalib.models.head_analysis. Page: what real heads learn.
"""
from __future__ import annotations

import numpy as np

from mhalib import examples
from mhalib.models import bert
from mhalib.models.head_analysis import HEAD_TYPES
from figures._kit import cli, style

#: A phone gets two maps a row instead of four (style.narrow()).
NARROW = True


def data() -> dict:
    scores = bert.corpus_scores(examples.REAL_SENTENCES)
    best = {k: dict(value=float(np.nanmax(v)), layer=int(np.nanargmax(v) // v.shape[1]) + 1,
                    head=int(np.nanargmax(v) % v.shape[1]) + 1) for k, v in scores.items()}
    return dict(sentences=list(examples.REAL_SENTENCES), n_sentences=len(examples.REAL_SENTENCES), scores=scores, best=best,
                layer_means={k: np.nanmean(v, axis=1) for k, v in scores.items()})


def draw(data: dict):
    """Four maps a row on a page, two on a phone (``style.narrow()``); the eighth slot holds the key."""
    ncols = 2 if style.narrow() else 4
    nrows = -(-(len(HEAD_TYPES) + 1) // ncols)
    fig, axes = style.new_figure(5.8 if ncols == 2 else 9.0, 1.75 * nrows + 0.3, nrows=nrows, ncols=ncols)
    for ax, key in zip(axes.flat, HEAD_TYPES):
        v = np.asarray(data["scores"][key], dtype=float)
        L, H = v.shape
        im, _ = style.heatmap(v, ax=ax, vmin=0, vmax=1, title=key)
        ax.set_yticks(range(L), labels=[str(l + 1) for l in range(L)])
        heads = sorted({0, H // 3, 2 * H // 3, H - 1})  # 1, 5, 9, 12: a label for every head is too tight
        ax.set_xticks(heads, labels=[str(h + 1) for h in heads])
        b = data["best"][key]
        ax.add_patch(style.plt.Rectangle((b["head"] - 1.5, b["layer"] - 1.5), 1, 1, fill=False,
                                          edgecolor=style.colors()["accent"], lw=2))
    for ax in axes.flat[len(HEAD_TYPES):]:
        ax.axis("off")
    key_ax = axes.flat[len(HEAD_TYPES)]
    key_ax.text(0.0, 1.0, f"rows: layers 1–{L}\ncolumns: heads 1–{H}\nframed: the top head", fontsize=11,
                va="top", transform=key_ax.transAxes)
    cb = fig.colorbar(im, ax=key_ax, orientation="horizontal", fraction=0.25, aspect=12, location="bottom")
    cb.outline.set_visible(False)
    cb.set_ticks([0, 0.5, 1])
    for ax in axes[:, 0]:
        ax.set_ylabel("layer")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
