"""Attention viewer for the tiny decoders: one head of a causal model as lines between query and key tokens.

The stored tiny decoders (tools/train_tiny.py): one per positional method on the kback task
("copy the token k back"), and the induction model on the repeat task at the checkpoint
before its loss drops and at the one after. Each is run by mhalib's numpy forward pass
(mhalib.models.tiny_numpy.forward, from the stored weights) on a few short sequences from
its task's generator (mhalib.models.tiny_tasks.make_batch, fixed seeds). Every head is
scored with mhalib.models.head_analysis (previous-token score; the offset-k score on kback,
the induction score on repeat), averaged over a fixed batch of the task's sequences. The
static figure shows one head of one sequence, by default the strongest induction head after
the drop. The interactive viewer (docs/javascripts/bert_viewer.js, widget "tiny") holds
every head of every model on every built-in sequence; a decoder is causal, so a query's
weights on later keys are exactly 0 and are stored as nothing. Page: look inside a real model.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from mhalib.models import head_analysis as ha
from mhalib.models.tiny_numpy import TinyConfig, forward, load_weights
from mhalib.models.tiny_tasks import make_batch
from figures._kit import cli, style
from figures._kit.contract import Range, data_file
from figures.experiments.extrapolation_accuracy import METHOD_LABELS, load
from figures.real_model.bert_viewer import ALPHABET, SCALE, as_shown, encode_weights, strong_flags

WEIGHTS = data_file("tiny_decoders_weights.npz")
#: Length of the built-in sequences: short enough that 20 rows of tokens fit a phone's screen.
LENGTH = 20
#: Seeds of the built-in sequences of each task (make_batch's rng).
SEQUENCE_SEEDS = (1, 2, 3)
#: The batch that the heads' scores are averaged over: its size and seed.
N_EVAL, EVAL_SEED = 64, 100
#: A head scoring at least this is labelled strong (bold) in the overview.
LABEL_THRESHOLD = 0.5
#: The stored models, in the order the viewer lists them.
MODELS = ("kback_none", "kback_sinusoidal", "kback_learned", "kback_rope", "kback_alibi",
          "induction_before", "induction_after")
#: How far back the ALiBi decay is followed (keys 1 .. DECAY_STEPS back).
DECAY_STEPS = 4


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'tasks.*.answers.*.*': 'no answer key: the position is not scored',
    'tasks.repeat.k': 'the repeat task has no fixed offset k',
}


def _task_config(d: dict, task: str) -> dict:
    c = d["config"]
    if task == "kback":
        return dict(vocab=c["tasks"]["kback"]["vocab"], k=c["tasks"]["kback"]["k"])
    return dict(vocab=c["induction"]["vocab"], k=None)


def _answers(batch: dict, task: str, k: int | None) -> list[list[int | None]]:
    """For each sequence, the key that holds each scored query's answer (None elsewhere):
    kback, ``i - k``; repeat, the key after the earlier copy of the query's token."""
    out = []
    for tokens, targets, scored in zip(batch["tokens"], batch["targets"], batch["scored"]):
        row = []
        for i in range(len(tokens)):
            if not scored[i]:
                row.append(None)
                continue
            if task == "kback":
                j = i - k
            else:
                (j,) = [j for j in range(1, i) if tokens[j - 1] == tokens[i]]  # unique: the tokens are distinct
            if tokens[j] != targets[i]:
                raise RuntimeError(f"key {j} does not hold the answer {targets[i]} of query {i}")
            row.append(j)
        out.append(row)
    return out


def _roles(batch: dict, task: str) -> list[list[str]]:
    """For the repeat task, each token's part: prefix, segment (first copy) or repeat."""
    out = []
    for scored in batch["scored"]:
        T = len(scored)
        if task == "kback":
            out.append([""] * T)
            continue
        first = int(np.flatnonzero(scored)[0])  # where the repeat starts
        n = T - first  # segment length
        out.append(["prefix" if i < first - n else "segment" if i < first else "repeat" for i in range(T)])
    return out


def _describe(tokens, roles, task: str) -> str:
    if task == "kback":
        return " ".join(str(t) for t in tokens[:8]) + " …"
    n = roles.count("repeat")
    return f"prefix of {roles.count('prefix')}, a segment of {style.counted(n, 'token')}, then the segment again"


def _scores(A: np.ndarray, tokens: np.ndarray, task: str, k: int | None) -> dict:
    """Head scores of one sequence, ``A (L, H, T, T)`` -> each ``(L, H)``."""
    out = {"previous token": ha.previous_token_score(A)}
    if task == "kback":
        out[f"{k} back"] = ha.offset_score(A, k)
    else:
        out["induction"] = ha.induction_score(A, tokens)
    return out


