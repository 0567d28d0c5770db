"""Library faults L1-L13 of an adversarial pass, one block per fault: each test failed on the
code before its fix. Expected values are derived here by hand or in closed form, never copied
from mhalib's output.
"""
from __future__ import annotations

import math
import re
import warnings

from fractions import Fraction

import numpy as np
import pytest

import mhalib as m
from mhalib.models import tiny_numpy

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


# --- L1. exp_overflow_threshold of a float wider than float64 -------------------------------

def test_exp_overflow_threshold_of_longdouble_is_its_own_log_max():
    # max = (2 - 2^(1-p)) * 2^(maxexp - 1), so ln(max) = maxexp ln 2 + ln(1 - 2^-p): maxexp ln 2
    # to far better than 1e-12 (about 11356.52 for the x86 80-bit type, 709.78 where it is float64)
    maxexp = np.finfo(np.longdouble).maxexp
    got = m.exp_overflow_threshold(np.longdouble)
    assert math.isfinite(got)
    assert got == pytest.approx(maxexp * math.log(2), rel=1e-12)
    if hasattr(np, "float128"):
        assert m.exp_overflow_threshold("float128") == pytest.approx(maxexp * math.log(2), rel=1e-12)
    assert m.exp_overflow_threshold("float64") == pytest.approx(1024 * math.log(2), rel=1e-15)


# --- L2. masked_fill_value: non-float dtypes, non-finite and huge values --------------------

@pytest.mark.parametrize("dtype", ["int8", "uint8", "bool", np.int64])
def test_masked_fill_value_refuses_a_dtype_that_is_not_floating(dtype):
    with pytest.raises(ValueError, match=r"dtype must be a numpy float dtype .* got"):
        m.masked_fill_value(-1e9, dtype)


@pytest.mark.parametrize("value,shown", [(float("nan"), "nan"), (float("inf"), "inf"), (np.float32("nan"), "nan")])
def test_masked_fill_value_refuses_nan_and_plus_inf(value, shown):
    with pytest.raises(ValueError, match=rf"value must be finite or -inf, got {shown}"):
        m.masked_fill_value(value)


def test_masked_fill_value_names_a_value_beyond_float64():
    with pytest.raises(ValueError, match=r"value .*beyond .*float64.*401 digits"):
        m.masked_fill_value(10**400)
    with pytest.raises(ValueError, match=r"value .*beyond .*float64"):
        m.masked_fill_value(-(10**400), "float32")


def test_masked_fill_value_rounds_once_from_the_exact_constant():
    """Pass sixty: -(2**60 + 2**36 + 1) went to float64 first, landing on the float32 midpoint
    2**60 + 2**36, then to the even neighbour 2**60. By hand: float32 keeps 24 bits, so near
    2**60 its values are 2**37 apart; 2**60 + 2**36 + 1 lies past the midpoint: 2**60 + 2**37.
    And against torch's masked_fill for constants at and around the midpoints of each type."""
    import torch

    assert m.masked_fill_value(-(2**60 + 2**36 + 1), "float32") == -(2**60 + 2**37)
    assert m.masked_fill_value(-(2**60 + 2**36), "float32") == -(2**60)  # the midpoint itself: to even
    assert m.masked_fill_value(np.int64(2**53 + 1), "float64") == 2**53  # an exact midpoint in float64
    if np.finfo(np.longdouble).nmant >= 63:  # x86's 80-bit longdouble holds 2**60 + 1 exactly
        assert m.masked_fill_value(2**60 + 1, np.longdouble) == np.longdouble(2**60) + 1
    assert math.copysign(1, m.masked_fill_value(-0.0, "float16")) == -1  # -0.0 stays -0.0, as torch stores it
    for dtype, bits in (("float16", 11), ("float32", 24), ("float64", 53)):
        for top in (bits + 1, bits + 7, 62):
            for near in (-1, 0, 1):
                value = -(2**top + 2 ** (top - bits) + near)  # around the midpoint above 2**top
                if dtype == "float16" and top > 15:
                    continue  # past float16's range: -inf (torch refuses it)
                stored = torch.zeros(1, dtype=getattr(torch, dtype)).masked_fill_(torch.tensor([True]), value).item()
                assert m.masked_fill_value(value, dtype) == stored, (dtype, value)


def test_a_float16_cache_stores_a_longdouble_with_one_rounding():
    """Pass sixty-one: numpy casts longdouble to float16 through float64, so 1 + 2**-11 + 2**-60
    (past the midpoint 1 + 2**-11 of 1 and 1 + 2**-10) went to the tie, then to 1. Against brute
    force: every finite float16, the nearest by exact fractions, ties to the even last bit."""
    if np.finfo(np.longdouble).nmant < 63:
        pytest.skip("longdouble is float64 here: no double rounding to show")
    L = np.longdouble
    cache = m.KVCache(1, n_kv_heads=1, d_head=1, dtype=np.float16)
    k, v = cache.append(0, np.full((1, 1, 1, 1), L(1) + L(2) ** -11 + L(2) ** -60), np.zeros((1, 1, 1, 1), L))
    assert k.item() == 1 + 2**-10 and k.dtype == np.float16
    bits = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    finite = sorted({Fraction(float(b)): b for b in bits if np.isfinite(b)}.items())  # (exact, float16)
    exact = [f for f, _ in finite]
    rng = np.random.default_rng(61)
    for i in rng.integers(1, len(finite) - 1, 300):  # around the midpoints, a hair each way and on them
        for nudge in (-(2**-60), 0, 2**-60):
            mid = (exact[i] + exact[i + 1]) / 2
            x = L(mid.numerator) / L(mid.denominator) * (1 + L(nudge))
            q = Fraction(*x.as_integer_ratio())
            j = min(range(i - 1, i + 3), key=lambda j: (abs(exact[j] - q), int(finite[j][1].view(np.uint16)) & 1))
            stored = m.KVCache(1, n_kv_heads=1, d_head=1, dtype=np.float16).append(
                0, np.full((1, 1, 1, 1), x), np.zeros((1, 1, 1, 1), L))[0].item()
            assert Fraction(stored) == exact[j], (x, stored, exact[j])


def test_masked_fill_value_still_rounds_into_the_dtype():
    # -1e9 is below float16's -65504: -inf; float32 holds 1e9 = 2^9 5^9 exactly (5^9 < 2^24)
    assert m.masked_fill_value(-1e9, "float16") == -math.inf
    assert m.masked_fill_value(-1e9, "float32") == -1e9
    assert m.masked_fill_value(-10**9, np.longdouble) == -1e9
    assert m.masked_fill_value(-math.inf, "float32") == -math.inf  # an exact mask's constant stays -inf


# --- L3. beam_search: a uint64 prompt id beyond int64 ----------------------------------------

def test_beam_search_refuses_a_start_id_beyond_int64():
    with pytest.raises(ValueError, match=r"start .*9223372036854775813"):
        m.beam_search(lambda p: np.zeros(3), np.array([2**63 + 5], np.uint64), beams=2, max_new=1)


def test_beam_search_keeps_a_uint64_prompt_in_range():
    # V = 3 equal logits: every continuation has log-probability log(1/3); ties keep token order
    seqs, scores = m.beam_search(lambda p: np.zeros(3), np.array([2], np.uint64), beams=2, max_new=1)
    assert seqs.tolist() == [[2, 0], [2, 1]]
    np.testing.assert_allclose(scores, [-math.log(3)] * 2)


# --- L4. positions at or beyond 2**53 are not distinct in float64 -----------------------------

LIMIT = 2**53


def test_sinusoidal_encoding_refuses_positions_from_2_to_the_53():
    words = r"start \+ n_positions - 1 must stay below 2\*\*53.*got 9007199254740994.*float64"
    with pytest.raises(ValueError, match=words):
        m.sinusoidal_encoding(3, 2, start=LIMIT)
    with pytest.raises(ValueError, match=r"2\*\*53"):  # the last position reaches it
        m.sinusoidal_encoding(2, 2, start=LIMIT - 1)
    # the last position below 2**53 is fine: PE[p] = (sin p, cos p), distinct rows
    pe = m.sinusoidal_encoding(2, 2, start=LIMIT - 2)
    p = np.array([LIMIT - 2, LIMIT - 1], np.float64)
    np.testing.assert_array_equal(pe, np.stack([np.sin(p), np.cos(p)], axis=1))


def test_offset_matrix_refuses_an_offset_from_2_to_the_53():
    for k in (LIMIT, LIMIT + 1, -LIMIT):
        with pytest.raises(ValueError, match=r"\|k\|.*2\*\*53.*float64"):
            m.offset_matrix(k, 2)


def test_apply_rope_refuses_positions_from_2_to_the_53():
    with pytest.raises(ValueError, match=r"positions .*2\*\*53.*float64"):
        m.apply_rope(np.ones((2, 2)), np.array([LIMIT, LIMIT + 1]))
    with pytest.raises(ValueError, match=r"positions .*2\*\*53"):
        m.apply_rope(np.ones((1, 2)), [-float(LIMIT)])


X3 = np.eye(3, 4)
W4 = np.eye(4)


@pytest.mark.parametrize("kwargs,name", [
    (dict(rope_base=1e4, positions=[2**60, 2**60 + 1, 2**60 + 2]), "positions"),
    (dict(rope_base=1e4, key_positions=[0, 1, LIMIT]), "key_positions"),
    (dict(alibi=True, positions=[LIMIT, LIMIT + 1, LIMIT + 2]), "positions"),
    (dict(alibi=True, key_positions=[0, 1, -LIMIT]), "key_positions"),
])
def test_multi_head_attention_refuses_positions_from_2_to_the_53(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} .*2\*\*53.*float64"):
        m.multi_head_attention(X3, W4, W4, W4, n_heads=2, **kwargs)


# --- L5. tiled_attention_backward keeps float16 ------------------------------------------------

def test_tiled_attention_backward_keeps_float16():
    rng = np.random.default_rng(0)
    q, k, v, do = (rng.standard_normal((4, 2)).astype(np.float16) for _ in range(4))
    o, lse = m.tiled_attention(q, k, v, block_q=2, block_k=2, return_lse=True)
    assert o.dtype == np.float16 and lse.dtype == np.float32
    tiled = m.tiled_attention_backward(q, k, v, do, o, lse, block_q=2, block_k=2)
    closed = m.attention_backward(q, k, v, do)
    for t, c in zip(tiled, closed):
        assert t.dtype == c.dtype == np.float16
        np.testing.assert_allclose(t.astype(np.float64), c.astype(np.float64), atol=1e-2)


