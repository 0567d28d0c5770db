"""The backward pass of attention: the closed form against torch's autograd and finite differences,
the tiled (FlashAttention) backward against the closed form for many tile sizes and masks, the
forward pass's log-sum-exp, and the bytes each keeps between the passes."""
import math
import tracemalloc

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mhalib as m

TOL = dict(rtol=0, atol=1e-12)


def _inputs(seed, q_shape, k_shape, v_shape):
    """Random q, k, v and a random d_out of the forward output's shape ``(..., T, d_v)``."""
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=q_shape), rng.normal(size=k_shape), rng.normal(size=v_shape)
    try:
        lead = np.broadcast_shapes(q_shape[:-2], k_shape[:-2], v_shape[:-2])
    except ValueError:  # grouped-query heads: K/V's head axis is shared by groups of query heads
        lead = np.broadcast_shapes(q_shape[:-2], k_shape[:-3] + (1,), v_shape[:-3] + (1,))
    d_out = rng.normal(size=lead + (q_shape[-2], v_shape[-1]))
    return q, k, v, d_out


def torch_grads(q, k, v, d_out, *, mask=None, causal=False, scale=None, gqa=False):
    """``(dq, dk, dv)`` from torch's autograd through ``F.scaled_dot_product_attention`` in float64.

    Broadcast inputs are expanded inside the graph, so autograd sums their gradients itself;
    with ``gqa`` torch's ``enable_gqa`` shares each K/V head with a group of query heads."""
    leaves = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (q, k, v)]
    tq, tk, tv = leaves
    if not gqa:
        lead = torch.broadcast_shapes(tq.shape[:-2], tk.shape[:-2], tv.shape[:-2])
        tq, tk, tv = (t.expand(*lead, *t.shape[-2:]) for t in (tq, tk, tv))
    attn_mask = None if mask is None else torch.tensor(mask)
    if causal and mask is not None:  # torch takes one or the other: fold the top-left causal mask in
        attn_mask = attn_mask & torch.ones(tq.shape[-2], tk.shape[-2], dtype=torch.bool).tril()
        causal = False
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=attn_mask, is_causal=causal, scale=scale,
                                         enable_gqa=gqa)
    grads = torch.autograd.grad(out, leaves, torch.tensor(d_out, dtype=torch.float64))
    return [g.numpy() for g in grads]


def _row_cleared_mask(seed, shape, row):
    """A random boolean mask of ``shape (..., T, S)`` whose query ``row`` sees no key at all."""
    mask = np.random.default_rng(seed).random(shape) > 0.4
    mask[..., row, :] = False
    return mask


CASES = [
    pytest.param(dict(shapes=((2, 3, 6, 4), (2, 3, 6, 4), (2, 3, 6, 5))), id="no-mask"),
    pytest.param(dict(shapes=((2, 3, 6, 4), (2, 3, 6, 4), (2, 3, 6, 5)), causal=True), id="causal"),
    pytest.param(dict(shapes=((3, 2, 5, 4), (3, 2, 7, 4), (3, 2, 7, 3)), mask=m.padding_mask([7, 0, 3], 7)),
                 id="padding-mask-one-sequence-empty"),
    pytest.param(dict(shapes=((2, 2, 6, 4), (2, 2, 9, 4), (2, 2, 9, 3)), mask=_row_cleared_mask(1, (2, 1, 6, 9), 2)),
                 id="mask-with-a-fully-masked-row"),
    pytest.param(dict(shapes=((2, 5, 4), (2, 11, 4), (2, 11, 3))), id="T<S"),
    pytest.param(dict(shapes=((2, 11, 4), (2, 5, 4), (2, 5, 3)), causal=True), id="T>S-causal"),
    pytest.param(dict(shapes=((2, 6, 5, 4), (2, 2, 8, 4), (2, 2, 8, 3)), gqa=True), id="gqa-6-heads-2-kv"),
    pytest.param(dict(shapes=((2, 4, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3)), gqa=True, causal=True, scale=0.37),
                 id="gqa-causal-scale"),
    pytest.param(dict(shapes=((2, 4, 5, 4), (2, 1, 7, 4), (2, 1, 7, 3))), id="mqa-by-broadcasting"),
    pytest.param(dict(shapes=((2, 3, 5, 4), (1, 3, 7, 4), (2, 1, 7, 3))), id="k-shared-by-batch-v-by-heads"),
    pytest.param(dict(shapes=((6, 4), (2, 3, 6, 4), (2, 3, 6, 2))), id="q-shared"),
    pytest.param(dict(shapes=((2, 3, 6, 4), (2, 3, 6, 4), (2, 3, 6, 5)), scale=2.5), id="scale=2.5"),
    pytest.param(dict(shapes=((2, 3, 6, 4), (2, 3, 6, 4), (2, 3, 6, 5)), scale=1e-3, causal=True), id="scale=1e-3"),
]


