"""Multi-head latent attention, naive and absorbed: what each attends over, and how far apart their results are.

For a few small configurations with seeded random weights (mhalib.mla_random_weights) and a
random input, mhalib.mla_attention is run twice: naive (per-head keys [c W_UK,h ; k_R] and
values c W_UV,h) and absorbed (W_UK folded into the queries, W_UV into W_O: one shared key
[c ; k_R] of width d_latent + d_rope for every head). The table gives the width of what each
head's query meets and the largest difference of the outputs and of the weights.
Page: long context.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

#: (d_model, heads, d_head, d_latent, d_rope, T, causal)
CASES = (
    (64, 4, 16, 32, 8, 12, False),
    (96, 6, 16, 24, 8, 10, True),
    (64, 2, 8, 48, 4, 16, True),
)


def data(seed: Annotated[int, Range(0, None)] = 0) -> dict:
    rng = np.random.default_rng(seed)
    rows = []
    for D, H, d_h, d_c, d_R, T, causal in CASES:
        w = mhalib.mla_random_weights(D, H, d_h, d_c, d_R, seed=seed)
        x = rng.normal(size=(T, D))
        out_n, w_n = mhalib.mla_attention(x, **w, n_heads=H, causal=causal)
        out_a, w_a = mhalib.mla_attention(x, **w, n_heads=H, causal=causal, absorbed=True)
        rows.append(dict(d_model=D, heads=H, d_head=d_h, d_latent=d_c, d_rope=d_R, T=T, causal=causal,
                         naive_key_width=d_h + d_R, absorbed_key_width=d_c + d_R,
                         latent_cache=d_c + d_R,
                         out_difference=float(np.abs(out_n - out_a).max()),
                         weight_difference=float(np.abs(w_n - w_a).max()),
                         largest_output=float(np.abs(out_n).max())))
    return dict(seed=seed, rows=rows, max_difference=max(max(r["out_difference"], r["weight_difference"]) for r in rows))


def table(data: dict) -> str:
    rows = [[f"{style.counted(r['heads'], 'head')} of {r['d_head']}, latent {r['d_latent']}, RoPE key {r['d_rope']}",
             "yes" if r["causal"] else "no", f"{r['naive_key_width']} / {r['absorbed_key_width']}",
             style.sci(r['out_difference'], 1), style.sci(r['weight_difference'], 1)] for r in data["rows"]]
    return markdown_table(["shape", "causal", "key width: naive / absorbed", "largest difference: output",
                           "weights"], rows, "llrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
