"""Temperature sweep: mean row entropy of each head's attention against τ, for every preset.

Low tau sharpens each row towards one key (entropy near 0); high tau flattens it towards
uniform (entropy ln 4 for 4 keys). Page: heads in action.
"""
from __future__ import annotations

import math
from typing import Annotated

import numpy as np

from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range

HEADS = (("single", "single head"), ("head1", "head 1"), ("head2", "head 2"))


def _entropy(w) -> float:
    w = np.asarray(w)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, -w * np.log(w), 0.0)
    return float(terms.sum(axis=-1).mean())


def data(tau_min: Annotated[float, Range(0.01, 100)] = 0.1, tau_max: Annotated[float, Range(0.01, 100)] = 5.0,
         n_taus: Annotated[int, Range(2, 2000)] = 40, seed: Annotated[int, Range(0, None)] = 0) -> dict:
    if not tau_min < tau_max:
        raise ValueError(f"tau_min must be below tau_max, got tau_min = {style.exact(tau_min)} and tau_max = {style.exact(tau_max)}")
    taus = np.geomspace(tau_min, tau_max, n_taus)

    curves = {p: {h: [_entropy(examples.heads_in_action(p, t, seed=seed)[h]) for t in taus] for h, _ in HEADS}
              for p in examples.HEADS_PRESETS}
    default = {p: {h: _entropy(examples.heads_in_action(p, math.sqrt(2), seed=seed)[h]) for h, _ in HEADS}
               for p in examples.HEADS_PRESETS}
    return dict(tau=taus, entropy=curves, at_sqrt2=default, uniform=math.log(4), seed=seed)


def draw(data: dict):
    # 2 x 2 panels in 6 in, 11 pt throughout: one shared axis label per direction and one
    # legend above the panels.
    presets = list(data["entropy"])
    fig, axes = style.new_figure(5.85, 5.2, nrows=2, ncols=2, sharex=True, sharey=True)
    for ax, preset in zip(axes.flat, presets):
        for h, label in HEADS:
            ax.semilogx(data["tau"], data["entropy"][preset][h], label=label, lw=2)
        ax.axhline(data["uniform"], color=style.colors()["muted"], ls=":", lw=1)
        ax.axvline(math.sqrt(2), color=style.colors()["accent"], ls="--", lw=1)
        ax.set_title(preset, fontsize=11)
        ax.grid(alpha=0.4)
    fig.supxlabel("temperature τ (dashed: √2)", fontsize=11)
    fig.supylabel("mean row entropy (nats)", fontsize=11)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=3, fontsize=11)
    style.plain_log_ticks(axes[1][0], "x")
    style.plain_log_ticks(axes[1][1], "x")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
