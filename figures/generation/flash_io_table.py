"""Main-memory traffic of attention's forward pass, naive vs FlashAttention, for real sizes (the paper's I/O argument).

Bytes read and written per layer, from mhalib.attention_hbm_bytes, for 32 heads in bf16:
the naive algorithm (Q, K, V in; the T x T scores and probabilities written and read back;
O out), Algorithm 1 of the FlashAttention paper with its block-size rule
B_c = ceil(M / 4d), B_r = min(ceil(M / 4d), d) (mhalib.flash_block_sizes) for the on-chip
memory M of an H100 (228 KiB per streaming multiprocessor, 116,736 bf16 numbers), and
FlashAttention-2's loop order (query blocks outside) with blocks of 128 query rows.
Page: FlashAttention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

DTYPE = "bfloat16"


def data(lengths: Annotated[tuple[int, ...], Range(1, 1_000_000)] = (4096, 65536),
         head_dims: Annotated[tuple[int, ...], Range(1, 1024)] = (64, 128),
         n_heads: Annotated[int, Range(1, 1024)] = 32, sram_kib: Annotated[int, Range(1, 1_000_000)] = 228,
         query_block: Annotated[int, Range(1, 100_000)] = 128) -> dict:
    M = sram_kib * 1024 // mhalib.dtype_bytes(DTYPE)  # on-chip memory in bf16 numbers
    rows = []
    for d in head_dims:
        B_c, B_r = mhalib.flash_block_sizes(M, d)
        for T in lengths:
            naive = mhalib.attention_hbm_bytes(T, d, method="naive", dtype=DTYPE, n_heads=n_heads)
            flash1 = mhalib.attention_hbm_bytes(T, d, method="flash1", block=B_c, dtype=DTYPE, n_heads=n_heads)
            flash2 = mhalib.attention_hbm_bytes(T, d, method="tiled", block=query_block, dtype=DTYPE,
                                                n_heads=n_heads)
            rows.append(dict(T=T, d=d, B_c=B_c, B_r=B_r, naive=naive, flash1=flash1, flash2=flash2,
                             ratio=naive / flash1, ratio2=naive / flash2))
    return dict(n_heads=n_heads, sram_kib=sram_kib, sram_elements=M, query_block=query_block, rows=rows,
                min_ratio=min(r["ratio"] for r in rows), max_ratio=max(r["ratio"] for r in rows),
                min_ratio2=min(r["ratio2"] for r in rows), max_ratio2=max(r["ratio2"] for r in rows))


def table(data: dict) -> str:
    nb = style.NBSP  # no break inside "456 × 64" (binary_size joins "1.8 GiB" so already)
    rows = [[f"{r['T']:,}", r["d"], f"{r['B_c']:,}{nb}×{nb}{r['B_r']:,}", style.binary_size(r["naive"]),
             style.binary_size(r["flash1"]), style.times(r["ratio"]), style.times(r["ratio2"])] for r in data["rows"]]
    block = data["query_block"]
    return markdown_table(["T", "d_head", f"B_c{nb}×{nb}B_r", "bytes moved: naive", "bytes moved: Algorithm 1",
                           "naive / Algorithm 1",
                           f"naive / FlashAttention-2 order, {style.counted(block, 'query row')}"],
                          rows, "rrrrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
