"""Accuracy of the tiny decoders at 1x, 2x, 4x and 8x their training length: mean and range over seeds.

Each cell: the mean accuracy over the seeds and, in brackets, the lowest and highest seed.
"not defined": a learned table has no rows there. The RoPE rows with a scaling are the same
models with their frequencies changed at inference time. Data in
figures/data/tiny_decoders.json (tools/train_tiny.py). Page: Does it extrapolate? An experiment.
"""
from __future__ import annotations

from figures._kit import cli
from figures._kit.export import markdown_table
from figures.experiments.extrapolation_accuracy import METHOD_LABELS, load, summarize, task_title
from figures.experiments.extrapolation_rope_scaling import LABELS as SCALING_LABELS


def data() -> dict:
    d = load()
    c = d["config"]
    L0 = c["L_train"]
    lengths = [f * L0 for f in c["eval_factors"]]
    recs = d["extrapolation"]["records"]
    rows = []
    for task in c["tasks"]:
        for m in c["methods"]:
            rows.append(dict(task=task, method=m, scaling=None, **summarize(recs, task, m, lengths)))
            if m == "rope":
                for name in ("interpolation", "ntk"):
                    s = summarize(recs, task, m, lengths[1:], scaling=name)
                    rows.append(dict(task=task, method=m, scaling=name, seeds=s["seeds"],
                                     **{k: [None] + s[k] for k in ("values", "mean", "min", "max")}))
    return dict(L_train=L0, lengths=lengths, factors=c["eval_factors"], rows=rows, n_seeds=len(c["seeds"]),
                task_config=c["tasks"])


def _cell(mean, lo, hi, *, same_as_plain: bool) -> str:
    if same_as_plain:
        return "(as plain)"
    if mean is None:
        return "not defined"
    return f"{mean:.2f} [{lo:.2f}–{hi:.2f}]"


def table(data: dict) -> str:
    header = ["task", "method"] + [f"{L} ({f}×)" for L, f in zip(data["lengths"], data["factors"])]
    rows = []
    for r in data["rows"]:
        name = METHOD_LABELS[r["method"]] + (f" + {SCALING_LABELS[r['scaling']]}" if r["scaling"] else "")
        cells = [_cell(r["mean"][i], r["min"][i], r["max"][i], same_as_plain=r["scaling"] is not None and i == 0)
                 for i in range(len(data["lengths"]))]
        rows.append([task_title(r["task"], data["task_config"]), name] + cells)
    return markdown_table(header, rows, "ll" + "r" * len(data["lengths"]))


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
