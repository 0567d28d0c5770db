"""Exact attention in tiles (the online softmax) against the full computation and torch; its
trace and memory; the FLOP and memory-traffic counts of the FlashAttention page."""
import numpy as np
import pytest

import mhalib as m
from mhalib.torch_ref import torch_sdpa

TOL = dict(rtol=0, atol=1e-12)


def _qkv(seed, lead, T, S, d=8, d_v=5):
    rng = np.random.default_rng(seed)
    return rng.normal(size=lead + (T, d)), rng.normal(size=lead + (S, d)), rng.normal(size=lead + (S, d_v))


BLOCKS = [pytest.param(1, 1, id="blocks=1"), pytest.param(8, 4, id="divisors"), pytest.param(5, 7, id="non-divisors"),
          pytest.param(24, 40, id="equal-to-T-and-S"), pytest.param(100, 64, id="larger-than-T-and-S"),
          pytest.param(3, 40, id="one-key-block"), pytest.param(64, 3, id="one-query-block")]
SHAPES = [pytest.param((), 24, 24, id="T=S"), pytest.param((), 24, 40, id="T<S"), pytest.param((), 40, 24, id="T>S"),
          pytest.param((2, 3), 24, 40, id="batch-heads-T<S")]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("lead,T,S", SHAPES)
@pytest.mark.parametrize("block_q,block_k", BLOCKS)
def test_tiled_equals_scaled_dot_product_attention(block_q, block_k, lead, T, S, causal):
    q, k, v = _qkv(T + S, lead, T, S)
    expected, _ = m.scaled_dot_product_attention(q, k, v, causal=causal)
    out = m.tiled_attention(q, k, v, block_q=block_q, block_k=block_k, causal=causal)
    assert out.shape == lead + (T, 5)
    np.testing.assert_allclose(out, expected, **TOL)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_tiled_matches_torch(causal):
    q, k, v = _qkv(1, (2, 4), 33, 47, d=16, d_v=16)
    out = m.tiled_attention(q, k, v, block_q=8, block_k=16, causal=causal, scale=0.3)
    np.testing.assert_allclose(out, torch_sdpa(q, k, v, causal=causal, scale=0.3), **TOL)


def test_leading_axes_broadcast_as_in_scaled_dot_product_attention():
    rng = np.random.default_rng(2)
    q = rng.normal(size=(2, 3, 10, 4))  # (B, H, T, d)
    k, v = rng.normal(size=(1, 3, 12, 4)), rng.normal(size=(2, 1, 12, 6))  # K per head, V per batch
    expected, _ = m.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(m.tiled_attention(q, k, v, block_q=4, block_k=5), expected, **TOL)


def _full_scores(q, k, causal):
    s = m.attention_scores(q, k)  # (..., T, S)
    if causal:
        s = np.where(m.causal_mask(q.shape[-2], k.shape[-2]), s, -np.inf)
    return s


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_trace_ends_at_the_exact_softmax_statistics_and_output(causal):
    q, k, v = _qkv(3, (2,), 20, 30)
    out, tr = m.tiled_attention(q, k, v, block_q=6, block_k=7, causal=causal, trace=True)
    assert tr["key_blocks"] == [(0, 7), (7, 14), (14, 21), (21, 28), (28, 30)]
    assert len(tr["m"]) == len(tr["l"]) == len(tr["o"]) == 5
    s = _full_scores(q, k, causal)
    row_max = s.max(axis=-1)  # (..., T)
    np.testing.assert_allclose(tr["m"][-1], row_max, **TOL)
    np.testing.assert_allclose(tr["l"][-1], np.exp(s - row_max[..., None]).sum(axis=-1), **TOL)
    expected, _ = m.scaled_dot_product_attention(q, k, v, causal=causal)
    np.testing.assert_allclose(tr["o"][-1], expected, **TOL)
    np.testing.assert_array_equal(tr["o"][-1], out)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_trace_after_each_key_block_is_attention_over_the_keys_seen_so_far(causal):
    """The normalised running output o after key block j is exact attention over keys [0, stop_j)."""
    q, k, v = _qkv(4, (), 12, 12)
    _, tr = m.tiled_attention(q, k, v, block_q=5, block_k=4, causal=causal, trace=True)
    for (_, stop), m_j, l_j, o_j in zip(tr["key_blocks"], tr["m"], tr["l"], tr["o"]):
        s = _full_scores(q, k, causal)[:, :stop]
        seen = np.isfinite(s).any(axis=-1)  # rows with at least one allowed key so far
        assert np.array_equal(np.isfinite(m_j), seen) and np.all(l_j[~seen] == 0) and np.all(o_j[~seen] == 0)
        np.testing.assert_allclose(m_j[seen], s[seen].max(axis=-1), **TOL)
        mask = m.causal_mask(12, 12)[:, :stop] if causal else None
        partial, _ = m.scaled_dot_product_attention(q, k[:stop], v[:stop], mask=mask)
        np.testing.assert_allclose(o_j, partial, **TOL)


