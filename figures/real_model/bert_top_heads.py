"""The top head of each type in all-MiniLM-L6-v2, drawn full size with its tokens for one sentence.

For previous token, next token, self, to [CLS], to [SEP] and to punctuation, the head with
the highest score averaged over the built-in sentences. Page: what real heads learn.
"""
from __future__ import annotations

from mhalib import examples
from mhalib.models import bert
from mhalib.models.head_analysis import HEAD_TYPES
from figures._kit import cli, style
from figures.real_model.bert_head_scores import data as _scores


def data(sentence: str = examples.REAL_SENTENCES[3]) -> dict:
    r = bert.encode(sentence)
    best = _scores()["best"]
    panels = []
    for key in HEAD_TYPES[:-1]:
        b = best[key]
        panels.append(dict(type=key, layer=b["layer"], head=b["head"], score=b["value"],
                           weights=r["attentions"][b["layer"] - 1, b["head"] - 1]))
    return dict(sentence=sentence, tokens=r["tokens"], panels=panels)


def draw(data: dict):
    fig, axes = style.new_figure(12.0, 8.4, nrows=2, ncols=3)
    for ax, p in zip(axes.flat, data["panels"]):
        style.heatmap(p["weights"], data["tokens"], data["tokens"], ax=ax, vmin=0, vmax=1,
                       title=f"{p['type']}: layer {p['layer']}, head {p['head']} (score {p['score']:.2f})")
        ax.tick_params(axis="x", labelrotation=90, labelsize=8)
        ax.tick_params(axis="y", labelsize=8)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
