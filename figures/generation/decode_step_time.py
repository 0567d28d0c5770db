"""One decoding step on an NVIDIA H100 and on this site's CPU: time against the bytes of the KV cache, for MHA, GQA and MQA.

Left: the step's median time against the size of the cache it reads (H100: batch 8, 32
query heads of 128, bf16, contexts 1k-64k; CPU: batch 1, fp32, 1k-32k), with the lines
bytes / bandwidth for reference. Right: how much faster GQA (8 KV heads) and MQA (1) are
than MHA (32) on the H100 at each context, and the same when K and V are first repeated
to 32 heads. Measured with tools/measure_decode_cpu.py (--device cuda for the GPU); data
in figures/data/decode_gqa_h100.json and figures/data/decode_cpu.json. Page: the KV cache.
"""
from __future__ import annotations

import json

import numpy as np

from figures._kit import cli, style
from figures._kit.contract import data_file

SOURCE = data_file("decode_gqa_h100.json")
CPU_SOURCE = data_file("decode_cpu.json")
#: The H100 SXM's specified HBM3 bandwidth, GB/s (NVIDIA's data sheet; see figures/data/README).
SPEC_GBPS = 3350.0
LABELS = {32: "MHA (32 KV heads)", 8: "GQA (8 KV heads)", 1: "MQA (1 KV head)"}
#: A phone gets the four panels stacked in one column (style.narrow()).
NARROW = True


def data() -> dict:
    d = json.loads(SOURCE.read_text())
    rows = d["rows"]
    bw = d["machine"]["device_copy_GBps_read_plus_write"]  # GB/s, bytes read + written
    contexts = sorted({r["context"] for r in rows})
    kv_heads = sorted({r["kv_heads"] for r in rows}, reverse=True)
    by = {(r["context"], r["kv_heads"]): r for r in rows}
    speedup = {str(h): [by[c, kv_heads[0]]["ms_median"] / by[c, h]["ms_median"] for c in contexts] for h in kv_heads}
    speedup_repeated = {str(h): [by[c, kv_heads[0]]["ms_median"] / by[c, h]["ms_median_kv_repeated"]
                                 for c in contexts] for h in kv_heads}
    # the time a step needs just to read its cache once at the measured bandwidth
    floor_ms = {f"{c}-{h}": by[c, h]["kv_cache_bytes"] / (bw * 1e9) * 1e3 for c in contexts for h in kv_heads}
    longest = contexts[-1]
    mha_long = by[longest, kv_heads[0]]
    cpu = json.loads(CPU_SOURCE.read_text())
    cpu_by = {(r["context"], r["kv_heads"]): r for r in cpu["rows"]}
    cpu_longest = max(c for c, _ in cpu_by)
    cpu_contexts = sorted({c for c, _ in cpu_by})
    cpu_speedup = {str(h): [cpu_by[c, kv_heads[0]]["ms_median"] / cpu_by[c, h]["ms_median"] for c in cpu_contexts]
                   for h in kv_heads}
    cpu_repeated = {str(h): [cpu_by[c, kv_heads[0]]["ms_median"] / cpu_by[c, h]["ms_median_kv_repeated"]
                             for c in cpu_contexts] for h in kv_heads}
    # the arithmetic of one step is the same for every KV head count: 4 x B x H x L x d FLOPs
    cpu_gflops_long = {str(h): 4 * cpu["batch"] * cpu["q_heads"] * cpu_longest * cpu["d_head"]
                       / (cpu_by[cpu_longest, h]["ms_median"] * 1e-3) / 1e9 for h in kv_heads}
    return dict(machine=d["machine"], batch=d["batch"], q_heads=d["q_heads"], d_head=d["d_head"], dtype=d["dtype"],
                rows=rows, contexts=contexts, kv_heads=kv_heads, bandwidth_GBps=bw, floor_ms=floor_ms,
                speedup=speedup, speedup_repeated=speedup_repeated, longest=longest,
                mha_long_ms=mha_long["ms_median"], mha_long_GBps=mha_long["achieved_GBps"],
                mha_long_share_of_bandwidth=mha_long["achieved_GBps"] / bw, spec_GBps=SPEC_GBPS,
                mha_long_share_of_spec=mha_long["achieved_GBps"] / SPEC_GBPS,
                gqa_speedup_long=speedup[str(kv_heads[1])][-1], mqa_speedup_long=speedup[str(kv_heads[-1])][-1],
                floor_step_ms=min(r["ms_median"] for r in rows),
                gqa_speedup_repeated_long=speedup_repeated[str(kv_heads[1])][-1],
                cpu=dict(machine=cpu["machine"], batch=cpu["batch"], dtype=cpu["dtype"], rows=cpu["rows"],
                         warmup_calls=cpu["warmup_calls"], timed_calls=cpu["timed_calls"],
                         longest=cpu_longest, contexts=cpu_contexts, speedup=cpu_speedup, speedup_repeated=cpu_repeated,
                         gqa_speedup_long=cpu_speedup[str(kv_heads[1])][-1],
                         mqa_speedup_long=cpu_speedup[str(kv_heads[-1])][-1], gflops_long=cpu_gflops_long,
                         best_speedup=max(x for h in kv_heads[1:] for x in cpu_speedup[str(h)]),  # GQA's or MQA's
                         bandwidth_GBps=cpu["machine"]["device_copy_GBps_read_plus_write"],
                         mha_long_ms=cpu_by[cpu_longest, 32]["ms_median"],
                         mha_long_GBps=cpu_by[cpu_longest, 32]["achieved_GBps"]))