@pytest.mark.parametrize("case", CASES)
def test_closed_form_equals_torch_autograd(case):
    q, k, v, d_out = _inputs(0, *case["shapes"])
    kw = dict(mask=case.get("mask"), causal=case.get("causal", False), scale=case.get("scale"))
    got = m.attention_backward(q, k, v, d_out, **kw)
    expected = torch_grads(q, k, v, d_out, gqa=case.get("gqa", False), **kw)
    for name, g, e, x in zip(("dq", "dk", "dv"), got, expected, (q, k, v)):
        assert g.shape == x.shape, name
        np.testing.assert_allclose(g, e, **TOL, err_msg=name)
    assert all(np.abs(e).max() > 0 for e in expected)  # gradients that are really there


def test_closed_form_equals_central_differences():
    """Independently of torch: L = sum(d_out * out), each input entry moved by +-h."""
    q, k, v, d_out = _inputs(7, (2, 3, 2), (2, 4, 2), (2, 4, 3))
    mask = np.array([[True, True, False, True], [False, False, False, False], [True, False, True, True]])
    got = m.attention_backward(q, k, v, d_out, mask=mask, scale=0.8)
    h = 1e-6

    def loss(qq, kk, vv):
        return float((m.scaled_dot_product_attention(qq, kk, vv, mask, scale=0.8)[0] * d_out).sum())

    for idx, x in enumerate((q, k, v)):
        numeric = np.zeros_like(x)
        for pos in np.ndindex(x.shape):
            args = [q, k, v]
            up, down = x.copy(), x.copy()
            up[pos] += h
            down[pos] -= h
            args[idx] = up
            f_up = loss(*args)
            args[idx] = down
            numeric[pos] = (f_up - loss(*args)) / (2 * h)
        np.testing.assert_allclose(got[idx], numeric, rtol=0, atol=1e-8)


def test_a_fully_masked_row_gets_zero_gradients_and_passes_none_on():
    q, k, v, d_out = _inputs(3, (5, 4), (6, 4), (6, 3))
    mask = _row_cleared_mask(3, (5, 6), 1)
    dq, dk, dv = m.attention_backward(q, k, v, d_out, mask=mask)
    assert np.array_equal(dq[1], np.zeros(4)) and np.isfinite(dq).all()
    other = d_out.copy()
    other[1] = 1e6  # the masked row's output gradient reaches nothing
    _, dk2, dv2 = m.attention_backward(q, k, v, other, mask=mask)
    assert np.array_equal(dk, dk2) and np.array_equal(dv, dv2)


