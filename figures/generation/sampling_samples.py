"""Sampling: text the tiny language model writes after one prompt, by decoder, with how probable and how repetitive it is.

Each decoder continues the same prompt with the stored model and a KV cache
(mhalib.models.tiny_generate.decode): greedy takes the most probable character every time;
the others draw from softmax(mhalib.filter_logits(x, ...)) with mhalib.sample_next, several
samples each from one generator seeded 0, so every decoder gets the same random numbers and
its text differs from the others' only through its filter. "nats per character" is the mean of -ln p(chosen character) under the model's own
prediction (T = 1, no filter): low means text the model finds likely. "repeated 4-grams" is
the share of the continuation's 4-character strings that already occurred earlier in it.
The last row measures held-out text (paragraphs the model never trained on) the same way.
Page: Sampling: from logits to text.
"""
from __future__ import annotations

import json
from typing import Annotated

import numpy as np

import mhalib
from mhalib.models.tiny_generate import decode, new_cache
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table
from figures.generation.lm_loss_curve import SOURCE, load_model

PROMPT = "The attention weights of a head"
#: (name, sample_next's filters); None is greedy.
DECODERS = (("greedy", None), ("T = 0.7", dict(temperature=0.7)), ("T = 1", dict(temperature=1.0)),
            ("T = 1.5", dict(temperature=1.5)), ("top-k, k = 5", dict(top_k=5)), ("top-p, p = 0.9", dict(top_p=0.9)))


#: The length of the strings whose repeats a row counts ("repeated 4-grams").
NGRAM = 4


def repeated_share(text: str, n: int = NGRAM) -> float:
    """The share of ``text``'s ``n``-character strings (one per start position) that occur
    earlier in ``text``; 0 when nothing repeats, near 1 when the text loops."""
    grams = [text[i:i + n] for i in range(len(text) - n + 1)]
    if not grams:
        raise ValueError(f"text must be at least {n} characters long to hold an {n}-gram, got {len(text)}")
    seen, repeats = set(), 0
    for g in grams:
        repeats += g in seen
        seen.add(g)
    return repeats / len(grams)


