"""QK and OV circuits, composition scores and the copying measures (mhalib.models.circuits),
against values worked out by hand, a spectrum chosen in advance, and a numpy forward pass of the
stored induction model written here, head by head, independently of mhalib's."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mhalib.models import circuits as c
from mhalib.models.tiny_numpy import LN_EPS, TinyConfig, forward, layer_norm, load_weights
from mhalib.models.tiny_tasks import make_batch
from test_claims import ROOT

DATA = ROOT / "figures" / "data"


def _e(i: int, D: int = 4) -> np.ndarray:
    return np.eye(D)[i]


def _toy(t: float) -> dict:
    """Two layers of two heads, D = 4, d = 2, built from basis vectors e0..e3 so that every
    composition score is known in closed form (c = cos t, s = sin t):

    layer 1, head 0: reads e0, writes c e1 + s e3      W_OV = e0^T (c e1 + s e3)
    layer 1, head 1: reads e2, writes e2               W_OV = e2^T e2
    layer 2, head 0: query e2, key e1 (W_QK = e2^T e1); reads e3, writes e1 (W_OV = e3^T e1)
    layer 2, head 1: query and key e0 and e3 (W_QK = e0^T e0 + e3^T e3, norm sqrt 2);
                     reads e1, writes e0 (W_OV = e1^T e0)
    """
    co, si = math.cos(t), math.sin(t)
    D = 4
    w1 = {name: np.zeros((D, D)) for name in ("w_q", "w_k", "w_v", "w_o")}
    w1["w_v"][:, 0], w1["w_o"][0] = _e(0), co * _e(1) + si * _e(3)  # head 0: its column 0, row 0
    w1["w_v"][:, 2], w1["w_o"][2] = _e(2), _e(2)  # head 1: its column 2 (= its first), row 2
    w1["w_q"][:, 0] = w1["w_k"][:, 0] = _e(1)  # some QK circuit, unused by the scores
    w2 = {name: np.zeros((D, D)) for name in ("w_q", "w_k", "w_v", "w_o")}
    w2["w_q"][:, 0], w2["w_k"][:, 0] = _e(2), _e(1)
    w2["w_v"][:, 0], w2["w_o"][0] = _e(3), _e(1)
    w2["w_q"][:, 2], w2["w_k"][:, 2] = _e(0), _e(0)
    w2["w_q"][:, 3], w2["w_k"][:, 3] = _e(3), _e(3)
    w2["w_v"][:, 2], w2["w_o"][2] = _e(1), _e(0)
    return dict(w1=w1, w2=w2, c=abs(co), s=abs(si))


@pytest.mark.parametrize("t", [0.0, 0.3, 1.1, math.pi / 2])
def test_composition_scores_of_a_hand_built_toy(t):
    toy = _toy(t)
    w1, w2, co, si = toy["w1"], toy["w2"], toy["c"], toy["s"]
    ov1 = c.ov_circuit(w1["w_v"], w1["w_o"], 2)
    qk2, ov2 = c.qk_circuit(w2["w_q"], w2["w_k"], 2), c.ov_circuit(w2["w_v"], w2["w_o"], 2)
    # the circuits themselves, as the docstring of _toy builds them
    np.testing.assert_allclose(ov1[0], np.outer(_e(0), co * _e(1) + math.copysign(si, math.sin(t)) * _e(3)),
                               atol=1e-15)
    np.testing.assert_allclose(ov1[1], np.outer(_e(2), _e(2)))
    np.testing.assert_allclose(qk2[0], np.outer(_e(2), _e(1)))
    np.testing.assert_allclose(qk2[1], np.outer(_e(0), _e(0)) + np.outer(_e(3), _e(3)))
    s = c.composition_scores(ov1, qk2, ov2)
    r2 = math.sqrt(2)
    # K: W_QK^b (W_OV^a)^T. (1, 0): e2 e1^T (c e1 + s e3) e0^T = c e2 e0^T; (1, 1): s e3 e0^T / sqrt 2
    np.testing.assert_allclose(s["k"], [[co, si / r2], [0, 0]], atol=1e-15)
    # Q: W_OV^a W_QK^b. (0, 1): e0 (c e1 + s e3)^T (e0 e0^T + e3 e3^T) = s e0 e3^T; (1, 0): e2 e2^T e2 e1^T
    np.testing.assert_allclose(s["q"], [[0, si / r2], [1, 0]], atol=1e-15)
    # V: W_OV^a W_OV^b. (0, 0): e0 (c e1 + s e3)^T e3 e1^T = s e0 e1^T; (0, 1): c e0 e0^T
    np.testing.assert_allclose(s["v"], [[si, co], [0, 0]], atol=1e-15)


def test_composition_score_is_one_over_sqrt_d_on_average_for_unrelated_heads():
    """The module docstring's baseline: turn what the first matrix writes by a uniformly random
    rotation R and the mean square of the score is 1/D, whatever the two matrices are (here
    low-rank ones, as heads are). 2000 seeded rotations."""
    rng = np.random.default_rng(5)
    D, d = 16, 4
    a = rng.normal(size=(D, d)) @ rng.normal(size=(d, D))
    b = rng.normal(size=(D, d)) @ rng.normal(size=(d, D))
    squares = []
    for _ in range(2000):
        z, r = np.linalg.qr(rng.normal(size=(D, D)))
        rot = z * np.sign(np.diag(r))  # Haar-distributed (Mezzadri's sign fix)
        squares.append(c.composition_score(a @ rot, b) ** 2)
    squares = np.array(squares)
    assert abs(squares.mean() - 1 / D) < 4 * squares.std() / math.sqrt(len(squares))


def test_eigenvalue_positivity_on_a_known_spectrum():
    """sum λ / sum |λ| for a matrix built as S diag S^-1 with eigenvalues 3, -1, 1 ± 2i."""
    rng = np.random.default_rng(0)
    block = np.zeros((4, 4))
    block[0, 0], block[1, 1] = 3.0, -1.0
    block[2:, 2:] = [[1.0, -2.0], [2.0, 1.0]]  # eigenvalues 1 ± 2i
    S = rng.normal(size=(4, 4))
    m = S @ block @ np.linalg.inv(S)
    expected = (3 - 1 + 1 + 1) / (3 + 1 + 2 * math.sqrt(5))
    assert c.eigenvalue_positivity(m) == pytest.approx(expected, rel=1e-10)
    assert c.eigenvalue_positivity(np.eye(5)) == 1.0
    assert c.eigenvalue_positivity(-2 * np.eye(3)) == -1.0
    assert c.eigenvalue_positivity([[0.0, -1.0], [1.0, 0.0]]) == pytest.approx(0.0, abs=1e-15)  # ±i
    for zero in (np.zeros((3, 3)), [[0.0, 1.0], [0.0, 0.0]]):
        with pytest.raises(ValueError, match="0/0"):
            c.eigenvalue_positivity(zero)
    with pytest.raises(ValueError, match="square"):
        c.eigenvalue_positivity(np.ones((2, 3)))


def test_the_circuit_scores_are_right_at_any_scale_and_float_type():
    """composition_score gave NaN for float16 circuits of entries near 200 (their sum of squares
    overflows float16), for float32 near 1e20 and float64 near 1e160, and called matrices near
    1e-170 "zero" (pass twenty-three); eigenvalue_positivity failed inside numpy on float16.
    Expected: the formulas in float64 on the same stored values, brought near 1 by hand."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))

    def score(x, y):  # ||x y||_F / (||x||_F ||y||_F), on float64 values of moderate size
        return np.linalg.norm(x @ y) / (np.linalg.norm(x) * np.linalg.norm(y))

    for scale, dtype in ((100.0, np.float16), (1e20, np.float32), (1e160, np.float64), (1e-170, np.float64)):
        x, y = (a * scale).astype(dtype), (b * scale).astype(dtype)
        expected = score(x.astype(np.float64) / scale, y.astype(np.float64) / scale)
        assert c.composition_score(x, y) == pytest.approx(expected, rel=1e-12), (scale, dtype)
        lam = np.linalg.eigvals(x.astype(np.float64) / scale)
        assert c.eigenvalue_positivity(x) == pytest.approx(lam.sum().real / np.abs(lam).sum(), rel=1e-9), (scale, dtype)
    circuits = (a[None] * 100).astype(np.float16).repeat(2, axis=0)  # (2, 4, 4)
    scores = c.composition_scores(circuits, circuits, circuits)
    assert all(np.isfinite(v).all() for v in scores.values())
    assert scores["v"][0, 1] == pytest.approx(score(*(2 * [circuits[0].astype(np.float64)])), rel=1e-12)


