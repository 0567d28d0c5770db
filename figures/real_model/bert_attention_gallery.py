"""All 72 heads of all-MiniLM-L6-v2 on one sentence (6 layers x 12 heads), with one head enlarged.

Left: every head's attention map as a thumbnail (rows: layers 1-6, columns: heads 1-12;
on a phone, rows: heads, columns: layers). Right (on a phone, below): the head chosen by
--layer/--head, counted from 1 as in the grid (by default the strongest previous-token
head; with only one of them, the strongest in that layer or among that head's layers),
drawn with its tokens. Computed by mhalib's own BERT forward
pass. Page: what real heads learn.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

from mhalib import examples
from mhalib.models import bert
from figures._kit import cli, style
from figures._kit.contract import Range

#: A phone gets the grid turned a quarter (heads as rows) and the enlarged head under it (style.narrow()).
NARROW = True


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"zoom": ("tokens", "tokens")}


def data(sentence: str = examples.REAL_SENTENCES[1], layer: Annotated[int | None, Range(1, 6)] = None,
         head: Annotated[int | None, Range(1, 12)] = None) -> dict:
    """``layer`` (1-6) and ``head`` (1-12) count from 1, as the figure's labels do."""
    r = bert.encode(sentence)
    L, H = np.shape(r["attentions"])[:2]
    for name, value, n in (("layer", layer, L), ("head", head, H)):
        if value is not None and not 1 <= value <= n:
            raise ValueError(f"{name} counts from 1 to {n}, got {value}")
    if layer is None or head is None:  # the head that best follows the previous token
        prev = np.asarray(bert.corpus_scores(examples.REAL_SENTENCES)["previous token"], dtype=float)
        allowed = np.full(prev.shape, -np.inf)
        rows = slice(None) if layer is None else slice(layer - 1, layer)
        cols = slice(None) if head is None else slice(head - 1, head)
        allowed[rows, cols] = prev[rows, cols]
        layer, head = (int(v) + 1 for v in np.unravel_index(np.argmax(allowed), allowed.shape))
    return dict(sentence=sentence, tokens=r["tokens"], attentions=r["attentions"], layer=layer, head=head,
                zoom=r["attentions"][layer - 1, head - 1])



def draw(data: dict):
    """On a page the grid (layers as rows) and the enlarged head side by side; on a phone
    (``style.narrow()``) the grid turned a quarter, heads as rows, so that each thumbnail is
    twice as wide, and the enlarged head under it."""
    A = np.asarray(data["attentions"])
    L, H, T, _ = A.shape
    narrow = style.narrow()
    rows, cols = (H, L) if narrow else (L, H)  # thumbnails down and across
    gap = 1
    mosaic = np.full((rows * (T + gap) - gap, cols * (T + gap) - gap), np.nan)
    for l in range(L):
        for h in range(H):
            r, c = (h, l) if narrow else (l, h)
            mosaic[r * (T + gap):r * (T + gap) + T, c * (T + gap):c * (T + gap) + T] = A[l, h]
    if narrow:
        fig, (a, b) = style.new_figure(5.6, 14.4, nrows=2, height_ratios=(2.0, 1))
    else:
        fig, (a, b) = style.new_figure(9.0, 4.2, ncols=2, width_ratios=(2.0, 1))
    a.imshow(mosaic, cmap=style.SEQUENTIAL, vmin=0, vmax=1, interpolation="nearest")
    a.set_xticks([i * (T + gap) + T / 2 - 0.5 for i in range(cols)], labels=[str(i + 1) for i in range(cols)])
    a.set_yticks([i * (T + gap) + T / 2 - 0.5 for i in range(rows)], labels=[str(i + 1) for i in range(rows)])
    a.set(xlabel="layer" if narrow else "head", ylabel="head" if narrow else "layer", title="every head on one sentence")
    a.tick_params(length=0)
    for s in a.spines.values():
        s.set_visible(False)
    l, h = data["layer"] - 1, data["head"] - 1
    r, c = (h, l) if narrow else (l, h)
    a.add_patch(style.plt.Rectangle((c * (T + gap) - 0.5, r * (T + gap) - 0.5), T, T, fill=False,
                                     edgecolor=style.colors()["accent"], lw=2))
    style.heatmap(data["zoom"], data["tokens"], data["tokens"], ax=b, vmin=0, vmax=1, xlabel="key", ylabel="query",
                   title=f"layer {data['layer']}, head {data['head']}")
    b.set_aspect("equal")
    b.tick_params(axis="x", labelrotation=90)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
