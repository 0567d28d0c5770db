"""The live generator (docs/javascripts/generator.js) against mhalib: PCG32 against its published
reference output and draw for draw against mhalib.Pcg32; the JavaScript forward pass, with and
without its KV cache, against tiny_numpy.forward at every position; its filters and sampler against
filter_logits and sample_next; the same text from the same seed in Python and in JavaScript; the
payload (lossless, its size); and the widget on the built page (messages for bad input, both ways
give the same text). The numerics run in node (one process for all of them); every expected value
comes from mhalib or from the PCG32 reference, never from the JavaScript itself."""
from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import subprocess
import zlib

import numpy as np
import pytest

from helpers import ROOT
from mhalib import Pcg32, filter_logits, sample_next
from mhalib.models.chars import CharTokenizer
from mhalib.models.tiny_generate import generate
from mhalib.models.tiny_numpy import forward, parameter_shapes

DRIVER = ROOT / "tests" / "js" / "generator_driver.js"
#: pcg32-demo's first six outputs of pcg32_srandom(42, 54) (the reference C implementation).
REFERENCE_42_54 = [0xA15C02B7, 0x7B47F409, 0xBA1D3330, 0x83D2F293, 0xBFA4784B, 0xCBED606E]
SEEDS = [(42, 54), (0, 0), (2**64 - 1, 2**63 + 5), (123456789, 1)]
NEG = float("-inf")
#: Rows with ties, -inf and a top-p boundary that falls exactly on a cumulative sum.
FILTER_CASES = [
    ([3.0, 1.0, 1.0, 0.0], dict(top_k=2)),
    ([0.0, 0.0, 0.0, 0.0], dict(top_p=0.5)),
    ([1.0, 1.0, 1.0, 0.0, 0.0], dict(top_p=0.6)),
    ([2.0, NEG, 2.0, 1.0, 0.5, NEG], dict(temperature=0.7, top_k=3, top_p=0.9)),
    (np.log([0.5, 0.25, 0.15, 0.1]).tolist(), dict(top_p=0.7)),
    ([5.0, 5.0, 4.0, 4.0, 4.0, 1.0], dict(temperature=2.0, top_k=3)),
    ([1.0, 2.0, 3.0], dict(top_k=10, top_p=1.0)),
    ([0.3, -1.2, 2.5, 2.5, 0.0], dict(temperature=1.3, top_p=0.35)),
]
#: Temperatures so near 0 that logits / T passes the largest float64 (the reader may type them):
#: the last row does not overflow.
OVERFLOW_CASES = [([1.0, 2.0, 3.0, -1.0], dict(temperature=1e-320)), ([0.5, NEG, 0.0], dict(temperature=5e-324)),
                  ([1.0, 2.0, 3.0, -1.0], dict(temperature=1e-320, top_k=2, top_p=0.5)),
                  ([1e-10, 0.0, -1e-10], dict(temperature=1e-300))]
SAMPLE_OPTIONS = [dict(), dict(temperature=0.8, top_k=20, top_p=0.95), dict(temperature=1.5, top_p=0.5),
                  dict(top_k=3)]
TEXT_CASES = [("Attention is ", 7, dict(temperature=0.9, top_k=30, top_p=0.9), 115),
              ("The cache ", 2024, dict(temperature=1.2), 60)]
#: New characters of the full-pass runs: each step redoes the whole prefix (about 2 ms per
#: character of it in node here), so they write the first FULL characters of the same texts.
FULL = 30


def js_options(o: dict) -> dict:
    return dict(temperature=o.get("temperature", 1.0), topK=o.get("top_k"), topP=o.get("top_p"))


def js_row(row) -> list:
    return ["-inf" if v == NEG else float(v) for v in row]


def from_js(row) -> np.ndarray:
    return np.array([NEG if v == "-inf" else v for v in row], dtype=np.float64)


@pytest.fixture(scope="module")
def gen():
    from figures.generation import lm_generator

    return lm_generator


@pytest.fixture(scope="module")
def model(gen):
    info, config, weights = gen.load()
    return info, config, weights, CharTokenizer(info["vocab"])


