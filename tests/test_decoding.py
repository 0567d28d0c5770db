"""Cached decoding: KV-cache steps against the full causal pass, RoPE / ALiBi / value_context
inside multi-head attention against hand computations, torch's SDPA (enable_gqa) and
transformers' DynamicCache; the stored decode measurements (CPU and GPU) are consistent."""
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import mhalib as m
from mhalib.torch_ref import torch_sdpa

ROOT = Path(__file__).resolve().parents[1]
TOL = dict(rtol=0, atol=1e-12)
HEADS = [pytest.param(4, 4, id="MHA-H_kv=4"), pytest.param(4, 2, id="GQA-H_kv=2"), pytest.param(4, 1, id="MQA-H_kv=1")]
ROPE = [pytest.param(None, "interleaved", id="no-rope"), pytest.param(10000.0, "interleaved", id="rope-interleaved"),
        pytest.param(100.0, "half", id="rope-half-base=100")]


def _layer(rng, H, H_kv, d, D=None, D_out=None):
    """Random projections scaled like a trained layer: w_q (D, H*d), w_k, w_v (D, H_kv*d), w_o (H*d, D_out)."""
    D = H * d if D is None else D
    D_out = D if D_out is None else D_out

    def w(rows, cols):
        return rng.normal(scale=1 / math.sqrt(rows), size=(rows, cols))
    return w(D, H * d), w(D, H_kv * d), w(D, H_kv * d), w(H * d, D_out)


def _decode_all(x, weights, H, H_kv, d, *, rope_base=None, rope_layout="interleaved", chunks=None):
    """Feed ``x (B, T, D)`` to decode_step from an empty cache, in the given chunk sizes (default: one token each)."""
    B, T, _ = x.shape
    cache = m.KVCache(batch=B, n_kv_heads=H_kv, d_head=d)
    chunks = chunks or [1] * T
    outs, weights_seen, start = [], [], 0
    for t in chunks:
        out, w = m.decode_step(x[:, start:start + t], cache, *weights, n_heads=H, n_kv_heads=H_kv,
                               rope_base=rope_base, rope_layout=rope_layout)
        outs.append(out)
        weights_seen.append(w)
        start += t
    return np.concatenate(outs, axis=1), weights_seen, cache


# ---- decoding reproduces the full causal pass --------------------------------------------------

@pytest.mark.parametrize("rope_base,layout", ROPE)
@pytest.mark.parametrize("H,H_kv", HEADS)
def test_decode_steps_from_an_empty_cache_reproduce_the_causal_full_pass(H, H_kv, rope_base, layout):
    rng = np.random.default_rng(H_kv)
    B, T, d = 2, 7, 4
    x = rng.normal(size=(B, T, H * d))
    weights = _layer(rng, H, H_kv, d)
    full, full_w = m.multi_head_attention(x, *weights, n_heads=H, n_kv_heads=H_kv, causal=True,
                                          rope_base=rope_base, rope_layout=layout)
    steps, step_w, cache = _decode_all(x, weights, H, H_kv, d, rope_base=rope_base, rope_layout=layout)
    assert steps.shape == (B, T, H * d) and cache.length() == T
    np.testing.assert_allclose(steps, full, **TOL)
    for t, w in enumerate(step_w):
        assert w.shape == (B, H, 1, t + 1)  # one query against the t + 1 tokens cached so far
        np.testing.assert_allclose(w[:, :, 0], full_w[:, :, t, : t + 1], **TOL)
        assert np.all(full_w[:, :, t, t + 1:] == 0)  # the full pass gives the future nothing


@pytest.mark.parametrize("H,H_kv", HEADS)
def test_a_token_given_as_B_by_D_is_one_step(H, H_kv):
    rng = np.random.default_rng(3)
    B, d = 3, 2
    x = rng.normal(size=(B, 2, H * d))
    weights = _layer(rng, H, H_kv, d)
    a = m.KVCache(batch=B, n_kv_heads=H_kv, d_head=d)
    b = m.KVCache(batch=B, n_kv_heads=H_kv, d_head=d)
    for t in range(2):
        out_2d, w_2d = m.decode_step(x[:, t], a, *weights, n_heads=H, n_kv_heads=H_kv, rope_base=10000.0)
        out_3d, w_3d = m.decode_step(x[:, t:t + 1], b, *weights, n_heads=H, n_kv_heads=H_kv, rope_base=10000.0)
        assert out_2d.shape == (B, 1, H * d) and w_2d.shape == (B, H, 1, t + 1)
        np.testing.assert_array_equal(out_2d, out_3d)
        np.testing.assert_array_equal(w_2d, w_3d)


