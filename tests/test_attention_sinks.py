"""Attention sinks on the tiny language model (page: long context).

The numpy forward pass with a window-and-sinks mask is held to two peers written here: a
decoder that reads the text one character at a time and drops from its cache every key outside
the window and the sinks (plain numpy, its own RoPE, layer norm and softmax), and torch's tiny
decoder with the same mask written into its bias table by a double loop. The figure's numbers
are recomputed with torch, and each sentence the page says about them is found on the page
and held to the data.
"""
from __future__ import annotations

import functools
import re

import numpy as np
import pytest
import torch

import figures
import mhalib as m
from mhalib.models import tiny
from mhalib.models.tiny import TinyDecoder
from mhalib.models.tiny_numpy import forward
from figures.generation.lm_loss_curve import load_model
from helpers import ROOT

PAGE = (ROOT / "docs" / "long_context.md").read_text(encoding="utf-8")
TEXT = "A window keeps the last few keys; a sink keeps the first ones, whatever they are."


@functools.lru_cache(maxsize=1)
def d() -> dict:
    return figures.load("attention_sinks").data()


def on_page(*phrases: str) -> None:
    flat = re.sub(r"\s+", " ", PAGE)
    for phrase in phrases:
        assert phrase in flat, f"docs/long_context.md no longer says {phrase!r}: check the claim again"


def window_and_sinks(T: int, window: int, n_sink: int) -> np.ndarray:
    """Key j is visible from query i when i - window < j <= i, or j < n_sink and j <= i."""
    return np.array([[(i - window < j <= i) or (j < n_sink and j <= i) for j in range(T)] for i in range(T)])


# ---- the peers --------------------------------------------------------------------------------------

