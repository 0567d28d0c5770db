"""Measure naive attention against PyTorch's fused kernels on a CUDA GPU: peak extra memory and time.

    python tools/measure_attention_gpu.py            # writes figures/data/attention_gpu_<gpu>.json

Needs a CUDA device (it refuses to run without one). The protocol, for each case:

* q, k, v drawn with ``torch.randn`` from a seeded generator, on the GPU;
* ``torch.cuda.reset_peak_memory_stats()`` once the inputs exist; one call;
  ``peak_extra_bytes = max_memory_allocated() - memory_allocated_before``: everything the
  call allocated beyond its inputs (scores, softmax output, output; gradients with
  ``backward``);
* then 2 warm-up calls and 10 timed calls (5 for T >= 16384) with CUDA events: the median
  and the minimum in ms;
* ``naive``: ``softmax(q @ k^T * d^-0.5 [masked above the diagonal when causal]) @ v``, the
  T x T matrix materialised; ``math``, ``efficient``, ``flash``:
  ``F.scaled_dot_product_attention(q, k, v, is_causal=...)`` restricted to one backend with
  ``torch.nn.attention.sdpa_kernel``;
* ``backward``: the timed call is ``out.sum().backward()`` after the forward.

Suites: (1) batch 1, 1 head, d = 64, float32, not causal, T = 1024 ... 65536 (the flash
kernel needs 16-bit inputs, so it is absent); (2) batch 1, 32 heads, d = 128, bfloat16,
causal, forward; (3) the same, forward+backward, T = 1024 ... 32768. Cases whose naive or
math memory would pass ~60 GiB are recorded as skipped. This is the protocol of
figures/data/attention_gpu_h100.json (see figures/data/README.md).
"""
from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 60 * 2**30


def _naive(q, k, v, causal):
    import torch

    s = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5  # (B, H, T, T)
    if causal:
        T = q.shape[-2]
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def _case(method, B, H, T, d, dtype, causal, backward, gen):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    bytes_per = torch.tensor([], dtype=dtype).element_size()
    if method in ("naive", "math") and B * H * T * T * bytes_per * (6 if backward else 2) > LIMIT:
        return {"error": "skipped: would exceed GPU memory"}
    qkv = [torch.randn(B, H, T, d, generator=gen, device="cuda", dtype=dtype, requires_grad=backward)
           for _ in range(3)]
    backend = {"math": SDPBackend.MATH, "efficient": SDPBackend.EFFICIENT_ATTENTION,
               "flash": SDPBackend.FLASH_ATTENTION}.get(method)

    def call():
        if backend is None:
            out = _naive(*qkv, causal)
        else:
            with sdpa_kernel(backend):
                out = F.scaled_dot_product_attention(*qkv, is_causal=causal)
        if backward:
            out.sum().backward()
        return out

    try:
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        call()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - before
        for _ in range(2):
            call()
        times = []
        for _ in range(5 if T >= 16384 else 10):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0]}"}
    finally:
        qkv.clear()
        torch.cuda.empty_cache()
    return {"peak_extra_bytes": int(peak), "ms_median": statistics.median(times), "ms_min": min(times)}


def main(argv=None) -> int:
    import torch

    if not torch.cuda.is_available():
        print("error: no CUDA device; this measurement needs a GPU", file=sys.stderr)
        return 2
    gen = torch.Generator(device="cuda").manual_seed(0)
    t0 = time.perf_counter()
    suites = [
        dict(name="one head, fp32", B=1, H=1, d=64, dtype="float32", causal=False, backward=False,
             lengths=[2**n for n in range(10, 17)], methods=("naive", "math", "efficient")),
        dict(name="32 heads x 128, bf16, causal, forward", B=1, H=32, d=128, dtype="bfloat16", causal=True,
             backward=False, lengths=[2**n for n in range(10, 16)], methods=("naive", "math", "efficient", "flash")),
        dict(name="32 heads x 128, bf16, causal, forward+backward", B=1, H=32, d=128, dtype="bfloat16", causal=True,
             backward=True, lengths=[2**n for n in range(10, 16)], methods=("naive", "math", "efficient", "flash")),
    ]
    out = []
    for s in suites:
        dtype = getattr(torch, s["dtype"])
        rows = []
        for T in s["lengths"]:
            row = {"T": T}
            for m in s["methods"]:
                row[m] = _case(m, s["B"], s["H"], T, s["d"], dtype, s["causal"], s["backward"], gen)
                print(s["name"], T, m, row[m], flush=True)
            rows.append(row)
        out.append({k: s[k] for k in ("name", "B", "H", "d", "dtype", "causal", "backward")} | {"rows": rows})
    props = torch.cuda.get_device_properties(0)
    machine = dict(gpu=props.name, gpu_memory_bytes=props.total_memory, sms=props.multi_processor_count,
                   torch=torch.__version__, cuda=torch.version.cuda, python=platform.python_version(),
                   measured_on=date.today().isoformat())
    name = props.name.split()[1].lower() if len(props.name.split()) > 1 else "gpu"
    target = ROOT / "figures" / "data" / f"attention_gpu_{name}.json"
    target.write_text(json.dumps(dict(suites=out, machine=machine, seconds=round(time.perf_counter() - t0, 1)),
                                 indent=1) + "\n")
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
