"""The tiled backward pass against the exact one: largest difference of dQ, dK and dV.

Random q, k, v and dO (float64, one seed) for a few shapes, block sizes that do and do not
divide the lengths, causal or with a sliding-window mask; the forward pass is
mhalib.tiled_attention(..., return_lse=True), which keeps only the output and one
log-sum-exp per row; mhalib.tiled_attention_backward recomputes the weights tile by tile
from them and is compared with the closed form mhalib.attention_backward.
Page: FlashAttention.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

#: (T, S, d_head, block_q, block_k, what is masked)
CASES = (
    (64, 64, 16, 16, 16, "nothing"),
    (100, 100, 16, 32, 24, "causal"),
    (96, 96, 32, 16, 40, "sliding window of 24"),
    (40, 72, 8, 7, 9, "nothing"),
)


def data(seed: Annotated[int, Range(0, None)] = 0, heads: Annotated[int, Range(1, 16)] = 2) -> dict:
    rng = np.random.default_rng(seed)
    rows = []
    for T, S, d, bq, bk, masked in CASES:
        q = rng.normal(size=(heads, T, d))
        k = rng.normal(size=(heads, S, d))
        v = rng.normal(size=(heads, S, d))
        d_out = rng.normal(size=(heads, T, d))
        causal = masked == "causal"
        mask = mhalib.sliding_window_mask(T, 24, S=S) if masked.startswith("sliding") else None
        out, lse = mhalib.tiled_attention(q, k, v, block_q=bq, block_k=bk, causal=causal, mask=mask, return_lse=True)
        tiled = mhalib.tiled_attention_backward(q, k, v, d_out, out, lse, block_q=bq, block_k=bk, causal=causal,
                                                mask=mask)
        exact = mhalib.attention_backward(q, k, v, d_out, causal=causal, mask=mask)
        diff = {name: float(np.abs(t - e).max()) for name, t, e in zip(("dq", "dk", "dv"), tiled, exact)}
        size = max(float(np.abs(e).max()) for e in exact)
        rows.append(dict(T=T, S=S, d_head=d, block_q=bq, block_k=bk, masked=masked, largest_gradient=size, **diff))
    return dict(seed=seed, heads=heads, rows=rows, max_difference=max(max(r["dq"], r["dk"], r["dv"]) for r in rows))


def table(data: dict) -> str:
    rows = [[f"{r['T']} × {r['S']}", r["d_head"], f"{r['block_q']} × {r['block_k']}", r["masked"],
             style.sci(r['dq'], 1), style.sci(r['dk'], 1), style.sci(r['dv'], 1)] for r in data["rows"]]
    # the head count in the header: a table of --heads 16 read as one of the default 2
    return markdown_table(["T × S", f"d_head ({style.counted(data['heads'], 'head')})", "tile", "masked",
                           "largest difference: dQ", "dK", "dV"], rows, "rrrlrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