def _time_panel(ax, rows, kv_heads, bandwidths, title):
    c = style.colors()
    markers, sizes = {32: "o", 8: "s", 1: "^"}, {32: 10, 8: 7, 1: 6}
    for h in kv_heads:
        mine = [r for r in rows if r["kv_heads"] == h]
        ax.loglog([r["kv_cache_bytes"] / 2**30 for r in mine], [r["ms_median"] for r in mine], markers.get(h, "o"),
                  label=LABELS.get(h, f"{h} KV heads").split(" (")[0], ms=sizes.get(h, 6),
                  mfc="none" if h == 32 else None, mew=1.6)
    lo = min(r["kv_cache_bytes"] for r in rows) / 2**30
    hi = max(r["kv_cache_bytes"] for r in rows) / 2**30
    gib = np.logspace(np.log10(lo), np.log10(hi), 50)
    for (label, bw), ls in zip(bandwidths, ("--", ":")):
        ax.loglog(gib, gib * 2**30 / (bw * 1e9) * 1e3, color=c["muted"], ls=ls, lw=1.2,
                  label=f"bytes ÷ {style.fixed(bw, 0, sep=True)} GB/s{label}")
    ax.set(xlabel="KV cache per step (GiB)", ylabel="step time (ms)", title=title)
    ax.grid(alpha=0.4, which="both")
    style.plain_log_ticks(ax, "y")
    ax.legend(fontsize=11, handletextpad=0.3, borderaxespad=0.3, labelspacing=0.3)


def _speedup_panel(ax, contexts, speedup, repeated, kv_heads, title, legend=True):
    c = style.colors()
    palette = style.palette()
    for i, h in enumerate(kv_heads[1:]):
        color = palette[i + 1]
        name = LABELS.get(h, str(h)).split(" (")[0]
        ax.semilogx(contexts, speedup[str(h)], "o-", base=2, color=color, label=f"{name}")
        ax.semilogx(contexts, repeated[str(h)], "o:", base=2, color=color, mfc="none",
                    label=f"{name}, K/V repeated")
    ax.axhline(1, color=c["muted"], lw=1)
    ax.set_xticks(contexts, [f"{n // 1024}k" for n in contexts])
    ax.set(xlabel="context length (tokens)", ylabel="speed-up over MHA", title=title)
    ax.grid(alpha=0.4)
    if legend:  # the two speed-up panels share their key
        ax.legend(fontsize=11, loc="upper left", handletextpad=0.3, borderaxespad=0.3, labelspacing=0.3)


def draw(data: dict):
    if style.narrow():  # a phone: H100 time, CPU time, H100 speed-up, CPU speed-up, one under another
        fig, column = style.new_figure(5.6, 15.0, nrows=4)
        axes = [column[:2], column[2:]]
    else:
        fig, axes = style.new_figure(8.6, 9.0, nrows=2, ncols=2)
    m, cpu = data["machine"], data["cpu"]
    _time_panel(axes[0][0], data["rows"], data["kv_heads"],
                [(" (copy)", data["bandwidth_GBps"]), (" (spec)", data["spec_GBps"])],
                f"H100: batch {data['batch']}, {data['dtype']}")
    _time_panel(axes[0][1], cpu["rows"], data["kv_heads"], [(" (copy)", cpu["bandwidth_GBps"])],
                f"CPU ({cpu['machine']['cores']} cores): batch {cpu['batch']}, {cpu['dtype']}")
    _speedup_panel(axes[1][0], data["contexts"], data["speedup"], data["speedup_repeated"], data["kv_heads"],
                   "H100: speed-up over MHA")
    _speedup_panel(axes[1][1], cpu["contexts"], cpu["speedup"], cpu["speedup_repeated"], data["kv_heads"],
                   "CPU: speed-up over MHA", legend=False)
    fig.suptitle(f"One decode step, {data['q_heads']} query heads × {data['d_head']}\n{m['gpu']} "
                 f"({m['measured_on']}) and this site's CPU ({cpu['machine']['measured_on']})", fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
