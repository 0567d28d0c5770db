"""Why a sine AND a cosine per frequency: with sines alone no linear map shifts positions.

Left: for one frequency, sin((p+k) w) against sin(p w): the points lie on a closed loop, so
one input value has two different outputs, and no function of sin(p w) alone (linear or not)
gives the shifted value. Right: the best linear map (least squares over n_positions positions)
from the encoding at p to the encoding at p + k, per frequency pair: from the sines alone it
leaves a large residual, from the (sin, cos) pairs it is exact to rounding.
Page: sinusoidal positional encoding.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def _fit(inputs: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares ``A`` minimising ``|inputs @ A - targets|``, and the residual ``inputs @ A - targets``."""
    A, *_ = np.linalg.lstsq(inputs, targets, rcond=None)
    return A, inputs @ A - targets


def data(d_model: Annotated[int, Range(2, 256)] = 16, n_positions: Annotated[int, Range(8, 4096)] = 256,
         k: Annotated[int, Range(1, 1000)] = 1, base: Annotated[float, Range(1.01, 1_000_000_000)] = 10000.0,
         pair_show: Annotated[int, Range(0, 127)] = 0, n_scatter: Annotated[int, Range(4, 512)] = 64) -> dict:
    """Fit over positions 0 .. n_positions-1 (targets at p + k). ``pair_show`` picks the loop on the left."""
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")
    if pair_show >= d_model // 2:
        raise ValueError(f"pair_show must be below d_model / 2 = {d_model // 2}, got {pair_show}")
    if n_positions < d_model:
        raise ValueError(f"n_positions must be >= d_model = {d_model} for the fit to be determined, got {n_positions}")
    n = n_positions
    pe = mhalib.sinusoidal_encoding(n + k, d_model, base)  # (n + k, D)
    now, later = pe[:n], pe[k:]  # (n, D) each: PE(p) and PE(p + k)

    A_sin, res_sin = _fit(now[:, 0::2], later[:, 0::2])  # sines only: (n, D/2) -> (n, D/2)
    A_pair, res_pair = _fit(now, later)  # sin and cos: (n, D) -> (n, D)

    def rel(res, target):
        return float(np.linalg.norm(res) / np.linalg.norm(target))

    omega = mhalib.sinusoidal_frequencies(d_model, base)
    per_pair_sin = [rel(res_sin[:, i], later[:, 2 * i]) for i in range(d_model // 2)]
    per_pair_both = [rel(res_pair[:, 2 * i:2 * i + 2], later[:, 2 * i:2 * i + 2]) for i in range(d_model // 2)]

    # the loop for one frequency, and two positions with almost the same sine but far-apart targets
    s_now, s_later = now[:n_scatter, 2 * pair_show], later[:n_scatter, 2 * pair_show]
    gap_in = np.abs(s_now[:, None] - s_now[None, :])
    gap_out = np.abs(s_later[:, None] - s_later[None, :])
    gap_in[gap_out < 1.0] = np.inf  # only pairs whose targets differ by at least 1
    p, q = np.unravel_index(np.argmin(gap_in), gap_in.shape)
    p, q = (int(p), int(q)) if p < q else (int(q), int(p))
    return dict(d_model=d_model, n_positions=n, k=k, base=base, omega=omega,
                residual_sin=rel(res_sin, later[:, 0::2]), residual_pairs=rel(res_pair, later),
                per_pair_sin=per_pair_sin, per_pair_both=per_pair_both,
                missing_term=np.abs(np.sin(k * omega)),
                pair_show=pair_show, scatter_now=s_now, scatter_later=s_later,
                example=dict(p=p, q=q, sin_p=float(s_now[p]), sin_q=float(s_now[q]),
                             later_p=float(s_later[p]), later_q=float(s_later[q])))


def draw(data: dict):
    fig, (a, b) = style.new_figure(5.8, 3.9, ncols=2, width_ratios=(1, 1.1))
    lines = style.palette()
    c = style.colors()
    k = data["k"]
    i = "".join("₀₁₂₃₄₅₆₇₈₉"[int(ch)] for ch in str(data["pair_show"]))  # subscript digits
    a.plot(data["scatter_now"], data["scatter_later"], "o", ms=4, color=lines[0], alpha=0.8)
    ex = data["example"]
    for p, x, y in ((ex["p"], ex["sin_p"], ex["later_p"]), (ex["q"], ex["sin_q"], ex["later_q"])):
        a.plot([x], [y], "o", ms=9, mfc="none", mec=lines[5], mew=2)
        toward = -np.array([x, y]) / max(np.hypot(x, y), 1e-9)  # into the empty middle of the loop
        a.annotate(f"p = {p}", (x, y), xytext=tuple(14 * toward), textcoords="offset points", fontsize=11,
                   ha="left" if toward[0] >= 0 else "right", va="center", color=c["fg"])
    a.set(xlabel=f"sin(p·ω{i})   now", ylabel=f"sin((p+{k})·ω{i})   later", title="Sines alone: a loop",
          xlim=(-1.25, 1.25), ylim=(-1.25, 1.25), aspect="equal", xticks=[-1, 0, 1], yticks=[-1, 0, 1])
    a.grid(alpha=0.4)
    pairs = np.arange(len(data["per_pair_sin"]))
    w = 0.4
    b.bar(pairs - w / 2, data["per_pair_sin"], w, color=lines[1], label="from sines only")
    b.bar(pairs + w / 2, np.maximum(data["per_pair_both"], 1e-17), w, color=lines[0],
          label="from (sin, cos) pairs")
    b.set_yscale("log")
    b.set_ylim(1e-17, 3)
    b.set_xticks(pairs)
    b.set(xlabel="frequency pair i", ylabel="relative residual",
          title=f"Best linear map\nPE(p) → PE(p+{k})")
    fig.legend(*b.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=11)
    b.grid(alpha=0.4, axis="y")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