# --- L6. dtype_bytes(None) --------------------------------------------------------------------

def test_dtype_bytes_refuses_none():
    with pytest.raises(ValueError, match=r"dtype must be one of .*got None"):
        m.dtype_bytes(None)
    with pytest.raises(ValueError, match=r"dtype must be one of .*got None"):
        m.kv_cache_bytes(1, 1, 1, 1, dtype=None)
    assert m.dtype_bytes("float64") == 8 and m.dtype_bytes(np.float16) == 2  # names still work


# --- L7. weights the config does not use ----------------------------------------------------

def _weights(config):
    return {name: np.zeros(shape) for name, shape in tiny_numpy.parameter_shapes(config).items()}


def test_checked_weights_refuses_names_the_config_does_not_use():
    with_ff = tiny_numpy.TinyConfig(vocab=5, method="none", d_model=4, n_layers=1, n_heads=2, d_ff=8)
    no_ff = tiny_numpy.TinyConfig(vocab=5, method="none", d_model=4, n_layers=1, n_heads=2, d_ff=0)
    w = _weights(with_ff)
    with pytest.raises(ValueError, match=r"weights holds .*'0\.b_1'.*'0\.w_1'.*'0\.w_2'.*not use"):
        tiny_numpy.checked_weights(w, no_ff)
    with pytest.raises(ValueError, match=r"0\.w_1"):
        tiny_numpy.forward(w, no_ff, [0, 1])
    extra = _weights(no_ff) | {"0.w_qq": np.full((4, 4), np.nan)}
    with pytest.raises(ValueError, match=r"\['0\.w_qq'\]"):
        tiny_numpy.checked_weights(extra, no_ff)
    assert set(tiny_numpy.checked_weights(_weights(no_ff), no_ff)) == set(tiny_numpy.parameter_shapes(no_ff))


def test_load_weights_refuses_stored_arrays_the_config_does_not_use(tmp_path):
    with_ff = tiny_numpy.TinyConfig(vocab=5, method="none", d_model=4, n_layers=1, n_heads=2, d_ff=8)
    no_ff = tiny_numpy.TinyConfig(vocab=5, method="none", d_model=4, n_layers=1, n_heads=2, d_ff=0)
    path = tmp_path / "w.npz"
    np.savez(path, **{f"m/{k}": v for k, v in _weights(with_ff).items()},
             **{f"other/{k}": v for k, v in _weights(no_ff).items()})
    with pytest.raises(ValueError, match=r"m/0\.w_1"):
        tiny_numpy.load_weights(path, "m", no_ff)
    assert set(tiny_numpy.load_weights(path, "other", no_ff)) == set(tiny_numpy.parameter_shapes(no_ff))


def test_torch_load_refuses_an_extra_nan_array():
    pytest.importorskip("torch")
    from mhalib.models.tiny import TinyDecoder

    config = tiny_numpy.TinyConfig(vocab=5, method="rope", d_model=8, n_layers=1, n_heads=2)
    model = TinyDecoder(config)
    w = model.numpy_weights()
    w["0.w_qq"] = np.full((8, 8), np.nan, np.float32)
    with pytest.raises(ValueError, match=r"\['0\.w_qq'\]"):
        model.load_numpy_weights(w)


# --- L8-L12. scored must be a boolean mask with a True; bucket a positive int --------------

def _torch_model():
    torch = pytest.importorskip("torch")
    from mhalib.models import tiny

    torch.manual_seed(0)
    config = tiny_numpy.TinyConfig(vocab=5, method="none", d_model=8, n_layers=1, n_heads=2)
    return torch, tiny, tiny.TinyDecoder(config)


def test_masked_loss_refuses_a_mask_that_scores_nothing():
    torch, tiny, _ = _torch_model()
    with pytest.raises(ValueError, match="scored marks no position"):
        tiny.masked_loss(torch.zeros((1, 2, 3)), torch.tensor([[0, 1]]), torch.tensor([[False, False]]))
    # zero logits: every token has probability 1/3, so the loss is ln 3
    loss = tiny.masked_loss(torch.zeros((1, 2, 3)), torch.tensor([[0, 1]]), torch.tensor([[True, False]]))
    assert float(loss) == pytest.approx(math.log(3))


@pytest.mark.parametrize("scored,exc,words", [
    pytest.param([[False, False, False]], ValueError, "scored marks no position", id="all-false"),
    pytest.param([[0, 1, 1]], TypeError, r"scored must be a boolean array.*int64", id="int-0-1"),
    pytest.param([[0.0, 1.0, np.nan]], TypeError, r"scored must be a boolean array.*float64", id="float-nan"),
])
def test_evaluate_refuses_a_scored_that_is_not_a_boolean_mask_with_a_true(scored, exc, words):
    torch, tiny, model = _torch_model()
    batch = dict(tokens=np.array([[1, 2, 3]]), targets=np.array([[2, 3, 4]]), scored=np.array(scored))
    with pytest.raises(exc, match=words):
        tiny.evaluate(model, batch, bucket=1)


@pytest.mark.parametrize("bucket,exc", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_evaluate_refuses_a_bucket_that_is_not_a_positive_int(bucket, exc):
    torch, tiny, model = _torch_model()
    batch = dict(tokens=np.array([[1, 2, 3]]), targets=np.array([[2, 3, 4]]), scored=np.array([[True] * 3]))
    with pytest.raises(exc, match=r"bucket must be an integer >= 1"):
        tiny.evaluate(model, batch, bucket=bucket)


def test_evaluate_buckets_a_boolean_mask():
    torch, tiny, model = _torch_model()
    batch = dict(tokens=np.array([[1, 2, 3]]), targets=np.array([[2, 3, 4]]), scored=np.array([[False, True, True]]))
    r = tiny.evaluate(model, batch, bucket=2)
    # bucket 0 holds positions 0-1 (one scored), bucket 1 position 2 (scored)
    assert r["accuracy_buckets"][0] is not None and len(r["accuracy_buckets"]) == 2
    assert r["loss"] == pytest.approx(np.mean(r["loss_buckets"]))


def test_masked_loss_accuracy_requires_a_boolean_scored():
    logits = np.zeros((1, 2, 3))
    with pytest.raises(TypeError, match=r"scored must be a boolean array.*float64"):
        tiny_numpy.masked_loss_accuracy(logits, [[0, 1]], [[0.0, np.nan]])
    with pytest.raises(TypeError, match=r"scored must be a boolean array.*int64"):
        tiny_numpy.masked_loss_accuracy(logits, [[0, 1]], [[0, 1]])
    # zero logits: loss ln 3; argmax picks token 0, so target 0 is right and target 1 wrong
    assert tiny_numpy.masked_loss_accuracy(logits, [[0, 1]], [[True, True]]) == pytest.approx((math.log(3), 0.5))


def test_torch_masked_loss_requires_a_boolean_scored():
    torch, tiny, _ = _torch_model()
    with pytest.raises(TypeError, match=r"scored must be a boolean array.*float32"):
        tiny.masked_loss(torch.zeros((1, 2, 3)), torch.tensor([[0, 1]]), torch.tensor([[0.0, float("nan")]]))
    with pytest.raises(ValueError, match=r"scored must have shape \(1, 2\)"):
        tiny.masked_loss(torch.zeros((1, 2, 3)), torch.tensor([[0, 1]]), torch.tensor([[True, True, True]]))


# --- L13. numpy masked arrays --------------------------------------------------------------

def test_softmax_refuses_a_masked_array():
    x = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    with pytest.raises(TypeError, match=r"x is a numpy masked array.*mask="):
        m.softmax(x)


def test_attention_refuses_a_masked_array_and_a_masked_mask():
    q = np.ma.masked_array(np.ones((2, 2)), mask=[[0, 1], [0, 0]])
    with pytest.raises(TypeError, match=r"q is a numpy masked array"):
        m.scaled_dot_product_attention(q, np.ones((2, 2)), np.ones((2, 2)))
    mask = np.ma.masked_array([[True, True], [True, True]], mask=[[0, 1], [0, 0]])
    with pytest.raises(TypeError, match=r"mask is a numpy masked array"):
        m.scaled_dot_product_attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), mask)


# --- L14. integers that float64 does not hold (third pass) ------------------------------------

def test_softmax_refuses_integer_scores_that_float64_cannot_hold():
    # softmax([2**53 + 1, 2**53]) is [e/(e+1), 1/(e+1)] = [0.731, 0.269]; as float64 both read
    # 2**53 and the answer came back [0.5, 0.5]
    with pytest.raises(ValueError, match=r"^x holds the integer 9007199254740993, beyond 2\*\*53 .*float64"):
        m.softmax(np.array([2**53 + 1, 2**53], dtype=np.int64))
    with pytest.raises(ValueError, match=r"^x holds the integer 18446744073709551615, beyond 2\*\*53"):
        m.softmax(np.array([2**64 - 1, 0], dtype=np.uint64))
    with pytest.raises(ValueError, match=r"^logits holds the integer -9223372036854775808"):
        m.filter_logits(np.array([np.iinfo(np.int64).min, 0]))
    e = math.e
    np.testing.assert_allclose(m.softmax(np.array([2**53, 2**53 - 1], dtype=np.int64)), [e / (e + 1), 1 / (e + 1)])


def test_attention_refuses_integer_queries_and_keys_whose_scores_float64_cannot_hold():
    """q = [2**40, 1] against keys [2**40, 1] and [2**40, 2]: the scores 2**80 + 1 and 2**80 + 2
    (over sqrt 2) differ by 1/sqrt 2, so the weights are e^(1/sqrt 2) : 1, [0.330, 0.670] by hand;
    in float64 both scores read 2**80 / sqrt 2 and the weights came back [0.5, 0.5]."""
    q, k, v = np.array([[2**40, 1]]), np.array([[2**40, 1], [2**40, 2]]), np.eye(2)
    with pytest.raises(ValueError, match=r"^q and k are integers whose scores q \. k can reach .* beyond 2\*\*53"):
        m.scaled_dot_product_attention(q, k, v)
    # within 2**53 every integer score is exact: with scale 1 the weights are e : 1 by hand
    e = math.e
    _, w = m.scaled_dot_product_attention(np.array([[2**20, 1]]), np.array([[2**20, 1], [2**20, 2]]), v, scale=1)
    np.testing.assert_allclose(w, [[1 / (e + 1), e / (e + 1)]], rtol=1e-14)