def test_the_first_step_attends_to_itself_only():
    rng = np.random.default_rng(4)
    H, d = 2, 3
    x = rng.normal(size=(1, 1, H * d))
    w_q, w_k, w_v, w_o = _layer(rng, H, H, d)
    cache = m.KVCache(n_kv_heads=H, d_head=d)
    out, w = m.decode_step(x, cache, w_q, w_k, w_v, w_o, n_heads=H)
    assert np.array_equal(w, np.ones((1, H, 1, 1)))
    np.testing.assert_allclose(out, x @ w_v @ w_o, **TOL)  # its own value, through W_O


@pytest.mark.parametrize("P", [1, 3, 6])
@pytest.mark.parametrize("H,H_kv", HEADS)
def test_a_prompt_in_one_pass_then_single_steps_equals_the_full_pass(H, H_kv, P):
    rng = np.random.default_rng(10 + P)
    B, T, d = 2, 8, 4
    x = rng.normal(size=(B, T, H * d))
    weights = _layer(rng, H, H_kv, d)
    full, _ = m.multi_head_attention(x, *weights, n_heads=H, n_kv_heads=H_kv, causal=True, rope_base=10000.0)
    out, step_w, cache = _decode_all(x, weights, H, H_kv, d, rope_base=10000.0, chunks=[P] + [1] * (T - P))
    assert step_w[0].shape == (B, H, P, P) and cache.length() == T
    np.testing.assert_allclose(out, full, **TOL)


@pytest.mark.parametrize("rope_base,layout", ROPE)
def test_a_chunk_after_the_prompt_needs_the_bottom_right_causal_mask(rope_base, layout):
    """The chunk's t queries are the last t of S tokens: query i sits at position P + i.
    Bottom-right alignment gives the full pass's rows; top-left (torch's is_causal) hides
    keys the queries may see, and gives a different, wrong result."""
    rng = np.random.default_rng(21)
    H, H_kv, B, d, P, t = 4, 2, 2, 4, 5, 3
    S = P + t
    x = rng.normal(size=(B, S, H * d))
    weights = _layer(rng, H, H_kv, d)
    kw = dict(n_heads=H, n_kv_heads=H_kv, rope_base=rope_base, rope_layout=layout)
    full, _ = m.multi_head_attention(x, *weights, causal=True, **kw)
    pos = dict(positions=np.arange(P, S)) if rope_base is not None else {}
    chunk = {align: m.multi_head_attention(x[:, P:], *weights, context=x, mask=m.causal_mask(t, S, align=align),
                                           **pos, **kw)[0]
             for align in ("bottom_right", "top_left")}
    np.testing.assert_allclose(chunk["bottom_right"], full[:, P:], **TOL)
    assert np.abs(chunk["top_left"] - full[:, P:]).max() > 1e-3
    # decode_step does the same with its cache: a prompt of P, then the chunk of t in one call
    out, _, _ = _decode_all(x, weights, H, H_kv, d, rope_base=rope_base, rope_layout=layout, chunks=[P, t])
    np.testing.assert_allclose(out, full, **TOL)


def test_a_refused_step_leaves_the_cache_unchanged():
    rng = np.random.default_rng(5)
    H, d = 2, 2
    x = rng.normal(size=(1, 2, H * d))
    w_q, w_k, w_v, w_o = _layer(rng, H, H, d)
    cache = m.KVCache(n_kv_heads=H, d_head=d)
    m.decode_step(x[:, 0], cache, w_q, w_k, w_v, w_o, n_heads=H)
    keys = cache.keys().copy()
    with pytest.raises(ValueError, match="w_o"):
        m.decode_step(x[:, 1], cache, w_q, w_k, w_v, np.ones((3, 4)), n_heads=H)
    assert cache.length() == 1 and np.array_equal(cache.keys(), keys)


# ---- the cache itself ----------------------------------------------------------------------------

