"""The split/combine walk-through with Q = K = V = the 2 × 2 identity and 2 heads: every intermediate array.

Each head gets one column (d_head = 1, so the scale is 1); the result is
[[0.7311, 0.5], [0.5, 0.7311]], with 0.7311 = e / (e + 1). Page: multi-head attention.
"""
from __future__ import annotations

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.export import markdown_table


def data() -> dict:
    ex = examples.split_heads_identity()
    H = ex["n_heads"]
    q, k, v = (mhalib.split_heads(ex[n], H) for n in ("Q", "K", "V"))  # (T, D) -> (H, T, d)
    scores = mhalib.attention_scores(q, k)
    heads_out, weights = mhalib.scaled_dot_product_attention(q, k, v)
    combined = mhalib.combine_heads(heads_out)  # (H, T, d) -> (T, D)
    reshaped = ex["Q"].reshape(2, H, 1)  # (T, D) -> (T, H, d): before the transpose
    # The same two steps on a Q that is not symmetric (T = H still): reshape and split now differ,
    # because with d = 1 the transpose of the axes T and H is the transpose of Q.
    other = np.array([[1.0, 2.0], [3.0, 4.0]])
    other_reshaped = other.reshape(2, H, 1)  # (T, D) -> (T, H, d)
    other_split = mhalib.split_heads(other, H)  # (T, D) -> (H, T, d)
    return dict(Q=ex["Q"], reshaped=reshaped, q_heads=q, scores=scores, weights=weights,
                heads_out=heads_out, combined=combined, sigmoid_1=float(np.e / (np.e + 1)),
                other_Q=other, other_reshaped=other_reshaped, other_split=other_split,
                other_text=dict(Q=_m(other), reshaped=_m(other_reshaped)[1:-1], split=_m(other_split)[1:-1]))


def _m(a) -> str:
    a = np.asarray(a)
    if a.ndim == 1:
        return "[" + ", ".join(style.sig(x, 4) for x in a) + "]"
    return "[" + ", ".join(_m(r) for r in a) + "]"


def table(data: dict) -> str:
    H = len(data["q_heads"])
    rows = [
        ("input", "Q = K = V", "(T, D) = (2, 2)", _m(data["Q"])),
        ("1. reshape", "Q.reshape(T, H, d)", "(2, 2, 1)", _m(data["reshaped"])),
        ("2. transpose", "split_heads(Q, 2)", "(H, T, d) = (2, 2, 1)", _m(data["q_heads"])),
    ]
    for h in range(H):
        rows += [
            (f"3. head {h + 1} scores", f"Q_{h + 1} K_{h + 1}ᵀ / √1", "(2, 2)", _m(data["scores"][h])),
            (f"4. head {h + 1} weights", "row-wise softmax", "(2, 2)", _m(data["weights"][h])),
            (f"5. head {h + 1} output", f"A_{h + 1} V_{h + 1}", "(2, 1)", _m(data["heads_out"][h])),
        ]
    rows.append(("6. combine", "combine_heads(heads)", "(T, D) = (2, 2)", _m(data["combined"])))
    return markdown_table(["step", "operation", "shape", "value"], [[a, f"`{b}`", c, v] for a, b, c, v in rows], "llll")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
