"""The page "Cross-attention and the encoder–decoder": its worked example, the three masks, the
cached decoding and the bytes of its caches, and the page's sentences about them.

Expected values come from elsewhere than the code under test: the masks and the attention of
the example are written out here with loops over heads (a head is a block of columns, a
blocked key gets exp(-inf) = 0), the cache sizes by hand arithmetic. Each claim test finds its
sentence on the page, so editing the sentence or the data fails it until the claim is checked
again. (mhalib's cross-attention against torch.nn.MultiheadAttention with kdim and vdim of
their own and a key_padding_mask: tests/test_mha.py.)
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import figures
from mhalib import examples
from helpers import ROOT, page_text

PAGE = (ROOT / "docs" / "cross_attention.md").read_text(encoding="utf-8")


def d(name: str, **params) -> dict:
    return figures.load(name).data(**params)


def on_page(*phrases: str) -> None:
    flat = re.sub(r"\s+", " ", PAGE)
    for phrase in phrases:
        assert phrase in flat, f"docs/cross_attention.md no longer says {phrase!r}: check the claim again"


def attend(x_q, x_kv, weights, allowed, H):
    """Multi-head attention of one sequence, written out: head h owns columns h*d..(h+1)*d-1 of
    every projection; ``allowed (T, S)``. Returns the output (T, D) and the weights (H, T, S)."""
    w_q, w_k, w_v, w_o = weights
    q, k, v = x_q @ w_q, x_kv @ w_k, x_kv @ w_v
    d_head = q.shape[1] // H
    T, S = q.shape[0], k.shape[0]
    heads, A = np.zeros((T, H * d_head)), np.zeros((H, T, S))
    for h in range(H):
        cols = slice(h * d_head, (h + 1) * d_head)
        for i in range(T):
            scores = np.array([q[i, cols] @ k[j, cols] / math.sqrt(d_head) if allowed[i, j] else -np.inf
                               for j in range(S)])
            e = np.exp(scores - scores.max())
            A[h, i] = e / e.sum()
            heads[i, cols] = A[h, i] @ v[:, cols]
    return heads @ w_o, A


def by_hand(ex, *, cross_mask=True):
    """The example's encoder, decoder self-attention and cross-attention, by the loops above."""
    S, T, H = len(ex["source"]), len(ex["target"]), ex["n_heads"]
    n = int(ex["src_lengths"][0])
    real = np.array([[j < n for j in range(S)] for _ in range(max(S, T))])
    memory, enc = attend(ex["X_src"][0], ex["X_src"][0], ex["enc"], real[:S], H)
    causal = np.array([[j <= i for j in range(T)] for i in range(T)])
    self_out, dec = attend(ex["X_tgt"][0], ex["X_tgt"][0], ex["dec"], causal, H)
    h = ex["X_tgt"][0] + self_out
    out, cross = attend(h, memory, ex["cross"], real[:T] if cross_mask else np.ones((T, S), bool), H)
    return dict(memory=memory, enc=enc, dec=dec, cross=cross, out=out, real=real, causal=causal)


# ---- the worked example ------------------------------------------------------------------------

def test_the_example_has_the_pages_shapes():
    ex = examples.translation_pair()
    assert ex["source"] == ["the", "cat", "sleeps", "<pad>", "<pad>"] and ex["target"] == ["<s>", "le", "chat", "dort"]
    assert ex["X_src"].shape == (1, 5, 8) and ex["X_tgt"].shape == (1, 4, 8) and ex["n_heads"] == 2
    assert ex["src_lengths"].tolist() == [3]
    np.testing.assert_array_equal(ex["X_src"][0, 3], ex["X_src"][0, 4])  # one padding token
    assert not np.array_equal(examples.translation_pair(1)["X_src"], ex["X_src"])


