"""Multi-head attention as a pipeline drawn from real arrays: project, split, attend, concatenate, project.

Uses the d = 6, h = 3 example (4 tokens, d_head = 2); every panel is the actual array
with its shape. Page: multi-head attention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"X": ("tokens", None), "q": ("tokens", None), "k": ("tokens", None), "v": ("tokens", None),
               "q_heads": ("tokens", None), "weights": ("tokens", "tokens"), "heads_out": ("tokens", None),
               "concat": ("tokens", None), "out": ("tokens", None)}


def data(seed: Annotated[int, Range(0, None)] = 6) -> dict:

    ex = examples.six_by_three(seed)
    t = mhalib.mha_trace(ex["X"], ex["W_Q"], ex["W_K"], ex["W_V"], ex["W_O"], n_heads=ex["n_heads"])
    return dict(tokens=ex["tokens"], X=ex["X"], n_heads=ex["n_heads"], seed=seed,
                **{k: t[k] for k in ("q", "k", "v", "q_heads", "weights", "heads_out", "concat", "out")})


#: The phone layout stacks the pipeline top to bottom (the wide one runs left to right).
NARROW = True


def _shape(a) -> str:
    import numpy as np

    return "×".join(map(str, np.shape(a)))


def _step(ax, text: str) -> None:
    """A header cell naming a step of the pipeline, in the theme's accent colour."""
    ax.axis("off")
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=11,
            fontweight="bold", color=style.colors()["accent"])


def draw(data: dict):
    import numpy as np

    H = data["n_heads"]
    tok = data["tokens"]
    T, D = np.shape(data["X"])
    narrow = style.narrow()

    def panel(ax, a, title, rows=False, cmap=style.DIVERGING, vmin=-2, vmax=2):
        style.heatmap(a, tok if rows else None, None, ax=ax, cmap=cmap, vmin=vmin, vmax=vmax)
        ax.set_xticks([])
        if not rows:
            ax.set_yticks([])
        ax.set_title(title, fontsize=11)

    def weights(ax, h, sep):
        panel(ax, data["weights"][h], f"$A_{h + 1}${sep}{_shape(data['weights'][h])}",
              cmap=style.SEQUENTIAL, vmin=0, vmax=1)

    qkv = [(key, data[key], f"${key.upper()} = XW_{key.upper()}$") for key in ("q", "k", "v")]
    heads = [(f"$Q_{h + 1}$", f"$A_{h + 1}V_{h + 1}$") for h in range(H)]
    if narrow:
        # Top to bottom: X and its three projections; one row per head (its queries, its
        # weights, its output); the concatenation and the output.
        fig = style.plt.figure(figsize=(5.4, 2.1 + 1.45 * H + 2.0), layout="constrained")
        grid = fig.add_gridspec(5 + H, 4, height_ratios=[0.2, 1.3, 0.2] + [1] * H + [0.2, 1.3],
                                width_ratios=[1.25, 1, 1, 1])
        _step(fig.add_subplot(grid[0, 1:]), "1 project")
        panel(fig.add_subplot(grid[1, 0]), data["X"], f"$X$\n{_shape(data['X'])}", rows=True)
        for i, (key, a, title) in enumerate(qkv):
            panel(fig.add_subplot(grid[1, 1 + i]), a, f"{title}\n{_shape(a)}")
        _step(fig.add_subplot(grid[2, :]), "2 split, 3 attend: one row per head")
        for h, (q_title, out_title) in enumerate(heads):
            row = grid[3 + h, :].subgridspec(1, 3, width_ratios=[2, 4, 2])
            panel(fig.add_subplot(row[0]), data["q_heads"][h], f"{q_title}  {_shape(data['q_heads'][h])}")
            weights(fig.add_subplot(row[1]), h, "  ")
            panel(fig.add_subplot(row[2]), data["heads_out"][h], f"{out_title}  {_shape(data['heads_out'][h])}")
        r = 3 + H
        _step(fig.add_subplot(grid[r, :2]), "4 concat")
        _step(fig.add_subplot(grid[r, 2:]), "5 $W_O$")
        panel(fig.add_subplot(grid[r + 1, :2]), data["concat"], f"concat  {_shape(data['concat'])}")
        panel(fig.add_subplot(grid[r + 1, 2:]), data["out"], f"out = concat $W_O$  {_shape(data['out'])}")
    else:
        # Left to right, one column per step; the heads' columns hold one row per head.
        fig = style.plt.figure(figsize=(6.85, 5.4), layout="constrained")
        grid = fig.add_gridspec(1 + H, 7, height_ratios=[0.16] + [1] * H, width_ratios=[2.7, 3, 1.6, 2.3, 1.6, 2.9, 3.7])
        for col, text in ((1, "1 project"), (2, "2 split"), (slice(3, 5), "3 attend"), (5, "4 concat"), (6, "5 $W_O$")):
            _step(fig.add_subplot(grid[0, col]), text)
        panel(fig.add_subplot(grid[1:, 0]), data["X"], f"$X$\n{_shape(data['X'])}", rows=True)
        for r, (key, a, title) in enumerate(qkv):
            panel(fig.add_subplot(grid[1 + r, 1]), a, f"{title}\n{_shape(a)}")
        for h, (q_title, out_title) in enumerate(heads):
            panel(fig.add_subplot(grid[1 + h, 2]), data["q_heads"][h], f"{q_title}\n{_shape(data['q_heads'][h])}")
            weights(fig.add_subplot(grid[1 + h, 3]), h, "\n")
            panel(fig.add_subplot(grid[1 + h, 4]), data["heads_out"][h], f"{out_title}\n{_shape(data['heads_out'][h])}")
        panel(fig.add_subplot(grid[1:, 5]), data["concat"], f"concat\n{_shape(data['concat'])}")
        panel(fig.add_subplot(grid[1:, 6]), data["out"], f"out = concat $W_O$\n{_shape(data['out'])}")
    fig.suptitle(f"Multi-head attention, $T$ = {T}, $d_{{\\mathrm{{model}}}}$ = {D}, $H$ = {H}", fontsize=12)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
