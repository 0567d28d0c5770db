"""Why divide by √d_head: the variance of q · k grows like d_head, and unscaled softmax saturates.

Left: sample variance of q . k for unit-normal q, k against the line Var = d_head. Right: the
mean largest softmax weight over 16 keys, with and without the 1/sqrt(d_head) factor.
Page: attention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

#: What a missing value in data() means (the page quotes the spread at d_head = 512).
NON_FINITE = {"std_at_512": "512 is not among the d_heads asked for"}

#: Limits on the sampling work, so that one render stays within seconds.
MAX_TOTAL_D_HEAD = 8192  # sum(d_heads): the saturation panel costs about 0.8 s per 1024
MAX_SAMPLES_WORK = 200_000_000  # n_samples * sum(d_heads): about 6 s of dot products


def data(d_heads: Annotated[tuple[int, ...], Range(1, 1024)] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
         n_samples: Annotated[int, Range(100, 100_000)] = 20_000, seed: Annotated[int, Range(0, None)] = 0) -> dict:
    if list(d_heads) != sorted(set(d_heads)):  # the right panel's curves join the widths in order
        raise ValueError(f"d_heads must be distinct widths in increasing order, got {', '.join(map(str, d_heads))}")
    if sum(d_heads) > MAX_TOTAL_D_HEAD:
        raise ValueError(f"d_heads add up to {sum(d_heads)}; at most {MAX_TOTAL_D_HEAD} keeps the figure within seconds")
    if n_samples * sum(d_heads) > MAX_SAMPLES_WORK:
        raise ValueError(f"n_samples x sum(d_heads) = {n_samples:,} x {sum(d_heads)} is over {MAX_SAMPLES_WORK:,}; "
                         "lower n_samples or drop some d_heads")

    variance = [mhalib.dot_product_variance(d, n_samples, seed=seed + d) for d in d_heads]
    both = [mhalib.max_attention_weights(d, seed=seed + d) for d in d_heads]  # one sample, two softmaxes
    unscaled, scaled = [b["unscaled"] for b in both], [b["scaled"] for b in both]
    return dict(d_head=list(d_heads), variance=variance, max_weight_unscaled=unscaled, max_weight_scaled=scaled,
                n_samples=n_samples, n_keys=16,
                std_at_512=variance[list(d_heads).index(512)] ** 0.5 if 512 in d_heads else None)


def draw(data: dict):
    # Two panels in 6 in at 11 pt: the right panel names its curves beside them (a legend
    # would cover the unscaled curve).
    fig, (a, b) = style.new_figure(5.85, 3.5, ncols=2)
    c = style.colors()
    line = style.palette()
    # the theory line a little past the widths drawn, so one width still shows it
    span = [min(data["d_head"]) / 1.5, max(data["d_head"]) * 1.5]
    a.loglog(span, span, color=c["muted"], lw=1, ls="--", label=r"$d_{\mathrm{head}}$ (theory)")
    a.loglog(data["d_head"], data["variance"], "o", color=line[0], label="sample\nvariance")
    a.set(ylabel="Var(q · k)")
    a.set_title("Dot products spread\n" r"like $\sqrt{d_{\mathrm{head}}}$", fontsize=11)
    a.legend(loc="upper left", fontsize=11, handlelength=1.5)
    b.semilogx(data["d_head"], data["max_weight_unscaled"], "o-", color=line[0])
    b.semilogx(data["d_head"], data["max_weight_scaled"], "s-", color=line[1])
    b.text(0.04, 0.9, "softmax(q·k)", transform=b.transAxes, color=style.ink(line[0]), fontsize=11, va="top")
    b.text(0.97, 0.265, r"softmax(q·k / $\sqrt{d_{\mathrm{head}}}$)", transform=b.transAxes, color=style.ink(line[1]),
           fontsize=11, ha="right", va="bottom")
    b.set(ylabel="mean largest weight", ylim=(0, 1.05))
    b.set_title(f"Saturation\nover {style.counted(data['n_keys'], 'key')}", fontsize=11)
    style.plain_log_ticks(a, "both"), style.plain_log_ticks(b, "x")  # 1, 10, 100 (and 50 over a short span)
    for ax in (a, b):
        ax.set_xlabel(r"head width $d_{\mathrm{head}}$")
        ax.grid(alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
