"""Naive vs stable softmax of the two scores [s, 0] in float32 and float16, for growing s.

exp overflows past ln(max float): about 88.72 in float32 and 11.09 in float16. The naive
softmax then returns inf/inf = NaN; the max-subtracted one never overflows. Page: numerics.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.export import markdown_table

#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'rows.*.naive_float16': 'nan: what the naive softmax returns once exp overflows (the point of the row)',
    'rows.*.naive_float32': 'nan: what the naive softmax returns once exp overflows (the point of the row)',
    'table: naive, fp16': 'NaN: the naive softmax once exp overflows, shown as it is',
    'table: naive, fp32': 'NaN: the naive softmax once exp overflows, shown as it is',
}


def _show(row) -> str:
    return "[" + ", ".join("NaN" if np.isnan(x) else style.sig(x, 4) for x in row) + "]"


def data(scores: tuple[float, ...] = (10.0, 11.0, 12.0, 88.0, 89.0, 10000.0)) -> dict:
    rows = []
    for s in scores:
        row = dict(score=s, top_float64=float(mhalib.softmax(np.array([s, 0.0]))[0]))  # the larger weight, exactly
        for dt in ("float16", "float32"):
            with np.errstate(over="ignore"):  # a score past the type's range becomes inf: said in the row
                x = np.array([s, 0.0], dtype=dt)
            finite_input = bool(np.isfinite(x).all())
            row[f"naive_{dt}"] = _show(mhalib.naive_softmax(x)) if finite_input else "score overflows"
            row[f"stable_{dt}"] = _show(mhalib.softmax(x)) if finite_input else "score overflows"
        rows.append(row)
    return dict(rows=rows, threshold_float32=mhalib.exp_overflow_threshold("float32"),
                threshold_float16=mhalib.exp_overflow_threshold("float16"),
                float16_max=float(np.finfo(np.float16).max),
                # a weight above this prints as 1 in float16: the rows read [1, 4.5e-05], summing past 1
                float16_below_one=float(np.nextafter(np.float16(1), np.float16(0))))


def table(data: dict) -> str:
    keys = ("naive_float16", "stable_float16", "naive_float32", "stable_float32")
    rows = [[style.exact(r["score"])] + [r[k] for k in keys] for r in data["rows"]]
    return markdown_table(["score s", "naive, fp16", "stable, fp16", "naive, fp32", "stable, fp32"], rows, "rllll")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
