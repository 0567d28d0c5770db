"""KV cache of three published 7-8B decoders: MHA, GQA and MQA, per token and for long contexts.

Architecture numbers from each model's released configuration (cited on the page); the
bytes are computed with mhalib.kv_cache_bytes: batch x tokens x 2 (K and V) x layers x KV
heads x d_head x 2 bytes (fp16/bf16). Page: the KV cache.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

#: name, kind, layers, query heads, KV heads, d_head, source of the numbers.
MODELS = (
    ("LLaMA-2 7B", "MHA", 32, 32, 32, 128, "Touvron et al. 2023; config: 32 layers, 32 heads, hidden 4096"),
    ("Llama 3 8B", "GQA", 32, 32, 8, 128, "Meta 2024 model card; config: 32 layers, 32 heads, 8 KV heads"),
    ("Falcon-7B", "MQA", 32, 71, 1, 64, "Almazrouei et al. 2023; config: 32 layers, 71 heads, 1 KV head, hidden 4544"),
)


def data(contexts: Annotated[tuple[int, ...], Range(1, 10_000_000)] = (4096, 32768),
         batch: Annotated[int, Range(1, 4096)] = 1) -> dict:
    rows = []
    for name, kind, layers, heads, kv_heads, d_head, source in MODELS:
        per_token = mhalib.kv_cache_bytes_per_token(layers, kv_heads, d_head, dtype="float16")
        rows.append(dict(model=name, kind=kind, layers=layers, heads=heads, kv_heads=kv_heads, d_head=d_head,
                         source=source, per_token=per_token,
                         at={str(n): mhalib.kv_cache_bytes(layers, kv_heads, d_head, n, batch=batch, dtype="float16")
                             for n in contexts}))
    mha, gqa, mqa = rows
    return dict(contexts=list(contexts), batch=batch, rows=rows,
                gqa_saving=mha["per_token"] / gqa["per_token"], mqa_saving=mha["per_token"] / mqa["per_token"])


def table(data: dict) -> str:
    batch = f", batch {data['batch']}" if data["batch"] != 1 else ""
    header = ["model (32 layers)" if len({r["layers"] for r in data["rows"]}) == 1 else "model",
              "heads : KV heads", "d_head", "per token"] + [f"{style.counted(n, 'token')}{batch}" for n in data["contexts"]]
    rows = [[r["model"], f"{r['heads']} : {r['kv_heads']} ({r['kind']})", r["d_head"], style.binary_size(r["per_token"])] +
            [style.binary_size(r["at"][str(n)]) for n in data["contexts"]] for r in data["rows"]]
    return markdown_table(header, rows, "llrr" + "r" * len(data["contexts"]))


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
