"""The canonical examples hold the properties the pages state about them."""
import math

import numpy as np
import pytest

import mhalib as m
from mhalib import examples


THE, CAT, SAT, DOWN = range(4)


def test_the_cat_sat_down_shape():
    ex = examples.the_cat_sat_down()
    assert ex["X"].shape == (4, 4) and ex["n_heads"] == 2


@pytest.mark.parametrize("head,token,partner", [
    # head 1 (dims 0-1): cat's strongest partner other than itself is sat, and vice versa
    pytest.param("head1", CAT, SAT, id="head1-cat-picks-sat"),
    pytest.param("head1", SAT, CAT, id="head1-sat-picks-cat"),
    # head 2 (dims 2-3): The and down pick each other
    pytest.param("head2", THE, DOWN, id="head2-The-picks-down"),
    pytest.param("head2", DOWN, THE, id="head2-down-picks-The"),
])
def test_the_cat_sat_down_heads_see_different_pairs(head, token, partner):
    weights = examples.heads_in_action("Identity")[head]
    assert np.argmax(np.where(np.eye(4, dtype=bool), -1, weights)[token]) == partner


def test_the_cat_sat_down_head1_by_hand():
    # head 1 row "cat": scores X_cat[0:2] . X_j[0:2] / sqrt(2)
    X = examples.the_cat_sat_down()["X"]
    s = X[CAT, :2] @ X[:, :2].T / math.sqrt(2)
    np.testing.assert_allclose(examples.heads_in_action("Identity")["head1"][CAT], np.exp(s) / np.exp(s).sum(), atol=1e-15)


def _row_softmax(s):
    return np.exp(s) / np.exp(s).sum(1, keepdims=True)


X_CAT = examples.the_cat_sat_down()["X"]


@pytest.mark.parametrize("preset,head,expected", [
    # W_K = diag(1, 1, -1, -1): head 1 is untouched ...
    pytest.param("Head 2 flipped", "head1", examples.heads_in_action("Identity")["head1"], id="flipped-head1-unchanged"),
    # ... and head 2's scores change sign
    pytest.param("Head 2 flipped", "head2", _row_softmax(-(X_CAT[:, 2:] @ X_CAT[:, 2:].T) / math.sqrt(2)),
                 id="flipped-head2-negated"),
    # swapped key blocks: head 1's queries (dims 0-1) meet the keys' dims 2-3
    pytest.param("Swap K blocks", "head1", _row_softmax(X_CAT[:, :2] @ X_CAT[:, 2:].T / math.sqrt(2)),
                 id="swapped-head1-crosses-blocks"),
])
def test_presets_do_what_they_say(preset, head, expected):
    np.testing.assert_allclose(examples.heads_in_action(preset)[head], expected, atol=1e-15)


def test_random_preset_follows_its_seed():
    r1 = examples.heads_in_action("Random", seed=1)
    assert np.array_equal(r1["single"], examples.heads_in_action("Random", seed=1)["single"])
    assert not np.array_equal(r1["single"], examples.heads_in_action("Random", seed=2)["single"])


def test_temperature_sharpens_and_flattens():
    cold = examples.heads_in_action("Identity", tau=0.1)["single"]
    hot = examples.heads_in_action("Identity", tau=5.0)["single"]
    assert cold.max(1).min() > hot.max(1).max()
    np.testing.assert_allclose(hot, 0.25, atol=0.05)


def test_i_like_tea():
    ex = examples.i_like_tea()
    assert np.allclose(ex["X"], [[1.1, 0.0], [0.0, 1.1], [1.1, 1.1]], atol=1e-15)


def test_dog_bites_man_same_words_same_outputs_without_position():
    ex = examples.dog_bites_man()
    E = ex["embeddings"]
    a, b = ([E[w] for w in s] for s in ex["sentences"])
    out_a, _ = m.scaled_dot_product_attention(np.array(a), np.array(a), np.array(a))
    out_b, _ = m.scaled_dot_product_attention(np.array(b), np.array(b), np.array(b))
    # "dog" is word 0 in one sentence and word 2 in the other: same output vector
    np.testing.assert_allclose(out_a[0], out_b[2], atol=1e-15)
    pe = m.sinusoidal_encoding(3, 4)
    pa, pb = np.array(a) + pe, np.array(b) + pe
    out_pa, _ = m.scaled_dot_product_attention(pa, pa, pa)
    out_pb, _ = m.scaled_dot_product_attention(pb, pb, pb)
    assert np.abs(out_pa[0] - out_pb[2]).max() > 0.1


def test_six_by_three():
    ex = examples.six_by_three()
    assert ex["X"].shape == (4, 6) and ex["W_O"].shape == (6, 6) and ex["n_heads"] == 3
    out, w = m.multi_head_attention(ex["X"], ex["W_Q"], ex["W_K"], ex["W_V"], ex["W_O"], n_heads=3)
    assert out.shape == (4, 6) and w.shape == (3, 4, 4)


def test_rope_demo():
    demo = examples.rope_demo()
    assert demo["theta"] == 0.5 and list(demo["positions"]) == [0, 1, 2, 3]
    assert np.array_equal(demo["q"], [1.0, 0.3])


@pytest.mark.parametrize("name", examples.HEADS_PRESETS)
def test_preset_weights_shapes(name):
    w = examples.heads_preset(name)
    assert w["W_Q"].shape == w["W_K"].shape == (4, 4)
