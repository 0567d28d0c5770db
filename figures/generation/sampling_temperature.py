"""Sampling: how temperature spreads the tiny language model's predictions, and how many characters top-p keeps.

Every position of the first windows of held-out text (paragraphs the model never trained
on) goes through the stored model. Left: at each temperature T, the mean entropy of
softmax(x / T) (how spread the prediction is, in nats; 0 is one certain character, ln V all
equally likely) and the held-out loss of softmax(x / T), the mean of -ln p(the true next
character). Right: how many characters top-p keeps at each position, against top-k's fixed
k: top-p keeps few where the model is sure and many where it is not.
Page: Sampling: from logits to text.
"""
from __future__ import annotations

import json
import math
from typing import Annotated

import numpy as np

import mhalib
from mhalib.models.tiny_generate import decode, new_cache
from figures._kit import cli, style
from figures._kit.contract import Range
from figures.generation.lm_loss_curve import SOURCE, load_model
from figures.generation.sampling_filters import entropy

#: A phone gets the two panels one under the other (style.narrow()).
NARROW = True
#: Temperatures on the left panel, log-spaced.
TEMPERATURES = np.geomspace(0.1, 4.0, 25)
#: Where the lowest held-out loss is looked for, in steps of 0.01.
FINE = np.round(np.arange(0.5, 2.0001, 0.01), 2)


def held_out_logits(windows: int) -> tuple[np.ndarray, np.ndarray]:
    """Logits ``(N, V)`` and the true next characters ``(N,)`` for every position of the first
    ``windows`` windows of the held-out text (each as long as the model's context)."""
    config, weights, tok = load_model()
    text = json.loads(SOURCE.read_text())["corpus"]["held_out_text"]
    ids = tok.encode(text)  # (n,)
    L = config.max_len
    if windows * L + 1 > len(ids):
        raise ValueError(f"windows: {windows} windows of {L} characters need {windows * L + 1} held-out "
                         f"characters; there are {len(ids)}")
    rows = ids[: windows * L + 1]
    inputs = rows[:-1].reshape(windows, L)  # (windows * L,) -> (windows, L)
    targets = rows[1:].reshape(windows, L)  # the next character of each position
    logits = decode(weights, config, inputs, new_cache(config, batch=windows))  # (windows, L, V)
    return logits.reshape(-1, config.vocab), targets.reshape(-1)  # (windows, L, V) -> (N, V); (N,)


def data(windows: Annotated[int, Range(1, 64)] = 16, top_k: Annotated[int, Range(1, 85)] = 5,
         top_p: Annotated[float, Range(0.01, 1.0)] = 0.9) -> dict:
    x, y = held_out_logits(windows)  # (N, V), (N,)
    N, V = x.shape
    def held_out_loss(T: float) -> float:
        """Mean of -ln softmax(x / T)[true character], from the log-sum-exp (never ln 0)."""
        z = x / T  # (N, V)
        m = z.max(axis=-1)  # (N,)
        log_z = m + np.log(np.exp(z - m[:, None]).sum(axis=-1))  # (N,)
        return float((log_z - z[np.arange(N), y]).mean())

    ent = [float(entropy(mhalib.softmax(x / T)).mean()) for T in TEMPERATURES]
    loss = [held_out_loss(T) for T in TEMPERATURES]
    fine = [held_out_loss(T) for T in FINE]
    kept = (mhalib.filter_logits(x, top_p=top_p) > -np.inf).sum(axis=-1)  # (N,): characters top-p keeps
    counts = np.bincount(kept, minlength=V + 1)[1:]  # positions keeping 1, 2, ..., V characters
    best = int(np.argmin(fine))
    at_one = mhalib.softmax(x)  # (N, V)
    return dict(
        temperatures=TEMPERATURES, entropy=ent, loss=loss, positions=N, windows=windows, vocab=V,
        max_entropy=math.log(V), best_temperature=float(FINE[best]), best_loss=fine[best],
        loss_at_1=held_out_loss(1.0), entropy_at_1=float(entropy(at_one).mean()),
        top_k=top_k, top_p=top_p, kept_counts=counts, kept_median=float(np.median(kept)),
        kept_one_share=float(np.mean(kept == 1)), kept_max=int(kept.max()),
        kept_at_most_k_share=float(np.mean(kept <= top_k)),
    )


def draw(data: dict):
    if style.narrow():
        fig, (a, b) = style.new_figure(4.6, 7.0, nrows=2)
    else:
        fig, (a, b) = style.new_figure(9.0, 3.4, ncols=2, width_ratios=[1.1, 1])
    pal, muted = style.palette(), style.colors()["muted"]
    a.plot(data["temperatures"], data["entropy"], "-", color=pal[0], lw=2, label="entropy of the prediction")
    a.plot(data["temperatures"], data["loss"], "--", color=pal[1], lw=2, label="held-out loss")
    a.axhline(data["max_entropy"], color=muted, lw=1, ls=":")
    a.annotate(f"ln {data['vocab']}: all equal", (0.4, data["max_entropy"]), xytext=(0, 2),
               textcoords="offset points", ha="center", va="bottom", color=muted, fontsize=11)
    a.plot([data["best_temperature"]], [data["best_loss"]], "o", color=pal[1], ms=6)
    a.axvline(1.0, color=muted, lw=1)
    a.set_xscale("log")
    style.plain_log_ticks(a, "x")
    a.set(xlabel="temperature T", ylabel="nats per character", ylim=(0, data["max_entropy"] * 1.15))
    a.grid(alpha=0.4)
    a.legend(fontsize=11, loc="center right")
    counts = np.asarray(data["kept_counts"])
    last = int(np.flatnonzero(counts)[-1]) + 1
    b.bar(np.arange(1, last + 1), counts[:last] / data["positions"], color=pal[0], width=0.85)
    b.axvline(data["top_k"], color=pal[1], lw=2, ls="--")
    b.annotate(f"top-k keeps {data['top_k']}", (data["top_k"], b.get_ylim()[1] * 0.92), xytext=(4, 0),
               textcoords="offset points", color=style.colors()["fg"], fontsize=11)
    b.set(xlabel=f"characters top-p = {style.exact(data['top_p'])} keeps", ylabel="share of positions")
    style.whole_ticks(b, "x")  # a count: top-p = 0.01 keeps 1 everywhere, ticked 0.6 ... 1.4 (pass thirty-seven)
    b.grid(axis="y", alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