def test_diagonal_argmax_share_by_hand_and_unchanged_by_row_scales():
    m = np.array([[3.0, 1.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 5.0]])  # rows 0 and 2 peak on the diagonal
    assert c.diagonal_argmax_share(m) == pytest.approx(2 / 3)
    assert c.diagonal_argmax_share(m * np.array([[0.1], [7.0], [2.0]])) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="square"):
        c.diagonal_argmax_share(np.ones((2, 3)))


def test_fold_layer_norm_by_hand_and_against_layer_norm():
    np.testing.assert_allclose(c.fold_layer_norm([1.0, 1.0]), [[0.5, -0.5], [-0.5, 0.5]])
    rng = np.random.default_rng(1)
    x, g, b = rng.normal(size=(5, 6)), rng.normal(size=6), rng.normal(size=6)
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + LN_EPS)
    np.testing.assert_allclose(layer_norm(x, g, b), (x / sigma) @ c.fold_layer_norm(g) + b, atol=1e-13)
    with pytest.raises(ValueError, match="g must"):
        c.fold_layer_norm(np.ones((2, 2)))


@pytest.mark.parametrize("call,words", [
    (lambda: c.composition_score(np.zeros((2, 2)), np.eye(2)), "0/0"),
    (lambda: c.composition_score(np.eye(2), np.eye(3)), "multiply"),
    (lambda: c.qk_circuit(np.eye(6), np.eye(6), 4), "n_heads"),
    (lambda: c.qk_circuit(np.eye(4), np.eye(3), 1), "same shape"),
    (lambda: c.qk_circuit(np.ones((2, 4, 4)), np.ones((2, 4, 4)), 2), "projection matrix"),
    (lambda: c.ov_circuit(np.eye(4), np.eye(3), 1), "chain"),
    (lambda: c.qk_circuit(np.eye(4), np.eye(4), 2, ln_gain=np.ones(3)), "ln_gain"),
    (lambda: c.composition_scores(np.zeros((2, 4, 4)), np.zeros((2, 3, 3)), np.zeros((2, 3, 3))), "qk_second"),
    (lambda: c.composition_scores(np.ones((2, 4, 4)), np.ones((2, 4, 4)), np.ones((3, 4, 4))), "same heads"),
    (lambda: c.eigenvalue_positivity([[np.nan, 0.0], [0.0, 1.0]]), "finite"),
    (lambda: c.tiny_decoder_circuits({}, "config"), "TinyConfig"),
])
def test_bad_input_is_refused_naming_it(call, words):
    with pytest.raises((ValueError, TypeError), match=words):
        call()


