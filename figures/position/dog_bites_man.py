"""'dog bites man' vs 'man bites dog': each word's attention output in both sentences, without and with positions.

Without positions a word gets the identical output in both sentences (difference 0);
adding sinusoidal PE makes them differ. Self-attention with Q = K = V = X (+ PE),
scale 1/sqrt(d). Page: position matters.
"""
from __future__ import annotations

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli
from figures._kit.export import markdown_table


def _attend(X):
    out, _ = mhalib.scaled_dot_product_attention(X, X, X)
    return out


def data() -> dict:
    ex = examples.dog_bites_man()
    E = ex["embeddings"]
    a, b = ex["sentences"]
    Xa, Xb = np.array([E[w] for w in a]), np.array([E[w] for w in b])
    pe = mhalib.sinusoidal_encoding(len(a), Xa.shape[1])
    plain = (_attend(Xa), _attend(Xb))
    with_pe = (_attend(Xa + pe), _attend(Xb + pe))
    rows = []
    for w in a:
        i, j = a.index(w), b.index(w)
        rows.append(dict(word=w, pos_a=i, pos_b=j,
                         diff_plain=float(np.abs(plain[0][i] - plain[1][j]).max()),
                         diff_pe=float(np.abs(with_pe[0][i] - with_pe[1][j]).max())))
    return dict(sentences=[a, b], rows=rows)


def table(data: dict) -> str:
    a, b = (" ".join(s) for s in data["sentences"])
    rows = [[r["word"], r["pos_a"], r["pos_b"], f"{r['diff_plain']:.1e}", f"{r['diff_pe']:.3f}"] for r in data["rows"]]
    return markdown_table(["word", f"position in “{a}”", f"position in “{b}”", "output difference, no PE",
                           "with sinusoidal PE"], rows, "lrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
