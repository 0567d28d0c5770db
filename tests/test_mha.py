"""Multi-head attention: torch agreement, algebraic identities, counts."""
import math

import numpy as np
import pytest
import torch

import mhalib as m
from mhalib.torch_ref import torch_mha, torch_sdpa

F64 = dict(rtol=0, atol=1e-10)
# torch.testing.assert_close's defaults for float32
F32 = dict(rtol=1.3e-6, atol=1e-5)


def _weights(rng, D_in, cols):
    return rng.normal(scale=1 / math.sqrt(D_in), size=(D_in, cols))


SEED_IDS = dict(ids=lambda s: f"seed={s}")


@pytest.mark.parametrize("variant", ["plain", "mask", "causal", "scale=0.3"])
@pytest.mark.parametrize("seed", range(6), **SEED_IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sdpa_matches_torch(seed, dtype, variant):
    rng = np.random.default_rng(seed)
    B, H = rng.integers(1, 3), rng.integers(1, 4)
    T, S = rng.integers(1, 7), rng.integers(1, 7)
    d, d_v = rng.integers(1, 9), rng.integers(1, 9)
    q = rng.normal(size=(B, H, T, d)).astype(dtype)
    k = rng.normal(size=(B, H, S, d)).astype(dtype)
    v = rng.normal(size=(B, H, S, d_v)).astype(dtype)
    mask = rng.random((B, 1, T, S)) > 0.4
    mask[..., 0] = True  # no fully masked rows: torch gives NaN there, we give zeros
    tol = F64 if dtype == "float64" else F32
    tdt = torch.float64 if dtype == "float64" else torch.float32
    kwargs = {"plain": {}, "mask": dict(mask=mask), "causal": dict(causal=True), "scale=0.3": dict(scale=0.3)}[variant]
    ours, _ = m.scaled_dot_product_attention(q, k, v, **kwargs)
    assert ours.dtype == np.dtype(dtype)
    theirs = torch_sdpa(q, k, v, dtype=tdt, **kwargs)
    np.testing.assert_allclose(ours, theirs, **tol)


def test_bottom_right_causal_matches_torch_lower_right():
    from torch.nn.attention.bias import causal_lower_right
    rng = np.random.default_rng(7)
    q, k, v = rng.normal(size=(1, 2, 3, 4)), rng.normal(size=(1, 2, 6, 4)), rng.normal(size=(1, 2, 6, 4))
    ours, _ = m.scaled_dot_product_attention(q, k, v, mask=m.causal_mask(3, 6, align="bottom_right"))
    bias = causal_lower_right(3, 6)
    with torch.no_grad():
        theirs = torch.nn.functional.scaled_dot_product_attention(
            torch.tensor(q), torch.tensor(k), torch.tensor(v), attn_mask=bias).numpy()
    np.testing.assert_allclose(ours, theirs, **F64)


@pytest.mark.parametrize("seed", range(4), **SEED_IDS)
@pytest.mark.parametrize("n_heads,n_kv", [pytest.param(4, 2, id="H=4-H_kv=2"), pytest.param(6, 1, id="H=6-MQA"),
                                          pytest.param(8, 4, id="H=8-H_kv=4")])
def test_gqa_matches_torch_enable_gqa(seed, n_heads, n_kv):
    rng = np.random.default_rng(seed)
    B, T, d = 2, rng.integers(2, 6), 4
    D = n_heads * d
    x = rng.normal(size=(B, T, D))
    w_q, w_k, w_v = _weights(rng, D, D), _weights(rng, D, n_kv * d), _weights(rng, D, n_kv * d)
    t = m.mha_trace(x, w_q, w_k, w_v, n_heads=n_heads, n_kv_heads=n_kv, causal=True)
    assert t["weights"].shape == (B, n_heads, T, T)
    theirs = torch_sdpa(t["q_heads"], t["k_heads"], t["v_heads"], causal=True, n_rep=n_heads // n_kv)
    np.testing.assert_allclose(t["heads_out"], theirs, **F64)
    # Query heads in one group share their keys: with equal queries they would agree.
    same_q = m.mha_trace(x, np.tile(w_q[:, :d], n_heads), w_k, w_v, n_heads=n_heads, n_kv_heads=n_kv)
    g = n_heads // n_kv
    np.testing.assert_allclose(same_q["weights"][:, 0], same_q["weights"][:, g - 1], **F64)


@pytest.mark.parametrize("variant", ["plain", "causal", "mask"])
@pytest.mark.parametrize("seed", range(5), **SEED_IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mha_matches_torch_multihead_attention(seed, dtype, variant):
    rng = np.random.default_rng(100 + seed)
    H = int(rng.integers(1, 5))
    D = H * int(rng.integers(1, 5))
    B, T = int(rng.integers(1, 3)), int(rng.integers(1, 6))
    x = rng.normal(size=(B, T, D)).astype(dtype)
    w = [_weights(rng, D, D).astype(dtype) for _ in range(4)]
    b = [rng.normal(size=D).astype(dtype) for _ in range(4)]
    tol = F64 if dtype == "float64" else F32
    tdt = torch.float64 if dtype == "float64" else torch.float32
    mask = rng.random((T, T)) > 0.3
    mask[:, 0] = True
    kwargs = {"plain": {}, "causal": dict(causal=True), "mask": dict(mask=mask)}[variant]
    ours, w_ours = m.multi_head_attention(x, *w, n_heads=H, b_q=b[0], b_k=b[1], b_v=b[2], b_o=b[3], **kwargs)
    theirs, w_theirs = torch_mha(x, *w, n_heads=H, b_q=b[0], b_k=b[1], b_v=b[2], b_o=b[3], dtype=tdt, **kwargs)
    np.testing.assert_allclose(ours, theirs, **tol)
    np.testing.assert_allclose(w_ours, w_theirs, **tol)


@pytest.mark.parametrize("seed", range(3), **SEED_IDS)
def test_cross_attention_matches_torch(seed):
    rng = np.random.default_rng(200 + seed)
    H, d, D_ctx = 2, 3, 5
    D = H * d
    x, ctx = rng.normal(size=(2, 4, D)), rng.normal(size=(2, 7, D_ctx))
    w_q, w_k, w_v, w_o = _weights(rng, D, D), _weights(rng, D_ctx, D), _weights(rng, D_ctx, D), _weights(rng, D, D)
    ours, w_ours = m.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=H, context=ctx)
    assert w_ours.shape == (2, H, 4, 7)
    theirs, w_theirs = torch_mha(x, w_q, w_k, w_v, w_o, n_heads=H, context=ctx)
    np.testing.assert_allclose(ours, theirs, **F64)
    np.testing.assert_allclose(w_ours, w_theirs, **F64)


@pytest.mark.parametrize("seed", range(3), **SEED_IDS)
def test_cross_attention_with_own_key_and_value_widths_and_padding_matches_torch(seed):
    """Keys from a sequence of width kdim, values from one of width vdim, both != embed_dim, and
    padded keys: torch's nn.MultiheadAttention(kdim=, vdim=) with key_padding_mask, built here
    from the same weights (float64), against context=, value_context= and a boolean mask."""
    rng = np.random.default_rng(300 + seed)
    H, d, kdim, vdim = 2, 3, 5, 7
    D, B, T, S = H * d, 2, 4, 6
    x, keys_in, values_in = rng.normal(size=(B, T, D)), rng.normal(size=(B, S, kdim)), rng.normal(size=(B, S, vdim))
    w_q, w_k, w_v, w_o = _weights(rng, D, D), _weights(rng, kdim, D), _weights(rng, vdim, D), _weights(rng, D, D)
    b_q, b_k, b_v, b_o = (rng.normal(size=D) for _ in range(4))
    lengths = np.array([S - 2, S - 5])  # 2 and 5 padded keys
    pad = np.arange(S)[None, :] >= lengths[:, None]  # (B, S): True = padding, torch's convention
    mha = torch.nn.MultiheadAttention(D, H, bias=True, batch_first=True, kdim=kdim, vdim=vdim, dtype=torch.float64)
    assert not mha._qkv_same_embed_dim  # three separate projections, as the test intends
    with torch.no_grad():
        mha.q_proj_weight.copy_(torch.tensor(w_q.T))  # nn.Linear's (out, in) is our (in, out) transposed
        mha.k_proj_weight.copy_(torch.tensor(w_k.T))  # (D, kdim)
        mha.v_proj_weight.copy_(torch.tensor(w_v.T))  # (D, vdim)
        mha.in_proj_bias.copy_(torch.tensor(np.concatenate([b_q, b_k, b_v])))
        mha.out_proj.weight.copy_(torch.tensor(w_o.T))
        mha.out_proj.bias.copy_(torch.tensor(b_o))
        theirs, w_theirs = mha(torch.tensor(x), torch.tensor(keys_in), torch.tensor(values_in),
                               key_padding_mask=torch.tensor(pad), need_weights=True, average_attn_weights=False)
    ours, w_ours = m.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=H, context=keys_in,
                                          value_context=values_in, mask=m.padding_mask(lengths, S),
                                          b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o)
    assert ours.shape == (B, T, D) and w_ours.shape == (B, H, T, S)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(w_ours, w_theirs.numpy(), rtol=0, atol=1e-12)
    assert np.all(np.where(pad[:, None, None, :], w_ours, 0.0) == 0.0)  # (B, 1, 1, S): padding gets exactly 0


def test_concat_then_w_o_equals_sum_of_per_head_projections():
    rng = np.random.default_rng(5)
    H, d = 3, 2
    D = H * d
    x = rng.normal(size=(4, D))
    w_q, w_k, w_v, w_o = (_weights(rng, D, D) for _ in range(4))
    t = m.mha_trace(x, w_q, w_k, w_v, w_o, n_heads=H)
    # Independently: run each head as its own single-head attention on its column block.
    total = np.zeros((4, D))
    for h in range(H):
        cols = slice(h * d, (h + 1) * d)
        out_h, _ = m.scaled_dot_product_attention(x @ w_q[:, cols], x @ w_k[:, cols], x @ w_v[:, cols])
        total += out_h @ w_o[cols, :]
    np.testing.assert_allclose(t["out"], total, atol=1e-13)
    np.testing.assert_allclose(m.per_head_output(t["heads_out"], w_o).sum(axis=0), t["out"], atol=1e-13)


def test_a_stack_of_head_masks_equals_one_mask_at_a_time():
    rng = np.random.default_rng(11)
    H, d = 3, 2
    D = H * d
    x = rng.normal(size=(4, D))
    w_q, w_k, w_v, w_o = (_weights(rng, D, D) for _ in range(4))
    masks = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.5]])
    stacked = m.mha_trace(x, w_q, w_k, w_v, w_o, n_heads=H, head_mask=masks)
    assert stacked["out"].shape == (3, 4, D) and stacked["weights"].shape == (H, 4, 4)
    for i, mask in enumerate(masks):
        one = m.mha_trace(x, w_q, w_k, w_v, w_o, n_heads=H, head_mask=mask)
        np.testing.assert_allclose(stacked["out"][i], one["out"], rtol=0, atol=1e-15)
    # removing head 0 by hand: the output is the other heads through their blocks of W_O
    t = m.mha_trace(x, w_q, w_k, w_v, w_o, n_heads=H)
    by_hand = m.per_head_output(t["heads_out"], w_o)[1:].sum(axis=0)
    np.testing.assert_allclose(stacked["out"][0], by_hand, atol=1e-13)


