"""Attention shapes of four published models: d_model, heads, d_head = d_model / heads, KV heads, KV cache per token.

Architecture numbers are from each model's paper or released config (cited on the page);
d_head and the KV-cache size are computed here. KV cache per token = 2 (K and V) x layers
x KV heads x d_head x 2 bytes (fp16). Page: multi-head attention.
"""
from __future__ import annotations

import mhalib
from figures._kit import cli, style
from figures._kit.export import markdown_table

#: name, layers, d_model, query heads, KV heads, source.
MODELS = (
    ("BERT-base", 12, 768, 12, 12, "Devlin et al. 2019, BERT-base"),
    ("GPT-2 (small)", 12, 768, 12, 12, "Radford et al. 2019, 124M model"),
    ("GPT-3 175B", 96, 12288, 96, 96, "Brown et al. 2020, Table 2.1"),
    ("LLaMA-2 70B", 80, 8192, 64, 8, "Touvron et al. 2023, grouped-query attention"),
)


def data() -> dict:
    rows = []
    for name, layers, D, H, H_kv, source in MODELS:
        d = D // H
        rows.append(dict(model=name, layers=layers, d_model=D, heads=H, d_head=d, kv_heads=H_kv, source=source,
                         kv_bytes_per_token=mhalib.kv_cache_bytes_per_token(layers, H_kv, d, dtype="float16"),
                         kv_bytes_if_mha=mhalib.kv_cache_bytes_per_token(layers, H, d, dtype="float16"),
                         attn_params=mhalib.mha_param_count(D, H, bias=False, n_kv_heads=H_kv)))
    llama = rows[-1]
    return dict(rows=rows, llama_gqa_saving=llama["kv_bytes_if_mha"] / llama["kv_bytes_per_token"])


def table(data: dict) -> str:
    rows = [[r["model"], r["layers"], f"{r['d_model']:,}", r["heads"], r["d_head"], r["kv_heads"],
             style.binary_size(r["kv_bytes_per_token"])] for r in data["rows"]]
    return markdown_table(["model", "layers", "d_model", "heads", "d_head", "KV heads", "KV cache / token (fp16)"],
                          rows, "lrrrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
