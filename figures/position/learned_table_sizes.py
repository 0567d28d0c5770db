"""Learned position tables of real models: T_max rows of d_model numbers, and what they cost.

Each row builds the table with ``mhalib.learned_position_table`` and counts its entries:
T_max x d_model trained parameters, none of which a sinusoidal, RoPE or ALiBi model has.
The last row is the part a longer context adds (BERT-base stretched from 512 to 1,024
positions: 512 new rows). Page: learned positional embeddings.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

#: (key, model, positions, d_model) as each model's configuration gives them.
MODELS = (
    ("bert", "BERT-base", 512, 768),
    ("gpt2", "GPT-2 small", 1024, 768),
    ("gpt2_medium", "GPT-2 medium", 1024, 1024),
)


def data(stretch_to: Annotated[int, Range(513, 8192)] = 1024) -> dict:
    rows = []
    for key, model, positions, d_model in MODELS:
        table = mhalib.learned_position_table(positions, d_model, seed=0)  # (positions, d_model)
        rows.append(dict(key=key, model=model, positions=positions, d_model=d_model, params=int(table.size)))
    bert = rows[0]
    longer = mhalib.learned_position_table(stretch_to, bert["d_model"], seed=0)  # (stretch_to, d_model)
    new = dict(key="bert_stretched", model=f"BERT-base, {bert['positions']:,} → {style.counted(stretch_to, 'position')}",
               positions=stretch_to - bert["positions"], d_model=bert["d_model"],
               params=int(longer.size) - bert["params"])
    rows.append(new)
    return dict(rows=rows, stretch_to=stretch_to, **{r["key"]: r for r in rows})


def table(data: dict) -> str:
    rows = [[r["model"], f"{r['positions']:,}" + (" new" if r["key"] == "bert_stretched" else ""),
             f"{r['d_model']:,}", f"{r['params']:,}"] for r in data["rows"]]
    return markdown_table(["model", "rows (positions)", "d_model", "trained parameters"], rows, "lrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
