"""The page "Sampling: from logits to text": the cached numpy generator, the four figure
scripts' numbers and the page's sentences about them.

Expected values come from elsewhere than the code under test: logits from torch's tiny
decoder (``mhalib.models.tiny``) or from the uncached numpy forward pass, probabilities and
entropies written out here, top-p's kept set found by sorting by hand, beam scores summed
from torch's log-probabilities. Each claim test finds its sentence on the page, so editing
the sentence or the data fails it until the claim is checked again.
"""
from __future__ import annotations

import functools
import json
import math
import re

import numpy as np
import pytest
import torch

import figures
from mhalib.decoding import KVCache
from mhalib.models.tiny import TinyDecoder
from mhalib.models.tiny_generate import decode, generate, new_cache
from mhalib.models.tiny_numpy import TinyConfig, forward
from figures.generation.lm_loss_curve import SOURCE, load_model
from helpers import ROOT

PAGE = (ROOT / "docs" / "sampling.md").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def _data(name: str, params: tuple) -> dict:
    return figures.load(name).data(**dict(params))


def d(name: str, **params) -> dict:
    """A script's data(), computed once per set of parameters in this module (read, never changed)."""
    return _data(name, tuple(sorted(params.items())))


def on_page(*phrases: str) -> None:
    flat = re.sub(r"\s+", " ", PAGE)
    for phrase in phrases:
        assert phrase in flat, f"docs/sampling.md no longer says {phrase!r}: check the claim again"


@functools.lru_cache(maxsize=1)
def torch_model() -> TinyDecoder:
    config, weights, _ = load_model()
    model = TinyDecoder(config).double()
    model.load_numpy_weights({k: np.array(a) for k, a in weights.items()})  # writable copies for torch
    return model.eval()


def torch_logits(ids: np.ndarray) -> np.ndarray:
    """The stored model's logits for ``ids (B, T)`` from torch's implementation, float64."""
    with torch.no_grad():
        return torch_model()(torch.as_tensor(np.atleast_2d(ids))).numpy()


def probs(x: np.ndarray, T: float = 1.0) -> np.ndarray:
    z = np.asarray(x, float) / T
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# --- the cached generator ------------------------------------------------------------------

def test_cached_decoding_in_chunks_gives_torchs_logits_at_every_position():
    config, weights, tok = load_model()
    ids = tok.encode("A head attends to the keys; its weights sum to one.")
    want = torch_logits(ids)[0]  # (T, V)
    cache = new_cache(config)
    got = np.concatenate([decode(weights, config, ids[:7], cache)[0]] +
                         [decode(weights, config, ids[i:i + 1], cache)[0] for i in range(7, len(ids))])
    assert np.abs(got - want).max() < 1e-9
    assert cache.length(0) == len(ids)


def test_generate_with_and_without_the_cache_equals_argmax_and_draws_by_hand():
    config, weights, tok = load_model()
    prompt = list(tok.encode("Position"))
    seq = list(prompt)
    for _ in range(12):  # greedy, by hand from torch's logits
        seq.append(int(np.argmax(torch_logits(np.array(seq))[0, -1])))
    for cached in (True, False):
        assert list(generate(weights, config, prompt, 12, cached=cached)) == seq
    # sampling: the draw u of a generator seeded 5, located in the cumulative softmax by hand
    seq, rng = list(prompt), np.random.default_rng(5)
    for _ in range(8):
        p = probs(torch_logits(np.array(seq))[0, -1] / 0.8)
        seq.append(int(np.searchsorted(np.cumsum(p) / p.sum(), rng.random(), side="right")))
    for cached in (True, False):
        got = generate(weights, config, prompt, 8, rng=np.random.default_rng(5), temperature=0.8, cached=cached)
        assert list(got) == seq


