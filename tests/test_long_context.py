"""Long context: the sliding-window mask against a brute-force double loop, and multi-head latent
attention (DeepSeek-V2), naive and absorbed, with the bytes its cache holds."""
import numpy as np
import pytest

import mhalib as m


# ---- sliding window --------------------------------------------------------------------------------

def brute_force_window(T, window, S, n_sink=0):
    """Query i is the (i + S - T)-th of S positions; it sees keys j with p - window < j <= p, and
    the first n_sink keys that are not after it."""
    mask = np.zeros((T, S), bool)
    for i in range(T):
        p = i + S - T
        for j in range(S):
            mask[i, j] = (p - window + 1 <= j <= p) or (j < n_sink and j <= p)
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
    for window in (S, S + 1, 100, 2**63, 10**30):  # (2**63 overflowed int64: a bare OverflowError)
        np.testing.assert_array_equal(m.sliding_window_mask(T, window, S=S),
                                      m.causal_mask(T, S, align="bottom_right"))
        np.testing.assert_array_equal(m.sliding_window_mask(T, 1, S=S, n_sink=window),
                                      m.causal_mask(T, S, align="bottom_right"))  # every key a sink


def test_queries_before_every_key_get_zero_attention():
    """T > S: the first T - S queries see no key; attention gives them zero weights, no NaN."""
    mask = m.sliding_window_mask(5, 2, S=3)
    rng = np.random.default_rng(0)
    out, w = m.scaled_dot_product_attention(rng.normal(size=(5, 4)), rng.normal(size=(3, 4)),
                                            rng.normal(size=(3, 2)), mask)
    assert np.array_equal(w[:2], np.zeros((2, 3))) and np.array_equal(out[:2], np.zeros((2, 2)))
    np.testing.assert_allclose(w[2:].sum(axis=1), 1.0, atol=1e-15)


@pytest.mark.parametrize("T,S", [(1, 1), (7, 7), (4, 9), (9, 4), (12, 1)])
@pytest.mark.parametrize("window", [1, 3, 12])
@pytest.mark.parametrize("n_sink", [0, 1, 4, 20])
def test_window_with_sinks_equals_the_double_loop(T, S, window, n_sink):
    got = m.sliding_window_mask(T, window, S=S, n_sink=n_sink)
    assert got.dtype == np.bool_ and got.shape == (T, S)
    np.testing.assert_array_equal(got, brute_force_window(T, window, S, n_sink))


def test_sinks_by_hand():
    """Each row: the window's keys p - W < j <= p, and keys j < n_sink with j <= p."""
    # T = 5, window 2, one sink: from query 2 on, key 0 stays visible beside the last two
    np.testing.assert_array_equal(m.sliding_window_mask(5, 2, n_sink=1), np.array(
        [[1, 0, 0, 0, 0],
         [1, 1, 0, 0, 0],
         [1, 1, 1, 0, 0],
         [1, 0, 1, 1, 0],
         [1, 0, 0, 1, 1]], bool))
    # window 1 (itself only), two sinks: query 1 sees key 1 as a sink and as itself, never a later key
    np.testing.assert_array_equal(m.sliding_window_mask(4, 1, n_sink=2), np.array(
        [[1, 0, 0, 0],
         [1, 1, 0, 0],
         [1, 1, 1, 0],
         [1, 1, 0, 1]], bool))
    # two queries at positions 3 and 4 of 5 keys, window 2, two sinks; the docstring's example
    np.testing.assert_array_equal(m.sliding_window_mask(2, 2, S=5, n_sink=2), [[1, 1, 1, 1, 0], [1, 1, 0, 1, 1]])
    np.testing.assert_array_equal(m.sliding_window_mask(2, 2, S=4, n_sink=1), [[1, 1, 1, 0], [1, 0, 1, 1]])


@pytest.mark.parametrize("T,S", [(6, 6), (3, 8), (8, 3)])
def test_no_sinks_is_the_window_and_all_sinks_is_causal(T, S):
    for window in (1, 2, 5):
        np.testing.assert_array_equal(m.sliding_window_mask(T, window, S=S, n_sink=0),
                                      m.sliding_window_mask(T, window, S=S))
        for n_sink in (S, S + 3):
            np.testing.assert_array_equal(m.sliding_window_mask(T, window, S=S, n_sink=n_sink),
                                          m.causal_mask(T, S, align="bottom_right"))