def test_rows_with_no_key_in_a_tile_give_no_nan():
    """Causal, with query blocks taller than key blocks: in the tile on the diagonal, the
    first rows see none of the tile's keys (and the tiles above the diagonal are skipped)."""
    q, k, v = _qkv(5, (), 16, 16)
    out, tr = m.tiled_attention(q, k, v, block_q=8, block_k=2, causal=True, trace=True)
    assert not any(np.isnan(a).any() for a in [out, *tr["m"], *tr["l"], *tr["o"]])
    np.testing.assert_allclose(out, m.scaled_dot_product_attention(q, k, v, causal=True)[0], **TOL)
    # key block (14, 16) holds no key for rows 8..13 (they see keys j <= i): their state is unchanged
    assert tr["key_blocks"][-1] == (14, 16)
    for state in ("m", "l", "o"):
        np.testing.assert_array_equal(tr[state][-1][8:14], tr[state][-2][8:14])


def test_no_keys_give_zero_output_and_no_queries_an_empty_one():
    q, k, v = np.ones((3, 4)), np.ones((0, 4)), np.ones((0, 2))
    out = m.tiled_attention(q, k, v)
    assert np.array_equal(out, np.zeros((3, 2))) and np.array_equal(out, m.scaled_dot_product_attention(q, k, v)[0])
    assert m.tiled_attention(np.ones((0, 4)), np.ones((5, 4)), np.ones((5, 2))).shape == (0, 2)


def test_hand_example_of_the_docstring():
    x = np.eye(2)
    out, tr = m.tiled_attention(x, x, x, block_k=1, scale=1.0, trace=True)
    e = np.exp(-1.0)
    assert tr["m"][0][0] == 1.0 and tr["l"][0][0] == 1.0 and np.array_equal(tr["o"][0][0], [1.0, 0.0])
    assert tr["l"][1][0] == pytest.approx(1 + e, abs=1e-15)
    np.testing.assert_allclose(out[0], [1 / (1 + e), e / (1 + e)], atol=1e-15)


def test_largest_array_grows_with_T_times_d_and_the_tiles_not_with_T_times_S():
    d, block = 16, 32
    sizes = {}
    for T in (512, 1024):
        q, k, v = _qkv(T, (), T, T, d=d, d_v=d)
        out, tr = m.tiled_attention(q, k, v, block_q=block, block_k=block, trace=True)
        np.testing.assert_allclose(out, m.scaled_dot_product_attention(q, k, v)[0], **TOL)
        sizes[T] = tr["largest_array_elements"], tr["largest_tile_elements"]
    (big_512, tile_512), (big_1024, tile_1024) = sizes[512], sizes[1024]
    assert tile_512 == tile_1024 == block * block  # doubling T leaves the tile unchanged
    assert big_512 <= 512 * 512 / 16  # far below the T x S = 262,144 scores
    assert big_512 == max(512 * d, block * block)  # the output (T, d) or a tile, whichever is larger
    assert big_1024 == 2 * big_512  # linear in T; the score matrix would quadruple


@pytest.mark.parametrize("kw,words", [
    pytest.param(dict(block_q=0), ["block_q", ">= 1", "0"], id="block_q=0"),
    pytest.param(dict(block_k=-4), ["block_k", ">= 1", "-4"], id="block_k-negative"),
    pytest.param(dict(block_q=2.5), ["block_q", "integer", "2.5"], id="block_q-float"),
    pytest.param(dict(block_k="8"), ["block_k", "integer"], id="block_k-string"),
    pytest.param(dict(block_k=True), ["block_k", "integer"], id="block_k-bool"),
])
def test_bad_blocks_are_refused_naming_the_block(kw, words):
    x = np.ones((4, 2))
    with pytest.raises((TypeError, ValueError)) as info:
        m.tiled_attention(x, x, x, **kw)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_scores_beyond_the_float_range_are_refused_not_mangled():
    q, k = np.array([[1e200]]), np.array([[1e200], [-1e200]])
    with pytest.raises(ValueError, match="overflow in the scores"):
        m.tiled_attention(q, k, np.ones((2, 1)), scale=1.0)


