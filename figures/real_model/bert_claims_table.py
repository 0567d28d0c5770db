"""Claims of the source material about what heads learn, next to what all-MiniLM-L6-v2 shows.

Each verdict is computed from the head scores and the ablation with the thresholds stated
in the table: "confirmed" when a head clearly does it (score >= 0.5), "partly" for weaker
or mixed evidence, "not seen" otherwise, and "not measured" for claims these scores
cannot test. Page: what real heads learn.
"""
from __future__ import annotations

import numpy as np

from figures._kit import cli, style
from figures._kit.export import markdown_table
from figures.real_model.bert_head_ablation import data as _ablation
from figures.real_model.bert_head_scores import data as _scores


def _verdict(value: float, strong: float = 0.5, weak: float = 0.3) -> str:
    return "confirmed" if value >= strong else ("partly" if value >= weak else "not seen")


def data() -> dict:
    s, a = _scores(), _ablation()
    best, lm = s["best"], s["layer_means"]
    positional = np.asarray(lm["previous token"]) + np.asarray(lm["next token"])
    early, late = float(positional[:2].mean()), float(positional[-2:].mean())
    at_half = next(r["drift"] for r in a["cumulative"] if r["fraction"] == 0.5)
    rows = [
        dict(claim="Some heads attend to the previous token",
             evidence=f"layer {best['previous token']['layer']}, head {best['previous token']['head']} puts "
                      f"{style.share(best['previous token']['value'], 2)} of its weight there",
             verdict=_verdict(best["previous token"]["value"])),
        dict(claim="Some heads attend to the next token",
             evidence=f"layer {best['next token']['layer']}, head {best['next token']['head']}: {style.share(best['next token']['value'], 2)}",
             verdict=_verdict(best["next token"]["value"])),
        dict(claim="Delimiter heads attend to [CLS], [SEP] and punctuation",
             # "up to": the largest score rounded up (to nearest, 0.86491 read "up to 0.86")
             evidence=f"to [CLS] up to {style.bounded(best['to [CLS]']['value'], 2, 'up')}; "
                      f"to [SEP] up to {style.bounded(best['to [SEP]']['value'], 2, 'up')}; "
                      f"to punctuation up to {style.bounded(best['to punctuation']['value'], 2, 'up')}",
             verdict="partly" if best["to [CLS]"]["value"] >= 0.5 and best["to [SEP]"]["value"] < 0.5 else
             _verdict(min(best["to [CLS]"]["value"], best["to [SEP]"]["value"]))),
        dict(claim="Global heads spread attention uniformly",
             evidence=f"highest mean entropy {style.share(best['entropy']['value'], 2)} of the uniform maximum "
                      f"(layer {best['entropy']['layer']}, head {best['entropy']['head']})",
             verdict=_verdict(best["entropy"]["value"], 0.9, 0.8)),
        dict(claim="Early layers are positional, deep layers semantic",
             evidence=f"previous + next score averages {style.fixed(early, 2)} in layers 1–2 and {style.fixed(late, 2)} in layers 5–6; "
                      "semantic roles are not measured by these scores",
             verdict="partly" if early >= 1.5 * late else "not seen"),
        dict(claim="A few heads do the heavy lifting",
             evidence=f"the top 10% of heads carry {style.percent(a['top10_share'])} of the total single-head ablation effect",
             verdict=_verdict(a["top10_share"], 0.3, 0.2)),
        dict(claim="Half the heads can be removed with little loss",
             evidence=f"removing the least important half moves the sentence embedding by 1 − cos ≈ {style.fixed(at_half, 3)}; "
                      "task accuracy is not measured here",
             verdict="not measured"),
        dict(claim="Coreference, rare-word and induction heads",
             evidence="these need labelled data or repeated sequences; not measured by these scores",
             verdict="not measured"),
    ]
    return dict(rows=rows, early_positional=early, late_positional=late, drift_at_half=at_half)


def table(data: dict) -> str:
    rows = [[r["claim"], r["evidence"], f"**{r['verdict']}**"] for r in data["rows"]]
    return markdown_table(["common claim", "what this model shows", "verdict"], rows, "lll")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
