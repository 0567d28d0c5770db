"""Attention viewer for all-MiniLM-L6-v2: one head as lines between query and key tokens, every head labelled by type.

The static figure shows one head of the built-in sentence chosen by --sentence (counted
from 1) as two columns of tokens, queries on the left and keys on the right, each line
as opaque as its attention weight; by default the strongest previous-token head. The
interactive viewer (docs/javascripts/bert_viewer.js, widget "bert") holds every head of
every built-in sentence, computed by mhalib's own forward pass, with each head's type
score from mhalib.models.head_analysis. Page: look inside a real model.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

from mhalib import examples
from mhalib.models import bert
from mhalib.models.head_analysis import HEAD_TYPES
from figures._kit import cli, style
from figures._kit.contract import Range

#: Weights are stored as the viewer shows them: q = round(1000 w), an integer 0..1000,
#: written as two characters of this alphabet (base64url digits, q = 64 a + b); except a
#: weight above 0 that rounds to 0 (TINY, shown "<0.0005") and one below 1 that rounds to
#: 1000 (NEARLY_ALL, shown ">0.9995"): a weight that is not 0 never reads 0.000, nor one that
#: is not all of it 1.000.
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
SCALE = 1000
TINY, NEARLY_ALL = 1001, 1002
#: The kinds of key a head can favour (every head-type score but entropy); a head whose
#: favourite kind takes at least LABEL_THRESHOLD of its weight on average is labelled by it,
#: any other head "broad", with its normalised entropy as the number.
KINDS = HEAD_TYPES[:-1]
LABEL_THRESHOLD = 0.5
SHORT = {"previous token": "prev", "next token": "next", "self": "self", "to [CLS]": "[CLS]", "to [SEP]": "[SEP]",
         "to punctuation": "punct", "entropy": "spread", "broad": "broad"}


def encode_weights(attentions) -> str:
    """``(L, H, T, T)`` weights -> the string of per-mille codes, in the order layer, head, query, key
    (:data:`TINY` and :data:`NEARLY_ALL` where the rounding would read 0 or 1 and the weight is not)."""
    w = np.asarray(attentions, dtype=np.float64).ravel()
    q = np.rint(w * SCALE).astype(np.int64)  # float32 * 1000 is exact in float64
    if q.min() < 0 or q.max() > SCALE:
        raise ValueError(f"attentions must be weights in [0, 1], got values from {q.min() / SCALE} to {q.max() / SCALE}")
    q[(q == 0) & (w > 0)] = TINY
    q[(q == SCALE) & (w < 1)] = NEARLY_ALL
    alphabet = np.array(list(ALPHABET))
    pairs = np.stack([alphabet[q // 64], alphabet[q % 64]], axis=1)  # (n,) -> (n, 2)
    return "".join(pairs.ravel())


def decode_weights(codes: str, layers: int, heads: int, tokens: int) -> np.ndarray:
    """The inverse of :func:`encode_weights`: its codes, shape ``(L, H, T, T)``."""
    if len(codes) != 2 * layers * heads * tokens * tokens:
        raise ValueError(f"codes must hold 2 characters per weight, {2 * layers * heads * tokens ** 2} for "
                         f"({layers}, {heads}, {tokens}, {tokens}); got {len(codes)}")
    digits = np.array([ALPHABET.index(c) for c in codes]).reshape(-1, 2)  # (2n,) -> (n, 2)
    return (digits[:, 0] * 64 + digits[:, 1]).reshape(layers, heads, tokens, tokens)


def _best(v: np.ndarray) -> dict:
    k = int(np.nanargmax(v))
    return dict(value=float(v.flat[k]), layer=k // v.shape[1] + 1, head=k % v.shape[1] + 1)


#: The wide CSV's row and column labels: the lists beside each grid (None: positions).
GRID_LABELS = {"zoom": ("tokens", "tokens")}


def data(sentence: Annotated[int, Range(1, 8)] = 2, layer: Annotated[int | None, Range(1, 6)] = None,
         head: Annotated[int | None, Range(1, 12)] = None) -> dict:
    """Every head of every built-in sentence, and the head-type scores of the real-heads page.

    ``sentence`` (1-8), ``layer`` (1-6) and ``head`` (1-12) count from 1 and pick what the
    static figure shows and the viewer opens on; without ``layer`` and ``head``, the
    strongest previous-token head.
    """
    texts = examples.REAL_SENTENCES
    if not 1 <= sentence <= len(texts):
        raise ValueError(f"sentence counts the built-in sentences from 1 to {len(texts)}, got {sentence}")
    runs = [bert.encode(t) for t in texts]
    L, H = np.shape(runs[0]["attentions"])[:2]
    for name, value, n in (("layer", layer, L), ("head", head, H)):
        if value is not None and not 1 <= value <= n:
            raise ValueError(f"{name} counts from 1 to {n}, got {value}")
    scores = {k: np.asarray(v, dtype=float) for k, v in bert.corpus_scores(texts).items()}  # each (L, H)
    best = {k: _best(v) for k, v in scores.items()}
    if layer is None or head is None:  # the strongest previous-token head (within the layer or head given)
        allowed = np.full((L, H), -np.inf)
        rows = slice(None) if layer is None else slice(layer - 1, layer)
        cols = slice(None) if head is None else slice(head - 1, head)
        allowed[rows, cols] = scores["previous token"][rows, cols]
        layer, head = (int(v) + 1 for v in np.unravel_index(np.argmax(allowed), allowed.shape))

    label, label_value = _labels(scores)
    counts = {k: int((label == k).sum()) for k in (*KINDS, "broad")}

    from mhalib.models.head_analysis import head_scores

    run = runs[sentence - 1]
    sentence_scores = [head_scores(r["attentions"], r["tokens"]) for r in runs]  # each type (L, H)
    return dict(
        sentences=[dict(text=r["text"], tokens=list(r["tokens"]), codes=encode_weights(r["attentions"])) for r in runs],
        n_sentences=len(texts), layers=int(L), heads=int(H), n_heads=int(L * H), scale=SCALE, alphabet=ALPHABET,
        types=list(HEAD_TYPES), short=SHORT, threshold=LABEL_THRESHOLD,
        scores=scores, best=best,
        sentence_scores=sentence_scores,
        label=label.tolist(), label_value=label_value, counts=counts,
        sentence_labels=[dict(label=lab.tolist(), label_value=value) for lab, value in map(_labels, sentence_scores)],
        layer_means={k: np.nanmean(v, axis=1) for k, v in scores.items()},  # each (L,)
        start=dict(sentence=sentence, layer=layer, head=head),
        text=run["text"], tokens=list(run["tokens"]), zoom=run["attentions"][layer - 1, head - 1],
        zoom_label=str(label[layer - 1, head - 1]), zoom_value=float(label_value[layer - 1, head - 1]),
    )


def _labels(scores: dict) -> tuple[np.ndarray, np.ndarray]:
    """Each head's label by ``scores`` (each kind ``(L, H)``): the kind of key with the highest
    score (the first in KINDS on a tie) where that reaches LABEL_THRESHOLD, with that score, else
    "broad" with its spread (the normalised entropy). A missing score (NaN: no such key in a
    sentence) never wins."""
    kinds = np.stack([scores[k] for k in KINDS])  # 6 x (L, H) -> (6, L, H)
    kinds = np.where(np.isnan(kinds), -np.inf, kinds)
    top, best = kinds.argmax(axis=0), kinds.max(axis=0)  # (L, H) each
    strong = best >= LABEL_THRESHOLD
    return np.where(strong, np.array(KINDS)[top], "broad"), np.where(strong, best, scores["entropy"])


#: The interactive version of this figure (docs/javascripts/bert_viewer.js, widget "bert").
EXPLORER = "bert"


def as_shown(values) -> list:
    """Scores as the viewer shows them, to 2 decimals rounded as Python rounds them (the page's
    and the figure's text; rounded to 3 decimals first, the viewer's ``toFixed(2)`` rounded
    0.50477 up to 0.51), more where 2 would read a score that is not 0 or 1 as 0 or 1 (0.9998
    was "1.00"). A missing score (NaN) is null."""
    return [[None if np.isnan(v) else float(style.fixed(v, 2)) for v in row] for row in np.asarray(values, dtype=float)]


def strong_flags(scores: dict, threshold: float) -> dict:
    """Per kind of key (entropy aside), whether each head's unrounded score reaches
    ``threshold``: one character per head, "1" or "0", layer by layer (a missing score is "0").
    The viewer bolds a head by these, not by its score rounded to two decimals (0.4965 shows as
    0.50 but is not half of the weight)."""
    return {k: "".join("1" if v >= threshold else "0" for v in np.asarray(a, dtype=float).ravel())
            for k, a in scores.items() if k != "entropy"}


def explorer(data: dict) -> dict:
    """The viewer's payload: tokens and weight codes per sentence, scores to 2 decimals, the
    labels of the averages and of each sentence (made here from the scores before rounding: a
    label made in the browser from rounded scores could differ)."""
    return dict(
        layers=data["layers"], heads=data["heads"], scale=data["scale"], alphabet=data["alphabet"],
        types=data["types"], short=data["short"], threshold=data["threshold"],
        sentences=[dict(text=s["text"], tokens=s["tokens"], codes=s["codes"]) for s in data["sentences"]],
        scores={k: as_shown(v) for k, v in data["scores"].items()},
        strong=strong_flags(data["scores"], data["threshold"]),
        sentence_scores=[{k: as_shown(v) for k, v in s.items()} for s in data["sentence_scores"]],
        label=data["label"], label_value=as_shown(data["label_value"]),
        sentence_labels=[dict(label=sl["label"], label_value=as_shown(sl["label_value"]),
                              strong=strong_flags(sc, data["threshold"]))
                         for sl, sc in zip(data["sentence_labels"], data["sentence_scores"])],
        start=data["start"],
    )


def draw(data: dict):
    A = np.asarray(data["zoom"], dtype=float)
    tokens = data["tokens"]
    T = len(tokens)
    c = style.colors()
    line = style.OKABE_ITO[4] if c == style.THEMES["dark"] else style.OKABE_ITO[0]  # sky blue reads on dark
    fig, ax = style.new_figure(5.2, 0.3 * T + 1.3)
    x0, x1 = 0.0, 1.0
    for i in range(T):
        for j in range(T):
            if A[i, j] >= 0.01:
                ax.plot([x0, x1], [i, j], color=line, alpha=float(min(1.0, A[i, j])), lw=0.6 + 2.4 * A[i, j],
                        solid_capstyle="round")
    for i, t in enumerate(tokens):
        ax.text(x0 - 0.04, i, t, ha="right", va="center", fontsize=11, color=c["fg"])
        ax.text(x1 + 0.04, i, t, ha="left", va="center", fontsize=11, color=c["fg"])
    ax.text(x0 - 0.04, -1.2, "query", ha="right", va="center", fontsize=11, color=c["muted"], style="italic")
    ax.text(x1 + 0.04, -1.2, "key", ha="left", va="center", fontsize=11, color=c["muted"], style="italic")
    ax.set_xlim(-0.75, 1.75)
    ax.set_ylim(T - 0.5, -1.7)
    ax.axis("off")
    s = data["start"]
    kind = data["zoom_label"] if data["zoom_label"] == "broad" else data["zoom_label"].replace("to ", "")
    ax.set_title(f"layer {s['layer']}, head {s['head']}: {kind}, score {style.fixed(data['zoom_value'], 2)}\n"
                 f"line opacity = attention weight", fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
