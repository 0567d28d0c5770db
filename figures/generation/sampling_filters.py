"""Sampling: the tiny language model's next-character probabilities, and what temperature, top-k and top-p leave of them.

The prompt goes through the stored model (mhalib.models.tiny_generate.decode); its last
logits x give the next character's probabilities softmax(x). Each panel applies one filter of
mhalib.filter_logits and shows softmax of the result for the characters the model finds most
probable: temperature T divides the logits (T < 1 sharpens, T > 1 flattens), top-k keeps the
k most probable, top-p the fewest whose probabilities add up to at least p. A removed
character has probability 0 (an empty slot). A space is drawn as ␣.
Page: Sampling: from logits to text.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from mhalib.models.tiny_generate import decode, new_cache
from figures._kit import cli, style
from figures._kit.contract import Range
from figures.generation.lm_loss_curve import load_model

#: A phone gets the panels one under the other (style.narrow()).
NARROW = True
#: A prompt after which the next character is far from certain (the start of a word).
PROMPT = "Each query is compared with every "
#: A temperature near 0, where sampling is greedy in all but name.
COLD = 0.01
#: Characters shown in each panel, the most probable first.
SHOWN = 10
#: A prompt that ends in the middle of a word, where one character is nearly certain.
MID_WORD = "its own q"


def shown_char(c: str) -> str:
    """A character as a figure or a table shows it: a space as ␣, a line break as ↵."""
    return {" ": "␣", "\n": "↵"}.get(c, c)


def next_logits(prompt: str) -> np.ndarray:
    """The stored model's logits for the character after ``prompt``, ``(V,)`` float64."""
    config, weights, tok = load_model()
    if not prompt:
        raise ValueError("prompt must hold at least one character, got ''")
    ids = tok.encode(prompt)  # refuses characters outside the vocabulary, naming them
    return decode(weights, config, ids, new_cache(config))[0, -1]  # (1, T, V) -> (V,)


def entropy(p: np.ndarray) -> np.ndarray:
    """``-sum_j p_j ln p_j`` over the last axis, in nats (0 ln 0 = 0)."""
    logs = np.log(np.where(p > 0, p, 1.0))  # (..., V); removed entries contribute 0
    return -np.sum(p * logs, axis=-1)


def data(temperature_low: Annotated[float, Range(0.05, 1.0)] = 0.5,
         temperature_high: Annotated[float, Range(1.0, 10.0)] = 2.0,
         top_k: Annotated[int, Range(1, 85)] = 5, top_p: Annotated[float, Range(0.01, 1.0)] = 0.8) -> dict:
    _, _, tok = load_model()
    x = next_logits(PROMPT)  # (V,)
    p = mhalib.softmax(x)
    order = np.argsort(-p, kind="stable")[:SHOWN]  # the most probable first
    panels, kept_mass = [], []
    for label, kw in [("T = 1, the model's", {}), (f"T = {style.exact(temperature_low)}", dict(temperature=temperature_low)),
                      (f"T = {style.exact(temperature_high)}", dict(temperature=temperature_high)),
                      (f"top-k, k = {top_k}", dict(top_k=top_k)), (f"top-p, p = {style.exact(top_p)}", dict(top_p=top_p))]:
        q = mhalib.softmax(mhalib.filter_logits(x, **kw))  # (V,); removed characters have 0
        kept_mass.append(float(p[q > 0].sum()))  # the model's own probability of what is kept
        panels.append(dict(label=label, probs=q[order], kept=int((q > 0).sum()), entropy=float(entropy(q)),
                           top=float(q.max())))
    cold = mhalib.softmax(x / COLD)  # (V,)
    x_mid = next_logits(MID_WORD)  # (V,)
    p_mid = mhalib.softmax(x_mid)
    mid_word = dict(prompt=MID_WORD, top_char=shown_char(tok.decode([int(p_mid.argmax())])), p_top=float(p_mid.max()),
                    top_p_kept=int((mhalib.filter_logits(x_mid, top_p=top_p) > -np.inf).sum()))
    return dict(prompt=PROMPT, cold_temperature=COLD, cold_rest=float(1.0 - cold.max()), chars=[shown_char(tok.decode([int(i)])) for i in order],
                p=p[order], p_top=float(p[order[0]]), top_char=shown_char(tok.decode([int(order[0])])),
                entropy=float(entropy(p)), vocab=len(p), panels=panels,
                temperature_low=temperature_low, temperature_high=temperature_high, top_k=top_k, top_p=top_p,
                top_k_kept=panels[3]["kept"], top_k_mass=kept_mass[3],
                top_p_kept=panels[4]["kept"], top_p_mass=kept_mass[4], mid_word=mid_word)

def draw(data: dict):
    panels = data["panels"]
    if style.narrow():
        fig, axes = style.new_figure(4.6, 8.6, nrows=len(panels), sharex=True)
    else:
        fig, axes = style.new_figure(9.2, 3.0, ncols=len(panels), sharey=True)
    color, muted = style.palette()[0], style.colors()["muted"]
    top = max(max(pn["probs"]) for pn in panels)
    x = np.arange(len(data["chars"]))
    for ax, pn in zip(axes, panels):
        probs = np.asarray(pn["probs"], float)
        ax.bar(x, probs, color=color, width=0.75)
        for i in np.flatnonzero(probs == 0):  # a removed character: an empty slot with a dash
            ax.text(i, 0, "–", ha="center", va="bottom", color=muted, fontsize=12)
        ax.set_title(f"{pn['label']}\n{pn['kept']} of {data['vocab']} kept", fontsize=12)
        ax.set_xticks(x, data["chars"], fontsize=12)
        ax.set_ylim(0, top * 1.12)
        ax.grid(axis="y", alpha=0.4)
    axes[0].set_ylabel("probability")
    if style.narrow():
        for ax in axes:
            ax.set_ylabel("p", fontsize=11)
            ax.tick_params(labelbottom=True)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