def test_a_rotation_by_an_integer_angle_float64_cannot_hold_is_refused():
    """Pass twenty-one: rotation_matrix(2**53 + 1) was rotation_matrix(2**53), cos -0.5285 where
    cos(2**53 + 1) is 0.4288 (mpmath): an integer angle is turned in float64. Refused, as
    apply_rope refuses such positions; just below the limit the angle is exact."""
    import mpmath

    for angle in (2**53 + 1, np.int64(2**62), -(2**53)):
        with pytest.raises(ValueError, match=r"^angle must stay below 2\*\*53"):
            m.rotation_matrix(angle)
    assert m.rotation_matrix(2**53 - 1)[0, 0] == pytest.approx(float(mpmath.cos(2**53 - 1)), abs=1e-15)


def test_causal_tile_counts_refuses_more_blocks_than_it_can_count():
    """Pass twenty-one: causal_tile_counts(2**40, 1, 1) looped over 2**40 query blocks and never
    returned; it names the count and the way out."""
    with pytest.raises(ValueError, match=r"^T / block_q makes 1,099,511,627,776 query blocks, more than the 100,000,000"):
        m.causal_tile_counts(2**40, 1, 1)
    assert m.causal_tile_counts(2**40, 2**33, 2**33)["visited"] > 0  # 128 blocks: counted


def test_dot_product_variance_refuses_a_single_sample():
    # Var(q . k) = d_head; one sample returned 0.0, a variance of zero for any d_head
    with pytest.raises(ValueError, match=r"^n_samples must be an integer >= 2 .*got 1"):
        m.dot_product_variance(64, 1)
    with pytest.raises(ValueError, match=r"^n_samples must be an integer >= 1, got 0"):
        m.dot_product_variance(64, 0)
    assert m.dot_product_variance(4, 2, seed=0) > 0


# --- L15. angles past 2**53 rad (a base below 1) --------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: m.sinusoidal_encoding(3, 4, base=1e-300),
    lambda: m.offset_matrix(1, 4, base=1e-300),
    lambda: m.apply_rope(np.ones((3, 4)), base=1e-300),
])
def test_angles_past_2_to_the_53_radians_are_refused(call):
    # base 1e-300, D = 4: omega_1 = base**(-1/2) = 1e150, so position p turns p * 1e150 rad, where
    # neighbouring float64 values lie ~1e134 rad apart: sin and cos came back as arbitrary numbers
    with pytest.raises(ValueError, match=r"angles .* reach [12]e\+150 rad, past 2\*\*53.*base=1e-300: use a base >= 1"):
        call()


def test_a_base_below_1_with_angles_float64_holds_is_computed():
    # base 0.25, D = 4: omega = (1, 2); PE[3] = (sin 3, cos 3, sin 6, cos 6)
    pe = m.sinusoidal_encoding(4, 4, base=0.25)
    np.testing.assert_allclose(pe[3], [math.sin(3), math.cos(3), math.sin(6), math.cos(6)], rtol=1e-14)


def test_float16_positions_are_checked_without_an_overflow_warning():
    # exact_positions compared a float16 maximum with 2**64, whose cast to float16 overflowed
    x = np.ones((3, 4))
    out = m.apply_rope(x, np.array([0, 1, 2048], dtype=np.float16))
    np.testing.assert_allclose(out, m.apply_rope(x, np.array([0, 1, 2048])))


# --- L16. tiled_attention_backward given another pass's lse -----------------------------------

def test_tiled_attention_backward_refuses_an_lse_that_is_not_the_forward_passs():
    rng = np.random.default_rng(0)
    q, k, v, do = (rng.standard_normal((5, 3)) for _ in range(4))
    o, lse = m.tiled_attention(q, k, v, block_q=2, block_k=2, return_lse=True)
    closed = m.attention_backward(q, k, v, do)
    for got, want in zip(m.tiled_attention_backward(q, k, v, do, o, lse, block_q=2, block_k=2), closed):
        np.testing.assert_allclose(got, want, atol=1e-12)
    # lse of zeros (or of a causal pass) gave gradients off by the factor sum_j exp(s_ij), silently
    with pytest.raises(ValueError, match=r"lse is not the log-sum-exp of the forward pass .*row \(0,\) sum to"):
        m.tiled_attention_backward(q, k, v, do, o, np.zeros(5))
    _, lse_causal = m.tiled_attention(q, k, v, causal=True, return_lse=True)
    with pytest.raises(ValueError, match=r"lse is not the log-sum-exp"):
        m.tiled_attention_backward(q, k, v, do, o, lse_causal)
    # a row with no key: lse -inf, its weights sum to 0, and that is what the check expects
    mask = np.ones((5, 5), bool)
    mask[2] = False
    o, lse = m.tiled_attention(q, k, v, mask=mask, return_lse=True)
    assert np.isneginf(lse[2])
    m.tiled_attention_backward(q, k, v, do, o, lse, mask=mask)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tiled_attention_backward_refuses_an_out_that_is_not_the_forward_passs(dtype):
    """``out`` enters the gradients only through D_i = dO_i . out_i. Before, another input's
    output (or a stale one) shifted every gradient of its rows by a wrong D, silently. The check
    reads D off the tiles (sum_j P_ij dP_ij, no extra matmul); an out that differs from the
    forward's only where dO is orthogonal to it gives the same gradients, and passes."""
    rng = np.random.default_rng(1)
    q, k, v, do = (rng.standard_normal((2, 6, 4)).astype(dtype) for _ in range(4))
    o, lse = m.tiled_attention(q, k, v, block_q=4, block_k=4, return_lse=True)
    closed = m.attention_backward(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), do.astype(np.float64))
    tol = 1e-12 if dtype == np.float64 else 1e-4
    for got, want in zip(m.tiled_attention_backward(q, k, v, do, o, lse, block_q=4, block_k=4), closed):
        np.testing.assert_allclose(got, want, atol=tol)
    other, _ = m.tiled_attention(v, k, q, return_lse=True)  # another pass's output, same shape
    with pytest.raises(ValueError, match=r"out is not the forward pass's output on these inputs: in row \(\d+, \d+\), "
                                         r"d_out \. out = .*give d_out \. O = "):
        m.tiled_attention_backward(q, k, v, do, other, lse, block_q=4, block_k=4)
    stale = o.copy()
    stale[1, 3] += dtype(0.01)  # one row, a little
    with pytest.raises(ValueError, match=r"in row \(1, 3\)"):
        m.tiled_attention_backward(q, k, v, do, stale, lse, block_q=4, block_k=4)
    # a change orthogonal to dO in every row leaves D, so the gradients, as they were
    e = rng.standard_normal(o.shape).astype(dtype)
    e -= (e * do).sum(-1, keepdims=True) / (do * do).sum(-1, keepdims=True) * do
    for got, want in zip(m.tiled_attention_backward(q, k, v, do, o + e, lse, block_q=4, block_k=4), closed):
        np.testing.assert_allclose(got, want, atol=tol * 10)


def test_tiled_attention_backward_in_float16_refuses_another_mask_or_scale_and_accepts_its_own_passes():
    """float16 inputs are exponentiated and summed in float32, so their lse is checked at float32's
    tolerance, not float16's 4 sqrt(eps) = 0.125 (which let through a backward with another mask
    than the forward's, gradients 3 to 6 % off, and another scale, 11 to 14 % off). Their own
    passes (400 random shapes, block sizes, causal or not, values with and without an offset)
    all pass, gradients within float16's rounding of the float64 closed form."""
    rng = np.random.default_rng(1)
    q, do = (rng.standard_normal((4, 8)).astype(np.float16) for _ in range(2))
    k, v = (rng.standard_normal((16, 8)).astype(np.float16) for _ in range(2))
    o, lse = m.tiled_attention(q, k, v, return_lse=True)
    mask = np.ones((4, 16), bool)
    mask[:, 3] = False
    with pytest.raises(ValueError, match=r"lse is not the log-sum-exp"):
        m.tiled_attention_backward(q, k, v, do, o, lse, mask=mask)
    with pytest.raises(ValueError, match=r"lse is not the log-sum-exp"):
        m.tiled_attention_backward(q, k, v, do, o, lse, scale=1.1 / np.sqrt(8))
    o_shifted, _ = m.tiled_attention(q, k, v + np.float16(0.5), return_lse=True)  # another pass's out
    with pytest.raises(ValueError, match=r"out is not the forward pass's output"):
        m.tiled_attention_backward(q, k, v, do, o_shifted, lse)
    for _ in range(400):
        T, S, d = int(rng.integers(1, 40)), int(rng.integers(1, 80)), int(rng.choice([4, 8, 16, 64]))
        size = float(rng.choice([0.1, 1.0, 3.0]))
        q, k, v, do = (rng.standard_normal(shape).astype(np.float16) * np.float16(size)
                       for shape in [(T, d), (S, d), (S, d), (T, d)])
        v = v + np.float16(rng.choice([0.0, 5.0]))
        causal = bool(rng.integers(2)) and T <= S
        blocks = dict(block_q=int(rng.integers(1, 20)), block_k=int(rng.integers(1, 20)))
        o, lse = m.tiled_attention(q, k, v, causal=causal, return_lse=True, **blocks)
        m.tiled_attention_backward(q, k, v, do, o, lse, causal=causal, **blocks)  # raises if refused


@pytest.mark.parametrize("scale, dtype", [(1e160, np.float64), (1e20, np.float32), (1e-170, np.float64),
                                          (1e-25, np.float32)])
