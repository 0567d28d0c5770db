"""PE(p + k) = PE(p) M_k^T: the block rotation M_k, and how exactly it maps every position to the one k later.

Left: M_k for a small model (d = 8, k = 3): 2x2 rotation blocks on the diagonal. Right:
the largest error |PE(p) M_k^T - PE(p + k)| over 500 positions, for several k, at d = 512.
Page: sinusoidal positional encoding.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli, style


def data(k_show: int = 3, d_show: int = 8, d_model: int = 512, ks: tuple[int, ...] = (1, 2, 5, 10, 50, 100, -7)) -> dict:
    pe = mhalib.sinusoidal_encoding(700, d_model)
    p = np.arange(100, 600)
    errors = [float(np.abs(pe[p] @ mhalib.offset_matrix(k, d_model).T - pe[p + k]).max()) for k in ks]
    return dict(M=mhalib.offset_matrix(k_show, d_show), k_show=k_show, d_show=d_show, d_model=d_model,
                ks=list(ks), errors=errors, max_error=max(errors))


def draw(d: dict):
    fig, (a, b) = style.new_figure(8.6, 3.6, ncols=2, width_ratios=(1, 1.2))
    style.heatmap(d["M"], ax=a, cmap=style.DIVERGING, vmin=-1, vmax=1, annotate="{:.2f}", fontsize=7,
                   title=f"M_k for d = {d['d_show']}, k = {d['k_show']}")
    a.set_xticks([]), a.set_yticks([])
    b.bar([str(k) for k in d["ks"]], d["errors"], color=style.OKABE_ITO[0])
    b.set_yscale("log")
    b.set(xlabel="shift k", ylabel="max |PE(p)M_kᵀ − PE(p+k)|", title=f"Error at d = {d['d_model']} (float64)")
    b.grid(alpha=0.4, axis="y")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
