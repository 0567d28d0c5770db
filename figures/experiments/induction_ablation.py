"""An induction head grows: remove heads of the model just after its drop and measure the loss and accuracy on the repeat.

The induction run's model (seed 0) at the checkpoint after its loss drops (not the end of
training: the weights stored for the circuit figures), run by mhalib's
numpy forward pass from the stored weights on the run's fixed evaluation batch, with heads
removed (mhalib.models.tiny_numpy.without_heads: their rows of W_O set to zero). Each
layer-1 head is listed with its previous-token score and each layer-2 head with its
induction score at that checkpoint (from the stored run). The single layer-1 removals are
also put in order of their cost, and the evaluation sequences resampled with replacement
(a bootstrap of DRAWS draws) to see how often each step of that order holds. Heads and
layers count from 1.
Data in figures/data/tiny_decoders.json and tiny_decoders_weights.npz. Page: An induction head grows.
"""
from __future__ import annotations

import math

import numpy as np

from mhalib.models.tiny_numpy import TinyConfig, forward, load_weights, masked_loss_accuracy, without_heads
from mhalib.models.tiny_tasks import make_batch
from figures._kit import cli, style
from figures._kit.contract import data_file
from figures._kit.export import markdown_table
from figures.experiments.induction_loss_curve import load

WEIGHTS = data_file("tiny_decoders_weights.npz")


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    '*.score': 'no head-type score: the row removes none, or a whole layer',
    'rows.*.score': 'no head-type score: the row removes none, or a whole layer',
}


#: Resamplings of the evaluation sequences behind the order of the layer-1 removals (a bootstrap).
DRAWS = 4000


def order_steps(nats: dict, counts: np.ndarray, draws: int = DRAWS, seed: int = 0) -> tuple[list, list[dict]]:
    """``nats``: head -> ``(N,)`` summed nats of each evaluation sequence with that head removed;
    ``counts (N,)``: the scored tokens of each sequence. The heads by mean loss, highest first,
    and for each neighbouring pair of that order the gap in mean loss (nats per token) and the
    share of ``draws`` resamplings of the sequences (with replacement) in which it stays positive."""
    order = sorted(nats, key=lambda h: -nats[h].sum())
    pick = np.random.default_rng(seed).integers(0, len(counts), size=(draws, len(counts)))  # (draws, N)
    tokens = counts[pick].sum(axis=1)  # (draws,)
    steps = []
    for a, b in zip(order, order[1:]):
        resampled = (nats[a][pick] - nats[b][pick]).sum(axis=1) / tokens  # (draws,)
        steps.append(dict(first=a, second=b, gap=float((nats[a].sum() - nats[b].sum()) / counts.sum()),
                          kept=float((resampled > 0).mean())))
    return order, steps


def data() -> dict:
    d = load()
    c = d["config"]
    ic = c["induction"]
    run = next(r for r in d["induction"] if r["seed"] == c["stored_seed"])
    info = d["weights"]["models"]["induction_after"]
    cfg = TinyConfig.from_dict(info["config"])
    weights = load_weights(WEIGHTS, "induction_after", cfg)
    batch = make_batch(ic["task"], ic["eval_seqs"], c["L_train"], vocab=ic["vocab"], rng=ic["eval_seed"])
    cp = next(x for x in run["checkpoints"] if x["step"] == info["step"])
    prev = np.array(cp["previous_token"][0])  # (H,): layer 1's previous-token scores
    ind = np.array(cp["induction"][1])  # (H,): layer 2's induction scores
    H = cfg.n_heads

    def measure(removed: list[tuple[int, int]]) -> dict:
        """``removed``: (layer, head) pairs counted from 1, as the page counts them."""
        w = without_heads(weights, cfg, [(l - 1, h - 1) for l, h in removed])
        loss, acc = masked_loss_accuracy(forward(w, cfg, batch["tokens"])["logits"], batch["targets"],
                                         batch["scored"])
        return dict(removed=removed, loss=loss, accuracy=acc)

    prev_heads = sorted(int(h) + 1 for h in np.argsort(prev)[::-1][:2])  # the two sharpest previous-token heads
    rows = [dict(measure([]), kind="none", score=None)]
    rows += [dict(measure([(1, h)]), kind="layer 1 head", score=float(prev[h - 1])) for h in range(1, H + 1)]
    rows.append(dict(measure([(1, h) for h in prev_heads]), kind="layer 1 pair", score=None))
    rows.append(dict(measure([(1, h) for h in range(1, H + 1)]), kind="layer 1 all", score=None))
    rows += [dict(measure([(2, h)]), kind="layer 2 head", score=float(ind[h - 1])) for h in range(1, H + 1)]
    rows.append(dict(measure([(2, h) for h in range(1, H + 1)]), kind="layer 2 all", score=None))
    single_l1 = [r for r in rows if r["kind"] == "layer 1 head"]
    worst = max(single_l1, key=lambda r: r["loss"])
    # each layer-1 removal sequence by sequence: summed nats = mean nats x scored tokens
    counts = batch["scored"].sum(axis=1)  # (N,)
    nats = {}
    for h in range(1, H + 1):
        logits = forward(without_heads(weights, cfg, [(0, h - 1)]), cfg, batch["tokens"])["logits"]  # (N, T, V)
        nats[h] = counts * np.array([masked_loss_accuracy(logits[i:i + 1], batch["targets"][i:i + 1],
                                                          batch["scored"][i:i + 1])[0] for i in range(len(counts))])
    l1_order, l1_steps = order_steps(nats, counts)
    by = {r["kind"]: r for r in rows}
    plateau = next(x for x in run["checkpoints"] if x["step"] == run["before"])["loss"]
    return dict(step=info["step"], seed=run["seed"], n_seqs=ic["eval_seqs"], n_scored=int(batch["scored"].sum()),
                n_heads=H, rows=rows, prev_heads=prev_heads, prev_scores=prev, ind_scores=ind,
                stored_loss=cp["loss"], plateau_loss=plateau, chance_loss=math.log(ic["vocab"]),
                full=by["none"], worst_l1=dict(head=worst["removed"][0][1], loss=worst["loss"],
                                               accuracy=worst["accuracy"]),
                pair=by["layer 1 pair"], all_l1=by["layer 1 all"], all_l2=by["layer 2 all"],
                l1_order=l1_order, l1_steps=l1_steps, draws=DRAWS, l1_kept_min=min(st["kept"] for st in l1_steps),
                l2_single_max_loss=max(r["loss"] for r in rows if r["kind"] == "layer 2 head"))


def _label(r: dict) -> str:
    if not r["removed"]:
        return "nothing (the model at this step)"
    layer = r["removed"][0][0]
    heads = [h for _, h in r["removed"]]
    if len(heads) == 1:
        return f"layer {layer}, head {heads[0]}"
    return f"layer {layer}, heads " + (" and ".join(map(str, heads)) if len(heads) == 2 else "1–" + str(heads[-1]))


def table(data: dict) -> str:
    rows = []
    for r in data["rows"]:
        score = "—" if r["score"] is None else (("previous-token " if r["kind"].startswith("layer 1") else "induction ")
                                                 + style.share(r['score'], 2))
        rows.append([_label(r), score, style.fixed(r['loss'], 2), style.share(r['accuracy'], 2)])
    return markdown_table(["heads removed", "the head's score", "loss on the repeat (nats)", "accuracy"], rows, "llrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
