"""Floating-point operations of one attention layer: the four projections against the two T x T products.

Projections: W_Q, W_K, W_V and W_O are D x D and each is applied to T tokens, 2 T D^2
FLOPs apiece, 8 T D^2 in all. Attention: Q K^T and P V cost 2 T^2 d_head each per head,
4 T^2 D over the H heads (``mhalib.attention_flops``). The products overtake the
projections at T = 2 D. Page: attention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(lengths: Annotated[tuple[int, ...], Range(1, 10_000_000)] = (128, 1536, 8192),
         d_model: Annotated[int, Range(1, 65536)] = 768, n_heads: Annotated[int, Range(1, 1024)] = 12) -> dict:
    if d_model % n_heads:
        raise ValueError(f"n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}")
    d_head = d_model // n_heads
    rows = []
    for T in lengths:
        projections = 4 * 2 * T * d_model * d_model  # four (T, D) @ (D, D) products
        attention = mhalib.attention_flops(T, T, d_head, n_heads=n_heads)  # Q K^T and P V, every head
        rows.append(dict(T=T, projections=projections, attention=attention,
                         attention_share=attention / (attention + projections)))
    return dict(d_model=d_model, n_heads=n_heads, d_head=d_head, rows=rows, crossover=2 * d_model)


def table(data: dict) -> str:
    rows = [[f"{r['T']:,}", f"{r['projections']:,}", f"{r['attention']:,}", style.percent(r['attention_share'])]
            for r in data["rows"]]
    D, H = data["d_model"], data["n_heads"]
    return markdown_table(["T", f"projections, 8 T d_model² (d_model = {D})", f"Q Kᵀ and P V, 4 T² d_model ({style.counted(H, 'head')})",
                           "attention's share"], rows, "rrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
