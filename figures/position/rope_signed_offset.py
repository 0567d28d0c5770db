"""The RoPE score depends on the signed offset n - m, not on |n - m|: scores for pairs at +3 and -3.

Random q, k with d = 8 (seeded). Pairs with the same signed offset agree to rounding;
swapping query and key positions (offset -3 instead of +3) gives a different score.
Page: RoPE.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(d_head: Annotated[int, Range(2, 4096)] = 8, seed: Annotated[int, Range(0, None)] = 3) -> dict:
    if d_head % 2:
        raise ValueError(f"d_head must be even (RoPE rotates pairs of dimensions), got {d_head}")

    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=d_head), rng.normal(size=d_head)

    def score(m, n):
        return float(mhalib.apply_rope(q[None], np.array([m]))[0] @ mhalib.apply_rope(k[None], np.array([n]))[0])

    rows = [dict(m=m, n=n, offset=n - m, score=score(m, n),
                 identity=float(q @ mhalib.apply_rope(k[None], np.array([n - m]))[0]))
            for m, n in ((0, 3), (5, 8), (100, 103), (3, 0), (8, 5), (103, 100))]
    return dict(rows=rows, plus=rows[0]["score"], minus=rows[3]["score"])


def table(data: dict) -> str:
    rows = [[r["m"], r["n"], f"{r['offset']:+d}", style.fixed(r['score'], 6), style.fixed(r['identity'], 6)] for r in data["rows"]]
    return markdown_table(["query position m", "key position n", "n − m", "(R(m)q)·(R(n)k)", r"\(q^\top R(n - m)\,k\)"], rows, "rrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