def test_a_stack_of_head_masks_that_does_not_broadcast_with_the_batch_names_both():
    """Three masks against a batch of two gave numpy's "operands could not be broadcast together
    with shapes (2,2,3,2) (3,2,1,1)", naming neither head_mask nor x."""
    rng = np.random.default_rng(12)
    H, d = 2, 2
    x = rng.normal(size=(2, 3, H * d))
    w = [_weights(rng, H * d, H * d) for _ in range(4)]
    with pytest.raises(ValueError, match=r"head_mask has shape \(3, 2\): its leading axes \(3,\) \(M masks\) must "
                                         r"broadcast with the batch axes of x, \(2,\)"):
        m.mha_trace(x, *w, n_heads=H, head_mask=np.ones((3, H)))
    assert m.mha_trace(x, *w, n_heads=H, head_mask=np.ones((2, H)))["out"].shape == (2, 3, H * d)


def test_permutation_equivariance():
    rng = np.random.default_rng(9)
    D, H, T = 8, 2, 5
    x = rng.normal(size=(T, D))
    w = [_weights(rng, D, D) for _ in range(4)]
    perm = rng.permutation(T)
    out, wts = m.multi_head_attention(x, *w, n_heads=H)
    out_p, wts_p = m.multi_head_attention(x[perm], *w, n_heads=H)
    np.testing.assert_allclose(out_p, out[perm], atol=1e-13)
    np.testing.assert_allclose(wts_p, wts[:, perm][:, :, perm], atol=1e-13)


