"""Long context: the sliding-window mask against a brute-force double loop, and multi-head latent
attention (DeepSeek-V2), naive and absorbed, with the bytes its cache holds."""
import numpy as np
import pytest

import mhalib as m


# ---- sliding window --------------------------------------------------------------------------------

def brute_force_window(T, window, S):
    """Query i is the (i + S - T)-th of S positions; it sees keys j with p - window < j <= p."""
    mask = np.zeros((T, S), bool)
    for i in range(T):
        p = i + S - T
        for j in range(S):
            mask[i, j] = p - window + 1 <= j <= p
    return mask


@pytest.mark.parametrize("T,S", [(1, 1), (7, 7), (4, 9), (9, 4), (1, 12), (12, 1)])
@pytest.mark.parametrize("window", [1, 2, 3, 5, 12, 40])
def test_sliding_window_equals_the_double_loop(T, S, window):
    got = m.sliding_window_mask(T, window, S=S)
    assert got.dtype == np.bool_ and got.shape == (T, S)
    np.testing.assert_array_equal(got, brute_force_window(T, window, S))
    positions = np.arange(T) + S - T
    np.testing.assert_array_equal(got.sum(axis=1), np.clip(np.minimum(window, positions + 1), 0, None))


def test_square_window_by_hand_and_the_docstring_examples():
    expected = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], bool)
    np.testing.assert_array_equal(m.sliding_window_mask(4, 2), expected)
    np.testing.assert_array_equal(m.sliding_window_mask(2, 2, S=4), [[0, 1, 1, 0], [0, 0, 1, 1]])
    np.testing.assert_array_equal(m.sliding_window_mask(3, 1), np.eye(3, dtype=bool))


@pytest.mark.parametrize("T,S", [(6, 6), (3, 8), (8, 3)])
def test_a_window_as_long_as_the_keys_is_the_bottom_right_causal_mask(T, S):
    for window in (S, S + 1, 100):
        np.testing.assert_array_equal(m.sliding_window_mask(T, window, S=S),
                                      m.causal_mask(T, S, align="bottom_right"))


def test_queries_before_every_key_get_zero_attention():
    """T > S: the first T - S queries see no key; attention gives them zero weights, no NaN."""
    mask = m.sliding_window_mask(5, 2, S=3)
    rng = np.random.default_rng(0)
    out, w = m.scaled_dot_product_attention(rng.normal(size=(5, 4)), rng.normal(size=(3, 4)),
                                            rng.normal(size=(3, 2)), mask)
    assert np.array_equal(w[:2], np.zeros((2, 3))) and np.array_equal(out[:2], np.zeros((2, 2)))
    np.testing.assert_allclose(w[2:].sum(axis=1), 1.0, atol=1e-15)


@pytest.mark.parametrize("kw,exc,name", [
    (dict(T=0, window=2), ValueError, "T"), (dict(T=3, window=0), ValueError, "window"),
    (dict(T=3, window=2.0), TypeError, "window"), (dict(T=3, window=2, S=0), ValueError, "S"),
    (dict(T=3, window=True), TypeError, "window"),
])
def test_sliding_window_refuses_bad_input(kw, exc, name):
    with pytest.raises(exc, match=name):
        m.sliding_window_mask(**kw)
