"""Multi-head attention as a pipeline drawn from real arrays: project, split, attend, concat, W_O.

Uses the d = 6, h = 3 example (4 tokens, d_head = 2); every panel is the actual array
with its shape. Page: multi-head attention.
"""
from __future__ import annotations

import mhalib
from mhalib import examples
from figures._kit import cli, style


def data(seed: int = 6) -> dict:
    ex = examples.six_by_three(seed)
    t = mhalib.mha_trace(ex["X"], ex["W_Q"], ex["W_K"], ex["W_V"], ex["W_O"], n_heads=ex["n_heads"])
    return dict(tokens=ex["tokens"], X=ex["X"], n_heads=ex["n_heads"], seed=seed,
                **{k: t[k] for k in ("q", "k", "v", "q_heads", "weights", "heads_out", "concat", "out")})


def _shape(a) -> str:
    import numpy as np

    return "×".join(map(str, np.shape(a)))


def draw(d: dict):
    import numpy as np

    H = d["n_heads"]
    fig = style.plt.figure(figsize=(12.5, 5.6), layout="constrained")
    grid = fig.add_gridspec(H, 7)
    c = style.colors()
    tok = d["tokens"]

    def panel(ax, a, title, rows=True, cmap=style.DIVERGING, vmin=-2, vmax=2):
        style.heatmap(a, tok if rows else None, None, ax=ax, cmap=cmap, vmin=vmin, vmax=vmax)
        ax.set_xticks([])
        if not rows:
            ax.set_yticks([])
        ax.set_title(title, fontsize=9)

    panel(fig.add_subplot(grid[:, 0]), d["X"], f"X\n{_shape(d['X'])}")
    for r, key in enumerate(("q", "k", "v")):
        panel(fig.add_subplot(grid[r, 1]), d[key], f"{key.upper()} = X W_{key.upper()}  ({_shape(d[key])})", rows=False)
    for h in range(H):
        panel(fig.add_subplot(grid[h, 2]), d["q_heads"][h], f"Q head {h + 1} ({_shape(d['q_heads'][h])})", rows=False)
        panel(fig.add_subplot(grid[h, 3]), d["weights"][h], f"A{h + 1} = softmax(Q Kᵀ/√d) ({_shape(d['weights'][h])})",
              rows=False, cmap=style.SEQUENTIAL, vmin=0, vmax=1)
        panel(fig.add_subplot(grid[h, 4]), d["heads_out"][h], f"head {h + 1} = A{h + 1} V ({_shape(d['heads_out'][h])})",
              rows=False)
    panel(fig.add_subplot(grid[:, 5]), d["concat"], f"concat\n{_shape(d['concat'])}", rows=False)
    panel(fig.add_subplot(grid[:, 6]), d["out"], f"out = concat W_O\n{_shape(d['out'])}", rows=False)
    steps = ["1 project", "2 split", "3 attend", "", "4 concat", "5 W_O"]
    for i, s in enumerate(steps):
        if s:
            fig.text((i + 1.5) / 7, 1.01, f"→ {s}", ha="center", va="bottom", color=c["accent"], fontsize=10,
                     fontweight="bold")
    fig.suptitle(f"Multi-head attention, T = {len(tok)}, D = {np.shape(d['X'])[1]}, H = {H}", y=1.08)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
