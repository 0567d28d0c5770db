"""The real-model attention viewer ("bert_viewer"): its payload against a fresh run of mhalib's
forward pass, its size, its head-type scores and labels, the page's claims, and the viewer
itself in Chromium (the weights it shows are mhalib's, exactly as rounded)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mhalib import examples
from mhalib.models import bert
from mhalib.models.head_analysis import HEAD_TYPES, head_scores
from helpers import viewer_amount, viewer_code, viewer_score, viewer_text
from tools.screenshots import goto

HALF = 0.5e-3  # rounding to 3 decimals moves a weight by at most this
HALF_SCORE = 0.5e-2  # a score, shown to 2 decimals
B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


@pytest.fixture(scope="module")
def viewer():
    from figures.real_model import bert_viewer

    return bert_viewer


@pytest.fixture(scope="module")
def data(viewer):
    return viewer.data()


@pytest.fixture(scope="module")
def payload(viewer, data):
    # as the build writes it (figures/_kit/build.py): compact JSON, parsed back
    return json.loads(json.dumps(viewer.explorer(data), separators=(",", ":")))


@pytest.fixture(scope="module")
def reference():
    """Tokens and attentions of every built-in sentence, from a fresh forward pass (no cache)."""
    model = bert.load_model()
    out = []
    for text in examples.REAL_SENTENCES:
        ids, tokens = bert.tokenize(model, text)
        out.append(dict(text=text, tokens=tokens, attentions=bert.bert_forward(model, ids)["attentions"]))
    return out


def per_mille(codes: str, shape) -> np.ndarray:
    """Read the payload's codes by hand: two base64url digits a, b per weight, q = 64 a + b."""
    assert len(codes) % 2 == 0
    digits = [B64URL.index(c) for c in codes]
    q = np.array([64 * a + b for a, b in zip(digits[::2], digits[1::2])])
    return q.reshape(shape)


def test_payload_weights_equal_the_forward_pass(payload, reference):
    assert [s["text"] for s in payload["sentences"]] == list(examples.REAL_SENTENCES)
    assert len(payload["sentences"]) >= 8 and payload["scale"] == 1000 and payload["alphabet"] == B64URL
    L, H = payload["layers"], payload["heads"]
    assert (L, H) == (6, 12)
    for s, ref in zip(payload["sentences"], reference):
        assert s["tokens"] == ref["tokens"]
        T = len(ref["tokens"])
        q = per_mille(s["codes"], (L, H, T, T))
        A = ref["attentions"].astype(np.float64)  # (L, H, T, T)
        assert np.abs(viewer_amount(q) / 1000 - A).max() <= HALF + 1e-9
        # and it is the nearest per-mille value, the one the viewer's text "0.xyz" shows, except
        # where that would read a weight above 0 as 0.000 or one below 1 as 1.000
        assert np.array_equal(q, [[[[viewer_code(w) for w in row] for row in head] for head in layer] for layer in A])


def test_rows_sum_to_one_within_rounding(payload):
    for s in payload["sentences"]:
        T = len(s["tokens"])
        sums = viewer_amount(per_mille(s["codes"], (6, 12, T, T))).sum(axis=-1) / 1000  # (L, H, T)
        assert np.abs(sums - 1).max() <= T * HALF
        assert np.abs(sums - 1).max() > 0 or T == 0  # rounding is visible somewhere: the test can fail


def test_payload_is_under_400_kb(viewer, data):
    size = len(json.dumps(viewer.explorer(data), separators=(",", ":")).encode("utf-8"))
    assert size <= 400_000, f"the bert viewer's payload is {size / 1000:.0f} KB"
    assert size >= 100_000  # every weight of every sentence is in it, not a sample