def test_float32_stays_float32():
    q, k, v = (a.astype(np.float32) for a in _qkv(6, (), 10, 10))
    out = m.tiled_attention(q, k, v, block_q=3, block_k=4)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, m.scaled_dot_product_attention(q, k, v)[0], rtol=1e-5, atol=1e-6)


# ---- counts: FLOPs and memory traffic ----------------------------------------------------------

@pytest.mark.parametrize("call,expected", [
    pytest.param(lambda: m.attention_flops(1024, 1024, 64), 4 * 1024 * 1024 * 64, id="T=S=1024-d=64"),
    pytest.param(lambda: m.attention_flops(1024, 1024, 64), 268_435_456, id="worked-value"),
    pytest.param(lambda: m.attention_flops(1024, 1024, 64, causal=True), 134_217_728, id="causal-halves"),
    pytest.param(lambda: m.attention_flops(1, 4096, 128, n_heads=32, batch=8), 4 * 4096 * 128 * 32 * 8, id="decode-step"),
    pytest.param(lambda: m.attention_flops(3, 5, 2), 2 * (3 * 5 * 2) * 2, id="two-products-of-TSd-multiply-adds"),
])
def test_attention_flops(call, expected):
    assert call() == expected


@pytest.mark.parametrize("call,expected", [
    # naive: Q, K, V in (3Td), S written + read (2T^2), P written + read (2T^2), O out (Td)
    pytest.param(lambda: m.attention_hbm_bytes(4, 2, method="naive", dtype="float32"), (3 * 8 + 2 * 16 + 2 * 16 + 8) * 4, id="naive-T=4-d=2"),
    pytest.param(lambda: m.attention_hbm_bytes(4096, 64, method="naive"), 136_314_880, id="naive-worked-value"),
    # tiled: Q in and O out once (2Td), K and V once per query block (2Td * ceil(T/block))
    pytest.param(lambda: m.attention_hbm_bytes(4096, 64, method="tiled", block=128), 34_603_008, id="tiled-worked-value"),
    pytest.param(lambda: m.attention_hbm_bytes(10, 2, method="tiled", block=4, dtype="float32"), (2 * 20 + 2 * 20 * 3) * 4, id="tiled-non-divisor-block"),
    pytest.param(lambda: m.attention_hbm_bytes(10, 2, method="tiled", block=10, dtype="float32"), 4 * 20 * 4, id="tiled-one-block-reads-all-once"),
    # sram_bytes: block = M // (4 d bytes); 100 KiB fp16 with d = 128: 102400 // 1024 = 100 rows
    pytest.param(lambda: m.attention_hbm_bytes(1000, 128, method="tiled", sram_bytes=100 * 1024),
                 1000 * 128 * (2 + 2 * 10) * 2, id="tiled-block-from-sram"),
    # flash1 (Algorithm 1): init O, l, m (T d + 2 T), K and V once (2 T d), per key block Q, O, l, m in and O, l, m out
    pytest.param(lambda: m.attention_hbm_bytes(10, 2, method="flash1", block=4, dtype="float32"),
                 (20 + 20 + 40 + 3 * (60 + 40)) * 4, id="flash1-non-divisor-block"),
    pytest.param(lambda: m.attention_hbm_bytes(4096, 64, method="flash1", sram_bytes=228 * 1024, dtype="bfloat16"),
                 (3 * 4096 * 64 + 2 * 4096 + 9 * (3 * 4096 * 64 + 4 * 4096)) * 2, id="flash1-h100-rule-B_c=456"),
    pytest.param(lambda: m.attention_hbm_bytes(8, 4, method="naive", n_heads=3, batch=2), 6 * (4 * 32 + 4 * 64) * 2, id="heads-and-batch"),
])
def test_attention_hbm_bytes(call, expected):
    assert call() == expected


def test_tiled_traffic_saves_about_2_block_over_d():
    """naive / tiled = (4 T d + 4 T^2) / (T d (2 + 2 T / block)) -> 2 block / d for long T."""
    T, d = 65536, 64
    naive = m.attention_hbm_bytes(T, d, method="naive")
    assert naive / m.attention_hbm_bytes(T, d, method="tiled", block=128) == pytest.approx(2 * 128 / d, rel=0.01)
    assert m.attention_hbm_bytes(T, d, method="tiled", block=1) > naive  # one-row blocks re-read K, V T times


