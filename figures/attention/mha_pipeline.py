"""Multi-head attention as a pipeline drawn from real arrays: project, split, attend, concat, W_O.

Uses the d = 6, h = 3 example (4 tokens, d_head = 2); every panel is the actual array
with its shape. Page: multi-head attention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range


def data(seed: Annotated[int, Range(0, None)] = 6) -> dict:

    ex = examples.six_by_three(seed)
    t = mhalib.mha_trace(ex["X"], ex["W_Q"], ex["W_K"], ex["W_V"], ex["W_O"], n_heads=ex["n_heads"])
    return dict(tokens=ex["tokens"], X=ex["X"], n_heads=ex["n_heads"], seed=seed,
                **{k: t[k] for k in ("q", "k", "v", "q_heads", "weights", "heads_out", "concat", "out")})


def _shape(a) -> str:
    import numpy as np

    return "×".join(map(str, np.shape(a)))


def draw(data: dict):
    import numpy as np

    H = data["n_heads"]
    fig = style.plt.figure(figsize=(12.5, 5.6), layout="constrained")
    grid = fig.add_gridspec(H, 7)
    c = style.colors()
    tok = data["tokens"]

    def panel(ax, a, title, rows=True, cmap=style.DIVERGING, vmin=-2, vmax=2):
        style.heatmap(a, tok if rows else None, None, ax=ax, cmap=cmap, vmin=vmin, vmax=vmax)
        ax.set_xticks([])
        if not rows:
            ax.set_yticks([])
        ax.set_title(title, fontsize=9)

    panel(fig.add_subplot(grid[:, 0]), data["X"], f"X\n{_shape(data['X'])}")
    for r, key in enumerate(("q", "k", "v")):
        panel(fig.add_subplot(grid[r, 1]), data[key], f"{key.upper()} = X W_{key.upper()}  ({_shape(data[key])})", rows=False)
    for h in range(H):
        panel(fig.add_subplot(grid[h, 2]), data["q_heads"][h], f"Q head {h + 1} ({_shape(data['q_heads'][h])})", rows=False)
        panel(fig.add_subplot(grid[h, 3]), data["weights"][h], f"A{h + 1} = softmax(Q Kᵀ/√d_head) ({_shape(data['weights'][h])})",
              rows=False, cmap=style.SEQUENTIAL, vmin=0, vmax=1)
        panel(fig.add_subplot(grid[h, 4]), data["heads_out"][h], f"head {h + 1} = A{h + 1} V ({_shape(data['heads_out'][h])})",
              rows=False)
    panel(fig.add_subplot(grid[:, 5]), data["concat"], f"concat\n{_shape(data['concat'])}", rows=False)
    panel(fig.add_subplot(grid[:, 6]), data["out"], f"out = concat W_O\n{_shape(data['out'])}", rows=False)
    steps = ["1 project", "2 split", "3 attend", "", "4 concat", "5 W_O"]
    for i, s in enumerate(steps):
        if s:
            fig.text((i + 1.5) / 7, 1.01, f"→ {s}", ha="center", va="bottom", color=c["accent"], fontsize=10,
                     fontweight="bold")
    fig.suptitle(f"Multi-head attention, T = {len(tok)}, d_model = {np.shape(data['X'])[1]}, H = {H}", y=1.08)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