@pytest.mark.parametrize("bad, exc, words", [
    (dict(X_src=1), TypeError, ["translation_pair", "X_tgt", "['X_src']"]),
    ([1, 2], TypeError, ["translation_pair", "list"]),
])
def test_encoder_decoder_attention_refuses_what_is_not_an_example(bad, exc, words):
    with pytest.raises(exc) as err:
        examples.encoder_decoder_attention(bad)
    for word in words:
        assert word in str(err.value)


def test_the_three_attentions_equal_the_loops():
    ex = examples.translation_pair()
    run = examples.encoder_decoder_attention(ex)
    hand = by_hand(ex)
    np.testing.assert_allclose(run["memory"][0], hand["memory"], rtol=0, atol=1e-13)
    np.testing.assert_allclose(run["enc_weights"][0], hand["enc"], rtol=0, atol=1e-14)
    np.testing.assert_allclose(run["dec_weights"][0], hand["dec"], rtol=0, atol=1e-14)
    np.testing.assert_allclose(run["cross_weights"][0], hand["cross"], rtol=0, atol=1e-14)
    np.testing.assert_allclose(run["out"][0], hand["out"], rtol=0, atol=1e-13)
    assert run["cross_weights"].shape == (1, 2, 4, 5)  # (B, H, T, S): T != S


