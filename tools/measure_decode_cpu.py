"""Measure one decoding step against a KV cache with torch: MHA, GQA and MQA caches.

Run once (``python -m tools.measure_decode_cpu``); it writes ``figures/data/decode_cpu.json``
with the machine it ran on, in the fields of ``../shared/data/decode_gqa_h100.json`` (see
``../shared/data/README.md``). The protocol, for each context length L and key/value head
count H_kv in (32, 8, 1):

* q of shape (B, 32, 1, 128) and a cache k, v of shape (B, H_kv, L, 128), drawn with
  ``torch.randn`` from a seeded generator;
* the timed call is ``F.scaled_dot_product_attention(q, k, v, enable_gqa=H_kv != 32)``:
  3 warm-up calls, then 20 timed calls, and the median is kept (``ms_median``);
* ``kv_cache_bytes = k.nbytes + v.nbytes`` and ``achieved_GBps = kv_cache_bytes / time``
  (1 GB = 1e9 bytes): the bandwidth the step would need if reading the cache were all it did;
* ``ms_median_kv_repeated``: the same step on k and v already expanded to 32 heads with
  ``repeat_interleave`` (what a naive GQA implementation attends to; the copy is not timed);
* ``machine.device_copy_GBps_read_plus_write``: a large tensor copy (256 MiB on the CPU,
  1 GiB on a GPU), bytes read plus bytes written per second, median of 10.

On the CPU (the default): float32, B = 1, ``torch.set_num_threads(2)``, L = 1024, 4096,
16384, and 32768 when the 16384 rows predict that it fits in ``--budget-s`` seconds (20 by
default); the script takes well under 2 minutes and 4 GiB. With ``--device cuda``: bfloat16,
B = 8, L = 1024, 4096, 16384, 65536, timed with CUDA events, as the GPU file was.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import time
import sys
from pathlib import Path

from tools.measure_attention_memory import cpu_name  # (one way to name the machine)

ROOT = Path(__file__).resolve().parents[1]
Q_HEADS, D_HEAD, KV_HEADS = 32, 128, (32, 8, 1)
WARMUP, CALLS = 3, 20




def timer(device: str):
    """A function ``time_ms(fn, n)`` returning the n per-call times of ``fn`` in milliseconds."""
    import torch

    if device == "cuda":
        def time_ms(fn, n):
            times = []
            for _ in range(n):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
            return times
    else:
        def time_ms(fn, n):
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
            return times
    return time_ms


def copy_bandwidth(device: str, nbytes: int, time_ms) -> float:
    """Bytes read plus written per second by ``dst.copy_(src)`` of an ``nbytes`` tensor, in GB/s."""
    import torch

    src = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    for _ in range(WARMUP):
        dst.copy_(src)
    ms = statistics.median(time_ms(lambda: dst.copy_(src), 10))
    return 2 * nbytes / (ms * 1e-3) / 1e9


def measure_row(L: int, H_kv: int, *, batch: int, dtype, device: str, gen, time_ms) -> dict:
    import torch
    import torch.nn.functional as F

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float32, device=device).to(dtype)

    q = randn(batch, Q_HEADS, 1, D_HEAD)  # (B, H, 1, d)
    k = randn(batch, H_kv, L, D_HEAD)  # (B, H_kv, L, d)
    v = randn(batch, H_kv, L, D_HEAD)  # (B, H_kv, L, d)
    gqa = H_kv != Q_HEADS
    with torch.no_grad():
        def step():
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
        for _ in range(WARMUP):
            step()
        ms = statistics.median(time_ms(step, CALLS))
        k_rep = k.repeat_interleave(Q_HEADS // H_kv, dim=1)  # (B, H_kv, L, d) -> (B, H, L, d)
        v_rep = v.repeat_interleave(Q_HEADS // H_kv, dim=1)  # (B, H_kv, L, d) -> (B, H, L, d)

        def step_repeated():
            return F.scaled_dot_product_attention(q, k_rep, v_rep)
        for _ in range(WARMUP):
            step_repeated()
        ms_rep = statistics.median(time_ms(step_repeated, CALLS))
    kv_bytes = k.nbytes + v.nbytes
    return dict(context=L, kv_heads=H_kv, kv_cache_bytes=kv_bytes, ms_median=ms,
                achieved_GBps=kv_bytes / (ms * 1e-3) / 1e9, ms_median_kv_repeated=ms_rep)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--out", type=Path, default=None,
                        help="output JSON (default figures/data/decode_cpu.json, or decode_gqa_cuda.json)")
    parser.add_argument("--budget-s", type=float, default=20.0,
                        help="CPU only: measure L = 32768 if the L = 16384 rows predict it takes at most this long")
    args = parser.parse_args(argv)

    import torch

    device = args.device
    if device == "cuda":
        if not torch.cuda.is_available():
            parser.error("--device cuda needs a CUDA build of torch and a GPU")
        dtype, batch, contexts, copy_bytes = torch.bfloat16, 8, [1024, 4096, 16384, 65536], 2**30
    else:
        torch.set_num_threads(2)
        dtype, batch, contexts, copy_bytes = torch.float32, 1, [1024, 4096, 16384], 2**28
    default_name = "decode_cpu.json" if device == "cpu" else "decode_gqa_cuda.json"
    out_path = args.out or ROOT / "figures" / "data" / default_name
    torch.manual_seed(0)
    gen = torch.Generator(device=device).manual_seed(0)
    time_ms = timer(device)
    started = time.perf_counter()

    rows, skipped = [], []
    for L in contexts:
        for H_kv in KV_HEADS:
            rows.append(measure_row(L, H_kv, batch=batch, dtype=dtype, device=device, gen=gen, time_ms=time_ms))
            print(rows[-1], flush=True)
    if device == "cpu":
        # one more doubling if the last length's rows, times two, fit in the budget
        last = [r for r in rows if r["context"] == contexts[-1]]
        predicted_s = 2 * sum((WARMUP + CALLS) * (r["ms_median"] + r["ms_median_kv_repeated"]) for r in last) / 1e3
        if predicted_s <= args.budget_s:
            for H_kv in KV_HEADS:
                rows.append(measure_row(2 * contexts[-1], H_kv, batch=batch, dtype=dtype, device=device,
                                        gen=gen, time_ms=time_ms))
                print(rows[-1], flush=True)
        else:
            skipped.append(dict(context=2 * contexts[-1],
                                reason=f"predicted {predicted_s:.1f} s > budget {args.budget_s} s"))

    machine = dict(device=device, torch=torch.__version__, python=platform.python_version(),
                   measured_on=datetime.date.today().isoformat(),
                   device_copy_GBps_read_plus_write=copy_bandwidth(device, copy_bytes, time_ms),
                   copy_bytes=copy_bytes)
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        machine.update(gpu=props.name, gpu_memory_bytes=props.total_memory, cuda=torch.version.cuda)
    else:
        machine.update(cpu=cpu_name(), cores=os.cpu_count(), threads=torch.get_num_threads(),
                       system=f"{platform.system()} {platform.machine()}")
    result = dict(batch=batch, q_heads=Q_HEADS, d_head=D_HEAD, dtype=str(dtype).removeprefix("torch."),
                  warmup_calls=WARMUP, timed_calls=CALLS, rows=rows, machine=machine)
    if skipped:
        result["skipped"] = skipped
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out_path} in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
