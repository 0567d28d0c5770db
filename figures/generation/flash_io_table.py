"""Main-memory traffic of attention's forward pass, naive vs tiled, for real sizes (the FlashAttention paper's I/O argument).

Bytes read and written per layer by the naive algorithm (Q, K, V in; the T x T scores
and probabilities written and read back; O out) and by the tiled one (Q in and O out once,
K and V re-read once per block of query rows), from mhalib.attention_hbm_bytes, for 32 heads
of d = 128 in bf16 with blocks of 128 query rows. Page: FlashAttention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(lengths: Annotated[tuple[int, ...], Range(1, 1_000_000)] = (1024, 4096, 16384, 65536),
         d: Annotated[int, Range(1, 1024)] = 128, n_heads: Annotated[int, Range(1, 1024)] = 32,
         block: Annotated[int, Range(1, 65536)] = 128) -> dict:
    rows = []
    for T in lengths:
        naive = mhalib.attention_hbm_bytes(T, d, method="naive", dtype="bfloat16", n_heads=n_heads)
        tiled = mhalib.attention_hbm_bytes(T, d, method="tiled", block=block, dtype="bfloat16", n_heads=n_heads)
        rows.append(dict(T=T, naive=naive, tiled=tiled, ratio=naive / tiled,
                         flops=mhalib.attention_flops(T, T, d, n_heads=n_heads)))
    return dict(d=d, n_heads=n_heads, block=block, rows=rows)


def _gib(n: int) -> str:
    return f"{n / 2**30:,.2f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def table(data: dict) -> str:
    rows = [[f"{r['T']:,}", _gib(r["naive"]), _gib(r["tiled"]), f"{r['ratio']:.1f}×",
             f"{r['flops'] / r['naive']:.0f}", f"{r['flops'] / r['tiled']:.0f}"] for r in data["rows"]]
    return markdown_table(["T", "naive: bytes moved", f"tiled (blocks of {data['block']}): bytes moved",
                           "naive / tiled", "FLOPs per byte, naive", "FLOPs per byte, tiled"], rows, "rrrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
