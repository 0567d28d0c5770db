"""The last step of the two heads: each head's answer through its own rows of the output projection, added into sat's output.

concat(head 1, head 2) W_O = head 1 W_O[rows 0-1] + head 2 W_O[rows 2-3]; here W_O = I, so
head 1 writes the "who" slot and head 2 the "how" slot. Page: why one head is not enough.
"""
from __future__ import annotations

from typing import Annotated

from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(strength: Annotated[float, Range(0.1, 20)] = 3.0) -> dict:
    r = examples.one_head_vs_two(strength)
    return dict(slots=r["slots"], heads_out=r["heads_out"], per_head=r["per_head"], out_two=r["out_two"],
                concat_two=r["concat_two"], target=r["target"], distance=r["distance"], strength=r["strength"])


def _vec(v, slot: int = 2, bold: bool = False) -> str:
    """``\\((0.995, 0.002 \\Vert 0.000, 0.000)\\)``: a double bar between the slots of ``slot``
    numbers, as math (KaTeX draws the bar with its own fonts, as in the page's prose)."""
    parts = [", ".join(style.fixed(x, 3) for x in v[i:i + slot]) for i in range(0, len(v), slot)]
    inner = "(" + r" \,\Vert\, ".join(parts) + ")"
    return rf"\(\mathbf{{{inner}}}\)" if bold else rf"\({inner}\)"


def table(data: dict) -> str:
    rows = []
    for h, (answer, through) in enumerate(zip(data["heads_out"], data["per_head"]), start=1):
        rows.append([f"head {h}", _vec(answer), _vec(through)])
    rows.append(["**sum = output**", "", _vec(data["out_two"], bold=True)])
    rows.append(["target", "", _vec(data["target"])])
    header = ["vector", "the head's answer", r"through its rows of W_O (who \(\Vert\) how)"]
    return markdown_table(header, rows, "lrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