@pytest.fixture(scope="module")
def data(gen):
    return gen.data()


@pytest.fixture(scope="module")
def payload_text(gen, data):
    return json.dumps(gen.explorer(data), separators=(",", ":"), allow_nan=False)  # as the build writes it


@pytest.fixture(scope="module")
def inputs(model):
    """Fixed token sequences: the held-out text's first 128 characters (the whole context) and 37
    random ids."""
    info, config, _, tok = model
    text = info["corpus"]["held_out_text"][: config.max_len]
    return [tok.encode(text).tolist(), np.random.default_rng(5).integers(0, config.vocab, 37).tolist()]


@pytest.fixture(scope="module")
def logits_rows(model):
    """200 rows of logits, (200, V), spread like a model's."""
    V = model[1].vocab
    return np.random.default_rng(11).normal(0, 2.5, (200, V))


@pytest.fixture(scope="module")
def js(tmp_path_factory, payload_text, inputs, logits_rows, model):
    """Every question for generator.js, asked of one node process; the answers in order."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the generator's JavaScript runs in node for these tests")
    path = tmp_path_factory.mktemp("gen") / "payload.json"
    path.write_text(payload_text)
    tok = model[3]
    requests = [dict(op="load", path=str(path))]
    requests += [dict(op="pcg", seed=str(s), stream=str(t), n=1000) for s, t in SEEDS]
    for tokens in inputs:
        requests += [dict(op="forward", tokens=tokens), dict(op="cached", tokens=tokens)]
    requests += [dict(op="filter", rows=[js_row(r)], options=js_options(o)) for r, o in FILTER_CASES]
    requests += [dict(op="refused", row=js_row(r), options=js_options(o)) for r, o in OVERFLOW_CASES]
    requests += [dict(op="sample", seed=s, rows=[js_row(r) for r in logits_rows], options=js_options(o))
                 for s, o in enumerate(SAMPLE_OPTIONS)]
    for prompt, seed, o, n in TEXT_CASES:
        ids = tok.encode(prompt).tolist()
        for cache in (True, False):
            requests.append(dict(op="generate", prompt=ids, n_new=n if cache else FULL,
                                 options=dict(js_options(o), seed=seed, cache=cache)))
    ids = tok.encode("Attention is ").tolist()
    requests += [dict(op="generate", prompt=ids, n_new=50 if c else FULL, options=dict(seed=None, cache=c))
                 for c in (True, False)]
    requests += [dict(op="check", prompt=p, n_new=n) for p, n in
                 [("", 10), ("Attention é and ü", 10), ("abc", 126), ("abc", 125), ("abc", 0),
                  ("a" * 128, 1), ("a" * 127, 2), ("a", 128)]]
    requests.append(dict(op="counted", n=[0, 1, 2, 1234], noun="character"))
    res = subprocess.run([node, str(DRIVER)], input=json.dumps(requests), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    answers = json.loads(res.stdout)[1:]
    out = {}
    for r, a in zip(requests[1:], answers):
        out.setdefault(r["op"], []).append(a)
    return out


# ---- PCG32 ------------------------------------------------------------------------------------

def test_pcg32_gives_the_reference_demos_output():
    rng = Pcg32(42, 54)
    assert [rng.next_u32() for _ in range(6)] == REFERENCE_42_54


def _pcg32_by_hand(seed: int, stream: int, n: int) -> list[int]:
    """O'Neill's pcg32_srandom_r / pcg32_random_r written out again, for the other seeds."""
    m = 2**64
    inc, state, out = (stream * 2 + 1) % m, 0, []

    def step(s):
        x = ((s >> 18) ^ s) >> 27 & 0xFFFFFFFF
        r = s >> 59
        return (s * 6364136223846793005 + inc) % m, ((x >> r) | (x << (32 - r))) & 0xFFFFFFFF

    state, _ = step(state)
    state, _ = step((state + seed) % m)
    for _ in range(n):
        state, v = step(state)
        out.append(v)
    return out


@pytest.mark.parametrize("seed, stream", SEEDS[1:])
def test_pcg32_matches_the_algorithm_written_again(seed, stream):
    rng = Pcg32(seed, stream)
    assert [rng.next_u32() for _ in range(50)] == _pcg32_by_hand(seed, stream, 50)


def test_pcg32_random_is_one_draw_per_element_over_two_to_the_32():
    a, b = Pcg32(9), Pcg32(9)
    u = a.random((2, 3))
    assert u.shape == (2, 3) and u.dtype == np.float64
    assert u.ravel().tolist() == [b.next_u32() / 2**32 for _ in range(6)]
    assert a.random().shape == () and a.random(4).shape == (4,) and a.random(0).shape == (0,)


@pytest.mark.parametrize("bad, error, match", [
    (1.5, TypeError, "seed must be an integer in \\[0, 2\\*\\*64\\), got 1.5"), (True, TypeError, "seed"),
    ("7", TypeError, "seed"), (-1, ValueError, "got -1"), (2**64, ValueError, "got 18446744073709551616"),
])
def test_pcg32_refuses_a_bad_seed_naming_it(bad, error, match):
    with pytest.raises(error, match=match):
        Pcg32(bad)
    with pytest.raises(error, match=match.replace("seed", "stream")):
        Pcg32(1, bad)


def test_pcg32_refuses_a_bad_shape():
    with pytest.raises(TypeError, match="shape must be an int >= 0 or a tuple"):
        Pcg32(1).random((2, -1))


@pytest.mark.parametrize("shape", [(2**62, 4), (2**32, 2**32), 10**12])
def test_pcg32_refuses_a_shape_past_memory_at_once(shape):
    # Before, (2**62, 4) wrapped to 0 numbers in an int64 product and failed in reshape, and
    # 10**12 filled a Python list for hours.
    with pytest.raises(MemoryError, match=r"Pcg32.random's [0-9,]+ numbers of shape .* more than this machine's"):
        Pcg32(1).random(shape)


def test_sample_next_takes_a_pcg32_and_refuses_other_generators():
    import random

    x = [0.0, 1.0, 2.0]
    assert sample_next(x, Pcg32(3)) == sample_next(x, Pcg32(3))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator.*or an mhalib.Pcg32.*Random"):
        sample_next(x, random.Random(3))


@pytest.mark.parametrize("logits, options, expected", [
    (np.log([0.5, 0.25, 0.15, 0.1]), dict(top_p=0.7), [2 / 3, 1 / 3, 0, 0]),
    ([2.0, 1.0, 0.0, -1.0, -3.0], dict(temperature=1.5, top_k=4), None),
])
def test_sample_next_with_pcg32_draws_the_filtered_softmax(logits, options, expected):
    """Chi-square of 20,000 draws against softmax(filter_logits(...)), at the 0.1 % level."""
    z = filter_logits(logits, **options)
    p = np.exp(z - z.max())
    p /= p.sum()
    if expected is not None:
        np.testing.assert_allclose(p, expected, atol=1e-12)
    n = 20_000
    ids = sample_next(np.tile(np.asarray(logits, dtype=float), (n, 1)), Pcg32(2024), **options)  # (n, V) -> (n,)
    counts = np.bincount(ids, minlength=len(p))
    assert counts[p == 0].sum() == 0
    kept = p > 0
    chi2 = float((((counts - n * p) ** 2)[kept] / (n * p[kept])).sum())
    critical = {1: 10.83, 3: 16.27}[int(kept.sum()) - 1]  # chi-square 99.9 % points
    assert chi2 < critical, (chi2, counts, n * p)


def test_js_pcg32_gives_pythons_first_1000_outputs(js):
    for (seed, stream), got in zip(SEEDS, js["pcg"]):
        rng = Pcg32(seed, stream)
        assert got == [rng.next_u32() for _ in range(1000)], (seed, stream)
    assert js["pcg"][0][:6] == REFERENCE_42_54


# ---- the forward pass ---------------------------------------------------------------------------

def test_js_forward_matches_numpy_at_every_position_with_and_without_the_cache(js, model, inputs):
    _, config, weights, _ = model
    for n, tokens in enumerate(inputs):
        expected = forward(weights, config, np.asarray(tokens))["logits"][0]  # (T, V)
        full = np.asarray(js["forward"][n]).reshape(expected.shape)
        cached = np.asarray(js["cached"][n]).reshape(expected.shape)
        assert np.abs(full - expected).max() <= 1e-5, np.abs(full - expected).max()
        assert np.abs(cached - expected).max() <= 1e-5, np.abs(cached - expected).max()
        assert (full.argmax(-1) == expected.argmax(-1)).all()


# ---- filters and sampler --------------------------------------------------------------------------

def test_js_filters_equal_filter_logits(js):
    for (row, options), got in zip(FILTER_CASES, js["filter"]):
        expected = filter_logits(row, **options)
        got = from_js(got[0])
        assert (np.isneginf(got) == np.isneginf(expected)).all(), (row, options, got, expected)
        keep = np.isfinite(expected)
        np.testing.assert_allclose(got[keep], expected[keep], rtol=0, atol=1e-12)


def test_js_refuses_a_temperature_that_overflows_the_logits_as_filter_logits_does(js):
    # Before, x / T was +-Infinity, the softmax NaN, and every draw token 0 (a line break) in silence.
    *overflowing, fine = zip(OVERFLOW_CASES, js["refused"])
    for (row, options), message in overflowing:
        with pytest.raises(ValueError, match="overflow: logits / temperature"):
            filter_logits(row, **options)
        assert message is not None and "overflow: logits / temperature" in message, (row, options, message)
        assert f"temperature={options['temperature']}" in message and "raise temperature" in message
    (row, options), message = fine
    assert message is None and np.isfinite(filter_logits(row, **options)).all()


def test_js_sampler_draws_what_sample_next_draws_for_200_steps(js, logits_rows):
    for seed, (options, got) in enumerate(zip(SAMPLE_OPTIONS, js["sample"])):
        rng = Pcg32(seed)
        expected = [sample_next(row, rng, **options) for row in logits_rows]
        assert got == expected, (options, [i for i, (a, b) in enumerate(zip(got, expected)) if a != b][:5])
        assert len(set(expected)) > 1


# ---- whole texts --------------------------------------------------------------------------------------

def test_the_same_seed_writes_the_same_text_in_python_and_javascript(js, model):
    """Python: numpy's full forward pass at every step, sample_next, Pcg32. JavaScript: with its
    KV cache (175 sampled characters, 50 greedy ones) and with the full pass at every step (the
    first FULL characters of each: one draw per character, so a shorter run is a prefix)."""
    _, config, weights, tok = model
    runs = iter(js["generate"])
    for prompt, seed, options, n in TEXT_CASES:
        ids = tok.encode(prompt)
        expected = generate(weights, config, ids, n, rng=Pcg32(seed), **options).tolist()
        cached, full = next(runs), next(runs)
        assert cached == expected, (prompt, tok.decode(cached), tok.decode(expected))
        assert full == expected[: len(ids) + FULL]
    greedy = generate(weights, config, tok.encode("Attention is "), 50).tolist()
    assert next(runs) == greedy and next(runs) == greedy[: 13 + FULL]


def test_the_static_figures_text_is_pythons_sample(data, model):
    """data(): generated by mhalib (Pcg32, sample_next), and what the widget writes by default."""
    tok = model[3]
    assert data["sampled"] == tok.decode(data["sampled_ids"][len(data["prompt"]):])
    assert data["sampled_ids"][: len(data["prompt"])] == tok.encode(data["prompt"]).tolist()
    assert len(data["sampled"]) == data["n_new"] == len(data["greedy"])


def test_lm_generator_is_a_figure_with_the_generator_widget(gen, data):
    import figures

    script = figures.scripts()["lm_generator"]
    assert (script.kind, script.explorer, script.chapter) == ("figure", "generator", "generation")
    fig = gen.draw(data)
    texts = " ".join(t.get_text() for t in fig.texts).replace("\n", "")
    assert data["sampled"][:20] in texts and data["greedy"][:20] in texts  # wrapped, so the first words
    assert f"seed {data['seed']}" in texts


def test_the_pages_words_about_the_static_run_name_its_settings(gen):
    # The explorer's alt text and caption are prose, not {{ value }}s: held to the script's constants.
    line = next(x for x in (ROOT / "docs" / "kv_cache.md").read_text(encoding="utf-8").splitlines()
                if x.startswith("{{ explorer lm_generator"))
    alt, caption = re.search(r'alt="([^"]*)" caption="([^"]*)"', line).groups()
    assert f"the prompt {gen.PROMPT.strip()}," in alt and f"sampled with seed {gen.SEED}," in alt
    settings = f"sampled with seed {gen.SEED} (temperature {gen.TEMPERATURE:g}, top-k {gen.TOP_K}, top-p {gen.TOP_P:g})"
    assert settings in caption, (settings, caption)


def test_js_names_the_faults_of_a_request(js):
    empty, foreign, too_long, fits, zero, full, one_left, one_char = js["check"]
    assert "prompt is empty" in empty
    assert "the characters “é”, “ü”" in foreign and "no token for them" in foreign
    assert "(3 characters) plus 126 new ones makes 129, past the model's context of 128" in too_long
    assert "at most 125 new characters" in too_long
    assert fits is None
    assert "at least 1" in zero
    # a prompt that fills the context was told "ask for at most 0 new characters", against the
    # field's minimum of 1; one character read "1 characters" (pass thirty)
    assert "at most 0" not in full and "shorten the prompt to at most 127 characters" in full, full
    assert "ask for at most 1 new character," in one_left and "(127 characters) plus 2 new ones" in one_left
    assert "The prompt (1 character) plus 128 new ones makes 129" in one_char, one_char
    assert js["counted"] == [["0 characters", "1 character", "2 characters", "1,234 characters"]]


def test_generate_refuses_a_text_past_the_context(model):
    _, config, weights, tok = model
    with pytest.raises(ValueError, match="prompt \\(3 tokens\\) \\+ n_new \\(126\\) = 129 passes the model's context"):
        generate(weights, config, tok.encode("abc"), 126)
    with pytest.raises(ValueError, match="n_new must be an integer >= 1"):
        generate(weights, config, tok.encode("abc"), 0)
    with pytest.raises(ValueError, match="prompt must be one sequence of token ids \\(1-D\\), got shape \\(2, 3\\)"):
        generate(weights, config, np.ones((2, 3), dtype=int), 4)
    with pytest.raises(TypeError, match="config must be a TinyConfig, got dict"):
        generate(weights, config.to_dict(), tok.encode("abc"), 4)
    # an empty prompt was refused as "tokens must have shape (B, T) or (T,) ..., got (1, 0)" (pass thirty)
    with pytest.raises(ValueError, match="prompt must hold at least one token id, got none"):
        generate(weights, config, tok.encode(""), 4)
    assert repr(Pcg32(3, 4)) == "Pcg32(seed=3, stream=4)"


# ---- the payload ------------------------------------------------------------------------------------------

def test_payload_holds_the_stored_weights_exactly_and_stays_under_2_mb(payload_text, model):
    _, config, weights, _ = model
    p = json.loads(payload_text)
    assert [t["name"] for t in p["weights"]] == list(parameter_shapes(config))
    for t in p["weights"]:
        raw = zlib.decompress(base64.b64decode(t["data"]))  # n high bytes, then n low bytes
        n = len(raw) // 2
        halves = (np.frombuffer(raw[:n], np.uint8).astype(np.uint16) << 8) | np.frombuffer(raw[n:], np.uint8)
        stored = weights[t["name"]]
        assert tuple(t["shape"]) == stored.shape
        assert (halves.view(np.float16).reshape(stored.shape).view(np.uint16) == stored.view(np.uint16)).all()
    assert p["context"] == config.max_len and p["vocab"] == model[0]["vocab"]
    size, packed = len(payload_text.encode()), len(gzip.compress(payload_text.encode(), 6))
    assert size <= 2_000_000 and packed < size, (size, packed)


@pytest.mark.build
def test_the_bench_finds_the_payload_the_page_fetches(built_site, payload_text):
    from tools import bench_generator

    assert bench_generator.payload_file(built_site).read_text() == payload_text


# ---- the widget on the built page ------------------------------------------------------------------------

@pytest.mark.build
@pytest.mark.browser
def test_the_widget_names_bad_input_and_both_ways_write_pythons_text(browser, site_url, model, data):  # noqa: F811
    from tools.screenshots import goto

    _, config, weights, tok = model
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        goto(page, site_url + "kv_cache/")
        box = page.locator(".mha-explorer[data-explorer=generator]")
        ui = box.locator(".mha-explorer-ui[data-ready]")
        ui.wait_for()
        assert page.locator(".mha-explorer-static[data-static-for=generator]").is_hidden()
        defaults = dict(Prompt=data["prompt"], **{"New characters": str(data["n_new"]), "Seed": str(data["seed"]),
                        "Temperature": f"{data['temperature']:g}", "Top-k": str(data["top_k"]),
                        "Top-p": f"{data['top_p']:g}"})
        assert {k: box.get_by_label(k, exact=True).input_value() for k in defaults} == defaults
        assert ui.get_attribute("data-model") is None  # nothing fetched before the reader asks
        runs = 0

        def generate_in_page(expect_text=True):
            nonlocal runs
            box.get_by_role("button", name="Generate").click()
            runs += 1
            page.wait_for_function("([el, n]) => el.dataset.runs === String(n) || el.querySelector('.mha-gen-error').textContent",
                                   arg=[ui.element_handle(), runs], timeout=120_000)
            return box.locator(".mha-gen-error").text_content()

        def fill(**values):
            for label, value in values.items():
                box.get_by_label(label, exact=True).fill(value)

        fill(Prompt="")
        assert "The prompt is empty" in generate_in_page()
        runs -= 1  # refused before a run
        fill(Prompt="Attention ∑ and €")
        msg = generate_in_page()
        assert "the characters “∑”, “€”" in msg, msg
        fill(Prompt="Attention is ", **{"New characters": "120"})
        assert "makes 133, past the model's context of 128 characters" in generate_in_page()
        fill(**{"New characters": "40", "Top-p": "1.5"})
        assert "Top-p must be greater than 0 and at most 1" in generate_in_page()
        runs -= 1
        fill(**{"Top-p": "0.9", "Temperature": "0"})
        assert "Temperature must be greater than 0" in generate_in_page()
        runs -= 1
        fill(Temperature="0.9", Seed="7", **{"Top-k": "30"})
        text = {}
        for cache in (True, False):
            box.get_by_label("Recompute the full pass every step (no cache)").set_checked(not cache)
            assert generate_in_page() == ""
            text[cache] = ui.get_attribute("data-text")
            stats = box.locator(".mha-gen-stats").text_content()
            assert "NaN" not in stats and "40 characters" in stats and "characters/s" in stats
        expected = generate(weights, config, tok.encode("Attention is "), 40, rng=Pcg32(7), temperature=0.9, top_k=30,
                            top_p=0.9)
        assert text[True] == text[False] == tok.decode(expected[13:])
        verdict = box.locator(".mha-gen-verdict")
        assert verdict.get_attribute("data-identical") == "true" and "identical" in verdict.text_content()
        assert box.locator(".mha-gen-text").text_content() == "Attention is " + text[True]
        assert box.locator(".mha-gen-runs th[scope=row]").all_text_contents() == ["KV cache", "full pass"]
        # Stop, pressed while the full pass runs: the page answers between two characters (its CPU
        # slowed 8 times for this, so that the 100 characters are not all written before the click)
        fill(**{"New characters": "100"})
        cdp = page.context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 8})
        box.get_by_role("button", name="Generate").click()
        page.wait_for_function("el => el.querySelector('.mha-gen-new').textContent.length >= 3", arg=ui.element_handle())
        box.get_by_role("button", name="Stop").click()
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
        runs += 1
        page.wait_for_function("([el, n]) => el.dataset.runs === String(n)", arg=[ui.element_handle(), runs])
        assert box.locator(".mha-gen-stats").text_content().endswith("· stopped")
        assert 3 <= len(ui.get_attribute("data-text")) < 100
        assert verdict.get_attribute("data-identical") == "true"  # a stopped run is not kept for the comparison
        assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
        assert not errors, errors
    finally:
        page.close()
