"""A tiny language model of this course's prose: its loss on training text and on held-out text, step by step.

The mean next-character loss (nats) on fixed windows of the training text and of the held-out
paragraphs, every few steps; the dotted line is a uniform guess over the characters, ln V.
The gap between the curves is what the model has learnt of its training text only, not of
the language. Trained by tools/train_lm.py; data in figures/data/tiny_lm.json.
"""
from __future__ import annotations

import functools
import json
import math

import numpy as np

from mhalib.models.chars import CharTokenizer
from mhalib.models.tiny_numpy import TinyConfig, checked_weights
from figures._kit import cli, style
from figures._kit.contract import data_file

SOURCE = data_file("tiny_lm.json")
WEIGHTS = data_file("tiny_lm_weights.npz")


@functools.lru_cache(maxsize=1)
def load_model() -> tuple[TinyConfig, dict, CharTokenizer]:
    """The stored model: its config, its weights (float64, read-only, checked against the
    config) and its character tokenizer. Read once per process; the sampling figures share it."""
    d = json.loads(SOURCE.read_text())
    config = TinyConfig.from_dict(d["config"]["model"])
    with np.load(WEIGHTS) as f:
        weights = {k: a.astype(np.float64) for k, a in checked_weights(dict(f), config).items()}
    for a in weights.values():
        a.flags.writeable = False
    return config, weights, CharTokenizer("".join(d["vocab"]))


def data() -> dict:
    d = json.loads(SOURCE.read_text())
    curve = d["curve"]
    best = min(curve, key=lambda p: p["held_out"])
    c = d["config"]
    return dict(
        steps=[p["step"] for p in curve], train=[p["train"] for p in curve], held_out=[p["held_out"] for p in curve],
        best_step=best["step"], best_held_out=best["held_out"],
        final_train=d["final"]["train"], final_held_out=d["final"]["held_out"],
        gap=d["final"]["held_out"] - d["final"]["train"],
        vocab=len(d["vocab"]), chance_loss=math.log(len(d["vocab"])), parameters=d["parameters"],
        train_chars=d["corpus"]["train_chars"], held_out_chars=d["corpus"]["held_out_chars"],
        pages=len(d["corpus"]["pages"]), paragraphs=d["corpus"]["paragraphs"],
        held_out_every=d["corpus"]["held_out_every"],
        steps_total=c["train"]["steps"], batch_size=c["train"]["batch_size"], context=c["context"],
        chars_seen=c["train"]["steps"] * c["train"]["batch_size"] * c["context"],
        epochs=c["train"]["steps"] * c["train"]["batch_size"] * c["context"] / d["corpus"]["train_chars"],
        model=c["model"], wall_time_min=d["wall_time_s"] / 60, date=d["date"], cores=d["machine"]["cores"],
    )


def draw(data: dict):
    fig, ax = style.new_figure(5.6, 3.6)
    muted = style.colors()["muted"]
    palette = style.palette()
    ax.plot(data["steps"], data["train"], "-", color=palette[0], lw=2, label="training text")
    ax.plot(data["steps"], data["held_out"], "-", color=palette[1], lw=2, label="held-out paragraphs")
    ax.axhline(data["chance_loss"], color=muted, lw=1, ls=":")
    ax.annotate(f"uniform guess, ln {data['vocab']}", (data["steps"][-1], data["chance_loss"]), xytext=(0, 4),
                textcoords="offset points", ha="right", va="bottom", color=muted, fontsize=11)
    ax.set(xlabel="training step", ylabel="loss per character (nats)", ylim=(0, data["chance_loss"] * 1.15),
           title=f"{style.fixed(data['parameters'] / 1e6, 1)}M parameters, {style.fixed(data['train_chars'] / 1e3, 0)}k characters")
    ax.grid(alpha=0.4)
    ax.legend(fontsize=11, loc="upper right", bbox_to_anchor=(1.0, 0.9))
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