def _attention(weights: dict, cfg: TinyConfig, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``tokens (B, T)`` -> attention ``(B, L, H, T, T)`` and the predicted next tokens ``(B, T)``."""
    out = forward(weights, cfg, tokens)
    A = np.stack(out["attention"], axis=1)  # L x (B, H, T, T) -> (B, L, H, T, T)
    return A, out["logits"].argmax(-1)


def encode_causal(attention) -> str:
    """``(L, H, T, T)`` causal weights -> the codes of their lower triangle (keys 0..i of each
    query i), in the order layer, head, query, key; refused if a weight above the diagonal is not 0."""
    A = np.asarray(attention, dtype=np.float64)
    T = A.shape[-1]
    upper = np.triu(np.ones((T, T), dtype=bool), 1)
    if A.shape[-2] != T or np.any(A[..., upper] != 0):
        raise ValueError("attention must be (..., T, T) causal weights, exactly 0 above the diagonal")
    rows, cols = np.tril_indices(T)  # row by row: (0,0), (1,0), (1,1), (2,0), ...
    return encode_weights(A[..., rows, cols])


def decode_causal(codes: str, layers: int, heads: int, tokens: int) -> np.ndarray:
    """The inverse of :func:`encode_causal`: per-mille integers ``(L, H, T, T)``, 0 above the diagonal."""
    n = tokens * (tokens + 1) // 2
    if len(codes) != 2 * layers * heads * n:
        raise ValueError(f"codes must hold 2 characters per weight of the lower triangle, {2 * layers * heads * n} "
                         f"for ({layers}, {heads}, {tokens}, {tokens}); got {len(codes)}")
    digits = np.array([ALPHABET.index(c) for c in codes]).reshape(-1, 2)  # (2n,) -> (n, 2)
    q = (digits[:, 0] * 64 + digits[:, 1]).reshape(layers, heads, n)
    out = np.zeros((layers, heads, tokens, tokens), dtype=np.int64)
    rows, cols = np.tril_indices(tokens)
    out[..., rows, cols] = q
    return out


def data(model: str = "induction_after", sequence: Annotated[int, Range(1, 3)] = 1,
         layer: Annotated[int | None, Range(1, 2)] = None, head: Annotated[int | None, Range(1, 4)] = None) -> dict:
    """Every head of every stored tiny decoder on the built-in sequences of its task, with scores.

    ``model`` names a stored model (``kback_none`` ... ``kback_alibi``, ``induction_before``,
    ``induction_after``); ``sequence`` (1-3), ``layer`` and ``head`` count from 1 and pick
    what the static figure shows and the viewer opens on; without ``layer`` and ``head``, the
    model's strongest head on its task's score (``k back`` or ``induction``).
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}")
    if not 1 <= sequence <= len(SEQUENCE_SEEDS):
        raise ValueError(f"sequence counts the built-in sequences from 1 to {len(SEQUENCE_SEEDS)}, got {sequence}")
    d = load()
    stored = d["weights"]["models"]
    tasks, evals = {}, {}
    for task in ("kback", "repeat"):
        tc = _task_config(d, task)
        kw = dict(k=tc["k"]) if task == "kback" else {}
        seqs = [make_batch(task, 1, LENGTH, vocab=tc["vocab"], rng=s, **kw) for s in SEQUENCE_SEEDS]
        batch = {key: np.concatenate([s[key] for s in seqs]) for key in ("tokens", "targets", "scored")}  # each (3, T)
        roles = _roles(batch, task)
        tasks[task] = dict(
            k=tc["k"], vocab=tc["vocab"], tokens=batch["tokens"], targets=batch["targets"], scored=batch["scored"],
            roles=roles, answers=_answers(batch, task, tc["k"]),
            texts=[_describe(t, r, task) for t, r in zip(batch["tokens"], roles)])
        evals[task] = make_batch(task, N_EVAL, LENGTH, vocab=tc["vocab"], rng=EVAL_SEED, **kw)
    models, eval_attention = {}, {}
    for key in MODELS:
        info = stored[key]
        task = info["task"]
        t = tasks[task]
        cfg = TinyConfig.from_dict(info["config"])
        w = load_weights(WEIGHTS, key, cfg)
        A, predicted = _attention(w, cfg, t["tokens"])  # (3, L, H, T, T), (3, T)
        ev = evals[task]
        E, eval_predicted = _attention(w, cfg, ev["tokens"])  # (N_EVAL, L, H, T, T)
        eval_attention[key] = E
        if key == model:
            zoom = A  # the attention the static figure draws, before rounding
        per_eval = [_scores(a, tok, task, t["k"]) for a, tok in zip(E, ev["tokens"])]
        scores = {s: np.mean([p[s] for p in per_eval], axis=0) for s in per_eval[0]}  # each (L, H)
        kinds = list(scores)
        stack = np.stack([scores[s] for s in kinds])  # (kinds, L, H)
        right = eval_predicted == ev["targets"]
        models[key] = dict(
            key=key, task=task, method=cfg.method, step=info["step"], seed=info["seed"],
            layers=cfg.n_layers, heads=cfg.n_heads, types=kinds, codes=[encode_causal(a) for a in A],
            predicted=predicted,
            scores=scores, sequence_scores=[_scores(a, tok, task, t["k"]) for a, tok in zip(A, t["tokens"])],
            label=np.array(kinds)[stack.argmax(axis=0)].tolist(), label_value=stack.max(axis=0),
            accuracy=float(right[ev["scored"]].mean()),
            best={s: dict(value=float(v.max()), layer=int(np.argmax(v)) // v.shape[1] + 1,
                          head=int(np.argmax(v)) % v.shape[1] + 1) for s, v in scores.items()})
    m = models[model]
    main_score = kinds_main(m)
    L, H = m["layers"], m["heads"]
    for name, value, n in (("layer", layer, L), ("head", head, H)):
        if value is not None and not 1 <= value <= n:
            raise ValueError(f"{name} counts from 1 to {n}, got {value}")
    if layer is None or head is None:  # the strongest head on the task's score (within the layer or head given)
        allowed = np.full((L, H), -np.inf)
        rows = slice(None) if layer is None else slice(layer - 1, layer)
        cols = slice(None) if head is None else slice(head - 1, head)
        allowed[rows, cols] = m["scores"][main_score][rows, cols]
        layer, head = (int(v) + 1 for v in np.unravel_index(np.argmax(allowed), allowed.shape))

    # What the page says about ALiBi: layer 1's weights fall with distance, as its bias alone would make them.
    alibi = models["kback_alibi"]
    E = eval_attention["kback_alibi"]  # (N_EVAL, L, H, T, T)
    back = np.array([ha.offset_score(E[:, 0], s, start=DECAY_STEPS).mean(0) for s in range(1, DECAY_STEPS + 1)])  # (steps, H)
    slopes = mhalib.alibi_slopes(alibi["heads"])
    uniform = np.tril(np.ones((LENGTH, LENGTH))) / np.arange(1, LENGTH + 1)[:, None]  # weight 1/(i+1) on keys 0..i
    k = tasks["kback"]["k"]
    t = tasks[m["task"]]
    return dict(
        length=LENGTH, n_sequences=len(SEQUENCE_SEEDS), n_eval=N_EVAL, n_models=len(MODELS), scale=SCALE,
        alphabet=ALPHABET, largest_token={name: t["vocab"] - 1 for name, t in tasks.items()},
        threshold=LABEL_THRESHOLD, k=k, tasks=tasks, models=models, order=list(MODELS),
        start=dict(model=model, sequence=sequence, layer=layer, head=head),
        by_model={key: dict(accuracy=v["accuracy"], step=v["step"], best=v["best"]) for key, v in models.items()},
        alibi_decay=dict(weights=back.T, slopes=slopes, slopes_inverse=[int(round(1 / s)) for s in slopes],
                         ratios=(back[1:] / back[:-1]).T, bias_ratios=np.exp(-slopes), steps=DECAY_STEPS),
        uniform_k_back=float(ha.offset_score(uniform, k)),
        tokens=t["tokens"][sequence - 1], roles=t["roles"][sequence - 1],
        zoom=zoom[sequence - 1, layer - 1, head - 1], zoom_score=main_score,
        zoom_value=float(m["sequence_scores"][sequence - 1][main_score][layer - 1, head - 1]),
        title=model_title(m),
    )


