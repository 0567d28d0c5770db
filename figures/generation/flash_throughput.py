"""How close FlashAttention runs to the H100's limit: achieved TFLOP/s of the causal forward pass.

For the 32-head x 128, bf16, causal layer measured on an NVIDIA H100 (figures/data/
attention_gpu_h100.json), the FLOPs of the two attention products (mhalib.attention_flops,
halved for causal) divided by the measured time, next to the GPU's measured bf16
matrix-product rate (798 TFLOP/s for an 8192³ product on the same GPU model). Beside it,
the rate the kernel would execute if it works in tiles of 128 x 128 and skips the tiles
above the diagonal (mhalib.causal_tile_counts): it computes more scores than the halved
count, in the same time. Page: FlashAttention.
"""
from __future__ import annotations

import json

import mhalib
from figures._kit import cli, style
from figures._kit.contract import data_file
from figures._kit.export import markdown_table

SOURCE = data_file("attention_gpu_h100.json")
#: bf16 8192³ matrix product on an H100 80GB HBM3, measured (see figures/data/README).
MATMUL_TFLOPS = 798.0
#: The tile of the executed-rate estimate: the query block of the page's FlashAttention-2 column.
TILE = 128


def data() -> dict:
    gpu = json.loads(SOURCE.read_text())
    layer = next(s for s in gpu["suites"] if s["H"] > 1 and not s["backward"])
    rows = []
    for r in layer["rows"]:
        flops = mhalib.attention_flops(r["T"], r["T"], layer["d"], n_heads=layer["H"], batch=layer["B"],
                                       causal=layer["causal"])
        row = dict(T=r["T"], flops=flops)
        for method in ("naive", "efficient", "flash"):
            if "ms_median" in r.get(method, {}):
                row[method] = flops / (r[method]["ms_median"] * 1e-3) / 1e12
        # tiles computed against the halved count: the arithmetic a TILE-tiled kernel executes, per counted FLOP
        row["tiled_over_half"] = mhalib.causal_tile_counts(r["T"], TILE, TILE)["computed_share"] / 0.5
        row["flash_executed"] = row["flash"] * row["tiled_over_half"]
        rows.append(row)
    best = max(rows, key=lambda x: x.get("flash", 0))
    return dict(machine=gpu["machine"], layer={k: layer[k] for k in ("B", "H", "d", "dtype", "causal")},
                rows=rows, matmul_tflops=MATMUL_TFLOPS, tile=TILE, best_T=best["T"], best_flash=best["flash"],
                best_share=best["flash"] / MATMUL_TFLOPS)


def table(data: dict) -> str:
    def cell(r, m):
        return style.fixed(r[m], 0, sep=True) if m in r else "skipped (memory)"

    rows = [[f"{r['T']:,}", style.fixed(r['flops'] / 1e9, 0, sep=True), cell(r, "naive"), cell(r, "efficient"), cell(r, "flash"),
             style.percent(r['flash'] / data['matmul_tflops'])] for r in data["rows"]]
    return markdown_table(["T", "GFLOP (causal)", "naive TFLOP/s", "memory-efficient TFLOP/s", "flash TFLOP/s",
                           f"flash / {style.fixed(data['matmul_tflops'], 0)}"], rows, "rrrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