def test_scores_and_labels_match_head_analysis(payload, reference):
    per_sentence = [head_scores(r["attentions"], r["tokens"]) for r in reference]
    assert set(payload["scores"]) == set(HEAD_TYPES)
    for key in HEAD_TYPES:
        mean = np.nanmean(np.stack([s[key] for s in per_sentence]), axis=0)  # (L, H)
        np.testing.assert_allclose(payload["scores"][key], mean, atol=HALF_SCORE + 1e-9, rtol=0)
        for got, want in zip(payload["sentence_scores"], per_sentence):
            np.testing.assert_allclose(np.array(got[key], dtype=float), want[key], atol=HALF_SCORE + 1e-9, rtol=0)
    # one score by hand: the previous-token score of layer 1, head 3 is the mean of A[i, i-1]
    by_hand = np.mean([np.mean([r["attentions"][0, 2, i, i - 1] for i in range(1, len(r["tokens"]))]) for r in reference])
    assert payload["scores"]["previous token"][0][2] == pytest.approx(by_hand, abs=HALF_SCORE + 1e-9)
    # labels: the kind of key with at least half of the weight on average, else "broad" (with its spread)
    kinds = [k for k in HEAD_TYPES if k != "entropy"]
    for l in range(6):
        for h in range(12):
            means = {k: np.nanmean([s[k][l, h] for s in per_sentence]) for k in kinds}
            top = max(means, key=means.get)
            want = top if means[top] >= 0.5 else "broad"
            value = means[top] if want != "broad" else np.mean([s["entropy"][l, h] for s in per_sentence])
            assert payload["label"][l][h] == want, (l, h)
            assert payload["label_value"][l][h] == pytest.approx(value, abs=HALF_SCORE + 1e-9)
    # each sentence's labels, by the same rule on that sentence's own scores (a missing score,
    # NaN, never wins), made before rounding
    for got, scores in zip(payload["sentence_labels"], per_sentence):
        for l in range(6):
            for h in range(12):
                present = {k: scores[k][l, h] for k in kinds if not np.isnan(scores[k][l, h])}
                top = max(present, key=present.get) if present else None
                want = top if top is not None and present[top] >= 0.5 else "broad"
                value = present[top] if want != "broad" else scores["entropy"][l, h]
                assert got["label"][l][h] == want, (l, h)
                assert got["label_value"][l][h] == pytest.approx(value, abs=HALF_SCORE + 1e-9)


def test_a_head_is_bold_by_its_unrounded_score(payload, reference):
    """Labelled by one kind of key, a head is bold when its score, unrounded, is at least half
    (layer 4, head 2's average "to [CLS]" is 0.4965: shown 0.50, not bold). The flags, per kind,
    one character per head layer by layer, against the scores recomputed here."""
    per_sentence = [head_scores(r["attentions"], r["tokens"]) for r in reference]
    kinds = [k for k in HEAD_TYPES if k != "entropy"]
    assert set(payload["strong"]) == set(kinds)
    for k in kinds:
        mean = np.nanmean(np.stack([s[k] for s in per_sentence]), axis=0)  # (L, H)
        assert payload["strong"][k] == "".join("1" if v >= 0.5 else "0" for v in mean.ravel()), k
        for got, scores in zip(payload["sentence_labels"], per_sentence):
            assert got["strong"][k] == "".join("1" if v >= 0.5 else "0" for v in scores[k].ravel()), k
    near = np.nanmean(np.stack([s["to [CLS]"] for s in per_sentence]), axis=0)[3, 1]
    assert 0.495 <= near < 0.5 and payload["strong"]["to [CLS]"][3 * 12 + 1] == "0"  # (the case that showed it)


def test_every_score_reads_in_the_viewer_as_python_prints_it(payload, data):
    """The viewer writes a score with ``toFixed(2)``, which gives the two decimals nearest the
    number it is handed: handed Python's own two-decimal rounding, it shows what the page and
    the figure print (rounded to 3 decimals first, 0.50477 became 0.505 and showed as 0.51)."""
    pairs = [(payload["scores"], data["scores"]), (payload["label_value"], data["label_value"])]
    pairs += [(got, want) for got, want in zip(payload["sentence_scores"], data["sentence_scores"])]
    pairs += [(got["label_value"], want["label_value"]) for got, want in zip(payload["sentence_labels"], data["sentence_labels"])]
    checked = 0
    for got, want in pairs:
        for key in (got if isinstance(got, dict) else [None]):
            g = np.array(got[key] if key else got, dtype=float)
            w = np.asarray(want[key] if key else want, dtype=float)
            for x, v in zip(g.ravel(), w.ravel()):
                if np.isnan(v):
                    assert np.isnan(x)
                    continue
                assert x == viewer_score(v), (key, x, v)
                checked += 1
    assert checked > 4000


