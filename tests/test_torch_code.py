"""The readable torch code shown on the pages (mhalib/torch_ref.py) computes what mhalib
computes, and what torch's own nn.MultiheadAttention computes, in float64."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import mhalib as m
from mhalib.torch_ref import MultiHeadAttention, torch_rope, torch_sinusoidal_encoding

TOL = dict(rtol=0, atol=1e-10)  # float64 throughout; the brief's bar is 1e-6


def _module(D: int, H: int, seed: int, bias: bool = True) -> MultiHeadAttention:
    torch.manual_seed(seed)
    return MultiHeadAttention(D, H, bias=bias).double()


def _row_weights(mha: MultiHeadAttention) -> dict:
    """The module's weights in mhalib's row-vector convention: W = linear.weight^T, (in, out)."""
    w = {f"w_{n}": getattr(mha, f"w_{n}").weight.detach().numpy().T for n in "qkvo"}
    if mha.w_q.bias is not None:
        w.update({f"b_{n}": getattr(mha, f"w_{n}").bias.detach().numpy() for n in "qkvo"})
    return w


def _x(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape)


@pytest.mark.parametrize("B,T,D,H", [(1, 1, 2, 1), (2, 5, 8, 2), (3, 4, 12, 3), (1, 7, 16, 8)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_mha_module_equals_mhalib(B, T, D, H, bias, causal):
    mha = _module(D, H, seed=B * 100 + T, bias=bias)
    x = _x((B, T, D), seed=T)
    mask = m.causal_mask(T) if causal else None
    with torch.no_grad():
        out, weights = mha(torch.from_numpy(x), None if mask is None else torch.from_numpy(mask))
    ref_out, ref_weights = m.multi_head_attention(x, n_heads=H, mask=mask, **_row_weights(mha))
    np.testing.assert_allclose(out.numpy(), ref_out, **TOL)
    np.testing.assert_allclose(weights.numpy(), ref_weights, **TOL)


@pytest.mark.parametrize("B,T,D,H", [(2, 5, 8, 2), (1, 6, 12, 4)])
@pytest.mark.parametrize("causal", [False, True])
def test_mha_module_equals_torch_multiheadattention(B, T, D, H, causal):
    ours = _module(D, H, seed=7)
    theirs = torch.nn.MultiheadAttention(D, H, batch_first=True).double()
    with torch.no_grad():  # torch keeps W_Q, W_K, W_V stacked in one (3D, D) matrix
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)
        x = torch.from_numpy(_x((B, T, D), seed=3))
        allowed = torch.ones(T, T, dtype=torch.bool).tril() if causal else None
        out, weights = ours(x, allowed)
        # torch's boolean attn_mask means the opposite: True = blocked
        t_out, t_weights = theirs(x, x, x, attn_mask=None if allowed is None else ~allowed,
                                  need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, t_out, **TOL)
    torch.testing.assert_close(weights, t_weights, **TOL)


def test_mha_module_gives_a_query_with_no_key_zero_weights_as_mhalib_does():
    T, D, H = 3, 4, 2
    mha = _module(D, H, seed=1)
    x = _x((1, T, D), seed=2)
    allowed = np.array([[True, False, False], [False, False, False], [True, True, True]])
    with torch.no_grad():
        out, weights = mha(torch.from_numpy(x), torch.from_numpy(allowed))
    assert not torch.isnan(out).any() and not torch.isnan(weights).any()
    assert (weights[0, :, 1] == 0).all()  # query 1 may attend to nothing
    ref_out, ref_weights = m.multi_head_attention(x, n_heads=H, mask=allowed, **_row_weights(mha))
    np.testing.assert_allclose(out.numpy(), ref_out, **TOL)
    np.testing.assert_allclose(weights.numpy(), ref_weights, **TOL)
    # with nothing to attend to, the heads' outputs are 0 and the output is W_O's bias
    np.testing.assert_allclose(out[0, 1].numpy(), mha.w_o.bias.detach().numpy(), **TOL)


def test_mha_module_refuses_a_width_the_heads_do_not_divide():
    with pytest.raises(ValueError, match="d_model=10, n_heads=4"):
        MultiHeadAttention(10, 4)


@pytest.mark.parametrize("n,D,base", [(1, 2, 10000.0), (16, 8, 10000.0), (50, 64, 10000.0), (9, 6, 100.0)])
def test_torch_sinusoidal_equals_mhalib(n, D, base):
    ours = torch_sinusoidal_encoding(n, D, base)
    assert ours.shape == (n, D) and ours.dtype == torch.float64
    np.testing.assert_allclose(ours.numpy(), m.sinusoidal_encoding(n, D, base), **TOL)


def test_torch_sinusoidal_by_hand():
    # D = 4: omega = [1, 10000^(-2/4)] = [1, 1/100]; row p = [sin p, cos p, sin(p/100), cos(p/100)]
    pe = torch_sinusoidal_encoding(3, 4)
    for p in range(3):
        expected = [math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)]
        np.testing.assert_allclose(pe[p].numpy(), expected, **TOL)


def test_torch_sinusoidal_refuses_an_odd_width():
    with pytest.raises(ValueError, match="d_model must be even"):
        torch_sinusoidal_encoding(4, 5)


@pytest.mark.parametrize("shape", [(1, 2), (5, 4), (2, 3, 6, 8), (1, 2, 9, 64)])
@pytest.mark.parametrize("given_positions", [False, True])
def test_torch_rope_equals_mhalib_interleaved(shape, given_positions):
    x = _x(shape, seed=len(shape))
    T = shape[-2]
    positions = np.array([3.0, 7.0, 8.0, 20.0, 21.0, 100.0, 5.0, 0.0, 2.5])[:T] if given_positions else None
    ours = torch_rope(torch.from_numpy(x), None if positions is None else torch.from_numpy(positions))
    ref = m.apply_rope(x, positions, layout="interleaved")
    np.testing.assert_allclose(ours.numpy(), ref, **TOL)
    # and the half-split layout is the same rotation with the dimensions permuted
    perm = m.layout_permutation(shape[-1])
    np.testing.assert_allclose(ours.numpy()[..., perm], m.apply_rope(x[..., perm], positions, layout="half"), **TOL)


def test_torch_rope_by_hand():
    # d = 2: one plane turning theta_0 = 1 rad per position, so (1, 0) at position p
    # goes to (cos p, sin p), and (0, 1) to (-sin p, cos p)
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)
    out = torch_rope(x)
    expected = [[1.0, 0.0], [-math.sin(1), math.cos(1)], [math.cos(2), math.sin(2)]]
    np.testing.assert_allclose(out.numpy(), expected, **TOL)


def test_torch_rope_keeps_norms_and_refuses_an_odd_width():
    x = torch.from_numpy(_x((4, 6), seed=5))
    torch.testing.assert_close(torch_rope(x).norm(dim=-1), x.norm(dim=-1), **TOL)
    with pytest.raises(ValueError, match="even"):
        torch_rope(torch.ones(3, 5, dtype=torch.float64))
