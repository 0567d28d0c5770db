"""Sampling (page: Sampling: from logits to text): filter_logits against transformers'
TemperatureLogitsWarper, TopKLogitsWarper and TopPLogitsWarper (random logits, ties, min_keep,
1-D/2-D/3-D batches, float16/32/64); the top-p set against its descending definition; sample_next
against rng.choice and a chi-square test of its frequencies; greedy against torch.argmax; beam
search against brute-force enumeration and a case worked by hand; and every bad input."""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
import torch
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

import mhalib as m

DTYPES = [np.float16, np.float32, np.float64]
TORCH_DTYPE = {np.float16: torch.float16, np.float32: torch.float32, np.float64: torch.float64}


def hf_filter(x: np.ndarray, temperature=1.0, top_k=None, top_p=None, min_keep=1) -> np.ndarray:
    """transformers' warpers in generate()'s order (temperature, top-k, top-p) on x (..., V) as a
    torch tensor of the same dtype; the warpers take (batch, V), so leading axes are flattened."""
    t = torch.from_numpy(np.ascontiguousarray(x)).reshape(-1, x.shape[-1])  # (..., V) -> (N, V)
    t = TemperatureLogitsWarper(float(temperature))(None, t)
    if top_k is not None:
        t = TopKLogitsWarper(top_k, min_tokens_to_keep=min_keep)(None, t)
    if top_p is not None:
        t = TopPLogitsWarper(top_p, min_tokens_to_keep=min_keep)(None, t)
    return t.numpy().reshape(x.shape)


def kept_by_definition(x, top_k=None, top_p=None, min_keep=1) -> set[int]:
    """The kept tokens of one row with no ties, from the definitions in words: the top_k largest
    (at least min_keep), then, by descending probability, tokens until their mass reaches top_p
    (at least min_keep). Written independently of the ascending-sum rule the warper uses."""
    order = sorted(range(len(x)), key=lambda j: -x[j])
    if top_k is not None:
        order = order[:max(top_k, min_keep)]
    if top_p is not None:
        w = [math.exp(x[j] - x[order[0]]) for j in order]
        mass, n = 0.0, 0
        while n < len(order) and (mass < top_p * sum(w) or n < min_keep):
            mass += w[n]
            n += 1
        order = order[:n]
    return set(order)


SETTINGS = [  # temperature, top_k, top_p, min_keep
    pytest.param(1.0, None, None, 1, id="nothing"),
    pytest.param(0.7, None, None, 1, id="T=0.7"),
    pytest.param(1.0, 10, None, 1, id="top_k=10"),
    pytest.param(1.0, None, 0.9, 1, id="top_p=0.9"),
    pytest.param(0.8, 20, 0.8, 1, id="T=0.8-top_k=20-top_p=0.8"),
    pytest.param(1.3, 5, 0.5, 3, id="T=1.3-top_k=5-top_p=0.5-min_keep=3"),
    pytest.param(1.0, 3, None, 5, id="top_k=3-min_keep=5"),
    pytest.param(1.0, None, 0.2, 4, id="top_p=0.2-min_keep=4"),
    pytest.param(2.0, 100, 0.95, 1, id="top_k>V-top_p=0.95"),
    pytest.param(1.0, None, 1.0, 1, id="top_p=1"),
    pytest.param(0.25, 2, 0.99, 1, id="T=0.25-top_k=2-top_p=0.99"),
]
SHAPES = [pytest.param((50,), id="1-D"), pytest.param((4, 50), id="2-D"), pytest.param((2, 3, 50), id="3-D")]


# ---- filter_logits against transformers' warpers -------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("temperature,top_k,top_p,min_keep", SETTINGS)
def test_filter_matches_the_warpers_on_random_logits(dtype, shape, temperature, top_k, top_p, min_keep):
    x = (np.random.default_rng(0).normal(size=shape) * 3).astype(dtype)
    got = m.filter_logits(x, temperature=temperature, top_k=top_k, top_p=top_p, min_keep=min_keep)
    want = hf_filter(x, temperature, top_k, top_p, min_keep)
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_array_equal(got, want)  # bit for bit, -inf where removed
    assert np.isfinite(got).sum(axis=-1).min() >= min(min_keep, shape[-1])


