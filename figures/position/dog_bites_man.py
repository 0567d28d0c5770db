"""'dog bites man' vs 'man bites dog': each word's attention output in both sentences, without and with positions.

Without positions and without a mask, a word gets the identical output in both sentences
(difference 0); adding sinusoidal PE makes them differ, and so does a causal mask alone,
since a word then sees only the words up to its own position. Self-attention with
Q = K = V = X (+ PE), scale 1/sqrt(d). Page: position matters.

``diff_rope`` is for the RoPE page: no mask and no added PE, but RoPE applied to queries
and keys (values untouched). The outputs differ between the two sentences, so the next
layer's values, computed from these outputs, carry position information.
"""
from __future__ import annotations

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.export import markdown_table


def _attend(X, causal=False):
    out, _ = mhalib.scaled_dot_product_attention(X, X, X, causal=causal)
    return out


def _attend_rope(X):
    D = X.shape[1]
    eye = np.eye(D)
    out, _ = mhalib.multi_head_attention(X, eye, eye, eye, n_heads=1, rope_base=mhalib.DEFAULT_BASE)
    return out


def data() -> dict:
    ex = examples.dog_bites_man()
    E = ex["embeddings"]
    a, b = ex["sentences"]
    Xa, Xb = np.array([E[w] for w in a]), np.array([E[w] for w in b])
    pe = mhalib.sinusoidal_encoding(len(a), Xa.shape[1])
    plain = (_attend(Xa), _attend(Xb))
    causal = (_attend(Xa, causal=True), _attend(Xb, causal=True))
    with_pe = (_attend(Xa + pe), _attend(Xb + pe))
    rope = (_attend_rope(Xa), _attend_rope(Xb))
    rows = []
    for w in a:
        i, j = a.index(w), b.index(w)
        rows.append(dict(word=w, pos_a=i, pos_b=j,
                         diff_plain=float(np.abs(plain[0][i] - plain[1][j]).max()),
                         diff_causal=float(np.abs(causal[0][i] - causal[1][j]).max()),
                         diff_pe=float(np.abs(with_pe[0][i] - with_pe[1][j]).max()),
                         diff_rope=float(np.abs(rope[0][i] - rope[1][j]).max())))
    return dict(sentences=[a, b], rows=rows)


def table(data: dict) -> str:
    a, b = (" ".join(s) for s in data["sentences"])
    rows = [[r["word"], r["pos_a"], r["pos_b"], style.sci(r['diff_plain'], 1), style.fixed(r['diff_causal'], 3),
             style.fixed(r['diff_pe'], 3)] for r in data["rows"]]
    return markdown_table(["word", f"position in “{a}”", f"position in “{b}”", "output difference: no PE, no mask",
                           "no PE, causal mask", "sinusoidal PE, no mask"], rows, "lrrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