def test_the_generator_refuses_what_it_cannot_do():
    config, weights, tok = load_model()
    with pytest.raises(ValueError, match="decode supports method in"):
        decode({}, TinyConfig(vocab=5, method="alibi"), [1], new_cache(TinyConfig(vocab=5, method="alibi")))
    with pytest.raises(TypeError, match="cache must be a mhalib.KVCache"):
        decode(weights, config, [1], cache={})
    with pytest.raises(ValueError, match="past this model's max_len of 128"):
        decode(weights, config, np.zeros(129, np.int64), new_cache(config))
    with pytest.raises(ValueError, match=r"prompt \(100 tokens\) \+ n_new \(29\) = 129 passes"):
        generate(weights, config, np.zeros(100, np.int64), 29)
    with pytest.raises(ValueError, match="token"):
        decode(weights, config, [85], new_cache(config))
    assert isinstance(new_cache(config), KVCache)


@pytest.mark.parametrize("make, match", [
    (lambda c: KVCache(c.n_layers, n_kv_heads=c.n_heads, d_head=c.d_head, dtype=np.float16), "dtype=float16"),
    (lambda c: KVCache(c.n_layers, n_kv_heads=c.n_heads, d_head=c.d_head, dtype=np.float32), "dtype=float32"),
    (lambda c: KVCache(c.n_layers + 1, n_kv_heads=c.n_heads, d_head=c.d_head), "got n_layers=5"),
    (lambda c: KVCache(c.n_layers - 1, n_kv_heads=c.n_heads, d_head=c.d_head), "got n_layers=3"),
])
def test_decode_refuses_a_cache_new_cache_would_not_make_and_leaves_it_empty(make, match):
    # Before, a float16 cache gave logits off by 2e-3 in silence, and a cache with one layer
    # too few was filled in three layers before the fourth failed.
    config, weights, tok = load_model()
    cache = make(config)
    with pytest.raises(ValueError, match=rf"cache must come from new_cache\(config\): 4 layers in float64.*{match}"):
        decode(weights, config, tok.encode("Attention"), cache)
    assert all(cache.length(l) == 0 for l in range(cache.n_layers))


def test_decode_refuses_a_cache_whose_layers_differ_in_length():
    # Before, each layer placed the new tokens at its own length: logits off by 0.9, silently.
    config, weights, tok = load_model()
    cache = new_cache(config)
    zeros = np.zeros((1, config.n_heads, 3, config.d_head))
    cache.append(1, zeros, zeros)
    with pytest.raises(ValueError, match=r"same number of tokens .* got lengths \[0, 3, 0, 0\]"):
        decode(weights, config, tok.encode("Attention"), cache)


def test_generate_refuses_filters_greedy_would_ignore_and_a_cached_that_is_not_a_bool():
    config, weights, tok = load_model()
    prompt = tok.encode("Attention")
    for bad in (dict(temperature=0.5), dict(top_k=3), dict(top_p=0.9), dict(temperature=-5)):
        with pytest.raises(ValueError, match="greedy decoding \\(rng=None\\) would ignore them"):
            generate(weights, config, prompt, 3, **bad)
    with pytest.raises(TypeError, match="cached must be True .* or False .*, got 'no'"):
        generate(weights, config, prompt, 3, cached="no")
    assert len(generate(weights, config, prompt, 3, temperature=1.0, cached=np.bool_(False))) == len(prompt) + 3


# --- the figure scripts ---------------------------------------------------------------------

def test_filters_figure_against_probabilities_written_out_here():
    out = d("sampling_filters")
    _, _, tok = load_model()
    x = torch_logits(tok.encode(out["prompt"]))[0, -1]  # (V,)
    p = probs(x)
    order = np.argsort(-p)
    assert np.allclose(out["p"], p[order[:10]], atol=1e-9)
    assert out["entropy"] == pytest.approx(-(p * np.log(p)).sum(), abs=1e-9)
    for panel, T in ((1, out["temperature_low"]), (2, out["temperature_high"])):
        q = probs(x, T)
        assert np.allclose(out["panels"][panel]["probs"], q[order[:10]], atol=1e-9)
        assert out["panels"][panel]["kept"] == 85
    k = out["top_k"]
    assert out["top_k_kept"] == k and out["top_k_mass"] == pytest.approx(p[order[:k]].sum(), abs=1e-12)
    kept = int(np.argmax(np.cumsum(p[order]) >= out["top_p"])) + 1  # the fewest whose mass reaches p
    assert out["top_p_kept"] == kept and out["top_p_mass"] == pytest.approx(p[order[:kept]].sum(), abs=1e-12)
    renorm = p[order[:kept]] / p[order[:kept]].sum()
    assert np.allclose(out["panels"][4]["probs"][:min(kept, 10)], renorm[:10], atol=1e-12)
    z = x / out["cold_temperature"]
    assert out["cold_rest"] == pytest.approx(np.exp(z - z.max())[order[1:]].sum() / np.exp(z - z.max()).sum(),
                                             rel=1e-6)
    assert out["top_char"] == tok.decode([int(order[0])])