@pytest.mark.parametrize("temperature,top_k,top_p,min_keep", SETTINGS)
def test_filter_keeps_the_set_its_definition_names(temperature, top_k, top_p, min_keep):
    """Random rows, no ties: the kept set is the top-k, then the smallest set of most probable
    tokens with mass >= top_p, as written in words (descending), not as the warper computes it."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.normal(size=30) * 2
        got = m.filter_logits(x, temperature=temperature, top_k=top_k, top_p=top_p, min_keep=min_keep)
        z = x / temperature
        assert set(np.flatnonzero(np.isfinite(got))) == kept_by_definition(z, top_k, top_p, min_keep)
        kept = np.isfinite(got)
        np.testing.assert_allclose(got[kept], z[kept], rtol=1e-15)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("V", [8, 16])
@pytest.mark.parametrize("temperature,top_k,top_p,min_keep", SETTINGS)
def test_filter_matches_the_warpers_with_ties(dtype, V, temperature, top_k, top_p, min_keep):
    """Logits from {0, 1, 2, 3}: ties at both boundaries. Rows of <= 16 entries, which torch
    sorts stably on a CPU, so the warper's choice among tied tokens is defined and must agree."""
    x = np.random.default_rng(2).integers(0, 4, size=(64, V)).astype(dtype)
    got = m.filter_logits(x, temperature=temperature, top_k=top_k, top_p=top_p, min_keep=min_keep)
    np.testing.assert_array_equal(got, hf_filter(x, temperature, top_k, top_p, min_keep))


@pytest.mark.parametrize("top_k,top_p,min_keep", [(None, 0.5, 1), (None, 0.8, 3), (40, 0.6, 1), (7, None, 1)])
def test_filter_matches_the_warpers_with_ties_in_long_rows(monkeypatch, top_k, top_p, min_keep):
    """Rows of 200 entries from {0, ..., 4}. torch's CPU sort is not stable on rows this long,
    so which tied tokens the warper keeps is arbitrary; how many, and with which values, is not.
    With torch's sort made stable the warper keeps exactly the same tokens."""
    x = np.random.default_rng(3).integers(0, 5, size=(32, 200)).astype(np.float32)
    got = m.filter_logits(x, top_k=top_k, top_p=top_p, min_keep=min_keep)
    plain = hf_filter(x, top_k=top_k, top_p=top_p, min_keep=min_keep)
    np.testing.assert_array_equal(np.sort(got, axis=-1), np.sort(plain, axis=-1))  # the same multiset per row
    monkeypatch.setattr(torch, "sort", functools.partial(torch.sort, stable=True))
    np.testing.assert_array_equal(got, hf_filter(x, top_k=top_k, top_p=top_p, min_keep=min_keep))


def test_ties_at_the_boundaries_by_hand():
    # top-k: every entry equal to the k-th largest stays, so k=2 keeps three tokens
    np.testing.assert_array_equal(m.filter_logits([3.0, 1.0, 1.0, 0.0], top_k=2), [3, 1, 1, -np.inf])
    np.testing.assert_array_equal(m.filter_logits([2.0, 2.0, 2.0, 2.0], top_k=1), [2, 2, 2, 2])
    # top-p: four equal probabilities 1/4; ascending sums 0.25, 0.5, 0.75, 1; those <= 1 - 0.5 go,
    # in index order among the tied: tokens 0 and 1
    np.testing.assert_array_equal(m.filter_logits([0.0, 0.0, 0.0, 0.0], top_p=0.5), [-np.inf, -np.inf, 0, 0])
    # 1 - 0.6 = 0.4: only the sum 0.25 is <= 0.4, so one token goes
    np.testing.assert_array_equal(m.filter_logits([0.0, 0.0, 0.0, 0.0], top_p=0.6), [-np.inf, 0, 0, 0])
    # min_keep=3 overrides top_p=0.5
    np.testing.assert_array_equal(m.filter_logits([0.0, 0.0, 0.0, 0.0], top_p=0.5, min_keep=3), [-np.inf, 0, 0, 0])
    for x, kw in [([3.0, 1.0, 1.0, 0.0], dict(top_k=2)), ([0.0] * 4, dict(top_p=0.5)), ([0.0] * 4, dict(top_p=0.6))]:
        np.testing.assert_array_equal(m.filter_logits(x, **kw), hf_filter(np.array(x), **kw))


def test_worked_example_of_the_docstring():
    p = np.array([0.5, 0.25, 0.15, 0.1])
    got = m.filter_logits(np.log(p), top_p=0.7)  # ascending sums 0.1, 0.25, 0.5, 1: two are <= 0.3
    assert list(np.isfinite(got)) == [True, True, False, False]
    np.testing.assert_allclose(m.softmax(got), [2 / 3, 1 / 3, 0, 0], rtol=1e-14, atol=0)


