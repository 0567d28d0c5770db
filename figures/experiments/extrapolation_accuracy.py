"""Tiny decoders trained at one length, tested at 1x to 8x it: accuracy for each positional method.

One panel per task (repeat: the induction lookup; kback: copy the token k back), one line
per method: the mean over the seeds, the band from the lowest to the highest seed. A learned
table has no rows past the training length, so its models have no result there ("not
defined"), which is drawn as a gap with a note, never as zero. Trained and evaluated by
tools/train_tiny.py on this site's CPU; data in figures/data/tiny_decoders.json. Page: Does
it extrapolate? An experiment.
"""
from __future__ import annotations

import json

import numpy as np

import mhalib
from mhalib.models.tiny_tasks import repeat_segment_range
from figures._kit import cli, style
from figures._kit.contract import data_file

SOURCE = data_file("tiny_decoders.json")
METHOD_LABELS = {"none": "NoPE (none)", "sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE",
                 "alibi": "ALiBi"}
#: marker, size, face colour ("none": hollow, so a point under another stays visible)
METHOD_MARKERS = {"none": ("o", 5, None), "sinusoidal": ("s", 5, None), "learned": ("D", 9, "none"),
                  "rope": ("^", 6, None), "alibi": ("v", 6, None)}
#: each method's place in the theme's line palette (style.palette(): 3:1 or more on the page)
METHOD_COLOR_INDEX = {m: i for i, m in enumerate(("none", "sinusoidal", "learned", "rope", "alibi"))}


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'accuracy.*.learned.*.*': 'not defined: a learned table has no rows past the training length',
    'accuracy.*.learned.values.*.*': 'not defined: a learned table has no rows past the training length',
    'loss.*.learned.*.*': 'not defined: a learned table has no rows past the training length',
    'loss.*.learned.values.*.*': 'not defined: a learned table has no rows past the training length',
}


def method_colors() -> dict:
    """Each method's line colour in the current theme."""
    palette = style.palette()
    return {m: palette[i] for m, i in METHOD_COLOR_INDEX.items()}


def task_title(task: str, task_config: dict) -> str:
    return f"kback (k = {task_config['kback']['k']})" if task == "kback" else task


def load() -> dict:
    return json.loads(SOURCE.read_text())


def summarize(records: list, task: str, method: str, lengths: list, scaling=None, key: str = "accuracy") -> dict:
    """Per length: the seeds' values, their mean, min and max (all None where not defined)."""
    per_length = {L: [] for L in lengths}
    for r in records:
        if r["task"] == task and r["method"] == method and r["scaling"] == scaling and r["length"] in per_length:
            per_length[r["length"]].append((r["seed"], r[key]))
    out = dict(seeds=[], values=[], mean=[], min=[], max=[])
    for L in lengths:
        pairs = sorted(per_length[L])
        vals = [v for _, v in pairs]
        out["seeds"] = [s for s, _ in pairs]
        out["values"].append(vals)
        defined = [v for v in vals if v is not None]
        if defined and len(defined) != len(vals):
            raise ValueError(f"{task}/{method} at {L}: some seeds have a result and some do not")
        out["mean"].append(float(np.mean(defined)) if defined else None)
        out["min"].append(float(min(defined)) if defined else None)
        out["max"].append(float(max(defined)) if defined else None)
    return out


