"""Main-memory traffic of attention's forward pass, naive vs tiled, for real sizes (the FlashAttention paper's I/O argument).

Bytes read and written per layer by the naive algorithm (Q, K, V in; the T x T scores
and probabilities written and read back; O out) and by the tiled one (Q in and O out once,
K and V re-read once per block of query rows, the block sized so that a row each of the
Q, K, V and O tiles fits in the on-chip memory: 228 KiB per streaming multiprocessor on an
H100), from mhalib.attention_hbm_bytes, for 32 heads in bf16. Page: FlashAttention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(lengths: Annotated[tuple[int, ...], Range(1, 1_000_000)] = (4096, 65536),
         head_dims: Annotated[tuple[int, ...], Range(1, 1024)] = (64, 128),
         n_heads: Annotated[int, Range(1, 1024)] = 32, sram_kib: Annotated[int, Range(1, 1_000_000)] = 228) -> dict:
    rows = []
    for d in head_dims:
        block = sram_kib * 1024 // (4 * d * 2)  # rows of Q, K, V, O tiles of width d in bf16 that fit
        for T in lengths:
            naive = mhalib.attention_hbm_bytes(T, d, method="naive", dtype="bfloat16", n_heads=n_heads)
            tiled = mhalib.attention_hbm_bytes(T, d, method="tiled", sram_bytes=sram_kib * 1024, dtype="bfloat16",
                                               n_heads=n_heads)
            rows.append(dict(T=T, d=d, block=block, naive=naive, tiled=tiled, ratio=naive / tiled))
    return dict(n_heads=n_heads, sram_kib=sram_kib, rows=rows,
                min_ratio=min(r["ratio"] for r in rows), max_ratio=max(r["ratio"] for r in rows))


def _gib(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def table(data: dict) -> str:
    rows = [[f"{r['T']:,}", r["d"], r["block"], _gib(r["naive"]), _gib(r["tiled"]), f"{r['ratio']:.1f}×"]
            for r in data["rows"]]
    return markdown_table(["T", "d_head", "query rows per block", "naive: bytes moved", "tiled: bytes moved",
                           "naive / tiled"], rows, "rrrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
