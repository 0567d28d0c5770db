"""Positions, RoPE, ALiBi and value_context inside multi-head attention, against hand computations."""
import math

import numpy as np
import pytest

import mhalib as m

TOL = dict(rtol=0, atol=1e-12)


def _layer(rng, H, H_kv, d, D=None, D_out=None):
    """Random projections scaled like a trained layer: w_q (D, H*d), w_k, w_v (D, H_kv*d), w_o (H*d, D_out)."""
    D = H * d if D is None else D
    D_out = D if D_out is None else D_out

    def w(rows, cols):
        return rng.normal(scale=1 / math.sqrt(rows), size=(rows, cols))
    return w(D, H * d), w(D, H_kv * d), w(D, H_kv * d), w(H * d, D_out)


# ---- positions, RoPE, ALiBi and value_context inside multi-head attention ----------------------

def _by_hand(x, c, c_v, weights, H, H_kv, *, q_pos=None, k_pos=None, rope_base=None, layout="interleaved", **sdpa):
    """Project, split, (rotate), attend with shared K/V heads, combine, W_O: each step by hand."""
    w_q, w_k, w_v, w_o = weights
    q, k, v = m.split_heads(x @ w_q, H), m.split_heads(c @ w_k, H_kv), m.split_heads(c_v @ w_v, H_kv)
    if rope_base is not None:
        q = m.apply_rope(q, q_pos, base=rope_base, layout=layout)  # (B, H, T, d)
        k = m.apply_rope(k, k_pos, base=rope_base, layout=layout)  # (B, H_kv, S, d)
    g = H // H_kv
    out, w = m.scaled_dot_product_attention(q, np.repeat(k, g, axis=1), np.repeat(v, g, axis=1), **sdpa)
    return m.combine_heads(out) @ w_o, w


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("case", ["self", "self-positions", "cross", "cross-positions"])
def test_rope_inside_mha_equals_apply_rope_by_hand(case, layout):
    rng = np.random.default_rng(30)
    H, H_kv, B, T, S, d = 4, 2, 2, 5, 7, 4
    x = rng.normal(size=(B, T, H * d))
    c = rng.normal(size=(B, S, H * d)) if case.startswith("cross") else x
    weights = _layer(rng, H, H_kv, d)
    q_pos = np.arange(T) + 3.0 if case.endswith("positions") else np.arange(T)
    k_pos = q_pos if case.startswith("self") else np.arange(S)  # keys: the context's own positions
    kw = dict(positions=q_pos) if case.endswith("positions") else {}
    ours, w_ours = m.multi_head_attention(x, *weights, n_heads=H, n_kv_heads=H_kv, causal=True, rope_base=500.0,
                                          rope_layout=layout, context=None if case.startswith("self") else c, **kw)
    hand, w_hand = _by_hand(x, c, c, weights, H, H_kv, q_pos=q_pos, k_pos=k_pos, rope_base=500.0, layout=layout,
                            causal=True)
    np.testing.assert_allclose(ours, hand, **TOL)
    np.testing.assert_allclose(w_ours, w_hand, **TOL)


def test_rope_sees_only_offsets_shifting_every_position_changes_nothing():
    rng = np.random.default_rng(31)
    H, d, T = 2, 4, 6
    x = rng.normal(size=(T, H * d))
    weights = _layer(rng, H, H, d)
    at_0, _ = m.multi_head_attention(x, *weights, n_heads=H, rope_base=10000.0)
    at_100, _ = m.multi_head_attention(x, *weights, n_heads=H, rope_base=10000.0, positions=np.arange(T) + 100)
    plain, _ = m.multi_head_attention(x, *weights, n_heads=H)
    np.testing.assert_allclose(at_100, at_0, atol=1e-12)
    assert np.abs(at_0 - plain).max() > 1e-3  # and RoPE does change the result


