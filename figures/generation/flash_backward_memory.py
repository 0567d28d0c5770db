"""What attention keeps between its forward and backward passes: the weights A (naive) or O and one log-sum-exp per row (tiled).

Bytes held for one layer of 32 heads and one sequence, from
mhalib.attention_memory_between_passes: naive = heads x T x S x bytes (the weights A,
T x T here), tiled = heads x T x (d_head x bytes + 4) (the output O and the float32
log-sum-exp of each row). Q, K and V are kept by both and not counted.
Page: FlashAttention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

DTYPES = ("float16", "float32")


def data(lengths: Annotated[tuple[int, ...], Range(1, 10_000_000)] = (1024, 4096, 16384, 32768),
         head_dims: Annotated[tuple[int, ...], Range(1, 1024)] = (64, 128),
         dtypes: tuple[str, ...] = DTYPES, n_heads: Annotated[int, Range(1, 1024)] = 32) -> dict:
    for dtype in dtypes:
        if dtype not in ("float16", "bfloat16", "float32", "float64"):
            raise ValueError(f"dtypes: each must be float16, bfloat16, float32 or float64; got {dtype!r}")
    rows = []
    for T in lengths:
        for dtype in dtypes:
            tiled = {}
            naive = None
            for d in head_dims:
                held = mhalib.attention_memory_between_passes(T, T, d, heads=n_heads, dtype=dtype, lse_dtype="float32")
                naive = held["naive"]  # the same for every d_head
                tiled[str(d)] = held["tiled"]
            rows.append(dict(T=T, dtype=dtype, naive=naive, tiled=tiled,
                             ratio={d: naive / t for d, t in tiled.items()}))
    ratios = [r for row in rows for r in row["ratio"].values()]
    at = {f"{r['T']}_{r['dtype']}": r for r in rows}
    return dict(n_heads=n_heads, head_dims=list(head_dims), dtypes=list(dtypes), rows=rows, at=at,
                min_ratio=min(ratios), max_ratio=max(ratios))


def _less(ratio: float) -> str:
    """naive / tiled as the cell says it: "(256× less)", "(2.03× more)" where the tiled pass
    keeps more than the weights (a row of A, T numbers of b bytes, is smaller than a row of O
    and its float32 lse, d_head b + 4 bytes: T < d_head + 4 / b, so d_head + 2 in a 2-byte
    type and d_head + 1 in float32), or "(the same)" where the two are equal."""
    if ratio == 1:
        return "(the same)"
    return f"({style.times(ratio)} less)" if ratio > 1 else f"({style.times(1 / ratio)} more)"


def _nearest(row: dict) -> int:
    """The tiled count of ``row`` nearest its naive one: the cell the naive size must read apart from."""
    return min(row["tiled"].values(), key=lambda t: abs(t - row["naive"]))


def table(data: dict) -> str:
    header = ["T", "numbers", "naive: A"] + [f"tiled, d_head {d}: O and lse" for d in data["head_dims"]]
    rows = [[f"{r['T']:,}", r["dtype"], style.binary_size(r["naive"], apart_from=_nearest(r))] +
            [f"{style.binary_size(r['tiled'][str(d)], apart_from=r['naive'])} {_less(r['ratio'][str(d)])}"
             for d in data["head_dims"]]
            for r in data["rows"]]
    return markdown_table(header, rows, "rlr" + "r" * len(data["head_dims"]))


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
