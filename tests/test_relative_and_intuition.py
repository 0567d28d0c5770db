"""Relative-position indices (Shaw et al., T5) and the intuition figures of the sinusoidal page.

Expected values are derived here independently: by hand, from closed forms, with exact
integer arithmetic, with torch, and against ``transformers``' T5 implementation.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import figures
import mhalib as m


def d(name, **params):
    return figures.load(name).data(**params)


# --------------------------------------------------------------------------- relative positions

def test_relative_positions_by_hand():
    assert m.relative_positions(2, 3).tolist() == [[0, 1, 2], [-1, 0, 1]]
    assert m.relative_positions(3, 1).tolist() == [[0], [-1], [-2]]


def test_shaw_index_refuses_a_k_whose_index_leaves_int64():
    """k = 10**30 failed inside np.clip ("Python int too large to convert to C long"); the
    index runs to 2k, an int64, so k is refused by name, and the largest k that fits works."""
    with pytest.raises(ValueError, match=r"k must be at most 2\*\*62 - 1.*got 10{30}"):
        m.shaw_relative_index(2, 3, 10**30)
    k = 2**62 - 1
    assert m.shaw_relative_index(2, 3, k).tolist() == [[k, k + 1, k + 2], [k - 1, k, k + 1]]  # by hand: j - i + k


def test_shaw_index_by_hand():
    T, k = 12, 4
    idx = m.shaw_relative_index(T, T, k)
    expected = [[min(max(j - i, -k), k) + k for j in range(T)] for i in range(T)]
    assert idx.tolist() == expected
    # corners: the first query sees every later key past k through the last vector (row 2k = 8)
    assert idx[0, 0] == 4 and idx[0, 11] == 8 and idx[11, 0] == 0 and idx[5, 7] == 6
    assert m.shaw_relative_index(4, 4, 2).tolist()[0] == [2, 3, 4, 4]
    assert np.all(m.shaw_relative_index(5, 7, 0) == 0)  # k = 0: one vector, no position
    assert m.shaw_relative_index(2, 5, 1).shape == (2, 5)


# --------------------------------------------------------------------------- T5 buckets by hand

# (relative_position, bidirectional, expected bucket), worked by hand for 32 buckets, max_distance 128:
# bidirectional: 16 buckets a side, max_exact 8, large r -> 8 + floor(log(r/8)/log(16) * 8), capped at 15;
# causal: max_exact 16, large r -> 16 + floor(log(r/16)/log(8) * 16), capped at 31.
HAND = [
    (0, True, 0), (-1, True, 1), (-7, True, 7),
    (-8, True, 8),  # log(1) = 0
    (-12, True, 9),  # 8 * log(1.5)/log(16) = 1.17
    (-16, True, 10),  # 8 * log(2)/log(16) = 2 exactly
    (-127, True, 15),  # 8 * log(15.875)/log(16) = 7.98
    (-128, True, 15), (-10_000, True, 15),  # capped
    (1, True, 17), (7, True, 23),  # keys after the query: + 16
    (20, True, 26),  # 16 + 8 + floor(8 * log(2.5)/log(16)) = 16 + 8 + 2
    (5, False, 0), (0, False, 0), (-5, False, 5), (-15, False, 15),
    (-16, False, 16), (-32, False, 21),  # 16 * log(2)/log(8) = 5.33
    (-127, False, 31), (-128, False, 31),  # 16 * log(7.94)/log(8) = 15.94; then capped
]


@pytest.mark.parametrize("rel,bidirectional,bucket", HAND, ids=lambda v: str(v))
def test_t5_bucket_by_hand(rel, bidirectional, bucket):
    assert int(m.t5_relative_position_bucket(rel, bidirectional=bidirectional)) == bucket


def _bucket_exact(rel: int, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """T5's bucket from the paper's description, with exact integer comparisons (no floating point).

    floor(m * log(r/e) / log(M/e)) >= t  <=>  (r/e)^m >= (M/e)^t  <=>  r^m * e^t >= M^t * e^m.
    """
    n, bucket = num_buckets, 0
    if bidirectional:
        n //= 2
        bucket = n if rel > 0 else 0
        r = abs(rel)
    else:
        r = max(-rel, 0)
    e = n // 2
    if r < e:
        return bucket + r
    m_ = n - e
    t = 0
    while t + 1 <= m_ - 1 and r**m_ * e ** (t + 1) >= max_distance ** (t + 1) * e**m_:
        t += 1
    return bucket + e + t


CONFIGS = [(True, 32, 128), (False, 32, 128), (True, 64, 256), (False, 16, 64), (True, 8, 20), (False, 6, 9),
           (True, 32, 1000), (False, 128, 512)]


#: Settings where a bucket boundary falls exactly on a distance, found by pass nine: the float64
#: logarithm put r = -64 (18 buckets, max_distance 128: 4 + floor(5 log 16 / log 32) = 8) in 7.
BOUNDARY_CONFIGS = [(True, 18, 128), (False, 9, 128), (True, 54, 64), (False, 54, 64), (False, 10, 32), (True, 12, 256)]


#: A max_distance past float64 (pass twenty-nine: "integer division result too large for a float").
HUGE_CONFIGS = [(True, 32, 10**400), (False, 16, 10**30)]


@pytest.mark.parametrize("bidirectional,num_buckets,max_distance", CONFIGS + BOUNDARY_CONFIGS + HUGE_CONFIGS, ids=str)
def test_t5_bucket_against_exact_formula(bidirectional, num_buckets, max_distance):
    rel = np.arange(-700, 701)
    got = m.t5_relative_position_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets,
                                        max_distance=max_distance)
    expected = [_bucket_exact(int(r), bidirectional, num_buckets, max_distance) for r in rel]
    assert got.tolist() == expected
    assert got.dtype == np.int64 and got.min() >= 0 and got.max() <= num_buckets - 1


@pytest.mark.parametrize("bidirectional,num_buckets,max_distance", CONFIGS, ids=str)
def test_t5_bucket_against_transformers(bidirectional, num_buckets, max_distance):
    torch = pytest.importorskip("torch")
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    rel = np.arange(-3000, 3001)
    theirs = t5.T5Attention._relative_position_bucket(torch.tensor(rel), bidirectional=bidirectional,
                                                      num_buckets=num_buckets, max_distance=max_distance)
    ours = m.t5_relative_position_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets,
                                         max_distance=max_distance)
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("is_decoder", [False, True], ids=["encoder", "decoder"])
def test_t5_sign_convention_matches_transformers_bias(is_decoder):
    """T5's compute_bias looks up bucket(key position - query position): the same sign as ours."""
    torch = pytest.importorskip("torch")
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    from transformers import T5Config

    cfg = T5Config(d_model=8, d_kv=4, num_heads=2, relative_attention_num_buckets=32,
                   relative_attention_max_distance=128, is_decoder=is_decoder)
    attn = t5.T5Attention(cfg, has_relative_attention_bias=True)
    with torch.no_grad():  # bias of bucket b for head h is 10 b + h: the bucket can be read back
        attn.relative_attention_bias.weight.copy_(torch.arange(32)[:, None] * 10.0 + torch.arange(2)[None, :])
        bias = attn.compute_bias(40, 50)[0].numpy()  # (H, T, S)
    buckets = m.t5_relative_position_bucket(m.relative_positions(40, 50), bidirectional=not is_decoder)
    np.testing.assert_array_equal(bias[0], 10.0 * buckets)
    np.testing.assert_array_equal(bias[1], 10.0 * buckets + 1)


