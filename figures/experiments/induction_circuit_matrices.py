"""An induction head grows: the circuit token by token, three matrices read off the weights.

For the induction run's model (seed 0) before and after its loss drops, with the LayerNorm
gains folded in (mhalib.models.circuits.tiny_decoder_circuits), for the sharpest
previous-token head P of layer 1 and the sharpest induction head I of layer 2 (the heads of
the page's attention maps):

    position QK of P      W_pos W_QK^P W_pos^T / sqrt(d)   (T, T)  query position x key position
    I's keys through P    W_E W_QK^I (W_E W_OV^P)^T        (V, V)  query token x the token P copied
                                                                   into the key (the one before it)
    I's OV circuit        W_E W_OV^I W_U                    (V, V)  token attended to x logit raised

the last position up to which every query's largest positional score is on the position
just before it, and, for every head, the copying measures of its token-to-token OV circuit W_E W_OV W_U:
the eigenvalue positivity sum λ / sum |λ| and the share of tokens whose largest entry is
their own (mhalib.models.circuits), beside random matrices of the same shapes. Heads count
from 1. Data in figures/data/tiny_decoders.json and tiny_decoders_weights.npz. Page: An
induction head grows.
"""
from __future__ import annotations

import math

import numpy as np

from mhalib.models.circuits import diagonal_argmax_share, eigenvalue_positivity
from mhalib.models.tiny_tasks import repeat_segment_range
from figures._kit import cli, style
from figures.experiments.induction_circuit_composition import WHEN, circuits_at
from figures.experiments.induction_loss_curve import load
from figures.experiments.induction_scores import data as _scores

#: A phone gets the panels in three rows (the three matrices) of two (before, after).
NARROW = True
#: Seeded draws of random matrices (W_E, the head's four factors, W_U all N(0, 1)) for the
#: positivity a head would have by chance.
RANDOM_DRAWS = 200
RANDOM_SEED = 0
MATRICES = (("pos_qk", "position QK, L1 H{P}", "key position", "query position"),
            ("k_tokens", "keys of L2 H{I} via L1 H{P}", "token before the key", "query token"),
            ("ov_tokens", "OV of L2 H{I}", "logit raised", "token attended to"))


def _prev_run(pos_qk: np.ndarray) -> int:
    """The last query position n such that every query i = 1 .. n has its largest score over the
    keys j <= i at j = i - 1 (0 if query 1 already looks elsewhere)."""
    T = pos_qk.shape[0]
    masked = np.where(np.tril(np.ones((T, T), bool)), pos_qk, -np.inf)  # (T, T): causal
    back = masked[1:].argmax(axis=1) == np.arange(T - 1)  # (T - 1,): query i = 1 .. T-1 peaks at i - 1
    return int(T - 1 if back.all() else np.argmin(back))


def _random_positivity(V: int, D: int, d: int) -> np.ndarray:
    rng = np.random.default_rng(RANDOM_SEED)
    out = []
    for _ in range(RANDOM_DRAWS):
        w_e, w_u = rng.normal(size=(V, D)), rng.normal(size=(D, V))
        ov = rng.normal(size=(D, d)) @ rng.normal(size=(d, D))  # (D, D), rank d as a head's
        out.append(eigenvalue_positivity(w_e @ ov @ w_u))
    return np.array(out)


