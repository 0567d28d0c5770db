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


def data() -> dict:
    scores = bert.corpus_scores(examples.REAL_SENTENCES)
    best = {k: dict(value=float(np.nanmax(v)), layer=int(np.nanargmax(v) // v.shape[1]) + 1,
                    head=int(np.nanargmax(v) % v.shape[1]) + 1) for k, v in scores.items()}
    return dict(sentences=list(examples.REAL_SENTENCES), n_sentences=len(examples.REAL_SENTENCES), scores=scores, best=best,
                layer_means={k: np.nanmean(v, axis=1) for k, v in scores.items()})


def draw(data: dict):
    fig, axes = style.new_figure(12.0, 6.4, nrows=2, ncols=4)
    for ax, key in zip(axes.flat, HEAD_TYPES):
        v = np.asarray(data["scores"][key], dtype=float)
        L, H = v.shape
        style.heatmap(v, [str(l + 1) for l in range(L)], [str(h + 1) for h in range(H)], ax=ax, vmin=0, vmax=1,
                       title=key, fontsize=7)
        b = data["best"][key]
        ax.add_patch(style.plt.Rectangle((b["head"] - 1.5, b["layer"] - 1.5), 1, 1, fill=False,
                                          edgecolor=style.colors()["accent"], lw=2))
        ax.tick_params(labelsize=8)
    axes.flat[-1].axis("off")
    axes.flat[-1].text(0.0, 0.5, "rows: layers 1–6\ncolumns: heads 1–12\nframed: the top head\ncolour: 0 to 1",
                       fontsize=10, va="center")
    for ax in axes[:, 0]:
        ax.set_ylabel("layer")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
