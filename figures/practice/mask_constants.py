"""Mask constants in float16: what −1e9, −1e4, the float16 minimum and −∞ become, and what a fully masked row gives.

-1e9 does not fit in float16 (min -65504) and becomes -inf. For a partly masked row that
is harmless; for a row where every key is masked, a naive softmax of all -inf gives NaN,
while mhalib's gives zero weights. Page: numerics.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.export import markdown_table


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'rows.*.constant': '-inf: the mask constant itself',
    'rows.*.stored': '-inf: the mask constant as the dtype stores it',
    'rows.*.full_naive': 'NaN: what the naive softmax returns for a fully masked row (the point of the row)',
    'table: naive, all keys masked': 'NaN: the naive softmax of a fully masked row, shown as it is',
}


def _fmt(row) -> str:
    return "[" + ", ".join("NaN" if np.isnan(x) else style.sig(x, 3) for x in row) + "]"


def data() -> dict:
    rows = []
    for label, value in (("-1e9", -1e9), ("-1e4", -1e4), ("float16 min", float(np.finfo(np.float16).min)), ("-inf", -np.inf)):
        stored = mhalib.masked_fill_value(value, "float16")
        full = np.full(3, stored, dtype=np.float16)
        partial = np.array([1.0, stored, stored], dtype=np.float16)
        rows.append(dict(constant=label, stored=stored,
                         partial_naive=_fmt(mhalib.naive_softmax(partial)),
                         full_naive=_fmt(mhalib.naive_softmax(full)),
                         full_ours=_fmt(mhalib.softmax(full))))
    return dict(rows=rows)


def _typeset(text: str) -> str:
    """A number as the page writes it: a true minus sign, and ∞ for an infinity."""
    return text.replace("inf", "∞").replace("-", "−")


def table(data: dict) -> str:
    rows = [[_typeset(r["constant"]), _typeset(style.exact(r['stored'])), r["partial_naive"], r["full_naive"], r["full_ours"]]
            for r in data["rows"]]
    return markdown_table(["mask constant", "stored in fp16", "naive softmax, one key kept", "naive, all keys masked",
                           "mhalib, all masked"], rows, "lrlll")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
