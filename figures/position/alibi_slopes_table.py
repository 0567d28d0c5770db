"""ALiBi slopes for 8 heads (a power of two) and 12 heads (not one), following the authors' recipe.

8 heads: m_h = 2^(-h), h = 1..8. 12 heads: the 8 slopes of 8 heads, then every other slope
of 16 heads (2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5). Page: ALiBi.
"""
from __future__ import annotations

import math
from typing import Annotated


import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def exponents(n: int) -> list[float]:
    """The recipe's exponents e_h (m_h = 2^-e_h), exactly: 8h/L for the L = 2^floor(log2 n)
    heads of the largest power of two, then 8(2j + 1)/(2L) for the rest (dyadic fractions,
    which a float holds exactly; -log2 of the slopes gave 0.49999999999999994 for 0.5)."""
    low = 2 ** int(math.floor(math.log2(n)))
    return [8 * h / low for h in range(1, low + 1)] + [8 * (2 * j + 1) / (2 * low) for j in range(n - low)]


def data(head_counts: Annotated[tuple[int, ...], Range(1, 256)] = (8, 12)) -> dict:

    return dict(counts=list(head_counts),
                slopes={str(n): mhalib.alibi_slopes(n) for n in head_counts},
                exponents={str(n): exponents(n) for n in head_counts})


def table(data: dict) -> str:
    def cell(n: int, h: int) -> str:
        if h >= n:
            return ""
        return f"2^−{style.exact(data['exponents'][str(n)][h])} {style.stated(data['slopes'][str(n)][h])}"

    rows = [[str(h + 1)] + [cell(n, h) for n in data["counts"]] for h in range(max(data["counts"]))]
    return markdown_table(["head"] + [style.counted(n, "head") for n in data["counts"]], rows, "r" * (1 + len(data["counts"])))


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
