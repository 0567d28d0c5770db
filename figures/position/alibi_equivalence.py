"""Why the authors' row-constant ALiBi bias m·j equals the paper's −m(i − j) under a causal mask.

The two differ by m*i, a constant within each row, and softmax ignores a constant added to
a whole row. Random q, k (seeded), 8 heads, T = 16: largest difference of the weights. With
a symmetric (non-causal) bias the row-constant trick is not available. Page: ALiBi.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(T: Annotated[int, Range(1, 256)] = 16, n_heads: Annotated[int, Range(1, 64)] = 8,
         d_head: Annotated[int, Range(1, 256)] = 8, seed: Annotated[int, Range(0, None)] = 4) -> dict:

    rng = np.random.default_rng(seed)
    q, k, v = (rng.normal(size=(n_heads, T, d_head)) for _ in range(3))
    _, w_rel = mhalib.scaled_dot_product_attention(q, k, v, bias=mhalib.alibi_bias(T, n_heads))
    _, w_row = mhalib.scaled_dot_product_attention(q, k, v, bias=mhalib.alibi_bias(T, n_heads, form="row_constant"))
    _, w_none = mhalib.scaled_dot_product_attention(q, k, v, causal=True)
    causal = mhalib.causal_mask(T)
    bias_gap = np.where(causal, mhalib.alibi_bias(T, n_heads, form="row_constant"), 0.0) - np.where(
        causal, mhalib.alibi_bias(T, n_heads), 0.0)  # compare the visible entries only
    finite = np.broadcast_to(causal, bias_gap.shape)
    row_constant = bool(np.all([np.ptp(bias_gap[h, i][finite[h, i]]) == 0 for h in range(n_heads) for i in range(T)]))
    return dict(T=T, n_heads=n_heads, max_weight_difference=float(np.abs(w_rel - w_row).max()),
                alibi_vs_plain=float(np.abs(w_rel - w_none).max()), gap_is_row_constant=row_constant)


def table(data: dict) -> str:
    return markdown_table(["comparison (causal, random q and k)", "largest weight difference"], [
        ["paper's −m(i−j) vs authors' code m·j", style.sci(data['max_weight_difference'], 1)],
        ["ALiBi vs no positional bias at all", style.fixed(data['alibi_vs_plain'], 3)],
    ], "lr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
