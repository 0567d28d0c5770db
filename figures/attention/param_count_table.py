"""Parameter counts of one attention layer for several head counts at the same d_model.

Splitting D into H heads of width D/H changes nothing in the weight matrices: W_Q, W_K,
W_V and W_O are D x D whatever H is, so MHA costs 4 D^2 (+ 4 D with biases). Only a
single head *without* W_O has fewer, 3 D^2. Page: multi-head attention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(d_model: Annotated[int, Range(1, None)] = 512,
         heads: Annotated[tuple[int, ...], Range(1, None)] = (1, 2, 8, 16, 64)) -> dict:
    bad = [H for H in heads if d_model % H]
    if bad:
        raise ValueError(f"heads must each divide d_model = {d_model} (d_head = d_model / heads); "
                         f"got {', '.join(map(str, bad))}")

    rows = [dict(label="single head, no W_O", heads=1, params=mhalib.mha_param_count(d_model, 1, bias=False, output_projection=False),
                 with_bias=mhalib.mha_param_count(d_model, 1, output_projection=False))]
    for H in heads:
        rows.append(dict(label=f"{H} head{'s' if H > 1 else ''} + W_O", heads=H,
                         params=mhalib.mha_param_count(d_model, H, bias=False),
                         with_bias=mhalib.mha_param_count(d_model, H)))
    three, four = rows[0]["params"], rows[1]["params"]
    return dict(d_model=d_model, rows=rows, three_d2=three, four_d2=four,
                wo_increase_percent=100 * (four - three) / three)


def table(data: dict) -> str:
    D = data["d_model"]
    rows = [[r["label"], D // r["heads"], f"{r['params']:,}", f"{r['with_bias']:,}"] for r in data["rows"]]
    return markdown_table([f"layer (d_model = {D})", "d_head", "weights only", "with biases"], rows, "lrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
