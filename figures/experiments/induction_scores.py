"""An induction head grows: previous-token scores in layer 1 and induction scores in layer 2, across training.

At every checkpoint of the induction run (seed 0), each head's previous-token score (mean
attention from a token to the one just before it) and induction score (mean attention from a
repeated token to the token that followed its earlier copy), computed by
mhalib.models.head_analysis on the fixed evaluation batch, as in Olsson et al. (2022). The
shaded span runs from the last checkpoint before the loss drops to the first after it. Data
in figures/data/tiny_decoders.json (tools/train_tiny.py). Page: An induction head grows.
"""
from __future__ import annotations

import numpy as np

from figures._kit import cli, style
from figures.experiments.induction_loss_curve import load


def data() -> dict:
    d = load()
    c = d["config"]
    run = next(r for r in d["induction"] if r["seed"] == c["stored_seed"])
    cps = run["checkpoints"]
    prev = np.array([cp["previous_token"] for cp in cps])  # (checkpoints, layers, H)
    ind = np.array([cp["induction"] for cp in cps])  # (checkpoints, layers, H)
    steps = [cp["step"] for cp in cps]
    ib, ia = steps.index(run["before"]), steps.index(run["after"])
    best_prev = int(np.argmax(prev[-1, 0]))  # the strongest previous-token head of layer 1 at the end
    best_ind = int(np.argmax(ind[-1, 1]))  # the strongest induction head of layer 2 at the end
    others = []  # the same maxima for every seed, to show the drop is not one seed's accident
    for r in d["induction"]:
        p = np.array([cp["previous_token"] for cp in r["checkpoints"]])
        q = np.array([cp["induction"] for cp in r["checkpoints"]])
        others.append(dict(seed=r["seed"], prev_l1_max_end=float(p[-1, 0].max()), ind_l2_max_end=float(q[-1, 1].max()),
                           prev_l1_max_start=float(p[0, 0].max()), ind_l2_max_start=float(q[0, 1].max())))
    return dict(steps=steps, before=run["before"], after=run["after"], seed=run["seed"],
                previous_token=prev, induction=ind, n_heads=prev.shape[2],
                best_prev_head=best_prev + 1, best_ind_head=best_ind + 1,
                prev_before=float(prev[ib, 0, best_prev]), prev_after=float(prev[ia, 0, best_prev]),
                prev_end=float(prev[-1, 0, best_prev]), prev_start=float(prev[0, 0, best_prev]),
                ind_before=float(ind[ib, 1, best_ind]), ind_after=float(ind[ia, 1, best_ind]),
                ind_end=float(ind[-1, 1, best_ind]), ind_start=float(ind[0, 1, best_ind]),
                ind_l1_end_max=float(ind[-1, 0].max()), prev_l2_end_max=float(prev[-1, 1].max()),
                seeds=others)


def draw(data: dict):
    fig, axes = style.new_figure(5.6, 6.0, nrows=2, sharex=True)
    steps = np.array(data["steps"])
    muted = style.colors()["muted"]
    palette = style.palette()
    panels = ((axes[0], np.asarray(data["previous_token"])[:, 0], data["best_prev_head"],
               "layer 1: previous-token score"),
              (axes[1], np.asarray(data["induction"])[:, 1], data["best_ind_head"], "layer 2: induction score"))
    for ax, scores, best, title in panels:
        ax.axvspan(data["before"], data["after"], color=muted, alpha=0.15, lw=0)
        for h in range(data["n_heads"]):
            strong = h + 1 == best
            ax.plot(steps, scores[:, h], "-", color=palette[h % 6], lw=2.4 if strong else 1.2,
                    label=f"head {h + 1}")
        ax.set(ylabel="mean weight", title=title, ylim=(0, 1))
        ax.grid(alpha=0.4)
    axes[1].set_xlabel("training step")
    axes[1].legend(fontsize=11, loc="lower right")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
