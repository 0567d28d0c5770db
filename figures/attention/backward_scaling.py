"""Why divide by √d_head, seen from the backward pass: without it the gradient reaching the scores vanishes.

For each head width, ``n_samples`` independent trials of one query against 16 keys, entries
of q, k and v drawn N(0, 1) and the output's gradient dO drawn N(0, 1/d_head) (so that
dA = dO V^T has entries of variance 1 at every width: what changes with the width is the
softmax alone). Left: the median norm of the scores' gradient dZ = A o (dA - rowsum(dA o A))
(mhalib.softmax_backward), with the scores scaled by 1/sqrt(d_head) and unscaled. Right: the median norm of the query's
gradient dQ from mhalib.attention_backward. Page: how attention learns.
"""
from __future__ import annotations

import math
from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

#: Limit on the sampling work (n_samples x n_keys x sum(d_heads) numbers per array), so that
#: one render stays within about a second.
MAX_WORK = 40_000_000

#: A phone gets the two panels one under the other (style.narrow()).
NARROW = True


def _trial(d: int, n_keys: int, n_samples: int, seed: int) -> tuple[np.ndarray, ...]:
    """The inputs of one width: q (n, 1, d), k and v (n, S, d), dO (n, 1, d)."""
    rng = np.random.default_rng(seed + d)
    q = rng.standard_normal((n_samples, 1, d))
    k = rng.standard_normal((n_samples, n_keys, d))
    v = rng.standard_normal((n_samples, n_keys, d))
    d_out = rng.standard_normal((n_samples, 1, d)) / math.sqrt(d)
    return q, k, v, d_out


def data(d_heads: Annotated[tuple[int, ...], Range(1, 2048)] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
         n_keys: Annotated[int, Range(2, 256)] = 16, n_samples: Annotated[int, Range(10, 100_000)] = 1000,
         seed: Annotated[int, Range(0, None)] = 0) -> dict:
    if list(d_heads) != sorted(set(d_heads)):  # the curves join the widths in order; "widest" is the last
        raise ValueError(f"d_heads must be distinct widths in increasing order, got {', '.join(map(str, d_heads))}")
    work = n_samples * n_keys * sum(d_heads)
    if work > MAX_WORK:
        raise ValueError(f"n_samples x n_keys x sum(d_heads) = {work:,} is over {MAX_WORK:,}; "
                         "lower n_samples or drop some d_heads")
    out = {name: [] for name in ("dZ_scaled", "dZ_unscaled", "dQ_scaled", "dQ_unscaled",
                                 "max_weight_scaled", "max_weight_unscaled")}
    consistency = 0.0
    for d in d_heads:
        q, k, v, d_out = _trial(d, n_keys, n_samples, seed)
        for label, scale in (("scaled", 1 / math.sqrt(d)), ("unscaled", 1.0)):
            _, A = mhalib.scaled_dot_product_attention(q, k, v, scale=scale)  # (n, 1, S)
            dA = d_out @ np.swapaxes(v, -1, -2)  # (n, 1, d) @ (n, d, S) -> (n, 1, S)
            # dZ = A o (dA - rowsum(dA o A)), the dominant weight's entry from the others (a weight
            # of 1 - 1e-17 rounds to 1, and the plain form read that entry as 0: pass forty)
            dZ = mhalib.softmax_backward(A, dA)  # (n, 1, S)
            dq, _, _ = mhalib.attention_backward(q, k, v, d_out, scale=scale)  # (n, 1, d)
            consistency = max(consistency, float(np.abs(dZ @ k * scale - dq).max()))
            out[f"dZ_{label}"].append(float(np.median(np.linalg.norm(dZ[:, 0], axis=-1))))
            out[f"dQ_{label}"].append(float(np.median(np.linalg.norm(dq[:, 0], axis=-1))))
            out[f"max_weight_{label}"].append(float(A.max(axis=-1).mean()))
    widths = list(d_heads)
    last = len(widths) - 1
    return dict(d_head=widths, n_keys=n_keys, n_samples=n_samples, seed=seed, **out,
                steps_vs_library=consistency,
                widest=widths[last],
                dZ_ratio_widest=out["dZ_scaled"][last] / out["dZ_unscaled"][last],
                dZ_scaled_min=min(out["dZ_scaled"]), dZ_scaled_max=max(out["dZ_scaled"]),
                dZ_unscaled_widest=out["dZ_unscaled"][last], dZ_scaled_widest=out["dZ_scaled"][last],
                dQ_scaled_spread=max(out["dQ_scaled"]) / min(out["dQ_scaled"]),
                dQ_unscaled_spread=max(out["dQ_unscaled"]) / min(out["dQ_unscaled"]),
                dQ_unscaled_peak_width=widths[int(np.argmax(out["dQ_unscaled"]))])


def draw(data: dict):
    if style.narrow():
        fig, (a, b) = style.new_figure(4.6, 6.6, nrows=2)
    else:
        fig, (a, b) = style.new_figure(5.9, 3.6, ncols=2)
    line = style.palette()
    x = data["d_head"]
    for ax, key, title in ((a, "dZ", "gradient of the scores\nmedian ‖dZ‖"),
                           (b, "dQ", "gradient of the query\nmedian ‖dQ‖")):
        ax.loglog(x, data[f"{key}_scaled"], "s-", color=line[1], label=r"scores $\div\sqrt{d_{\mathrm{head}}}$")
        ax.loglog(x, data[f"{key}_unscaled"], "o-", color=line[0], label="unscaled")
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(r"head width $d_{\mathrm{head}}$")
        ax.grid(alpha=0.4)
        style.plain_log_ticks(ax, "x")
    a.legend(loc="lower left", fontsize=11, handlelength=1.5)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
