"""What sat receives: the target, the one head's blend and the two heads' output, with their distances from the target.

Left: the four output numbers (who: cat, who: quietly, how: cat, how: quietly). Right: the
distance from the target for every way one head can split its weight between cat and
quietly: it never drops below the best any single distribution can do, while two heads
land almost on the target. Page: why one head is not enough.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range


def data(strength: Annotated[float, Range(0.1, 20)] = 3.0, n_splits: Annotated[int, Range(3, 2001)] = 201) -> dict:
    r = examples.one_head_vs_two(strength)
    ex = examples.cat_quietly_sat(strength)
    cat, quietly = ex["tokens"].index("cat"), ex["tokens"].index("quietly")
    v_out = r["values"] @ ex["W_O"]  # (T, D): what each token would add to sat's output with all the weight
    share = np.linspace(0.0, 1.0, n_splits)  # weight on cat; the rest on quietly
    blends = share[:, None] * v_out[cat] + (1 - share[:, None]) * v_out[quietly]  # (n_splits, D)
    w = r["weights"]["single"]
    return dict(slots=r["slots"], target=r["target"], out_single=r["out_single"], out_two=r["out_two"],
                distance=r["distance"], best_single=r["best_single"], strength=r["strength"],
                share=share, split_distance=np.linalg.norm(blends - r["target"], axis=1),
                single_share=float(w[cat] / (w[cat] + w[quietly])))


#: The phone layout stacks the two panels (side by side they need 7 in at 11 pt).
NARROW = True


def draw(data: dict):
    # Colours from the theme's palette (lines) and style.ink (their labels).
    c = style.colors()
    line = style.palette()
    blue, vermillion, green = line[0], line[5], line[2]
    if style.narrow():
        fig, axes = style.new_figure(5.2, 6.6, nrows=2, height_ratios=[1, 1.1])
    else:
        fig, axes = style.new_figure(7.0, 3.3, ncols=2, width_ratios=[1.3, 1])
    dist = data["distance"]
    rows = [data["target"], data["out_single"], data["out_two"]]
    labels = ["target", f"one head\n({style.fixed(dist['single'], 2)} away)", f"two heads\n({style.fixed(dist['two'], 3)} away)"]
    cols = [s.replace(": ", ":\n") for s in data["slots"]]
    style.heatmap(rows, labels, cols, ax=axes[0], vmin=0, vmax=1, annotate="{:.3f}", fontsize=11)
    axes[0].set_title("sat's output", fontsize=11)
    axes[0].axvline(1.5, color=c["accent"], lw=3)

    ax = axes[1]
    best = data["best_single"]["distance"]
    top = max(data["split_distance"]) * 1.3
    ax.axhspan(0, best, color=c["grid"], alpha=0.5, lw=0)
    ax.text(0.5, 0.5 * best, "out of reach\nof one head", ha="center", va="center", color=c["muted"], fontsize=11)
    ax.plot(data["share"], data["split_distance"], lw=2, color=blue)
    ax.text(0.03, top * 0.985, "one head,\nany split", ha="left", va="top", color=style.ink(blue), fontsize=11)
    ax.axhline(best, color=c["accent"], ls="--", lw=1.5)
    ax.plot([data["single_share"]], [dist["single"]], "o", ms=7, color=vermillion)
    ax.annotate("one head,\nas computed", (data["single_share"], dist["single"]), xytext=(0.5, best + 0.45 * (top - best)),
                ha="center", va="center", color=style.ink(vermillion), fontsize=11,
                arrowprops=dict(arrowstyle="-", color=vermillion, lw=1, shrinkB=4))
    ax.axhline(dist["two"], ls=":", lw=2.5, color=green)
    ax.text(0.5, dist["two"] + 0.04 * top, f"two heads: {style.fixed(dist['two'], 3)}", ha="center", va="bottom",
            color=style.ink(green), fontsize=11, fontweight="bold")
    ax.set_xlabel("one head's weight on cat\n(the rest on quietly)")
    ax.set_ylabel("distance from target")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, top)
    ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
    ax.set_title(f"best any one head can do: {style.fixed(best, 2)}", fontsize=11)
    ax.grid(alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
