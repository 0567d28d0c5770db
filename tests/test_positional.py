"""Sinusoidal PE, RoPE, ALiBi and learned positions, against closed forms."""
import math

import numpy as np
import pytest

import mhalib as m


@pytest.mark.parametrize("p", range(3), ids=lambda p: f"position={p}")
def test_sinusoidal_formula_by_hand(p):
    # d=4: pairs (0,1) with frequency 1 and (2,3) with 10000^(-2/4) = 1/100
    pe = m.sinusoidal_encoding(3, 4)
    np.testing.assert_allclose(pe[p], [math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)], atol=1e-15)


def test_sinusoidal_frequencies_by_hand():
    np.testing.assert_allclose(m.sinusoidal_frequencies(4), [1.0, 0.01], rtol=1e-15)
    assert m.DEFAULT_BASE == 10000.0


def test_sinusoidal_bounded_and_distinct():
    pe = m.sinusoidal_encoding(10_000, 512)
    assert pe.min() >= -1.0 and pe.max() <= 1.0
    assert np.unique(pe, axis=0).shape[0] == 10_000
    # distinct by a margin, not by rounding noise: nearest pair of rows
    sq = (pe**2).sum(1)
    gram = pe[:2000] @ pe.T
    dist2 = sq[:2000, None] + sq[None, :] - 2 * gram
    dist2[np.arange(2000), np.arange(2000)] = np.inf
    assert dist2.min() > 1e-3


def test_wavelength_table_d512():
    dims = np.arange(0, 512, 64)
    lam = m.wavelengths(512)[dims // 2]
    np.testing.assert_allclose(lam, 2 * math.pi * 10000 ** (dims / 512), rtol=1e-13)
    # by hand: 10000^(64/512) = 10^(4/8) = sqrt(10), so the wavelength at dim 64 is 2 pi sqrt(10)
    assert lam[1] == pytest.approx(2 * math.pi * math.sqrt(10), rel=1e-13)
    assert lam[1] == pytest.approx(19.87, abs=0.005)
    # The circulating table (1.00, 3.98, 15.85, ...) is 10^(0.6 k): neither 10000^(i/512)
    # (which its own code computes) nor the wavelength. Its last row exceeds 10000, which
    # 10000^(i/512) with i < 512 can never reach.
    misprinted = np.array([1.00, 3.98, 15.85, 63.10, 251.19, 1000.00, 3981.07, 15848.93])
    np.testing.assert_allclose(misprinted, 10 ** (0.6 * np.arange(8)), rtol=1e-3)
    assert misprinted[-1] > 10000 > (10000 ** (dims / 512)).max()
    assert np.all(np.abs(misprinted[1:] - lam[1:]) / lam[1:] > 0.2)


@pytest.mark.parametrize("k", [1, 5, 37, -3], ids=lambda k: f"k={k}")
def test_offset_matrix_shifts_positions(k):
    D = 64
    pe = m.sinusoidal_encoding(200, D)
    M = m.offset_matrix(k, D)
    p = np.arange(10, 150)
    np.testing.assert_allclose(pe[p] @ M.T, pe[p + k], atol=1e-12)
    np.testing.assert_allclose(M @ M.T, np.eye(D), atol=1e-13)


@pytest.mark.parametrize("p,q", [(0, 7), (100, 107), (250, 243)], ids=lambda v: str(v))
def test_pe_dot_product_depends_on_distance_only(p, q):
    pe = m.sinusoidal_encoding(300, 128)
    omega = m.sinusoidal_frequencies(128)
    # PE(p).PE(q) = sum_i cos((p-q) omega_i), and |p - q| = 7 in every case
    np.testing.assert_allclose(pe[p] @ pe[q], np.cos(7 * omega).sum(), atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_keeps_norms_and_position_0(layout):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 6, 8))
    r = m.apply_rope(x, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(r, axis=-1), np.linalg.norm(x, axis=-1), atol=1e-13)
    np.testing.assert_allclose(r[:, 0], x[:, 0], atol=0)


def _rot_by_hand(v, pos, theta):
    """Interleaved RoPE written out plane by plane with 2x2 matrices."""
    out = np.empty_like(v)
    for i, t in enumerate(theta):
        c, s = math.cos(pos * t), math.sin(pos * t)
        out[2 * i] = c * v[2 * i] - s * v[2 * i + 1]
        out[2 * i + 1] = s * v[2 * i] + c * v[2 * i + 1]
    return out


