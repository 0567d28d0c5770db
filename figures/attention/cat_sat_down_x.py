"""The embeddings X of "The cat sat down" (d_model = 4) with the boundary between the two heads' dimensions.

Dims 0-1 carry a feature shared by "cat" and "sat"; dims 2-3 one shared by "The" and
"down". Shown in the figure gallery; the heads-in-action page uses these embeddings.
"""
from __future__ import annotations

from mhalib import examples
from figures._kit import cli, style


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"X": ("tokens", None)}


def data() -> dict:
    ex = examples.the_cat_sat_down()
    return dict(tokens=ex["tokens"], X=ex["X"], n_heads=ex["n_heads"], d_head=ex["X"].shape[1] // ex["n_heads"])


def draw(data: dict, ax=None):
    if ax is None:
        _, ax = style.new_figure(4.6, 3.4)
    D = len(data["X"][0])
    style.heatmap(data["X"], data["tokens"], [f"d{i}" for i in range(D)], ax=ax, vmin=0, vmax=1,
                   annotate="{:.1f}", colorbar="value", xlabel="dimension", title="X, one row per token", fontsize=11)
    for h in range(1, data["n_heads"]):
        ax.axvline(h * data["d_head"] - 0.5, color=style.colors()["accent"], lw=3)
    for h in range(data["n_heads"]):
        ax.text((h + 0.5) * data["d_head"] - 0.5, -0.75, f"head {h + 1}", ha="center", va="bottom",
                color=style.colors()["accent"], fontsize=11, fontweight="bold")
    ax.set_ylim(len(data["tokens"]) - 0.5, -1.1)
    return ax.figure



main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
