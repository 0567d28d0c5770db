"""An induction head grows: a previous-token head (layer 1) and an induction head (layer 2), before and after the drop.

The attention of the induction run's model (seed 0) at the checkpoint just before its loss
drops and at the one after, on one repeat-task sequence, computed by mhalib's numpy forward
pass from the stored weights. Lines mark where the segment starts and where its repeat
starts. After the drop, layer 1's head looks one token back and layer 2's head looks at the
token that followed the earlier copy of the current token (a diagonal stripe one step right
of the earlier copy). Data in figures/data/tiny_decoders.json and tiny_decoders_weights.npz.
Page: An induction head grows.
"""
from __future__ import annotations

import numpy as np

from mhalib.models import head_analysis as ha
from mhalib.models.tiny_numpy import TinyConfig, forward, load_weights
from mhalib.models.tiny_tasks import make_batch
from figures._kit import cli, style
from figures._kit.contract import data_file
from figures.experiments.induction_loss_curve import load
from figures.experiments.induction_scores import data as _scores

WEIGHTS = data_file("tiny_decoders_weights.npz")
#: The seed of the sequence drawn.
SEQUENCE_SEED = 3


def data() -> dict:
    d = load()
    c = d["config"]
    ic = c["induction"]
    L = c["L_train"]
    s = _scores()
    batch = make_batch(ic["task"], 1, L, vocab=ic["vocab"], rng=SEQUENCE_SEED)
    tokens = batch["tokens"][0]
    scored = np.flatnonzero(batch["scored"][0])
    n = len(scored) + 1  # segment length
    repeat_start = int(scored[0])
    segment_start = repeat_start - n
    panels = []
    for when in ("before", "after"):
        info = d["weights"]["models"][f"induction_{when}"]
        cfg = TinyConfig.from_dict(info["config"])
        maps = forward(load_weights(WEIGHTS, f"induction_{when}", cfg), cfg, tokens)["attention"]
        A1 = maps[0][0, s["best_prev_head"] - 1]  # (T, T)
        A2 = maps[1][0, s["best_ind_head"] - 1]
        panels.append(dict(when=when, step=info["step"], layer1=A1, layer2=A2,
                           prev_score=float(ha.previous_token_score(A1)),
                           ind_score=float(ha.induction_score(A2, tokens))))
    return dict(tokens=tokens, T=L, segment_start=segment_start, repeat_start=repeat_start, segment_length=n,
                prev_head=s["best_prev_head"], ind_head=s["best_ind_head"], panels=panels)


def draw(data: dict):
    fig, axes = style.new_figure(5.6, 5.9, nrows=2, ncols=2)
    T = data["T"]
    fg = style.colors()["accent"]
    for row, p in zip(axes, data["panels"]):
        for ax, key, title, score in ((row[0], "layer1", f"L1 H{data['prev_head']}",
                                       f"prev. token {style.share(p['prev_score'], 2)}"),
                                      (row[1], "layer2", f"L2 H{data['ind_head']}",
                                       f"induction {style.share(p['ind_score'], 2)}")):
            style.heatmap(p[key], ax=ax, vmin=0, vmax=1)
            for pos in (data["segment_start"], data["repeat_start"]):
                ax.axvline(pos - 0.5, color=fg, lw=1, ls="--")
                ax.axhline(pos - 0.5, color=fg, lw=1, ls="--")
            ax.set_title(f"{p['when']}, step {p['step']}\n{title}: {score}", fontsize=11)
            ticks = sorted({0, data["repeat_start"], T - 1} | ({data["segment_start"]} if data["segment_start"] >= 4 else set()))
            ax.set_xticks(ticks)
            ax.set_yticks(ticks)
    for ax in axes[1]:
        ax.set_xlabel("key")
    for ax in axes[:, 0]:
        ax.set_ylabel("query")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