def test_split_combine_roundtrip_and_layout():
    x = np.arange(2 * 3 * 6, dtype=float).reshape(2, 3, 6)
    s = m.split_heads(x, 3)
    assert s.shape == (2, 3, 3, 2)
    # head h of token t holds columns 2h, 2h+1 of token t
    assert np.array_equal(s[1, 2, 0], x[1, 0, 4:6])
    assert np.array_equal(m.combine_heads(s), x)


def test_param_count_of_one_head_without_w_o():
    assert m.mha_param_count(512, 1, bias=False, output_projection=False) == 3 * 512**2 == 786_432


@pytest.mark.parametrize("H", [1, 2, 8, 16, 512], ids=lambda h: f"H={h}")
def test_param_count_does_not_depend_on_the_number_of_heads(H):
    assert m.mha_param_count(512, H, bias=False) == 4 * 512**2 == 1_048_576


def test_param_count_with_biases():
    assert m.mha_param_count(768, 12) == 4 * 768 * 768 + 4 * 768


def test_param_count_grouped_query():
    # GQA: K and V shrink to n_kv_heads * d_head columns each
    assert m.mha_param_count(8192, 64, bias=False, n_kv_heads=8) == 2 * 8192**2 + 2 * 8192 * 1024


def test_param_count_with_heads_wider_than_d_model_over_h():
    # Gemma 7B: d_model 3072, 16 heads of d_head 256, so H*d = 4096 != D
    assert m.mha_param_count(3072, 16, d_head=256, bias=False) == 4 * 3072 * 4096 == 50_331_648
    # Gemma 2B: d_model 2048, 8 query heads and 1 key/value head of 256
    assert m.mha_param_count(2048, 8, d_head=256, n_kv_heads=1, bias=False) == 2 * 2048 * 2048 + 2 * 2048 * 256
    # with biases: H*d + 2*H_kv*d for Q, K, V and D for the output
    assert m.mha_param_count(6, 2, d_head=5) == 6 * 10 * 4 + 10 * 3 + 6