def test_hand_example_of_the_docstring():
    dq, dk, dv = m.attention_backward([[0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [0.0]], [[1.0]], scale=1.0)
    np.testing.assert_allclose(dq, [[0.25, -0.25]], atol=1e-16)
    np.testing.assert_allclose(dv, [[0.5], [0.5]], atol=1e-16)
    assert np.array_equal(dk, np.zeros((2, 2)))


def test_scores_beyond_the_float_range_have_exact_gradients():
    """Scores -1e400 and -2e400: the weights are [1, 0] and the softmax is flat there, so dS = 0."""
    dq, dk, dv = m.attention_backward([[1e200]], [[-1e200], [-2e200]], [[3.0], [5.0]], [[2.0]], scale=1.0)
    assert np.array_equal(dq, [[0.0]]) and np.array_equal(dk, [[0.0], [0.0]])
    assert np.array_equal(dv, [[2.0], [0.0]])


def test_empty_sequences():
    dq, dk, dv = m.attention_backward(np.ones((3, 2)), np.ones((0, 2)), np.ones((0, 4)), np.ones((3, 4)))
    assert np.array_equal(dq, np.zeros((3, 2))) and dk.shape == (0, 2) and dv.shape == (0, 4)
    dq, dk, dv = m.attention_backward(np.ones((0, 2)), np.ones((5, 2)), np.ones((5, 4)), np.ones((0, 4)))
    assert dq.shape == (0, 2) and np.array_equal(dk, np.zeros((5, 2))) and np.array_equal(dv, np.zeros((5, 4)))


def test_float32_stays_float32():
    q, k, v, d_out = (a.astype(np.float32) for a in _inputs(4, (3, 2), (4, 2), (4, 2)))
    assert {g.dtype for g in m.attention_backward(q, k, v, d_out)} == {np.dtype(np.float32)}


def test_a_gradient_that_overflows_is_refused():
    # one key: both queries give it weight 1, so dv = 1e308 + 1e308
    with pytest.raises(ValueError, match="overflow in the gradient dv"):
        m.attention_backward(np.ones((2, 2)), np.ones((1, 2)), np.ones((1, 1)), np.full((2, 1), 1e308))


@pytest.mark.parametrize("args,kw,exc,words", [
    pytest.param((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), np.ones((2, 3))), {}, ValueError,
                 ["d_out", "(2, 2)", "(2, 3)"], id="d_out-shape"),
    pytest.param((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), np.full((2, 2), np.nan)), {}, ValueError,
                 ["d_out", "NaN"], id="d_out-nan"),
    pytest.param((np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 2)), np.ones((2, 2))), {}, ValueError,
                 ["q and k", "last dimension"], id="q-k-width"),
    pytest.param((np.ones((1, 4, 2, 3)), np.ones((1, 3, 4, 3)), np.ones((1, 3, 4, 2)), np.ones((1, 4, 2, 2))), {},
                 ValueError, ["do not broadcast"], id="heads-4-kv-3"),
    pytest.param((np.ones((1, 4, 2, 3)), np.ones((1, 2, 4, 3)), np.ones((1, 4, 4, 2)), np.ones((1, 4, 2, 2))), {},
                 ValueError, ["do not broadcast"], id="k-grouped-v-not"),
    pytest.param((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), np.ones((2, 2))), dict(mask=np.ones((2, 4))),
                 TypeError, ["mask", "boolean"], id="mask-float"),
    pytest.param((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), np.ones((2, 2))), dict(causal=1),
                 TypeError, ["causal"], id="causal-int"),
    pytest.param((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2)), np.ones((2, 2))), dict(scale=-1.0),
                 ValueError, ["scale", "> 0"], id="scale-negative"),
])
def test_bad_input_is_refused_naming_the_argument(args, kw, exc, words):
    with pytest.raises(exc) as info:
        m.attention_backward(*args, **kw)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


# ---- the tiled backward ---------------------------------------------------------------------------

BLOCKS = [pytest.param(1, 1, id="blocks=1"), pytest.param(4, 4, id="divisors"), pytest.param(5, 7, id="non-divisors"),
          pytest.param(3, 64, id="one-key-block"), pytest.param(64, 6, id="one-query-block")]
MASKS = ["none", "causal", "padding", "row-cleared", "causal+padding"]