@pytest.mark.parametrize("p", range(4), ids=lambda p: f"position={p}")
def test_rope_matches_hand_rotation(p):
    rng = np.random.default_rng(1)
    v = rng.normal(size=6)
    theta = [10000 ** (-2 * i / 6) for i in range(3)]
    got = m.apply_rope(np.tile(v, (4, 1)))
    np.testing.assert_allclose(got[p], _rot_by_hand(v, p, theta), atol=1e-14)


def _rope_score(q, k, mq, nk):
    """RoPE score of query q at position mq against key k at position nk."""
    return m.apply_rope(q[None], np.array([mq]))[0] @ m.apply_rope(k[None], np.array([nk]))[0]


@pytest.mark.parametrize("mq,nk", [(0, 3), (10, 13), (57, 60)], ids=lambda v: str(v))
def test_rope_score_depends_on_the_offset_only(mq, nk):
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=8), rng.normal(size=8)
    # q^T R(n - m) k: rotate k by the signed offset n - m
    expected = q @ m.apply_rope(k[None], np.array([nk - mq]))[0]
    assert _rope_score(q, k, mq, nk) == pytest.approx(expected, abs=1e-12)


def test_rope_score_depends_on_the_sign_of_the_offset():
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=8), rng.normal(size=8)
    # offset +3 and -3 give different scores for generic q, k
    assert abs(_rope_score(q, k, 0, 3) - _rope_score(q, k, 3, 0)) > 1e-3


@pytest.mark.parametrize("p", m.examples.rope_demo()["positions"].tolist(), ids=lambda p: f"position={p}")
def test_rope_2d_demo_matches_rotation_matrix(p):
    demo = m.examples.rope_demo()
    q, theta = demo["q"], demo["theta"]
    # with d = 2 the only plane has theta_0 = base^0 = 1, so position p * theta turns by p * theta
    rotated = m.apply_rope(q[None], np.array([p * theta]))[0]
    a = p * theta
    by_hand = [math.cos(a) * q[0] - math.sin(a) * q[1], math.sin(a) * q[0] + math.cos(a) * q[1]]
    np.testing.assert_allclose(rotated, by_hand, atol=1e-15)
    np.testing.assert_allclose(m.rotation_matrix(a) @ q, by_hand, atol=1e-15)


def test_rope_layouts_agree_after_permutation():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 12))
    perm = m.layout_permutation(12)
    assert perm.tolist() == [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]
    np.testing.assert_allclose(m.apply_rope(x[:, perm], layout="half"), m.apply_rope(x, layout="interleaved")[:, perm], atol=1e-14)


def test_mixing_layouts_breaks_relative_property():
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=8), rng.normal(size=8)

    def score(mq, nk, lq, lk):
        return m.apply_rope(q[None], np.array([mq]), layout=lq)[0] @ m.apply_rope(k[None], np.array([nk]), layout=lk)[0]

    same = [score(p, p + 2, "interleaved", "interleaved") for p in range(0, 40, 7)]
    mixed = [score(p, p + 2, "interleaved", "half") for p in range(0, 40, 7)]
    assert np.ptp(same) < 1e-12
    assert np.ptp(mixed) > 0.1


@pytest.mark.parametrize("n_heads,expected", [
    pytest.param(8, [2.0**-h for h in range(1, 9)], id="8-heads"),
    # 12 heads: the 8 slopes of 8 heads, then every other slope of 16 heads
    pytest.param(12, [2.0**-h for h in range(1, 9)] + [2.0**-(h + 0.5) for h in range(0, 4)], id="12-heads"),
    pytest.param(1, [2.0**-8], id="1-head"),
])
def test_alibi_slopes(n_heads, expected):
    np.testing.assert_allclose(m.alibi_slopes(n_heads), expected, rtol=1e-15)


def _recipe_exponents(H: int) -> list:
    """The ALiBi recipe's exponents e_h (m_h = 2^-e_h) as exact fractions: 8h/n, h = 1..n, for
    the largest power of two n <= H, then every other one of 2n (h = 1, 3, 5, ...)."""
    from fractions import Fraction

    n = 1
    while 2 * n <= H:
        n *= 2
    return [Fraction(8 * h, n) for h in range(1, n + 1)] + [Fraction(8 * h, 2 * n) for h in range(1, 2 * n, 2)][: H - n]