def test_the_out_check_holds_at_any_scale_of_the_values(scale, dtype):
    """The check of ``out`` took |dO| max |v| from sums of squares in the working type: with
    values near 1e160 (float32: 1e20) they overflowed, the tolerance was inf, and a wrong ``out``
    (zeros) passed, giving wrong gradients silently; near 1e-170 (float32: 1e-25) they
    underflowed, and the forward pass's own ``out`` was refused with two equal numbers in the
    message (pass twenty-seven). Expected gradients: torch autograd in float64 on the same values."""
    import torch

    rng = np.random.default_rng(0)
    q, k, do = (rng.standard_normal((3, 2)).astype(dtype) for _ in range(3))
    v = (rng.standard_normal((3, 2)) * scale).astype(dtype)
    o, lse = m.tiled_attention(q, k, v, return_lse=True)
    with pytest.raises(ValueError, match=r"out is not the forward pass's output"):
        m.tiled_attention_backward(q, k, v, do, np.zeros_like(o), lse)
    got = m.tiled_attention_backward(q, k, v, do, o, lse)
    Q, K = (torch.tensor(a.astype(np.float64), requires_grad=True) for a in (q, k))
    V = torch.tensor(v.astype(np.float64) / scale, requires_grad=True)  # v / scale: no overflow in float64
    (torch.softmax(Q @ K.T / np.sqrt(2), -1) @ V).backward(torch.tensor(do.astype(np.float64)))
    want = [Q.grad.numpy() * scale, K.grad.numpy() * scale, V.grad.numpy()]  # dq, dk scale with v; dv does not
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=1e-4 if dtype == np.float32 else 1e-10,
                                   atol=1e-5 * np.abs(w).max())


def _tiled_or_closed(which, q, k, v, do):
    """The gradients from the closed form, or from the tiled pass (blocks of 2 and 3) on its own
    forward pass's ``out`` and ``lse``."""
    if which == "closed":
        return m.attention_backward(q, k, v, do)
    o, lse = m.tiled_attention(q, k, v, block_q=2, block_k=3, return_lse=True)
    return m.tiled_attention_backward(q, k, v, do, o, lse, block_q=2, block_k=3)


@pytest.mark.parametrize("which", ["closed", "tiled"])
@pytest.mark.parametrize("dtype, sq, sk, sv", [
    pytest.param(np.float64, 1e-100, 1e100, 1e-160, id="float64-dP-1e-320"),
    pytest.param(np.float64, 1e-100, 1e100, 1e-162, id="float64-dP-1e-324"),
    pytest.param(np.float64, 1e-100, 1e-100, 1e160, id="float64-dP-1e320"),
    pytest.param(np.float32, 1e-10, 1e10, 1e-22, id="float32-dP-1e-44"),
    pytest.param(np.float32, 1e-10, 1e-10, 1e21, id="float32-dP-1e42"),
])
def test_gradients_keep_their_digits_where_dO_times_v_leaves_the_float_range(which, dtype, sq, sk, sv):
    """``dP = dO V^T`` underflowed (or overflowed) where ``dO`` and ``V`` were both scaled by a
    small (large) ``sv``, though every gradient fits: ``dq ~ scale dS K`` is near ``sk * sv**2``
    (1e-220 for the first case, 1e220 for the third). Both backward passes gave dq = 0 for dP
    near 1e-324, three digits for 1e-320, and refused the overflowing cases as "too large"
    (pass thirty-one). Expected: torch autograd in float64 on the same q and k and the unscaled
    values, times ``sv**2`` (dq, dk: bilinear in dO and V) or ``sv`` (dv: linear in dO)."""
    import torch

    rng = np.random.default_rng(0)
    T, S, d = 5, 7, 4
    q, k, v, do = (rng.standard_normal(shape) for shape in ((T, d), (S, d), (S, d), (T, d)))
    q, k = (q * sq).astype(dtype), (k * sk).astype(dtype)
    v_s, do_s = (v * sv).astype(dtype), (do * sv).astype(dtype)
    got = _tiled_or_closed(which, q, k, v_s, do_s)
    Q, K = (torch.tensor(a.astype(np.float64), requires_grad=True) for a in (q, k))
    V = torch.tensor(v_s.astype(np.float64) / sv, requires_grad=True)  # float64 holds these unscaled
    (torch.softmax(Q @ K.T / 2, -1) @ V).backward(torch.tensor(do_s.astype(np.float64) / sv))
    want = [Q.grad.numpy() * sv * sv, K.grad.numpy() * sv * sv, V.grad.numpy() * sv]
    for g, w, name in zip(got, want, ("dq", "dk", "dv")):
        assert g.dtype == dtype
        if np.abs(w).max() < np.finfo(dtype).tiny:  # dk near 1e-420: below the type, 0 or subnormal
            assert np.abs(g).max() <= np.finfo(dtype).tiny, name
            continue
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-6 * np.abs(w).max(), err_msg=name)


@pytest.mark.parametrize("dtype, sv, sd", [(np.float64, 1e-154, 1e-154), (np.float64, 1e-160, 1e-150),
                                           (np.float32, 1e-20, 1e-19)])
@pytest.mark.parametrize("wrong", [-1.0, 3.0])
def test_a_wrong_out_is_refused_where_dO_times_v_is_subnormal(dtype, sv, sd, wrong):
    """The check of ``out`` allowed ``+ tiny`` for sums of subnormal products: where ``|dO| |v|``
    fell below the smallest normal number (1e-308 in float64, 1e-38 in float32), a negated or
    tripled ``out`` passed and dq came back 188 % off (pass thirty). Now the check compares in
    units of dO's rows and the values, where any wrong ``out`` with ``dO . out != 0`` is far
    outside rounding."""
    rng = np.random.default_rng(0)
    q, k, v, do = (rng.standard_normal(shape) for shape in ((5, 4), (7, 4), (7, 4), (5, 4)))
    q, k, v, do = q.astype(dtype), k.astype(dtype), (v * sv).astype(dtype), (do * sd).astype(dtype)
    o, lse = m.tiled_attention(q, k, v, block_q=2, block_k=3, return_lse=True)
    assert float(np.abs(np.einsum("td,td->t", do.astype(np.float64), o.astype(np.float64))).min()) > 0
    with pytest.raises(ValueError, match=r"out is not the forward pass's output.*d_out \. out = -?\d"):
        m.tiled_attention_backward(q, k, v, do, o * dtype(wrong), lse, block_q=2, block_k=3)
    m.tiled_attention_backward(q, k, v, do, o, lse, block_q=2, block_k=3)  # its own out passes


def _torch_gradients(q, k, v, do, scale, mask=None, causal=False):
    """dq, dk, dv by torch autograd in float64 on the same values (a row with no key: 0)."""
    import torch

    Q, K, V = (torch.tensor(np.asarray(a, np.float64), requires_grad=True) for a in (q, k, v))
    s = (Q @ K.transpose(-1, -2)) * scale
    allowed = np.ones(s.shape, bool) if mask is None else np.broadcast_to(mask, s.shape)
    if causal:
        allowed = allowed & np.tril(np.ones(s.shape[-2:], bool))
    s = s.masked_fill(~torch.tensor(allowed), -float("inf"))
    (torch.nan_to_num(torch.softmax(s, -1)) @ V).backward(torch.tensor(np.asarray(do, np.float64)))
    return Q.grad.numpy(), K.grad.numpy(), V.grad.numpy()


def _exact_gradients(q, k, v, do, scale, mask=None, causal=False):
    """dq, dk, dv at 60 digits (mpmath), rounded to float64: the closed form, ``dS_j = P_j sum_l
    P_l (dP_j - dP_l)`` with no 1 - P_m formed (torch's autograd reads the dominated key's gradient as 0 where the largest
    weight rounds to 1, as the plain formula did: pass forty)."""
    import mpmath

    mp = mpmath.mp.clone() if hasattr(mpmath.mp, "clone") else mpmath.mp
    mp.dps = 60
    q, k, v, do = (np.asarray(a, np.float64) for a in (q, k, v, do))
    T, S = q.shape[0], k.shape[0]
    allowed = np.ones((T, S), bool) if mask is None else np.broadcast_to(mask, (T, S))
    if causal:
        allowed = allowed & np.tril(np.ones((T, S), bool))
    F = lambda x: mp.mpf(float(x))  # noqa: E731
    Q = [[F(x) for x in row] for row in q]
    K = [[F(x) for x in row] for row in k]
    V = [[F(x) for x in row] for row in v]
    G = [[F(x) for x in row] for row in do]
    sc = F(scale)
    dq, dk, dv = np.zeros(q.shape), [[mp.mpf(0)] * k.shape[1] for _ in range(S)], [[mp.mpf(0)] * v.shape[1] for _ in range(S)]
    for i in range(T):
        keys = [j for j in range(S) if allowed[i, j]]
        if not keys:
            continue
        s = {j: sc * mp.fsum(a * b for a, b in zip(Q[i], K[j])) for j in keys}
        top = max(s.values())
        w = {j: mp.exp(s[j] - top) for j in keys}
        total = mp.fsum(w.values())
        P = {j: w[j] / total for j in keys}
        dP = {j: mp.fsum(a * b for a, b in zip(G[i], V[j])) for j in keys}
        # term by term: 1 - P_m is not formed even here (e^-707 beside 1 needs 307 digits)
        dS = {j: P[j] * mp.fsum(P[l] * (dP[j] - dP[l]) for l in keys) for j in keys}
        for c in range(q.shape[1]):
            dq[i, c] = float(sc * mp.fsum(dS[j] * K[j][c] for j in keys))
        for j in keys:
            for c in range(k.shape[1]):
                dk[j][c] += sc * dS[j] * Q[i][c]
            for c in range(v.shape[1]):
                dv[j][c] += P[j] * G[i][c]
    return dq, np.array([[float(x) for x in r] for r in dk]), np.array([[float(x) for x in r] for r in dv])


def _case_tiny_weight():  # P = e^-707 carries the whole dq (k_0 = 0); dO V^T near 1e20
    b = 1e-16
    return dict(q=[[-707 / b]], k=[[0.0], [b]], v=[[1e10], [-1e10]], do=[[1e10]], scale=1.0)


def _case_subnormal_keys():  # k subnormal, d_out near 1e300
    rng = np.random.default_rng(3)
    return dict(q=rng.standard_normal((3, 2)), k=[[5e-324, 0.0], [1e-323, 0.0], [0.0, 5e-324]],
                v=rng.standard_normal((3, 2)), do=rng.standard_normal((3, 2)) * 1e300, scale=1.0)


def _case_masked_huge_value():  # key 0, seen by no query, holds 1e300; the others near 1e-30
    rng = np.random.default_rng(0)
    q, k, v, do = (rng.standard_normal((3, 2)) for _ in range(4))
    v = v * 1e-30
    v[0] = 1e300
    return dict(q=q, k=k, v=v, do=do, scale=1.0, mask=np.array([[False, True, True]] * 3))


def _case_padded_row():  # query 0 sees no key (a padded row) and its d_out is 1e300
    rng = np.random.default_rng(12)
    q, k, v, do = (rng.standard_normal(s) for s in ((3, 2), (4, 2), (4, 2), (3, 2)))
    mask = np.ones((3, 4), bool)
    mask[0] = False
    do[0] *= 1e300
    do[1:] *= 1e-30
    return dict(q=q, k=k, v=v, do=do, scale=1.0, mask=mask)