def test_the_masks_by_hand():
    got = d("cross_attention_masks")
    hand = by_hand(examples.translation_pair())
    np.testing.assert_array_equal(got["masks"]["encoder"], hand["real"][:5])
    np.testing.assert_array_equal(got["masks"]["decoder"], hand["causal"])
    np.testing.assert_array_equal(got["masks"]["cross"], hand["real"][:4])
    assert (got["S"], got["T"], got["n_real"], got["n_pad"], got["d_model"], got["n_heads"]) == (5, 4, 3, 2, 8, 2)
    counts = {k: (c["allowed"], c["cells"]) for k, c in got["checks"].items()}
    assert counts == {"encoder": (5 * 3, 25), "decoder": (4 * 5 // 2, 16), "cross": (4 * 3, 20)}
    for c in got["checks"].values():
        assert c["zero_where_masked"] and c["positive_where_allowed"] and c["max_row_sum_error"] < 1e-15


def test_the_cross_weights_with_and_without_the_mask():
    got = d("cross_attention_weights")
    ex = examples.translation_pair()
    masked, unmasked = by_hand(ex)["cross"], by_hand(ex, cross_mask=False)["cross"]
    np.testing.assert_allclose(got["weights"], masked, rtol=0, atol=1e-14)
    np.testing.assert_allclose(got["weights_unmasked"], unmasked, rtol=0, atol=1e-14)
    assert got["pad_weight_masked"] == 0.0 and np.all(masked[:, :, 3:] == 0.0)
    on_pad = unmasked[:, :, 3:].sum(axis=-1)  # (H, T)
    np.testing.assert_allclose(got["pad_weight_unmasked"], on_pad, rtol=0, atol=1e-14)
    assert got["pad_weight_unmasked_min"] == pytest.approx(on_pad.min(), abs=1e-14)
    assert got["pad_weight_unmasked_max"] == pytest.approx(on_pad.max(), abs=1e-14)
    assert got["pads_weight_difference"] < 1e-15
    assert got["output_change"] == pytest.approx(np.abs(by_hand(ex, cross_mask=False)["out"] - by_hand(ex)["out"]).max())


# ---- the caches ----------------------------------------------------------------------------------

def test_cache_bytes_by_hand():
    got = d("cross_attention_cache")
    per_token = 2 * 8 * 64 * 2  # K and V, 8 heads of 64, 2 bytes (fp16), one layer
    assert got["per_token"] == per_token == 2048
    assert got["steps"] == list(range(1, 49))
    assert got["self_bytes"] == [t * per_token for t in range(1, 49)]
    assert got["cross_bytes"] == [32 * per_token] * 48
    assert got["cross_per_layer"] == 65_536 and got["self_at_max"] == 98_304 and got["total_at_max"] == 163_840
    assert got["decoder_only_at_max"] == (32 + 48) * per_token == got["total_at_max"]
    assert got["decoder_total_at_max"] == 6 * (32 + 48) * per_token == 983_040
    assert got["cross_total"] == 6 * 32 * per_token == 393_216
    assert got["kib"] == dict(per_token=2, cross_per_layer=64, self_at_max=96, total_at_max=160, cross_total=384,
                              decoder_total_at_max=960)
    # the self-attention cache catches up with the cross-attention cache when t = S, and passes it at S + 1
    assert got["self_bytes"].index(got["cross_per_layer"]) + 1 == got["equal_at_step"] == 32
    assert got["self_larger_from"] == 33 == 1 + next(i for i, b in enumerate(got["self_bytes"]) if b > 32 * per_token)
    assert (got["kv_rows_once"], got["kv_rows_every_step"]) == (32, 32 * 48)
    assert (got["n_heads"], got["d_head"], got["d_model"], got["n_layers"]) == (8, 64, 512, 6)


def test_decoding_with_both_caches_equals_the_full_pass_by_hand():
    ex = examples.translation_pair()
    dec = figures.load("cross_attention_cache").cached_decode(ex)
    np.testing.assert_allclose(dec["out"][0], by_hand(ex)["out"], rtol=0, atol=1e-13)
    assert dec["self_lengths"] == [1, 2, 3, 4] and dec["cross_lengths"] == [5, 5, 5, 5]
    # without the padding mask the decoded outputs would differ: the comparison can fail
    assert np.abs(dec["out"][0] - by_hand(ex, cross_mask=False)["out"]).max() > 0.1
    got = d("cross_attention_cache")["example"]
    assert got["self_lengths"] == "1, 2, 3, 4" and got["cross_lengths"] == "5, 5, 5, 5"
    assert got["max_difference"] < 1e-14 and (got["T"], got["S"]) == (4, 5)


# ---- the page's sentences --------------------------------------------------------------------------

def test_the_alt_texts_and_captions_say_what_the_data_say():
    """The alt texts' and captions' numbers are {{ value }}s: each is found on the page at its
    place, and the data it reads are held here to the example counted by hand (5 source tokens,
    2 of them padding, 4 target tokens; 8 heads of 64 in fp16 and a source of 32 tokens)."""
    def v(script, path, fmt=""):
        return "{{ value %s %s%s }}" % (script, path, " " + fmt if fmt else "")

    m, w, c = "cross_attention_masks", "cross_attention_weights", "cross_attention_cache"
    on_page(f"Encoder self-attention, {v(m, 'S')} source tokens by {v(m, 'S')}: the two padding columns crossed in "
            f"every row, {v(m, 'checks.encoder.allowed')} of {v(m, 'checks.encoder.cells')} cells allowed",
            f"Decoder self-attention, {v(m, 'T')} target tokens by {v(m, 'T')}: a lower triangle of "
            f"{v(m, 'checks.decoder.allowed')} allowed cells",
            f"Cross-attention, {v(m, 'T')} target rows by {v(m, 'S')} source columns: the two padding columns crossed, "
            f"{v(m, 'checks.cross.allowed')} of {v(m, 'checks.cross.cells')} cells allowed")
    got = d(m)
    assert (got["S"], got["T"], got["n_pad"]) == (5, 4, 2)
    # encoder: 5 rows of 3 real keys; decoder: 1 + 2 + 3 + 4; cross: 4 rows of 3 real keys
    assert [(k["allowed"], k["cells"]) for k in got["checks"].values()] == [(5 * 3, 25), (10, 16), (4 * 3, 20)]
    on_page(f"Two {v(w, 'T')} by {v(w, 'S')} heatmaps of head 1's cross-attention weights",
            f"the start token puts {v(w, 'weights.0.0.0', '.2f round=nearest')} on the.",
            "the two padding columns get equal weights in every row, together "
            f"{v(w, 'pad_weight_unmasked.0.0', '.2f round=nearest')} of the start token's row and "
            f"{v(w, 'pad_weight_unmasked.0.3', '.2f round=nearest')} of dort's",
            f"{v(w, 'T')} target queries against {v(w, 'S')} source keys")
    got = d(w)
    assert (got["T"], got["S"]) == (4, 5) and got["pad_weight_masked"] == 0.0
    assert got["weights"][0, 0, 0] == got["weights"][0, 0].max()  # "puts … on the": the row's largest weight
    assert got["target"][3] == "dort" and got["source"][0] == "the"
    assert got["pads_weight_difference"] < 1e-15
    on_page(f"against the decoding step, {v(c, 'steps.0')} to {v(c, 'max_steps')}: the self-attention cache rises on "
            f"a straight line by {v(c, 'kib.per_token', '.0f')} KiB a step to {v(c, 'kib.self_at_max', '.0f')} KiB; "
            f"the cross-attention cache is flat at {v(c, 'kib.cross_per_layer', '.0f')} KiB from the first step; the "
            f"two lines cross at step {v(c, 'equal_at_step')}",
            f"One decoder layer, {v(c, 'n_heads')} heads of {v(c, 'd_head')}, fp16, a source of "
            f"{v(c, 'source_len')} tokens")
    got = d(c)
    assert (got["steps"][0], got["max_steps"], got["kib"]["per_token"], got["kib"]["self_at_max"],
            got["kib"]["cross_per_layer"], got["equal_at_step"], got["n_heads"], got["d_head"],
            got["source_len"]) == (1, 48, 2, 96, 64, 32, 8, 64, 32)


def test_the_caches_are_equal_at_step_s_and_the_self_cache_larger_after():
    """"equals it at step 32, when the target is as long as the source, and is the larger of the two
    from step 33 on" (the figure's lines meet at step 32: the self-attention cache does not overtake
    there); the recomputation count follows the setup that names its 32 tokens and 48 steps."""
    c = d("cross_attention_cache")
    own, cross = c["self_bytes"], c["cross_bytes"]
    S = c["equal_at_step"]
    assert own[S - 1] == cross[S - 1] and own[S - 2] < cross[S - 2] and own[S] > cross[S]
    assert c["self_larger_from"] == S + 1
    on_page("equals it at step {{ value cross_attention_cache equal_at_step }}, when the target is as long as the "
            "source, and is the larger of the two from step {{ value cross_attention_cache self_larger_from }} on")
    assert "overtakes it at step" not in PAGE
    flat = re.sub(r"\s+", " ", PAGE)
    setup = flat.index("a source of {{ value cross_attention_cache source_len }} tokens and a translation written in "
                       "{{ value cross_attention_cache max_steps }} steps")
    assert flat.index("{{ value cross_attention_cache kv_rows_every_step , }}") > setup
    assert c["kv_rows_every_step"] == c["source_len"] * c["max_steps"] and c["kv_rows_once"] == c["source_len"]


def test_the_rounding_errors_are_stated_not_bounded_below_their_size():
    """"the largest error is …: … a sum of five weights can be off by a few of those, or by none":
    shown to one decimal, a size, not a "within 1e-16" that the value can exceed (2**-53 = 1.11e-16
    is one rounding). The size depends on the machine's arithmetic (this example gives 1.1e-16 on
    one machine and exactly 0 on another), so the sentence holds for any value from 0 to a few
    roundings, and the test holds the value to that range, 0 included."""
    m, w = d("cross_attention_masks"), d("cross_attention_weights")
    one_rounding = 2.0 ** -53
    for value in (m["checks"]["cross"]["max_row_sum_error"], w["pads_weight_difference"]):
        assert 0 <= value <= 4 * one_rounding
    assert f"{one_rounding:.1e}" == "1.1e-16"
    on_page("in the cross-attention the largest error is {{ value cross_attention_masks checks.cross.max_row_sum_error .1e round=nearest }}",
            "float64 rounds at \\(2^{-53} \\approx 1.1 \\times 10^{-16}\\), and a sum of five weights can be off by a few of those, or by none",
            "in the example the largest difference is {{ value cross_attention_weights pads_weight_difference .1e round=nearest }}")
    assert ".0e }}" not in PAGE.replace("example.max_difference .0e }}", "")


def test_the_padding_rows_are_equal_only_without_positions():
    """"this example adds no positional encoding, so nothing tells the two positions apart … In a model
    that adds positions to its embeddings … the two padding rows differ and so do their weights":
    with sinusoidal positions added to the example's vectors (the padding mask forgotten), the two
    padding columns get different weights; without them, the same."""
    import mhalib

    ex = examples.translation_pair()
    plain = by_hand(ex, cross_mask=False)["cross"]
    assert np.abs(plain[:, :, 3] - plain[:, :, 4]).max() < 1e-15
    D = ex["X_src"].shape[-1]
    pe = mhalib.sinusoidal_encoding(5, D)  # (S, D)
    placed = dict(ex, X_src=ex["X_src"] + pe[None], X_tgt=ex["X_tgt"] + pe[None, :4])
    moved = by_hand(placed, cross_mask=False)["cross"]
    assert np.abs(moved[:, :, 3] - moved[:, :, 4]).min() > 1e-3
    assert np.all(by_hand(placed)["cross"][:, :, 3:] == 0)  # the mask still gives them none
    on_page("this example adds no positional encoding, so nothing tells the two positions apart",
            "the two padding rows differ and so do their weights; either way, only the mask gives them none")


def test_the_code_says_which_residual_it_keeps():
    """The snippet adds the decoder's residual and not the encoder's; the page and the code comment say so."""
    code = (ROOT / "mhalib" / "examples.py").read_text(encoding="utf-8")
    snippet = code[code.index("# --8<-- [start:encoder-decoder]"): code.index("# --8<-- [end:encoder-decoder]")]
    assert "h = x_tgt + self_out" in snippet and "memory, enc_w = multi_head_attention(x_src" in snippet
    assert "the encoder's residual, layer norms and feed-forward are left out" in snippet
    on_page("One residual connection stays, the decoder's", "The encoder's residual is left out with the rest of its layer")
    ex = examples.translation_pair()
    run, hand = examples.encoder_decoder_attention(ex), by_hand(ex)
    np.testing.assert_allclose(run["memory"][0], hand["memory"], rtol=0, atol=1e-13)  # no X_src added


def test_the_questions_and_claims_hold():
    c = d("cross_attention_cache")
    on_page("translates a 32-token sentence into 48 tokens (8 heads of 64 in each of 6 decoder layers, fp16)")
    assert (c["source_len"], c["max_steps"], c["n_heads"], c["d_head"], c["n_layers"]) == (32, 48, 8, 64, 6)
    on_page("as much as a decoder-only model of the same width caches after reading the source as its prompt")
    assert c["decoder_only_at_max"] == c["total_at_max"]
    on_page("What shape do the example's cross-attention weights have? And what would the top-left causal mask, "
            "causal_mask(4, 5), do", "would let the start token read only *the*, and *le* only *the* and *cat*")
    import mhalib
    top_left = mhalib.causal_mask(4, 5)
    assert top_left[0].tolist() == [True, False, False, False, False] and top_left[1, :3].tolist() == [True, True, False]
    on_page("every blocked pair gets exactly 0 in both heads and every row sums to 1")
    assert all(ck["zero_where_masked"] for ck in d("cross_attention_masks")["checks"].values())


@pytest.mark.build
def test_the_built_page_shows_the_numbers(built_site):
    t = page_text(built_site, "cross_attention")
    per_token = 2 * 8 * 64 * 2
    for number in (per_token, 32 * per_token, 6 * 80 * per_token, 6 * 32 * per_token, 32 * 48):
        assert f"{number:,}" in t, number
    assert "64 KiB" in t and "160 KiB" in t and "960 KiB" in t
    assert "(1, 2, 4, 5)" in re.sub(r"\s*,\s*", ", ", t)
    assert "Cross-attention and the encoder–decoder" in t
