"""Measured peak memory of naive attention vs torch's scaled_dot_product_attention on a CPU.

Drawn from figures/data/attention_memory_measured.json, written once by
tools/measure_attention_memory.py on the machine it names (batch 1, one head, d = 64,
fp32). The naive path holds the full T x T matrix; the fused kernel works in tiles and
its extra memory stays nearly flat. Page: attention.
"""
from __future__ import annotations

import json

from figures._kit import cli, style
from figures._kit.contract import data_file

SOURCE = data_file("attention_memory_measured.json")


def data() -> dict:
    d = json.loads(SOURCE.read_text())
    rows = d["rows"]
    d["scores_bytes"] = [4 * r["T"] ** 2 for r in rows]  # one fp32 T x T matrix
    d["ratio_at_max"] = rows[-1]["naive"] / rows[-1]["sdpa"]
    d["max_T"] = rows[-1]["T"]
    d["naive_mib_at_max"] = rows[-1]["naive"] / 2**20
    d["sdpa_mib_at_max"] = rows[-1]["sdpa"] / 2**20
    return d


def draw(data: dict, ax=None):
    # 6 in or less with 11 pt text reads on a phone; the legend sits in headroom above the
    # curves (the y axis runs three octaves past the largest value).
    if ax is None:
        _, ax = style.new_figure(5.85, 4.0)
    T = [r["T"] for r in data["rows"]]
    mib = 2**20
    naive = [r["naive"] / mib for r in data["rows"]]
    ax.loglog(T, naive, "o-", base=2, label=r"naive: softmax($QK^\top/\sqrt{d_{\mathrm{head}}}$) V")
    ax.loglog(T, [r["sdpa"] / mib for r in data["rows"]], "s-", base=2, label="F.scaled_dot_product_attention")
    ax.loglog(T, [b / mib for b in data["scores_bytes"]], ls=":", color=style.colors()["muted"], base=2,
              label="one T×T fp32 matrix")
    m = data["machine"]
    ax.set(xlabel="sequence length T", ylabel="peak extra memory (MiB)")
    ax.set_title(f"Measured on {m['cores']} CPU cores, torch {m['torch'].split('+')[0]}", fontsize=11)
    ax.set_ylim(top=max(naive) * 8)
    ax.grid(alpha=0.4, which="both")
    style.plain_log_ticks(ax)
    ax.legend(loc="upper left", fontsize=11)
    return ax.figure



main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
