"""The cat/sat/mat outputs: what the lecture notes print, what their rounded weights give, and the exact values.

The notes round the weights to two decimals before multiplying by V, so their outputs are
off in the second decimal: ``max_rounded_error`` is the largest gap between the
rounded-weights column and the exact one (0.0116, for *sat*), ``max_notes_error`` the
largest gap of the printed values (0.0066), which are the rounded-weights outputs cut
after the second decimal (0.535 printed as 0.53). Page: attention.
"""
from __future__ import annotations

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.export import markdown_table

#: The outputs the lecture notes print for "cat" and "sat".
NOTES = {"cat": (1.48, 0.53), "sat": (0.84, 1.17)}


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'rows.*.notes': 'the lecture notes print no value for this row',
}


def data() -> dict:
    ex = examples.cat_sat_mat()
    q, k, v = ex["X"] @ ex["W_Q"], ex["X"] @ ex["W_K"], ex["X"] @ ex["W_V"]
    exact, w = mhalib.scaled_dot_product_attention(q, k, v, scale=1.0)
    causal, _ = mhalib.scaled_dot_product_attention(q, k, v, scale=1.0, causal=True)
    rounded_w = np.round(w, 2)
    rows = []
    for t, tok in enumerate(ex["tokens"]):
        rows.append(dict(token=tok, notes=NOTES.get(tok), rounded=rounded_w[t] @ v, exact=exact[t],
                         weights=w[t], rounded_weights=rounded_w[t]))
    max_err = max(float(np.abs(np.array(r["notes"]) - r["exact"]).max()) for r in rows if r["notes"])
    # The rounded-weights column against the exact one: the error rounding the weights causes.
    gaps = [float(np.abs(r["rounded"] - r["exact"]).max()) for r in rows]
    worst = int(np.argmax(gaps))
    return dict(rows=rows, v=v, max_notes_error=max_err, max_rounded_error=gaps[worst],
                max_rounded_error_token=rows[worst]["token"],
                rounded_weight_row_sum=float(rounded_w[0].sum()), causal_outputs=causal)


def _pair(p, places: int = 2) -> str:
    return "—" if p is None else "(" + ", ".join(style.fixed(x, places) for x in p) + ")"


def table(data: dict) -> str:
    rows = [[r["token"], _pair(r["notes"]), _pair(r["rounded"], 3), f"**{_pair(r['exact'], 4)}**"]
            for r in data["rows"]]
    return markdown_table(["token", "as often printed", "from weights rounded to 2 d.p.", "exact"], rows, "lrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