def _case_causal_first_row():  # query 0's one weight is 1, so its dS is 0, beside d_out 1e300
    rng = np.random.default_rng(5)
    q, k, v, do = (rng.standard_normal((4, 3)) for _ in range(4))
    do[0] *= 1e300
    do[1:] *= 1e-20
    return dict(q=q, k=k, v=v, do=do, scale=1.0, causal=True)


def _case_d_out_row_spanning():  # d_out's row holds 1e300 and 1e-300, and v's column for the 1e300 is 0
    return dict(q=[[0.3, -1.2], [0.8, 0.1]], k=[[1.0, 0.5], [-0.7, 0.2], [0.1, -1.1]],
                v=[[0.0, 1.0], [0.0, -0.5], [0.0, 2.0]], do=[[1e300, 1e-300], [-1e300, 2e-300]], scale=1.0)


def _case_key_head_spanning():  # one key holds 1e300, the others 1e-300 in another feature
    rng = np.random.default_rng(1)
    return dict(q=[[0.0, 1.0], [0.0, 2.0]], k=[[1e300, 0.0], [0.0, 1e-300], [0.0, 3e-300]],
                v=rng.standard_normal((3, 2)), do=rng.standard_normal((2, 2)), scale=1.0)


def _case_d_out_rows_apart():  # d_out rows 1e300 and 1e-300, query rows orthogonal: dk's second column
    rng = np.random.default_rng(2)
    do = rng.standard_normal((2, 2))
    do[0] *= 1e300
    do[1] *= 1e-300
    return dict(q=[[1.0, 0.0], [0.0, 1.0]], k=rng.standard_normal((3, 2)), v=rng.standard_normal((3, 2)), do=do,
                scale=1.0)


def _case_query_head_spanning():  # one query holds 1e300, the other 1e-300 in another feature
    rng = np.random.default_rng(3)
    return dict(q=[[1e300, 0.0], [0.0, 1e-300]], k=[[0.0, 1.0], [0.0, 2.0], [0.0, -1.0]],
                v=rng.standard_normal((3, 2)), do=rng.standard_normal((2, 2)), scale=1.0)


def _case_scale_brings_it_back():  # dS K near 4e-324 on the way, times scale 1e306: dq near 4e-18
    return dict(q=[[40.0]], k=[[1e-306], [0.0]], v=[[0.0], [1.0]], do=[[1.0]], scale=1e306)


@pytest.mark.parametrize("which", ["closed", "tiled"])
@pytest.mark.parametrize("case", [_case_tiny_weight, _case_subnormal_keys, _case_masked_huge_value, _case_padded_row,
                                  _case_causal_first_row, _case_d_out_row_spanning, _case_key_head_spanning,
                                  _case_d_out_rows_apart, _case_query_head_spanning, _case_scale_brings_it_back],
                         ids=lambda f: f.__name__[6:])
def test_gradients_keep_their_digits_where_a_weight_is_tiny_or_one_entry_is_huge(which, case):
    """The first repair worked dP in units that put its largest entry near 1: then dS = P o (dP -
    D) underflowed where a weight was tiny (dq = -0 for -1.8e-303), one large entry of a value
    head or a d_out row scaled every other entry to 0 (a masked key's 1e300 zeroed every
    gradient), and a padded row's large d_out set the unit of dk for all rows (dk = 0) (pass
    thirty-one). The second scaled each factor to a largest entry near 1, and a row of d_out, a
    head of keys or queries, or the rows of dS spanning 1e300 to 1e-300 lost their small
    entries, whole gradient components with them (pass thirty-two). Expected: the closed form at
    60 digits (torch's autograd read the dominated key's dk as 0 in the first case: pass forty)."""
    c = case()
    q, k, v, do = (np.asarray(c[n], np.float64) for n in ("q", "k", "v", "do"))
    extra = {n: c[n] for n in ("mask", "causal") if n in c}
    if which == "closed":
        got = m.attention_backward(q, k, v, do, scale=c["scale"], **extra)
    else:
        o, lse = m.tiled_attention(q, k, v, scale=c["scale"], block_q=2, block_k=2, return_lse=True, **extra)
        got = m.tiled_attention_backward(q, k, v, do, o, lse, scale=c["scale"], block_q=2, block_k=2, **extra)
    want = _exact_gradients(q, k, v, do, c["scale"], c.get("mask"), c.get("causal", False))
    for g, w, name in zip(got, want, ("dq", "dk", "dv")):
        normal = np.abs(w) >= np.finfo(np.float64).tiny  # (a subnormal gradient has fewer digits)
        assert np.abs(w[normal]).max(initial=0) == 0 or np.allclose(g[normal], w[normal], rtol=1e-9, atol=0), (name, g, w)
        assert (np.abs(g[~normal]) <= np.finfo(np.float64).tiny).all(), (name, g, w)


def test_a_wrong_lse_is_refused_where_d_out_is_orthogonal_to_out():
    """A wrong lse was accepted wherever dO_i . out_i = 0 (a loss of O / |O| gives such dO): the
    check of the weights' sum allowed 4 sqrt(eps), 6e-8 in float64 and 1.4e-3 for a float32 lse,
    and every gradient of the row, dv too, came out scaled by exp(-offset) (pass thirty-one).
    Now the weights' sum is held to the rounding of the scores and of lse."""
    rng = np.random.default_rng(7)
    q, k, v, do = (rng.standard_normal(s) for s in ((4, 3), (6, 3), (6, 3), (4, 3)))
    o, lse = m.tiled_attention(q, k, v, return_lse=True)
    do = do - (np.sum(do * o, -1, keepdims=True) / np.sum(o * o, -1, keepdims=True)) * o  # dO_i . out_i = 0
    for wrong in (lse + 5e-8, (lse - 1.3e-3).astype(np.float32)):
        with pytest.raises(ValueError, match=r"lse is not the log-sum-exp.*sum to (\S+), not 1;") as refused:
            m.tiled_attention_backward(q, k, v, do, o, wrong)
        shown = re.search(r"sum to (\S+), not 1;", str(refused.value)).group(1)
        assert float(shown) != 1, str(refused.value)  # it said "sum to 1, not 1" for 0.9999994
    want = m.attention_backward(q, k, v, do)
    for g, w in zip(m.tiled_attention_backward(q, k, v, do, o, lse.astype(np.float32)), want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-6 * np.abs(w).max())  # the forward's lse in float32 passes


def test_the_forward_pass_own_out_and_lse_pass_at_any_block_size_and_score_size():
    """Correct out and lse were refused (pass thirty-one): scores of std 64 recomputed in tiles of
    16 where the forward pass used 64 (another summation order), scores near 1e6 to 1e10 ("sum
    to 1, not 1", "d_out . out = 1.2525, but ... 1.2525"), float16 q, k, v beside a float64
    d_out (the out check used float64's eps for a float16 out), and subnormal values. Expected:
    accepted, and equal to the closed form within the scores' own rounding."""
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 2, 64, 64)) * 8
    v, do = rng.standard_normal((2, 2, 64, 64))
    o, lse = m.tiled_attention(q, k, v, return_lse=True)
    got = m.tiled_attention_backward(q, k, v, do, o, lse, block_q=16, block_k=16)
    for g, w in zip(got, m.attention_backward(q, k, v, do)):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9 * np.abs(w).max())
    q, k, v, do = rng.standard_normal((3, 5, 3)), rng.standard_normal((7, 3)), rng.standard_normal((7, 2)), \
        rng.standard_normal((3, 5, 2))
    for scale in (1e3, 1e6, 1e8, 1e10):
        o, lse = m.tiled_attention(q, k, v, scale=scale, return_lse=True)
        got = m.tiled_attention_backward(q, k, v, do, o, lse, scale=scale, block_q=2, block_k=3)
        want = m.attention_backward(q, k, v, do, scale=scale)
        bound = float(np.abs(np.einsum("...td,sd->...ts", q, k)).max()) * scale * 1e-15  # |s| eps, relative
        assert np.abs(got[2] - want[2]).max() <= bound * np.abs(want[2]).max(), scale
    q16, k16, v16 = (a.astype(np.float16) for a in (q[0], k, v))
    o, lse = m.tiled_attention(q16, k16, v16, return_lse=True)
    assert o.dtype == np.float16
    got = m.tiled_attention_backward(q16, k16, v16, do[0], o, lse)  # a float64 d_out beside them
    assert got[0].dtype == np.float64
    sub = v * 1e-310  # subnormal values
    o, lse = m.tiled_attention(q[0], k, sub, return_lse=True)
    m.tiled_attention_backward(q[0], k, sub, do[0], o, lse, block_q=2, block_k=4)
    with pytest.raises(ValueError, match="out is not the forward pass's output"):
        m.tiled_attention_backward(q[0], k, sub, do[0], -o, lse, block_q=2, block_k=4)


