"""Memory of the full T x T score matrix against sequence length, fp32 and fp16 (log-log).

bytes = batch x heads x T^2 x bytes per element; at T = 8192 in fp32 one matrix takes
256 MiB. Page: attention.
"""
from __future__ import annotations

import mhalib
from figures._kit import cli, style


def data(lengths: tuple[int, ...] = (512, 1024, 2048, 4096, 8192, 16384, 32768), batch: int = 1, heads: int = 1) -> dict:
    rows = []
    for T in lengths:
        rows.append(dict(T=T, fp32=mhalib.attention_scores_bytes(T, batch=batch, heads=heads, dtype="float32"),
                         fp16=mhalib.attention_scores_bytes(T, batch=batch, heads=heads, dtype="float16")))
    return dict(rows=rows, batch=batch, heads=heads)


def draw(d: dict):
    fig, ax = style.new_figure(6.0, 3.6)
    T = [r["T"] for r in d["rows"]]
    ax.loglog(T, [r["fp32"] / 2**20 for r in d["rows"]], "o-", base=2, label="fp32")
    ax.loglog(T, [r["fp16"] / 2**20 for r in d["rows"]], "s-", base=2, label="fp16")
    ax.set(xlabel="sequence length T", ylabel="MiB for one T×T matrix", title="Attention scores grow as T²")
    ax.grid(alpha=0.4, which="both")
    style.plain_log_ticks(ax)
    ax.legend()
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