def test_a_rope_model_has_no_qk_circuit_and_is_refused():
    cfg = TinyConfig(vocab=8, method="rope", d_model=8, n_layers=1, n_heads=2)
    with pytest.raises(ValueError, match="rope"):
        c.tiny_decoder_circuits({}, cfg)


# --- the stored induction model, head by head ------------------------------------------------------

def _stored(key: str = "induction_after"):
    info = json.loads((DATA / "tiny_decoders.json").read_text())
    cfg = TinyConfig.from_dict(info["weights"]["models"][key]["config"])
    return load_weights(DATA / "tiny_decoders_weights.npz", key, cfg), cfg, info["config"]


def _own_forward(w: dict, cfg: TinyConfig, tokens: np.ndarray) -> dict:
    """The attention-only decoder with learned positions, written out here one head at a time:
    per layer the normalised input's spread sigma, each head's raw scores, weights and what the
    head adds to the residual stream; the final spread and the logits."""
    D, H = cfg.d_model, cfg.n_heads
    d = D // H
    T = tokens.shape[0]
    x = w["tok_emb"][tokens] + w["pos_emb"][:T]  # (T, D)
    layers = []
    for l in range(cfg.n_layers):
        mu = x.mean(axis=1, keepdims=True)
        sigma = np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + LN_EPS)  # (T, 1)
        h = w[f"{l}.ln1.g"] * (x - mu) / sigma + w[f"{l}.ln1.b"]
        heads = []
        for i in range(H):
            cols = slice(i * d, (i + 1) * d)
            q, k, v = h @ w[f"{l}.w_q"][:, cols], h @ w[f"{l}.w_k"][:, cols], h @ w[f"{l}.w_v"][:, cols]
            raw = q @ k.T  # (T, T), before the 1/sqrt(d)
            z = np.where(np.tril(np.ones((T, T), bool)), raw / math.sqrt(d), -np.inf)
            A = np.exp(z - z.max(axis=1, keepdims=True))
            A /= A.sum(axis=1, keepdims=True)
            heads.append(dict(raw=raw, A=A, added=A @ v @ w[f"{l}.w_o"][cols]))  # (T, d) @ (d, D)
        layers.append(dict(x=x, sigma=sigma, heads=heads))
        x = x + sum(hd["added"] for hd in heads)
    mu = x.mean(axis=1, keepdims=True)
    sigma_f = np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + LN_EPS)
    logits = (w["ln_f.g"] * (x - mu) / sigma_f + w["ln_f.b"]) @ w["w_u"] + w["b_u"]
    return dict(layers=layers, x=x, sigma_f=sigma_f, logits=logits)