def test_the_page_claims(data, reference):
    """What docs/viewer.md says about the heads, checked on every built-in sentence."""
    best = data["best"]
    assert data["n_sentences"] == len(examples.REAL_SENTENCES) >= 8 and data["n_heads"] == 72
    assert data["start"] == dict(sentence=2, layer=best["previous token"]["layer"], head=best["previous token"]["head"])
    pl, ph = best["previous token"]["layer"] - 1, best["previous token"]["head"] - 1
    for r in reference:
        A = r["attentions"][pl, ph]
        T = len(r["tokens"])
        # every word puts weight 1.000 "or very close" on the token before; [CLS] looks at itself
        assert min(A[i, i - 1] for i in range(1, T)) >= 0.99 and A[0, 0] >= 0.99
        # the strongest [CLS] head: every query's lines converge on the first key
        cl, ch = best["to [CLS]"]["layer"] - 1, best["to [CLS]"]["head"] - 1
        assert r["attentions"][cl, ch, :, 0].min() > 0.5
    assert best["next token"]["value"] < best["previous token"]["value"]  # "less sharp"
    cls, spread = np.asarray(data["layer_means"]["to [CLS]"]), np.asarray(data["layer_means"]["entropy"])
    assert cls[1:5].min() > max(cls[0], cls[5])  # the middle layers lean on [CLS] more than layers 1 and 6
    assert spread[0] > spread[1:5].max() and spread[5] > spread[1:5].max()  # layers 1 and 6 spread more
    labels = np.array(data["label"])
    assert (labels[0] == "broad").sum() > 6 and (labels[5] == "broad").sum() > 6  # "mostly spread"
    assert data["counts"]["to [CLS]"] == (labels == "to [CLS]").sum() and sum(data["counts"].values()) == 72


def test_codes_round_trip_and_refuse_bad_input(viewer):
    A = np.array([[[[0.0, 1.0], [0.0625, 0.9375]]]], dtype=np.float32)  # (1, 1, 2, 2); 62.5 per mille is a tie
    codes = viewer.encode_weights(A)
    assert codes == "AAPo" + "A-Oq"  # 0, 1000 = 15*64+40; 62.5 -> 62 = 0*64+62, 937.5 -> 938 = 14*64+42 (ties to even)
    assert viewer.decode_weights(codes, 1, 1, 2).tolist() == [[[[0, 1000], [62, 938]]]]
    # a weight above 0 that rounds to 0 per mille, and one below 1 that rounds to 1000 (they read
    # "0.000" and "1.000": 8,001 and 102 of the built-in sentences' weights), get codes of their own
    B = np.array([[[[2e-5, 0.99998], [0.0004999, 0.9995]]]])
    assert viewer.decode_weights(viewer.encode_weights(B), 1, 1, 2).tolist() == [[[[1001, 1002], [1001, 1002]]]]
    assert f"{0.0625:.3f}" == "0.062"  # Python's text rounds the same tie the same way
    with pytest.raises(ValueError, match="attentions must be weights in"):
        viewer.encode_weights(np.array([[-0.1, 1.1]]))
    with pytest.raises(ValueError, match="codes must hold 2 characters per weight"):
        viewer.decode_weights(codes, 1, 1, 3)


def test_data_parameters(viewer):
    d = viewer.data(sentence=1, layer=2)  # strongest previous-token head within layer 2
    prev = np.asarray(d["scores"]["previous token"])
    assert d["start"] == dict(sentence=1, layer=2, head=int(np.argmax(prev[1])) + 1)
    assert d["tokens"] == bert.encode(examples.REAL_SENTENCES[0])["tokens"]
    np.testing.assert_array_equal(d["zoom"], bert.encode(examples.REAL_SENTENCES[0])["attentions"][1, d["start"]["head"] - 1])
    for kwargs, match in (({"sentence": 9}, "sentence counts the built-in sentences from 1 to 8"),
                          ({"layer": 7}, "layer counts from 1 to 6"), ({"head": 0}, "head counts from 1 to 12")):
        with pytest.raises(ValueError, match=match):
            viewer.data(**kwargs)


