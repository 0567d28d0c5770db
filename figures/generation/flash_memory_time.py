"""Naive attention vs PyTorch's fused kernels on an NVIDIA H100: peak extra memory and time against T.

Left (log-log): the extra GPU memory of one attention call, one fp32 head of d = 64: the
naive path holds the T x T scores (slope 2), the memory-efficient kernel only its output
and per-row statistics (slope 1); the CPU measurement of the same naive path and of
torch's fused CPU kernel is drawn beside it, and one fp32 score matrix at T = 8192 is
marked (4 * 8192^2 bytes, 256 MiB: the "256 MB" of many tutorials). Right: the time of a
32-head x 128 causal bf16 layer, forward. Data measured with tools/measure_attention_gpu.py
(figures/data/attention_gpu_h100.json) and tools/measure_attention_memory.py
(figures/data/attention_memory_measured.json). Page: FlashAttention.
"""
from __future__ import annotations

import json
import math

from figures._kit import cli, style
from figures._kit.contract import data_file

GPU = data_file("attention_gpu_h100.json")
#: A phone gets the two panels one under the other (style.narrow()).
NARROW = True
CPU = data_file("attention_memory_measured.json")
#: The length at which one fp32 score matrix is marked on the memory panel.
MARK_T = 8192
METHODS = {"naive": "naive softmax(QKᵀ)V", "math": "PyTorch math kernel", "efficient": "memory-efficient kernel",
           "flash": "FlashAttention kernel"}


def _series(suite: dict, method: str, field: str) -> tuple[list, list]:
    """(T, value) for the rows where ``method`` ran (skipped cases carry an error instead)."""
    pts = [(r["T"], r[method][field]) for r in suite["rows"] if method in r and field in r[method]]
    return [t for t, _ in pts], [v for _, v in pts]


def _slope(T: list, y: list) -> float:
    """Log-log slope between the two largest T: 2 means y grows like T², 1 like T."""
    return math.log(y[-1] / y[-2]) / math.log(T[-1] / T[-2])


def data() -> dict:
    gpu, cpu = json.loads(GPU.read_text()), json.loads(CPU.read_text())
    one_head = next(s for s in gpu["suites"] if s["H"] == 1)
    layer = next(s for s in gpu["suites"] if s["H"] > 1 and not s["backward"])
    memory = {m: dict(zip(("T", "bytes"), _series(one_head, m, "peak_extra_bytes")))
              for m in METHODS if any(m in r for r in one_head["rows"])}
    time = {m: dict(zip(("T", "ms"), _series(layer, m, "ms_median"))) for m in METHODS}
    slopes = {m: _slope(s["T"], s["bytes"]) for m, s in memory.items()}
    at = {m: dict(zip(s["T"], s["bytes"])) for m, s in memory.items()}
    t16 = {m: dict(zip(s["T"], s["ms"])) for m, s in time.items()}
    layer_mem = {m: dict(zip(*_series(layer, m, "peak_extra_bytes"))) for m in METHODS}
    return dict(
        machine=gpu["machine"], cpu_machine=cpu["machine"], gpu_memory_gib=gpu["machine"]["gpu_memory_bytes"] / 2**30, one_head={k: one_head[k] for k in ("B", "H", "d", "dtype")},
        layer={k: layer[k] for k in ("B", "H", "d", "dtype", "causal")}, memory=memory, time=time, slopes=slopes,
        cpu_rows=cpu["rows"], mark_T=MARK_T, scores_bytes_8192=4 * MARK_T**2, scores_mib_8192=4 * MARK_T**2 / 2**20,
        naive_mib_8192=at["naive"][8192] / 2**20, efficient_mib_8192=at["efficient"][8192] / 2**20,
        naive_gib_layer_16384=layer_mem["naive"][16384] / 2**30, flash_mib_layer_16384=layer_mem["flash"][16384] / 2**20,
        flash_speedup_16384=t16["naive"][16384] / t16["flash"][16384],
        longest_naive_layer=max(time["naive"]["T"]), longest_flash_layer=max(time["flash"]["T"]),
    )


def draw(data: dict):
    narrow = style.narrow()
    if narrow:  # a phone: memory above time, each with its own key
        fig, (a, b) = style.new_figure(5.6, 10.0, nrows=2)
    else:  # side by side, one key under both (a method has the same colour in both panels)
        fig, (a, b) = style.new_figure(9.0, 5.6, ncols=2)
    c = style.colors()
    color = dict(zip(METHODS, style.palette()))
    mib = 2**20
    for m, s in data["memory"].items():
        a.loglog(s["T"], [v / mib for v in s["bytes"]], "o-", base=2, color=color[m],
                 label=f"H100: {METHODS[m]}" if narrow else METHODS[m])
    cpu = data["cpu_rows"]
    a.loglog([r["T"] for r in cpu], [r["naive"] / mib for r in cpu], "x--", base=2, color=c["muted"],
             label="CPU: naive")
    a.loglog([r["T"] for r in cpu], [r["sdpa"] / mib for r in cpu], "+--", base=2, color=c["fg"],
             label="CPU: fused SDPA")
    T_mark = data["mark_T"]
    a.plot([T_mark], [data["scores_mib_8192"]], "D", ms=9, mfc="none", mec=c["accent"], mew=2)
    a.annotate(f"{style.fixed(data['scores_mib_8192'], 0)} MiB: one fp32\n{T_mark}×{T_mark} matrix",
               (T_mark, data["scores_mib_8192"]), xytext=(10, -42), textcoords="offset points", fontsize=11,
               color=c["fg"], arrowprops=dict(arrowstyle="-", color=c["accent"]))
    oh = data["one_head"]
    a.set(xlabel="sequence length T", ylabel="peak extra memory (MiB)",
          title=f"Memory: {oh['H']} head, d_head = {oh['d']}, {oh['dtype']}")
    for m, s in data["time"].items():
        b.loglog(s["T"], s["ms"], "o-", base=2, color=color[m], label=METHODS[m])
    ly = data["layer"]
    b.set(xlabel="sequence length T", ylabel="time, forward (ms)",
          title=f"Time: {style.counted(ly['H'], 'head')} × {ly['d']}, {ly['dtype']}, causal")
    a.set_xticks(sorted({T for s in data["memory"].values() for T in s["T"]} | {r["T"] for r in cpu}))
    b.set_xticks(sorted({T for s in data["time"].values() for T in s["T"]}))
    for ax in (a, b):
        style.plain_log_ticks(ax)
        ax.minorticks_off()
        ax.grid(alpha=0.4)
        ax.tick_params(axis="x", labelrotation=45)
    key = dict(fontsize=11, handletextpad=0.3, labelspacing=0.3)
    if narrow:
        for ax in (a, b):
            ax.legend(loc="upper left", borderaxespad=0.3, **key)
    else:
        handles = {}
        for ax in (b, a):  # the time panel has every method, the memory panel adds the CPU lines
            for h, label in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, h)
        fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=3, columnspacing=1.2, **key)
    gap = "\n" if narrow else " "
    fig.suptitle(f"{data['machine']['gpu']}, torch {data['machine']['torch'].split('+')[0]},{gap}"
                 f"measured {data['machine']['measured_on']}; CPU: {data['cpu_machine']['cores']} cores", fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
