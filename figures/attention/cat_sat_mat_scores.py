"""The cat/sat/mat score table, query i against key j, optionally with the causal mask (−∞ above the diagonal).

The lecture uses raw dot products here (no 1/sqrt(d_head)); each cell shows the products it
sums. Page: attention.
"""
from __future__ import annotations

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.export import markdown_table


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'scores.*.*': '-inf: a key the causal mask hides from the query',
}


def data(causal: bool = False) -> dict:
    ex = examples.cat_sat_mat()
    q, k = ex["X"] @ ex["W_Q"], ex["X"] @ ex["W_K"]
    scores = mhalib.attention_scores(q, k, scale=1.0)
    if causal:
        scores = np.where(mhalib.causal_mask(3), scores, -np.inf)
    return dict(tokens=ex["tokens"], q=q, k=k, scores=scores, causal=causal)


def _fmt(x: float) -> str:
    return "1" if x == 1 else ("0" if x == 0 else style.exact(x))


def table(data: dict) -> str:
    toks = data["tokens"]

    def cell(i: int, j: int) -> str:
        s = data["scores"][i][j]
        if s == -np.inf:
            return "−∞"
        prods = " + ".join(f"{_fmt(a)}·{_fmt(b)}" for a, b in zip(data["q"][i], data["k"][j]))
        return f"{prods} = **{style.fixed(s, 1)}**"

    rows = [[f"{ti} (q)"] + [cell(i, j) for j in range(len(toks))] for i, ti in enumerate(toks)]
    return markdown_table(["q · k"] + [f"{t} (k)" for t in toks], rows, "l" + "r" * len(toks))


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
