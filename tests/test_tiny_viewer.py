"""The tiny decoders' attention viewer ("tiny_viewer"): its payload against a fresh run of
mhalib's numpy forward pass (weights, causal zeros, answers, scores), its size, the page's
claims, and the viewer itself in Chromium (the weights it shows are mhalib's, exactly as
rounded, and later keys are shown as masked)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mhalib.models.tiny_numpy import TinyConfig, forward, load_weights
from mhalib.models.tiny_tasks import make_batch
from helpers import viewer_amount, viewer_code, viewer_score, viewer_text
from tools.screenshots import goto

HALF = 0.5e-3  # rounding to 3 decimals moves a weight by at most this
B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
KBACK = ("kback_none", "kback_sinusoidal", "kback_learned", "kback_rope", "kback_alibi")
MODELS = KBACK + ("induction_before", "induction_after")
SEEDS, T = (1, 2, 3), 20


@pytest.fixture(scope="module")
def viewer():
    from figures.experiments import tiny_viewer

    return tiny_viewer


@pytest.fixture(scope="module")
def data(viewer):
    return viewer.data()


@pytest.fixture(scope="module")
def payload(viewer, data):
    # as the build writes it (figures/_kit/build.py): compact JSON, parsed back
    return json.loads(json.dumps(viewer.explorer(data), separators=(",", ":")))


@pytest.fixture(scope="module")
def stored():
    from figures.experiments.extrapolation_accuracy import load

    return load()


@pytest.fixture(scope="module")
def reference(stored, viewer):
    """Per model: the built-in sequences drawn afresh from the task generator, and the
    attention (S, L, H, T, T) and logits of a fresh numpy forward pass on them."""
    c = stored["config"]
    out = {}
    for key in MODELS:
        info = stored["weights"]["models"][key]
        cfg = TinyConfig.from_dict(info["config"])
        if info["task"] == "kback":
            k = c["tasks"]["kback"]["k"]
            batches = [make_batch("kback", 1, T, vocab=cfg.vocab, rng=s, k=k) for s in SEEDS]
        else:
            k = None
            batches = [make_batch("repeat", 1, T, vocab=cfg.vocab, rng=s) for s in SEEDS]
        tokens = np.concatenate([b["tokens"] for b in batches])  # (S, T)
        run = forward(load_weights(viewer.WEIGHTS, key, cfg), cfg, tokens)
        out[key] = dict(task=info["task"], k=k, tokens=tokens, step=info["step"],
                        targets=np.concatenate([b["targets"] for b in batches]),
                        scored=np.concatenate([b["scored"] for b in batches]),
                        attention=np.stack(run["attention"], axis=1), logits=run["logits"])
    return out


def lower_triangles(codes: str, L: int, H: int, n: int) -> np.ndarray:
    """Read the payload's codes by hand: two base64url digits a, b per weight, q = 64 a + b,
    for each layer and head the rows 0..n-1 of the lower triangle, row i holding keys 0..i."""
    digits = [B64URL.index(ch) for ch in codes]
    q = [64 * a + b for a, b in zip(digits[::2], digits[1::2])]
    assert len(q) == L * H * n * (n + 1) // 2
    out = np.zeros((L, H, n, n), dtype=int)
    pos = 0
    for l in range(L):
        for h in range(H):
            for i in range(n):
                out[l, h, i, : i + 1] = q[pos: pos + i + 1]
                pos += i + 1
    return out


# ---- the payload against a fresh forward pass ------------------------------------------------

def test_forward_pass_is_causal_with_exact_zeros(reference):
    """What the viewer leaves out (the weights on later keys) is exactly 0, so nothing is lost."""
    for key, r in reference.items():
        A = r["attention"]  # (S, L, H, T, T)
        later = np.triu(np.ones((T, T), dtype=bool), 1)
        assert np.all(A[..., later] == 0.0), key
        np.testing.assert_allclose(A.sum(-1), 1.0, atol=1e-12)


def test_payload_weights_equal_the_forward_pass(payload, reference):
    assert payload["causal"] is True and payload["alphabet"] == B64URL and payload["scale"] == 1000
    assert [m["key"] for m in payload["models"]] == list(MODELS)
    for m in payload["models"]:
        r = reference[m["key"]]
        seqs = payload["tasks"][m["task"]]["sequences"]
        assert m["task"] == r["task"] and len(seqs) == len(SEEDS) == len(m["codes"])
        L, H = m["layers"], m["heads"]
        assert (L, H) == r["attention"].shape[1:3] == (2, 4)
        for n, (s, codes) in enumerate(zip(seqs, m["codes"])):
            assert s["tokens"] == [str(t) for t in r["tokens"][n]]
            q = lower_triangles(codes, L, H, T)  # (L, H, T, T), 0 above the diagonal
            A = r["attention"][n]
            assert np.abs(viewer_amount(q) / 1000 - A).max() <= HALF + 1e-9
            # the nearest per-mille value, the one the viewer's text "0.xyz" shows (or the codes of
            # a weight above 0 that rounds to 0 and one below 1 that rounds to 1); 0 for later keys
            want = [[[[viewer_code(A[l, h, i, j]) if j <= i else 0 for j in range(T)]
                      for i in range(T)] for h in range(H)] for l in range(L)]
            assert np.array_equal(q, want)
            # the model's outputs, as the readout states them
            assert m["predicted"][n] == [str(t) for t in r["logits"][n].argmax(-1)]


def test_codes_round_trip_and_refuse_bad_input(viewer):
    A = np.zeros((1, 1, 3, 3))
    A[0, 0] = [[1, 0, 0], [0.25, 0.75, 0], [0.0625, 0.5, 0.4375]]  # 62.5 and 437.5 per mille are ties
    codes = viewer.encode_causal(A)
    # rows of the triangle: 1000 | 250 750 | 62 500 438 (ties to even), two base64url digits each
    assert codes == "Po" + "D6" + "Lu" + "A-" + "H0" + "G2"
    assert viewer.decode_causal(codes, 1, 1, 3).tolist() == [[[[1000, 0, 0], [250, 750, 0], [62, 500, 438]]]]
    assert np.array_equal(viewer.decode_causal(codes, 1, 1, 3), lower_triangles(codes, 1, 1, 3))
    with pytest.raises(ValueError, match="causal weights, exactly 0 above the diagonal"):
        viewer.encode_causal(np.full((1, 1, 2, 2), 0.5))
    with pytest.raises(ValueError, match="codes must hold 2 characters per weight of the lower triangle"):
        viewer.decode_causal(codes, 1, 1, 4)


def test_answers_and_parts_follow_the_tasks(payload, reference):
    """The key holding each scored query's answer: kback, k back; repeat, the token after the
    earlier copy of the query's token (found here by scanning, not by the segment length)."""
    for task in ("kback", "repeat"):
        r = next(v for v in reference.values() if v["task"] == task)
        for n, s in enumerate(payload["tasks"][task]["sequences"]):
            toks, targets, scored = r["tokens"][n], r["targets"][n], r["scored"][n]
            for i, a in enumerate(s["answer"]):
                if not scored[i]:
                    assert a is None
                    continue
                if task == "kback":
                    assert a == i - r["k"]
                else:
                    earlier = [j for j in range(i) if toks[j] == toks[i]]
                    assert len(earlier) == 1 and a == earlier[0] + 1
                assert toks[a] == targets[i]
            if task == "repeat":  # prefix, segment, repeat; the repeat copies the segment
                roles = s["roles"]
                n_rep = roles.count("repeat")
                assert roles == ["prefix"] * (T - 2 * n_rep) + ["segment"] * n_rep + ["repeat"] * n_rep
                assert list(toks[T - n_rep:]) == list(toks[T - 2 * n_rep: T - n_rep])
                assert f"a segment of {n_rep} tokens" in s["text"]
            else:
                assert set(s["roles"]) == {""}