def kinds_main(m: dict) -> str:
    """The score of a model's task: ``k back`` on kback, ``induction`` on repeat."""
    return m["types"][-1]


def model_title(m: dict) -> str:
    if m["task"] == "kback":
        return f"kback, {METHOD_LABELS[m['method']]}"
    return f"induction, {'before' if m['key'].endswith('before') else 'after'} the drop (step {m['step']})"


#: The interactive version of this figure (docs/javascripts/bert_viewer.js, widget "tiny").
EXPLORER = "tiny"

#: The scores' names as the overview writes them under each thumbnail.
SHORT = {"previous token": "prev", "induction": "induct"}


def explorer(data: dict) -> dict:
    """The viewer's payload: per task its sequences (tokens, parts, answers); per model its
    weights (lower triangles, coded as the BERT viewer's), predictions, scores to 2 decimals."""
    k = data["k"]
    tasks = {}
    for name, t in data["tasks"].items():
        tasks[name] = dict(
            k=t["k"],
            sequences=[dict(text=text, tokens=[str(x) for x in tokens], roles=roles, answer=answer)
                       for text, tokens, roles, answer in zip(t["texts"], t["tokens"].tolist(), t["roles"], t["answers"])])
    models = []
    for key in data["order"]:
        m = data["models"][key]
        models.append(dict(
            key=key, title=model_title(m), task=m["task"], method=METHOD_LABELS.get(m["method"], m["method"]),
            step=m["step"], layers=m["layers"], heads=m["heads"], types=m["types"],
            accuracy=round(m["accuracy"], 3),
            codes=m["codes"],
            predicted=[[str(x) for x in p] for p in m["predicted"].tolist()],
            scores={s: as_shown(v) for s, v in m["scores"].items()},
            strong=strong_flags(m["scores"], data["threshold"]),
            sentence_scores=[{s: as_shown(v) for s, v in sc.items()} for sc in m["sequence_scores"]],
            label=m["label"], label_value=as_shown(m["label_value"])))
    s = data["start"]
    return dict(
        causal=True, length=data["length"], n_eval=data["n_eval"], scale=data["scale"], alphabet=data["alphabet"],
        threshold=data["threshold"], short={**SHORT, f"{k} back": f"{k} back"}, tasks=tasks, models=models,
        start=dict(model=data["order"].index(s["model"]) + 1, sentence=s["sequence"], layer=s["layer"], head=s["head"]))


