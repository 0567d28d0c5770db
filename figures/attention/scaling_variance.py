"""Why divide by sqrt(d_k): Var(q . k) grows like d_k, and unscaled softmax saturates.

Left: sample variance of q . k for unit-normal q, k against the line Var = d_k. Right: the
mean largest softmax weight over 16 keys, with and without the 1/sqrt(d_k) factor.
Page: attention.
"""
from __future__ import annotations

from typing import Annotated

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

#: Limits on the sampling work, so that one render stays within seconds.
MAX_TOTAL_D_K = 8192  # sum(d_ks): the saturation panel costs about 0.8 s per 1024
MAX_SAMPLES_WORK = 200_000_000  # n_samples * sum(d_ks): about 6 s of dot products


def data(d_ks: Annotated[tuple[int, ...], Range(1, 1024)] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
         n_samples: Annotated[int, Range(100, 100_000)] = 50_000, seed: Annotated[int, Range(0, None)] = 0) -> dict:
    if sum(d_ks) > MAX_TOTAL_D_K:
        raise ValueError(f"d_ks add up to {sum(d_ks)}; at most {MAX_TOTAL_D_K} keeps the figure within seconds")
    if n_samples * sum(d_ks) > MAX_SAMPLES_WORK:
        raise ValueError(f"n_samples x sum(d_ks) = {n_samples:,} x {sum(d_ks)} is over {MAX_SAMPLES_WORK:,}; "
                         "lower n_samples or drop some d_ks")

    variance = [mhalib.dot_product_variance(d, n_samples, seed=seed + d) for d in d_ks]
    unscaled = [mhalib.max_attention_weight(d, scaled=False, seed=seed + d) for d in d_ks]
    scaled = [mhalib.max_attention_weight(d, scaled=True, seed=seed + d) for d in d_ks]
    return dict(d_k=list(d_ks), variance=variance, max_weight_unscaled=unscaled, max_weight_scaled=scaled,
                n_samples=n_samples, n_keys=16, std_at_512=variance[-1] ** 0.5 if d_ks[-1] == 512 else None)


def draw(data: dict):
    fig, (a, b) = style.new_figure(8.4, 3.4, ncols=2)
    c = style.colors()
    a.loglog(data["d_k"], data["d_k"], color=c["muted"], lw=1, ls="--", label="d_k (theory)")
    a.loglog(data["d_k"], data["variance"], "o", label="sample variance")
    a.set(xlabel="d_k", ylabel="Var(q · k)", title="Dot products spread like √d_k")
    a.legend()
    b.semilogx(data["d_k"], data["max_weight_unscaled"], "o-", label="softmax(q·k)")
    b.semilogx(data["d_k"], data["max_weight_scaled"], "s-", label="softmax(q·k / √d_k)")
    b.set(xlabel="d_k", ylabel="mean largest weight", ylim=(0, 1.05), title=f"Saturation over {data['n_keys']} keys")
    b.legend(loc="center right")
    for ax in (a, b):
        ax.grid(alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
