"""Why divide by sqrt(d_k): Var(q . k) grows like d_k, and unscaled softmax saturates.

Left: sample variance of q . k for unit-normal q, k against the line Var = d_k. Right: the
mean largest softmax weight over 16 keys, with and without the 1/sqrt(d_k) factor.
Page: attention.
"""
from __future__ import annotations

import mhalib
from figures._kit import cli, style


def data(d_ks: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512), n_samples: int = 50_000, seed: int = 0) -> dict:
    variance = [mhalib.dot_product_variance(d, n_samples, seed=seed + d) for d in d_ks]
    unscaled = [mhalib.max_attention_weight(d, scaled=False, seed=seed + d) for d in d_ks]
    scaled = [mhalib.max_attention_weight(d, scaled=True, seed=seed + d) for d in d_ks]
    return dict(d_k=list(d_ks), variance=variance, max_weight_unscaled=unscaled, max_weight_scaled=scaled,
                n_samples=n_samples, n_keys=16, std_at_512=variance[-1] ** 0.5 if d_ks[-1] == 512 else None)


def draw(d: dict):
    fig, (a, b) = style.new_figure(8.4, 3.4, ncols=2)
    c = style.colors()
    a.loglog(d["d_k"], d["d_k"], color=c["muted"], lw=1, ls="--", label="d_k (theory)")
    a.loglog(d["d_k"], d["variance"], "o", label="sample variance")
    a.set(xlabel="d_k", ylabel="Var(q · k)", title="Dot products spread like √d_k")
    a.legend()
    b.semilogx(d["d_k"], d["max_weight_unscaled"], "o-", label="softmax(q·k)")
    b.semilogx(d["d_k"], d["max_weight_scaled"], "s-", label="softmax(q·k / √d_k)")
    b.set(xlabel="d_k", ylabel="mean largest weight", ylim=(0, 1.05), title=f"Saturation over {d['n_keys']} keys")
    b.legend(loc="center right")
    for ax in (a, b):
        ax.grid(alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