def test_the_tiled_pass_refuses_what_its_tiles_cannot_check_and_warns_of_nothing():
    """Pass thirty-two: an lse 2e-3 off (float32, 4,096 keys) or 0.3 off (float32 scores near 900)
    passed, the check's d |q| |k| and S terms being thousands of times the rounding; the
    forward's own lse at scores near 1e30 was refused as "sum to inf, not 1", and at scores
    near 1e300 the tolerance overflowed (two RuntimeWarnings) and a negated out passed; values
    at float32's smallest subnormal gave gradients of the wrong sign. Now each is refused with a
    reason, or passes, without a warning."""
    f = np.float32
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((8, 64)).astype(f), rng.standard_normal((4096, 64)).astype(f)
    v, do = rng.standard_normal((4096, 16)).astype(f), rng.standard_normal((8, 16)).astype(f)
    o, lse = m.tiled_attention(q, k, v, return_lse=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.tiled_attention_backward(q, k, v, do, o, lse, block_q=4, block_k=100)  # its own: passes
        with pytest.raises(ValueError, match=r"sum to 0\.998\d*, not 1"):
            m.tiled_attention_backward(q, k, v, do, o, lse + f(2e-3))
        q, k = (rng.standard_normal((16, 64)) * 30).astype(f), (rng.standard_normal((16, 64)) * 30).astype(f)
        o, lse = m.tiled_attention(q, k, v[:16], return_lse=True)
        m.tiled_attention_backward(q, k, v[:16], do[:1].repeat(16, 0), o, lse, block_q=4, block_k=4)
        with pytest.raises(ValueError, match=r"sum to 0\.74\d*, not 1"):
            m.tiled_attention_backward(q, k, v[:16], do[:1].repeat(16, 0), o, lse + f(0.3))
        for size, blocks in ((1e15, dict(block_q=2, block_k=3)), (1e150, {})):
            q, k = rng.standard_normal((5, 4)) * size, rng.standard_normal((7, 4)) * size
            vv, dd = rng.standard_normal((7, 3)), rng.standard_normal((5, 3))
            o, lse = m.tiled_attention(q, k, vv, return_lse=True)
            for out in (o, -o):
                with pytest.raises(ValueError, match=r"too large for their weights to be recomputed in tiles.*"
                                                     r"attention_backward"):
                    m.tiled_attention_backward(q, k, vv, dd, out, lse, **blocks)
        for dt, tiny, big in ((np.float32, 1.4e-45, 3e37), (np.float64, 5e-324, 1e300)):
            q, k = np.array([[0.5], [1.0]], dt), np.array([[1.0], [-1.0], [0.3]], dt)
            vv, dd = np.array([[1], [2], [-1]], dt) * dt(tiny), np.array([[1.0], [-2.0]], dt) * dt(big)
            o, lse = m.tiled_attention(q, k, vv, scale=1.0, return_lse=True)
            with pytest.raises(ValueError, match=r"values are too close to 0.*attention_backward"):
                m.tiled_attention_backward(q, k, vv, dd, o, lse, scale=1.0)
            want = _torch_gradients(q, k, vv, dd, 1.0)[0]
            np.testing.assert_allclose(m.attention_backward(q, k, vv, dd, scale=1.0)[0], want, rtol=1e-5)


@pytest.mark.parametrize("dtype, padded", [(np.float16, 300), (np.float32, 3e5), (np.float64, 1e20)])
def test_a_padded_keys_value_widens_no_rows_check_of_out(dtype, padded):
    """The check of out allowed rounding relative to |dO_i| max_j |v_j| over every key, padded
    ones too: one masked key holding 300 in float16 (3e5 in float32, 1e20 in float64) let a
    negated out, zeros, or out + 0.5 pass, and the gradients came out 94 % to 294 % off (pass
    thirty-three). The size is now sum_j P_ij |v_j|, over the keys the row sees."""
    rng = np.random.default_rng(0)
    q, k, v, do = (rng.standard_normal(s).astype(dtype) for s in ((8, 8), (16, 8), (16, 8), (8, 8)))
    v[-1] = padded
    mask = np.ones((8, 16), bool)
    mask[:, -1] = False
    o, lse = m.tiled_attention(q, k, v, mask=mask, return_lse=True)
    got = m.tiled_attention_backward(q, k, v, do, o, lse, mask=mask)  # its own out passes
    want = _torch_gradients(q, k, v, do, 1 / np.sqrt(8), mask)
    np.testing.assert_allclose(got[0].astype(np.float64), want[0], atol=3e-2 * np.abs(want[0]).max())
    for wrong in (-o, np.zeros_like(o), o + dtype(0.5)):
        with pytest.raises(ValueError, match="out is not the forward pass's output"):
            m.tiled_attention_backward(q, k, v, do, wrong, lse, mask=mask)


def test_an_lse_of_minus_infinity_for_a_row_with_keys_is_refused():
    """lse = -inf says a row has no key; for a row that has one, whose scores are all near -1000,
    exp(s - 0) underflowed to a mass of 0, which is what -inf expects: a stale lse passed and
    the row's gradients came back 0 (pass thirty-three)."""
    q, k = np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[-1000.0, 0.0], [-1000.0, 5.0]])
    v, do = np.array([[1.0], [-1.0]]), np.ones((2, 1))
    o, lse = m.tiled_attention(q, k, v, scale=1.0, return_lse=True)
    stale = lse.copy()
    stale[0] = -np.inf
    with pytest.raises(ValueError, match=r"it is -inf \(no key to attend to\) for row \(0,\), which has keys"):
        m.tiled_attention_backward(q, k, v, do, o, stale, scale=1.0)
    got = m.tiled_attention_backward(q, k, v, do, o, lse, scale=1.0)
    for g, w in zip(got, _torch_gradients(q, k, v, do, 1.0)):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def test_overflowing_scores_keep_the_small_keys_beside_them():
    """Where q k^T overflows, the scores were computed with one power of two for all the keys of
    a head and one exponent per row from the largest magnitude: a key near 1e-300 beside one near
    -1e300 lost its score, and the weights read [0, 0.5, 0.5] for [0, 0.2689, 0.7311]; in float16
    (q = 300, a key at -300) the weights were 40 ulps off (pass thirty-four). Expected: torch
    float64 on the scores it can form (-inf, 1, 2), and the softmax of the exact scores."""
    import torch

    o, w = m.scaled_dot_product_attention([[1e300]], [[-1e300], [1e-300], [2e-300]], [[0.0], [1.0], [2.0]], scale=1.0)
    want = torch.softmax(torch.tensor([-np.inf, 1.0, 2.0], dtype=torch.float64), -1).numpy()
    np.testing.assert_allclose(w[0], want, rtol=1e-15)
    np.testing.assert_allclose(o[0, 0], want @ [0.0, 1.0, 2.0], rtol=1e-15)
    np.testing.assert_allclose(m.attention_backward([[1e300]], [[-1e300], [1e-300], [2e-300]], [[0.0], [1.0], [2.0]],
                                                    [[1.0]], scale=1.0)[2].ravel(), want, rtol=1e-15)
    f = np.float16
    q, k, v = np.array([[300]], f), np.array([[-300], [0.001], [0.003]], f), np.array([[0], [0], [1]], f)
    o, w = m.scaled_dot_product_attention(q, k, v, scale=1.0)
    exact = torch.softmax(torch.tensor(q.astype(np.float64) @ k.astype(np.float64).T), -1).numpy()[0]
    assert w.dtype == np.float16
    np.testing.assert_array_equal(w[0], exact.astype(np.float16))  # the float16 nearest the exact weights
    scores = m.attention_scores([[2.0**1000]], [[2.0**100], [2.0**-980]], scale=2.0**-100)
    assert scores[0].tolist() == [2.0**1000, 2.0**-80]  # by hand: 2^(1000+100-100), 2^(1000-980-100)
    # pass thirty-five: a largest value of 0, or of 1e-310, took the unit of the largest magnitude,
    # and -1 beside it read 0 or -inf; a float64 bias was cast to float32 scores' type (-1e39: -inf)
    e1 = float(torch.softmax(torch.tensor([0.0, -1.0], dtype=torch.float64), -1)[0])  # 0.7311
    w = m.scaled_dot_product_attention(np.array([[1e300]]), np.array([[0.0], [-1e-300], [-1e300]]), np.eye(3),
                                       scale=1.0)[1]
    np.testing.assert_allclose(w[0], [e1, 1 - e1, 0.0], rtol=1e-15)
    w = m.scaled_dot_product_attention(np.array([[1e300, 0.0], [0.0, 1.0]]), np.array([[0.0, 1e-310], [1e300, -1.0]]),
                                       np.eye(2), scale=1.0)[1]
    np.testing.assert_allclose(w[1], [e1, 1 - e1], rtol=1e-15)  # scores 1e-310 and -1
    q32, k32 = np.array([[1e20], [0]], np.float32), np.array([[1e20], [1e20]], np.float32)
    w = m.scaled_dot_product_attention(q32, k32, np.eye(2), scale=1.0, bias=np.array([[0, 0], [-1e39, -2e39]]))[1]
    assert w[1].tolist() == [1.0, 0.0]  # scores -1e39 and -2e39: a gap of 1e39


def test_float16_gradients_that_fit_float16_are_computed_not_refused():
    """dP = dO V^T is worked in float32, as the forward pass's P V is: with values and dO about
    300 wide, dO V^T passes float16's 65,504 while every gradient fits (torch, float64, on the
    same float16 inputs: max |dq| 5,543, |dk| 15,264, |dv| 200). Both backward passes refused
    such inputs: the closed form with "overflow in the gradient dq", the tiled one with "out is
    not the forward pass's output"."""
    import torch

    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((4, 1)).astype(np.float16), rng.standard_normal((5, 1)).astype(np.float16)
    v, do = (rng.standard_normal((5, 1)) * 300).astype(np.float16), (rng.standard_normal((4, 1)) * 300).astype(np.float16)
    Q, K, V = (torch.tensor(a.astype(np.float64), requires_grad=True) for a in (q, k, v))
    (torch.softmax(Q @ K.T, -1) @ V).backward(torch.tensor(do.astype(np.float64)))
    want = [t.grad.numpy() for t in (Q, K, V)]
    assert float((np.abs(do.astype(np.float64)) * np.abs(v.astype(np.float64)).max()).max()) > 65504  # |dP| can pass it
    o, lse = m.tiled_attention(q, k, v, return_lse=True)
    for got in (m.attention_backward(q, k, v, do), m.tiled_attention_backward(q, k, v, do, o, lse)):
        for g, w in zip(got, want):
            assert g.dtype == np.float16 and np.isfinite(g).all()
            # float16 keeps 11 bits (2**-11 = 0.05 %): the gradient's own rounding, and P (closed form)
            # or out (tiled) rounded to float16 and multiplied by |dP| (up to about 1e5): 0.2 % and 10
            np.testing.assert_allclose(g.astype(np.float64), w, atol=10, rtol=2e-3)


# --- L17. angles float64 holds only roughly (far positions, a frequency that is not 1) ----------

@pytest.mark.parametrize("start", [10**6, 10**8, 10**9])
def test_a_far_row_of_the_encoding_is_within_the_stated_angle_error_of_the_true_one(start):
    """PE[p] against sin and cos of p * 10000**(-2i/64) in 50-digit arithmetic (mpmath): every
    entry within ANGLE_ERROR (1e-6); 1e12 came back 3.4e-5 off, 2**52 0.27 off, with no error."""
    import mpmath

    mpmath.mp.dps = 50
    got = m.sinusoidal_encoding(2, 64, start=start)
    for r, p in enumerate((start, start + 1)):
        for i in range(32):
            angle = mpmath.mpf(p) * mpmath.power(10000, mpmath.mpf(-2 * i) / 64)
            assert abs(got[r, 2 * i] - float(mpmath.sin(angle))) <= 1e-6, (p, i)
            assert abs(got[r, 2 * i + 1] - float(mpmath.cos(angle))) <= 1e-6, (p, i)