def test_temperature_figure_against_the_uncached_forward_pass():
    out = d("sampling_temperature")
    config, weights, tok = load_model()
    text = json.loads(SOURCE.read_text())["corpus"]["held_out_text"]
    ids = tok.encode(text)[: out["windows"] * 128 + 1]
    x = forward(weights, config, ids[:-1].reshape(out["windows"], 128))["logits"].reshape(-1, 85)
    y = ids[1:]
    p = probs(x)
    assert out["positions"] == len(y) == out["windows"] * 128
    assert out["entropy_at_1"] == pytest.approx(float(-(p * np.log(p)).sum(axis=1).mean()), abs=1e-9)
    assert out["loss_at_1"] == pytest.approx(float(-np.log(p[np.arange(len(y)), y]).mean()), abs=1e-9)
    T = out["best_temperature"]
    pb = probs(x, T)
    assert out["best_loss"] == pytest.approx(float(-np.log(pb[np.arange(len(y)), y]).mean()), abs=1e-9)
    for nearby in (T - 0.01, T + 0.01):  # a minimum on the 0.01 grid
        pn = probs(x, nearby)
        assert out["best_loss"] <= float(-np.log(pn[np.arange(len(y)), y]).mean())
    # top-p's kept counts, by sorting here
    srt = -np.sort(-p, axis=1)
    kept = np.argmax(np.cumsum(srt, axis=1) >= out["top_p"], axis=1) + 1
    assert np.array_equal(np.asarray(out["kept_counts"]), np.bincount(kept, minlength=86)[1:])
    assert out["kept_one_share"] == pytest.approx(np.mean(kept == 1))
    assert (out["kept_max"], out["kept_median"]) == (kept.max(), np.median(kept))


def test_repeated_share_by_hand():
    from figures.generation.sampling_samples import repeated_share
    assert repeated_share("abcd") == 0.0
    assert repeated_share("abcdabcd") == pytest.approx(1 / 5)  # abcd bcda cdab dabc abcd: the last repeats
    assert repeated_share("aaaaaa") == pytest.approx(2 / 3)  # three 'aaaa', the last two repeat
    with pytest.raises(ValueError, match="at least 4 characters"):
        repeated_share("abc")


def test_samples_table_greedy_row_and_costs_against_torch():
    out = d("sampling_samples", n_new=24, samples=3)
    _, _, tok = load_model()
    seq = list(tok.encode(out["prompt"]))
    costs = []
    for _ in range(24):
        x = torch_logits(np.array(seq))[0, -1]
        nxt = int(np.argmax(x))
        costs.append(-math.log(probs(x)[nxt]))
        seq.append(nxt)
    greedy = out["rows"][0]
    assert greedy["decoder"] == "greedy" and greedy["text"] == tok.decode(seq[len(tok.encode(out["prompt"])):])
    assert greedy["nats"] == pytest.approx(np.mean(costs), abs=1e-9)
    for row in out["rows"][1:]:
        assert len(row["texts"]) == 3 and all(len(t) == 24 for t in row["texts"])
        assert row["nats_min"] <= row["nats"] <= row["nats_max"]
    # a sampled continuation's characters each had a non-zero probability under its filter
    top_k = next(r for r in out["rows"] if r["decoder"].startswith("top-k"))
    ids = list(tok.encode(out["prompt"]))
    for c in top_k["texts"][0]:
        x = torch_logits(np.array(ids))[0, -1]
        assert tok.encode(c)[0] in np.argsort(-x)[:5]
        ids.append(int(tok.encode(c)[0]))


