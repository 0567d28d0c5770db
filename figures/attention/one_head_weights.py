"""One head against two: sat's scaled scores and attention weights over The, cat, quietly, sat.

The single head (d_head = 4) adds up both slots' dot products, so cat and quietly tie and
share its weight; head 1 and head 2 (d_head = 2 each, the same W_Q and W_K) each put nearly
all of theirs on one token. Page: why one head is not enough.
"""
from __future__ import annotations

from typing import Annotated

from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range

ROWS = (("single", "one head"), ("head1", "head 1"), ("head2", "head 2"))


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"scores": ("rows", "tokens"), "weights": ("rows", "tokens")}


def data(strength: Annotated[float, Range(0.1, 20)] = 3.0) -> dict:
    r = examples.one_head_vs_two(strength)
    return dict(tokens=r["tokens"], query=r["tokens"][r["query"]], strength=r["strength"],
                rows=[label for _, label in ROWS], d_head=[4, 2, 2],
                scores=[r["scores"][k] for k, _ in ROWS], weights=[r["weights"][k] for k, _ in ROWS])


def draw(data: dict):
    # Two 3x4 maps in 6 in at 11 pt: the row names once, on the left; two-line titles.
    fig, axes = style.new_figure(5.85, 3.0, ncols=2, sharey=True)
    labels = [f"{name}\n($d_{{\\mathrm{{head}}}}$ = {d})" for name, d in zip(data["rows"], data["d_head"])]
    smax = max(max(row) for row in data["scores"])
    style.heatmap(data["scores"], labels, data["tokens"], ax=axes[0], vmin=0, vmax=smax, annotate="{:.2f}",
                  fontsize=11)
    axes[0].set_title("scores\n" r"$q \cdot k\, /\sqrt{d_{\mathrm{head}}}$", fontsize=11)
    style.heatmap(data["weights"], None, data["tokens"], ax=axes[1], vmin=0, vmax=1, annotate="{:.3f}",
                  fontsize=11)
    axes[1].set_title("weights\n(softmax of each row)", fontsize=11)
    for ax in axes:
        ax.set_xlabel(f"key (query: {data['query']})")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
