"""Bug: split_heads without the transpose. What each head receives, and what it does to the output.

Correct: reshape (T, D) -> (T, H, d), then transpose to (H, T, d): head h gets columns
h*d..(h+1)*d of every token. Wrong: reshape (T, D) straight to (H, T, d): head 0 gets the
first T*d numbers in memory order, whole rows of the first tokens. Page: numerics and pitfalls.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli
from figures._kit.export import markdown_table


def data(T: int = 3, D: int = 4, n_heads: int = 2, seed: int = 0) -> dict:
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


def table(d: dict) -> str:
    rows = [[f"head {h + 1}, row {t}", " ".join(d["correct"][h][t]), " ".join(d["wrong"][h][t])]
            for h in range(d["n_heads"]) for t in range(d["T"])]
    rows.append(["**output vs reference MHA**", f"{d['correct_vs_reference']:.1e}", f"{d['wrong_vs_reference']:.3f}"])
    return markdown_table(["head, row", "correct: split_heads", "wrong: reshape only"], rows, "lll")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