def test_kv_cache_append_length_and_bytes():
    rng = np.random.default_rng(6)
    B, H_kv, d = 2, 3, 4
    cache = m.KVCache(2, batch=B, n_kv_heads=H_kv, d_head=d)
    assert cache.length(0) == cache.length(1) == 0 and cache.keys(1).shape == (B, H_kv, 0, d)
    k1, v1 = rng.normal(size=(B, H_kv, 5, d)), rng.normal(size=(B, H_kv, 5, d))
    k2, v2 = rng.normal(size=(B, H_kv, 1, d)), rng.normal(size=(B, H_kv, 1, d))
    cache.append(0, k1, v1)
    keys, values = cache.append(0, k2, v2)
    assert np.array_equal(keys, np.concatenate([k1, k2], axis=2)) and np.array_equal(values, np.concatenate([v1, v2], axis=2))
    assert keys is cache.keys(0) and values is cache.values(0)
    assert cache.length(0) == 6 and cache.length(1) == 0  # layers are independent
    assert "lengths=[6, 0]" in repr(cache) and "n_kv_heads=3" in repr(cache)
    assert cache.nbytes == m.kv_cache_bytes(1, H_kv, d, 6, batch=B, dtype="float64") == 2 * B * H_kv * 6 * d * 8
    cache.append(1, k1, v1)
    assert cache.nbytes == m.kv_cache_bytes(1, H_kv, d, 11, batch=B, dtype="float64")
    with pytest.raises(ValueError, match="read-only"):
        keys[0, 0, 0, 0] = 1.0  # handed-out arrays cannot change the cache behind its back


def test_kv_cache_stores_its_dtype():
    cache = m.KVCache(n_kv_heads=1, d_head=2, dtype=np.float16)
    keys, values = cache.append(0, np.full((1, 1, 3, 2), 1 / 3), np.ones((1, 1, 3, 2)))
    assert keys.dtype == values.dtype == np.float16 and keys[0, 0, 0, 0] == np.float16(1 / 3)
    assert cache.nbytes == m.kv_cache_bytes(1, 1, 2, 3, dtype="float16") == 24


def test_the_cache_shrinks_by_h_over_h_kv_with_gqa():
    per = {H_kv: m.kv_cache_bytes(32, H_kv, 128, 4096) for H_kv in (32, 8, 1)}
    assert per[32] == 4 * per[8] == 32 * per[1] == 2 * 32 * 32 * 128 * 2 * 4096


@pytest.mark.parametrize("call,expected", [
    pytest.param(lambda: m.kv_cache_bytes(80, 8, 128, 4096), 4096 * 327_680, id="llama2-70b-4k-tokens"),
    pytest.param(lambda: m.kv_cache_bytes(80, 8, 128, 4096), 1_342_177_280, id="llama2-70b-4k-1.25GiB"),
    pytest.param(lambda: m.kv_cache_bytes(2, 4, 16, 10, batch=3, dtype="float32"), 3 * 10 * 2 * 2 * 4 * 16 * 4, id="batch-fp32"),
    pytest.param(lambda: m.kv_cache_bytes(2, 4, 16, 0), 0, id="empty-cache"),
])
def test_kv_cache_bytes(call, expected):
    assert call() == expected


def test_kv_cache_bytes_is_batch_times_tokens_times_per_token():
    assert m.kv_cache_bytes(12, 4, 64, 100, batch=2, dtype="bfloat16") == 2 * 100 * m.kv_cache_bytes_per_token(12, 4, 64, dtype="bfloat16")


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


# ---- torch and transformers ----------------------------------------------------------------------

