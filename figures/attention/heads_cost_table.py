"""What H heads of width d_model/H cost, next to one head of width d_model and one head of width d_model/H.

Weights, FLOPs of the four projections (2 T per weight: one multiply-add per weight and
token), FLOPs of the two attention products (Q K^T and P V, mhalib.attention_flops) and
the bytes of the T x T score matrices (mhalib.attention_scores_bytes, fp32). H heads of
width D/H cost exactly what one head of width D costs in weights and FLOPs, and H times
what a single head of width D/H costs; only the score matrices grow, H of them instead of
one. Nothing here is "H times the capacity", and nothing is free.

``published`` holds two numbers quoted on the page from their sources: the Transformer
paper's single-head result (Vaswani et al. 2017, section 6.2 and Table 3, rows A: one head
of 512 was 0.9 BLEU worse than the best head count, at constant computation) and a model
whose heads are neither 64 nor 128 wide (Gemma 7B's released configuration: d_model 3072,
16 heads of 256). Page: multi-head attention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

#: Numbers quoted from publications, with their sources (not computed here).
PUBLISHED = dict(
    transformer_single_head_bleu_gap=0.9,   # Vaswani et al. 2017, sec. 6.2 / Table 3 (A), newstest2013
    gemma_7b=dict(d_model=3072, heads=16, d_head=256),  # Gemma Team 2024, released config.json
)


def data(d_model: Annotated[int, Range(1, None)] = 512, n_heads: Annotated[int, Range(1, None)] = 8,
         T: Annotated[int, Range(1, 1_000_000)] = 2048) -> dict:
    if d_model % n_heads:
        raise ValueError(f"n_heads must divide d_model = {d_model} (d_head = d_model / n_heads); got n_heads = {n_heads}")

    D, H, d = d_model, n_heads, d_model // n_heads

    def row(label, heads, d_head):
        params = mhalib.mha_param_count(D, heads, bias=False, d_head=d_head)
        return dict(label=label, heads=heads, d_head=d_head, params=params, proj_flops=2 * T * params,
                    attn_flops=mhalib.attention_flops(T, T, d_head, n_heads=heads),
                    scores_bytes=mhalib.attention_scores_bytes(T, heads=heads, dtype="float32"))

    wide, multi, narrow = (row(f"one head of width {D}", 1, D), row(f"{style.counted(H, 'head')} of width {d}", H, d),
                           row(f"one head of width {d} (one of the {H})", 1, d))
    return dict(d_model=D, n_heads=H, d_head=d, T=T, rows=[wide, multi, narrow],
                params_ratio_vs_wide=multi["params"] / wide["params"],
                flops_ratio_vs_wide=(multi["proj_flops"] + multi["attn_flops"]) / (wide["proj_flops"] + wide["attn_flops"]),
                attn_flops_ratio_vs_narrow=multi["attn_flops"] / narrow["attn_flops"],
                scores_ratio_vs_wide=multi["scores_bytes"] / wide["scores_bytes"],
                published=PUBLISHED)


def table(data: dict) -> str:
    rows = [[r["label"], f"{r['params']:,}", style.si(r["proj_flops"], "FLOP"), style.si(r["attn_flops"], "FLOP"),
             style.binary_size(r["scores_bytes"])] for r in data["rows"]]
    return markdown_table([f"attention layer (d_model = {data['d_model']:,}, T = {data['T']:,})", "weights",
                           "projection FLOPs", "attention FLOPs", "score matrices (fp32)"], rows, "lrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