def data() -> dict:
    s = _scores()
    P, I = s["best_prev_head"], s["best_ind_head"]
    L_train = load()["config"]["L_train"]
    panels = {}
    for when in WHEN:
        circ, info = circuits_at(when)
        L, H, D, _ = circ["ov"].shape
        d = D // H
        w_e, w_pos, w_u = circ["w_e"], circ["w_pos"], circ["w_u"]
        pos_qk = w_pos @ circ["qk"][0, P - 1] @ w_pos.T / math.sqrt(d)  # (T, D) (D, D) (D, T) -> (T, T)
        ov_tok = np.stack([[w_e @ circ["ov"][l, h] @ w_u for h in range(H)] for l in range(L)])  # (L, H, V, V)
        keys = np.stack([[w_e @ circ["qk"][1, b] @ (w_e @ circ["ov"][0, a]).T for b in range(H)]
                         for a in range(H)])  # (H1, H2, V, V): query token x the token layer-1 head a copied
        panels[when] = dict(
            step=info["step"], pos_qk=pos_qk, k_tokens=keys[P - 1, I - 1], ov_tokens=ov_tok[1, I - 1],
            positivity=np.array([[eigenvalue_positivity(m) for m in layer] for layer in ov_tok]),  # (L, H)
            ov_diag=np.array([[diagonal_argmax_share(m) for m in layer] for layer in ov_tok]),  # (L, H)
            k_diag=np.array([[diagonal_argmax_share(m) for m in row] for row in keys]),  # (H1, H2)
            prev_run=np.array([_prev_run(w_pos @ circ["qk"][0, h] @ w_pos.T) for h in range(H)]))  # (H,)
    V = panels["after"]["ov_tokens"].shape[0]
    rnd = _random_positivity(V, D, d)
    a, b = panels["after"], panels["before"]
    both = np.stack([a["positivity"], b["positivity"]])
    return dict(prev_head=P, ind_head=I, vocab=V, n_heads=H, panels=panels,
                random_positivity_mean=float(rnd.mean()), random_positivity_max_abs=float(np.abs(rnd).max()),
                positivity_min=float(both.min()), positivity_max=float(both.max()),
                chance_diag=1 / V,
                ov_diag_l2_after_min=float(a["ov_diag"][1].min()), ov_diag_l2_after_max=float(a["ov_diag"][1].max()),
                ov_diag_l2_before_min=float(b["ov_diag"][1].min()),
                ov_diag_l2_before_max=float(b["ov_diag"][1].max()),
                ov_diag_ind_before=float(b["ov_diag"][1, I - 1]), ov_diag_ind_after=float(a["ov_diag"][1, I - 1]),
                k_diag_before=float(b["k_diag"][P - 1, I - 1]), k_diag_after=float(a["k_diag"][P - 1, I - 1]),
                prev_run_before=int(b["prev_run"][P - 1]), prev_run_after=int(a["prev_run"][P - 1]),
                # the first copy of the segment ends at L - n - 1: at position 23 at the latest for L = 32
                first_copy_end_max=L_train - repeat_segment_range(L_train)[0] - 1)


def draw(data: dict):
    if style.narrow():
        fig, axes = style.new_figure(5.6, 9.4, nrows=3, ncols=2)
        grid = {(key, when): axes[i, j] for i, (key, *_) in enumerate(MATRICES) for j, when in enumerate(WHEN)}
    else:
        fig, axes = style.new_figure(9.0, 6.4, nrows=2, ncols=3)
        grid = {(key, when): axes[j, i] for i, (key, *_) in enumerate(MATRICES) for j, when in enumerate(WHEN)}
    titles = {key: (title.format(P=data["prev_head"], I=data["ind_head"]), xl, yl) for key, title, xl, yl in MATRICES}
    for (key, when), ax in grid.items():
        p = data["panels"][when]
        m = np.asarray(p[key], dtype=float)
        if key == "pos_qk":  # keys after the query are masked: leave them blank
            m = np.where(np.tril(np.ones(m.shape, bool)), m, np.nan)
        top = float(np.nanmax(np.abs(m)))
        ax.imshow(m, cmap=style.DIVERGING, vmin=-top, vmax=top, interpolation="nearest")
        title, xl, yl = titles[key]
        ax.set_title(f"{title}\n{when} (step {p['step']})", fontsize=11)
        if style.narrow() or when == WHEN[-1]:  # wide: the rows share their x labels, under the last
            ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        n = m.shape[0]
        ax.set_xticks([0, n - 1])
        ax.set_yticks([0, n - 1])
        for side in ax.spines.values():
            side.set_visible(False)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
