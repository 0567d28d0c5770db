"""The top head of each type in all-MiniLM-L6-v2, drawn full size with its tokens for one sentence.

For previous token, next token, self, to [CLS], to [SEP] and to punctuation, the head with
the highest score averaged over the built-in sentences; its score is in the panel's title.
Page: what real heads learn.
"""
from __future__ import annotations

from mhalib import examples
from mhalib.models import bert
from mhalib.models.head_analysis import HEAD_TYPES
from figures._kit import cli, style
from figures.real_model.bert_head_scores import data as _scores

#: A phone gets two maps a row instead of three (style.narrow()).
NARROW = True


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
    """Three maps a row on a page, two on a phone (``style.narrow()``). Every map has the same
    tokens, so only the left column names the queries and only the bottom row the keys."""
    ncols = 2 if style.narrow() else 3
    nrows = -(-len(data["panels"]) // ncols)
    side = 2.4 if ncols == 2 else 2.5  # inches a map: about 0.17 in a token for 14 tokens
    fig, axes = style.new_figure(ncols * side + 1.0, nrows * (side + 0.55) + 0.9, nrows=nrows, ncols=ncols,
                                 sharex=True, sharey=True)
    tokens = data["tokens"]
    for ax, p in zip(axes.flat, data["panels"]):
        style.heatmap(p["weights"], tokens, tokens, ax=ax, vmin=0, vmax=1)
        ax.set_title(f"{p['type']} ({style.fixed(p['score'], 2)})\nlayer {p['layer']}, head {p['head']}", fontsize=11)
        ax.tick_params(axis="x", labelrotation=90)
    for ax in axes.flat[len(data["panels"]):]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("key")
    for ax in axes[:, 0]:
        ax.set_ylabel("query")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