def test_every_angle_accepted_near_the_limit_is_within_the_stated_error():
    """Probes just below and above the refusal, for bases whose frequencies carry a large
    |ln omega| (1e-6: omega up to 1e4; 3.3e15: down to 1e-5) and widths D that are not powers
    of two (the exponent -2i/D is rounded): what is accepted is within 1e-6 rad-sized error of
    the truth in 50 digits, for the encoding and for RoPE (a unit vector in each plane turned
    by the angle reads its cosine and sine). sin(449000 * 1e-6**(-4/6)) was accepted 3e-6 off."""
    import mpmath

    mpmath.mp.dps = 50
    rng = np.random.default_rng(17)
    accepted = refused = 0
    for base, D in [(1e-6, 6), (3.3e15, 6), (10000.0, 10), (0.5, 6), (10000.0, 64), (500000.0, 14)]:
        omega = m.sinusoidal_frequencies(D, base)
        for target in rng.uniform(1e7, 6e9, size=10):  # the largest angle p * omega_i
            p = int(target / omega.max())
            try:
                pe = m.sinusoidal_encoding(1, D, base, start=p)[0]
                x = np.tile([1.0, 0.0], D // 2)[None, :]  # (1, D): each plane's unit vector
                turned = m.apply_rope(x, [p], base=base)[0]
            except ValueError as exc:
                assert "more than 1e-06" in str(exc) or "2**53" in str(exc), exc
                refused += 1
                continue
            accepted += 1
            for i in range(D // 2):
                angle = mpmath.mpf(p) * mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / D)
                s, c = float(mpmath.sin(angle)), float(mpmath.cos(angle))
                assert abs(pe[2 * i] - s) <= 1e-6 and abs(pe[2 * i + 1] - c) <= 1e-6, (base, D, p, i)
                assert abs(turned[2 * i] - c) <= 1e-6 and abs(turned[2 * i + 1] - s) <= 1e-6, (base, D, p, i)
    assert accepted >= 10 and refused >= 10, (accepted, refused)  # both sides of the limit were probed


@pytest.mark.parametrize("call", [
    lambda: m.sinusoidal_encoding(1, 64, start=10**12),
    lambda: m.sinusoidal_encoding(1, 64, start=2**52),
    lambda: m.offset_matrix(10**12, 64),
    lambda: m.apply_rope(np.ones((1, 8)), [2**52]),
    lambda: m.apply_rope(np.ones((1, 8)), [-(10**13)]),
    # a base one float step below 1: every frequency rounds to 1.0, but only the first is 1
    # (the others are 1 + (2i/D) 2**-53): accepted 0.37 off at p = 2**53 - 2
    lambda: m.sinusoidal_encoding(1, 4, base=1 - 2**-53, start=2**53 - 2),
    lambda: m.offset_matrix(2**53 - 1, 4, base=1 - 2**-53),
    lambda: m.apply_rope(np.ones((1, 4)), [2**53 - 2], base=1 - 2**-53),
])
def test_angles_float64_holds_only_roughly_are_refused(call):
    with pytest.raises(ValueError, match=r"angles .* reach .* rad, where float64 holds an angle only to about "
                                         r".* more than 1e-06.*use angles below .* rad on that plane"):
        call()


def test_a_far_position_on_the_first_plane_alone_is_exact():
    """omega_0 = 1: p turns by exactly p rad, so far positions of a 2-wide encoding or rotation
    stay exact (and allowed) up to 2**53."""
    p = np.array([2**52, 2**53 - 1], np.float64)
    np.testing.assert_array_equal(m.sinusoidal_encoding(2, 2, start=2**53 - 2)[1], [math.sin(2**53 - 1), math.cos(2**53 - 1)])
    x = np.array([[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(m.apply_rope(x, p), np.stack([np.cos(p), np.sin(p)], axis=1), rtol=0, atol=1e-15)


# --- pass forty-six: integer angles, underflowing draws, estimators, documented counts ------------

@pytest.mark.parametrize("angle", [np.uint8(200), np.int8(100), np.int16(1000), np.int32(7), 200, np.uint64(2**40)],
                         ids=lambda a: f"{type(a).__name__}({a})")
def test_an_integer_angle_is_turned_in_float64(angle):
    # numpy takes int8/uint8 to float16 and int16 to float32: cos(200) of a uint8 read 0.4873
    r = m.rotation_matrix(angle)
    a = int(angle)
    assert r.dtype == np.float64
    np.testing.assert_allclose(r, [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], rtol=0, atol=4e-16)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_float_angle_keeps_its_type(dtype):
    assert m.rotation_matrix(dtype(0.5)).dtype == dtype


@pytest.mark.parametrize("std", [5e-324, 1e-320, 1e-309])
def test_a_std_whose_draws_fall_below_the_normal_range_is_refused(std):
    # 5e-324 gave 0.0 for 42% of a 3 x 4 table; 1e-320 kept about 3 digits of each draw
    with pytest.raises(ValueError, match=r"^std=.* is too small: \d+ of the 12 draws fall below float64's normal "
                                         r"range \(2.23e-308\).*choose a larger std"):
        m.learned_position_table(3, 4, seed=0, std=std)


def test_a_small_std_in_the_normal_range_scales_the_standard_draws_exactly():
    z = np.random.default_rng(0).standard_normal((3, 4))  # what N(0, std^2) scales, drawn alone
    std = 2.0**-900  # a power of two: std * z is exact, and far above 2.2e-308 for these draws
    np.testing.assert_array_equal(m.learned_position_table(3, 4, seed=0, std=std), z * std)


@pytest.mark.parametrize("given, shown", [(np.longdouble("1e-4000"), r"np.longdouble\('1e-4000'\) \(0.0 as a float64\)"),
                                          (10**400, r"1000+ \(inf as a float64\)"), (-2.0, r"-2.0$")])
def test_a_positive_float_float64_cannot_hold_is_named_as_given(given, shown):
    # a longdouble 1e-4000 std was refused as "got 0.0"
    with pytest.raises(ValueError, match=r"^std must be a finite number > 0, got " + shown):
        m.learned_position_table(3, 4, seed=0, std=given)


@pytest.mark.parametrize("n", [2, 3, 100])
def test_dot_product_variance_is_the_unbiased_sample_variance(n):
    import statistics

    x = [float(v) for v in m.dot_products(16, n, seed=5)]
    assert m.dot_product_variance(16, n, seed=5) == pytest.approx(statistics.variance(x), rel=1e-12, abs=0)


def test_a_stack_of_head_masks_broadcasts_with_the_batch_as_documented():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4))  # (B, T, D)
    w = [rng.standard_normal((4, 4)) for _ in range(3)]
    masks = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (M, H)
    one = {(i, b): m.mha_trace(x[b], *w, n_heads=2, head_mask=masks[i])["out"] for i in range(3) for b in range(2)}
    every = m.mha_trace(x, *w, n_heads=2, head_mask=masks[:, None, :])["out"]  # (M, 1, H): every mask on every sequence
    assert every.shape == (3, 2, 3, 4)
    for (i, b), out in one.items():
        np.testing.assert_allclose(every[i, b], out, rtol=0, atol=1e-13)
    paired = m.mha_trace(x, *w, n_heads=2, head_mask=masks[:2])["out"]  # (B, H): mask b on sequence b
    assert paired.shape == (2, 3, 4)
    for b in range(2):
        np.testing.assert_allclose(paired[b], one[(b, b)], rtol=0, atol=1e-13)


def test_a_kv_cache_holds_keys_and_values_of_their_own_widths():
    cache = m.KVCache(2, batch=3, n_kv_heads=2, d_head=4, d_v=6, dtype=np.float32)
    for layer in range(2):
        cache.append(layer, np.zeros((3, 2, 5, 4), np.float32), np.zeros((3, 2, 5, 6), np.float32))
    assert cache.nbytes == 2 * 3 * 2 * 5 * (4 + 6) * 4
    same = m.KVCache(2, batch=3, n_kv_heads=2, d_head=4, dtype=np.float16)
    for layer in range(2):
        same.append(layer, np.zeros((3, 2, 5, 4), np.float16), np.zeros((3, 2, 5, 4), np.float16))
    assert same.nbytes == m.kv_cache_bytes(2, 2, 4, 5, batch=3, dtype="float16")


def test_each_sliding_window_row_holds_its_window_and_the_sinks_before_it():
    for T, S, window, n_sink in [(6, 6, 2, 1), (4, 9, 3, 2), (9, 5, 2, 4), (7, 7, 10, 3), (5, 8, 1, 8)]:
        mask = m.sliding_window_mask(T, window, S=S, n_sink=n_sink)
        for i in range(T):
            p = i + S - T
            seen = {j for j in range(S) if j <= p and (p - window < j or j < n_sink)}  # by the definition
            assert mask[i].sum() == len(seen) == (0 if p < 0 else min(window, p + 1) + min(n_sink, max(0, p + 1 - window)))


@pytest.mark.parametrize("d_rope", [1, 3, 63])
def test_an_odd_rope_width_is_refused_in_the_mla_cache_count(d_rope):
    with pytest.raises(ValueError, match=rf"^d_rope must be even .* got {d_rope}"):
        m.mla_cache_bytes(60, 512, d_rope, 10)


def test_per_sequence_rope_positions_go_in_with_a_head_axis_as_documented():
    # (B, T) positions beside x (B, H, T, d) with B == H line up with the heads (numpy broadcasting):
    # the docstring says to pass positions[:, None, :] for per-sequence positions
    x = np.random.default_rng(0).standard_normal((2, 2, 3, 4))  # (B, H, T, d)
    pos = np.array([[0, 1, 2], [10, 11, 12]])  # (B, T)
    per_sequence = m.apply_rope(x, pos[:, None, :])
    for b in range(2):
        np.testing.assert_allclose(per_sequence[b], m.apply_rope(x[b], pos[b]), rtol=0, atol=1e-15)
    per_head = m.apply_rope(x, pos)
    for h in range(2):
        np.testing.assert_allclose(per_head[:, h], m.apply_rope(x[:, h], pos[h]), rtol=0, atol=1e-15)


# --- pass fifty-six: the closest weighted average at any scale ------------------------------------

@pytest.mark.parametrize("s", [1e-200, 1e-13, 1e-12, 1.0, 1e100, 1e155, 1e300])
def test_the_closest_weighted_average_is_the_same_at_every_scale(s):
    # rows (s, 0) and (0, s), target (s, s): the midpoint, at s / sqrt(2), by hand. With absolute
    # tolerances of 1e-12 it answered a corner at distance s for s <= 1e-12, and (None, inf) at 1e155
    w, d = m.examples.closest_weighted_average(np.array([[s, 0.0], [0.0, s]]), np.array([s, s]))
    np.testing.assert_allclose(w, [0.5, 0.5], rtol=0, atol=1e-12)
    assert d == pytest.approx(s / math.sqrt(2), rel=1e-12, abs=0)


def test_a_row_that_is_the_target_is_found_however_small():
    w, d = m.examples.closest_weighted_average(np.array([[1e-13, 0.0], [0.0, 0.0]]), np.array([0.0, 0.0]))
    assert (w.tolist(), d) == ([0.0, 1.0], 0.0)
    # a longdouble row far past float64 is taken exactly: it is the target, at distance 0
    big = np.longdouble("1e400")
    assert m.examples.closest_weighted_average(np.array([[big, 0]]), np.array([big, 0]))[1] == 0.0
    w, d = m.examples.closest_weighted_average(np.array([[1, 0], [0, 1]], np.float16), np.array([1, 1], np.float16))
    np.testing.assert_allclose(w, [0.5, 0.5], rtol=0, atol=1e-15)  # float16 worked in float64
    assert w.dtype == np.float64 and d == pytest.approx(math.sqrt(0.5), rel=1e-15, abs=0)


@pytest.mark.parametrize("target, distance", [
    ([2.0**53, 2.0**27, 1.0, 2.0**-40], 2.0**53 + 2),  # the root is 2**53 + 1 + 5.5e-41: above the midpoint
    ([np.longdouble(2**53 + 1), 0.0, 0.0, 0.0], 2.0**53),  # exactly the midpoint: to the even float
    ([np.longdouble(2**53 + 1) + np.longdouble(2.0**-10), 0.0, 0.0, 0.0], 2.0**53 + 2),
])
def test_the_distance_to_the_hull_is_rounded_once(target, distance):
    """Pass fifty-eight: a 40-digit decimal root rounded twice. By hand, from one row at the
    origin: the square (2**53)**2 + (2**27)**2 + 1 + 2**-80 is (2**53 + 1)**2 + 2**-80, whose
    root lies 5.5e-41 past 2**53 + 1, the midpoint of the floats 2**53 and 2**53 + 2; a
    longdouble target of 2**53 + 1 is the midpoint itself (ties go to the even float)."""
    target = np.array(target, dtype=np.longdouble)
    assert m.examples.closest_weighted_average(np.zeros((1, 4), np.longdouble), target)[1] == distance


def test_a_longdouble_target_is_taken_as_given_and_a_distance_past_float64_refused():
    # pass fifty-eight: through float64, 1 + 2**-60 was 1, a target off the hull at distance 0
    L = np.longdouble
    target = np.array([L(1) + L(2) ** -60])
    assert m.examples.closest_weighted_average(np.array([[L(1)]]), target) == (np.array([1.0]), 2.0**-60)
    w, d = m.examples.closest_weighted_average(np.array([[L(0)], [L(1)]]), target)
    assert (w.tolist(), d) == ([0.0, 1.0], 2.0**-60)
    # two corners 1e308 from the target in each of two columns: 2.8e308 is no float (it read inf)
    with pytest.raises(ValueError, match="distance .* past float64"):
        m.examples.closest_weighted_average([[1e308, 1e308]], [-1e308, -1e308])


def test_the_closest_weighted_average_is_exact_whatever_the_rows_sizes():
    """Pass fifty-seven: with tolerances in units of the largest entry, rows of 1e-13 beside a
    row of 1 were one point (a corner at 1e-13 for the midpoint at 1e-13/sqrt 2), and a target
    inside the hull read 7e-15 away (a near-tie kept the first subset). By hand: the midpoint;
    and weights (0.5 - d, 0.5, d) with d = the target's excess give the target itself."""
    c = m.examples.closest_weighted_average
    w, d = c(np.array([[1.0, 0.0], [1e-13, 0.0], [0.0, 1e-13]]), np.array([0.0, 0.0]))
    np.testing.assert_allclose(w, [0.0, 0.5, 0.5], rtol=0, atol=1e-15)
    assert d == pytest.approx(1e-13 / math.sqrt(2), rel=1e-14, abs=0)
    w, d = c(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([0.5, 0.5 + 1e-14]))
    assert d == 0.0 and w.min() >= 0 and abs(w.sum() - 1) < 1e-15
    np.testing.assert_allclose(w @ np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), [0.5, 0.5 + 1e-14], rtol=0, atol=1e-16)


# --- pass sixty-nine: results that were views of the input ----------------------------------------

def test_writing_into_looked_up_positions_or_split_heads_changes_nothing_else():
    # lookup_positions returned a slice of the table: pe += 1 changed every later lookup; split_heads
    # returned a view of x: writing into a head changed x
    table = m.learned_position_table(8, 4, seed=0)
    kept = table.copy()
    pe = m.lookup_positions(table, 3)
    pe += 1
    np.testing.assert_array_equal(table, kept)
    np.testing.assert_array_equal(m.lookup_positions(table, 3), kept[:3])
    x = np.arange(12.0).reshape(3, 4)
    heads = m.split_heads(x, 2)
    heads[0, 0, 0] = 99.0
    assert x[0, 0] == 0.0 and not np.shares_memory(heads, x)


@pytest.mark.parametrize("q, scale", [(1e-200, 1e300), (2.0**-540, 2.0**1023), (1e-161, 1e300), (1e-160, 1e300),
                                      (3e-170, 7e305)])
def test_scores_whose_product_underflows_but_whose_scaled_value_fits_keep_their_digits(q, scale):
    """Pass seventy-eight: q @ k^T fell into the subnormal range (or to 0) before the scale was
    applied: 1e-200 * 1e-200 * 1e300 gave 0, and 1e-161 twice 1.2 % low. The true score, from the
    exact product of the floats; a float dot product is good to a few units of its last place."""
    got = m.attention_scores([[q, q / 3]], [[q, 0.0], [-q, q]], scale=scale)
    for s, key in enumerate(([q, 0.0], [-q, q])):
        exact = (Fraction(q) * Fraction(key[0]) + Fraction(q / 3) * Fraction(key[1])) * Fraction(scale)
        assert got[0, s] == pytest.approx(float(exact), rel=1e-15, abs=0), (s, got[0, s], float(exact))
    assert got.dtype == np.float64


@pytest.mark.parametrize("bias", [[[0.0, -1.0], [0.5, 0.0]], np.array([[0.0, -1e39], [0.5, 0.0]])])
def test_a_float64_bias_beside_float32_attention_keeps_float32(bias):
    """Pass seventy-eight: a bias of Python floats or float64 turned float32 attention's results
    into float64. They keep q and k's type; the bias is added in float64 and the weights rounded
    once, so they equal the float64 attention's weights rounded to float32."""
    rng = np.random.default_rng(78)
    q, k, v = (rng.normal(size=(2, 3)).astype(np.float32) for _ in range(3))
    out, w = m.scaled_dot_product_attention(q, k, v, bias=bias)
    out64, w64 = m.scaled_dot_product_attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64),
                                                bias=bias)
    assert out.dtype == w.dtype == np.float32
    np.testing.assert_allclose(w, w64.astype(np.float32), rtol=2**-23, atol=0)
    np.testing.assert_allclose(out, out64, rtol=1e-6, atol=1e-7)