def test_t5_bucket_shapes_and_scalars():
    assert m.t5_relative_position_bucket(-16).shape == ()
    assert m.t5_relative_position_bucket(np.int32(-16)) == 10
    assert m.t5_relative_position_bucket(np.zeros((2, 3), dtype=np.int16)).shape == (2, 3)
    assert m.t5_relative_position_bucket(np.array([3], dtype=np.uint8)).tolist() == [19]
    assert m.t5_relative_position_bucket(-(2**62)).item() == 15


@pytest.mark.parametrize("args,kwargs,error,name", [
    ((np.array([1.0, 2.0]),), {}, TypeError, "relative_position"),
    ((True,), {}, TypeError, "relative_position"),
    ((np.array([True]),), {}, TypeError, "relative_position"),
    ((-(2**63),), {}, ValueError, "relative_position"),
    ((2**64,), {}, ValueError, "relative_position"),
    ((np.array([-(2**63)]),), {}, ValueError, "relative_position"),
    (("3",), {}, TypeError, "relative_position"),
    ((1,), dict(bidirectional="yes"), TypeError, "bidirectional"),
    ((1,), dict(num_buckets=0), ValueError, "num_buckets"),
    ((1,), dict(num_buckets=2.0), TypeError, "num_buckets"),
    ((1,), dict(num_buckets=33), ValueError, "num_buckets"),
    ((1,), dict(num_buckets=2), ValueError, "num_buckets"),
    ((1,), dict(num_buckets=1, bidirectional=False), ValueError, "num_buckets"),
    ((1,), dict(max_distance=8), ValueError, "max_distance"),  # max_exact is 8 for 32 bidirectional buckets
    ((1,), dict(max_distance=16, bidirectional=False), ValueError, "max_distance"),
    ((1,), dict(max_distance=0), ValueError, "max_distance"),
], ids=lambda v: str(v)[:30])
def test_t5_bucket_refuses_bad_input(args, kwargs, error, name):
    with pytest.raises(error, match=name):
        m.t5_relative_position_bucket(*args, **kwargs)


