"""The extrapolation page's live decoders (figures/experiments/extrapolation_live.py, widget
"extrapolation" in docs/javascripts/tiny_decoder.js): the payload is the stored models rounded
to float16 and make_batch's sequences; the JavaScript forward pass equals mhalib's numpy one
within 1e-5 for every method and RoPE scaling; the accuracy the widget shows equals mhalib's on
the same sequences; its messages for a learned model past its table and for bad lengths; and
the script loads on the extrapolation page only. Every expected value comes from mhalib."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest

import mhalib
from mhalib.models.tiny_numpy import TinyConfig, forward, load_weights, masked_loss_accuracy
from mhalib.models.tiny_tasks import make_batch
from tools.screenshots import goto

SCRIPT = "extrapolation_live"
PAYLOAD = f"figures/{SCRIPT}.explorer.json"
WIDGET = ".mha-explorer[data-explorer=extrapolation]"
KEYS = ("kback_none", "kback_sinusoidal", "kback_learned", "kback_rope", "kback_alibi")
#: The fixed inputs of the equality test: a length past training (learned: its whole table).
T_LONG, T_LEARNED, INPUT_SEED = 64, 32, 7


def _decode(t: dict) -> np.ndarray:
    """A payload tensor as float64, decoded here with numpy (not with the widget's code)."""
    return np.frombuffer(base64.b64decode(t["f16"]), dtype="<f2").astype(np.float64).reshape(t["shape"])


@pytest.fixture(scope="module")
def payload(built_site) -> dict:
    return json.loads((built_site / PAYLOAD).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def models(payload) -> dict:
    """Each stored model as the payload holds it: config and float64 weights."""
    return {key: (TinyConfig.from_dict(m["config"]), {n: _decode(t) for n, t in m["weights"].items()})
            for key, m in payload["models"].items()}


@pytest.fixture(scope="module")
def batch(payload) -> dict:
    return make_batch("kback", len(payload["sequences"]), payload["max_length"], vocab=payload["vocab"],
                      rng=4242, k=payload["k"])


# ---- the payload, without a browser --------------------------------------------------------------

@pytest.mark.build
def test_payload_is_the_stored_models_in_float16_and_make_batchs_sequences(payload, models, batch):
    from figures.experiments.extrapolation_live import WEIGHTS
    assert sorted(payload["models"]) == sorted(KEYS)
    for key, (cfg, w) in models.items():
        stored = load_weights(WEIGHTS, key, cfg)
        assert sorted(w) == sorted(stored)
        for name, a in stored.items():
            np.testing.assert_array_equal(w[name], a.astype(np.float16).astype(np.float64), err_msg=f"{key}/{name}")
    np.testing.assert_array_equal(np.array(payload["sequences"]), batch["tokens"])
    assert (payload["L_train"], payload["k"], payload["max_length"]) == (32, 3, 256)
    size = (len(json.dumps(payload)))
    assert size < 1_000_000, f"payload {size} bytes"  # float16: about 0.97 MB of JSON


def test_one_pass_gives_every_shorter_prefix():
    """extrapolation_live.data() scores the prefixes of one long pass (the model is causal):
    held equal to a pass per length. On the stored weights, without the site: in the fast tier
    this test read the built payload, and so waited for a whole site build (47 s of 123)."""
    from figures.experiments import extrapolation_live as live

    d = live.load()
    kb = d["config"]["tasks"]["kback"]
    cfg = TinyConfig.from_dict(d["weights"]["models"]["kback_alibi"]["config"])
    w = load_weights(live.WEIGHTS, "kback_alibi", cfg)
    tokens = live.evaluation_batch(kb["vocab"], kb["k"])["tokens"]
    long = forward(w, cfg, tokens[:2, :48])["logits"]  # (2, 48, V)
    short = forward(w, cfg, tokens[:2, :20])["logits"]  # (2, 20, V)
    np.testing.assert_allclose(long[:, :20], short, rtol=0, atol=1e-10)


@pytest.mark.build
@pytest.mark.parametrize("variant, L", [("rope", 64), ("rope_ntk", 96), ("alibi", 256), ("learned", 32),
                                        ("learned", 48), ("none", 8)])
def test_static_figure_accuracy_is_a_fresh_mhalib_run(built_site, models, batch, variant, L):
    """The static figure's numbers (its data file) against one forward pass per length here."""
    d = json.loads((built_site / "figures" / f"{SCRIPT}.json").read_text(encoding="utf-8"))
    shown = d["accuracy"][variant][d["lengths"].index(L)]
    key, scaling = d["models"][variant], d["scalings"][variant]
    if variant == "learned" and L > 32:
        assert shown is None  # not defined: no position rows past 32
        return
    acc, _ = _expected(models, batch, key, L, None if scaling == "none" else scaling)
    assert shown == pytest.approx(acc, abs=1e-12)


@pytest.mark.build
def test_the_float16_bound_is_stated_for_the_lengths_it_was_measured_at(built_site):
    """The page said the widget's float16 accuracies are "within 0.0007 of the float32
    originals" while the widget runs every length from 8 to 256, and with a RoPE scaling each
    length is a pass of its own: NTK-aware at 106 differs by 0.0012 (pass twenty-six). The bound
    is the largest gap at the figure's lengths, and the page says so."""
    import re
    from pathlib import Path

    d = json.loads((built_site / "figures" / f"{SCRIPT}.json").read_text(encoding="utf-8"))
    gaps = [abs(a - b) for name in d["accuracy"] for a, b in zip(d["accuracy"][name], d["accuracy_float32"][name])
            if a is not None]
    assert d["max_float16_gap"] == max(gaps) and len(gaps) > 50 and d["n_lengths"] == len(d["lengths"])
    page = re.sub(r"\s+", " ", (Path(__file__).resolve().parents[1] / "docs" / "extrapolation.md").read_text())
    assert ("float16: at the {{ value extrapolation_live n_lengths }} lengths the figure below marks, accuracy within "
            "{{ value extrapolation_live max_float16_gap .4f round=up }} of the float32 originals; at the lengths "
            "between them a scaled RoPE model is a pass of its own and can differ by more)") in page


@pytest.mark.build
def test_the_live_figures_alt_text_says_what_its_data_say(built_site):
    """What the explorer's alt text says in words, which no {{ value }} can give (its lengths are
    values; tests/test_alt_text_numbers.py lists the rest): up to the training length sinusoidal,
    learned and RoPE are at 1, ALiBi a little lower and NoPE far lower; past it position
    interpolation collapses at once, sinusoidal and NoPE fall fast, plain RoPE holds to 64 and then
    falls, NTK-aware RoPE holds longer, ALiBi declines slowly, learned is not defined."""
    import re
    from pathlib import Path

    page = re.sub(r"\s+", " ", (Path(__file__).resolve().parents[1] / "docs" / "extrapolation.md").read_text())
    for phrase in ("learned and RoPE are at 1, ALiBi a little lower and NoPE far lower",
                   "past it position interpolation collapses at once, sinusoidal and NoPE fall fast, plain RoPE "
                   "holds to 64 and then falls, NTK-aware RoPE holds longer, ALiBi declines slowly, learned is not "
                   "defined"):
        assert phrase in page, f"docs/extrapolation.md no longer says {phrase!r}: check the claim again"
    d = json.loads((built_site / "figures" / f"{SCRIPT}.json").read_text(encoding="utf-8"))
    acc, lengths, L = d["accuracy"], d["lengths"], d["L_train"]
    trained = past = lengths.index(L) + 1  # [:trained]: the lengths up to L; [past]: the first length past it
    for method in ("sinusoidal", "learned", "rope"):
        assert acc[method][:trained] == [1.0] * trained, method
    assert all(0.9 < a < 1 for a in acc["alibi"][:trained])  # a little lower
    assert max(acc["none"][:trained]) < 0.7  # far lower
    assert acc["rope_interpolation"][past] < 0.1  # collapses at once
    assert acc["sinusoidal"][past] < 0.7 and acc["none"][-1] < acc["none"][trained - 1] / 2  # fall fast
    at64 = lengths.index(64)
    assert min(acc["rope"][:at64 + 1]) > 0.95 and acc["rope"][at64 + 1] < 0.9  # holds to 64, then falls
    ntk, rope = acc["rope_ntk"], acc["rope"]  # holds longer: as high up to 64, higher past it
    assert min(ntk[:at64 + 1]) > 0.95 and all(n > r for n, r in zip(ntk[at64 + 1:], rope[at64 + 1:]))
    steps = [a - b for a, b in zip(acc["alibi"][trained - 1:], acc["alibi"][trained:])]
    assert all(0 < step < 0.05 for step in steps) and acc["alibi"][-1] > 0.7  # declines slowly
    assert acc["learned"][past:] == [None] * (len(lengths) - past)  # not defined


# ---- the widget in Chromium ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def page(browser, site_url):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    p = ctx.new_page()
    errors = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    goto(p, site_url + "extrapolation/")
    p.wait_for_selector(f"{WIDGET} .mha-explorer-ui[data-ready]", timeout=60_000)
    p.first_state = p.get_attribute(f"{WIDGET} .mha-td-result", "data-state")  # before any scrolling
    src = p.get_attribute(f"{WIDGET} .mha-explorer-data", "data-src")
    p.evaluate("""async (u) => {
        const data = await (await fetch(u)).json();
        window.__models = {};
        for (const [k, m] of Object.entries(data.models)) window.__models[k] = mhaTinyDecoder.loadModel(m);
    }""", src)
    p.errors = errors
    yield p
    assert not errors, errors
    ctx.close()


def _js_forward(page, key: str, tokens, options=None) -> dict:
    return page.evaluate("""([key, tokens, options]) => {
        const out = mhaTinyDecoder.forward(__models[key], tokens, options || {});
        return {logits: Array.from(out.logits), attention: out.attention.map(l => l.map(h => Array.from(h)))};
    }""", [key, [int(t) for t in tokens], options])


CASES = [("kback_none", None), ("kback_sinusoidal", None), ("kback_learned", None), ("kback_rope", None),
         ("kback_rope", "interpolation"), ("kback_rope", "ntk"), ("kback_alibi", None)]


@pytest.mark.build
@pytest.mark.browser
@pytest.mark.parametrize("key, scaling", CASES)
def test_js_forward_equals_mhalib(page, models, key, scaling):
    cfg, w = models[key]
    T = T_LEARNED if cfg.method == "learned" else T_LONG
    tokens = make_batch("kback", 1, T, vocab=cfg.vocab, rng=INPUT_SEED)["tokens"][0]
    factor = T / 32
    kw = dict(rope_scaling=scaling, rope_factor=factor) if scaling else {}
    want = forward(w, cfg, tokens, **kw)
    got = _js_forward(page, key, tokens, dict(scaling=scaling, factor=factor) if scaling else None)
    logits = np.array(got["logits"]).reshape(T, cfg.vocab)  # (T*V,) -> (T, V)
    np.testing.assert_allclose(logits, want["logits"][0], rtol=0, atol=1e-5)
    for l, A in enumerate(want["attention"]):
        np.testing.assert_allclose(np.array(got["attention"][l]).reshape(cfg.n_heads, T, T), A[0], rtol=0, atol=1e-8)


@pytest.mark.build
@pytest.mark.browser
def test_js_refuses_what_mhalib_refuses(page, models):
    cfg, w = models["kback_learned"]
    tokens = list(range(33))
    with pytest.raises(ValueError):
        forward(w, cfg, np.array(tokens) % cfg.vocab)
    message = page.evaluate("""(tokens) => { try { mhaTinyDecoder.forward(__models.kback_learned, tokens); return null; }
                               catch (e) { return e.message; } }""", [t % cfg.vocab for t in tokens])
    assert message.startswith("no position rows past 32: not defined")
    for bad in ([0, 32], [0, -1], [0, 1.5], []):
        message = page.evaluate("""(tokens) => { try { mhaTinyDecoder.forward(__models.kback_rope, tokens); return null; }
                                   catch (e) { return e.message; } }""", bad)
        assert message and message.startswith("tokens must be"), (bad, message)
    message = page.evaluate("""() => { try { mhaTinyDecoder.forward(__models.kback_alibi, [1, 2], {scaling: 'ntk', factor: 2});
                               return null; } catch (e) { return e.message; } }""")
    assert "RoPE model only" in message
    message = page.evaluate("""() => { try { mhaTinyDecoder.forward(__models.kback_rope, [1, 2], {scaling: 'ntk', factor: 0.5});
                               return null; } catch (e) { return e.message; } }""")
    assert message.startswith("factor must be a number >= 1")
    # a weight that is not finite (float16 NaN, bits 0x7e00) is refused by name, never run
    message = page.evaluate("""() => { try { mhaTinyDecoder.decodeTensor({shape: [2], f16: btoa('\\x00\\x00\\x00\\x7e')}, 'w_q');
                               return null; } catch (e) { return e.message; } }""")
    assert message.startswith("weights[w_q] holds NaN at index 1")


@pytest.mark.build
@pytest.mark.browser
def test_js_reads_every_float16_as_numpy_does(page):
    got = np.array(page.evaluate("""() => Array.from({length: 65536}, (_, b) => {
        const v = mhaTinyDecoder.halfToFloat(b); return Number.isNaN(v) ? 'nan' : v === Infinity ? 'inf'
            : v === -Infinity ? '-inf' : Object.is(v, -0) ? '-0' : v; })"""), dtype=object)
    want = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float64)
    as_float = np.array([float(v) for v in got])
    np.testing.assert_array_equal(as_float, want)  # NaN where NaN, infinities and every finite value exact
    real = ~np.isnan(want)
    assert np.array_equal(np.signbit(as_float[real]), np.signbit(want[real]))  # -0 is -0


@pytest.mark.build
@pytest.mark.browser
def test_js_alibi_slopes_are_mhalibs(page):
    for H in (1, 2, 3, 4, 6, 8, 12, 16, 32):
        js = page.evaluate("(H) => mhaTinyDecoder.alibiSlopes(H)", H)
        np.testing.assert_allclose(js, mhalib.alibi_slopes(H), rtol=1e-15)
        exact = [i for i in range(H) if float(np.log2(mhalib.alibi_slopes(H)[i])).is_integer()]
        assert [js[i] for i in exact] == [mhalib.alibi_slopes(H)[i] for i in exact], H  # 2^-1 is 0.5, bit for bit


@pytest.mark.build
@pytest.mark.browser
def test_the_widget_writes_no_weight_or_accuracy_as_zero_or_all_that_is_not(page):
    """A cell's weight and the accuracy were toFixed(3): a weight of 3.2e-5 read "0.000" and an
    accuracy of 0.99996 "1.000" (beside "99,996 of 100,000 right")."""
    cases = [(3.2e-5, 3, "3.2e-5"), (0.99996, 3, "0.99996"), (0.9996, 2, "0.9996"), (1.0, 3, "1.000"),
             (0.0, 3, "0.000"), (0.25, 2, "0.25"), (0.0004, 3, "4.0e-4"), (0.0005, 3, "0.001")]
    got = page.evaluate("cases => cases.map(([v, d]) => mhaTinyDecoder.shareText(v, d))", [[v, d] for v, d, _ in cases])
    assert got == [text for *_, text in cases]


def _set(page, method=None, scaling=None, length=None):
    box = page.locator(WIDGET)
    if method:
        box.get_by_label("method", exact=True).select_option(value=method)
    if scaling:
        box.get_by_label("RoPE scaling").select_option(value=scaling)
    if length is not None:
        box.locator("input[type=number]").fill(str(length))
        box.locator("input[type=number]").dispatch_event("change")


def _expected(models, batch, key, L, scaling=None):
    cfg, w = models[key]
    kw = dict(rope_scaling=scaling, rope_factor=max(1.0, L / 32)) if scaling else {}
    logits = forward(w, cfg, batch["tokens"][:, :L], **kw)["logits"]
    _, acc = masked_loss_accuracy(logits, batch["targets"][:, :L], batch["scored"][:, :L])
    return acc, int(batch["scored"][:, :L].sum())


@pytest.mark.build
@pytest.mark.browser
@pytest.mark.parametrize("key, scaling, L", [("kback_rope", "ntk", 80), ("kback_alibi", None, 33),
                                             ("kback_sinusoidal", None, 24)])
def test_widget_accuracy_is_mhalibs(page, models, batch, key, scaling, L):
    _set(page, method=key, scaling=scaling or ("none" if key == "kback_rope" else None), length=L)
    result = page.locator(f"{WIDGET} .mha-td-result")
    page.wait_for_function(
        """([sel, L, m, s]) => { const r = document.querySelector(sel);
           return r.dataset.state === 'done' && r.dataset.length === String(L) && r.dataset.method === m
                  && r.dataset.scaling === s; }""",
        arg=[f"{WIDGET} .mha-td-result", L, models[key][0].method, scaling or "none"], timeout=120_000)
    acc, scored = _expected(models, batch, key, L, scaling)
    assert int(result.get_attribute("data-scored")) == scored == 16 * (L - 3)
    assert float(result.get_attribute("data-accuracy")) == pytest.approx(acc, abs=1e-12)
    text = result.text_content()
    assert f"accuracy {acc:.3f}" in text and f"of {scored} scored positions" in text and "NaN" not in text
    assert page.locator(f"{WIDGET} .mha-td-message").is_hidden()
    # the slider's text states the ratio to the training length (32), after "≈" where two
    # decimals are not it: 33 / 32 = 1.03125 (pass sixty-seven: "1.03 times"), 80 / 32 = 2.5
    ratio = L / 32
    said = f", {'' if float(f'{ratio:.2f}') == ratio else '≈ '}{ratio:.2f} times the training length" if L > 32 else ""
    assert page.locator(f"{WIDGET} input[type=range]").get_attribute("aria-valuetext") == f"{L} tokens{said}"


@pytest.mark.build
@pytest.mark.browser
def test_widget_messages(page):
    box = page.locator(WIDGET)
    message = box.locator(".mha-td-message")
    _set(page, method="kback_learned", length=64)
    page.wait_for_function("(sel) => document.querySelector(sel).dataset.state === 'undefined'",
                           arg=f"{WIDGET} .mha-td-result", timeout=60_000)
    assert message.is_visible() and "no position rows past 32: not defined" in message.text_content()
    assert "not defined" in box.locator(".mha-td-result").text_content()
    assert box.get_by_label("RoPE scaling").is_disabled()  # a scaling is RoPE's only
    for bad in ("300", "12.5", "7"):
        _set(page, length=bad)
        assert "whole number from 8 to 256" in message.text_content() and f'got "{bad}"' in message.text_content()
    _set(page, length=32)  # back within the table: the message goes
    page.wait_for_function("(sel) => document.querySelector(sel).dataset.state === 'done'",
                           arg=f"{WIDGET} .mha-td-result", timeout=60_000)
    assert message.is_hidden() and "NaN" not in box.text_content()
    # the map is keyboard operable: focus it and move with the arrow keys
    canvas = box.locator("canvas.mha-td-map")
    canvas.focus()
    page.keyboard.press("ArrowLeft")
    assert box.locator(".mha-td-readout").text_content().startswith("query 31, key ")


@pytest.mark.build
@pytest.mark.browser
def test_widget_waits_until_it_is_in_view_then_passes_axe(page, root):
    """Far down the page, the models do not run at load; scrolled to, they do, and the running
    widget (selects, slider, curve, map) has no serious or critical axe-core violation."""
    assert page.first_state == "waiting"
    page.locator(WIDGET).scroll_into_view_if_needed()
    page.wait_for_function("(sel) => ['done', 'undefined'].includes(document.querySelector(sel).dataset.state)",
                           arg=f"{WIDGET} .mha-td-result", timeout=60_000)
    page.add_script_tag(path=str(root / "node_modules" / "axe-core" / "axe.min.js"))
    result = page.evaluate("(sel) => axe.run(sel, {resultTypes: ['violations']})", WIDGET)
    bad = [(v["id"], v["impact"], v["nodes"][0]["target"]) for v in result["violations"]
           if v["impact"] in ("serious", "critical")]
    assert not bad, bad


@pytest.mark.build
@pytest.mark.browser
@pytest.mark.xdist_group("tour-desktop")  # reads the tour's desktop visits (tests/tour.py): no page loaded again
@pytest.mark.parametrize("path, wanted", [("extrapolation/", True), ("heads/", False), ("viewer/", False),
                                          ("attention/", False)])
def test_the_script_loads_on_the_extrapolation_page_only(tour, path, wanted):
    v = tour.visit("light", path)
    asked = [url for url in v.requests if url.endswith("/javascripts/tiny_decoder.js")]
    assert len(asked) == (1 if wanted else 0)
    assert ("extrapolation" in v.started) == wanted and ("extrapolation" in v.explorers) == wanted
    assert not v.console, v.console


@pytest.mark.build
@pytest.mark.browser
def test_running_widget_fits_a_phone(browser, site_url):
    """At 390 px, once the models ran (curve and map drawn): nothing wider than the widget or the
    page, and no text under 11 px. The tour sees the widget before it runs (it starts in view)."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    p = ctx.new_page()
    try:
        goto(p, site_url + "extrapolation/")
        p.wait_for_selector(f"{WIDGET} .mha-explorer-ui[data-ready]", timeout=60_000)
        p.locator(WIDGET).scroll_into_view_if_needed()
        p.wait_for_function("(sel) => document.querySelector(sel).dataset.state === 'done'",
                            arg=f"{WIDGET} .mha-td-result", timeout=60_000)
        got = p.evaluate("""(sel) => {
            const ui = document.querySelector(sel + ' .mha-explorer-ui'), box = ui.getBoundingClientRect();
            const all = Array.from(ui.querySelectorAll('*')).filter(e => e.getClientRects().length);
            return {page: document.documentElement.scrollWidth,
                    outside: all.filter(e => { const r = e.getBoundingClientRect();
                        return r.width && (r.left < box.left - 1 || r.right > box.right + 1); }).map(e => e.tagName),
                    small: all.filter(e => Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim())
                        && parseFloat(getComputedStyle(e).fontSize) < 11).map(e => e.textContent.slice(0, 20)),
                    map: document.querySelector(sel + ' canvas').getBoundingClientRect().width};
        }""", WIDGET)
        assert got["page"] <= 390 and not got["outside"] and not got["small"], got
        assert got["map"] >= 260  # the attention map keeps cells of about 7 px or more
    finally:
        ctx.close()
