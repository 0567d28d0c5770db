"""Inside the kback decoders: the head that looks k back, at the training length and at 4x it.

For each positional method, the stored kback model (seed 0) is run by mhalib's numpy forward
pass (mhalib.models.tiny_numpy.forward, from the stored weights) on one random sequence of 4x
the training length. Left: the first L_train tokens alone (as in training), all queries. Right:
the whole sequence, its last L_train queries against every key. The head shown is the one whose
attention to offset k is highest at the training length. A learned table has no rows past
the training length: that model cannot run the long sequence. Data in
figures/data/tiny_decoders.json and tiny_decoders_weights.npz. Page: Does it extrapolate?
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

WEIGHTS = data_file("tiny_decoders_weights.npz")
#: The seed of the sequence drawn (any sequence shows the same pattern).
SEQUENCE_SEED = 7


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'by_method.learned.long_top_offsets': 'not defined: a learned table cannot run past the training length',
    'by_method.learned.score_long': 'not defined: a learned table cannot run past the training length',
    'panels.*.long': 'not defined: a learned table cannot run past the training length',
    'panels.*.long_top_offsets': 'not defined: a learned table cannot run past the training length',
    'panels.*.score_long': 'not defined: a learned table cannot run past the training length',
}


def data(factor: Annotated[int, Range(2, 8)] = 4) -> dict:
    d = load()
    c = d["config"]
    L0, k = c["L_train"], c["tasks"]["kback"]["k"]
    T = factor * L0
    vocab = c["tasks"]["kback"]["vocab"]
    tokens = make_batch("kback", 1, T, vocab=vocab, rng=SEQUENCE_SEED, k=k)["tokens"]  # (1, T)
    panels = []
    for m in c["methods"]:
        info = d["weights"]["models"][f"kback_{m}"]
        cfg = TinyConfig.from_dict(info["config"])
        w = load_weights(WEIGHTS, f"kback_{m}", cfg)
        short = np.stack(forward(w, cfg, tokens[:, :L0])["attention"])[:, 0]  # (layers, H, L0, L0)
        scores = ha.offset_score(short, k)  # (layers, H)
        layer, head = (int(v) for v in np.unravel_index(np.argmax(scores), scores.shape))
        p = dict(method=m, layer=layer + 1, head=head + 1, score_short=float(scores[layer, head]),
                 short=short[layer, head], long=None, score_long=None, defined=True, long_top_offsets=None)
        if cfg.method == "learned" and T > cfg.max_len:
            p["defined"] = False
        else:
            A = forward(w, cfg, tokens)["attention"][layer][0, head]  # (T, T)
            p["long"] = A[T - L0:]  # the last L0 queries, every key
            p["score_long"] = float(ha.offset_score(A, k, start=L0))  # queries past the training range
            far = np.arange(L0, T)
            offsets = far - A[far].argmax(-1)  # where each query past the training range looks most
            values, counts = np.unique(offsets, return_counts=True)
            order = np.argsort(-counts, kind="stable")[:3]
            p["long_top_offsets"] = [[int(values[i]), float(counts[i] / len(far))] for i in order]
        panels.append(p)
    # RoPE: the far offset its head confuses with k, in turns of the fastest planes of the head
    rope = next(p for p in panels if p["method"] == "rope")
    alias = next((o for o, _ in rope["long_top_offsets"] if abs(o - k) > 1), None)
    wavelengths = 2 * np.pi / mhalib.rope_frequencies(cfg.d_head, cfg.rope_base)
    rope_alias = None if alias is None else dict(
        offset=alias, share=dict(rope["long_top_offsets"])[alias], share_k=dict(rope["long_top_offsets"]).get(k, 0.0),
        turns=[float((alias - k) / lam) for lam in wavelengths[:3]],
        max_turn_error=float(max(abs(t - round(t)) for t in ((alias - k) / wavelengths[:3]))))
    return dict(L_train=L0, k=k, factor=factor, T=T, seed=info["seed"], panels=panels, rope_alias=rope_alias,
                by_method={p["method"]: dict(score_short=p["score_short"], score_long=p["score_long"],
                                             layer=p["layer"], head=p["head"],
                                             long_top_offsets=p["long_top_offsets"]) for p in panels})


def draw(data: dict):
    n = len(data["panels"])
    L0, T = data["L_train"], data["T"]
    fig, axes = style.new_figure(5.8, 1.55 * n + 0.5, nrows=n, ncols=2, width_ratios=(1, data["factor"]))
    for i, (row, p) in enumerate(zip(axes, data["panels"])):
        a, b = row
        name = METHOD_LABELS[p["method"]]
        style.heatmap(p["short"], ax=a, vmin=0, vmax=1)
        if i == 0:
            a.set_title(f"{style.counted(L0, 'token')}", fontsize=11)
        a.set_ylabel(f"{name}\nL{p['layer']} H{p['head']}: query", fontsize=11)
        a.set_xticks([0, L0 - 1])
        a.set_yticks([0, L0 - 1])
        if p["defined"]:
            style.heatmap(p["long"], ax=b, vmin=0, vmax=1)
            b.set_yticks([0, L0 - 1], [str(T - L0), str(T - 1)])
            b.set_xticks([0, L0, T - 1])
            b.set_title(f"{style.counted(T, 'token')}; weight {data['k']} back: {style.share(p['score_short'], 2)} → {style.share(p['score_long'], 2)}",
                        fontsize=11, loc="left")
        else:
            b.set_axis_off()
            b.text(0.5, 0.5, f"not defined: the learned table\nhas no rows past {L0 - 1}",
                   ha="center", va="center", transform=b.transAxes, fontsize=11, color=style.colors()["muted"])
    axes[-1][1].set_xlabel(f"key (last {style.counted(L0, 'query', 'queries')})")
    axes[-1][0].set_xlabel("key")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
