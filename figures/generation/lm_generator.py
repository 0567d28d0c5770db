"""The tiny language model continues a prompt: sampled with a seed, and greedy.

Two continuations of one prompt by the tiny character model of this course's prose, written
by mhalib's numpy forward pass (the whole prefix again at every step) and
``mhalib.sample_next`` with ``mhalib.Pcg32(seed)``: with temperature, top-k and top-p, and
greedy (always the most probable character). The page's live generator
(docs/javascripts/generator.js) writes the same text in the reader's browser from the same
seed. Model trained by tools/train_lm.py; weights in figures/data/tiny_lm_weights.npz.
Page: Generating text: the KV cache.
"""
from __future__ import annotations

import base64
import json
import textwrap
import zlib

import numpy as np

from figures._kit import cli, style
from figures._kit.contract import data_file
from mhalib import Pcg32
from mhalib.models.chars import CharTokenizer
from mhalib.models.tiny_generate import generate
from mhalib.models.tiny_numpy import TinyConfig, parameter_shapes

SOURCE = data_file("tiny_lm.json")
WEIGHTS = data_file("tiny_lm_weights.npz")
#: The widget's defaults, and the static figure's run.
PROMPT, SEED, N_NEW = "Attention is ", 1, 100
TEMPERATURE, TOP_K, TOP_P = 0.8, 20, 0.95
#: The interactive version of this figure (docs/javascripts/generator.js, widget "generator").
EXPLORER = "generator"


def load() -> tuple[dict, TinyConfig, dict]:
    """The stored run (tiny_lm.json), its config and its float16 weights by name."""
    info = json.loads(SOURCE.read_text())
    config = TinyConfig.from_dict(info["config"]["model"])
    with np.load(WEIGHTS) as z:
        weights = {name: z[name] for name in parameter_shapes(config)}
    return info, config, weights


def encode_tensor(a: np.ndarray) -> str:
    """One float16 tensor as the widget reads it: its n numbers' high bytes, then their n low
    bytes (the high bytes, sign and exponent, repeat a lot, so they compress well together),
    deflated (zlib, level 9), then base64. Lossless: the same float16 numbers come back."""
    half = np.ascontiguousarray(a, dtype="<f2").reshape(-1)  # (...) -> (n,)
    pairs = half.view(np.uint8).reshape(-1, 2)  # (n,) -> (n, 2): low byte, high byte
    split = np.concatenate([pairs[:, 1], pairs[:, 0]]).tobytes()  # (2n,): high bytes, then low
    return base64.b64encode(zlib.compress(split, 9)).decode("ascii")


def data(prompt: str = PROMPT, seed: int = SEED, n_new: int = N_NEW) -> dict:
    info, config, weights = load()
    tok = CharTokenizer(info["vocab"])
    ids = tok.encode(prompt)
    run = dict(temperature=TEMPERATURE, top_k=TOP_K, top_p=TOP_P)
    sampled = generate(weights, config, ids, n_new, rng=Pcg32(seed), **run)
    greedy = generate(weights, config, ids, n_new)
    raw = sum(a.size * 2 for a in weights.values())
    encoded = sum(len(encode_tensor(a)) for a in weights.values())
    return dict(
        prompt=prompt, seed=seed, n_new=n_new, **run,
        sampled=tok.decode(sampled[len(ids):]), greedy=tok.decode(greedy[len(ids):]),
        sampled_ids=sampled.tolist(), greedy_ids=greedy.tolist(),
        vocab=info["vocab"], vocab_size=config.vocab, context=config.max_len, config=config.to_dict(),
        parameters=int(sum(a.size for a in weights.values())), weights_float16_bytes=int(raw),
        weights_encoded_chars=int(encoded), weights_encoded_mb=encoded / 1e6,
        wall_time_min=info["wall_time_s"] / 60, cores=info["machine"]["cores"], train_chars=info["corpus"]["train_chars"],
        held_out_loss=info["final"]["held_out"],
    )


def explorer(data: dict) -> dict:
    """The widget's payload: config, vocabulary, context, the defaults, and every weight as
    ``{name, shape, data}`` (``encode_tensor``), in ``parameter_shapes`` order."""
    _, config, weights = load()
    return dict(
        config=config.to_dict(), vocab=data["vocab"], context=data["context"],
        defaults=dict(prompt=data["prompt"], seed=data["seed"], n_new=data["n_new"], temperature=data["temperature"],
                      top_k=data["top_k"], top_p=data["top_p"]),
        weights=[dict(name=name, shape=list(a.shape), data=encode_tensor(a)) for name, a in weights.items()],
    )


def _shown(text: str) -> str:
    return text.replace("\n", "⏎")  # a line break, visible


#: The static figure's width (inches: 11 pt text stays >= 9 px on a 390 px phone) and
#: characters per line of its text.
WIDTH = 5.2
WRAP = 44


def draw(data: dict):
    """Each run's settings, then the prompt and its continuation in a fixed-width font, wrapped."""
    c, palette = style.colors(), style.palette()
    blocks = [(f"sampled: seed {data['seed']}, temperature {style.exact(data['temperature'])}, top-k {data['top_k']}, "
               f"top-p {style.exact(data['top_p'])}", data["sampled"], palette[0]),
              ("greedy: the most probable character every time", data["greedy"], palette[1])]
    wrapped = [textwrap.wrap(_shown(data["prompt"] + text), WRAP) for _, text, _ in blocks]  # breaks at spaces
    line = 11 * 1.45 / 72  # inches per line of 11 pt text
    height = 0.45 + sum((len(w) + 2.2) * line for w in wrapped)
    fig = style.new_figure(WIDTH, height)[0]
    fig.axes[0].set_axis_off()
    y = height - 0.12  # inches from the bottom
    fig.text(0.1 / WIDTH, y / height, f"The tiny model continues “{data['prompt'].strip()}”", fontsize=12, va="top",
             color=c["fg"], parse_math=False)
    y -= 0.33
    for (title, _, colour), lines in zip(blocks, wrapped):
        fig.text(0.1 / WIDTH, y / height, title, fontsize=11, color=c["muted"], va="top", parse_math=False)
        y -= 1.25 * line
        fig.text(0.1 / WIDTH, y / height, "\n".join(lines), fontsize=11, family="monospace", color=style.ink(colour),
                 va="top", linespacing=1.3, parse_math=False)
        y -= (len(lines) + 0.95) * line
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
