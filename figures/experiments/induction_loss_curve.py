"""An induction head grows: the loss of a 2-layer attention-only decoder on the repeat task, step by step.

The loss on the repeated tokens of a fixed batch, every few steps of training, for each seed.
It sits near its starting value, then falls within a short window of steps: the phase change that
Olsson et al. (2022) tie to the forming of induction heads. The dashed lines mark the
checkpoints whose attention the page draws (seed 0): just before the drop and after it.
Trained by tools/train_tiny.py; data in figures/data/tiny_decoders.json. Page: An induction head grows.
"""
from __future__ import annotations

import json
import math

import numpy as np

from figures._kit import cli, style
from figures._kit.contract import data_file

SOURCE = data_file("tiny_decoders.json")


def load() -> dict:
    return json.loads(SOURCE.read_text())


def data() -> dict:
    d = load()
    c = d["config"]
    ic = c["induction"]
    runs = []
    for r in d["induction"]:
        cps = r["checkpoints"]
        losses = [cp["loss"] for cp in cps]
        drops = np.diff(losses)
        steepest = int(np.argmin(drops))  # the interval with the largest fall
        runs.append(dict(seed=r["seed"], window=r["after"] - r["before"], steps=[cp["step"] for cp in cps], loss=losses,
                         accuracy=[cp["accuracy"] for cp in cps], before=r["before"], after=r["after"],
                         steepest_from=cps[steepest]["step"], steepest_to=cps[steepest + 1]["step"],
                         loss_start=losses[0], loss_end=losses[-1],
                         loss_before=losses[[cp["step"] for cp in cps].index(r["before"])],
                         loss_after=losses[[cp["step"] for cp in cps].index(r["after"])]))
    stored = next(r for r in runs if r["seed"] == c["stored_seed"])
    return dict(runs=runs, stored=stored, stored_seed=c["stored_seed"], L_train=c["L_train"], vocab=ic["vocab"],
                method=ic["method"], model=ic["model"], train=ic["train"], checkpoint_every=ic["checkpoint_every"],
                eval_seqs=ic["eval_seqs"], chance_loss=math.log(ic["vocab"]), n_seeds=len(runs),
                drop_steps=[r["steepest_from"] for r in runs])


def draw(data: dict):
    fig, ax = style.new_figure(5.6, 3.6)
    muted = style.colors()["muted"]
    palette = style.palette()
    for i, r in enumerate(data["runs"]):
        stored = r["seed"] == data["stored_seed"]
        ax.plot(r["steps"], r["loss"], "-", color=palette[i % 6], lw=2.4 if stored else 1.4, label=f"seed {r['seed']}" + (" (drawn below)" if stored else ""))
    s = data["stored"]
    for step, text in ((s["before"], "before"), (s["after"], "after")):
        ax.axvline(step, color=muted, ls="--", lw=1.2)
        ax.annotate(f"{text}\nstep {step}", (step, data["chance_loss"] * 1.02), xytext=(4, 0),
                    textcoords="offset points", color=muted, fontsize=11, va="bottom")
    ax.axhline(data["chance_loss"], color=muted, lw=1, ls=":")
    ax.set(xlabel="training step", ylabel="loss on the repeat (nats)",
           ylim=(-0.1, data["chance_loss"] * 1.22),
           title=f"{data['model']['n_layers']}-layer attention-only decoder, repeat task")
    ax.grid(alpha=0.4)
    ax.legend(fontsize=11, loc="center right")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
