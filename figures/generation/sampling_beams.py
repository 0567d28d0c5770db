"""Sampling: beam search with the tiny language model, by beam width: the best continuation found and its log-probability.

mhalib.beam_search keeps the `beams` most probable prefixes at every step (1 is greedy) and
returns the best of them after max_new characters. The score is the sum of ln p(character)
over the new characters, under the stored model; a higher (less negative) score is a more
probable continuation. A wider beam explores more prefixes, so it can find a continuation
greedy missed because its first character was not the single most probable one.
Page: Sampling: from logits to text.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from mhalib.models.tiny_generate import decode, new_cache
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table
from figures.generation.lm_loss_curve import load_model
from figures.generation.sampling_samples import _text_cell

PROMPT = "A head attends to"
WIDTHS = (1, 2, 4, 8, 16)


def data(max_new: Annotated[int, Range(1, 24)] = 16) -> dict:
    config, weights, tok = load_model()

    seen: dict[bytes, np.ndarray] = {}  # prefix -> its logits: the widths share many prefixes

    def step(prefix: np.ndarray) -> np.ndarray:
        key = prefix.tobytes()
        if key not in seen:
            seen[key] = decode(weights, config, prefix, new_cache(config))[0, -1]  # (1, T, V) -> (V,)
        return seen[key]

    rows = []
    for beams in WIDTHS:
        seqs, scores = mhalib.beam_search(step, tok.encode(PROMPT), beams=beams, max_new=max_new)
        rows.append(dict(beams=beams, text=tok.decode(seqs[0, len(PROMPT):]), score=float(scores[0]),
                         per_char=float(-scores[0] / max_new), probability=float(np.exp(scores[0]))))
    best = max(rows, key=lambda r: r["score"])
    return dict(prompt=PROMPT, max_new=max_new, rows=rows, greedy=rows[0], widest=rows[-1],
                best_beams=best["beams"], gain=best["score"] - rows[0]["score"],
                gain_factor=float(np.exp(best["score"] - rows[0]["score"])),
                never_worse=all(b["score"] >= a["score"] for a, b in zip(rows, rows[1:])))


def table(data: dict) -> str:
    header = ["beams", f"best continuation ({style.counted(data['max_new'], 'character')})", "ln p (sum)", "nats per character"]
    rows = [[f"{r['beams']}" + (" (greedy)" if r["beams"] == 1 else ""), _text_cell(r["text"]),
             style.fixed(r['score'], 2).replace("-", "−"), style.fixed(r['per_char'], 3)] for r in data["rows"]]
    return markdown_table(header, rows, "rlrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
