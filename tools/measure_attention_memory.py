"""Measure peak extra memory of naive attention vs torch's F.scaled_dot_product_attention on CPU.

Run once (``python tools/measure_attention_memory.py``); it writes
``figures/data/attention_memory_measured.json`` with the machine it ran on, and the figure
``attention_memory_measured`` draws that file. Each (method, T) runs in a fresh process and
reports how far the process's peak resident memory (``ru_maxrss``) rose during the call,
beyond what the inputs already took.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "figures" / "data" / "attention_memory_measured.json"
CHILD = r"""
import resource, sys, torch
import torch.nn.functional as F
torch.set_num_threads(1)
method, T, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, 1, T, d, generator=g) for _ in range(3))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with torch.no_grad():
    if method == "naive":
        out = torch.softmax(q @ k.transpose(-1, -2) / d ** 0.5, dim=-1) @ v
    else:
        out = F.scaled_dot_product_attention(q, k, v)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024)
"""


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> int:
    import torch

    d, lengths = 64, [256, 512, 1024, 2048, 4096, 8192]
    rows = []
    for T in lengths:
        row = dict(T=T)
        for method in ("naive", "sdpa"):
            out = subprocess.run([sys.executable, "-c", CHILD, method, str(T), str(d)], check=True,
                                 capture_output=True, text=True)
            row[method] = int(out.stdout.strip())
        rows.append(row)
        print(row, flush=True)
    machine = dict(cpu=cpu_name(), cores=os.cpu_count(), system=f"{platform.system()} {platform.machine()}",
                   python=platform.python_version(), torch=torch.__version__, threads=1,
                   measured_on=datetime.date.today().isoformat())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(dict(d_head=d, batch=1, heads=1, dtype="float32", rows=rows, machine=machine),
                              indent=1) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