def data() -> dict:
    d = load()
    c = d["config"]
    L0 = c["L_train"]
    lengths = [f * L0 for f in c["eval_factors"]]
    tasks = list(c["tasks"])
    acc = {t: {m: summarize(d["extrapolation"]["records"], t, m, lengths) for m in c["methods"]} for t in tasks}
    loss = {t: {m: summarize(d["extrapolation"]["records"], t, m, lengths, key="loss") for m in c["methods"]}
            for t in tasks}
    train = d["extrapolation"]["training"]
    train_s = [r["train_seconds"] for r in train]
    # The training loss each model ended at: ~0 where a method learned the task, well above where it did not.
    final_loss = {t: {m: dict(values=[r["final_loss"] for r in sorted(train, key=lambda r: r["seed"])
                                      if r["task"] == t and r["method"] == m]) for m in c["methods"]} for t in tasks}
    for t in tasks:
        for m in c["methods"]:
            v = final_loss[t][m]["values"]
            final_loss[t][m].update(min=float(min(v)), max=float(max(v)))
    learned_it = [m for m in c["methods"] if m in ("sinusoidal", "learned", "rope")]
    return dict(L_train=L0, lengths=lengths, factors=c["eval_factors"], tasks=tasks, methods=c["methods"],
                seeds=c["seeds"], n_seeds=len(c["seeds"]), accuracy=acc, loss=loss,
                task_config=c["tasks"], model=c["model"], train=c["train"], eval=c["eval"],
                final_loss=final_loss,
                # the highest final training loss of the sinusoidal, learned and RoPE models, per task
                final_loss_converged_max={t: max(final_loss[t][m]["max"] for m in learned_it) for t in tasks},
                n_models=len(train), wall_time_s=d["wall_time_s"], wall_time_min=d["wall_time_s"] / 60,
                cpu_time_min=d["cpu_time_s"] / 60, jobs=d["machine"]["jobs"],
                # on an otherwise idle machine the workers share the CPU time out between them
                idle_estimate_min=d["cpu_time_s"] / min(d["machine"]["jobs"], d["machine"]["cores"]) / 60,
                load_at_start=d["machine"]["load_average_at_start"][0],
                machine=d["machine"], date=d["date"], median_train_s=float(np.median(train_s)),
                chance={t: 1.0 / c["tasks"][t]["vocab"] for t in tasks},
                repeat_segment_train=list(repeat_segment_range(L0)),
                repeat_segment_longest=list(repeat_segment_range(lengths[-1])),
                alibi_slopes=mhalib.alibi_slopes(c["model"]["n_heads"]),
                alibi_slopes_inverse=[int(round(1 / m)) for m in mhalib.alibi_slopes(c["model"]["n_heads"])],
                alibi_bias_at_longest_lookup=-mhalib.alibi_slopes(c["model"]["n_heads"])
                * repeat_segment_range(lengths[-1])[1],
                d_head=c["model"]["d_model"] // c["model"]["n_heads"], L_train_last=L0 - 1,
                longest=lengths[-1], longest_factor=c["eval_factors"][-1],
                # sinusoidal pairs whose angle p * omega_i stayed below half a turn for every trained position
                sinusoidal_pairs=c["model"]["d_model"] // 2,
                sinusoidal_pairs_within_half_turn=int(((L0 - 1) * mhalib.sinusoidal_frequencies(c["model"]["d_model"])
                                                       < np.pi).sum()))


def draw(data: dict):
    tasks = data["tasks"]
    fig, axes = style.new_figure(5.6, 2.9 * len(tasks) + 0.9, nrows=len(tasks), sharex=True)
    axes = np.atleast_1d(axes)
    x = np.array(data["lengths"])
    colors = method_colors()
    for ax, task in zip(axes, tasks):
        for m in data["methods"]:
            s = data["accuracy"][task][m]
            ok = np.array([v is not None for v in s["mean"]])
            mean = np.array([np.nan if v is None else v for v in s["mean"]], dtype=float)
            lo = np.array([np.nan if v is None else v for v in s["min"]], dtype=float)
            hi = np.array([np.nan if v is None else v for v in s["max"]], dtype=float)
            color = colors[m]
            ax.fill_between(x, lo, hi, color=color, alpha=0.2, lw=0)
            label = METHOD_LABELS[m]
            if not ok.all():  # learned: no rows past the table, so no result there (not zero)
                label += f" (not defined past length {data['L_train']})"  # (positions 0 .. L-1: lengths up to L)
            marker, ms, mfc = METHOD_MARKERS[m]
            ax.plot(x[ok], mean[ok], marker + "-", color=color, lw=2, ms=ms, mfc=mfc, mew=1.8, label=label)
        ax.axvline(data["L_train"], color=style.colors()["muted"], ls=":", lw=1.2)
        ax.set_xscale("log", base=2)
        ax.set_xticks(x, [f"{L}\n({f}×)" for L, f in zip(x, data["factors"])])
        ax.minorticks_off()
        ax.set(ylim=(-0.03, 1.03), ylabel="accuracy", title=task_title(task, data["task_config"]))
        ax.grid(alpha=0.4)
    axes[-1].set_xlabel("evaluation length (× training length)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=11, columnspacing=1.2,
               handlelength=2.0)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