def test_samples_table_ranges_hold_every_continuations_value():
    """Pass thirty-seven: the table's "(lo–hi)" rounded its ends to nearest, "1.97 (1.63–2.27)"
    for a largest cost of 2.2716, so the range left out the values it names as its range (and
    the page's own bound, "between 1.63 and 2.28", disagreed with it). Each end is read back and
    compared exactly with the values of the continuations."""
    from fractions import Fraction

    from figures.generation import sampling_samples

    out = d("sampling_samples")
    text = sampling_samples.table(out)
    rows = out["rows"] + [out["held_out"]]
    for line, r in zip(text.splitlines()[2:], rows):
        cells = [c.strip() for c in line.strip("|").split("|")]
        for cell, key, scale in ((cells[2], "nats", 1), (cells[3], "repeated", 100)):
            m = re.fullmatch(r"\S+ \((\S+)–(\S+)\)", cell)
            if r[f"{key}_min"] == r[f"{key}_max"]:
                assert m is None, cell
                continue
            lo, hi = (Fraction(t.rstrip("%")) / (scale if t.endswith("%") else 1) for t in m.groups())
            assert lo <= Fraction(r[f"{key}_min"]) and hi >= Fraction(r[f"{key}_max"]), (r["decoder"], cell)
            assert hi - Fraction(r[f"{key}_max"]) <= Fraction(1, 100), cell  # rounded outward, not widened


def test_beam_table_scores_are_log_probabilities_of_its_texts():
    out = d("sampling_beams", max_new=6)
    _, _, tok = load_model()
    prompt = list(tok.encode(out["prompt"]))
    for row in out["rows"]:
        ids, score = list(prompt), 0.0
        for c in tok.encode(row["text"]):
            score += math.log(probs(torch_logits(np.array(ids))[0, -1])[c])
            ids.append(int(c))
        assert row["score"] == pytest.approx(score, abs=1e-8)
    greedy = out["rows"][0]
    assert greedy["beams"] == 1
    ids = list(prompt)
    for _ in range(6):
        ids.append(int(np.argmax(torch_logits(np.array(ids))[0, -1])))
    assert greedy["text"] == tok.decode(ids[len(prompt):])


# --- the page's sentences -------------------------------------------------------------------

def test_claims_about_greedy_hold():
    s = d("sampling_samples")
    greedy, sampled, held = s["rows"][0], s["rows"][1:], s["held_out"]
    on_page("the same phrase again and again", "less than any sampled continuation")
    assert greedy["repeated"] > held["repeated_max"] and greedy["repeated"] > max(r["repeated_max"] for r in sampled)
    assert greedy["nats"] < min(r["nats_min"] for r in sampled)


def test_claims_about_temperature_hold():
    t = d("sampling_temperature")
    s = d("sampling_samples")
    on_page("It rises steadily with \\(T\\)", "slightly above 1, so on text it has not seen this model is a little too sure")
    assert all(b > a for a, b in zip(t["entropy"], t["entropy"][1:]))
    assert 1.0 < t["best_temperature"] < 1.5 and t["best_loss"] < t["loss_at_1"]
    by = {r["decoder"]: r for r in s["rows"]}
    on_page("Lowering \\(T\\) buys likelier text")
    assert by["T = 0.7"]["nats"] < by["T = 1"]["nats"] < by["T = 1.5"]["nats"]
    assert s["hot"]["nats_min"] > s["cool"]["nats_max"]  # the two ranges the page quotes separate
    lm = d("lm_loss_curve")
    on_page("a little of its training text by heart")
    assert lm["final_train"] < lm["final_held_out"] < lm["chance_loss"]


def test_claims_about_top_k_and_top_p_hold():
    f, t = d("sampling_filters"), d("sampling_temperature")
    on_page("A fixed \\(k\\) keeps too many candidates in the first case and too few in the second",
            "keeps a single character at")
    assert t["kept_one_share"] > 0.25 and t["kept_max"] > t["top_k"]
    assert f["top_p_kept"] > f["top_k_kept"]
    # the question: after "its own q" top-p with the figure's p keeps one character, top-k
    # still five (it said "nearly all the probability" for 0.898 and left p unsaid, while
    # p = 0.9 keeps two there: pass twenty-four)
    from figures.generation.sampling_filters import next_logits
    mid = f["mid_word"]
    p = np.sort(probs(next_logits(mid["prompt"])))[::-1]
    fewest = int(np.argmax(np.cumsum(p) >= f["top_p"])) + 1  # by hand: the fewest whose sum reaches p
    assert mid["top_p_kept"] == fewest == 1 and mid["p_top"] == p[0] > f["top_p"]
    assert mid["prompt"] == "its own q" and mid["top_char"] == "u"
    on_page('such as after “its own q”', "more than *p* on its own")