def by_hand_scores(A: np.ndarray, tokens, task: str, k) -> dict:
    """Each head's scores on one sequence, by loops: mean of A[i, i-1]; mean of A[i, i-k];
    induction, the weight on keys whose previous token is the query's, over queries with one."""
    L, H = A.shape[:2]
    out = {"previous token": np.zeros((L, H)), ("3 back" if task == "kback" else "induction"): np.zeros((L, H))}
    for l in range(L):
        for h in range(H):
            a = A[l, h]
            out["previous token"][l, h] = np.mean([a[i, i - 1] for i in range(1, T)])
            if task == "kback":
                out["3 back"][l, h] = np.mean([a[i, i - k] for i in range(k, T)])
            else:
                per = [sum(a[i, j] for j in range(1, i) if tokens[j - 1] == tokens[i])
                       for i in range(T) if any(tokens[j - 1] == tokens[i] for j in range(1, i))]
                out["induction"][l, h] = np.mean(per)
    return out


def test_scores_and_labels(payload, data, reference, stored):
    assert stored["config"]["tasks"]["kback"]["k"] == 3  # the score's name "3 back" below
    for m in payload["models"]:
        r = reference[m["key"]]
        assert m["types"] == ["previous token", "3 back" if r["task"] == "kback" else "induction"]
        for n in range(len(SEEDS)):
            want = by_hand_scores(r["attention"][n], r["tokens"][n], r["task"], r["k"])
            for s in m["types"]:
                got = np.array(m["sentence_scores"][n][s])
                assert got.tolist() == [[viewer_score(v) for v in row] for row in want[s]]  # as the text shows them
        # the averages: over a fixed batch of the task (seed 100, 64 sequences), each by hand
        raw = data["models"][m["key"]]["scores"]
        for s in m["types"]:
            assert m["scores"][s] == [[viewer_score(v) for v in row] for row in raw[s]]
        cfg = TinyConfig.from_dict(stored["weights"]["models"][m["key"]]["config"])
        kw = dict(k=r["k"]) if r["task"] == "kback" else {}
        batch = make_batch(r["task"], data["n_eval"], T, vocab=cfg.vocab, rng=100, **kw)
        A = np.stack(forward(load_weights(data_file(), m["key"], cfg), cfg, batch["tokens"])["attention"], axis=1)
        hand = [by_hand_scores(a, t, r["task"], r["k"]) for a, t in zip(A, batch["tokens"])]
        for s in m["types"]:
            np.testing.assert_allclose(raw[s], np.mean([h[s] for h in hand], axis=0), atol=1e-12)
        # the label: the highest of the two scores, and its value
        for l in range(2):
            for h in range(4):
                best = max(m["types"], key=lambda s: raw[s][l, h])
                assert m["label"][l][h] == best and m["label_value"][l][h] == viewer_score(raw[best][l, h])
        # accuracy: the argmax output on the scored positions of the same batch
        logits = forward(load_weights(data_file(), m["key"], cfg), cfg, batch["tokens"])["logits"]
        right = (logits.argmax(-1) == batch["targets"])[batch["scored"]]
        assert data["models"][m["key"]]["accuracy"] == pytest.approx(right.mean(), abs=1e-12)


