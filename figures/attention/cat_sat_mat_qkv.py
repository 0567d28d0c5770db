"""The cat/sat/mat example: embeddings X and the projected q, k, v.

X is 3x4 (three tokens, d = 4); W_Q, W_K, W_V are 4x2, so each token gets a 2-d query,
key and value, exactly the table of the lecture notes. Page: attention.
"""
from __future__ import annotations

from mhalib import examples
from figures._kit import cli, style
from figures._kit.export import markdown_table


def data() -> dict:
    ex = examples.cat_sat_mat()
    X = ex["X"]
    return dict(tokens=ex["tokens"], X=X, W_Q=ex["W_Q"], W_K=ex["W_K"], W_V=ex["W_V"],
                q=X @ ex["W_Q"], k=X @ ex["W_K"], v=X @ ex["W_V"])


def table(data: dict) -> str:
    # (the subscripts as math: KaTeX draws them with its own fonts, where many readers' fonts lack ₁)
    header = ["token"] + [rf"\({s}_{i}\)" for s, n in (("x", 4), ("q", 2), ("k", 2), ("v", 2)) for i in range(1, n + 1)]
    rows = [[tok] + [style.fixed(c, 1) for c in [*data["X"][t], *data["q"][t], *data["k"][t], *data["v"][t]]]
            for t, tok in enumerate(data["tokens"])]
    return markdown_table(header, rows, "l" + "r" * 10)


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
