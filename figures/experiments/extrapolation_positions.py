"""Where the tiny decoders break: accuracy by position at 8x the training length, per method.

At the longest evaluation length, the accuracy on the scored positions in each block of
L_train positions (the first block is the training range), mean over seeds with the
lowest-to-highest band. One panel per task; learned positions have no rows past the
training range and are left out. Data in figures/data/tiny_decoders.json (tools/train_tiny.py).
Page: Does it extrapolate? An experiment.
"""
from __future__ import annotations

import numpy as np

from mhalib.models.tiny_tasks import repeat_segment_range

from figures._kit import cli, style
from figures.experiments.extrapolation_accuracy import METHOD_LABELS, METHOD_MARKERS, load, method_colors, task_title


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'accuracy.repeat.*.*.*': 'no scored position in this block: the repeat task scores only its second copy',
}


def data() -> dict:
    d = load()
    c = d["config"]
    L0 = c["L_train"]
    longest = max(c["eval_factors"]) * L0
    out = {}
    for task in c["tasks"]:
        out[task] = {}
        for m in c["methods"]:
            rows = sorted((r for r in d["extrapolation"]["records"] if r["task"] == task and r["method"] == m
                           and r["length"] == longest and r["scaling"] is None), key=lambda r: r["seed"])
            if not rows[0]["defined"]:
                continue
            buckets = np.array([[np.nan if a is None else a for a in r["accuracy_buckets"]] for r in rows], dtype=float)
            scored = ~np.isnan(buckets[0])
            mean = [float(v) if ok else None for v, ok in zip(buckets.mean(0), scored)]
            lo = [float(v) if ok else None for v, ok in zip(buckets.min(0), scored)]
            hi = [float(v) if ok else None for v, ok in zip(buckets.max(0), scored)]
            out[task][m] = dict(mean=mean, min=lo, max=hi)
    starts = list(range(0, longest, L0))
    first_repeat = longest - repeat_segment_range(longest)[1]  # the repeat starts here at the earliest
    return dict(L_train=L0, length=longest, factor=longest // L0, bucket_starts=starts, repeat_first_scored=first_repeat,
                block1_first=L0, block1_last=2 * L0 - 1, tasks=list(c["tasks"]), accuracy=out,
                task_config=c["tasks"])


def draw(data: dict):
    tasks = data["tasks"]
    fig, axes = style.new_figure(5.6, 2.7 * len(tasks) + 0.8, nrows=len(tasks), sharex=True)
    axes = np.atleast_1d(axes)
    L0 = data["L_train"]
    centers = np.array(data["bucket_starts"]) + L0 / 2
    colors = method_colors()
    for ax, task in zip(axes, tasks):
        for m, s in data["accuracy"][task].items():
            mean = np.array([np.nan if v is None else v for v in s["mean"]], dtype=float)
            lo = np.array([np.nan if v is None else v for v in s["min"]], dtype=float)
            hi = np.array([np.nan if v is None else v for v in s["max"]], dtype=float)
            ok = ~np.isnan(mean)
            ax.fill_between(centers[ok], lo[ok], hi[ok], color=colors[m], alpha=0.2, lw=0)
            marker, ms, mfc = METHOD_MARKERS[m]
            ax.plot(centers[ok], mean[ok], marker + "-", color=colors[m], lw=2, ms=ms, mfc=mfc,
                    label=METHOD_LABELS[m])
        ax.axvspan(0, L0, color=style.colors()["muted"], alpha=0.15, lw=0)
        ax.text(L0 + 3, 0.95, "← trained range", ha="left", va="center", fontsize=11, color=style.colors()["muted"])
        ax.set(xlim=(0, data["length"]), ylim=(-0.03, 1.05), ylabel="accuracy in block",
               title=f"{task_title(task, data['task_config'])}, length {data['length']}")
        ax.set_xticks(range(0, data["length"] + 1, 2 * L0))
        ax.grid(alpha=0.4)
    axes[-1].set_xlabel(f"position (blocks of {L0})")
    handles, labels = axes[-1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=11, columnspacing=0.9,
               handlelength=1.6)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