def data_file():
    from figures._kit.contract import data_file as df

    return df("tiny_decoders_weights.npz")


def test_payload_is_small(viewer, data):
    """The BERT viewer's payload budget is 400 KB; the tiny models add at most 100 KB."""
    size = len(json.dumps(viewer.explorer(data), separators=(",", ":")).encode("utf-8"))
    assert size <= 100_000, f"the tiny viewer's payload is {size / 1000:.0f} KB"
    weights = len(MODELS) * len(SEEDS) * 2 * 4 * T * (T + 1) // 2  # every stored weight of every model and input
    assert size >= 2 * weights  # two characters each: all of them, not a sample


def test_the_page_claims(data, reference, stored):
    """What docs/viewer.md says about the tiny models, checked."""
    from figures.experiments.induction_scores import data as induction_scores

    bm = data["by_model"]
    k = data["k"]
    assert data["n_models"] == len(MODELS) and data["n_sequences"] == len(SEEDS) == 3  # "the other two sequences"
    assert data["largest_token"] == {"kback": stored["config"]["tasks"]["kback"]["vocab"] - 1,
                                     "repeat": stored["config"]["induction"]["vocab"] - 1}
    # learned: every head a k-back head (>= 0.5), layer 2 almost perfectly; the strongest line of every
    # query from k on runs exactly k rows up; learned, sinusoidal and RoPE get every answer right
    learned = np.asarray(data["models"]["kback_learned"]["scores"]["3 back"])
    assert learned.min() >= 0.5 and learned[1].min() >= 0.95 and bm["kback_learned"]["best"]["3 back"]["layer"] == 2
    b = bm["kback_learned"]["best"]["3 back"]
    A = reference["kback_learned"]["attention"][:, b["layer"] - 1, b["head"] - 1]  # (S, T, T)
    assert np.array_equal(A[:, k:].argmax(-1), np.tile(np.arange(k, T) - k, (len(SEEDS), 1)))
    for key in ("kback_sinusoidal", "kback_learned", "kback_rope"):
        assert bm[key]["accuracy"] == 1.0 and bm[key]["best"]["3 back"]["value"] >= 0.95
    # ALiBi: layer 1's mean weight 1..4 back falls by about e^(-m) per step for heads 1 and 2,
    # hardly at all for head 4; no layer-1 head finds the answer; layer 2 has a previous-token head
    decay = data["alibi_decay"]
    assert decay["slopes_inverse"] == [4, 16, 64, 256] and decay["steps"] == 4
    assert np.asarray(decay["weights"])[0].tolist() == sorted(np.asarray(decay["weights"])[0], reverse=True)
    for h in (0, 1):
        assert np.abs(np.asarray(decay["ratios"][h]) - np.exp(-1 / decay["slopes_inverse"][h])).max() < 0.01
    assert np.asarray(decay["ratios"][3]).min() > 0.97
    alibi = data["models"]["kback_alibi"]["scores"]
    assert np.max(alibi["3 back"][0]) < 0.2
    assert bm["kback_alibi"]["best"]["previous token"]["layer"] == 2 and bm["kback_alibi"]["best"]["previous token"]["value"] >= 0.5
    # independent: ALiBi's weights d back, straight from the forward pass on the built-in sequences
    A1 = reference["kback_alibi"]["attention"][:, 0, 0]  # (S, T, T), layer 1 head 1
    w = [np.mean([a[i, i - d] for a in A1 for i in range(4, T)]) for d in range(1, 5)]
    assert all(0.7 < w[d + 1] / w[d] < 0.86 for d in range(3))
    # NoPE: its best k-back score is barely above spreading evenly (1/(i+1) on each of keys 0..i)
    uniform = np.mean([1 / (i + 1) for i in range(k, T)])
    assert data["uniform_k_back"] == pytest.approx(uniform, abs=1e-12)
    assert uniform < bm["kback_none"]["best"]["3 back"]["value"] < uniform + 0.05
    A1 = reference["kback_none"]["attention"][:, 0]  # (S, H, T, T)
    U = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    assert np.abs(A1 - U).mean() < 0.03  # "nearly that"
    # induction: before the drop no head scores much; after it, a previous-token head in layer 1 and an
    # induction head in layer 2, the same heads as on the induction page
    before, after = bm["induction_before"]["best"], bm["induction_after"]["best"]
    assert before["previous token"]["value"] < 0.3 and before["induction"]["value"] < 0.1
    assert bm["induction_before"]["accuracy"] < 0.05 < 0.5 < bm["induction_after"]["accuracy"]
    assert after["previous token"]["layer"] == 1 and after["previous token"]["value"] >= 0.5
    assert after["induction"]["layer"] == 2 and after["induction"]["value"] >= 0.5
    s = induction_scores()
    assert (after["previous token"]["head"], after["induction"]["head"]) == (s["best_prev_head"], s["best_ind_head"])
    assert stored["weights"]["models"]["induction_after"]["step"] == s["after"]
    assert stored["weights"]["models"]["induction_before"]["step"] == s["before"]
    # on sequence 1 the induction head's strongest line from every scored query goes to the answer;
    # on the other two, for only part of them
    r = reference["induction_after"]
    A = r["attention"][:, 1, after["induction"]["head"] - 1]  # (S, T, T)
    hits = []
    for n in range(len(SEEDS)):
        toks = r["tokens"][n]
        queries = [i for i in range(T) if r["scored"][n, i]]
        answer = {i: next(j + 1 for j in range(i) if toks[j] == toks[i]) for i in queries}
        hits.append(np.mean([A[n, i].argmax() == answer[i] for i in queries]))
    assert hits[0] == 1.0 and all(0 < h < 1.0 for h in hits[1:]), hits
    # the static figure's default: that head, on sequence 1
    assert data["start"] == dict(model="induction_after", sequence=1, layer=2, head=after["induction"]["head"])