def nats(logits: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """``-ln softmax(logits)[chosen]`` per row, ``logits (..., V)``, ``chosen (...)``."""
    m = logits.max(axis=-1, keepdims=True)  # (..., 1)
    log_z = m[..., 0] + np.log(np.exp(logits - m).sum(axis=-1))  # (...,)
    return log_z - np.take_along_axis(logits, chosen[..., None], axis=-1)[..., 0]


def continue_prompt(n_new: int, samples: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each of :data:`DECODERS`, its continuations of :data:`PROMPT` (greedy one, the
    others ``samples``, each decoder drawing from its own generator seeded 0, one number per
    row and step): ``(ids (rows, n_new), nats (rows, n_new))``. All rows run as one batch."""
    config, weights, tok = load_model()
    sizes = [1 if f is None else samples for _, f in DECODERS]
    starts = np.cumsum([0] + sizes)  # decoder i owns rows starts[i]:starts[i+1]
    prompt = np.tile(tok.encode(PROMPT), (starts[-1], 1))  # (T,) -> (rows, T)
    cache = new_cache(config, batch=int(starts[-1]))
    last = decode(weights, config, prompt, cache)[:, -1]  # (rows, V)
    rngs = [np.random.default_rng(0) for _ in DECODERS]
    chosen, cost = [], []
    for step in range(n_new):
        ids = np.concatenate([  # (rows,)
            np.atleast_1d(mhalib.greedy(last[a:b]) if f is None else mhalib.sample_next(last[a:b], rng, **f))
            for (_, f), a, b, rng in zip(DECODERS, starts[:-1], starts[1:], rngs)])
        chosen.append(ids)
        cost.append(nats(last, ids))
        if step + 1 < n_new:
            last = decode(weights, config, ids[:, None], cache)[:, 0]  # (rows, 1, V) -> (rows, V)
    ids, cost = np.stack(chosen, axis=1), np.stack(cost, axis=1)  # (rows, n_new) each
    return [(ids[a:b], cost[a:b]) for a, b in zip(starts[:-1], starts[1:])]


def held_out_windows(n: int, windows: int) -> tuple[list[str], np.ndarray]:
    """The first ``windows`` stretches of ``n`` held-out characters, each after a prompt-long
    stretch of context, and the nats the model pays on each of their characters."""
    config, weights, tok = load_model()
    text = json.loads(SOURCE.read_text())["corpus"]["held_out_text"]
    T = len(PROMPT)
    ids = tok.encode(text)[: windows * (T + n)].reshape(windows, T + n)  # (windows, T + n)
    logits = decode(weights, config, ids[:, :-1], new_cache(config, batch=windows))  # (windows, T+n-1, V)
    cost = nats(logits[:, T - 1:], ids[:, T:])  # (windows, n): the n characters after the context
    return [tok.decode(row[T:]) for row in ids], cost


def data(n_new: Annotated[int, Range(8, 96)] = 96, samples: Annotated[int, Range(2, 16)] = 8) -> dict:
    _, _, tok = load_model()
    rows = []
    for (name, filters), (ids, cost) in zip(DECODERS, continue_prompt(n_new, samples)):
        texts = [tok.decode(r) for r in ids]
        rep = [repeated_share(t) for t in texts]
        per_row = cost.mean(axis=1)  # (rows,)
        rows.append(dict(decoder=name, filters=filters or {}, text=texts[0], texts=texts,
                         nats=float(per_row.mean()), nats_min=float(per_row.min()), nats_max=float(per_row.max()),
                         repeated=float(np.mean(rep)), repeated_min=min(rep), repeated_max=max(rep)))
    texts, cost = held_out_windows(n_new, 4 * samples)
    rep = [repeated_share(t) for t in texts]
    per_window = cost.mean(axis=1)
    held = dict(decoder="held-out text", text=texts[0], nats=float(per_window.mean()),
                nats_min=float(per_window.min()), nats_max=float(per_window.max()), repeated=float(np.mean(rep)),
                repeated_min=min(rep), repeated_max=max(rep), windows=len(texts))
    by = {r["decoder"]: r for r in rows}
    return dict(prompt=PROMPT, n_new=n_new, samples=samples, ngram=NGRAM, rows=rows, held_out=held,
                greedy=by["greedy"], hot=by["T = 1.5"], cool=by["T = 0.7"])


def _text_cell(text: str) -> str:
    """The text as inline code in a table cell, every character as itself: a line break as ↵,
    letters, digits and spaces as they are, every other character as a numeric reference, so
    that neither HTML, nor Markdown, nor a table, nor an extension (~~ ~ ^ = * _ | [ ] ` \\ & <)
    reads it, whatever characters the model's vocabulary holds. Its class makes the browser show
    every space (a leading or trailing one, a run of two: ``code.mha-model-text`` in extra.css;
    a plain ``<code>`` collapses them)."""
    out = "".join(c if c.isalnum() or c == " " else f"&#{ord(c)};" for c in text.replace("\n", "↵"))
    return f'<code class="mha-model-text">{out}</code>'


def table(data: dict) -> str:
    def spread(r: dict, key: str, percent: bool) -> str:
        """The mean, and the range in brackets with its ends rounded outward (the smallest down,
        the largest up): a range that holds every continuation's value, as the caption says."""
        lo, hi = r[f"{key}_min"], r[f"{key}_max"]
        mean = style.percent(r[key]) if percent else style.fixed(r[key], 2)
        places = 0 if percent else 2
        ends = [style.bounded(x, places, d, percent=percent) for x, d in ((lo, "down"), (hi, "up"))]
        return mean if lo == hi else f"{mean} ({ends[0]}–{ends[1]})"

    header = ["decoder", f"the first continuation ({style.counted(data['n_new'], 'character')})", "nats per character",
              f"repeated {data['ngram']}-grams"]
    rows = [[r["decoder"], _text_cell(r["text"]), spread(r, "nats", False), spread(r, "repeated", True)]
            for r in data["rows"] + [data["held_out"]]]
    return markdown_table(header, rows, "llrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
