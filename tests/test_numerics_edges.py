"""Attention, softmax and positional encodings at the edges of floating point and of shapes.

Every expected value is derived by hand. The recurring argument: float64 holds numbers up to
about 1.8e308, and ``exp(-x)`` underflows to exactly 0 once ``x > 745``. Scores such as
``-1e400`` and ``-2e400`` are not representable, yet their difference (1e400) is so large
that softmax gives the larger one weight exactly 1 and the other exactly 0. Only the mask
(or a ``-inf`` bias, which is documented as a mask) may empty a row.

No computation here may warn: an overflow that the library handles is not an event.
"""
import math

import numpy as np
import pytest

import mhalib as m
from mhalib import examples

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

E = math.e
TWO = [[1.0], [2.0]]  # v: the output is 1 for weights [1, 0] and 2 for [0, 1]


# --- scaled_dot_product_attention: scores beyond the float range -------------------------

@pytest.mark.parametrize("q,k,v,kwargs,weights,out", [
    # scores -1e400 and -2e400: the first is larger by 1e400, so it takes everything
    pytest.param([[1e200]], [[-1e200], [-2e200]], TWO, dict(scale=1.0), [1.0, 0.0], [1.0],
                 id="both-scores-below--max-float"),
    # scores +1e400 and -1e400
    pytest.param([[1e200]], [[1e200], [-1e200]], TWO, dict(scale=1.0), [1.0, 0.0], [1.0],
                 id="one-score-above-max-float"),
    # a tie at +1e400: equal weights, the output is the mean of v
    pytest.param([[1e200]], [[1e200], [1e200]], [[1.0], [3.0]], dict(scale=1.0), [0.5, 0.5], [2.0],
                 id="tie-above-max-float"),
    # q.k_1 = 2^1200 - 2^1200 = 0 and q.k_2 = 0: a uniform row, although the partial
    # products overflow (inf - inf). Powers of two keep every product exact.
    pytest.param([[2.0**600, 2.0**600]], [[2.0**600, -(2.0**600)], [0.0, 0.0]], [[1.0], [3.0]], {}, [0.5, 0.5], [2.0],
                 id="partial-products-overflow-dot-product-zero"),
    # q.k = 2^600 * 2^474 = 2^1074 overflows, the scale 2^-1074 brings it back to 1:
    # scores [1, 0], weights [e/(e+1), 1/(e+1)]
    pytest.param([[2.0**600]], [[2.0**474], [0.0]], [[1.0], [0.0]], dict(scale=2.0**-1074),
                 [E / (E + 1), 1 / (E + 1)], [E / (E + 1)], id="product-overflows-scale-brings-it-back"),
    # scores [1e308, 0] plus bias [1e308, 0]: 2e308 against 0
    pytest.param([[1e154]], [[1e154], [0.0]], TWO, dict(scale=1.0, bias=[1e308, 0.0]), [1.0, 0.0], [1.0],
                 id="bias-pushes-a-score-above-max-float"),
    # scores [-1e308, -1.5e308] plus bias -1e308 each: -2e308 against -2.5e308
    pytest.param([[1e154]], [[-1e154], [-1.5e154]], TWO, dict(scale=1.0, bias=[-1e308, -1e308]), [1.0, 0.0], [1.0],
                 id="bias-pushes-both-scores-below--max-float"),
    # the mask still masks: only key 2 is allowed
    pytest.param([[1e200]], [[-1e200], [-2e200]], TWO, dict(scale=1.0, mask=[[False, True]]), [0.0, 1.0], [2.0],
                 id="mask-still-applies"),
    # a -inf bias is a mask too
    pytest.param([[1e200]], [[-1e200], [-2e200]], TWO, dict(scale=1.0, bias=[-np.inf, 0.0]), [0.0, 1.0], [2.0],
                 id="minus-inf-bias-still-masks"),
    # only the mask may empty a row
    pytest.param([[1e200]], [[-1e200], [-2e200]], TWO, dict(scale=1.0, mask=[[False, False]]), [0.0, 0.0], [0.0],
                 id="fully-masked-row-stays-zero"),
    # causal: query 0 sees key 0 only, whatever the scores
    pytest.param([[1e200]], [[-2e200], [-1e200]], TWO, dict(scale=1.0, causal=True), [1.0, 0.0], [1.0],
                 id="causal-with-overflow"),
])
def test_sdpa_scores_beyond_the_float_range(q, k, v, kwargs, weights, out):
    got_out, got_w = m.scaled_dot_product_attention(q, k, v, **kwargs)
    np.testing.assert_allclose(got_w, [weights], rtol=1e-15, atol=0)
    np.testing.assert_allclose(got_out, [out], rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype,big", [
    pytest.param("float32", 1e20, id="float32"),  # scores -1e40 and -2e40 overflow float32 (max 3.4e38)
    pytest.param("float16", 300.0, id="float16"),  # scores -9e4 and -1.8e5 overflow float16 (max 65504)
])
def test_sdpa_overflow_in_low_precision_keeps_the_dtype(dtype, big):
    q = np.array([[big]], dtype=dtype)
    k = np.array([[-big], [-2 * big]], dtype=dtype)
    v = np.array(TWO, dtype=dtype)
    out, w = m.scaled_dot_product_attention(q, k, v, scale=1.0)
    assert w.dtype == out.dtype == np.dtype(dtype)
    assert w.tolist() == [[1.0, 0.0]] and out.tolist() == [[1.0]]


