"""Causal block skipping: how many tiles of the score matrix a tiled kernel computes under a causal mask.

For self-attention over T tokens in square tiles of `block` queries by `block` keys
(mhalib.causal_tile_counts): the tiles wholly above the diagonal hold no allowed score and
are skipped; the ones on the diagonal are computed and partly masked; the rest are computed
in full. With n = ceil(T / block) tiles a side, n (n + 1) / 2 of the n^2 are computed; when
the block divides T (every tile full-sized) they hold a share (n + 1) / 2n of the scores, a
little more than the half that the causal FLOP count (mhalib.attention_flops(causal=True))
assumes. When it does not, the short last row and column of tiles make the share differ. The lengths are those of the H100
throughput table (flash_throughput); blocks of 128, the query block of the page's
FlashAttention-2 column. Page: FlashAttention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

#: The hand-sized example of the page's sentence: T = 10 tokens in blocks of 4.
SMALL = dict(T=10, block=4)


def data(lengths: Annotated[tuple[int, ...], Range(1, 10_000_000)] = (1024, 2048, 4096, 8192, 16384, 32768),
         block: Annotated[int, Range(1, 100_000)] = 128) -> dict:
    def counted(T: int, b: int) -> dict:
        c = mhalib.causal_tile_counts(T, b, b)
        n = -(-T // b)  # ceil: blocks a side
        # (n + 1) / 2n is the share of the scores only when every tile is full-sized
        return dict(T=T, **c, n_blocks=n, divides=T % b == 0, formula_share=(n + 1) / (2 * n),
                    over_half=c["computed_share"] / 0.5)

    rows = [counted(T, block) for T in lengths]
    small = dict(SMALL, **counted(SMALL["T"], SMALL["block"]))
    return dict(block=block, rows=rows, small=small, rows_divide=all(r["divides"] for r in rows),
                max_over_half=max(r["over_half"] for r in rows), min_over_half=min(r["over_half"] for r in rows))


def table(data: dict) -> str:
    rows = [[f"{r['T']:,}", f"{r['visited']:,} of {r['total']:,}", f"{r['skipped']:,}",
             style.percent(r['computed_share'], places=1, also=(0.5,)), style.times(r['over_half'], digits=4)] for r in data["rows"]]
    return markdown_table(["T", "tiles computed", "skipped", "scores computed", "against the halved count"], rows, "rrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