def test_check_compares_integers_beside_complex_values_and_differences_at_the_tolerance_exactly(capsys):
    """Pass eighty-two: 2**53 + 1 against complex 2**53 was "right ... = ... is the expected value"
    with no tolerance (the integer rounded to a complex float first); |-1e-17 - 1| rounded to 1
    passed atol = 1; a longdouble against a complex value "could not be compared"; a clongdouble
    answer printed as the expected value."""
    from mhalib.exercises import check

    assert not check(np.int64(2**53 + 1), complex(2**53), rtol=0, atol=0)
    assert not check(2**53 + 1, complex(2**53), rtol=0, atol=0)
    assert not check(((1, 2**53 + 1),), np.array([[1, 2**53]], dtype=complex), rtol=0, atol=0)
    assert check(np.int64(2**53 + 1), complex(2**53))  # within the default tolerance, but not "="
    assert "= 9,007,199,254,740,993 is the expected value" not in capsys.readouterr().out
    assert check(np.array([[2**62 + 1]]), np.array([[2**62]], dtype=complex))
    assert "largest difference 1)" in capsys.readouterr().out
    assert not check(-1e-17, 1.0, rtol=0, atol=1.0) and not check(np.array([-1e-17, 0.0]), np.array([1.0, 0.0]), rtol=0, atol=1.0)
    assert check(0.0, 1.0, rtol=0, atol=1.0) and check(1.0, 1.0 + 2**-52, rtol=0, atol=2**-52)  # on the edge: within
    capsys.readouterr()
    assert not check(np.longdouble(1) + np.longdouble(2) ** -60, 1 + 0j, rtol=0, atol=0)
    assert "could not be compared" not in capsys.readouterr().out
    if np.finfo(np.longdouble).nmant > 52:  # (where longdouble is wider than float64)
        assert not check(np.clongdouble(1) + np.longdouble(2) ** -60, np.clongdouble(1), rtol=0, atol=0)
        assert "is (1+0j), not" not in capsys.readouterr().out


def test_float16_layer_norm_takes_its_mean_in_float32():
    """Pass eighty-six: the mean 1000.25 of [1000, 1001, 1000, 1000] rounded to 1000 in float16,
    and the row came out [0, 2, 0, 0] (true: -0.577, 1.732, -0.577, -0.577, by hand: the
    deviations -1/4, 3/4 over sqrt(3/16))."""
    from mhalib.models.norm import layer_norm

    got = layer_norm(np.array([1000, 1001, 1000, 1000], np.float16), np.float16(1), np.float16(0), 1e-5)
    want = np.array([-0.25, 0.75, -0.25, -0.25]) / math.sqrt(3 / 16 + 1e-5)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2 * 2**-11, atol=0)
