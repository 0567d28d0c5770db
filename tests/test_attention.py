"""Softmax, masks and scaled dot-product attention, against closed forms and hand values."""
import math

import numpy as np
import pytest

import mhalib as m
from mhalib import examples

E = math.e


def test_softmax_closed_form():
    x = np.array([1.0, 0.0, 0.5])
    expected = np.exp(x) / np.exp(x).sum()
    np.testing.assert_allclose(m.softmax(x), expected, rtol=0, atol=1e-15)


def test_softmax_fully_masked_row_is_zero_not_nan():
    x = np.array([[0.0, -np.inf], [-np.inf, -np.inf]])
    out = m.softmax(x)
    assert np.array_equal(out, [[1.0, 0.0], [0.0, 0.0]])


def test_softmax_large_scores_stay_finite():
    # 1e4 would overflow exp in any float type; the stable softmax shifts it to 0.
    out = m.softmax(np.array([1e4, 1e4 - 1.0], dtype=np.float32))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [E / (E + 1), 1 / (E + 1)], rtol=1e-6)


def test_softmax_other_axis():
    x = np.array([[0.0, 1.0], [0.0, 1.0]])
    np.testing.assert_allclose(m.softmax(x, axis=0), np.full((2, 2), 0.5))


def test_float32_exp_threshold_is_just_under_128_ln_2():
    threshold = m.exp_overflow_threshold("float32")
    # float32's largest value is (2 - 2^-23) * 2^127, so ln(max) is just under 128 ln 2.
    assert threshold == pytest.approx(128 * math.log(2), abs=1e-6)
    assert threshold == pytest.approx(88.72, abs=0.005)


@pytest.mark.parametrize("score,naive_overflows", [pytest.param(88.0, False, id="88-below-threshold"),
                                                   pytest.param(89.0, True, id="89-above-threshold")])
def test_naive_softmax_overflows_above_threshold_in_float32(score, naive_overflows):
    x = np.array([score, 0.0], dtype=np.float32)
    assert np.isnan(m.naive_softmax(x)).any() == naive_overflows
    assert np.all(np.isfinite(m.softmax(x)))  # the stable softmax never does


def test_float16_exp_threshold_is_ln_65504():
    assert m.exp_overflow_threshold("float16") == pytest.approx(math.log(65504), abs=1e-9)


@pytest.mark.parametrize("value,stored", [pytest.param(-1e9, -math.inf, id="-1e9-becomes--inf"),
                                          pytest.param(-1e4, -10000.0, id="-1e4-fits")])
def test_mask_constant_stored_in_float16(value, stored):
    assert m.masked_fill_value(value, "float16") == stored


@pytest.mark.parametrize("T,S,align,expected", [
    pytest.param(3, None, "top_left", np.tril(np.ones((3, 3), bool)), id="square"),
    pytest.param(2, 4, "top_left", [[1, 0, 0, 0], [1, 1, 0, 0]], id="T<S-top-left"),
    pytest.param(2, 4, "bottom_right", [[1, 1, 1, 0], [1, 1, 1, 1]], id="T<S-bottom-right"),
    # More queries than keys, bottom-right: the first T-S queries see nothing.
    pytest.param(3, 2, "bottom_right", [[0, 0], [1, 0], [1, 1]], id="T>S-bottom-right"),
])
def test_causal_mask(T, S, align, expected):
    assert np.array_equal(m.causal_mask(T, S, align=align), np.array(expected, bool))