@pytest.mark.parametrize("D,H", [pytest.param(512, 8, id="D=512-H=8"), pytest.param(96, 3, id="D=96-H=3")])
def test_param_count_with_d_head_d_model_over_h_changes_nothing(D, H):
    for kw in (dict(), dict(bias=False), dict(output_projection=False)):
        assert m.mha_param_count(D, H, d_head=D // H, **kw) == m.mha_param_count(D, H, **kw)


def test_param_count_matches_transformers_gemma_attention():
    transformers = pytest.importorskip("transformers")
    from transformers.models.gemma.modeling_gemma import GemmaAttention
    cfg = transformers.GemmaConfig(hidden_size=64, num_attention_heads=4, num_key_value_heads=1, head_dim=32,
                                   intermediate_size=8, num_hidden_layers=1, vocab_size=10)
    module = GemmaAttention(cfg, layer_idx=0)  # q_proj (64 -> 128): H*d = 128 != D = 64
    assert m.mha_param_count(64, 4, n_kv_heads=1, d_head=32, bias=False) == sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("D,H", [pytest.param(512, 8, id="D=512-H=8"), pytest.param(96, 3, id="D=96-H=3")])
def test_param_count_matches_torch_module(D, H):
    mod = torch.nn.MultiheadAttention(D, H, bias=True)
    assert m.mha_param_count(D, H) == sum(p.numel() for p in mod.parameters())


@pytest.mark.parametrize("call,expected", [
    pytest.param(lambda: m.attention_scores_bytes(8192), 256 * 2**20, id="8k-fp32-256MiB"),
    pytest.param(lambda: m.attention_scores_bytes(8192, dtype="float16", heads=2), 8192**2 * 2 * 2, id="8k-fp16-2-heads"),
    pytest.param(lambda: m.attention_scores_bytes(4, S=3, batch=2, dtype=np.float64), 4 * 3 * 2 * 8, id="T!=S-batch-fp64"),
    pytest.param(lambda: m.kv_cache_bytes_per_token(80, 8, 128), 2 * 80 * 8 * 128 * 2, id="llama2-70b-kv-cache"),
])
def test_memory_counts(call, expected):
    assert call() == expected


def test_memory_counts_worked_values():
    # the values the pages print: 256 MiB of fp32 scores at T = 8192, 320 KiB of KV cache per token
    assert m.attention_scores_bytes(8192) == 268_435_456
    assert m.kv_cache_bytes_per_token(80, 8, 128) == 327_680
