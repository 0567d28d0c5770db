"""No positional encoding, a causal mask: a head can still tell how far into the sequence it is.

A start token followed by identical tokens ("BOS a a a a a"). The queries and keys carry
no position and this head's scores are all equal (W_Q = 0), so each query spreads its
weight evenly over the keys it may see. The value is 1 for the start token and 0 for
every other token. With the causal mask the token at position i sees i + 1 keys and
receives 1 / (i + 1): the output reveals the position. Without the mask every token
receives 1 / T, and identical tokens stay identical. Page: comparing the methods.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(n_tokens: Annotated[int, Range(2, 64)] = 6) -> dict:
    tokens = ["BOS"] + ["a"] * (n_tokens - 1)
    X = np.array([[1.0, 0.0]] + [[0.0, 1.0]] * (n_tokens - 1))  # (T, 2): one feature for BOS, one for a
    W_Q, W_K, W_V = np.zeros((2, 2)), np.eye(2), np.array([[1.0], [0.0]])  # value: "is this the start token?"
    q, k, v = X @ W_Q, X @ W_K, X @ W_V  # (T, 2), (T, 2), (T, 1)
    causal, w_causal = mhalib.scaled_dot_product_attention(q, k, v, causal=True)  # (T, 1), (T, T)
    full, _ = mhalib.scaled_dot_product_attention(q, k, v)
    return dict(tokens=tokens, causal=causal[:, 0], bidirectional=full[:, 0], keys_seen=(w_causal > 0).sum(axis=1))


def table(data: dict) -> str:
    rows = [[i, tok, int(data["keys_seen"][i]), style.share(data['causal'][i], 4), style.share(data['bidirectional'][i], 4)]
            for i, tok in enumerate(data["tokens"])]
    return markdown_table(["position", "token", "keys seen (causal)", "output, causal mask", "output, no mask"],
                          rows, "rlrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