def test_causal_top_left_when_T_ne_S():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(2, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    _, w = m.scaled_dot_product_attention(q, k, v, causal=True)
    # query 0 sees key 0 only, query 1 sees keys 0-1
    assert np.array_equal(w[0, 1:], np.zeros(4)) and w[0, 0] == 1.0
    assert np.array_equal(w[1, 2:], np.zeros(3))


def test_fully_masked_query_gets_zero_output():
    q = np.ones((3, 2))
    k = np.ones((2, 2))
    v = np.ones((2, 2))
    out, w = m.scaled_dot_product_attention(q, k, v, mask=m.causal_mask(3, 2, align="bottom_right"))
    assert np.array_equal(w[0], [0.0, 0.0]) and np.array_equal(out[0], [0.0, 0.0])
    assert not np.isnan(out).any()


def test_padding_mask_shape_and_effect():
    pm = m.padding_mask(np.array([2, 3]), 3)
    assert pm.shape == (2, 1, 1, 3)
    rng = np.random.default_rng(0)
    q = rng.normal(size=(2, 1, 3, 4))
    _, w = m.scaled_dot_product_attention(q, q, q, mask=pm)
    assert np.all(w[0, :, :, 2] == 0.0) and np.all(w[1, :, :, 2] > 0.0)


def test_split_heads_identity_example():
    ex = examples.split_heads_identity()
    q = m.split_heads(ex["Q"], 2)  # (T, D) -> (H, T, d)
    assert q.shape == (2, 2, 1)
    out, w = m.scaled_dot_product_attention(q, m.split_heads(ex["K"], 2), m.split_heads(ex["V"], 2))
    s = E / (E + 1)
    np.testing.assert_allclose(w[0], [[s, 1 - s], [0.5, 0.5]], atol=1e-15)
    np.testing.assert_allclose(w[1], [[0.5, 0.5], [1 - s, s]], atol=1e-15)
    combined = m.combine_heads(out)
    np.testing.assert_allclose(combined, [[0.73105858, 0.5], [0.5, 0.73105858]], atol=5e-9)
    full, _ = m.multi_head_attention(ex["Q"], np.eye(2), np.eye(2), np.eye(2), n_heads=2)
    np.testing.assert_allclose(full, combined, atol=0)


def _cat_sat_mat():
    ex = examples.cat_sat_mat()
    X = ex["X"]
    return X @ ex["W_Q"], X @ ex["W_K"], X @ ex["W_V"]


def test_cat_sat_mat_qkv_table_from_the_notes():
    q, k, v = _cat_sat_mat()
    assert np.array_equal(q, [[1, 0], [0, 1], [1, 0]])
    assert np.array_equal(k, [[1, 0], [0, 1], [0.5, 0.5]])
    assert np.array_equal(v, [[2, 0], [0, 2], [1.5, 0.5]])


def test_cat_sat_mat_weights_and_outputs_exact_and_rounded():
    q, k, v = _cat_sat_mat()
    out, w = m.scaled_dot_product_attention(q, k, v, scale=1.0)
    z = E + 1 + math.exp(0.5)
    a, b, c = E / z, 1 / z, math.exp(0.5) / z  # weights on the "same", "other", "mat" key
    np.testing.assert_allclose(w, [[a, b, c], [b, a, c], [a, b, c]], atol=1e-15)
    # The notes print the weights rounded to two decimals ...
    notes_weights = np.array([[0.51, 0.19, 0.31], [0.19, 0.51, 0.31], [0.51, 0.19, 0.31]])
    assert np.array_equal(np.round(w, 2), notes_weights)
    # ... the exact outputs are (2a + 1.5c, 2b + 0.5c) and (2b + 1.5c, 2a + 0.5c):
    exact_cat = (2 * a + 1.5 * c, 2 * b + 0.5 * c)
    exact_sat = (2 * b + 1.5 * c, 2 * a + 0.5 * c)
    np.testing.assert_allclose(out[0], exact_cat, atol=1e-14)
    np.testing.assert_allclose(out[1], exact_sat, atol=1e-14)
    np.testing.assert_allclose(out[0], [1.4738, 0.5262], atol=5e-5)
    np.testing.assert_allclose(out[1], [0.8334, 1.1666], atol=5e-5)
    # ... and the notes' outputs (1.48, 0.53), (0.84, 1.17) come from the *rounded* weights:
    notes_out = np.array([[1.48, 0.53], [0.84, 1.17]])
    from_rounded = notes_weights[:2] @ v
    assert np.all(np.abs(from_rounded - notes_out) <= 0.0051)
    # which is off from the exact result in the second decimal:
    assert np.max(np.abs(notes_out - out[:2])) > 0.006


def test_cat_sat_mat_causal():
    q, k, v = _cat_sat_mat()
    out, w = m.scaled_dot_product_attention(q, k, v, scale=1.0, causal=True)
    s = E / (E + 1)
    z = E + 1 + math.exp(0.5)
    expected = [[1, 0, 0], [1 - s, s, 0], [E / z, 1 / z, math.exp(0.5) / z]]
    np.testing.assert_allclose(w, expected, atol=1e-15)
    assert np.array_equal(np.round(w, 2), [[1, 0, 0], [0.27, 0.73, 0], [0.51, 0.19, 0.31]])
    np.testing.assert_allclose(out[0], [2.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(out[1], [2 * (1 - s), 2 * s], atol=1e-15)


def test_scaled_example_default_scale():
    q, k, v = _cat_sat_mat()
    _, w = m.scaled_dot_product_attention(q, k, v)  # 1/sqrt(2)
    r = 1 / math.sqrt(2)
    z = math.exp(r) + 1 + math.exp(0.5 * r)
    np.testing.assert_allclose(w[0], [math.exp(r) / z, 1 / z, math.exp(0.5 * r) / z], atol=1e-15)


@pytest.mark.parametrize("d_head", [4, 64, pytest.param(512, marks=pytest.mark.slow)], ids=lambda d: f"d_head={d}")
def test_dot_product_variance_is_d_head(d_head):
    n = 100_000
    var = m.dot_product_variance(d_head, n, seed=d_head)
    # Var of the sample variance of s = q.k: E s^4 - (E s^2)^2 = (3d^2 + 6d) - d^2 = 2d^2 + 6d,
    # so the relative standard error is sqrt((2 + 6/d) / n) (0.45% to 0.6% here). Allow 5 of them.
    rel_se = math.sqrt((2 + 6 / d_head) / n)
    assert abs(var / d_head - 1) < 5 * rel_se


def test_softmax_saturates_without_scaling():
    unscaled = m.max_attention_weight(512, scaled=False, seed=3)
    scaled = m.max_attention_weight(512, scaled=True, seed=3)
    # Unscaled scores have std sqrt(512) ~ 22.6: the top key takes nearly everything.
    assert unscaled > 0.9
    # Scaled scores have std 1 over 16 keys: the top weight is a modest share.
    assert scaled < 0.4
    assert m.max_attention_weight(4, scaled=False, seed=3) < unscaled
    # both from one sample: exactly what the two calls give
    assert m.max_attention_weights(512, seed=3) == {"unscaled": unscaled, "scaled": scaled}


def test_attention_bias_is_added_before_softmax():
    q = np.zeros((2, 3))
    k = np.zeros((4, 3))
    v = np.eye(4)
    bias = np.array([0.0, 1.0, 2.0, 3.0])
    _, w = m.scaled_dot_product_attention(q, k, v, bias=bias)
    np.testing.assert_allclose(w[0], np.exp(bias) / np.exp(bias).sum(), atol=1e-15)


def test_mask_broadcasts_over_batch_and_heads():
    rng = np.random.default_rng(2)
    q = rng.normal(size=(2, 3, 4, 5))  # (B, H, T, d)
    mask = rng.random((2, 1, 4, 4)) > 0.3
    mask[..., 0] = True
    _, w = m.scaled_dot_product_attention(q, q, q, mask=mask)
    assert np.all(w[~np.broadcast_to(mask, w.shape)] == 0)
    np.testing.assert_allclose(w.sum(-1), 1.0)