def test_data_parameters(viewer, reference):
    d = viewer.data(model="kback_alibi", sequence=2, layer=1)  # strongest 3-back head within layer 1
    scores = np.asarray(d["models"]["kback_alibi"]["scores"]["3 back"])
    assert d["start"] == dict(model="kback_alibi", sequence=2, layer=1, head=int(np.argmax(scores[0])) + 1)
    np.testing.assert_array_equal(d["tokens"], reference["kback_alibi"]["tokens"][1])
    np.testing.assert_allclose(d["zoom"], reference["kback_alibi"]["attention"][1, 0, d["start"]["head"] - 1], atol=1e-12)
    for kwargs, match in (({"model": "kback"}, "model must be one of kback_none"),
                          ({"sequence": 4}, "sequence counts the built-in sequences from 1 to 3"),
                          ({"layer": 3}, "layer counts from 1 to 2"), ({"head": 5}, "head counts from 1 to 4")):
        with pytest.raises(ValueError, match=match):
            viewer.data(**kwargs)


def test_tiny_viewer_is_a_figure_with_an_explorer():
    import figures

    script = figures.scripts()["tiny_viewer"]
    assert script.kind == "figure" and script.explorer == "tiny" and script.chapter == "experiments"


def test_static_figure_draws_the_chosen_head(viewer, data):
    fig = viewer.draw(data)
    ax = fig.axes[0]
    A = data["zoom"]
    drawn = [ln for ln in ax.lines if ln.get_xdata()[0] == 0.0]  # the query-to-key lines
    assert len(drawn) == int((A >= 0.01).sum())  # one per weight of 0.01 or more ...
    assert all(ln.get_ydata()[1] <= ln.get_ydata()[0] for ln in drawn)  # ... each to the query itself or an earlier key
    texts = [t.get_text() for t in ax.texts]
    assert "segment" in texts and "repeat" in texts
    assert f"induction score {data['zoom_value']:.2f}" in ax.get_title() and 0.005 <= data["zoom_value"] < 0.995


