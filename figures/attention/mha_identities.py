"""Two checks on the d_model = 6, H = 3 example: the concatenated heads through the output projection equal the sum of per-head projections, and mhalib equals torch.

Both are reported as the largest absolute difference, in float64. Page: multi-head attention.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(seed: Annotated[int, Range(0, None)] = 6) -> dict:

    from mhalib.torch_ref import torch_mha

    ex = examples.six_by_three(seed)
    t = mhalib.mha_trace(ex["X"], ex["W_Q"], ex["W_K"], ex["W_V"], ex["W_O"], n_heads=ex["n_heads"])
    per_head = mhalib.per_head_output(t["heads_out"], ex["W_O"])  # (H, T, D)
    theirs, w_theirs = torch_mha(ex["X"][None], ex["W_Q"], ex["W_K"], ex["W_V"], ex["W_O"], n_heads=ex["n_heads"])
    return dict(
        per_head=per_head, out=t["out"],
        concat_vs_sum=float(np.abs(t["out"] - per_head.sum(axis=0)).max()),
        torch_out_diff=float(np.abs(t["out"] - theirs[0]).max()),
        torch_weights_diff=float(np.abs(t["weights"] - w_theirs[0]).max()),
    )


def table(data: dict) -> str:
    return markdown_table(["identity", "largest absolute difference"], [
        [r"\(\mathrm{concat}(\mathrm{head}_1, \mathrm{head}_2, \mathrm{head}_3)\,W_O\) vs "
         r"\(\sum_h \mathrm{head}_h\,W_O[\text{rows of } h]\)", style.sci(data['concat_vs_sum'], 1)],
        ["mhalib output vs `torch.nn.MultiheadAttention`", style.sci(data['torch_out_diff'], 1)],
        ["mhalib per-head weights vs torch (`average_attn_weights=False`)", style.sci(data['torch_weights_diff'], 1)],
    ], "lr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