# --- causal block skipping -------------------------------------------------------------------------

def _tiles_by_brute_force(T, S, block_q, block_k, causal):
    """Each (query block, key block) tile classified by looking at every entry of the boolean mask:
    skipped if no entry is allowed, partial if some but not all are, full if all are."""
    allowed = np.tril(np.ones((T, S), bool)) if causal else np.ones((T, S), bool)  # (T, S), top-left
    counts = dict(total=0, visited=0, skipped=0, partial=0, full=0)
    computed = 0
    for i0 in range(0, T, block_q):
        for j0 in range(0, S, block_k):
            tile = allowed[i0:i0 + block_q, j0:j0 + block_k]
            counts["total"] += 1
            if not tile.any():
                counts["skipped"] += 1
                continue
            counts["visited"] += 1
            computed += tile.size
            counts["partial" if not tile.all() else "full"] += 1
    return counts, computed / (T * S), allowed.sum() / (T * S)


@pytest.mark.parametrize("T,S", [(1, 1), (10, 10), (37, 37), (24, 40), (40, 24), (5, 9), (64, 64)])
@pytest.mark.parametrize("block_q,block_k", [(1, 1), (4, 4), (8, 4), (4, 8), (5, 7), (16, 16), (100, 3)])
@pytest.mark.parametrize("causal", [True, False], ids=["causal", "full"])
def test_causal_tile_counts_match_the_mask_tile_by_tile(T, S, block_q, block_k, causal):
    counts, computed, allowed = _tiles_by_brute_force(T, S, block_q, block_k, causal)
    got = m.causal_tile_counts(T, block_q, block_k, S=S, causal=causal)
    assert {key: got[key] for key in counts} == counts
    assert got["computed_share"] == pytest.approx(computed, abs=1e-15)
    assert got["allowed_share"] == pytest.approx(allowed, abs=1e-15)


def test_causal_tile_counts_worked_examples():
    """The docstring's T = 10 with blocks of 4 (counted by hand: 1 + 2 + 3 tiles visited, the 3
    on the diagonal partial), and n square blocks a side: n (n + 1) / 2 visited, the n on the
    diagonal partial (unless a block is one entry, which the mask allows)."""
    assert m.causal_tile_counts(10, 4, 4) == dict(total=9, visited=6, skipped=3, partial=3, full=3,
                                                   computed_share=(4 * 4 + 4 * 8 + 2 * 10) / 100,
                                                   allowed_share=55 / 100)
    for n, b in ((64, 128), (3, 1), (8, 16)):
        c = m.causal_tile_counts(n * b, b, b)
        assert (c["total"], c["visited"], c["partial"]) == (n * n, n * (n + 1) // 2, n if b > 1 else 0)
        assert c["computed_share"] == pytest.approx((n + 1) / (2 * n))


@pytest.mark.parametrize("T,S,block_q,block_k", [(24, 24, 8, 4), (24, 40, 5, 7), (40, 24, 8, 16), (33, 33, 1, 1),
                                                 (24, 24, 100, 64)])
def test_tiled_attention_visits_only_the_tiles_with_an_allowed_key(T, S, block_q, block_k):
    """The tiles tiled_attention computes, counted in its trace, are those the mask says hold an
    allowed entry (counted here entry by entry); without causal it visits every tile."""
    q, k, v = _qkv(3, (2,), T, S)
    for causal in (True, False):
        counts, _, _ = _tiles_by_brute_force(T, S, block_q, block_k, causal)
        _, tr = m.tiled_attention(q, k, v, block_q=block_q, block_k=block_k, causal=causal, trace=True)
        assert (tr["tiles_visited"], tr["tiles_masked"]) == (counts["visited"], counts["partial"])


@pytest.mark.parametrize("kw,words", [(dict(T=0, block_q=4, block_k=4), "T"), (dict(T=8, block_q=0, block_k=4), "block_q"),
                                      (dict(T=8, block_q=4, block_k=2.5), "block_k"),
                                      (dict(T=8, block_q=4, block_k=4, S=-1), "S"),
                                      (dict(T=8, block_q=4, block_k=4, causal="yes"), "causal")])
def test_causal_tile_counts_refuses_bad_input_naming_it(kw, words):
    with pytest.raises((ValueError, TypeError), match=words):
        m.causal_tile_counts(**kw)