def test_bert_viewer_is_a_figure_with_an_explorer():
    import figures

    script = figures.scripts()["bert_viewer"]
    assert script.kind == "figure" and script.explorer == "bert" and script.chapter == "real_model"


# ---- the viewer in a browser ----------------------------------------------------------------


#: The BERT viewer's box: the page also holds the tiny decoders' viewer (tests/test_tiny_viewer.py).
BOX = ".mha-explorer[data-explorer=bert] "


@pytest.mark.build
@pytest.mark.browser
def test_viewer_shows_mhalibs_weights(browser, site_url, reference, data):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    goto(page, site_url + "viewer/")
    box = page.locator(BOX.strip())
    ui = page.locator(BOX + ".mha-explorer-ui")
    assert ui.is_visible() and not page.is_visible(".mha-explorer-static[data-static-for=bert]")
    # the payload is a file of its own (the page's HTML stays small), fetched by the widget
    holder = page.locator(BOX + ".mha-explorer-data")
    assert holder.text_content() == "" and holder.get_attribute("data-src").startswith("../figures/bert_viewer.explorer.json?v=")
    embedded = page.evaluate("async (u) => (await fetch(u)).text()", holder.get_attribute("data-src"))
    assert len(embedded.encode("utf-8")) <= 400_000
    assert page.locator(BOX + ".bv-thumb").count() == 72

    def shown(side):
        return page.eval_on_selector_all(BOX + f".bv-{side} .bv-tok .bv-w", "ws => ws.map(w => w.textContent)")

    def text3(values):
        return [viewer_text(w) for w in values]

    # choose a sentence and a layer with the selects, a head by clicking its thumbnail
    s, layer, head = 5, 2, 9  # "A dog bites a man, and a man bites a dog.", layer 2, head 9
    box.get_by_label("Sentence").select_option(value=str(s + 1))  # option values count from 1, as shown
    box.get_by_label("Layer", exact=True).select_option(value=str(layer))
    said = page.text_content(BOX + ".bv-live")  # one short line per change
    assert said.startswith(f"Layer {layer}, head {ui.get_attribute('data-head')}: ") and len(said) <= 90
    page.click(BOX + f".bv-thumb[data-layer='{layer}'][data-head='{head}']")
    assert page.text_content(BOX + ".bv-live").startswith(f"Layer {layer}, head {head}: ")
    assert ui.get_attribute("data-sentence") == str(s + 1)
    assert (ui.get_attribute("data-layer"), ui.get_attribute("data-head")) == (str(layer), str(head))
    assert page.get_attribute(BOX + f".bv-thumb[data-layer='{layer}'][data-head='{head}']", "aria-checked") == "true"
    tokens = reference[s]["tokens"]
    A = reference[s]["attentions"][layer - 1, head - 1]
    assert page.eval_on_selector_all(BOX + ".bv-q .bv-tok .bv-t", "ts => ts.map(t => t.textContent)") == tokens

    # keyboard: Tab into the head view lands on query 2; the arrow keys move to query 4
    page.focus("#" + page.get_attribute(BOX + "select[id$='-head']", "id"))
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.side + document.activeElement.dataset.i") == "q1"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert shown("k") == text3(A[3]) and shown("q") == [""] * len(tokens)
    live = page.text_content(BOX + ".bv-live")
    j = int(np.argmax(A[3]))
    assert live.startswith(f"“{tokens[3]}”, query 4: most to “{tokens[j]}” {viewer_text(A[3, j])}") and len(live) <= 90
    ring = "(() => { const s = getComputedStyle(document.activeElement); return [s.outlineStyle, parseFloat(s.outlineWidth)]; })()"
    assert page.evaluate(ring)[0] == "solid" and page.evaluate(ring)[1] >= 2  # a visible focus ring
    # a key shows its column: how much each query gives it
    page.keyboard.press("ArrowRight")
    assert shown("q") == text3(A[:, 3]) and shown("k") == [""] * len(tokens)

    # a clicked (kept) token follows the head chosen from the overview with the keyboard
    page.click(BOX + ".bv-q .bv-tok[data-i='6']")
    page.focus(BOX + ".bv-thumb[aria-checked=true]")
    page.keyboard.press("ArrowUp")  # layer 1, same head
    assert (ui.get_attribute("data-layer"), ui.get_attribute("data-head")) == ("1", str(head))
    assert page.evaluate(ring)[0] == "solid" and page.evaluate(ring)[1] >= 2
    value = page.text_content(BOX + ".bv-thumb[aria-checked=true] .bv-val")
    live = page.text_content(BOX + ".bv-live")
    assert live.startswith(f"Layer 1, head {head}: ") and live.endswith(f" {value}.")
    assert shown("k") == text3(reference[s]["attentions"][0, head - 1, 6])
    # the thumbnails' scores read as the page prints them (Python's two decimals of the unrounded
    # score), for the averages and, with "this sentence alone", for the sentence's own labels
    def thumbs():
        return page.eval_on_selector_all(BOX + ".bv-thumb", "bs => bs.map(b => [+b.dataset.layer, +b.dataset.head, "
                                         "b.querySelector('.bv-val').textContent])")

    def printed(values, l, h):  # as stored (viewer_score), in two decimals where they hold it
        v = values[l - 1][h - 1]
        if v is None or np.isnan(v):
            return "–"
        x = viewer_score(v)
        return f"{x:.2f}" if float(f"{x:.2f}") == x else repr(x)

    assert [t[2] for t in thumbs()] == [printed(data["label_value"], l, h) for l, h, _ in thumbs()]
    box.get_by_label("Scores from").select_option(value="sentence")
    own = data["sentence_labels"][s]
    assert [t[2] for t in thumbs()] == [printed(own["label_value"], l, h) for l, h, _ in thumbs()]
    box.get_by_label("Scores from").select_option(value="average")
    # labelled by one kind, the bold heads are those whose unrounded score is at least half
    box.get_by_label("Label heads by").select_option(value="to [CLS]")
    bold = page.eval_on_selector_all(BOX + ".bv-thumb", "bs => bs.filter(b => b.classList.contains('bv-strong')).length")
    assert bold == int((np.asarray(data["scores"]["to [CLS]"]) >= 0.5).sum())
    box.get_by_label("Label heads by").select_option(value="type")
    # every control is labelled, every token and thumbnail has a name
    unlabeled = page.evaluate("""Array.from(document.querySelectorAll('.bv select')).filter(e => !e.labels.length).length""")
    assert unlabeled == 0
    names = page.eval_on_selector_all(BOX + ".bv-tok .bv-sr, " + BOX + ".bv-thumb .bv-sr", "ss => ss.map(s => s.textContent)")
    assert len(names) == 2 * len(tokens) + 72 and names[0] == "query 1: " and names[-1] == "Layer 6, head 12: "
    assert not errors, errors
    ctx.close()


