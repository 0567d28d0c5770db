"""Bug: split_heads without the transpose. What each head receives, and what it does to the output.

Correct: reshape (T, D) -> (T, H, d), then transpose to (H, T, d): head h gets columns
h*d..(h+1)*d of every token. Wrong: reshape (T, D) straight to (H, T, d): head 0 gets the
first T*d numbers in memory order, whole rows of the first tokens. Page: numerics and pitfalls.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(T: Annotated[int, Range(1, 32)] = 3, D: Annotated[int, Range(1, 64)] = 4,
         n_heads: Annotated[int, Range(1, 64)] = 2, seed: Annotated[int, Range(0, None)] = 0) -> dict:
    if D % n_heads:
        raise ValueError(f"n_heads must divide D (d_head = D / n_heads), got D = {D} and n_heads = {n_heads}")

    labels = np.array([[f"t{t}d{j}" for j in range(D)] for t in range(T)])
    d = D // n_heads
    correct_labels = labels.reshape(T, n_heads, d).transpose(1, 0, 2)  # (T, D) -> (T, H, d) -> (H, T, d)
    wrong_labels = labels.reshape(n_heads, T, d)  # (T, D) -> (H, T, d): mixes tokens
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(T, D))
    w = [rng.normal(scale=D**-0.5, size=(D, D)) for _ in range(3)]
    q, k, v = (x @ wi for wi in w)
    good = mhalib.combine_heads(mhalib.scaled_dot_product_attention(
        mhalib.split_heads(q, n_heads), mhalib.split_heads(k, n_heads), mhalib.split_heads(v, n_heads))[0])
    bad_heads, _ = mhalib.scaled_dot_product_attention(q.reshape(n_heads, T, d), k.reshape(n_heads, T, d),
                                                       v.reshape(n_heads, T, d))
    bad = bad_heads.reshape(T, D)  # the matching wrong inverse
    ref, _ = mhalib.multi_head_attention(x, *w, n_heads=n_heads)
    return dict(T=T, D=D, n_heads=n_heads, correct=correct_labels.tolist(), wrong=wrong_labels.tolist(),
                correct_vs_reference=float(np.abs(good - ref).max()), wrong_vs_reference=float(np.abs(bad - ref).max()))


def table(data: dict) -> str:
    rows = [[f"head {h + 1}, row {t}", " ".join(data["correct"][h][t]), " ".join(data["wrong"][h][t])]
            for h in range(data["n_heads"]) for t in range(data["T"])]
    rows.append(["**output vs reference MHA**", style.sci(data['correct_vs_reference'], 1), style.fixed(data['wrong_vs_reference'], 3)])
    return markdown_table(["head, row", "correct: split_heads", "wrong: reshape only"], rows, "lll")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