@pytest.mark.parametrize("args,error,name", [
    ((0, 3, 1), ValueError, "T"), ((3, 0, 1), ValueError, "S"), ((3, 3, -1), ValueError, "k"),
    ((3, 3, 1.5), TypeError, "k"), ((3.0, 3, 1), TypeError, "T"),
])
def test_shaw_index_refuses_bad_input(args, error, name):
    with pytest.raises(error, match=name):
        m.shaw_relative_index(*args)


# --------------------------------------------------------------------------- figures: relative family

def test_t5_buckets_figure_ranges_by_hand():
    t = d("t5_buckets")
    assert (t["num_buckets"], t["max_distance"], t["span"]) == (32, 128, 160)  # the page's defaults
    bi, causal = t["backward_ranges"]["bidirectional"], t["backward_ranges"]["causal"]
    # bucket e + t starts at the smallest r with r >= e * (M/e)^(t/m): ceil of that
    for ranges, e, ratio, m_ in ((bi, 8, 16, 8), (causal, 16, 8, 16)):
        assert [(r["bucket"], r["lo"], r["hi"]) for r in ranges[:e]] == [(b, b, b) for b in range(e)]
        for t_ in range(1, m_):
            assert ranges[e + t_]["lo"] == math.ceil(e * ratio ** (t_ / m_)), (e, t_)
    assert (bi[8]["lo"], bi[8]["hi"], bi[9]["lo"], bi[9]["hi"]) == (8, 11, 12, 15)
    assert (bi[-1]["bucket"], bi[-1]["lo"]) == (15, 91)  # 8 * 16^(7/8) = 90.5
    assert (causal[16]["lo"], causal[16]["hi"], causal[-1]["bucket"], causal[-1]["lo"]) == (16, 18, 31, 113)
    assert bi[-1]["hi"] == causal[-1]["hi"] == t["span"] == 160
    # bucket 16 (a key "0 after" the query) never occurs: 31 of the 32 buckets are used
    assert t["n_used"] == {"bidirectional": 31, "causal": 32}
    assert t["unused"] == {"bidirectional": [16], "causal": []}
    assert t["first_after"] == 16 + 1  # a key one step after the query: upper half, distance 1
    assert 16 not in t["bidirectional"].tolist()
    rel = t["relative_position"]
    assert t["causal"][rel > 0].tolist() == [0] * 160
    assert t["max_exact"] == {"bidirectional": 8, "causal": 16}


def test_shaw_clipping_figure_counts_by_hand():
    s = d("shaw_clipping")
    T, k = 12, 4
    assert (s["T"], s["k"]) == (T, k) and s["n_vectors"] == 2 * k + 1 == 9 and s["clipped"].min() == -4 and s["clipped"].max() == 4
    # distance d with |d| < k occurs T - |d| times; each end row takes every |d| >= k on its side
    ends = sum(T - dist for dist in range(k, T))
    assert ends == 36
    assert s["uses"].tolist() == [ends, 9, 10, 11, 12, 11, 10, 9, ends]
    assert s["uses"].sum() == T * T == s["n_pairs"] == 144
    assert s["share_clipped"] == pytest.approx(2 * sum(T - dist for dist in range(k + 1, T)) / T**2)
    assert s["share_clipped"] == pytest.approx(56 / 144)


# --------------------------------------------------------------------------- figures: sinusoidal intuition