def test_the_circuits_give_what_each_head_of_the_stored_model_adds_and_scores():
    """On a repeat-task sequence, with the model's own LayerNorm bias b written out: each head adds
    sum_j A_ij (x_j / sigma_j) W_OV + (b W_V^h W_O^h) to the residual stream, and its raw score is
    (x_i / sigma_i) W_QK (x_j / sigma_j)^T plus the three terms that hold b; the logits are
    (x / sigma_f) W_U' + b_f W_U + b_U. The forward pass of this file is first held to
    mhalib's (tiny_numpy.forward)."""
    w32, cfg, conf = _stored()
    w = {k: a.astype(np.float64) for k, a in w32.items()}  # the stored float32 weights, computed in float64
    ic = conf["induction"]
    tokens = make_batch(ic["task"], 1, conf["L_train"], vocab=ic["vocab"], rng=11)["tokens"][0]
    own = _own_forward(w, cfg, tokens)
    np.testing.assert_allclose(own["logits"], forward(w32, cfg, tokens)["logits"][0], atol=1e-9)
    circ = c.tiny_decoder_circuits(w32, cfg)
    d = cfg.d_head
    for l, layer in enumerate(own["layers"]):
        xh = layer["x"] / layer["sigma"]  # (T, D)
        b = w[f"{l}.ln1.b"]
        fold = c.fold_layer_norm(w[f"{l}.ln1.g"])
        for i, head in enumerate(layer["heads"]):
            cols = slice(i * d, (i + 1) * d)
            wq, wk = w[f"{l}.w_q"][:, cols], w[f"{l}.w_k"][:, cols]
            wv, wo = w[f"{l}.w_v"][:, cols], w[f"{l}.w_o"][cols]
            expected = head["A"] @ xh @ circ["ov"][l, i] + head["A"].sum(axis=1, keepdims=True) * (b @ wv @ wo)
            np.testing.assert_allclose(head["added"], expected, atol=1e-10)
            qx, kx = xh @ fold @ wq, xh @ fold @ wk  # the token-dependent parts of q and k
            bias_terms = (qx @ (b @ wk)[:, None]) + ((b @ wq)[None, :] @ kx.T) + (b @ wq) @ (b @ wk)
            np.testing.assert_allclose(head["raw"], xh @ circ["qk"][l, i] @ xh.T + bias_terms, atol=1e-9)
    bu = w["ln_f.b"] @ w["w_u"] + w["b_u"]
    np.testing.assert_allclose(own["logits"], (own["x"] / own["sigma_f"]) @ circ["w_u"] + bu, atol=1e-10)
    np.testing.assert_array_equal(circ["w_e"], w["tok_emb"])