@pytest.mark.build
@pytest.mark.browser
def test_viewer_starts_after_instant_navigation(browser, site_url):  # noqa: F811
    page = browser.new_page()
    goto(page, site_url + "real_heads/")
    page.click(".md-content a[href$='viewer/']")
    page.wait_for_selector(BOX + ".mha-explorer-ui:not([hidden]) .bv-thumb")
    assert page.locator(BOX + ".bv-thumb").count() == 72
    page.wait_for_selector(".mha-explorer[data-explorer=bert_live] .mha-explorer-ui[data-ready] .bl-go")  # the text box too
    page.close()


@pytest.mark.build
@pytest.mark.browser
def test_viewer_whose_data_cannot_load_keeps_the_static_figure(browser, site_url):  # noqa: F811
    """A fetch that fails (offline, a missing file) leaves the static figure and no half-built widget."""
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route("**/bert_viewer.explorer.json*", lambda route: route.fulfill(status=404, body="gone"))
    goto(page, site_url + "viewer/")
    page.wait_for_selector(".mha-explorer[data-explorer=tiny] .mha-explorer-ui[data-ready]")  # the other one starts
    assert page.locator(".mha-explorer-static[data-static-for=bert] img").first.is_visible()
    assert not page.is_visible(BOX + ".mha-explorer-ui") and page.locator(BOX + ".bv-thumb").count() == 0
    assert any("bert_viewer.explorer.json" in e and "404" in e for e in errors), errors  # said, not swallowed
    page.close()