def test_alibi_slopes_of_more_heads_than_fit_are_refused_at_once():
    """alibi_slopes(2**49 - 1) ran for hours: float64's log2 rounds it up to 49, so the largest
    power of two "below" H was 2**49 > H, and 5.6e14 slopes were built before any check (pass
    thirty-four). The power of two is found exactly, and the size is refused first."""
    import time

    started = time.monotonic()
    with pytest.raises(ValueError, match=r"alibi_slopes' 562,949,953,421,311 slopes needs"):
        m.alibi_slopes(2**49 - 1)
    assert time.monotonic() - started < 5
    slopes = m.alibi_slopes(2**12 - 1)  # by the recipe: 2**11 slopes of 2**11 heads, then every other of 2**12
    assert len(slopes) == 2**12 - 1 and slopes[0] == 2.0 ** -(8 / 2**11) and slopes[2**11] == 2.0 ** -(8 / 2**12)


def test_alibi_slopes_are_the_recipes_powers_of_two_to_the_last_bit():
    """2^-1 at 16 heads was 0.5000000000000001 (the slope table then wrote "2^-1 ≈ 0.5"), and
    255 heads drifted 50 ulp: a whole power of two is exact, every other slope within one ulp
    of 2^-e at 50 digits."""
    import mpmath

    mpmath.mp.dps = 50
    for H in (*range(1, 70), 127, 128, 255, 256, 1000, 1024):
        got = m.alibi_slopes(H)
        for h, (slope, e) in enumerate(zip(got, _recipe_exponents(H), strict=True)):
            if e.denominator == 1:
                assert slope == 2.0 ** -int(e), (H, h, slope, e)
            else:
                true = mpmath.power(2, -mpmath.mpf(e.numerator) / e.denominator)
                assert abs(mpmath.mpf(float(slope)) - true) <= np.spacing(float(true)), (H, h, slope, e)


T_ALIBI, H_ALIBI = 6, 4
I, J = np.arange(T_ALIBI)[:, None], np.arange(T_ALIBI)[None, :]


@pytest.mark.parametrize("h", range(H_ALIBI), ids=lambda h: f"head={h}")
def test_alibi_relative_bias_by_hand(h):
    rel = m.alibi_bias(T_ALIBI, H_ALIBI)
    slope = m.alibi_slopes(H_ALIBI)[h]
    np.testing.assert_allclose(rel[h][J <= I], (-slope * (I - J))[J <= I], atol=0)
    assert np.all(np.isneginf(rel[h][~(J <= I)]))


def test_alibi_bias_forms_give_same_causal_attention():
    rel = m.alibi_bias(T_ALIBI, H_ALIBI)
    const = m.alibi_bias(T_ALIBI, H_ALIBI, form="row_constant")
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=(H_ALIBI, T_ALIBI, 4)), rng.normal(size=(H_ALIBI, T_ALIBI, 4))
    v = rng.normal(size=(H_ALIBI, T_ALIBI, 3))
    out_a, w_a = m.scaled_dot_product_attention(q, k, v, bias=rel)
    out_b, w_b = m.scaled_dot_product_attention(q, k, v, bias=const)
    np.testing.assert_allclose(w_a, w_b, atol=1e-14)
    np.testing.assert_allclose(out_a, out_b, atol=1e-14)


def test_alibi_symmetric_bias_by_hand():
    sym = m.alibi_bias(T_ALIBI, H_ALIBI, causal=False)
    np.testing.assert_allclose(sym[1], -m.alibi_slopes(H_ALIBI)[1] * np.abs(I - J), atol=0)


def test_learned_table_is_seeded():
    a = m.learned_position_table(16, 8, seed=1)
    assert a.shape == (16, 8)
    assert np.array_equal(a, m.learned_position_table(16, 8, seed=1))
    assert not np.array_equal(a, m.learned_position_table(16, 8, seed=2))


def test_learned_table_has_no_row_past_max_positions():
    a = m.learned_position_table(16, 8, seed=1)
    assert np.array_equal(m.lookup_positions(a, 4, start=12), a[12:16])
    with pytest.raises(ValueError, match="max_positions=16"):
        m.lookup_positions(a, 5, start=12)
