"""Head ablation in all-MiniLM-L6-v2: how far the sentence embedding moves when one head is removed.

Top: 1 - cos(e, e without head) for each of the 72 heads, averaged over the built-in
sentences, printed in thousandths. Bottom: removing the least important heads first, how far the embedding drifts
as the removed fraction grows. In the spirit of Michel et al. (2019), "Are Sixteen Heads
Really Better than One?". Page: what real heads learn.
"""
from __future__ import annotations

import numpy as np

from mhalib import examples
from mhalib.models import bert
from figures._kit import cli, style


def data() -> dict:
    s = examples.REAL_SENTENCES
    imp = bert.head_ablation(s)
    flat = np.sort(imp, axis=None)[::-1]
    top = max(1, int(round(0.1 * flat.size)))
    return dict(importance=imp, cumulative=bert.cumulative_ablation(s), n_sentences=len(s),
                max=float(imp.max()), median=float(np.median(imp)),
                top10_share=float(flat[:top].sum() / flat.sum()),
                argmax=[int(v) + 1 for v in np.unravel_index(np.argmax(imp), imp.shape)])


def draw(data: dict):
    """One layout for every screen: the 6 x 12 map above, the cumulative curve under it.

    The map prints each head's value in thousandths (0.054 as 54), two significant digits,
    so that 72 numbers fit in a 6 in wide figure at 11 pt; with every value printed, the
    map needs no colour bar."""
    fig, (a, b) = style.new_figure(5.8, 6.6, nrows=2, height_ratios=(1.15, 1))
    imp = np.asarray(data["importance"])
    L, H = imp.shape
    milli = imp * 1000
    _, texts = style.heatmap(milli, [str(l + 1) for l in range(L)], [str(h + 1) for h in range(H)], ax=a,
                             annotate="{:.1f}", fontsize=11, xlabel="head", ylabel="layer",
                             title="removing one head: (1 − cos) × 1000")
    for text, value in zip(texts, milli.flat):
        if value >= 9.95:  # two significant digits: 2.4, 9.5, 13, 46
            text.set_text(style.fixed(value, 0))
    frac = [r["fraction"] * 100 for r in data["cumulative"]]
    b.plot(frac, [r["drift"] for r in data["cumulative"]], "o-", lw=2)
    b.set(xlabel="% of heads removed (least important first)", ylabel="1 − cos to the intact\nembedding",
          title="removing many heads")
    b.grid(alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
