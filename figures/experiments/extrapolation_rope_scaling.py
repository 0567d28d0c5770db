"""RoPE past its training length without retraining: plain, position interpolation and NTK-aware scaling.

The RoPE decoders of the experiment, evaluated at 2x to 8x the training length with their
frequencies changed at inference time (``mhalib.rope_frequencies(..., scaling=, factor=L/L_train)``):
position interpolation divides every frequency by the factor, NTK-aware scaling raises the
base to base * factor^(d/(d-2)). Mean over seeds with the lowest-to-highest band; at 1x
all three are the same model. Data in figures/data/tiny_decoders.json (tools/train_tiny.py).
Page: Does it extrapolate? An experiment.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli, style
from figures.experiments.extrapolation_accuracy import load, summarize, task_title

SCALINGS = {"none": None, "interpolation": "interpolation", "ntk": "ntk"}
LABELS = {"none": "plain RoPE", "interpolation": "position interpolation", "ntk": "NTK-aware base"}
STYLES = {"none": ("o-", 3), "interpolation": ("s--", 5), "ntk": ("^:", 0)}  # line, colour (index into style.palette())


def data() -> dict:
    d = load()
    c = d["config"]
    L0 = c["L_train"]
    lengths = [f * L0 for f in c["eval_factors"]]
    recs = d["extrapolation"]["records"]
    out = {}
    for task in c["tasks"]:
        plain = summarize(recs, task, "rope", lengths)
        out[task] = {"none": plain}
        for name in ("interpolation", "ntk"):
            s = summarize(recs, task, "rope", lengths[1:], scaling=name)
            out[task][name] = {k: [plain[k][0]] + s[k] if k != "seeds" else s[k] for k, v in s.items()}
    d_head = c["model"]["d_model"] // c["model"]["n_heads"]
    omega = mhalib.rope_frequencies(d_head)  # (d/2,) the models' base, 10000
    longest = lengths[-1]
    trained_angle = (L0 - 1) * omega  # the largest angle each plane turned through in training
    k = c["tasks"]["kback"]["k"]
    return dict(k=k, pi_angle_k_2x=float(k * omega[0] / 2), pi_positions_k_2x=k / 2,
                omega=omega, wavelength=2 * np.pi / omega, trained_max_angle=trained_angle,
                longest_max_angle=(longest - 1) * omega, n_planes=len(omega),
                planes_within_one_turn=int((trained_angle < 2 * np.pi).sum()),
                planes_within_half_turn=int((trained_angle < np.pi).sum()),
                L_train=L0, lengths=lengths, factors=c["eval_factors"], tasks=list(c["tasks"]), accuracy=out,
                task_config=c["tasks"], d_head=d_head, ntk_exponent=d_head / (d_head - 2),
                ntk_base_8x=10000.0 * max(c["eval_factors"]) ** (d_head / (d_head - 2)))


def draw(data: dict):
    tasks = data["tasks"]
    fig, axes = style.new_figure(5.6, 2.8 * len(tasks) + 0.8, nrows=len(tasks), sharex=True)
    axes = np.atleast_1d(axes)
    x = np.array(data["lengths"])
    for ax, task in zip(axes, tasks):
        for name, s in data["accuracy"][task].items():
            fmt, ci = STYLES[name]
            color = style.palette()[ci]
            ax.fill_between(x, s["min"], s["max"], color=color, alpha=0.18, lw=0)
            ax.plot(x, s["mean"], fmt, color=color, lw=2, ms=5, label=LABELS[name])
        ax.axvline(data["L_train"], color=style.colors()["muted"], ls=":", lw=1.2)
        ax.set_xscale("log", base=2)
        ax.set_xticks(x, [f"{L}\n({f}×)" for L, f in zip(x, data["factors"])])
        ax.minorticks_off()
        ax.set(ylim=(-0.03, 1.03), ylabel="accuracy", title=f"RoPE, {task_title(task, data['task_config'])}")
        ax.grid(alpha=0.4)
    axes[-1].set_xlabel("evaluation length (× training length)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=11, columnspacing=1.2,
               handlelength=2.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