def boundary_rows(n: int, seed: int):
    """Rows whose probabilities are multiples of 1/20, each with a top_p at which one ascending
    cumulative sum equals 1 - top_p exactly in real numbers: (counts, top_p, the two readings of
    'remove while c_j <= 1 - top_p', with c_j exactly at the boundary removed or kept)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        V = int(rng.integers(3, 10))
        counts = 1 + rng.multinomial(20 - V, np.ones(V) / V)  # each >= 1, summing to 20
        order = np.argsort(counts, kind="stable")  # ascending, tied counts by index
        cum = np.cumsum(counts[order])  # in twentieths, exact integers
        j = int(rng.integers(0, V - 1))
        top_p = 1 - cum[j] / 20
        readings = []
        for remove_at_boundary in (True, False):
            drop = (cum <= cum[j]) if remove_at_boundary else (cum < cum[j])
            kept = np.ones(V, bool)
            kept[order[drop]] = False
            readings.append(kept)
        yield counts, top_p, readings


def test_top_p_at_an_exact_boundary_in_float16_decides_as_the_warper():
    """Where a cumulative sum meets 1 - top_p in real numbers, rounding decides. In float16 the
    warper's rounding (probabilities rounded to float16, summed in float64, threshold rounded to
    float16) is what decides, and mhalib follows it exactly; computing in float64 would not."""
    for counts, top_p, _ in boundary_rows(400, seed=20):
        x = np.log(counts / 20).astype(np.float16)
        np.testing.assert_array_equal(m.filter_logits(x, top_p=top_p), hf_filter(x, top_p=top_p),
                                      err_msg=f"counts={counts.tolist()} top_p={top_p}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_top_p_at_an_exact_boundary_in_float32_and_float64_is_either_reading(dtype):
    """In float32 and float64 the boundary token's fate turns on the last bit of exp, which
    numpy and torch compute differently: mhalib and the warper each give one of the two readings
    (the token exactly at 1 - top_p removed, or kept), not always the same one; nothing else
    differs."""
    same = 0
    for counts, top_p, readings in boundary_rows(400, seed=21):
        x = np.log(counts / 20).astype(dtype)
        ours = np.isfinite(m.filter_logits(x, top_p=top_p))
        theirs = np.isfinite(hf_filter(x, top_p=top_p))
        assert any((ours == r).all() for r in readings), (counts, top_p)
        assert any((theirs == r).all() for r in readings), (counts, top_p)
        same += (ours == theirs).all()
    assert same > 0


def test_masked_tokens_stay_masked_and_match_the_warpers():
    x = np.random.default_rng(4).normal(size=(6, 20))
    x[:, ::3] = -np.inf
    x[0, 2:] = -np.inf  # one row with a single finite token, x[0, 1]
    for kw in [dict(top_k=4), dict(top_p=0.7), dict(temperature=0.5, top_k=10, top_p=0.9, min_keep=2)]:
        got = m.filter_logits(x, **kw)
        np.testing.assert_array_equal(got, hf_filter(x, **kw))
        assert np.isneginf(got[:, ::3]).all() and np.isfinite(got[0]).sum() == 1


def test_temperature_divides():
    x = np.array([1.0, -2.0, 0.5, -np.inf])
    np.testing.assert_array_equal(m.filter_logits(x, temperature=0.5), [2.0, -4.0, 1.0, -np.inf])
    np.testing.assert_array_equal(m.filter_logits(x, temperature=4), [0.25, -0.5, 0.125, -np.inf])
    np.testing.assert_array_equal(m.filter_logits(x), x)


def test_filter_returns_a_new_array_and_converts_integers():
    x = np.array([[3.0, 1.0, 0.0]])
    out = m.filter_logits(x, top_k=1)
    assert out is not x and list(x[0]) == [3.0, 1.0, 0.0]
    ints = m.filter_logits([[3, 1, 0]], top_k=2)
    assert ints.dtype == np.float64
    np.testing.assert_array_equal(ints, [[3, 1, -np.inf]])


def test_filter_accepts_an_empty_batch():
    out = m.filter_logits(np.zeros((0, 5), np.float32), top_k=2, top_p=0.5)
    assert out.shape == (0, 5) and out.dtype == np.float32


# ---- sample_next ---------------------------------------------------------------------------------

def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with df degrees of freedom: the regularized upper
    incomplete gamma function Q(df/2, x/2), from torch (a peer library)."""
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64),
                                         torch.tensor(x / 2, dtype=torch.float64)))


