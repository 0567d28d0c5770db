""""I like tea": token embeddings E plus position vectors P give the inputs X = E + P.

The position vectors are the invented ones of the source tutorial. Page: position matters.
"""
from __future__ import annotations

from mhalib import examples
from figures._kit import cli, style
from figures._kit.export import markdown_table


def data() -> dict:
    ex = examples.i_like_tea()
    return dict(tokens=ex["tokens"], E=ex["E"], P=ex["P"], X=ex["X"])


def table(data: dict) -> str:
    def vec(v):
        return "[" + ", ".join(style.fixed(x, 1) for x in v) + "]"

    rows = [[i + 1, tok, vec(data["E"][i]), vec(data["P"][i]), f"**{vec(data['X'][i])}**"] for i, tok in enumerate(data["tokens"])]
    return markdown_table(["position", "token", "E (embedding)", "P (position)", "X = E + P"], rows, "rllll")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