def _mask_kw(kind, lead, T, S):
    if kind == "none":
        return {}
    if kind == "causal":
        return dict(causal=True)
    if kind == "padding":  # the second sequence is empty: all its queries see nothing
        return dict(mask=m.padding_mask([S - 3, 0], S)[:, 0])  # (B, 1, 1, S) -> (B, 1, S) for lead (B,)
    if kind == "row-cleared":
        return dict(mask=_row_cleared_mask(T * S, lead + (T, S), T // 2))
    return dict(causal=True, mask=m.padding_mask([S - 3, S], S)[:, 0])


@pytest.mark.parametrize("kind", MASKS)
@pytest.mark.parametrize("T,S", [(12, 12), (8, 13), (13, 8)], ids=["T=S", "T<S", "T>S"])
@pytest.mark.parametrize("block_q,block_k", BLOCKS)
def test_tiled_backward_equals_the_closed_form(block_q, block_k, T, S, kind):
    lead = (2,)
    q, k, v, d_out = _inputs(T * S + block_q, lead + (T, 4), lead + (S, 4), lead + (S, 3))
    kw = _mask_kw(kind, lead, T, S)
    out, lse = m.tiled_attention(q, k, v, block_q=block_q, block_k=block_k, return_lse=True, **kw)
    got = m.tiled_attention_backward(q, k, v, d_out, out, lse, block_q=block_q, block_k=block_k, **kw)
    expected = m.attention_backward(q, k, v, d_out, **kw)
    for name, g, e in zip(("dq", "dk", "dv"), got, expected):
        np.testing.assert_allclose(g, e, **TOL, err_msg=name)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_tiled_backward_equals_torch_with_gqa_and_a_mask(causal):
    q, k, v, d_out = _inputs(11, (2, 4, 9, 8), (2, 2, 14, 8), (2, 2, 14, 6))
    mask = _row_cleared_mask(11, (2, 1, 9, 14), 7)
    k_all, v_all = m.repeat_kv_heads(k, 2), m.repeat_kv_heads(v, 2)  # the forward pass of GQA
    out, lse = m.tiled_attention(q, k_all, v_all, mask=mask, causal=causal, scale=0.3, block_q=4, block_k=5,
                                 return_lse=True)
    got = m.tiled_attention_backward(q, k, v, d_out, out, lse, mask=mask, causal=causal, scale=0.3,
                                     block_q=4, block_k=5)
    expected = torch_grads(q, k, v, d_out, mask=mask, causal=causal, scale=0.3, gqa=True)
    for name, g, e in zip(("dq", "dk", "dv"), got, expected):
        np.testing.assert_allclose(g, e, **TOL, err_msg=name)


def _logsumexp_of_allowed_scores(q, k, allowed, scale):
    """log sum_j exp(s_j) over allowed keys, by math.fsum per row (-inf for an empty row)."""
    s = (q @ np.swapaxes(k, -1, -2)) * scale  # (..., T, S)
    out = np.empty(s.shape[:-1])
    for idx in np.ndindex(out.shape):
        row = s[idx][allowed[idx]]
        if row.size == 0:
            out[idx] = -np.inf
        else:
            top = row.max()
            out[idx] = top + math.log(math.fsum(math.exp(x - top) for x in row))
    return out


def test_forward_lse_is_the_row_logsumexp_and_leaves_the_output_unchanged():
    q, k, v, _ = _inputs(5, (2, 9, 4), (2, 11, 4), (2, 11, 3))
    mask = _row_cleared_mask(5, (2, 9, 11), 4)
    out, lse = m.tiled_attention(q, k, v, mask=mask, causal=True, block_q=4, block_k=3, return_lse=True)
    allowed = np.broadcast_to(mask & m.causal_mask(9, 11), (2, 9, 11))
    np.testing.assert_allclose(lse, _logsumexp_of_allowed_scores(q, k, allowed, 0.5), **TOL)
    assert np.all(np.isneginf(lse[:, 4]))
    assert np.array_equal(out, m.tiled_attention(q, k, v, mask=mask, causal=True, block_q=4, block_k=3))
    out3, lse3, trace = m.tiled_attention(q, k, v, mask=mask, causal=True, block_q=4, block_k=3,
                                          return_lse=True, trace=True)
    assert np.array_equal(out3, out) and np.array_equal(lse3, lse)
    finite = np.isfinite(trace["m"][-1])
    np.testing.assert_allclose(lse[finite], trace["m"][-1][finite] + np.log(trace["l"][-1][finite]), **TOL)


@pytest.mark.parametrize("mask_shape", [(9, 11), (2, 9, 11), (3, 1, 9, 11), (11,)],
                         ids=["per-pair", "per-batch", "adds-an-axis", "keys-only"])
def test_tiled_forward_with_a_mask_equals_scaled_dot_product_attention(mask_shape):
    q, k, v, _ = _inputs(6, (2, 9, 4), (2, 11, 4), (2, 11, 3))
    mask = np.random.default_rng(6).random(mask_shape) > 0.5
    expected, _ = m.scaled_dot_product_attention(q, k, v, mask)
    out = m.tiled_attention(q, k, v, mask=mask, block_q=4, block_k=5)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, **TOL)


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_tiled_backward_never_holds_the_weights():
    """T = S = 1024: the weights alone take T * S * 8 = 8 MiB; the tiled backward's peak stays
    far below, the closed form's above."""
    T, d, block = 1024, 16, 64
    q, k, v, d_out = _inputs(8, (T, d), (T, d), (T, d))
    out, lse = m.tiled_attention(q, k, v, block_q=block, block_k=block, return_lse=True)
    P_bytes = T * T * 8
    tiled = _peak_bytes(lambda: m.tiled_attention_backward(q, k, v, d_out, out, lse, block_q=block, block_k=block))
    naive = _peak_bytes(lambda: m.attention_backward(q, k, v, d_out))
    assert naive >= P_bytes
    assert tiled < P_bytes / 8


def test_tiled_backward_refuses_overflowing_scores():
    q = np.array([[1e200]])
    with pytest.raises(ValueError, match="overflow in the scores"):
        m.tiled_attention_backward(q, [[1e200]], [[1.0]], [[1.0]], [[1.0]], [0.0], scale=1.0)


@pytest.mark.parametrize("kw,exc,words", [
    pytest.param(dict(lse=np.zeros(3)), ValueError, ["lse", "(2,)", "(3,)"], id="lse-shape"),
    pytest.param(dict(lse=[np.nan, 0.0]), ValueError, ["lse", "NaN"], id="lse-nan"),
    pytest.param(dict(lse=[np.inf, 0.0]), ValueError, ["lse", "+inf"], id="lse-plus-inf"),
    pytest.param(dict(out=np.zeros((2, 3))), ValueError, ["out", "(2, 2)"], id="out-shape"),
    pytest.param(dict(d_out=np.zeros((3, 2))), ValueError, ["d_out", "(2, 2)"], id="d_out-shape"),
    pytest.param(dict(block_q=0), ValueError, ["block_q", ">= 1"], id="block_q=0"),
    pytest.param(dict(block_k=2.0), TypeError, ["block_k", "integer"], id="block_k-float"),
    pytest.param(dict(mask=np.ones((2, 3), bool)), ValueError, ["mask", "(2, 3)"], id="mask-shape"),
])
def test_tiled_backward_refuses_bad_input_naming_it(kw, exc, words):
    q = k = v = np.eye(2)
    out, lse = m.tiled_attention(q, k, v, return_lse=True)
    args = dict(q=q, k=k, v=v, d_out=np.ones((2, 2)), out=out, lse=lse) | kw
    with pytest.raises(exc) as info:
        m.tiled_attention_backward(**args)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_tiled_forward_refuses_a_bad_return_lse_and_a_float_mask():
    x = np.eye(2)
    with pytest.raises(TypeError, match="return_lse"):
        m.tiled_attention(x, x, x, return_lse=1)
    with pytest.raises(TypeError, match="mask"):
        m.tiled_attention(x, x, x, mask=np.ones((2, 2)))


def test_hand_example_of_the_tiled_docstrings():
    x = np.eye(2)
    out, lse = m.tiled_attention(x, x, x, scale=1.0, return_lse=True)
    assert lse[0] == pytest.approx(math.log(math.e + 1), abs=1e-15)
    np.testing.assert_allclose(np.exp(np.array([1.0, 0.0]) - lse[0]), [math.e / (math.e + 1), 1 / (math.e + 1)],
                               atol=1e-15)


# ---- memory kept between the passes ----------------------------------------------------------------

def test_memory_between_passes_by_closed_form():
    got = m.attention_memory_between_passes(4096, 4096, 64, heads=32, dtype="float16")
    assert got == dict(naive=32 * 4096 * 4096 * 2, tiled=32 * 4096 * 64 * 2 + 32 * 4096 * 4)
    assert got["naive"] == 2 ** 30 and got["tiled"] == 17_301_504
    assert round(got["naive"] / got["tiled"]) == 62
    # T != S, a batch, float32 everywhere: P is (B, H, T, S), O is (B, H, T, d), the lse (B, H, T)
    got = m.attention_memory_between_passes(100, 300, 16, heads=3, batch=2)
    assert got == dict(naive=2 * 3 * 100 * 300 * 4, tiled=2 * 3 * (100 * 16 * 4 + 100 * 4))
    assert m.attention_memory_between_passes(10, 10, 8, lse_dtype="float64")["tiled"] == 10 * 8 * 4 + 10 * 8


def test_memory_between_passes_matches_the_arrays_themselves():
    """The counts are the nbytes of the arrays each backward reads: P, and out with lse."""
    q, k, v, _ = _inputs(9, (2, 3, 7, 4), (2, 3, 5, 4), (2, 3, 5, 4))
    _, P = m.scaled_dot_product_attention(q, k, v)
    out, lse = m.tiled_attention(q, k, v, return_lse=True)
    got = m.attention_memory_between_passes(7, 5, 4, heads=3, batch=2, dtype="float64", lse_dtype="float64")
    assert got == dict(naive=P.nbytes, tiled=out.nbytes + lse.nbytes)


@pytest.mark.parametrize("kw,exc,name", [
    (dict(T=0), ValueError, "T"), (dict(S=1.5), TypeError, "S"), (dict(d=-1), ValueError, "d"),
    (dict(heads=0), ValueError, "heads"), (dict(batch=True), TypeError, "batch"),
    (dict(dtype="int4"), ValueError, "dtype"), (dict(lse_dtype="float8"), ValueError, "lse_dtype"),
])
def test_memory_between_passes_refuses_bad_input(kw, exc, name):
    args = dict(T=4, S=4, d=2) | kw
    with pytest.raises(exc, match=name):
        m.attention_memory_between_passes(**args)


# ---- a weight that holds nearly all of its row (pass forty) -------------------------------------

def _pairwise(P: np.ndarray, dP: np.ndarray) -> np.ndarray:
    """dZ_i = P_i sum_j P_j (dP_i - dP_j), term by term: no 1 - P_m is ever formed (O(S^2))."""
    return P * (P[..., None, :] * (dP[..., :, None] - dP[..., None, :])).sum(axis=-1)


def test_softmax_backward_keeps_the_dominant_weights_entry():
    """Scores (40, 0): P_1 = 1/(1 + e^40) = 4.2e-18, and P_0 rounds to 1. With dP = (1, 0) the
    scores' gradient is (P_0 P_1, -P_0 P_1); the plain form gave (0, -4.2e-18)."""
    p1 = 1 / (1 + math.exp(40))
    P = np.array([[1 - p1, p1]])
    dz = m.softmax_backward(P, [[1.0, 0.0]])
    assert dz[0, 0] == pytest.approx(p1 * (1 - p1), rel=1e-15, abs=0) and dz[0, 1] == pytest.approx(-p1 * (1 - p1), rel=1e-15, abs=0)
    assert m.softmax_backward([[0.5, 0.5]], [[1, 0]]).tolist() == [[0.25, -0.25]]  # its docstring's example
    # dP - rowsum(dP o P) = 3.06e308 passes the float range, the gradient 0.1 of it does not
    np.testing.assert_allclose(m.softmax_backward([[0.1, 0.9]], [[1.7e308, -1.7e308]]),
                               [[0.1 * 0.9 * 1.7e308 * 2, -0.1 * 0.9 * 1.7e308 * 2]], rtol=1e-15)
    # against torch autograd on rows that no weight dominates, and the term-by-term form on any
    rng = np.random.default_rng(4)
    z = rng.normal(size=(5, 7, 9)) * np.array([1, 3, 30])[:, None, None].repeat(2, 0)[:5]
    P = np.exp(z - z.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    dP = rng.normal(size=P.shape)
    zt = torch.tensor(z, requires_grad=True)
    torch.softmax(zt, -1).backward(torch.tensor(dP))
    ours = m.softmax_backward(P, dP)
    assert np.allclose(ours, zt.grad.numpy(), rtol=1e-10, atol=1e-13)
    assert np.allclose(ours, _pairwise(P, dP), rtol=1e-12, atol=1e-300)


def test_backward_passes_keep_the_gradient_of_a_dominated_key():
    """Pass forty: q = (40, 0), keys (1, 0) and (0, 0), v = (1), (0), dO = 1, scale 1. P_1 =
    1/(1 + e^40); dS = (P_0 P_1, -P_0 P_1), so dq = P_0 P_1 (k_0 - k_1) = (4.2e-18, 0) and dk =
    +-P_0 P_1 q. Both passes returned dq = 0 and dk_0 = 0 (the rows of dk did not cancel)."""
    q, k, v, g = np.array([[40.0, 0]]), np.array([[1.0, 0], [0, 0]]), np.array([[1.0], [0]]), np.array([[1.0]])
    p1 = 1 / (1 + math.exp(40))
    t = p1 * (1 - p1)
    want_dq, want_dk = np.array([[t, 0]]), np.array([[40 * t, 0], [-40 * t, 0]])
    out, lse = m.tiled_attention(q, k, v, scale=1.0, return_lse=True)
    for dq, dk, _ in [m.attention_backward(q, k, v, g, scale=1.0)] + [
            m.tiled_attention_backward(q, k, v, g, out, lse, scale=1.0, block_q=bq, block_k=bk)
            for bq, bk in ((1, 1), (1, 2), (4, 4))]:
        np.testing.assert_allclose(dq, want_dq, rtol=1e-14, atol=0)
        np.testing.assert_allclose(dk, want_dk, rtol=1e-14, atol=0)


@pytest.mark.parametrize("tiled", [False, True])
def test_unscaled_wide_heads_keep_their_digits(tiled):
    """Random unscaled heads of width 256 over 8 keys, where one weight nearly fills its row: a
    row of dq lost up to every digit (relative error 1.7 in the worst of 20 seeds, 2.4e-7 in the
    pass's example). Each row of dq against the one from the term-by-term dS, in float64."""
    worst = 0.0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        q, k, v = (rng.standard_normal((3, n, 256)) for n in (4, 8, 8))
        g = rng.standard_normal((3, 4, 256)) / 16
        _, P = m.scaled_dot_product_attention(q, k, v, scale=1.0)
        want = _pairwise(P, g @ np.swapaxes(v, -1, -2)) @ k  # (3, 4, 8) @ (3, 8, 256)
        if tiled:
            out, lse = m.tiled_attention(q, k, v, scale=1.0, return_lse=True)
            dq = m.tiled_attention_backward(q, k, v, g, out, lse, scale=1.0, block_q=2, block_k=3)[0]
        else:
            dq = m.attention_backward(q, k, v, g, scale=1.0)[0]
        worst = max(worst, float((np.abs(dq - want).max(-1) / np.abs(want).max(-1)).max()))
    assert worst <= 1e-12, worst


def test_softmax_backward_keeps_the_differences_of_near_equal_gradients_and_tiny_weights():
    """Pass forty-one: where the dP of a row share their leading digits the subtraction form lost
    them ([1, 1 + 2**-52] over [1/2, 1/2] gave [0, 1.1e-16] for [-5.6e-17, 5.6e-17]; [1e16 + 2,
    1e16] gave [1, 0] for [0.5, -0.5]); a row of dP scaled down to 1 dropped a subnormal weight's
    normal gradient (float16 [1, 2**-24] with dP [1024, 0] gave 0 for 6.1e-5). By hand."""
    e = 2.0**-54
    np.testing.assert_array_equal(m.softmax_backward([[0.5, 0.5]], [[1.0, 1 + 2.0**-52]]), [[-e, e]])
    np.testing.assert_array_equal(m.softmax_backward([[0.5, 0.5]], [[1e16 + 2, 1e16]]), [[0.5, -0.5]])
    h = m.softmax_backward(np.array([[1, 2.0**-24]], np.float16), np.array([[1024, 0]], np.float16))
    assert h.dtype == np.float16 and h.tolist() == [[2.0**-14, -(2.0**-14)]]  # 2**-24 * 1024 * 1, a normal float16
    f = m.softmax_backward(np.array([[1 - 2.0**-24, 2.0**-149]], np.float32), np.array([[2.0**100, 0]], np.float32))
    assert f.dtype == np.float32 and f[0, 1] == -(2.0**-49) and f[0, 0] == pytest.approx(2.0**-49, rel=1e-6, abs=0)
    d = m.softmax_backward([[1.0, 5e-324]], [[2.0**200, 0.0]])
    assert d[0, 1] == -(5e-324 * 2.0**200) and d[0, 0] == pytest.approx(5e-324 * 2.0**200, rel=1e-15, abs=0)
    # through attention_backward: q = 0, k = I, v = (1 + 2**-52, 1), dO = 1: dq = (e, -e) * 2
    dq = m.attention_backward([[0.0, 0.0]], np.eye(2), [[1 + 2.0**-52], [1.0]], [[1.0]], scale=1.0)[0]
    np.testing.assert_array_equal(dq, [[e, -e]])


@pytest.mark.parametrize("args, exc, words", [
    (([[0.5, 0.5]], [[1.0]]), ValueError, ["one shape", "(1, 2)", "(1, 1)"]),
    (([[0.9, 0.9]], [[1.0, 0.0]]), ValueError, ["softmax rows", "summing to 1", "(0,)", "1.8"]),
    (([[0.5, np.nan]], [[1.0, 0]]), ValueError, ["weights", "finite", "NaN"]),
    (([[1.5, -0.5]], [[1.0, 0]]), ValueError, ["weights", "[0, 1]", "-0.5"]),
    (([[True, False]], [[1.0, 0]]), TypeError, ["weights", "bool"]),
    (([[0.5, 0.5]], [["a", "b"]]), TypeError, ["d_weights", "<U1"]),
])
def test_softmax_backward_refuses_bad_input_naming_it(args, exc, words):
    with pytest.raises(exc) as info:
        m.softmax_backward(*args)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_float16_gradients_use_the_weights_the_forward_pass_computes_inside():
    """Pass forty-three: the closed form took the forward pass's float16 weights, rounded to 3
    digits; a weight of e^-18 (its value times 60000 carries the gradient) read 0. By hand: scores
    (0, -18), dS_1 = P_0 P_1 (dP_1 - dP_0) = P_0 P_1 60000, dq = dS_1 k_1 = -18 dS_1."""
    q, k = np.array([[1.0, 0.0]], np.float16), np.array([[0.0, 0.0], [-18.0, 0.0]], np.float16)
    v, g = np.array([[0.0], [60000.0]], np.float16), np.array([[1.0]], np.float16)
    p1 = 1 / (1 + math.exp(18))
    want = np.float16(-18 * (1 - p1) * p1 * 60000)
    for dq, _, _ in (m.attention_backward(q, k, v, g, scale=1.0),
                     m.tiled_attention_backward(q, k, v, g, *m.tiled_attention(q, k, v, scale=1.0, return_lse=True),
                                                scale=1.0)):
        assert dq.dtype == np.float16 and dq[0, 0] == want and dq[0, 1] == 0, dq


def test_softmax_backward_holds_rows_to_one_whatever_their_length_in_their_own_type():
    """Pass forty-three: the bound on a row's sum grew with its length (a float16 row of 128
    summing to 1.29 passed), and longdouble rows were summed in float64 (valid rows refused)."""
    P = np.full(128, 0.01, np.float16)
    P[0] = 0.02
    with pytest.raises(ValueError, match="softmax rows"):
        m.softmax_backward(P, np.zeros(128, np.float16))
    rng = np.random.default_rng(5)
    for _ in range(50):
        z = np.asarray(rng.normal(size=7) * 5, np.longdouble)
        e = np.exp(z - z.max())
        out = m.softmax_backward(e / e.sum(), np.ones(7, np.longdouble))
        assert out.dtype == np.longdouble


def test_an_integer_d_out_works_the_weights_in_the_gradients_type():
    """Pass forty-five: d_out=[[1]] (integers, float64 gradients) had the weights computed in the
    float32 of q, k and v, where e^-110 is 0: dq read 0 for -1.69e-47. With d_out=[[1.0]] it was
    right; now both are. By hand: P_1 = e^-110 / (1 + e^-110), dq = -10 P_0 P_1 (dP_1 - dP_0 = 1)."""
    q, k, v = np.array([[11.0]], np.float32), np.array([[10.0], [0.0]], np.float32), np.array([[0.0], [1.0]], np.float32)
    p1 = math.exp(-110) / (1 + math.exp(-110))
    for g in ([[1]], np.array([[1]], np.int64), [[1.0]]):
        dq, dk, dv = m.attention_backward(q, k, v, g, scale=1.0)
        assert dq.dtype == np.float64 and dq[0, 0] == pytest.approx(-10 * (1 - p1) * p1, rel=1e-12, abs=0), g
        assert dv[1, 0] == pytest.approx(p1, rel=1e-12, abs=0), g