@pytest.mark.build
@pytest.mark.browser
def test_viewer_without_javascript_shows_the_static_figure(browser, site_url):  # noqa: F811
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(site_url + "viewer/")
    assert page.locator(".mha-explorer-static img").first.is_visible()
    assert not page.is_visible(".mha-explorer-ui")
    ctx.close()


@pytest.mark.build
def test_viewer_page_numbers(built_site, data):
    """The page's numbers are data()'s, and it is linked from the real-heads page."""
    import re
    from html import unescape

    from helpers import page_text

    html = (built_site / "viewer" / "index.html").read_text()
    t = page_text(built_site, "viewer", tex=False)
    assert "What you will learn" in t and t.rfind("Summary") > t.find("What you will learn")
    b = data["best"]
    p, n, c = b["previous token"], b["next token"], b["to [CLS]"]
    assert f"layer {p['layer']}, head {p['head']}, which puts {p['value']:.4f} of its weight" in t
    assert f"layer {n['layer']}, head {n['head']} ({n['value']:.2f})" in t
    assert f"{data['counts']['to [CLS]']} of the 72 heads put at least half" in t
    assert f"layer {c['layer']}, head {c['head']}, puts {c['value']:.2f} there" in t
    m = data["layer_means"]
    assert (f"the spread of layer 1 is {m['entropy'][0]:.2f} and its share of weight on [CLS] "
            f"{m['to [CLS]'][0]:.2f}; in layer 6 they are {m['entropy'][5]:.2f} and {m['to [CLS]'][5]:.2f}") in t
    assert 'href="../viewer/"' in (built_site / "real_heads" / "index.html").read_text()


def test_the_viewer_writes_no_weight_or_score_as_0_or_1_that_is_not():
    """The viewer wrote BERT's [CLS] -> [CLS] weight 0.99998844 as "1.000" (102 such weights in
    the built-in sentences) and 8,001 weights above 0 as "0.000"; a head's score of 0.9998 as
    "1.00". bert_viewer.js's own functions, in node, against the texts derived by hand."""
    import shutil
    import subprocess

    from helpers import ROOT

    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the viewer's formatting runs in node for this test")
    weights = [0.0, 2e-5, 0.0004999, 0.0005001, 0.25, 0.9994999, 0.9995, 0.99998844, 1.0]
    scores = [0.5, 0.25, 0.9998, 0.0031, 0.62, 1.0]
    script = ("const src = require('fs').readFileSync(process.argv[1], 'utf8');"
              "const start = src.indexOf('  const TINY = 1001');"
              "const end = src.indexOf('\\n  }\\n', src.indexOf('  function score(v)')) + 4;"
              "eval(src.slice(start, end) + ';globalThis.f = {code, permille, score, amount};');"
              "const [ws, ss] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify([ws.map((w) => f.permille(f.code(w))), ws.map((w) => f.amount(f.code(w))),"
              " ss.map(f.score)]));")
    run = subprocess.run([node, "-e", script, str(ROOT / "docs" / "javascripts" / "bert_viewer.js")],
                         input=json.dumps([weights, [viewer_score(v) for v in scores]]), capture_output=True,
                         text=True, check=True)
    texts, amounts, shown = json.loads(run.stdout)
    assert texts == [viewer_text(w) for w in weights] == ["0.000", "<0.0005", "<0.0005", "0.001", "0.250", "0.999",
                                                           ">0.9995", ">0.9995", "1.000"]
    assert amounts == [0, 0, 0, 1, 250, 999, 1000, 1000, 1000]
    assert shown == ["0.50", "0.25", "0.9998", "0.0031", "0.62", "1.00"]