def rolling_decode(weights: dict, config, ids: np.ndarray, window: int, n_sink: int) -> np.ndarray:
    """Logits ``(T, V)``, one character at a time, with a cache that keeps the keys and values
    of the first ``n_sink`` characters and of the last ``window`` only. Each key is rotated by
    RoPE at its own position before it is stored, as a rolling cache does."""
    w, H, d = weights, config.n_heads, config.d_head
    theta = config.rope_base ** (-np.arange(0, d, 2) / d)  # (d/2,): one angle per plane (2i, 2i+1)

    def rope(x, p):  # x (H, d) at position p
        a, b = x[:, 0::2], x[:, 1::2]
        c, s = np.cos(p * theta), np.sin(p * theta)
        out = np.empty_like(x)
        out[:, 0::2], out[:, 1::2] = a * c - b * s, a * s + b * c
        return out

    def norm(x, g, b):
        mu = x.mean()
        return g * (x - mu) / np.sqrt(((x - mu) ** 2).mean() + 1e-5) + b

    cache = [dict() for _ in range(config.n_layers)]  # per layer: position -> (k (H, d), v (H, d))
    logits = []
    for t, token in enumerate(ids):
        x = w["tok_emb"][token].copy()  # (D,)
        for l in range(config.n_layers):
            h = norm(x, w[f"{l}.ln1.g"], w[f"{l}.ln1.b"])
            q = rope((h @ w[f"{l}.w_q"]).reshape(H, d), t)
            cache[l][t] = (rope((h @ w[f"{l}.w_k"]).reshape(H, d), t), (h @ w[f"{l}.w_v"]).reshape(H, d))
            for old in [p for p in cache[l] if not (p > t - window or p < n_sink)]:
                del cache[l][old]  # out of the window and not a sink: gone for good
            keys = np.stack([k for k, _ in cache[l].values()], axis=1)  # (H, kept, d)
            values = np.stack([v for _, v in cache[l].values()], axis=1)  # (H, kept, d)
            scores = np.einsum("hd,hkd->hk", q, keys) / np.sqrt(d)
            a = np.exp(scores - scores.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            x = x + np.einsum("hk,hkd->hd", a, values).reshape(H * d) @ w[f"{l}.w_o"]
            h = norm(x, w[f"{l}.ln2.g"], w[f"{l}.ln2.b"])
            x = x + np.maximum(h @ w[f"{l}.w_1"] + w[f"{l}.b_1"], 0) @ w[f"{l}.w_2"] + w[f"{l}.b_2"]
            assert len(cache[l]) <= window + n_sink
        logits.append(norm(x, w["ln_f.g"], w["ln_f.b"]) @ w["w_u"] + w["b_u"])
    return np.array(logits)


@functools.lru_cache(maxsize=1)
def torch_model() -> TinyDecoder:
    config, weights, _ = load_model()
    model = TinyDecoder(config).double()
    model.load_numpy_weights({k: np.array(a) for k, a in weights.items()})  # writable copies for torch
    return model.eval()


def torch_masked(ids: np.ndarray, allowed: np.ndarray | None, monkeypatch) -> tuple[np.ndarray, list]:
    """torch's logits and attention for ``ids (B, T)``, every layer's bias 0 where ``allowed``
    and -inf elsewhere (None: the model's own causal bias)."""
    if allowed is not None:
        monkeypatch.setattr(tiny, "_bias_table", lambda method, T, H: np.where(allowed, 0.0, -np.inf)[None])
    with torch.no_grad():
        logits, maps = torch_model()(torch.as_tensor(ids), return_attention=True)
    monkeypatch.undo()
    return logits.numpy(), [a.numpy() for a in maps]


def nats(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    log_p = torch.log_softmax(torch.as_tensor(logits), dim=-1).numpy()
    return -np.take_along_axis(log_p, targets[..., None], axis=-1)[..., 0]


# ---- the masked forward pass ----------------------------------------------------------------------

@pytest.mark.parametrize("window,n_sink", [(200, 0), (8, 0), (8, 1), (5, 4), (1, 3)])
def test_a_masked_pass_gives_a_rolling_cache_decodes_logits(window, n_sink):
    config, weights, tok = load_model()
    ids = tok.encode(TEXT)
    T = len(ids)
    want = rolling_decode(weights, config, ids, window, n_sink)  # (T, V)
    got = forward(weights, config, ids, mask=m.sliding_window_mask(T, window, n_sink=n_sink))["logits"][0]
    assert np.abs(got - want).max() < 1e-9
    if window >= T:  # a window as long as the text is the full cache
        assert np.abs(forward(weights, config, ids)["logits"][0] - want).max() < 1e-9
    else:  # and a window shorter than the text is not: the test can tell them apart
        assert np.abs(forward(weights, config, ids)["logits"][0] - want).max() > 1e-3


def test_a_masked_pass_equals_torch_with_the_mask_in_its_bias(monkeypatch):
    config, weights, tok = load_model()
    ids = np.stack([tok.encode(TEXT[:40]), tok.encode(TEXT[-40:])])  # (2, 40)
    allowed = window_and_sinks(40, 6, 2)
    want, maps = torch_masked(ids, allowed, monkeypatch)
    out = forward(weights, config, ids, mask=m.sliding_window_mask(40, 6, n_sink=2))
    assert np.abs(out["logits"] - want).max() < 1e-9
    for a, b in zip(out["attention"], maps):
        assert np.abs(a - b).max() < 1e-12 and np.all(a[..., ~allowed] == 0)


def test_an_all_true_mask_changes_nothing():
    config, weights, tok = load_model()
    ids = tok.encode(TEXT)
    T = len(ids)
    plain, masked = forward(weights, config, ids), forward(weights, config, ids, mask=np.ones((T, T), bool))
    assert np.array_equal(plain["logits"], masked["logits"])


@pytest.mark.parametrize("mask,exc,words", [
    (np.ones((5, 5), bool), ValueError, ["mask", "(6, 6)", "(5, 5)"]),
    (np.ones((6,), bool), ValueError, ["mask", "(6, 6)"]),
    (np.ones((6, 6)), TypeError, ["mask", "boolean"]),
    (np.ones((6, 6), int), TypeError, ["mask", "boolean"]),
])
def test_forward_refuses_a_mask_of_the_wrong_shape_or_type(mask, exc, words):
    config, weights, tok = load_model()
    with pytest.raises(exc) as info:
        forward(weights, config, tok.encode("window"), mask=mask)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


# ---- the figure's numbers ---------------------------------------------------------------------------

@pytest.mark.slow
def test_the_figures_losses_and_weights_match_torch(monkeypatch):
    got = d()
    mod = figures.load("attention_sinks")
    inputs, targets = mod.held_out_stretches(got["stretches"])
    T = got["T"]
    assert inputs.shape == (got["stretches"], T) and np.array_equal(inputs[:, 1:], targets[:, :-1])
    logits, maps = torch_masked(inputs, None, monkeypatch)
    full = nats(logits, targets)  # (N, T)
    assert np.abs(full.mean(axis=0) - got["full_by_position"]).max() < 1e-9
    run = next(r for r in got["runs"] if (r["window"], r["n_sink"]) == (8, 4))
    windowed = nats(torch_masked(inputs, window_and_sinks(T, 8, 4), monkeypatch)[0], targets)
    assert np.abs((windowed - full).mean(axis=0) - run["extra_by_position"]).max() < 1e-9
    assert abs((windowed - full)[:, 8:].mean() - run["extra"]) < 1e-12
    # the weight on character 0 and in the last 8 characters, queries FAR .. T-1, per layer and head
    far = got["far"]
    first = np.array([a[:, :, far:, 0].mean(axis=(0, 2)) for a in maps])  # (L, H)
    assert np.abs(first - got["on_first"]).max() < 1e-12
    last8 = np.array([[a[:, :, i, i - 7:i + 1].sum(axis=-1) for i in range(far, T)] for a in maps])  # (L, T-far, N, H)
    assert abs(last8.mean() - got["kept"][0]["mean"]) < 1e-12 and got["kept"][0]["window"] == 8
    # an even spread over the p + 1 visible keys gives key 0 1/(p + 1)
    assert got["even_first"] == pytest.approx(sum(1 / (p + 1) for p in range(far, T)) / (T - far), rel=1e-12)


def test_every_window_leaves_the_positions_before_it_untouched():
    """Before position W the window holds every key: the loss is the full cache's exactly."""
    for r in d()["runs"]:
        assert r["identical_before_window"], r["window"]
        assert np.all(np.asarray(r["extra_by_position"])[: r["window"]] == 0)


def test_claim_the_tiny_model_makes_no_sinks():
    """No head gives the first character even a third of what an even spread would. The page states
    the largest share itself ("gives it 0.253%"), to three digits: at two, "no head gives more than
    0.25%" was below the value."""
    got = d()
    assert got["on_first_max"] < got["even_first"] / 3
    assert got["on_first_max"] == max(max(row) for row in got["on_first"])
    on_page("The tiny model makes no sinks.", "the head that gives the first character most gives it "
            "{{ value attention_sinks on_first_max .3% round=nearest }} of its weight", "less than its share, not more")
    assert "no head gives the first character more than" not in PAGE


def test_claim_sinks_win_back_less_than_a_tenth_of_the_windows_cost():
    got = d()
    gains = [abs(r["extra"] - next(p for p in got["runs"] if p["window"] == r["window"] and p["n_sink"] == 0)["extra"])
             for r in got["runs"] if r["n_sink"]]
    assert max(gains) == pytest.approx(got["sink_gain_max"], abs=1e-15)
    assert got["sink_gain_max"] < got["w8"]["extra"] / 10
    on_page("So keeping the first characters does not help.", "Hardly: the head that gives the first character most",
            "less than a tenth of what the window of 8 costs",
            "the largest change that keeping the first one or four characters makes to the mean loss past the window is "
            "{{ value attention_sinks sink_gain_max .4f round=nearest }}")
    assert "changes the loss by at most" not in PAGE


def test_claim_the_binned_curves_wobble_both_ways():
    """"The figure's dashed and solid curves lie further apart than that, up to 0.013 nats in one bin of
    16 positions, but they cross: every pair has bins where the sinks lower the loss and bins where they
    raise it": the bins are remade here from the per-position extras, as the figure draws them."""
    got = d()
    n, T = got["bin"], got["T"]
    by = {(r["window"], r["n_sink"]): r for r in got["runs"]}
    widest = 0.0
    for (W, n_sink), r in by.items():
        if not n_sink:
            continue
        gap = [sum(r["extra_by_position"][b:b + n]) / n - sum(by[(W, 0)]["extra_by_position"][b:b + n]) / n
               for b in range(0, T, n)]
        assert min(gap) < 0 < max(gap), (W, n_sink)  # both ways, for every window and number of sinks
        assert (r["bins_lower"], r["bins_higher"]) == (sum(g < 0 for g in gap), sum(g > 0 for g in gap))
        widest = max(widest, max(abs(g) for g in gap))
    assert widest == pytest.approx(got["sink_bin_gap_max"], abs=1e-12)
    assert got["sink_bin_gap_max"] > 3 * got["sink_gain_max"]  # "further apart than that"
    on_page("up to {{ value attention_sinks sink_bin_gap_max .3f round=up }} nats in one bin of {{ value attention_sinks bin }} "
            "positions, but they cross")


def test_claim_the_baseline_is_the_full_caches_loss_on_the_same_characters():
    """The window of 8's extra loss is measured past position 8, so the full cache's loss beside it is
    the one on those characters (w8.full), not the mean over every position (full)."""
    got = d()
    full = np.asarray(got["full_by_position"])
    assert got["w8"]["full"] == pytest.approx(full[8:].mean(), abs=1e-12)
    assert f"{got['w8']['full']:.2f}" != f"{got['full']:.2f}"  # the two baselines differ as shown
    on_page("(on those same characters, the ones past the first 8, the full cache pays "
            "{{ value attention_sinks w8.full .2f round=nearest }})")
    assert "{{ value attention_sinks full .2f }}" not in PAGE


def test_the_page_defines_streamingllm_and_says_what_the_figure_does_not_draw():
    on_page("StreamingLLM, Xiao et al.'s way of streaming with a rolling cache that also keeps the sinks",
            "Not drawn in {{ ref fig:attention_sinks }}, but measured on the same stretches")
    flat = re.sub(r"\s+", " ", PAGE)
    assert flat.index("StreamingLLM, Xiao") == flat.index("StreamingLLM")  # defined where it first appears


def test_check_yourself_mistral_counts_are_two_counts():
    """Check yourself 1: the composed masks give 32 x 4,095 + 1 = 131,041; the paper's "about 131K"
    is 32 x 4,096 = 131,072, a different count, not a rounding of 131,041."""
    got = figures.load("sliding_window_reach").data()
    L, w = got["mistral_layers"], got["mistral_window"]
    assert got["mistral_reach"] == L * (w - 1) + 1 and got["mistral_product"] == L * w
    assert round(got["mistral_reach"], -3) == round(got["mistral_product"], -3) == 131_000  # both "about 131K"
    on_page('The paper\'s "about 131K" is a different count, \\(w\\) per layer: '
            "{{ value sliding_window_reach mistral_product , }}.")
    assert "rounds it" not in PAGE


def test_claim_the_heads_look_close():
    """Most of every head's weight falls within the last 8 characters on average; a window of 64 keeps
    nearly all of it."""
    kept = d()["kept"]
    assert [k["window"] for k in kept] == [8, 16, 32, 64]
    assert kept[0]["mean"] > 0.8 and kept[-1]["mean"] > 0.95 and kept[-1]["min"] > 0.9
    means = [k["mean"] for k in kept]
    assert means == sorted(means)  # a wider window keeps more (its keys include the narrower one's)
    on_page("A window costs little here, because the heads look close.")


def test_the_figures_alt_text_says_what_its_data_say():
    """The alt text: "the windows of 8 and 16 cost hundredths of a nat, the windows of 32 and 64
    almost nothing" (the mean extra nats past the window: from 0.01 up to 0.1, and under 0.01);
    "all far below the dashed line of an even spread, the first layer's heads highest" (every
    head of layer 1 above every head of the other layers); its numbers are {{ value }}s of the
    data the figure draws: the widths, the most first characters kept, the heads of all layers."""
    got = d()
    extra = {r["window"]: r["extra"] for r in got["runs"] if r["n_sink"] == 0}
    assert 0.01 <= extra[16] < extra[8] < 0.1 and extra[64] < extra[32] < 0.01
    on_first = np.asarray(got["on_first"])  # (L, H)
    assert on_first[0].min() > on_first[1:].max() and got["on_first_max"] < got["even_first"] / 3
    assert got["sinks"][1] == max(got["sinks"]) and got["heads_total"] == on_first.size
    w = "{{ value attention_sinks widths.%d }}"
    on_page(f"the windows of {w % 0} and {w % 1} cost hundredths of a nat, the windows of {w % 2} and {w % 3} "
            "almost nothing", "all far below the dashed line of an even spread, the first layer's heads highest",
            "for each of the {{ value attention_sinks heads_total }} heads",
            "with and without the first {{ value attention_sinks sinks.1 }} characters kept")
