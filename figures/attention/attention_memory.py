"""Memory of the full T x T score matrix against sequence length, fp32 and fp16 (log-log).

bytes = batch x heads x T^2 x bytes per element; at T = 8192 in fp32 one matrix takes
256 MiB. Page: attention.
"""
from __future__ import annotations

import math
from typing import Annotated

from matplotlib.ticker import FuncFormatter

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def data(lengths: Annotated[tuple[int, ...], Range(1, None)] = (512, 1024, 2048, 4096, 8192, 16384, 32768),
         batch: Annotated[int, Range(1, None)] = 1, heads: Annotated[int, Range(1, None)] = 1) -> dict:
    rows = []
    for T in lengths:
        rows.append(dict(T=T, fp32=mhalib.attention_scores_bytes(T, batch=batch, heads=heads, dtype="float32"),
                         fp16=mhalib.attention_scores_bytes(T, batch=batch, heads=heads, dtype="float16")))
    return dict(rows=rows, batch=batch, heads=heads)


def unit(smallest: int) -> tuple[int, str]:
    """(bytes per unit, its name) for an axis whose smallest value is ``smallest`` bytes: the
    largest unit of which that is at least 1/16 (MiB for the page's lengths; bytes for T = 1,
    2, 3, whose 2 bytes would be a tick of 1.9e-06 MiB)."""
    return style.binary_unit(16 * smallest)


def _power_of_two(value, _pos) -> str:
    """A tick at an exact power of two as "2ᵏ" (mathtext); any other tick unlabelled."""
    exponent = math.log2(value) if value > 0 else math.nan
    return f"$2^{{{int(exponent)}}}$" if math.isfinite(exponent) and exponent == int(exponent) else ""


def draw(data: dict, ax=None):
    if ax is None:
        _, ax = style.new_figure(5.85, 3.6)  # 6 in or less at 11 pt reads on a phone
    T = [r["T"] for r in data["rows"]]
    size, name = unit(min(r["fp16"] for r in data["rows"]))
    ax.loglog(T, [r["fp32"] / size for r in data["rows"]], "o-", base=2, label="fp32")
    ax.loglog(T, [r["fp16"] / size for r in data["rows"]], "s-", base=2, label="fp16")
    n = data["batch"] * data["heads"]
    matrices = "one T×T matrix" if n == 1 else f"{n:,} T×T matrices (batch × heads)"
    ax.set(xlabel="sequence length T", ylabel=f"{name} for {matrices}", title="Attention scores grow as T²")
    ax.grid(alpha=0.4, which="both")
    style.plain_log_ticks(ax)
    # over a wide span the plain labels ran together ("32768262144" for T from 1 to 10^6, and
    # 14-digit byte counts): there each axis is labelled in powers of two, 2¹⁵, 2¹⁸
    for axis, values in ((ax.xaxis, T), (ax.yaxis, [r["fp32"] / size for r in data["rows"]])):
        if max(values) / min(values) > 2**16:
            axis.set_major_formatter(FuncFormatter(_power_of_two))
            axis.set_minor_formatter(FuncFormatter(lambda value, _pos: ""))
    ax.legend()
    return ax.figure



main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
