"""Tensor shapes in one block of all-MiniLM-L6-v2 and of GPT-2 small, symbolic and for each model.

The same numbers as the block diagram (``transformer_block``): MiniLM from the shipped
model's config.json, GPT-2 small from its published configuration. In self-attention the
keys are the same tokens as the queries, so S = T. Page: where attention lives.
"""
from __future__ import annotations

from figures._kit import cli
from figures._kit.export import markdown_table
from figures.attention.transformer_block import data  # noqa: F401  (the same numbers as the diagram)


#: How the symbolic sizes are written on the pages (the notation page's symbols).
_TEX = {"d_model": r"d_{\text{model}}", "d_head": r"d_{\text{head}}", "d_ff": r"d_{\text{ff}}"}


def _fmt(shape) -> str:
    return "(" + ", ".join(f"{s:,}" if isinstance(s, int) else s for s in shape) + ")"


def _fmt_symbolic(shape) -> str:
    """A symbolic shape as inline math, e.g. ``\\((B, T, d_{\\text{model}})\\)``."""
    return r"\((" + ", ".join(_TEX.get(s, s) for s in shape) + r")\)"


def table(data: dict) -> str:
    enc, dec = data["encoder"], data["decoder"]
    rows = []
    for a, b in zip(enc["shapes"], dec["shapes"]):
        if a["tensor"].startswith("output"):
            rows.append(["output", f"{_fmt_symbolic(a['symbolic'])} / {_fmt_symbolic(b['symbolic'])}",
                         f"{_fmt(a['shape'])} sentence embedding", f"{_fmt(b['shape'])} logits"])
        else:
            rows.append([a["tensor"], _fmt_symbolic(a["symbolic"]), _fmt(a["shape"]), _fmt(b["shape"])])
    return markdown_table(["tensor", "shape", enc["name"], dec["name"]], rows, "llll")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