# ---- the viewer in a browser ----------------------------------------------------------------



@pytest.mark.build
@pytest.mark.browser
def test_viewer_shows_mhalibs_weights(browser, site_url, reference):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    goto(page, site_url + "viewer/")
    page.wait_for_selector(".mha-explorer[data-explorer=tiny] .mha-explorer-ui[data-ready]")
    box = page.locator(".mha-explorer[data-explorer=tiny]")
    ui = box.locator(".mha-explorer-ui")
    assert ui.is_visible() and not page.is_visible(".mha-explorer-static[data-static-for=tiny]")
    src = page.get_attribute(".mha-explorer[data-explorer=tiny] .mha-explorer-data", "data-src")
    assert src.startswith("../figures/tiny_viewer.explorer.json?v=")  # a file of its own, fetched
    embedded = page.evaluate("async (u) => (await fetch(u)).text()", src)
    assert len(embedded.encode("utf-8")) <= 100_000
    assert ui.get_attribute("data-model") == "induction_after" and box.locator(".bv-thumb").count() == 8

    def shown(side):
        return box.locator(f".bv-{side} .bv-tok .bv-w").evaluate_all("ws => ws.map(w => w.textContent)")

    def text3(values):
        return [viewer_text(w) for w in values]

    # choose the ALiBi model, sequence 2 and layer 1 with the selects, head 2 by its thumbnail
    box.get_by_label("Model").select_option(value=str(KBACK.index("kback_alibi") + 1))  # values count from 1
    box.get_by_label("Sequence").select_option(value="2")
    box.get_by_label("Layer", exact=True).select_option(value="1")
    box.locator(".bv-thumb[data-layer='1'][data-head='2']").click()
    assert (ui.get_attribute("data-model"), ui.get_attribute("data-sentence")) == ("kback_alibi", "2")
    assert (ui.get_attribute("data-layer"), ui.get_attribute("data-head")) == ("1", "2")
    assert box.locator(".bv-live").text_content().startswith("Layer 1, head 2: ")
    r = reference["kback_alibi"]
    tokens = [str(t) for t in r["tokens"][1]]
    A = r["attention"][1, 0, 1]  # (T, T): sequence 2, layer 1, head 2
    assert box.locator(".bv-q .bv-tok .bv-t").evaluate_all("ts => ts.map(t => t.textContent)") == tokens

    # query 9 (i = 8): its weights on keys 0..8, the later keys masked and greyed, key 5 (8 - 3) outlined
    i = 8
    box.locator(f".bv-q .bv-tok[data-i='{i}']").hover()
    assert shown("k") == text3(A[i, : i + 1]) + ["masked"] * (T - i - 1)
    assert shown("q") == [""] * T
    masked = box.locator(".bv-k .bv-tok.bv-masked").evaluate_all("bs => bs.map(b => Number(b.dataset.i))")
    assert masked == list(range(i + 1, T))
    assert box.locator(".bv-k .bv-tok.bv-answer").evaluate_all("bs => bs.map(b => Number(b.dataset.i))") == [i - 3]
    colours = box.locator(f".bv-k .bv-tok[data-i='{i + 1}'] .bv-t, .bv-k .bv-tok[data-i='{i}'] .bv-t").evaluate_all(
        "ts => ts.map(t => getComputedStyle(t).color)")
    assert colours[0] != colours[1]  # a masked key is greyed
    readout = box.locator(".bv-readout").text_content()
    j = int(np.argmax(A[i]))
    pred = str(r["logits"][1, i].argmax())
    assert readout.startswith(f"“{tokens[i]}” (query {i + 1} of {T}) attends most to “{tokens[j]}” {viewer_text(A[i, j])}")
    assert f"Keys {i + 2} to {T} come later: masked, weight 0." in readout
    assert f"Its answer is “{tokens[i - 3]}” (key {i - 2}, outlined), weight {viewer_text(A[i, i - 3])}" in readout
    assert f"the model outputs “{pred}” ({'right' if pred == tokens[i - 3] else 'wrong'})" in readout

    # a key shows its column: queries before it are masked
    box.locator(".bv-k .bv-tok[data-i='5']").hover()
    assert shown("q") == ["masked"] * 5 + text3(A[5:, 5])

    # the same query on the induction model after the drop keeps the sequence number, with other tokens
    box.get_by_label("Model").select_option(value=str(MODELS.index("induction_after") + 1))
    box.get_by_label("Layer", exact=True).select_option(value="2")
    r = reference["induction_after"]
    tokens = [str(t) for t in r["tokens"][1]]
    assert box.locator(".bv-q .bv-tok .bv-t").evaluate_all("ts => ts.map(t => t.textContent)") == tokens
    roles = box.locator(".bv-q .bv-tok .bv-t").evaluate_all("ts => ts.map(t => t.dataset.role)")
    assert roles.count("repeat") == roles.count("segment") > 0
    page.mouse.move(0, 0)
    # keyboard: Tab from the head select into the head view lands on query 2; End goes to the last query
    box.locator("select[id$='-head']").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.side + document.activeElement.dataset.i") == "q1"
    page.keyboard.press("End")
    page.keyboard.press("ArrowUp")
    i, h = T - 2, int(ui.get_attribute("data-head"))
    A = r["attention"][1, 1, h - 1]
    assert shown("k") == text3(A[i, : i + 1]) + ["masked"]
    live = box.locator(".bv-live").text_content()
    assert live.startswith(f"“{tokens[i]}”, query {i + 1}: most to ") and len(live) <= 90
    answer = next(j + 1 for j in range(i) if tokens[j] == tokens[i])
    assert box.locator(".bv-k .bv-tok.bv-answer").evaluate_all("bs => bs.map(b => Number(b.dataset.i))") == [answer]
    # the thumbnails' labels are the scores of the payload, the summary names the head's job
    value = box.locator(".bv-thumb[aria-checked=true] .bv-val").text_content()
    assert value == f"{np.asarray(json.loads(embedded)['models'][MODELS.index('induction_after')]['label_value'])[1, h - 1]:.2f}"
    unlabeled = page.evaluate("""Array.from(document.querySelectorAll('.bv select')).filter(e => !e.labels.length).length""")
    assert unlabeled == 0
    assert not errors, errors
    ctx.close()


