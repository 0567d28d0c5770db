"""An induction head grows: how the heads of layer 2 read what the heads of layer 1 write, from the weights alone.

For the induction run's model (seed 0) at the checkpoints before and after its loss drops:
each head's QK circuit W_QK = W_Q^h (W_K^h)^T and OV circuit W_OV = W_V^h W_O^h in the
residual basis, with its layer's LayerNorm gain and centring folded in
(mhalib.models.circuits.tiny_decoder_circuits), and the composition scores of Elhage et al.
(2021) between every layer-1 head a and layer-2 head b (mhalib.models.circuits.composition_scores):

    Q: ||W_OV^a W_QK^b||_F     K: ||W_QK^b (W_OV^a)^T||_F     V: ||W_OV^a W_OV^b||_F,
    each divided by the product of the two matrices' norms.

Unrelated heads score about 1/sqrt(D) (the root mean square for a random rotation between
them); two heads that use all d_head dimensions equally and line up exactly score
1/sqrt(d_head), and only rank-one circuits can reach 1. Heads count from 1. Data in figures/data/tiny_decoders.json and
tiny_decoders_weights.npz. Page: An induction head grows.
"""
from __future__ import annotations

import math

import numpy as np

from mhalib.models.circuits import composition_score, composition_scores, tiny_decoder_circuits
from mhalib.models.tiny_numpy import TinyConfig, load_weights
from figures._kit import cli, style
from figures._kit.contract import data_file
from figures.experiments.induction_loss_curve import load

WEIGHTS = data_file("tiny_decoders_weights.npz")
WHEN = ("before", "after")
KINDS = (("q", "Q"), ("k", "K"), ("v", "V"))
#: A phone gets the panels in three rows (Q, K, V) of two (before, after).
NARROW = True


def circuits_at(when: str) -> tuple[dict, dict]:
    """The stored model ``induction_{when}``'s circuits (``tiny_decoder_circuits``) and its
    entry in tiny_decoders.json (config, step, seed)."""
    info = load()["weights"]["models"][f"induction_{when}"]
    cfg = TinyConfig.from_dict(info["config"])
    return tiny_decoder_circuits(load_weights(WEIGHTS, f"induction_{when}", cfg), cfg), info


def _ranks(k: np.ndarray) -> list[list[int]]:
    """For each layer-2 head (column of ``k``), the layer-1 heads from the strongest K-composition
    down, counted from 1."""
    return [[int(a) + 1 for a in np.argsort(-k[:, b], kind="stable")] for b in range(k.shape[1])]


def aligned_score(D: int, rank: int) -> float:
    """The K-composition score of two circuits that line up exactly and use ``rank`` dimensions
    equally: ``W_OV^1 = P`` and ``W_QK^2 = P^T``, with ``P`` the ``(D, D)`` projection onto the first
    ``rank`` axes. ``||P P||_F / (||P||_F ||P||_F) = sqrt(rank) / rank = 1/sqrt(rank)``."""
    P = np.diag((np.arange(D) < rank).astype(float))  # (D, D), rank `rank`
    return composition_score(P, P)  # the K-composition pairs W_QK^2 with (W_OV^1)^T: here P with P


def _closest_second(k: np.ndarray, order: list[int]) -> dict:
    """Where the second-ranked layer-1 head (``order[1]``) comes nearest the third (``order[2]``):
    the layer-2 head (from 1) and the two scores."""
    second, third = order[1] - 1, order[2] - 1
    b = int(np.argmin(k[second] - k[third]))
    return dict(l2_head=b + 1, second=order[1], third=order[2], second_score=float(k[second, b]),
                third_score=float(k[third, b]))


def data() -> dict:
    d = load()
    run = next(r for r in d["induction"] if r["seed"] == d["config"]["stored_seed"])
    panels = {}
    for when in WHEN:
        circ, info = circuits_at(when)
        s = composition_scores(circ["ov"][0], circ["qk"][1], circ["ov"][1])  # each (H1, H2)
        cp = next(x for x in run["checkpoints"] if x["step"] == info["step"])
        panels[when] = dict(step=info["step"], q=s["q"], k=s["k"], v=s["v"], k_ranks=_ranks(s["k"]),
                            prev_scores=np.array(cp["previous_token"][0]), ind_scores=np.array(cp["induction"][1]))
    D = d["weights"]["models"]["induction_after"]["config"]["d_model"]
    d_head = D // d["weights"]["models"]["induction_after"]["config"]["n_heads"]
    a, b = panels["after"], panels["before"]
    ranks = a["k_ranks"]
    # the layer-1 heads in the order every layer-2 head ranks them, or None where they differ
    k_order = ranks[0] if all(r == ranks[0] for r in ranks) else None
    return dict(seed=run["seed"], d_model=D, d_head=d_head, n_heads=a["k"].shape[0], baseline=1 / math.sqrt(D),
                aligned_full_rank=aligned_score(D, d_head), aligned_rank_one=aligned_score(D, 1), panels=panels,
                k_min_after=float(a["k"].min()), k_max_after=float(a["k"].max()),
                qv_max_after=float(max(a["q"].max(), a["v"].max())),
                qv_max_before=float(max(b["q"].max(), b["v"].max())),
                k_min_before=float(b["k"].min()), k_max_before=float(b["k"].max()),
                k_order=k_order,
                k_closest_second=_closest_second(a["k"], k_order) if k_order else None,
                vmax=float(max(p[key].max() for p in panels.values() for key, _ in KINDS)))


def _decimals(scores) -> int:
    """Three decimals, or more where two different scores of a column (the heads a layer-2 head
    is compared across) would read alike: at two, 0.20 and 0.20 tied after training; at three,
    0.119 and 0.119 before it (0.1191 and 0.1187)."""
    import numpy as np

    columns = np.asarray(scores).T  # (layer-2 head, layer-1 head)
    for places in range(3, 7):
        if all(len({style.cell_text(x, f"{{:.{places}f}}") for x in col}) == len(set(col.tolist())) for col in columns):
            return places
    return 6


def draw(data: dict):
    H = data["n_heads"]
    if style.narrow():
        fig, axes = style.new_figure(5.6, 8.6, nrows=3, ncols=2)
        grid = {(kind, when): axes[i, j] for i, (kind, _) in enumerate(KINDS) for j, when in enumerate(WHEN)}
    else:
        fig, axes = style.new_figure(9.0, 6.0, nrows=2, ncols=3)
        grid = {(kind, when): axes[j, i] for i, (kind, _) in enumerate(KINDS) for j, when in enumerate(WHEN)}
    labels = [str(h) for h in range(1, H + 1)]
    for (kind, when), ax in grid.items():
        p = data["panels"][when]
        style.heatmap(p[kind], labels, labels, ax=ax, vmin=0, vmax=data["vmax"],
                      annotate=f"{{:.{_decimals(p[kind])}f}}", fontsize=11)
        name = dict(KINDS)[kind]
        ax.set_title(f"{name}-composition, {when}\n(step {p['step']})", fontsize=11)
        # the panels share their axes: label the bottom row and the left column only
        if any(ax is other for other in axes[-1]):
            ax.set_xlabel("layer-2 head")
        if any(ax is other for other in axes[:, 0]):
            ax.set_ylabel("layer-1 head")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