def test_binary_clock_by_hand():
    b = d("pe_binary_clock")
    assert b["d_model"] == 8 and b["base"] == 16.0 and b["n_positions"] == 16 and b["real_d_model"] == 512
    for p in range(16):
        assert b["bits"][p].tolist() == [(p // 2**bit) % 2 for bit in range(4)]
        for i in range(4):
            omega = 2.0**-i  # 16^(-2i/8)
            assert b["hand_x"][p][i] == pytest.approx(math.sin(p * omega), abs=1e-15)
            assert b["hand_y"][p][i] == pytest.approx(math.cos(p * omega), abs=1e-15)
            turns = (p * omega / (2 * math.pi)) % 1.0
            assert min(abs(b["turns"][p][i] - turns), 1 - abs(b["turns"][p][i] - turns)) < 1e-12
    assert b["speed_ratio"] == pytest.approx(2.0)
    # counting from 7 to 8 flips every one of the four bits (0111 -> 1000)
    assert b["bits"][7].tolist() == [1, 1, 1, 0] and b["bits"][8].tolist() == [0, 0, 0, 1]
    np.testing.assert_allclose(b["wavelengths"], [2 * math.pi * 2**i for i in range(4)], rtol=1e-14)
    assert b["real_speed_ratio"] == pytest.approx(10000 ** (2 / 512)) and b["real_n_pairs"] == 256
    assert b["real_slowdown_percent"] == pytest.approx(100 * (1 - 10000 ** (-2 / 512)))
    assert 3.5 < b["real_slowdown_percent"] < 3.6


def test_sin_only_shift_single_frequency_closed_form():
    # one pair (omega = 1): fitting sin(p + k) = a sin(p) by least squares, a = sum(s t) / sum(s s)
    n, k = 256, 1
    s = [math.sin(p) for p in range(n)]
    t = [math.sin(p + k) for p in range(n)]
    a = sum(x * y for x, y in zip(s, t)) / sum(x * x for x in s)
    expected = math.sqrt(sum((a * x - y) ** 2 for x, y in zip(s, t)) / sum(y * y for y in t))
    r = d("pe_sin_only_shift", d_model=2, n_positions=n, k=k)
    assert r["residual_sin"] == pytest.approx(expected, rel=1e-9)
    # the missing piece is sin(k) cos(p): over many periods its share is |sin k|
    assert r["residual_sin"] == pytest.approx(abs(math.sin(1)), abs=5e-3)
    assert r["residual_pairs"] < 1e-14


def test_sin_only_shift_default_against_torch():
    torch = pytest.importorskip("torch")
    r = d("pe_sin_only_shift")
    n, k, D = 256, 1, 16
    assert (r["n_positions"], r["k"], r["d_model"], r["pair_show"]) == (n, k, D, 0)
    p = torch.arange(n + k, dtype=torch.float64)[:, None]
    omega = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    sin, cos = torch.sin(p * omega), torch.cos(p * omega)  # (n + k, D/2) each
    fit = torch.linalg.lstsq(sin[:n], sin[k:]).solution
    res = torch.linalg.norm(sin[:n] @ fit - sin[k:]) / torch.linalg.norm(sin[k:])
    assert r["residual_sin"] == pytest.approx(float(res), rel=1e-6)
    both = torch.cat([sin, cos], dim=1)
    fit2 = torch.linalg.lstsq(both[:n], both[k:]).solution
    res2 = torch.linalg.norm(both[:n] @ fit2 - both[k:]) / torch.linalg.norm(both[k:])
    assert float(res2) < 1e-12 and r["residual_pairs"] < 1e-12
    # the fastest pair misses the cos term sin(k w) cos(p w): its share is |sin(1)| here too
    assert r["per_pair_sin"][0] == pytest.approx(abs(math.sin(1)), abs=1e-3)
    assert r["missing_term"][0] == pytest.approx(abs(math.sin(1)), rel=1e-14)
    assert r["residual_sin"] > 0.3 and max(r["per_pair_sin"]) > 0.8 and max(r["per_pair_both"]) < 1e-12
    ex = r["example"]
    assert ex["sin_p"] == pytest.approx(math.sin(ex["p"])) and ex["later_q"] == pytest.approx(math.sin(ex["q"] + 1))
    assert abs(ex["sin_p"] - ex["sin_q"]) < 0.01 and abs(ex["later_p"] - ex["later_q"]) > 1


def test_base_context_by_hand():
    b = d("pe_base_context")
    D, T = 128, 1024
    for row in b["rows"]:
        base = row["base"]
        assert row["longest"] == pytest.approx(2 * math.pi * base ** ((D - 2) / D), rel=1e-12)
        lams = [2 * math.pi * base ** (2 * i / D) for i in range(D // 2)]
        assert row["n_longer_than_context"] == sum(lam > T for lam in lams)
        assert row["n_wrapping"] == sum(lam <= T for lam in lams)
        assert row["n_nearly_still"] == sum((T - 1) * base ** (-2 * i / D) < 0.5 for i in range(D // 2))
        for k in (0, 1, 17, 600):
            sim = sum(math.cos(k * base ** (-2 * i / D)) for i in range(D // 2)) / (D // 2)
            assert row["similarity"][k] == pytest.approx(sim, abs=1e-12)
        # |PE(p+1) - PE(p)|^2 = sum_i |e^(i w) - 1|^2 = sum_i 2 (1 - cos w_i), the same for every p
        step = math.sqrt(sum(2 * (1 - math.cos(base ** (-2 * i / D))) for i in range(D // 2)))
        assert row["nearest_neighbours"] == pytest.approx(step, rel=1e-12)
        assert row["nearest"] == pytest.approx(step, rel=1e-9)  # no two positions closer than neighbours
        # first distance with similarity <= 0, by a direct search
        first = next((k for k in range(T) if sum(math.cos(k * base ** (-2 * i / D)) for i in range(D // 2)) <= 0), None)
        assert row["first_zero"] == first
    small, usual, large = b["rows"]
    assert 10 < small["first_zero"] < 100 and usual["first_zero"] is None
    assert small["n_longer_than_context"] == 0 and small["longest"] < T  # base 100: every pair wraps
    assert small["n_wrapping"] == b["n_pairs"] == 64 and [r["base"] for r in b["rows"]] == [100, 10000, 1e6]
    assert b["d_model"] == D and b["context"] == T and b["still_angle"] == 0.5
    assert usual["n_longer_than_context"] == 28 and usual["n_nearly_still"] == 11
    assert large["n_nearly_still"] == 28
    assert abs(small["tail_mean"]) < 0.02 < usual["tail_mean"] < large["tail_mean"]


def test_four_terms_by_hand():
    f = d("pe_four_terms")
    T, D, dh = 8, 16, 8
    assert (f["T"], f["d_model"], f["d_head"], f["seed"]) == (T, D, dh, 0)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((T, D))
    W_Q = rng.standard_normal((D, dh)) / math.sqrt(D)
    W_K = rng.standard_normal((D, dh)) / math.sqrt(D)
    P = np.array([[math.sin(p * 10000 ** (-(c - c % 2) / D)) if c % 2 == 0 else math.cos(p * 10000 ** (-(c - c % 2) / D))
                   for c in range(D)] for p in range(T)])
    np.testing.assert_allclose(f["P"], P, atol=1e-15)
    np.testing.assert_array_equal(f["X"], X)
    Q, K = np.einsum("td,dh->th", X, W_Q), np.einsum("td,dh->th", X, W_K)
    Qp, Kp = np.einsum("td,dh->th", P, W_Q), np.einsum("td,dh->th", P, W_K)
    np.testing.assert_allclose(f["content_content"], Q @ K.T, atol=1e-12)
    np.testing.assert_allclose(f["content_position"], Q @ Kp.T, atol=1e-12)
    np.testing.assert_allclose(f["position_content"], Qp @ K.T, atol=1e-12)
    np.testing.assert_allclose(f["position_position"], Qp @ Kp.T, atol=1e-12)
    total = (X + P) @ W_Q @ ((X + P) @ W_K).T
    # the expansion is exact algebra: the four terms add up to the score, up to float64 rounding
    summed = f["content_content"] + f["content_position"] + f["position_content"] + f["position_position"]
    np.testing.assert_allclose(summed, total, rtol=0, atol=1e-13 * np.abs(total).max())
    np.testing.assert_allclose(f["total"], total, atol=1e-13)
    assert f["max_sum_error"] < 1e-13 * np.abs(total).max()
    # with A = I the position term would be PE(i).PE(j), a function of j - i; a random A breaks that
    assert f["pe_gram_diagonal_spread"] < 1e-12 < 1 < f["pp_diagonal_spread"]
    pc = f["position_content"]
    col = pc.mean(axis=0)
    assert f["position_content_key_share"] == pytest.approx(((col - pc.mean()) ** 2).mean() / pc.var())
    assert f["position_content_key_share"] > 0.8