@pytest.mark.parametrize("kw,exc,name", [
    (dict(T=4, window=2, n_sink=-1), ValueError, "n_sink"), (dict(T=4, window=2, n_sink=1.0), TypeError, "n_sink"),
    (dict(T=4, window=2, n_sink=True), TypeError, "n_sink"), (dict(T=4, window=2, n_sink=None), TypeError, "n_sink"),
    (dict(T=0, window=2), ValueError, "T"), (dict(T=3, window=0), ValueError, "window"),
    (dict(T=3, window=2.0), TypeError, "window"), (dict(T=3, window=2, S=0), ValueError, "S"),
    (dict(T=3, window=True), TypeError, "window"),
])
def test_sliding_window_refuses_bad_input(kw, exc, name):
    with pytest.raises(exc, match=name):
        m.sliding_window_mask(**kw)


# ---- multi-head latent attention -------------------------------------------------------------------

def torch_mla(x, w, H, *, causal=False, base=10000.0):
    """MLA written from the DeepSeek-V2 paper's equations, one head at a time, in torch float64;
    RoPE as complex rotations of the pairs (2i, 2i+1), as DeepSeek's and LLaMA's code do."""
    import math

    import torch

    t = {name: torch.tensor(a) for name, a in w.items()}
    X = torch.tensor(x)
    T, d_R = X.shape[-2], t["w_kr"].shape[1]
    d_h, d_v = t["w_uk"].shape[1] // H, t["w_uv"].shape[1] // H

    def rope(z):
        freqs = base ** (-torch.arange(0, d_R, 2, dtype=torch.float64) / d_R)
        angles = torch.outer(torch.arange(T, dtype=torch.float64), freqs)
        pairs = torch.view_as_complex(z.reshape(*z.shape[:-1], d_R // 2, 2).contiguous())
        return torch.view_as_real(pairs * torch.polar(torch.ones_like(angles), angles)).flatten(-2)

    c, k_r = X @ t["w_dkv"], rope(X @ t["w_kr"])
    heads = []
    for h in range(H):
        k = torch.cat([c @ t["w_uk"][:, h * d_h:(h + 1) * d_h], k_r], dim=-1)
        v = c @ t["w_uv"][:, h * d_v:(h + 1) * d_v]
        q = torch.cat([X @ t["w_q"][:, h * d_h:(h + 1) * d_h], rope(X @ t["w_qr"][:, h * d_R:(h + 1) * d_R])], dim=-1)
        s = q @ k.transpose(-1, -2) / math.sqrt(d_h + d_R)
        if causal:
            s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        heads.append(torch.softmax(s, dim=-1) @ v)
    return (torch.cat(heads, dim=-1) @ t["w_o"]).numpy()


MLA_SHAPES = [pytest.param((), 7, dict(d_model=24, n_heads=3, d_head=8, d_latent=12, d_rope=4), id="no-batch"),
              pytest.param((2,), 9, dict(d_model=32, n_heads=4, d_head=8, d_latent=16, d_rope=6, d_v=5), id="d_v!=d_h"),
              pytest.param((2, 3), 5, dict(d_model=16, n_heads=2, d_head=4, d_latent=40, d_rope=2), id="wide-latent")]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("lead,T,dims", MLA_SHAPES)
def test_mla_equals_the_paper_per_head_in_torch_and_absorbed_equals_naive(lead, T, dims, causal):
    w = m.mla_random_weights(**dims, seed=T)
    x = np.random.default_rng(T).normal(size=lead + (T, dims["d_model"]))
    H = dims["n_heads"]
    out, weights = m.mla_attention(x, **w, n_heads=H, causal=causal)
    assert out.shape == lead + (T, dims["d_model"]) and weights.shape == lead + (H, T, T)
    np.testing.assert_allclose(out, torch_mla(x, w, H, causal=causal), rtol=0, atol=1e-12)
    out_a, weights_a = m.mla_attention(x, **w, n_heads=H, causal=causal, absorbed=True)
    np.testing.assert_allclose(out_a, out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(weights_a, weights, rtol=0, atol=1e-12)


def test_mla_scale_and_rope_base_reach_both_forms():
    w = m.mla_random_weights(16, 2, 4, 8, 4, seed=3)
    x = np.random.default_rng(3).normal(size=(6, 16))
    base = m.mla_attention(x, **w, n_heads=2)[1]
    for kw in (dict(scale=0.9), dict(rope_base=100.0)):
        naive = m.mla_attention(x, **w, n_heads=2, **kw)[1]
        assert np.abs(naive - base).max() > 1e-3  # the option changes the weights
        np.testing.assert_allclose(m.mla_attention(x, **w, n_heads=2, absorbed=True, **kw)[1], naive,
                                   rtol=0, atol=1e-12)


def test_absorbed_mla_never_forms_per_head_keys_or_values(monkeypatch):
    import mhalib.mla as mla

    seen = []
    real = mla._project

    def spy(x, w, b, what, blame):
        seen.append(what)
        return real(x, w, b, what, blame)

    monkeypatch.setattr(mla, "_project", spy)
    w = m.mla_random_weights(16, 2, 4, 8, 4, seed=0)
    x = np.ones((3, 16))
    m.mla_attention(x, **w, n_heads=2)
    assert "the keys c @ w_uk" in seen and "the values c @ w_uv" in seen
    seen.clear()
    m.mla_attention(x, **w, n_heads=2, absorbed=True)
    assert seen and not any("w_uk" in s or "w_uv" in s for s in seen), seen


def test_mla_random_weights_are_seeded_and_shaped():
    w = m.mla_random_weights(64, 4, 16, 32, 8, d_v=12, seed=5)
    assert {k: a.shape for k, a in w.items()} == dict(
        w_dkv=(64, 32), w_uk=(32, 64), w_uv=(32, 48), w_kr=(64, 8), w_q=(64, 64), w_qr=(64, 32), w_o=(48, 64))
    again, other = m.mla_random_weights(64, 4, 16, 32, 8, d_v=12, seed=5), m.mla_random_weights(64, 4, 16, 32, 8, d_v=12)
    assert all(np.array_equal(w[k], again[k]) for k in w) and not np.array_equal(w["w_uk"], other["w_uk"])
    assert m.mla_random_weights(64, 4, 16, 32, 8)["w_uv"].shape == (32, 64)  # d_v defaults to d_head


def test_mla_cache_bytes_by_closed_form():
    # DeepSeek-V2: 60 layers, d_c = 512, d_R = 64, float16
    per_token = m.mla_cache_bytes(60, 512, 64, 1)
    assert per_token == 60 * (512 + 64) * 2 == 69_120
    assert per_token == 4.5 * 128 * 60 * 2  # the paper's (d_c + d_R) l = 9/2 d_h l elements, d_h = 128
    mha = m.kv_cache_bytes_per_token(60, 128, 128)  # its 128 heads of 128 with ordinary K and V
    assert round(mha / per_token, 1) == 56.9
    assert m.mla_cache_bytes(60, 512, 64, 4096, batch=3, dtype="float32") == 3 * 4096 * 60 * 576 * 4
    assert m.mla_cache_bytes(2, 8, 0, 10) == 10 * 2 * 8 * 2 and m.mla_cache_bytes(2, 8, 4, 0) == 0


def test_mla_cache_bytes_is_the_size_of_what_the_absorbed_form_attends_over():
    """The absorbed form reads [c ; k_R] per token, d_c + d_R numbers: the cache of one layer."""
    w = m.mla_random_weights(16, 2, 4, 8, 4)
    x = np.random.default_rng(0).normal(size=(5, 16))
    latent = np.concatenate([x @ w["w_dkv"], x @ w["w_kr"]], axis=-1)  # (T, d_c + d_R)
    assert m.mla_cache_bytes(1, 8, 4, 5, dtype="float64") == latent.nbytes


def _mla_args(**changes):
    w = m.mla_random_weights(8, 2, 4, 6, 2, seed=0)
    return dict(x=np.ones((3, 8)), **w, n_heads=2) | changes


@pytest.mark.parametrize("changes,exc,words", [
    pytest.param(dict(n_heads=3), ValueError, ["columns of w_uk", "n_heads"], id="heads-do-not-divide"),
    pytest.param(dict(w_q=np.ones((8, 6))), ValueError, ["w_q", "8 columns", "(8, 6)"], id="w_q-columns"),
    pytest.param(dict(w_qr=np.ones((8, 2))), ValueError, ["w_qr", "4 columns"], id="w_qr-columns"),
    pytest.param(dict(w_kr=np.ones((8, 3))), ValueError, ["d_rope", "even"], id="odd-rope"),
    pytest.param(dict(w_uk=np.ones((5, 8))), ValueError, ["w_uk", "6 rows"], id="w_uk-rows"),
    pytest.param(dict(w_uv=np.ones((6, 7))), ValueError, ["columns of w_uv", "n_heads"], id="w_uv-columns"),
    pytest.param(dict(w_o=np.ones((6, 8))), ValueError, ["w_o", "8 rows"], id="w_o-rows"),
    pytest.param(dict(w_dkv=np.ones((7, 6))), ValueError, ["w_dkv", "8 rows"], id="w_dkv-rows"),
    pytest.param(dict(x=np.ones(8)), ValueError, ["x", "2 dimensions"], id="x-1d"),
    pytest.param(dict(absorbed=1), TypeError, ["absorbed"], id="absorbed-int"),
    pytest.param(dict(causal="yes"), TypeError, ["causal"], id="causal-str"),
    pytest.param(dict(scale=0.0), ValueError, ["scale", "> 0"], id="scale-zero"),
    pytest.param(dict(rope_base=-1.0), ValueError, ["rope_base"], id="rope-base-negative"),
    pytest.param(dict(x=np.full((3, 8), 1e308), w_dkv=np.ones((8, 6))), ValueError, ["overflow in the latent"],
                 id="latent-overflow"),
])
def test_mla_refuses_bad_input_naming_it(changes, exc, words):
    with pytest.raises(exc) as info:
        m.mla_attention(**_mla_args(**changes))
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize("changes,words", [
    pytest.param(dict(w_uk=np.full((6, 8), 1e308)), "q W_UK^T", id="absorbed-queries"),
    pytest.param(dict(w_uv=np.full((6, 4), 1e200), w_o=np.full((4, 8), 1e200)), "W_UV W_O", id="absorbed-w_o"),
    pytest.param(dict(x=np.full((3, 8), 100.0), w_uv=np.full((6, 2), 1e200), w_o=np.full((2, 8), 1e107)),
                 "overflow in the output", id="absorbed-output"),  # d_v = 1: W_UV W_O = 1e307 fits, the output not
])
def test_absorbed_mla_refuses_overflow(changes, words):
    with pytest.raises(ValueError, match=words.replace("^", r"\^")):
        m.mla_attention(**_mla_args(**changes), absorbed=True)


@pytest.mark.parametrize("call,exc,name", [
    (lambda: m.mla_cache_bytes(0, 8, 2, 1), ValueError, "n_layers"),
    (lambda: m.mla_cache_bytes(1, 0, 2, 1), ValueError, "d_latent"),
    (lambda: m.mla_cache_bytes(1, 8, -2, 1), ValueError, "d_rope"),
    (lambda: m.mla_cache_bytes(1, 8, 2, -1), ValueError, "tokens"),
    (lambda: m.mla_cache_bytes(1, 8, 2, 1, batch=0), ValueError, "batch"),
    (lambda: m.mla_cache_bytes(1, 8, 2, 1, dtype="int3"), ValueError, "dtype"),
    (lambda: m.mla_random_weights(8, 2, 4, 6, 3), ValueError, "d_rope"),
    (lambda: m.mla_random_weights(8, 2, 4, 6, 2, d_v=0), ValueError, "d_v"),
    (lambda: m.mla_random_weights(8, 2, 4, 6, 2, seed=-1), ValueError, "seed"),
])
def test_mla_helpers_refuse_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