@pytest.mark.build
def test_viewer_page_numbers(built_site, data):
    """The page's numbers are data()'s; the induction and extrapolation pages link to the viewer."""
    import re
    from html import unescape

    from helpers import unwrap_values

    html = (built_site / "viewer" / "index.html").read_text()
    body = re.sub(r"<script.*?</script>|<style.*?</style>", " ", unwrap_values(html), flags=re.S)
    t = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", body)))
    bm, d = data["by_model"], data["alibi_decay"]
    lb = bm["kback_learned"]["best"]["3 back"]
    assert f"the best, head {lb['head']}, puts {lb['value']:.2f} of its weight on the key 3 back" in t
    assert (f"head 1 gives the key 1 back {d['weights'][0][0]:.3f}, 2 back {d['weights'][0][1]:.3f}, "
            f"3 back {d['weights'][0][2]:.3f} and 4 back {d['weights'][0][3]:.3f}") in t
    assert f"Its best 3-back score is {bm['kback_none']['best']['3 back']['value']:.2f}, barely above the {data['uniform_k_back']:.2f}" in t
    after = bm["induction_after"]["best"]
    assert f"an induction head ({after['induction']['value']:.2f})" in t
    assert 'id="tiny-decoders"' in html and 'data-explorer="tiny"' in html
    for page in ("induction", "extrapolation"):
        assert 'href="../viewer/#tiny-decoders"' in (built_site / page / "index.html").read_text()
