""""I like tea": token embeddings E plus position vectors P give the inputs X = E + P.

The position vectors are the invented ones of the source tutorial. Page: position matters.
"""
from __future__ import annotations

from mhalib import examples
from figures import _cli


def data() -> dict:
    ex = examples.i_like_tea()
    return dict(tokens=ex["tokens"], E=ex["E"], P=ex["P"], X=ex["X"])


def table(d: dict) -> str:
    def vec(v):
        return "[" + ", ".join(f"{x:.1f}" for x in v) + "]"

    lines = ["| position | token | E (embedding) | P (position) | X = E + P |", "|---:|---|---|---|---|"]
    for i, tok in enumerate(d["tokens"]):
        lines.append(f"| {i + 1} | {tok} | {vec(d['E'][i])} | {vec(d['P'][i])} | **{vec(d['X'][i])}** |")
    return "\n".join(lines) + "\n"


main = _cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
