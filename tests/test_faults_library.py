"""Library faults of issue 25 (sections 2 and 3), one block per fault: each test failed on the
code before its fix. Expected values are derived here by closed form, never copied from mhalib.

Memory refusals are tested through the estimate: the tests lower the limit the library reads
(``mhalib._checks.memory_limit``) instead of allocating anything large.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import mhalib as m

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

N_F16 = 70_000  # more equal float16 scores than float16 can count: 70 000 > 65 504, its largest value


# --- 1. float16 softmax: the row sum is accumulated in float32, the result is float16 ------

def test_softmax_of_70000_equal_float16_scores_is_uniform():
    w = m.softmax(np.zeros(N_F16, np.float16))
    assert w.dtype == np.float16
    # every weight is 1/70000 rounded once to float16 (a subnormal: 240 * 2^-24)
    assert np.all(w == np.float16(1.0 / N_F16))
    assert float(np.float16(1.0 / N_F16)) == 240 * 2.0**-24


def test_softmax_float16_two_levels_in_a_row_longer_than_float16_can_count():
    a = np.float16(-0.05)  # the float16 score; its exact value as a float64 is float(a)
    x = np.concatenate([np.zeros(N_F16 // 2, np.float16), np.full(N_F16 // 2, a)])
    w = m.softmax(x)
    assert w.dtype == np.float16
    total = N_F16 // 2 * (1.0 + math.exp(float(a)))  # sum_k exp(x_k - max) = 68 293 > 65 504
    expected = np.concatenate([np.full(N_F16 // 2, 1.0 / total), np.full(N_F16 // 2, math.exp(float(a)) / total)])
    # within one float16 rounding of the exact weights (relative 2^-11, plus the subnormal step)
    np.testing.assert_allclose(w.astype(np.float64), expected, rtol=2.0**-11, atol=2.0**-25)


def test_attention_over_70000_equal_float16_keys_averages_the_values():
    q = np.zeros((1, 4), np.float16)
    k = np.zeros((N_F16, 4), np.float16)
    v = np.ones((N_F16, 1), np.float16)
    out, weights = m.scaled_dot_product_attention(q, k, v)
    assert out.dtype == weights.dtype == np.float16
    assert out[0, 0] == 1.0  # the mean of 70 000 ones
    assert np.all(weights == np.float16(1.0 / N_F16))
    v2 = (np.arange(N_F16) % 2).astype(np.float16)[:, None]  # 0, 1, 0, 1, ...: mean 1/2
    out2, _ = m.scaled_dot_product_attention(q, k, v2)
    assert out2[0, 0] == 0.5


def test_tiled_attention_over_70000_equal_float16_keys_averages_the_values():
    q = np.zeros((1, 4), np.float16)
    k = np.zeros((N_F16, 4), np.float16)
    v = np.ones((N_F16, 1), np.float16)
    out = m.tiled_attention(q, k, v, block_k=4096)
    assert out.dtype == np.float16
    assert out[0, 0] == 1.0


# --- 2. token ids: integers in [0, vocab) at every model entry point ---------------------

def _tiny(method="rope", vocab=5):
    torch = pytest.importorskip("torch")
    from mhalib.models.tiny import TinyDecoder
    from mhalib.models.tiny_numpy import TinyConfig

    torch.manual_seed(0)
    return torch, TinyDecoder(TinyConfig(vocab=vocab, method=method, d_model=8, n_layers=1, n_heads=2))


@pytest.mark.parametrize("ids,exc,words", [
    pytest.param([[1, -1, 2]], ValueError, r"tokens must lie in \[0, vocab\) = \[0, 5\); got \[-1\] at position\(s\) "
                 r"\[\(0, 1\)\]", id="negative-id-wrapped-to-the-last-row"),
    pytest.param([[1, 5, 2], [0, 7, 1]], ValueError, r"tokens must lie in \[0, vocab\) = \[0, 5\); got \[5, 7\] at "
                 r"position\(s\) \[\(0, 1\), \(1, 1\)\]", id="id-past-the-table"),
])
def test_torch_tiny_model_refuses_ids_outside_the_vocabulary(ids, exc, words):
    torch, model = _tiny()
    with pytest.raises(exc, match=words):
        model(torch.tensor(ids))


@pytest.mark.parametrize("make,words", [
    pytest.param(lambda torch: torch.tensor([[1.0, 2.0]]), r"tokens must hold integer token ids, got dtype float32",
                 id="float-ids"),
    pytest.param(lambda torch: torch.tensor([[True, False]]), r"tokens must hold integer token ids, got dtype bool",
                 id="bool-ids"),
    pytest.param(lambda torch: [[1, 2]], r"tokens must be a torch tensor of integer token ids, got list", id="list"),
])
def test_torch_tiny_model_refuses_tokens_that_are_not_integer_ids(make, words):
    torch, model = _tiny()
    with pytest.raises(TypeError, match=words):
        model(make(torch))


@pytest.mark.parametrize("shape", [(0, 3), (2, 0), (1, 2, 3), ()])
def test_torch_tiny_model_refuses_a_shape_that_is_not_a_batch_of_sequences(shape):
    torch, model = _tiny()
    with pytest.raises(ValueError, match=r"tokens must have shape \(B, T\) or \(T,\) with B, T >= 1, got "):
        model(torch.zeros(shape, dtype=torch.long))


def test_torch_tiny_model_reads_1d_tokens_as_a_batch_of_one():
    torch, model = _tiny()
    seq = torch.tensor([1, 4, 0, 2])
    assert torch.equal(model(seq), model(seq[None]))  # (T,) -> (1, T), as tiny_numpy.forward does


def test_torch_tiny_model_reads_uint8_ids_as_ids_not_as_a_mask():
    torch, model = _tiny()
    # torch indexes with a uint8 tensor as with a boolean mask; ids must stay ids
    assert torch.equal(model(torch.tensor([[1, 0, 1]], dtype=torch.uint8)), model(torch.tensor([[1, 0, 1]])))


def test_numpy_and_torch_tiny_models_refuse_bad_ids_alike():
    torch, model = _tiny()
    from mhalib.models import tiny_numpy

    with pytest.raises(ValueError) as np_err:
        tiny_numpy.forward(model.numpy_weights(), model.config, np.array([[1, -1, 2]]))
    with pytest.raises(ValueError) as torch_err:
        model(torch.tensor([[1, -1, 2]]))
    assert str(np_err.value) == str(torch_err.value)


# --- 3. tiny decoder weights: exact shapes from the config, finite real values -----------

BAD_WEIGHTS = [
    pytest.param("w_u", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 3, np.nan, a), ValueError,
                 r"weights\['w_u'\] must be finite; it holds 1 NaN and 0 inf", id="nan-in-w_u"),
    pytest.param("0.ln1.g", lambda a: np.full_like(a, np.inf), ValueError,
                 r"weights\['0.ln1.g'\] must be finite; it holds 0 NaN and 8 inf", id="inf-gain"),
    pytest.param("tok_emb", lambda a: np.where(a > 0, np.nan, a), ValueError,
                 r"weights\['tok_emb'\] must be finite", id="nan-in-embedding"),
    pytest.param("ln_f.g", lambda a: a[None, :], ValueError,
                 r"weights\['ln_f.g'\] must have shape \(8,\) for this config .*got \(1, 8\)", id="gain-as-a-row"),
    pytest.param("b_u", lambda a: np.float32(0.0), ValueError,
                 r"weights\['b_u'\] must have shape \(5,\) for this config .*got \(\)", id="scalar-b_u"),
    pytest.param("tok_emb", lambda a: np.zeros((7, 8), np.float32), ValueError,
                 r"weights\['tok_emb'\] must have shape \(5, 8\) for this config \(vocab=5, d_model=8.*got \(7, 8\)",
                 id="embedding-with-extra-rows"),
    pytest.param("b_u", lambda a: np.array(["0"] * 5), TypeError,
                 r"weights\['b_u'\] must hold real numbers \(int or float\), got dtype <U1", id="strings"),
    pytest.param("w_u", lambda a: a > 0, TypeError, r"weights\['w_u'\] must hold real numbers", id="booleans"),
]


@pytest.mark.parametrize("name,bad,exc,words", BAD_WEIGHTS)
def test_numpy_tiny_forward_refuses_bad_weights(name, bad, exc, words):
    torch, model = _tiny()
    from mhalib.models import tiny_numpy

    w = model.numpy_weights()
    w[name] = bad(w[name])
    with pytest.raises(exc, match=words):
        tiny_numpy.forward(w, model.config, [[0, 1, 2]])


@pytest.mark.parametrize("name,bad,exc,words", BAD_WEIGHTS)
def test_torch_tiny_load_refuses_bad_weights_and_keeps_its_own(name, bad, exc, words):
    torch, model = _tiny()
    w = model.numpy_weights()
    before = {k: p.detach().clone() for k, p in model.named_parameters()}
    w[name] = bad(w[name])
    with pytest.raises(exc, match=words):
        model.load_numpy_weights(w)
    assert all(torch.equal(p, before[k]) for k, p in model.named_parameters())  # nothing half-loaded


def test_stored_weights_with_nan_are_refused_when_loaded(tmp_path):
    torch, model = _tiny()
    from mhalib.models import tiny_numpy

    w = model.numpy_weights()
    w["b_u"] = np.array([0.0, np.nan, 0.0, 0.0, 0.0], np.float32)
    path = tmp_path / "w.npz"
    np.savez(path, **{f"m/{k}": v for k, v in w.items()})
    with pytest.raises(ValueError, match=r"weights\['b_u'\] must be finite; it holds 1 NaN"):
        tiny_numpy.load_weights(path, "m", model.config)


def test_tiny_weights_that_are_not_a_full_dict_are_refused_by_name():
    torch, model = _tiny()
    from mhalib.models import tiny_numpy

    w = model.numpy_weights()
    del w["0.w_k"]
    with pytest.raises(ValueError, match=r"weights lacks \['0.w_k'\] for this config"):
        model.load_numpy_weights(w)
    with pytest.raises(TypeError, match=r"weights must be a dict of arrays by name, got list"):
        tiny_numpy.forward(list(w.values()), model.config, [0, 1])
    with pytest.raises(TypeError, match=r"config must be a TinyConfig, got dict"):
        tiny_numpy.checked_weights(w, model.config.to_dict())


@pytest.mark.parametrize("tokens", [np.zeros((0, 5), int), np.zeros((2, 0), int), np.zeros(0, int)])
def test_numpy_tiny_forward_refuses_an_empty_batch_clearly(tokens):
    torch, model = _tiny()
    from mhalib.models import tiny_numpy

    with pytest.raises(ValueError, match=r"tokens must have shape \(B, T\) or \(T,\) with B, T >= 1, got \("):
        tiny_numpy.forward(model.numpy_weights(), model.config, tokens)


# --- 4. float type: RoPE and ALiBi keep the inputs' float32/float16 ----------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_apply_rope_keeps_the_float_type(dtype, layout):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 4)).astype(dtype)  # (..., T, d): planes with omega = 1 and 10000^(-1/2)
    got = m.apply_rope(x, layout=layout)
    assert got.dtype == dtype
    xd = x.astype(np.float64)
    p = np.arange(5.0)[:, None]  # (T, 1)
    pairs = [(0, 1), (2, 3)] if layout == "interleaved" else [(0, 2), (1, 3)]
    want = np.empty_like(xd)
    for (a, b), omega in zip(pairs, (1.0, 0.01)):
        c, s = np.cos(p * omega)[:, 0], np.sin(p * omega)[:, 0]
        want[..., a] = xd[..., a] * c - xd[..., b] * s  # the closed-form rotation of plane (a, b)
        want[..., b] = xd[..., a] * s + xd[..., b] * c
    eps = float(np.finfo(dtype).eps)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=eps, atol=2 * eps)


def test_apply_rope_refuses_a_float16_rotation_past_its_range():
    # (60000, 60000) turned by 1 rad: 60000 (sin 1 + cos 1) = 82 889 > 65 504, float16's largest
    with pytest.raises(ValueError, match=r"overflow in the rotated x.*float16"):
        m.apply_rope(np.array([[0.0, 0.0], [60000.0, 60000.0]], np.float16))


def test_multi_head_attention_with_rope_keeps_float32():
    x = np.eye(2, dtype=np.float32)  # one head, d = 2: key 1 and query 1 are turned by 1 rad
    out, w = m.multi_head_attention(x, x, x, x, x, n_heads=1, scale=1.0, rope_base=10_000.0)
    assert out.dtype == w.dtype == np.float32
    s = math.sin(1.0)
    row0 = np.array([math.e, math.exp(-s)]) / (math.e + math.exp(-s))  # scores [1, -sin 1]
    row1 = np.array([math.exp(-s), math.e]) / (math.e + math.exp(-s))  # scores [-sin 1, 1]
    np.testing.assert_allclose(w, [[row0, row1]], rtol=1e-6)  # (H, T, S)


def test_multi_head_attention_with_alibi_keeps_float32():
    x = np.eye(2, dtype=np.float32)  # one head: slope 2^-8; query 1 sees key 0 at distance 1
    out, w = m.multi_head_attention(x, x, x, x, x, n_heads=1, scale=1.0, alibi=True, causal=True)
    assert out.dtype == w.dtype == np.float32
    a, b = math.exp(-1 / 256), math.e  # scores [0 - 1/256, 1 - 0]
    np.testing.assert_allclose(w, [[[1.0, 0.0], [a / (a + b), b / (a + b)]]], rtol=1e-6)  # (H, T, S)


def test_decode_step_with_rope_keeps_the_cache_float32():
    cache = m.KVCache(n_kv_heads=1, d_head=2, dtype=np.float32)
    w = np.eye(2, dtype=np.float32)
    out, weights = m.decode_step(np.array([[3.0, 4.0]], np.float32), cache, w, w, w, w, n_heads=1, rope_base=1e4)
    assert out.dtype == weights.dtype == np.float32
    # the first token sees only itself (weight 1) and its value x W_V W_O = x
    np.testing.assert_array_equal(out, [[[3.0, 4.0]]])


# --- 5. head scores and the KV cache: clear refusals -------------------------------------

WORDS = ["[CLS]", "a", "[SEP]"]


@pytest.mark.parametrize("A,words", [
    pytest.param(np.full((2, 3, 3), 0.9),
                 r"attention's rows must be probability distributions .*row \(0, 0\) sums to 2.7",
                 id="rows-sum-to-2.7"),
    pytest.param(np.array([[1.0, 0, 0], [0.5, 0.5, 0], [0.4, 0.4, 0.201]]),
                 r"row \(2,\) sums to 1.001", id="row-sums-to-1.001"),
    pytest.param(np.array([[1.0, 0, 0], [1.5, -0.5, 0], [0.4, 0.4, 0.2]]),
                 r"attention's rows must be probability distributions .*negative.*-0.5", id="negative-weight"),
    pytest.param(np.array([[1.0, 0, 0], [0.0, 0.0, 0], [0.4, 0.4, 0.2]]),
                 r"row \(1,\) sums to 0", id="row-of-zeros"),
])
def test_head_scores_refuses_rows_that_are_not_distributions(A, words):
    from mhalib.models import head_analysis as ha

    with pytest.raises(ValueError, match=words):
        ha.head_scores(A, WORDS)


@pytest.mark.parametrize("tokens,words", [
    pytest.param("abc", r"tokens must be a sequence of token strings, one per row of attention, got str 'abc'",
                 id="a-string"),
    pytest.param(["[CLS]", 7, "[SEP]"], r"tokens must hold strings; got 7 \(int\) at position 1", id="an-int"),
])
def test_head_scores_refuses_tokens_that_are_not_a_list_of_strings(tokens, words):
    from mhalib.models import head_analysis as ha

    with pytest.raises(TypeError, match=words):
        ha.head_scores(np.full((3, 3), 1 / 3), tokens)


def test_head_scores_accepts_float32_rows_that_sum_to_one_within_rounding():
    from mhalib.models import head_analysis as ha

    A = np.full((3, 3), np.float32(1 / 3))  # rows sum to 1 - 3e-8 in float32
    s = ha.head_scores(A, WORDS)
    assert s["self"] == pytest.approx(1 / 3) and s["entropy"] == pytest.approx(1.0)


@pytest.mark.parametrize("per_sentence,exc,words", [
    pytest.param([], ValueError, r"per_sentence must hold the scores of at least one sentence.*got an empty list",
                 id="empty"),
    pytest.param([{"self": np.ones(2)}], ValueError,
                 r"per_sentence\[0\] lacks the score\(s\) \['previous token', 'next token', 'to \[CLS\]'",
                 id="missing-scores"),
    pytest.param([np.ones(3)], TypeError, r"per_sentence\[0\] must be a dict of scores .*got ndarray", id="not-a-dict"),
    pytest.param("scores", TypeError, r"per_sentence must be a list of head_scores' dicts, got str", id="a-string"),
])
def test_average_scores_refuses_what_is_not_a_list_of_scores(per_sentence, exc, words):
    from mhalib.models import head_analysis as ha

    with pytest.raises(exc, match=words):
        ha.average_scores(per_sentence)


def test_average_scores_refuses_sentences_scored_on_different_heads():
    from mhalib.models import head_analysis as ha

    one = {k: np.zeros(2) for k in ha.HEAD_TYPES}
    two = {k: np.zeros(3) for k in ha.HEAD_TYPES}
    with pytest.raises(ValueError, match=r"per_sentence\[1\]\['previous token'\] has shape \(3,\), but "
                                         r"per_sentence\[0\]'s scores have shape \(2,\)"):
        ha.average_scores([one, two])


def test_kv_cache_refuses_dtype_none():
    # np.dtype(None) is float64: None must not pass for a choice of float type
    with pytest.raises(ValueError, match=r"dtype must be one of float16, float32, float64, got None"):
        m.KVCache(n_kv_heads=1, d_head=2, dtype=None)


# --- 6. memory: estimated first, refused with the size named ------------------------------

GiB = 2**30


@pytest.fixture
def eight_gib(monkeypatch):
    """A machine with 8 GiB of memory, whatever this one has: the refusals below do not depend on it."""
    from mhalib import _checks

    monkeypatch.setattr(_checks, "memory_limit", lambda: 8 * GiB)


def test_memory_limit_is_this_machines_memory():
    from mhalib import _checks

    limit = _checks.memory_limit()
    try:
        with open("/proc/meminfo") as f:
            total = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    except OSError:  # pragma: no cover - not Linux
        pytest.skip("no /proc/meminfo to compare with")
    assert limit is not None and 0 < limit <= total  # a container's cgroup may allow less


@pytest.mark.parametrize("n,words", [(0, "0 B"), (1023, "1023 B"), (1536, "1.50 KiB"), (10**12, "931 GiB"),
                                     (80 * 10**9, "74.5 GiB"), (2**50, "1.00 PiB"), (2**70, "1024 EiB")])
def test_byte_counts_are_written_in_binary_units(n, words):
    from mhalib import _checks

    assert _checks.human_bytes(n) == words


def _refused(call, *words):
    """``call()`` is refused, before allocating, with a MemoryError that is also a ValueError."""
    with pytest.raises(MemoryError) as err:
        call()
    assert isinstance(err.value, ValueError)
    for w in words:
        assert w in str(err.value), (w, str(err.value))
    return str(err.value)


def test_causal_mask_too_large_is_refused_by_the_estimate(eight_gib):
    # 10^6 x 10^6 booleans: 10^12 bytes = 931 GiB
    _refused(lambda: m.causal_mask(10**6), "causal_mask", "(1000000, 1000000)", "931 GiB", "8.00 GiB")
    assert m.causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]


def test_kv_cache_with_a_billion_layers_is_refused_at_once(eight_gib):
    import time

    t0 = time.perf_counter()
    msg = _refused(lambda: m.KVCache(10**9, n_kv_heads=8, d_head=64), "n_layers=1000000000", "GiB", "8.00 GiB")
    assert time.perf_counter() - t0 < 1.0, msg  # it used to build 2e9 empty arrays for 17-35 s first


def test_tiled_attention_trace_too_large_is_refused_with_its_size(eight_gib):
    T, S = 2000, 200_000  # block_k=1: 200 000 key blocks, each with m, l (T,) and o (T, 1) in float64
    q, k, v = np.zeros((T, 1)), np.zeros((S, 1)), np.zeros((S, 1))
    trace_bytes = S * T * 3 * 8  # 9.6e9 bytes = 8.94 GiB, before any array header
    assert trace_bytes > 8 * GiB
    msg = _refused(lambda: m.tiled_attention(q, k, v, block_k=1, trace=True), "trace", "200000 key blocks", "GiB")
    stated = int(re.search(r"\(([\d,]+) bytes\)", msg)[1].replace(",", ""))
    assert trace_bytes <= stated <= trace_bytes + 3 * S * 1024  # the data, and at most 1 KiB of header an array


def test_sinusoidal_table_too_large_is_refused_with_its_size(eight_gib):
    # the (10^7, 1024) float64 table alone is 10^7 * 1024 * 8 bytes = 76.3 GiB
    _refused(lambda: m.sinusoidal_encoding(10**7, 1024), "sinusoidal_encoding", "(10000000, 1024)", "76.3 GiB")


@pytest.mark.parametrize("call, words", [
    # 8 heads' (20000, 20000) float64 bias and its masked copy, 2 * 8 * 20000**2 * 8 bytes, with the
    # (T, T) float64 distances, 20000**2 * 8: 5.44e10 bytes = 50.7 GiB
    pytest.param(lambda: m.alibi_bias(20_000, 8), ("alibi_bias", "(8, 20000, 20000)", "50.7 GiB"), id="alibi_bias"),
    # 10^7 x 1024 float64 draws: 8.192e10 bytes = 76.3 GiB
    pytest.param(lambda: m.learned_position_table(10**7, 1024, seed=0),
                 ("learned_position_table", "(10000000, 1024)", "76.3 GiB"), id="learned_position_table"),
    # 10^5 x 10^5 int64 distances: 8e10 bytes = 74.5 GiB
    pytest.param(lambda: m.relative_positions(10**5, 10**5), ("relative_positions", "(100000, 100000)", "74.5 GiB"),
                 id="relative_positions"),
    # the index and the distances it is clipped from: 2 * 8e10 bytes = 149 GiB
    # three (10^6, 10^6) boolean arrays as the window mask is combined: 3e12 bytes = 2.73 TiB
    pytest.param(lambda: m.sliding_window_mask(10**6, 16), ("sliding_window_mask", "(1000000, 1000000)", "2.73 TiB"),
                 id="sliding_window_mask"),
    # 2 rows of 10^12 booleans: 2e12 bytes = 1.82 TiB
    pytest.param(lambda: m.padding_mask([3, 5], 10**12), ("padding_mask", "(2, 1, 1, 1000000000000)", "1.82 TiB"),
                 id="padding_mask"),
    pytest.param(lambda: m.shaw_relative_index(10**5, 10**5, 4), ("shaw_relative_index", "(100000, 100000)", "149 GiB"),
                 id="shaw_relative_index"),
])
def test_position_tables_and_masks_too_large_are_refused_with_their_size(eight_gib, call, words):
    """These raised numpy's own MemoryError, naming neither the function nor the size, or on a
    machine with more memory allocated for minutes first."""
    _refused(call, *words, "8.00 GiB")


def test_position_tables_that_fit_are_still_made(eight_gib):
    # head 0 of 8 has the slope 2**(-8/8) = 0.5: row i is -0.5 * (i - j) on and below the diagonal
    assert m.alibi_bias(3, 8)[0].tolist() == [[0.0, -np.inf, -np.inf], [-0.5, 0.0, -np.inf], [-1.0, -0.5, 0.0]]
    assert m.learned_position_table(4, 2, seed=0).shape == (4, 2)
    assert m.relative_positions(2, 3).tolist() == [[0, 1, 2], [-1, 0, 1]]
    assert m.shaw_relative_index(1, 4, 1).tolist() == [[1, 2, 2, 2]]


# --- 7. NTK-aware scaling: an overflowing base' = base * factor^(d/(d-2)) names factor ----

@pytest.mark.parametrize("call", [
    pytest.param(lambda: m.rope_frequencies(8, 1e300, scaling="ntk", factor=1e10), id="rope_frequencies"),
    pytest.param(lambda: m.apply_rope(np.ones((2, 8)), base=1e300, scaling="ntk", factor=1e10), id="apply_rope"),
])
def test_ntk_base_overflow_names_factor(call):
    # base' = 1e300 * (1e10)^(8/6) = 10^(300 + 13.33) > 1.8e308
    with pytest.raises(ValueError) as err:
        call()
    msg = str(err.value)
    for words in ("factor=1e+10", "base=1e+300", "scaling='ntk'", "base * factor^(d/(d-2))", "1e+313"):
        assert words in msg, (words, msg)
    assert "got inf" not in msg


def test_ntk_factor_whose_power_alone_overflows_is_refused_clearly():
    # base' = 1e4 * (1e200)^2 = 1e404; (1e200)^2 alone overflows, and Python's float power raised OverflowError
    with pytest.raises(ValueError, match=r"factor=1e\+200 .*= 1e\+404"):
        m.rope_frequencies(4, 10_000.0, scaling="ntk", factor=1e200)


def test_ntk_base_within_range_is_unchanged():
    # d = 4: base' = 10000 * 4^2 = 160000, omega = [1, 160000^(-1/2)] = [1, 1/400]
    np.testing.assert_allclose(m.rope_frequencies(4, scaling="ntk", factor=4.0), [1.0, 1 / 400], rtol=1e-15)


def test_target_ids_are_checked_like_input_ids_in_numpy_and_torch():
    """A target of -1 scored the last class silently in numpy (the same loss as the last id) and
    gave torch's "Target -1 is out of bounds"; one past the vocabulary a bare IndexError; a float
    target numpy's own error. Both now name targets, the allowed range and where."""
    torch, model = _tiny()
    from mhalib.models import tiny, tiny_numpy

    logits = np.array([[[0.0, 0.0, 5.0]]])
    assert tiny_numpy.masked_loss_accuracy(logits, [[2]], [[True]])[1] == 1.0  # a good target still works
    for bad, error, words in [([[-1]], ValueError, r"targets must lie in \[0, vocab\) = \[0, 3\); got \[-1\]"),
                              ([[3]], ValueError, r"got \[3\] at position\(s\) \[\(0, 0\)\]"),
                              ([[1.5]], TypeError, r"targets must hold integer token ids, got dtype float64")]:
        with pytest.raises(error, match=words):
            tiny_numpy.masked_loss_accuracy(logits, bad, [[True]])
    V = model.config.vocab
    batch = dict(tokens=torch.tensor([[1, 2, 3]]), targets=torch.tensor([[1, -1, 2]]), scored=torch.ones(1, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=rf"targets must lie in \[0, vocab\) = \[0, {V}\); got \[-1\] at position\(s\) \[\(0, 1\)\]"):
        tiny.evaluate(model, batch, bucket=1)
    with pytest.raises(ValueError, match=rf"got \[{V}\]"):
        tiny.masked_loss(torch.zeros(1, 3, V), torch.tensor([[0, V, 1]]), torch.ones(1, 3, dtype=torch.bool))