def test_trace_holds_the_rotated_heads():
    rng = np.random.default_rng(32)
    H, d, T = 2, 4, 3
    x = rng.normal(size=(T, H * d))
    weights = _layer(rng, H, 1, d)
    t = m.mha_trace(x, *weights, n_heads=H, n_kv_heads=1, rope_base=10000.0)
    np.testing.assert_array_equal(t["k_heads"], m.apply_rope(m.split_heads(t["k"], 1), base=10000.0))
    np.testing.assert_array_equal(t["q_heads"], m.apply_rope(m.split_heads(t["q"], H), base=10000.0))


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "bidirectional"])
@pytest.mark.parametrize("H", [4, 6], ids=lambda h: f"H={h}")
def test_alibi_inside_mha_equals_adding_alibi_bias(H, causal):
    rng = np.random.default_rng(40 + H)
    d, T = 2, 6
    x = rng.normal(size=(2, T, H * d))
    weights = _layer(rng, H, H, d)
    ours, w_ours = m.multi_head_attention(x, *weights, n_heads=H, alibi=True, causal=causal)
    added, w_added = m.multi_head_attention(x, *weights, n_heads=H, bias=m.alibi_bias(T, H, causal=causal),
                                            causal=causal)
    np.testing.assert_allclose(ours, added, **TOL)
    np.testing.assert_allclose(w_ours, w_added, **TOL)
    plain, _ = m.multi_head_attention(x, *weights, n_heads=H, causal=causal)
    assert np.abs(ours - plain).max() > 1e-3


def test_alibi_with_a_bias_of_its_own_adds_both():
    rng = np.random.default_rng(43)
    H, d, T = 2, 2, 4
    x = rng.normal(size=(T, H * d))
    weights = _layer(rng, H, H, d)
    extra = rng.normal(size=(T, T))
    ours, _ = m.multi_head_attention(x, *weights, n_heads=H, alibi=True, bias=extra, causal=True)
    added, _ = m.multi_head_attention(x, *weights, n_heads=H, bias=m.alibi_bias(T, H) + extra, causal=True)
    np.testing.assert_allclose(ours, added, **TOL)


def test_alibi_decoding_positions_equal_the_full_pass():
    """The last query at position T-1 against all T keys: ALiBi sees the true distances."""
    rng = np.random.default_rng(44)
    H, d, T = 4, 2, 6
    x = rng.normal(size=(1, T, H * d))
    weights = _layer(rng, H, H, d)
    full, _ = m.multi_head_attention(x, *weights, n_heads=H, alibi=True, causal=True)
    last, _ = m.multi_head_attention(x[:, -1:], *weights, n_heads=H, alibi=True, context=x, positions=[T - 1])
    np.testing.assert_allclose(last, full[:, -1:], **TOL)


@pytest.mark.parametrize("self_attention", [True, False], ids=["keys-from-x", "keys-from-context"])
def test_value_context_equals_a_hand_computation(self_attention):
    rng = np.random.default_rng(50)
    H, H_kv, B, T, d = 4, 2, 2, 5, 3
    S = T if self_attention else 6
    x = rng.normal(size=(B, T, H * d))
    c = x if self_attention else rng.normal(size=(B, S, 7))
    c_v = rng.normal(size=(B, S, 9))  # values from another sequence, with its own width
    w_q, w_k, _, w_o = _layer(rng, H, H_kv, d, D=H * d)
    w_k = rng.normal(size=(c.shape[-1], H_kv * d)) / math.sqrt(c.shape[-1])
    w_v = rng.normal(size=(9, H_kv * d)) / 3
    ours, w_ours = m.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=H, n_kv_heads=H_kv,
                                          context=None if self_attention else c, value_context=c_v)
    hand, w_hand = _by_hand(x, c, c_v, (w_q, w_k, w_v, w_o), H, H_kv)
    np.testing.assert_allclose(ours, hand, **TOL)
    np.testing.assert_allclose(w_ours, w_hand, **TOL)
    other, _ = m.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=H, n_kv_heads=H_kv,
                                      context=None if self_attention else c, value_context=c_v[:, ::-1])
    assert other.shape == ours.shape
    assert np.abs(ours - other).max() > 1e-3  # the values really come from value_context