def test_a_text_cell_shows_every_character_of_the_models_vocabulary_as_itself():
    """Model text goes into the samples and beams tables as Markdown: each of the 85 characters,
    beside every character Markdown, HTML or the site's extensions could read, and characters
    another vocabulary could hold, must come out of the site's Markdown (its extensions, from
    mkdocs.yml) as itself, inside one <code> with nothing else in it."""
    from html.parser import HTMLParser

    import markdown
    from mkdocs.config import load_config

    from figures._kit.export import markdown_table
    from figures.generation.sampling_samples import _text_cell

    class Code(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.depth, self.texts, self.tags = 0, [], []

        def handle_starttag(self, tag, attrs):
            if tag == "code":
                self.depth += 1
                self.texts.append("")
            elif self.depth:
                self.tags.append(tag)

        def handle_endtag(self, tag):
            self.depth -= tag == "code"

        def handle_data(self, data):
            if self.depth:
                self.texts[-1] += data

    cfg = load_config(str(ROOT / "mkdocs.yml"))
    md = markdown.Markdown(extensions=cfg["markdown_extensions"], extension_configs=cfg["mdx_configs"])
    vocab = load_model()[2].vocab
    marks = [c for c in vocab if not c.isalnum()]
    texts = [vocab, vocab[::-1], "a  b", " lead", "trail ", "www.a.com", "http://x.y", "[x](y)", "[^1]", "x^2^",
             "1/2", "#1", "=== x", ": x", "a|b|c"]
    # and what another vocabulary could hold (before, "~~a~~" came out as a struck-through "a"
    # and "*a*" in italics: only | \\ [ ] ` were escaped)
    texts += ["~~a~~", "~a~", "*a*", "_a_ b", "==a==", "&amp;", "<b>x</b>", "$x$", "{: .c }", ":smile:", "é ü"]
    texts += [a + b for a in marks for b in vocab] + [a + "x" + b for a in marks for b in marks]
    for text in texts:
        md.reset()
        page = md.convert(markdown_table(["text"], [[_text_cell(text)]], "l"))
        code = Code()
        code.feed(page)
        assert code.texts == [text.replace("\n", "↵")] and not code.tags, (text, page)


def test_the_figures_alt_texts_say_what_their_data_say():
    # What an alt text says that no {{ value }} can (tests/test_alt_text_numbers.py lists these
    # phrases): the two loss curves start at the one value given, the filters keep five and
    # twelve, the loss is lowest just above T = 1, top-p's histogram has its bar and its bump.
    on_page("Two loss curves falling from about {{ value lm_loss_curve train.0 .1f round=nearest }} nats per character")
    lm = d("lm_loss_curve")
    assert round(lm["train"][0], 1) == round(lm["held_out"][0], 1)  # was "about 4.4": they start at 4.47
    on_page("sharper at T = 0.5, flatter at T = 2, five characters kept by top-k and twelve by top-p")
    f = d("sampling_filters")
    assert (f["temperature_low"], f["temperature_high"], f["top_k_kept"], f["top_p_kept"]) == (0.5, 2.0, 5, 12)
    on_page("towards ln {{ value sampling_temperature vocab }}", "its minimum just above T = 1",
            "a tall bar at 1 and a second bump around 12 to 16", "a dashed line at top-k's 5")
    t = d("sampling_temperature")
    counts = np.asarray(t["kept_counts"])  # counts[i]: positions where top-p keeps i + 1 characters
    assert t["max_entropy"] == pytest.approx(math.log(t["vocab"])) and 1.0 < t["best_temperature"] < 1.25
    assert t["top_k"] == 5
    assert counts.argmax() == 0 and 12 <= np.argmax(counts[8:30]) + 9 <= 16  # the bump past the dip


def test_claims_about_beam_search_hold():
    b = d("sampling_beams")
    on_page("times as probable")
    assert b["gain"] > 0 and b["gain_factor"] == pytest.approx(math.exp(b["gain"]))
    assert b["never_worse"]


def test_quiz_39_top_p_keeps_one_where_the_model_is_sure_and_at_least_five_at_0_18():
    from mhalib import filter_logits
    quiz = re.sub(r"\s+", " ", (ROOT / "docs" / "quiz.md").read_text(encoding="utf-8"))
    assert "at least five at the second" in quiz and "top-k keeps five at both" in quiz
    tail = np.arange(84, 0, -1) / np.arange(84, 0, -1).sum()  # distinct: no tie at top-k's boundary
    sure = np.log(np.concatenate([[0.95], 0.05 * tail]))
    assert (filter_logits(sure, top_p=0.9) > -np.inf).sum() == 1
    rng = np.random.default_rng(0)
    for _ in range(20):  # a top probability of 0.18: never fewer than five kept
        rest = rng.dirichlet(np.ones(84)) * 0.82
        if rest.max() <= 0.18:
            p = np.concatenate([[0.18], rest])
            assert (filter_logits(np.log(p), top_p=0.9) > -np.inf).sum() >= 5
    flat = np.log(np.concatenate([[0.18, 0.17, 0.16, 0.15, 0.14], 0.2 * tail[:80] / tail[:80].sum()]))
    assert (filter_logits(sure, top_k=5) > -np.inf).sum() == (filter_logits(flat, top_k=5) > -np.inf).sum() == 5


def test_decode_refuses_a_cache_another_model_filled():
    """A cache holds one model's keys and values. Before, a cache filled by one model and read by
    another of the same shape gave the second model's logits computed against the first one's
    keys and values: plausible numbers, and wrong. Now the second model is refused,
    and so is a cache filled by hand (decode_step or append) that decode then reads."""
    config, weights, tok = load_model()
    other = {name: a * np.asarray(1.01, a.dtype) if name.endswith("w_k") else a for name, a in weights.items()}
    ids = tok.encode("Attention is")
    cache = new_cache(config)
    decode(weights, config, ids[:6], cache)
    with pytest.raises(ValueError, match=r"another model's tokens \(its weights differ from these\).*new_cache\(config\) "
                                         r"for each model"):
        decode(other, config, ids[6:], cache)
    assert cache.length(0) == 6  # nothing was appended
    np.testing.assert_allclose(decode(weights, config, ids[6:], cache)[0], decode(weights, config, ids, new_cache(config))[0, 6:],
                               atol=1e-9)  # its own model goes on as before
    by_hand = new_cache(config)
    zeros = np.zeros((1, config.n_heads, 2, config.d_head))
    for layer in range(config.n_layers):
        by_hand.append(layer, zeros, zeros)
    with pytest.raises(ValueError, match=r"cache holds 2 tokens, 2 of them not put there by decode"):
        decode(weights, config, ids[:1], by_hand)
    # keys added by hand after decode: refused too
    for layer in range(config.n_layers):
        cache.append(layer, zeros[:, :, :1], zeros[:, :, :1])
    with pytest.raises(ValueError, match=r"cache holds 13 tokens, 1 of them not put there by decode"):
        decode(weights, config, ids[:1], cache)
    # the same weights under another config: another rope_base or method gives other keys
    # (the cache of the rope model read as base 500 gave logits 0.26 off both models)
    import dataclasses

    for change in (dict(rope_base=500.0), dict(method="none")):
        cache = new_cache(config)
        decode(weights, config, ids[:3], cache)
        with pytest.raises(ValueError, match=r"cache holds the keys and values that config .* gave, not config"):
            decode(weights, dataclasses.replace(config, **change), ids[3:5], cache)
        assert cache.length(0) == 3
    # one value of one weight changed, anywhere: another model
    for name, at in (("0.w_q", (0, 1)), ("tok_emb", (1, 1)), ("ln_f.b", (5,))):
        cache = new_cache(config)
        decode(weights, config, ids[:3], cache)
        changed = dict(weights, **{name: weights[name].copy()})
        changed[name][at] += 1e-9
        with pytest.raises(ValueError, match=r"another model's tokens"):
            decode(changed, config, ids[3:5], cache)
