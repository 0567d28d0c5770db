"""KV cache per token of published models: multi-head, grouped-query, multi-query, latent attention and a sliding window.

Architecture numbers from each model's paper or released configuration (cited on the page).
MHA, GQA, MQA: 2 (K and V) x layers x KV heads x d_head numbers per token
(mhalib.kv_cache_bytes_per_token); MLA: layers x (d_latent + d_rope) (mhalib.mla_cache_bytes),
the latent and the shared RoPE key; a sliding window caches at most ``window`` tokens. All in
fp16/bf16 (2 bytes a number). DeepSeek-V2 "as MHA" is the paper's own comparison: the same
128 heads of 128, each with its own K and V. Page: long context.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table
from figures.attention.models_table import MODELS as SHAPES
from figures.generation.kv_cache_table import MODELS as SEVEN_B

#: DeepSeek-V2 (DeepSeek-AI 2024, section 2.1 and the released config): 60 layers, 128 heads of
#: 128, a KV latent of 512 and a decoupled RoPE key of 64.
DEEPSEEK_V2 = dict(layers=60, heads=128, d_head=128, d_latent=512, d_rope=64)
#: Mistral 7B (Jiang et al. 2023, Table 1): 32 layers, 32 heads, 8 KV heads of 128, window 4,096.
MISTRAL_7B = dict(layers=32, heads=32, kv_heads=8, d_head=128, window=4096)


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'by_model.*.window': 'no sliding window: every token is cached',
    'rows.*.window': 'no sliding window: every token is cached',
}


def data(context: Annotated[int, Range(1, 10_000_000)] = 32768) -> dict:
    rows = []

    def kv(model, kind, layers, heads, kv_heads, d_head, window=None):
        cached = min(context, window) if window else context
        per_layer = 2 * kv_heads * d_head
        rows.append(dict(model=model, kind=kind, layers=layers, heads=heads, cached=f"K, V: 2 × {kv_heads} × {d_head}",
                         numbers_per_layer=per_layer,
                         per_token=mhalib.kv_cache_bytes_per_token(layers, kv_heads, d_head, dtype="float16"),
                         at_context=mhalib.kv_cache_bytes(layers, kv_heads, d_head, cached, dtype="float16"),
                         window=window))

    by_name = {m[0]: m for m in SEVEN_B}
    name, kind, layers, heads, kv_heads, d_head, _ = by_name["LLaMA-2 7B"]
    kv(name, kind, layers, heads, kv_heads, d_head)
    name, kind, layers, heads, kv_heads, d_head, _ = by_name["Llama 3 8B"]
    kv(name, kind, layers, heads, kv_heads, d_head)
    name, layers, D, heads, kv_heads, _ = next(m for m in SHAPES if m[0] == "LLaMA-2 70B")
    kv(name, "GQA", layers, heads, kv_heads, D // heads)
    name, kind, layers, heads, kv_heads, d_head, _ = by_name["Falcon-7B"]
    kv(name, kind, layers, heads, kv_heads, d_head)
    m = MISTRAL_7B
    kv("Mistral 7B", "GQA, window", m["layers"], m["heads"], m["kv_heads"], m["d_head"], window=m["window"])
    ds = DEEPSEEK_V2
    kv("DeepSeek-V2 as MHA", "MHA", ds["layers"], ds["heads"], ds["heads"], ds["d_head"])
    rows.append(dict(model="DeepSeek-V2", kind="MLA", layers=ds["layers"], heads=ds["heads"],
                     cached=f"c, k_R: {ds['d_latent']} + {ds['d_rope']}",
                     numbers_per_layer=ds["d_latent"] + ds["d_rope"],
                     per_token=mhalib.mla_cache_bytes(ds["layers"], ds["d_latent"], ds["d_rope"], 1),
                     at_context=mhalib.mla_cache_bytes(ds["layers"], ds["d_latent"], ds["d_rope"], context),
                     window=None))
    named = {r["model"]: r for r in rows}
    return dict(context=context, rows=rows, by_model=named,
                mla_saving=named["DeepSeek-V2 as MHA"]["per_token"] / named["DeepSeek-V2"]["per_token"],
                mla_vs_llama7b=named["LLaMA-2 7B"]["per_token"] / named["DeepSeek-V2"]["per_token"],
                mla_over_d_head=(ds["d_latent"] + ds["d_rope"]) / ds["d_head"],
                deepseek_mha_numbers=named["DeepSeek-V2 as MHA"]["numbers_per_layer"],
                deepseek_mla_numbers=named["DeepSeek-V2"]["numbers_per_layer"],
                mla_per_token=named["DeepSeek-V2"]["per_token"], mqa_per_token=named["Falcon-7B"]["per_token"])


def table(data: dict) -> str:
    rows = [[r["model"], r["kind"], r["layers"], f"{r['cached']} = {r['numbers_per_layer']:,}", style.binary_size(r["per_token"]),
             style.binary_size(r["at_context"]) + (f" (last {r['window']:,})" if r["window"] and data["context"] > r["window"]
                                       else "")]
            for r in data["rows"]]
    return markdown_table(["model", "attention", "layers", "cached per token and layer", "per token",
                           style.counted(data['context'], 'token')], rows, "llrlrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
