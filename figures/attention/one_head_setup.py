"""The cat quietly sat: each token's word class x and its query, key and value, split into the two heads' slots.

Every embedding is a one-hot word class, so each token's q, k and v are rows of W_Q, W_K
and W_V. Only sat asks anything (its query); cat and quietly are the only tokens with a
key and a value. Page: why one head is not enough.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(strength: Annotated[float, Range(0.1, 20)] = 3.0) -> dict:
    ex = examples.cat_quietly_sat(strength)
    t = mhalib.mha_trace(ex["X"], ex["W_Q"], ex["W_K"], ex["W_V"], ex["W_O"], n_heads=ex["n_heads"])
    return dict(tokens=ex["tokens"], classes=ex["classes"], X=ex["X"], q=t["q"], k=t["k"], v=t["v"],
                n_heads=ex["n_heads"], strength=ex["strength"])


def _slots(row, n_heads: int) -> str:
    """``\\((3, 0 \\,\\Vert\\, 3, 0)\\)``: one slot per head, separated by a double bar, as math
    (KaTeX draws the bar with its own fonts, as in the page's prose)."""
    d = len(row) // n_heads
    slots = r" \,\Vert\, ".join(", ".join(style.exact(x) for x in row[h * d:(h + 1) * d]) for h in range(n_heads))
    return rf"\(({slots})\)"


def table(data: dict) -> str:
    H = data["n_heads"]
    rows = [[f"*{tok}*", f"{cls} ({', '.join(style.exact(e) for e in x)})", _slots(q, H), _slots(k, H), _slots(v, H)]
            for tok, cls, x, q, k, v in zip(data["tokens"], data["classes"], data["X"], data["q"], data["k"], data["v"])]
    return markdown_table(["token", "embedding x (word class)", "query q", "key k", "value v"], rows, "llrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
