"""One decoding step on an NVIDIA H100: time against the bytes of the KV cache, for MHA, GQA and MQA.

Left: the step's median time against the size of the cache it reads (batch 8, 32 query
heads of 128, bf16, contexts 1k-64k), with the line bytes / measured copy bandwidth for
reference. Right: how much faster GQA (8 KV heads) and MQA (1) are than MHA (32) at each
context, and the same when K and V are first repeated to 32 heads. Measured with
tools/measure_decode.py; data in figures/data/decode_gqa_h100.json. Page: the KV cache.
"""
from __future__ import annotations

import json

import numpy as np

from figures._kit import cli, style
from figures._kit.contract import data_file

SOURCE = data_file("decode_gqa_h100.json")
#: The H100 SXM's specified HBM3 bandwidth, GB/s (NVIDIA's data sheet; see figures/data/README).
SPEC_GBPS = 3350.0
LABELS = {32: "MHA (32 KV heads)", 8: "GQA (8 KV heads)", 1: "MQA (1 KV head)"}


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
    return dict(machine=d["machine"], batch=d["batch"], q_heads=d["q_heads"], d_head=d["d_head"], dtype=d["dtype"],
                rows=rows, contexts=contexts, kv_heads=kv_heads, bandwidth_GBps=bw, floor_ms=floor_ms,
                speedup=speedup, speedup_repeated=speedup_repeated, longest=longest,
                mha_long_ms=mha_long["ms_median"], mha_long_GBps=mha_long["achieved_GBps"],
                mha_long_share_of_bandwidth=mha_long["achieved_GBps"] / bw, spec_GBps=SPEC_GBPS,
                mha_long_share_of_spec=mha_long["achieved_GBps"] / SPEC_GBPS,
                gqa_speedup_long=speedup[str(kv_heads[1])][-1], mqa_speedup_long=speedup[str(kv_heads[-1])][-1],
                gqa_speedup_repeated_long=speedup_repeated[str(kv_heads[1])][-1])


def draw(data: dict):
    fig, (a, b) = style.new_figure(9.6, 4.0, ncols=2)
    c = style.colors()
    markers = {32: "o", 8: "s", 1: "^"}
    sizes = {32: 10, 8: 7, 1: 6}
    for h in data["kv_heads"]:
        rows = [r for r in data["rows"] if r["kv_heads"] == h]
        a.loglog([r["kv_cache_bytes"] / 2**30 for r in rows], [r["ms_median"] for r in rows], markers.get(h, "o"),
                 label=LABELS.get(h, f"{h} KV heads"), ms=sizes.get(h, 6), mfc="none" if h == 32 else None, mew=1.6)
    gib = np.logspace(np.log10(min(r["kv_cache_bytes"] for r in data["rows"]) / 2**30),
                      np.log10(max(r["kv_cache_bytes"] for r in data["rows"]) / 2**30), 50)
    a.loglog(gib, gib * 2**30 / (data["bandwidth_GBps"] * 1e9) * 1e3, color=c["muted"], ls="--", lw=1.2,
             label=f"bytes ÷ {data['bandwidth_GBps']:,.0f} GB/s (measured copy)")
    a.loglog(gib, gib * 2**30 / (data["spec_GBps"] * 1e9) * 1e3, color=c["muted"], ls=":", lw=1.2,
             label=f"bytes ÷ {data['spec_GBps']:,.0f} GB/s (specified HBM3)")
    a.set(xlabel="KV cache read per step (GiB)", ylabel="step time (ms)", title="Time follows the cache's bytes")
    a.grid(alpha=0.4, which="both")
    a.legend(fontsize=9)
    x = np.arange(len(data["contexts"]))
    width = 0.2
    for i, h in enumerate(data["kv_heads"][1:]):
        b.bar(x + (2 * i - 1.5) * width, data["speedup"][str(h)], width, label=LABELS.get(h, str(h)))
        b.bar(x + (2 * i - 0.5) * width, data["speedup_repeated"][str(h)], width, alpha=0.45,
              label=f"{LABELS.get(h, str(h)).split(' (')[0]}, K/V repeated to {data['kv_heads'][0]}")
    b.axhline(1, color=c["muted"], lw=1)
    b.set_xticks(x, [f"{n // 1024}k" for n in data["contexts"]])
    b.set(xlabel="context length (tokens)", ylabel="speed-up over MHA", title="Fewer KV heads, faster steps")
    b.legend(fontsize=8)
    m = data["machine"]
    fig.suptitle(f"{m['gpu']}, {m['measured_on']}: batch {data['batch']}, {data['q_heads']} query heads × "
                 f"{data['d_head']}, {data['dtype']}", fontsize=10)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
