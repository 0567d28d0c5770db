"""Which keys may 3 new tokens see after a 3-token prompt? The causal mask aligned top-left vs bottom-right.

Queries are the 3 newest positions (3, 4, 5); keys are all 6 positions in the cache. Aligned
bottom-right, query i may see keys 0..3+i (right); aligned top-left, as for a square mask,
the first new token would see only key 0 (wrong). Computed with mhalib.causal_mask. Page:
the KV cache.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(prompt: Annotated[int, Range(1, 12)] = 3, new: Annotated[int, Range(1, 12)] = 3) -> dict:
    S = prompt + new
    masks = {align: mhalib.causal_mask(new, S, align=align) for align in ("top_left", "bottom_right")}
    query_positions = list(range(prompt, S))
    # the right mask: a query at absolute position p sees keys 0..p
    expected = np.arange(S)[None, :] <= np.array(query_positions)[:, None]
    return dict(prompt=prompt, new=new, S=S, query_positions=query_positions, masks=masks,
                bottom_right_is_right=bool(np.array_equal(masks["bottom_right"], expected)),
                top_left_is_right=bool(np.array_equal(masks["top_left"], expected)))


def draw(data: dict):
    fig, axes = style.new_figure(5.8, 2.7, ncols=2, sharey=True)
    fig.get_layout_engine().set(wspace=0.08)  # a gutter between the two masks
    titles = {"top_left": "aligned top-left\n(wrong here)", "bottom_right": "aligned bottom-right\n(right)"}
    for k, (ax, (align, mask)) in enumerate(zip(axes, data["masks"].items())):
        style.heatmap(np.asarray(mask, dtype=float), [f"q{p}" for p in data["query_positions"]],
                      [str(j) for j in range(data["S"])], ax=ax, vmin=0, vmax=1, cmap=style.SEQUENTIAL,
                      xlabel="key position", ylabel=None if k else "new token", title=titles[align])
        for i, row in enumerate(np.asarray(mask)):
            for j, ok in enumerate(row):
                ax.text(j, i, "✓" if ok else "✗", ha="center", va="center", fontsize=11,
                        color="#111111" if ok else "#ffffff")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