@pytest.mark.parametrize("H,H_kv", HEADS[1:])
def test_gqa_decoding_matches_torch_sdpa_with_enable_gqa(H, H_kv):
    rng = np.random.default_rng(60)
    B, T, d = 2, 6, 4
    x = rng.normal(size=(B, T, H * d))
    w_q, w_k, w_v, _ = _layer(rng, H, H_kv, d)
    cache = m.KVCache(batch=B, n_kv_heads=H_kv, d_head=d)
    for t in range(T):
        ours, _ = m.decode_step(x[:, t], cache, w_q, w_k, w_v, n_heads=H, n_kv_heads=H_kv, rope_base=10000.0)
        q = m.apply_rope(m.split_heads(x[:, t:t + 1] @ w_q, H), [t], base=10000.0)  # (B, H, 1, d), by hand
        theirs = torch_sdpa(q, cache.keys().copy(), cache.values().copy(), n_rep=H // H_kv)  # enable_gqa=True
        np.testing.assert_allclose(ours, m.combine_heads(theirs), **TOL)


def test_cache_contents_equal_transformers_dynamic_cache():
    transformers = pytest.importorskip("transformers")
    rng = np.random.default_rng(61)
    n_layers, H, H_kv, B, T, d = 2, 4, 2, 2, 5, 4
    x = rng.normal(size=(B, T, H * d))
    layers = [_layer(rng, H, H_kv, d) for _ in range(n_layers)]
    ours = m.KVCache(n_layers, batch=B, n_kv_heads=H_kv, d_head=d)
    theirs = transformers.DynamicCache()
    for t in range(T):
        h = x[:, t:t + 1]  # (B, 1, D): each layer's output feeds the next
        for li, (w_q, w_k, w_v, w_o) in enumerate(layers):
            k = m.apply_rope(m.split_heads(h @ w_k, H_kv), [t], base=10000.0)  # (B, H_kv, 1, d), by hand
            v = m.split_heads(h @ w_v, H_kv)  # (B, H_kv, 1, d)
            k_all, v_all = theirs.update(torch.from_numpy(k), torch.from_numpy(v), li)
            h, _ = m.decode_step(h, ours, w_q, w_k, w_v, w_o, n_heads=H, n_kv_heads=H_kv, rope_base=10000.0, layer=li)
            assert theirs.get_seq_length(li) == ours.length(li) == t + 1
            np.testing.assert_allclose(ours.keys(li), k_all.numpy(), rtol=0, atol=1e-15)
            np.testing.assert_allclose(ours.values(li), v_all.numpy(), rtol=0, atol=1e-15)
            np.testing.assert_allclose(ours.keys(li), theirs.layers[li].keys.numpy(), rtol=0, atol=1e-15)


# ---- the stored measurements -------------------------------------------------------------------

def _decode_files():
    cpu = ROOT / "figures" / "data" / "decode_cpu.json"
    gpu = ROOT / "figures" / "data" / "decode_gqa_h100.json"
    if not gpu.exists():
        gpu = ROOT.parent / "shared" / "data" / "decode_gqa_h100.json"
    return [pytest.param(cpu, id="decode_cpu"), pytest.param(gpu, id="decode_gqa_h100")]


BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


@pytest.mark.parametrize("path", _decode_files())
def test_stored_decode_measurements_are_consistent(path):
    if not path.exists():
        pytest.skip(f"{path.name} is in neither figures/data/ nor ../shared/data/ (the GPU measurements "
                    "live beside the repository; copy it into figures/data/ to test it)")
    data = json.loads(path.read_text())
    assert {"batch", "q_heads", "d_head", "dtype", "rows", "machine"} <= data.keys()
    B, d, size = data["batch"], data["d_head"], BYTES[data["dtype"]]
    assert data["q_heads"] == 32 and d == 128
    keys = [(r["context"], r["kv_heads"]) for r in data["rows"]]
    assert len(keys) == len(set(keys)), "one row per (context, kv_heads)"
    contexts = sorted({c for c, _ in keys})
    assert set(keys) == {(c, h) for c in contexts for h in (32, 8, 1)} and len(contexts) >= 3
    for r in data["rows"]:
        assert set(r) == {"context", "kv_heads", "kv_cache_bytes", "ms_median", "achieved_GBps", "ms_median_kv_repeated"}
        assert r["kv_cache_bytes"] == 2 * B * r["kv_heads"] * r["context"] * d * size
        assert r["ms_median"] > 0 and r["ms_median_kv_repeated"] > 0
        assert r["achieved_GBps"] == pytest.approx(r["kv_cache_bytes"] / (r["ms_median"] * 1e-3) / 1e9, rel=1e-9)
    machine = data["machine"]
    assert machine["device_copy_GBps_read_plus_write"] > 0 and machine["measured_on"][:2] == "20"
    assert "torch" in machine and ("cpu" in machine or "gpu" in machine)
    if "cpu" in machine:
        assert machine["cores"] >= 1 and machine["threads"] >= 1