def test_sdpa_overflow_in_one_row_leaves_the_other_rows_exact():
    # row 0 overflows (1e400 against 0); row 1 is ordinary: scores [0, 1, 0] / sqrt(2)
    q = np.array([[1e200, 0.0], [0.0, 1.0]])
    k = np.array([[1e200, 0.0], [0.0, 1.0], [0.0, 0.0]])
    v = np.eye(3)
    out, w = m.scaled_dot_product_attention(q, k, v)
    r = math.exp(1 / math.sqrt(2))
    np.testing.assert_array_equal(w[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(w[1], [1 / (2 + r), r / (2 + r), 1 / (2 + r)], rtol=1e-15, atol=0)
    np.testing.assert_allclose(out, w, rtol=1e-15, atol=0)  # v = I


@pytest.mark.parametrize("n_keys", [2, 11, 12])
def test_sdpa_output_at_the_top_of_the_float_range_is_never_inf(n_keys):
    # Equal scores give weights 1/n, each rounded; for n = 11 and 12 the rounded weight is
    # above 1/n, so sum_j w_j * max_float can round past the largest float although the
    # exact average is max_float itself. The result must be max_float or a clear refusal.
    top = np.finfo(np.float64).max
    v = np.full((n_keys, 1), top)
    try:
        out, _ = m.scaled_dot_product_attention([[0.0]], np.zeros((n_keys, 1)), v)
    except ValueError as exc:
        assert "v" in str(exc) and "overflow" in str(exc)
    else:
        assert out[0, 0] == pytest.approx(top, rel=1e-15)


# --- attention_scores: the scores themselves ---------------------------------------------

@pytest.mark.parametrize("q,k,scale,expected", [
    # 2^600 * 2^600 - 2^600 * 2^600 = 0 exactly, times 1/sqrt(2)
    pytest.param([[2.0**600, 2.0**600]], [[2.0**600, -(2.0**600)]], None, 0.0, id="partial-products-overflow"),
    # 2^600 * 2^474 * 2^-1074 = 1 exactly
    pytest.param([[2.0**600]], [[2.0**474]], 2.0**-1074, 1.0, id="product-overflows-scale-brings-it-back"),
    # 2^600 * 2^600 * 2^-300 = 2^900 < 2^1024
    pytest.param([[2.0**600]], [[-(2.0**600)]], 2.0**-300, -(2.0**900), id="large-but-representable"),
])
def test_attention_scores_exact_when_representable(q, k, scale, expected):
    assert m.attention_scores(q, k, scale=scale).tolist() == [[expected]]


@pytest.mark.parametrize("q,k,scale", [
    pytest.param([[1e200]], [[-1e200]], 1.0, id="minus-1e400"),
    pytest.param([[1e200]], [[1e200]], 1.0, id="plus-1e400"),
    pytest.param([[1e100]], [[1e100]], 1e200, id="scale-pushes-over"),
])
def test_attention_scores_beyond_the_float_range_are_refused(q, k, scale):
    with pytest.raises(ValueError) as info:
        m.attention_scores(q, k, scale=scale)
    for word in ("q", "k", "scale", "overflow", "float64"):
        assert word in str(info.value)


# --- softmax ----------------------------------------------------------------------------

@pytest.mark.parametrize("x,expected", [
    # differences of 2e308 overflow to -inf; exp of the true difference underflows to 0 anyway
    pytest.param([1e308, -1e308], [1.0, 0.0], id="difference-overflows"),
    pytest.param([-1e308, 1e308], [0.0, 1.0], id="difference-overflows-reversed"),
    pytest.param([-1.7e308, -1.7e308], [0.5, 0.5], id="tie-at-the-bottom"),
    pytest.param(np.array([60000.0, -60000.0], dtype=np.float16), [1.0, 0.0], id="float16-difference-overflows"),
])
def test_softmax_at_the_ends_of_the_float_range(x, expected):
    assert m.softmax(x).tolist() == expected


@pytest.mark.parametrize("shape,axis", [
    pytest.param((2, 0), -1, id="rows-of-length-0"),
    pytest.param((0, 3), -1, id="no-rows"),
    pytest.param((0,), 0, id="empty-vector"),
    pytest.param((3, 0, 2), 1, id="empty-middle-axis"),
])
def test_softmax_of_an_empty_axis_is_empty(shape, axis):
    out = m.softmax(np.zeros(shape), axis=axis)
    assert out.shape == shape and out.dtype == np.float64


def test_softmax_refuses_a_0d_value():
    with pytest.raises(ValueError, match=r"x must have at least 1 dimension.*shape \(\)"):
        m.softmax(3.0)


# --- empty sequences and empty heads ----------------------------------------------------

@pytest.mark.parametrize("T,S", [pytest.param(0, 3, id="T=0"), pytest.param(3, 0, id="S=0"),
                                 pytest.param(0, 0, id="T=S=0")])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_sdpa_empty_sequences(T, S, causal):
    q, k, v = np.ones((2, T, 4)), np.ones((2, S, 4)), np.ones((2, S, 5))
    out, w = m.scaled_dot_product_attention(q, k, v, causal=causal)
    assert w.shape == (2, T, S) and out.shape == (2, T, 5)
    # S = 0: a query with no key gets a zero output, like a fully masked row
    assert np.array_equal(out, np.zeros((2, T, 5)))


@pytest.mark.parametrize("T,S", [pytest.param(0, 3, id="T=0"), pytest.param(3, 0, id="S=0")])
def test_attention_scores_empty_sequences(T, S):
    assert m.attention_scores(np.ones((T, 2)), np.ones((S, 2))).shape == (T, S)


@pytest.mark.parametrize("call", [
    pytest.param(lambda: m.scaled_dot_product_attention(np.ones((3, 0)), np.ones((2, 0)), np.ones((2, 4))),
                 id="sdpa-default-scale"),
    pytest.param(lambda: m.scaled_dot_product_attention(np.ones((3, 0)), np.ones((2, 0)), np.ones((2, 4)), scale=1.0),
                 id="sdpa-explicit-scale"),
    pytest.param(lambda: m.attention_scores(np.ones((3, 0)), np.ones((2, 0))), id="attention-scores"),
])
def test_d_zero_is_refused_naming_q_and_k(call):
    with pytest.raises(ValueError, match=r"q and k .*d >= 1.*\(3, 0\).*\(2, 0\)"):
        call()


# --- multi-head attention: overflow inside, and errors that name the caller's arguments --

ONE = [[1.0]]  # a 1x1 identity projection


@pytest.mark.parametrize("fn", [m.multi_head_attention, m.mha_trace], ids=["multi_head_attention", "mha_trace"])
def test_mha_cross_attention_scores_beyond_the_float_range(fn):
    # one head, d = 1, identity projections: q = 1e200, k = v = [-1e200, -2e200], so the
    # scores are -1e400 and -2e400 and key 1 takes everything: the output is v_1 = -1e200
    result = fn([[1e200]], ONE, ONE, ONE, n_heads=1, context=[[-1e200], [-2e200]], scale=1.0)
    out, w = (result["out"], result["weights"]) if isinstance(result, dict) else result
    assert w.tolist() == [[[1.0, 0.0]]]
    assert out.tolist() == [[-1e200]]


@pytest.mark.parametrize("call,words", [
    pytest.param(lambda: m.multi_head_attention([[1e200]], [[1e200]], ONE, ONE, n_heads=1),
                 ["x", "w_q", "overflow"], id="query-projection"),
    pytest.param(lambda: m.multi_head_attention([[1.0]], ONE, [[1e200]], ONE, n_heads=1, context=[[1e200]]),
                 ["context", "w_k", "overflow"], id="key-projection"),
    pytest.param(lambda: m.multi_head_attention([[1.0]], ONE, ONE, ONE, n_heads=1, b_v=[1e308], context=[[1e308]]),
                 ["w_v", "b_v", "overflow"], id="value-projection-bias"),
    pytest.param(lambda: m.multi_head_attention([[1e200]], ONE, ONE, ONE, [[1e200]], n_heads=1),
                 ["w_o", "overflow"], id="output-projection"),
    pytest.param(lambda: m.mha_trace([[1e200]], ONE, ONE, ONE, n_heads=1, head_mask=[1e200]),
                 ["head_mask", "overflow"], id="head-mask"),
    pytest.param(lambda: m.per_head_output(np.full((1, 1, 1), 1e200), [[1e200]]),
                 ["heads_out", "w_o", "overflow"], id="per-head-output"),
])
def test_mha_overflow_is_refused_naming_the_callers_arguments(call, words):
    with pytest.raises(ValueError) as info:
        call()
    for word in words:
        assert word in str(info.value), f"{word!r} missing from: {info.value}"


W4 = np.eye(4)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_mha_no_queries(causal):
    out, w = m.multi_head_attention(np.ones((0, 4)), W4, W4, W4, W4, n_heads=2, causal=causal)
    assert out.shape == (0, 4) and w.shape == (2, 0, 0)


def test_mha_empty_context_gives_the_output_bias():
    # no key at all: every head outputs 0, so the result is b_o in every row
    b_o = np.array([1.0, 2.0, 3.0, 4.0])
    out, w = m.multi_head_attention(np.ones((2, 4)), W4, W4, W4, W4, n_heads=2, context=np.ones((0, 4)), b_o=b_o)
    assert w.shape == (2, 2, 0)
    assert np.array_equal(out, np.tile(b_o, (2, 1)))


def test_mha_zero_width_heads_are_refused_naming_w_q():
    with pytest.raises(ValueError, match=r"w_q .*0 columns.*d_head"):
        m.multi_head_attention(np.ones((2, 4)), np.ones((4, 0)), np.ones((4, 0)), W4, n_heads=2)


# --- positional encodings: parameters whose results would not be finite ----------------

TINY = 5e-324  # the smallest positive float64 (subnormal)


@pytest.mark.parametrize("call,words", [
    pytest.param(lambda: m.sinusoidal_encoding(4, 512, base=TINY), ["base", "5e-324", "d_model", "512"], id="sinusoidal-encoding"),
    pytest.param(lambda: m.sinusoidal_frequencies(512, base=TINY), ["base", "5e-324"], id="sinusoidal-frequencies"),
    pytest.param(lambda: m.wavelengths(512, base=TINY), ["base", "5e-324"], id="wavelengths"),
    pytest.param(lambda: m.offset_matrix(3, 512, base=TINY), ["base", "5e-324"], id="offset-matrix"),
    pytest.param(lambda: m.rope_frequencies(512, base=TINY), ["base", "5e-324", "d_head"], id="rope-frequencies"),
    pytest.param(lambda: m.apply_rope(np.ones((4, 512)), base=TINY), ["base", "5e-324"], id="apply-rope"),
    # frequencies finite (up to 1e150), but position 1e160 times 1e150 overflows
    pytest.param(lambda: m.sinusoidal_encoding(2, 4, base=1e-300, start=10**160), ["start", "base", "overflow"],
                 id="sinusoidal-angle"),
    pytest.param(lambda: m.offset_matrix(10**160, 4, base=1e-300), ["k", "base", "overflow"], id="offset-angle"),
    pytest.param(lambda: m.apply_rope(np.ones((1, 4)), positions=[1e160], base=1e-300), ["positions", "base", "overflow"],
                 id="rope-angle"),
    # positions beyond the float range
    pytest.param(lambda: m.sinusoidal_encoding(2, 4, start=10**400), ["start", "n_positions"], id="start-beyond-float"),
    pytest.param(lambda: m.offset_matrix(10**400, 4), ["k", "float64"], id="offset-beyond-float"),
    # frequencies down to base^(-(D-2)/D) ~ 1e-308: the wavelengths 2*pi/omega overflow
    pytest.param(lambda: m.wavelengths(100_000, base=1.7e308), ["base", "1.7e+308", "wavelength"], id="wavelengths-huge-base"),
    # a plane (1.5e308, 1.5e308) has norm 2.1e308: its rotation cannot be represented
    pytest.param(lambda: m.apply_rope(np.full((3, 2), 1.5e308)), ["x", "overflow"], id="rope-rotation"),
    pytest.param(lambda: m.learned_position_table(4, 4, seed=0, std=1e308), ["std", "1e+308"], id="learned-std"),
    pytest.param(lambda: examples.heads_in_action("Identity", tau=1e-310), ["tau", "1e-310"], id="heads-in-action-tau"),
])
def test_parameters_whose_results_would_not_be_finite_are_refused(call, words):
    with pytest.raises(ValueError) as info:
        call()
    for word in words:
        assert word in str(info.value), f"{word!r} missing from: {info.value}"


BASES = [TINY, 1e-300, 1e-10, 0.5, 1.0, 2.0, 10_000.0, 1e100, 1e300, 1.7e308]
FUNCTIONS = {
    "sinusoidal_encoding": lambda b: m.sinusoidal_encoding(64, 128, b, start=1000),
    "wavelengths": lambda b: m.wavelengths(2048, b),
    "offset_matrix": lambda b: m.offset_matrix(-37, 64, b),
    "rope_frequencies": lambda b: m.rope_frequencies(128, b),
    "apply_rope": lambda b: m.apply_rope(np.ones((2, 5, 128)), np.arange(5) * 1000.0, base=b),
}


@pytest.mark.parametrize("base", BASES, ids=lambda b: f"base={b:g}")
@pytest.mark.parametrize("name", FUNCTIONS)
def test_positional_results_are_finite_or_refused(name, base):
    try:
        out = FUNCTIONS[name](base)
    except ValueError as exc:
        assert "base" in str(exc)
    else:
        assert np.all(np.isfinite(out))


@pytest.mark.parametrize("base,d_model", [pytest.param(0.5, 8, id="base<1"), pytest.param(1.0, 8, id="base=1"),
                                          pytest.param(1e300, 512, id="base=1e300")])
def test_unusual_but_finite_bases_still_work(base, d_model):
    # omega_i = base^(-2i/D), computed by hand for the last pair i = D/2 - 1
    omega = m.sinusoidal_frequencies(d_model, base)
    assert omega[0] == 1.0
    assert omega[-1] == pytest.approx(base ** (-(d_model - 2) / d_model), rel=1e-12, abs=0)


@pytest.mark.parametrize("T", [1, 2, 7])
@pytest.mark.parametrize("n_heads", [1, 3, 8, 12])
@pytest.mark.parametrize("causal", [True, False], ids=["causal", "symmetric"])
def test_alibi_bias_holds_no_nan_and_minus_inf_only_above_the_diagonal(T, n_heads, causal):
    b = m.alibi_bias(T, n_heads, causal=causal)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    assert not np.isnan(b).any() and not np.isposinf(b).any()
    assert np.array_equal(np.isneginf(b), np.broadcast_to(causal & (j > i), b.shape))
