"""Accuracy of the tiny decoders at 1x, 2x, 4x and 8x their training length, one task: mean and range over seeds.

Each cell: the mean accuracy over the seeds and, in brackets, the lowest and highest seed
(written without the leading zero, rounded outward: down and up).
"not defined": a learned table has no rows there. The RoPE rows with a scaling are the same
models with their frequencies changed at inference time. Data in
figures/data/tiny_decoders.json (tools/train_tiny.py). Page: Does it extrapolate? An experiment.
"""
from __future__ import annotations

from figures._kit import cli, style
from figures._kit.export import markdown_table
from figures.experiments.extrapolation_accuracy import METHOD_LABELS, load, summarize, task_title

SHORT_SCALING = {"interpolation": "interpolation", "ntk": "NTK base"}


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'rows.*.max.*': 'not defined: a learned table has no rows past the training length (or a scaling at 1x)',
    'rows.*.mean.*': 'not defined: a learned table has no rows past the training length (or a scaling at 1x)',
    'rows.*.min.*': 'not defined: a learned table has no rows past the training length (or a scaling at 1x)',
    'rows.*.values.*': 'not defined: a learned table has no rows past the training length (or a scaling at 1x)',
    'rows.*.values.*.*': 'not defined: a learned table has no rows past the training length',
    'rows.*.scaling': 'no scaling: the method as trained',
}


def data(task: str = "repeat") -> dict:
    d = load()
    c = d["config"]
    if task not in c["tasks"]:
        raise ValueError(f"task must be one of {', '.join(map(repr, c['tasks']))}; got {task!r}")
    L0 = c["L_train"]
    lengths = [f * L0 for f in c["eval_factors"]]
    recs = d["extrapolation"]["records"]
    rows = []
    for m in c["methods"]:
        rows.append(dict(task=task, method=m, scaling=None, **summarize(recs, task, m, lengths)))
        if m == "rope":
            for name in ("interpolation", "ntk"):
                s = summarize(recs, task, m, lengths[1:], scaling=name)
                rows.append(dict(task=task, method=m, scaling=name, seeds=s["seeds"],
                                 **{k: [None] + s[k] for k in ("values", "mean", "min", "max")}))
    return dict(task=task, title=task_title(task, c["tasks"]), L_train=L0, lengths=lengths, factors=c["eval_factors"], rows=rows, n_seeds=len(c["seeds"]),
                task_config=c["tasks"])


def _cell(mean, lo, hi, *, same_as_plain: bool) -> str:
    if same_as_plain:
        return "(as plain)"
    if mean is None:
        return "not defined"
    return f"{style.share(mean, 2)} [{_short(lo, 'down')}–{_short(hi, 'up')}]"


def _short(x: float, direction: str) -> str:
    """An end of the seeds' range, rounded outward (``direction``: the lowest seed down, the
    highest up), so the range holds every seed: 0.9155 -> ".91" and 0.9211 -> ".93", where
    rounding to nearest wrote "[.92–.92]" for seeds that differ; 0.9986 up -> ".999", 1 stays
    "1.00", 0.0037 down -> ".0037"."""
    text = style.bounded(x, 2, direction)
    return text[1:] if text.startswith("0.") else text


def table(data: dict) -> str:
    header = [f"{data['title']}: method"] + [f"{L} ({f}×)" for L, f in zip(data["lengths"], data["factors"])]
    rows = []
    for r in data["rows"]:
        name = METHOD_LABELS[r["method"]] + (f" + {SHORT_SCALING[r['scaling']]}" if r["scaling"] else "")
        cells = [_cell(r["mean"][i], r["min"][i], r["max"][i], same_as_plain=r["scaling"] is not None and i == 0)
                 for i in range(len(data["lengths"]))]
        rows.append([name] + cells)
    return markdown_table(header, rows, "l" + "r" * len(data["lengths"]))


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