def draw(data: dict):
    A = np.asarray(data["zoom"], dtype=float)
    tokens = [str(t) for t in data["tokens"]]
    roles = data["roles"]
    T = len(tokens)
    c = style.colors()
    line = style.palette()[4 if c == style.THEMES["dark"] else 0]  # sky blue reads better on the dark page
    mark = style.ink(style.OKABE_ITO[5])
    fig, ax = style.new_figure(4.6, 0.26 * T + 1.4)
    x0, x1 = 0.0, 1.0
    for i in range(T):
        for j in range(i + 1):  # causal: a query has lines to itself and earlier keys only
            if A[i, j] >= 0.01:
                ax.plot([x0, x1], [i, j], color=line, alpha=float(min(1.0, A[i, j])), lw=0.6 + 2.4 * A[i, j],
                        solid_capstyle="round")
    for i, t in enumerate(tokens):
        colour, weight = (mark, "bold") if roles[i] == "repeat" else (c["fg"], "normal")
        ax.text(x0 - 0.05, i, t, ha="right", va="center", fontsize=11, color=colour, fontweight=weight)
        ax.text(x1 + 0.05, i, t, ha="left", va="center", fontsize=11, color=colour, fontweight=weight)
    for part in ("segment", "repeat"):  # a bracket beside the keys for each part of the sequence
        rows = [i for i, r in enumerate(roles) if r == part]
        if rows:
            xb = x1 + 0.3
            ax.plot([xb, xb + 0.05, xb + 0.05, xb], [rows[0] - 0.3, rows[0] - 0.3, rows[-1] + 0.3, rows[-1] + 0.3],
                    color=c["muted"], lw=1)
            ax.text(xb + 0.1, (rows[0] + rows[-1]) / 2, part, ha="left", va="center", fontsize=11,
                    color=mark if part == "repeat" else c["muted"])
    ax.text(x0 - 0.05, -1.3, "query", ha="right", va="center", fontsize=11, color=c["muted"], style="italic")
    ax.text(x1 + 0.05, -1.3, "key", ha="left", va="center", fontsize=11, color=c["muted"], style="italic")
    ax.set_xlim(-0.35, 1.85)
    ax.set_ylim(T - 0.5, -1.9)
    ax.axis("off")
    s = data["start"]
    ax.set_title(f"{data['title']}\nlayer {s['layer']}, head {s['head']}: {data['zoom_score']} score "
                 f"{style.fixed(data['zoom_value'], 2)}", fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