def test_chi2_sf_reproduces_the_published_table():
    # critical values from the standard chi-square table (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.4)
    for x, df, alpha in [(3.841, 1, 0.05), (5.991, 2, 0.05), (9.488, 4, 0.05), (12.592, 6, 0.05),
                         (13.277, 4, 0.01), (16.812, 6, 0.01)]:
        assert chi2_sf(x, df) == pytest.approx(alpha, rel=2e-3)
    # even df: Q = exp(-x/2) sum_{i < df/2} (x/2)^i / i!, in closed form
    for x, df in [(1.0, 2), (7.3, 4), (20.0, 6)]:
        closed = math.exp(-x / 2) * sum((x / 2) ** i / math.factorial(i) for i in range(df // 2))
        assert chi2_sf(x, df) == pytest.approx(closed, rel=1e-12)


LOGITS7 = [2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0]


def expected_probs(x, temperature=1.0, top_k=None, top_p=None) -> np.ndarray:
    """The filtered softmax by the definitions, in plain Python."""
    z = [v / temperature for v in x]
    kept = kept_by_definition(z, top_k, top_p)
    w = [math.exp(z[j]) if j in kept else 0.0 for j in range(len(z))]
    return np.array(w) / sum(w)


@pytest.mark.parametrize("kw,n_kept", [
    (dict(), 7), (dict(temperature=2.0), 7), (dict(temperature=0.6), 7), (dict(top_k=3), 3),
    (dict(top_p=0.8), 3), (dict(temperature=1.5, top_k=5, top_p=0.9), 4),
])
def test_sampled_frequencies_follow_the_filtered_softmax(kw, n_kept):
    N = 20_000
    p = expected_probs(LOGITS7, **kw)
    assert (p > 0).sum() == n_kept
    draws = m.sample_next(np.tile(LOGITS7, (N, 1)), np.random.default_rng(5), **kw)  # N rows: N draws
    assert draws.shape == (N,) and draws.dtype == np.int64
    counts = np.bincount(draws, minlength=7)
    assert counts[p == 0].sum() == 0  # a removed token is never drawn
    e = N * p[p > 0]
    stat = float(((counts[p > 0] - e) ** 2 / e).sum())
    assert chi2_sf(stat, n_kept - 1) > 1e-3, (counts, e)
    # the test can fail: the same draws against the unfiltered softmax at T = 1 are rejected
    if kw:
        q = expected_probs(LOGITS7)
        stat_wrong = float(((counts - N * q) ** 2 / (N * q)).sum())
        assert chi2_sf(stat_wrong, 6) < 1e-6


def test_one_row_draws_what_rng_choice_draws():
    x = np.array(LOGITS7)
    for seed in range(50):
        for kw in (dict(), dict(top_k=4, temperature=0.8), dict(top_p=0.8)):
            want = np.random.default_rng(seed).choice(7, p=expected_probs(LOGITS7, **kw))
            got = m.sample_next(x, np.random.default_rng(seed), **kw)
            assert type(got) is int and got == want


def test_a_batch_draws_what_single_calls_draw_in_turn():
    x = np.random.default_rng(6).normal(size=(3, 4, 11))
    batch = m.sample_next(x, np.random.default_rng(7), top_p=0.9)
    assert batch.shape == (3, 4)
    rng = np.random.default_rng(7)
    single = [[m.sample_next(x[i, j], rng, top_p=0.9) for j in range(4)] for i in range(3)]
    np.testing.assert_array_equal(batch, single)


def test_sampling_never_draws_a_removed_or_masked_token():
    x = np.array([[0.0, -np.inf, 5.0, -np.inf, 4.0, -30.0]] * 2000)
    draws = m.sample_next(x, np.random.default_rng(8), top_k=2)
    assert set(np.unique(draws)) == {2, 4}
    x = np.zeros((2000, 5))
    x[:, 0] = -np.inf
    assert set(np.unique(m.sample_next(x, np.random.default_rng(9)))) == {1, 2, 3, 4}


class FixedUniform(np.random.Generator):
    """A generator whose every uniform draw is ``u`` (to reach the ends of [0, 1))."""

    def __init__(self, u: float):
        super().__init__(np.random.PCG64(0))
        self.u = u

    def random(self, size=None):
        return np.full(size, self.u)


def test_the_uniform_draw_maps_to_the_token_whose_interval_holds_it():
    """y is the number of j with C_j <= u: u in [C_{y-1}, C_y). At u = 0 and at the largest double
    below 1 the draw lands on the first and last tokens that can be drawn, never a masked one."""
    x = [-np.inf, 0.0, 0.0, -np.inf]  # C = 0, 1/2, 1, 1
    assert m.sample_next(x, FixedUniform(0.0)) == 1
    assert m.sample_next(x, FixedUniform(np.nextafter(0.5, 0.0))) == 1
    assert m.sample_next(x, FixedUniform(0.5)) == 2
    assert m.sample_next(x, FixedUniform(np.nextafter(1.0, 0.0))) == 2


def test_top_k_1_is_greedy_and_a_cold_temperature_nearly_so():
    x = np.random.default_rng(10).normal(size=(200, 30))
    g = m.greedy(x)
    np.testing.assert_array_equal(m.sample_next(x, np.random.default_rng(11), top_k=1), g)
    np.testing.assert_array_equal(m.sample_next(x, np.random.default_rng(12), temperature=1e-4), g)


# ---- greedy --------------------------------------------------------------------------------------

def test_greedy_is_the_argmax_and_ties_go_to_the_lowest_id():
    assert m.greedy([1.0, 3.0, 3.0]) == 1 and type(m.greedy([1.0, 3.0, 3.0])) is int
    assert m.greedy([-np.inf, -5.0, -np.inf]) == 1
    x = np.random.default_rng(13).integers(0, 3, size=(2, 5, 9)).astype(np.float32)  # many ties
    got = m.greedy(x)
    assert got.shape == (2, 5) and got.dtype == np.int64
    np.testing.assert_array_equal(got, torch.argmax(torch.from_numpy(x), dim=-1).numpy())
    for row, g in zip(x.reshape(-1, 9), got.ravel()):
        assert g == min(j for j in range(9) if row[j] == row.max())


# ---- beam search ---------------------------------------------------------------------------------

def table_step_fn(V: int, seed: int, forbid: float = 0.0):
    """A deterministic 'model': the logits after a prefix are drawn once per prefix from a fixed
    generator (so any prefix always gets the same logits); ``forbid`` is the chance of -inf."""
    memo: dict[tuple, np.ndarray] = {}
    rng = np.random.default_rng(seed)
    calls = []

    def step_fn(prefix):
        key = tuple(int(t) for t in prefix)
        calls.append(key)
        if key not in memo:
            logits = rng.normal(size=V) * 2
            logits[rng.random(V) < forbid] = -np.inf
            if np.isneginf(logits).all():
                logits[rng.integers(V)] = 0.0
            memo[key] = logits
        return memo[key]
    step_fn.calls = calls
    return step_fn


def brute_force(step_fn, start, V, n):
    """Every one of the V**n continuations and its log-probability, best first, in plain Python."""
    out = []
    for seq in itertools.product(range(V), repeat=n):
        score, prefix = 0.0, list(start)
        for t in seq:
            x = step_fn(np.array(prefix))
            if x[t] == -np.inf:
                score = -math.inf
                break
            top = max(x)
            score += (x[t] - top) - math.log(sum(math.exp(v - top) for v in x if v != -np.inf))
            prefix.append(t)
        if score > -math.inf:
            out.append((list(start) + list(seq), score))
    return sorted(out, key=lambda s: -s[1])


@pytest.mark.parametrize("start", [[0], [2, 1], []], ids=["start=[0]", "start=[2,1]", "empty-start"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_search_with_every_prefix_kept_is_brute_force(start, seed):
    V, n = 3, 3
    step_fn = table_step_fn(V, seed)
    exact = brute_force(step_fn, start, V, n)
    for beams in (V ** n, V ** (n - 1)):  # all 27; or 9, which drops no prefix before the last step
        seqs, scores = m.beam_search(step_fn, start, beams=beams, max_new=n)
        assert seqs.shape == (beams, len(start) + n) and seqs.dtype == np.int64
        assert [list(s) for s in seqs] == [s for s, _ in exact[:beams]]
        np.testing.assert_allclose(scores, [sc for _, sc in exact[:beams]], rtol=1e-12, atol=1e-12)


def test_beam_search_leaves_out_impossible_sequences():
    V, n = 3, 3
    step_fn = table_step_fn(V, seed=4, forbid=0.4)
    exact = brute_force(step_fn, [1], V, n)
    assert 0 < len(exact) < V ** n
    seqs, scores = m.beam_search(step_fn, [1], beams=V ** n, max_new=n)
    assert len(seqs) == len(exact) and np.isfinite(scores).all()
    assert [list(s) for s in seqs] == [s for s, _ in exact]


def test_beam_1_is_greedy_decoding():
    V = 5
    step_fn = table_step_fn(V, seed=5)
    seqs, scores = m.beam_search(step_fn, [3], beams=1, max_new=6)
    prefix, total = [3], 0.0
    for _ in range(6):
        x = step_fn(np.array(prefix))
        t = m.greedy(x)
        total += x[t] - math.log(sum(math.exp(v) for v in x))
        prefix.append(t)
    assert seqs.tolist() == [prefix] and scores[0] == pytest.approx(total, rel=1e-12)


def test_beam_search_worked_by_hand():
    """First token a=0 (0.5), b=1 (0.4), c=2 (0.1); after a: 0.4, 0.3, 0.3; after b: 0.9, 0.05,
    0.05. Greedy takes a then a: 0.5 * 0.4 = 0.2. Two beams keep a and b; the candidates are
    a a 0.2, a b 0.15, a c 0.15, b a 0.36, b b 0.02, b c 0.02: b a wins, then a a."""
    table = {(): [0.5, 0.4, 0.1], (0,): [0.4, 0.3, 0.3], (1,): [0.9, 0.05, 0.05], (2,): [1 / 3] * 3}

    def step_fn(prefix):  # returns log-probabilities
        return np.log(table[tuple(prefix)])

    seqs, scores = m.beam_search(step_fn, [], beams=1, max_new=2)
    assert seqs.tolist() == [[0, 0]] and scores[0] == pytest.approx(math.log(0.2), rel=1e-14)
    seqs, scores = m.beam_search(step_fn, [], beams=2, max_new=2)
    assert seqs.tolist() == [[1, 0], [0, 0]]
    np.testing.assert_allclose(scores, [math.log(0.36), math.log(0.2)], rtol=1e-14)
    # logits (log-probabilities plus any constant per step) give the same result
    shifted = m.beam_search(lambda p: step_fn(p) + 7.5, [], beams=2, max_new=2)
    np.testing.assert_array_equal(shifted[0], seqs)
    np.testing.assert_allclose(shifted[1], scores, rtol=1e-14)


def test_beam_search_ties_keep_prefix_then_token_order_and_step_fn_gets_copies():
    def step_fn(prefix):
        prefix[:] = 99  # a careless model that writes into its input must not corrupt the beams
        return np.zeros(5)  # every sequence of 3 new tokens has probability 1/125

    seqs, scores = m.beam_search(step_fn, [0], beams=125, max_new=3)
    assert seqs.tolist() == [[0, *s] for s in itertools.product(range(5), repeat=3)]  # in lexicographic order
    np.testing.assert_allclose(scores, [3 * math.log(1 / 5)] * 125, rtol=1e-15)


def test_beam_search_tie_order_by_hand():
    """Step 1: six tokens, all 1/6. Step 2: after an even token all six again (1/6), after an odd
    one only tokens 0 and 1 (1/2 each). The six children of odd prefixes (1/12) beat the eighteen
    of even ones (1/36); within equal scores the order is the prefix's rank, then the token id."""
    def step_fn(prefix):
        if len(prefix) == 0 or prefix[-1] % 2 == 0:
            return np.zeros(6)
        return np.array([0.0, 0.0, -np.inf, -np.inf, -np.inf, -np.inf])

    seqs, scores = m.beam_search(step_fn, [], beams=100, max_new=2)
    odd = [[p, t] for p in (1, 3, 5) for t in (0, 1)]
    even = [[p, t] for p in (0, 2, 4) for t in range(6)]
    assert seqs.tolist() == odd + even  # 24 sequences: the other 12 are impossible
    np.testing.assert_allclose(scores, [math.log(1 / 12)] * 6 + [math.log(1 / 36)] * 18, rtol=1e-14)


# ---- bad input -----------------------------------------------------------------------------------

ROW = np.array([1.0, 2.0, 3.0])
RNG = np.random.default_rng(0)


def fixed(V):
    return lambda prefix: np.zeros(V)


BAD = [
    # temperature
    pytest.param(lambda: m.filter_logits(ROW, temperature=0), ValueError, ["temperature", "> 0", "greedy"], id="temperature-0"),
    pytest.param(lambda: m.filter_logits(ROW, temperature=-1.0), ValueError, ["temperature", "> 0", "-1.0"], id="temperature-negative"),
    pytest.param(lambda: m.filter_logits(ROW, temperature=float("nan")), ValueError, ["temperature", "finite", "nan"], id="temperature-nan"),
    pytest.param(lambda: m.filter_logits(ROW, temperature=float("inf")), ValueError, ["temperature", "finite", "inf"], id="temperature-inf"),
    pytest.param(lambda: m.filter_logits(ROW, temperature="1"), TypeError, ["temperature", "'1'", "str"], id="temperature-str"),
    pytest.param(lambda: m.filter_logits(np.array([60000.0], np.float16), temperature=0.5), ValueError,
     ["overflow", "temperature=0.5", "float16", "65504"], id="temperature-overflows-float16"),
    # pass thirty-seven: a temperature beyond float32 gave NaN for a -inf logit (inf / inf) and
    # blamed the logits for 0 / 0
    pytest.param(lambda: m.filter_logits(np.array([0.0, -np.inf], np.float32), temperature=1e300), ValueError,
     ["temperature=1e+300", "infinite in float32", "float64"], id="temperature-past-float32"),
    pytest.param(lambda: m.filter_logits(np.zeros(2, np.float16), temperature=1e-300), ValueError,
     ["temperature=1e-300", "0 in float32", "float16 logits"], id="temperature-below-float32"),
    # top_p
    pytest.param(lambda: m.filter_logits(ROW, top_p=0), ValueError, ["top_p", "(0, 1]", "0.0"], id="top_p-0"),
    pytest.param(lambda: m.filter_logits(ROW, top_p=1.5), ValueError, ["top_p", "(0, 1]", "1.5"], id="top_p-1.5"),
    pytest.param(lambda: m.filter_logits(ROW, top_p=-0.1), ValueError, ["top_p", "(0, 1]", "-0.1"], id="top_p-negative"),
    pytest.param(lambda: m.filter_logits(ROW, top_p=float("nan")), ValueError, ["top_p", "(0, 1]", "nan"], id="top_p-nan"),
    pytest.param(lambda: m.filter_logits(ROW, top_p="0.9"), TypeError, ["top_p", "'0.9'", "str"], id="top_p-str"),
    pytest.param(lambda: m.filter_logits(ROW, top_p=True), TypeError, ["top_p", "True", "bool"], id="top_p-bool"),
    # top_k, min_keep
    pytest.param(lambda: m.filter_logits(ROW, top_k=0), ValueError, ["top_k", ">= 1", "0"], id="top_k-0"),
    pytest.param(lambda: m.filter_logits(ROW, top_k=2.5), TypeError, ["top_k", "integer", "2.5"], id="top_k-float"),
    pytest.param(lambda: m.filter_logits(ROW, top_k=True), TypeError, ["top_k", "integer", "True"], id="top_k-bool"),
    pytest.param(lambda: m.filter_logits(ROW, min_keep=0), ValueError, ["min_keep", ">= 1", "0"], id="min_keep-0"),
    pytest.param(lambda: m.filter_logits(ROW, min_keep=1.0), TypeError, ["min_keep", "integer", "1.0"], id="min_keep-float"),
    # logits
    pytest.param(lambda: m.filter_logits([1.0, float("nan")]), ValueError, ["logits", "NaN", "1 NaN"], id="logits-nan"),
    pytest.param(lambda: m.filter_logits([1.0, float("inf")]), ValueError, ["logits", "+inf", "1 +inf"], id="logits-posinf"),
    pytest.param(lambda: m.filter_logits([[0.0, 1.0], [-np.inf, -np.inf]]), ValueError, ["logits", "-inf in every entry in 1 row(s)", "(1,)", "finite"], id="logits-row-all-neginf"),
    pytest.param(lambda: m.filter_logits(np.zeros((3, 0))), ValueError, ["logits", "empty vocabulary", "(3, 0)"], id="logits-empty-vocabulary"),
    pytest.param(lambda: m.filter_logits(2.0), ValueError, ["logits", "1 dimension", "()"], id="logits-0d"),
    pytest.param(lambda: m.filter_logits([True, False]), TypeError, ["logits", "bool"], id="logits-bool"),
    pytest.param(lambda: m.filter_logits([1 + 2j]), TypeError, ["logits", "complex"], id="logits-complex"),
    pytest.param(lambda: m.filter_logits(["a", "b"]), TypeError, ["logits", "<U1"], id="logits-str"),
    # sample_next and greedy
    pytest.param(lambda: m.sample_next(ROW, 42), TypeError, ["rng", "Generator", "default_rng", "int"], id="sample-rng-int"),
    pytest.param(lambda: m.sample_next(ROW, None), TypeError, ["rng", "Generator", "NoneType"], id="sample-rng-None"),
    pytest.param(lambda: m.sample_next(ROW, np.random.RandomState(0)), TypeError, ["rng", "Generator", "RandomState"], id="sample-rng-RandomState"),
    pytest.param(lambda: m.sample_next(ROW, RNG, top_p=2.0), ValueError, ["top_p", "2.0"], id="sample-bad-top_p"),
    pytest.param(lambda: m.sample_next([np.nan], RNG), ValueError, ["logits", "NaN"], id="sample-nan"),
    pytest.param(lambda: m.greedy([-np.inf, -np.inf]), ValueError, ["logits", "-inf in every entry: no token"], id="greedy-all-neginf"),
    pytest.param(lambda: m.greedy([]), ValueError, ["logits", "empty vocabulary"], id="greedy-empty"),
    # beam_search
    pytest.param(lambda: m.beam_search("model", [0], beams=2, max_new=2), TypeError, ["step_fn", "callable", "str"], id="beam-step_fn-not-callable"),
    pytest.param(lambda: m.beam_search(fixed(3), [[0]], beams=2, max_new=2), ValueError, ["start", "1-D", "(1, 1)"], id="beam-start-2d"),
    pytest.param(lambda: m.beam_search(fixed(3), [0.5], beams=2, max_new=2), TypeError, ["start", "integer", "float64"], id="beam-start-float"),
    pytest.param(lambda: m.beam_search(fixed(3), [True], beams=2, max_new=2), TypeError, ["start", "integer", "bool"], id="beam-start-bool"),
    pytest.param(lambda: m.beam_search(fixed(3), [1, -2], beams=2, max_new=2), ValueError, ["start", ">= 0", "-2"], id="beam-start-negative"),
    pytest.param(lambda: m.beam_search(fixed(3), [1, 3], beams=2, max_new=2), ValueError, ["start", "[0, 3)", "V=3", "got 3"], id="beam-start-beyond-V"),
    pytest.param(lambda: m.beam_search(fixed(3), [0], beams=0, max_new=2), ValueError, ["beams", ">= 1", "0"], id="beam-beams-0"),
    pytest.param(lambda: m.beam_search(fixed(3), [0], beams=2, max_new=0), ValueError, ["max_new", ">= 1", "0"], id="beam-max_new-0"),
    pytest.param(lambda: m.beam_search(fixed(3), [0], beams=2.0, max_new=2), TypeError, ["beams", "integer"], id="beam-beams-float"),
    pytest.param(lambda: m.beam_search(lambda p: np.zeros((1, 3)), [0], beams=2, max_new=2), ValueError,
     ["step_fn's output", "(V,)", "(1, 3)"], id="beam-output-2d"),
    pytest.param(lambda: m.beam_search(lambda p: np.zeros(3 + len(p)), [0], beams=2, max_new=2), ValueError,
     ["step_fn's output", "(4,) as on its first call", "(5,)"], id="beam-output-V-changes"),
    pytest.param(lambda: m.beam_search(lambda p: np.array([0.0, np.nan]), [0], beams=2, max_new=2), ValueError,
     ["step_fn's output", "NaN"], id="beam-output-nan"),
    pytest.param(lambda: m.beam_search(lambda p: np.full(3, -np.inf), [0], beams=2, max_new=2), ValueError,
     ["step_fn's output", "-inf"], id="beam-output-all-neginf"),
]


@pytest.mark.parametrize("call,exc,words", BAD)
def test_bad_input_is_refused_with_a_message_that_names_it(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_beam_search_refuses_scores_past_float64_rather_than_drop_them():
    """Logits 1e308 and -1e308 give the second token ln p = -2e308, which float64 cannot hold: it
    became -inf and the sequence was dropped as impossible (one of three asked-for beams came
    back, pass thirty-six). Only a -inf logit forbids a token; a score past the range is refused."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"passes float64's range .* scale step_fn's logits down"):
            m.beam_search(lambda p: np.array([1e308, -1e308]), [], beams=3, max_new=2)
        seqs, scores = m.beam_search(lambda p: np.array([1.0, -np.inf, 0.5]), [], beams=3, max_new=2)
    assert 1 not in seqs  # the -inf logit still forbids its token
    # by hand: ln p(0) = 1 - ln(e + e^0.5), ln p(2) = 0.5 - ln(e + e^0.5)
    lp0, lp2 = 1 - np.log(np.e + np.exp(0.5)), 0.5 - np.log(np.e + np.exp(0.5))
    np.testing.assert_allclose(scores, [2 * lp0, lp0 + lp2, lp0 + lp2], rtol=1e-15)



def test_a_longdouble_temperature_is_read_in_its_own_range():
    """Pass forty-three: temperature=np.longdouble('1e400') for longdouble logits was refused as
    "got inf" (read through float64); in longdouble it is an ordinary number."""
    x = np.array([0.0, 1.0, 2.0], np.longdouble)
    z = m.filter_logits(x, temperature=np.longdouble("1e400"))
    assert z.dtype == np.longdouble and z[2] == np.longdouble(2) / np.longdouble("1e400") and z[2] > 0
