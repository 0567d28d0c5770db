"""The real model in the reader's browser (figure and widget "bert_live"): quantization
(mhalib.models.quantize) against its definition; the browser's tokenizer (bert_live.js, in node)
against the packaged one, transformers' BertTokenizer read offline from the model's folder; the
payload read back byte by byte against the package's weights; and in Chromium the live model on
20 check sentences against mhalib's float32 forward pass, the widget's messages for bad input,
and the viewer's exports. Every expected value comes from numpy, transformers or mhalib's float32
forward pass, never from the JavaScript or the payload's own encoder."""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import math
import re
import shutil
import struct
import subprocess

import numpy as np
import pytest

from helpers import ROOT
from mhalib.models import bert
from mhalib.models.head_analysis import HEAD_TYPES, head_scores
from mhalib.models.quantize import STEPS, quantize, stored_bytes

DRIVER = ROOT / "tests" / "js" / "bert_live_driver.js"
BOX = ".mha-explorer[data-explorer=bert_live] "
VIEWER = ".mha-explorer[data-explorer=bert] "


@pytest.fixture(scope="module")
def live():
    from figures.real_model import bert_live

    return bert_live


@pytest.fixture(scope="module")
def model():
    return bert.load_model()


# ---- quantization ------------------------------------------------------------------------------

def test_quantize_worked_example_by_hand():
    qt = quantize([[0.5, -1.27]], bits=8, group=2)
    c = math.ceil(16 * math.log2(1.27 / 127))  # log2(0.01) * 16 = -106.3 -> -106
    s = 2 ** (c / 16)
    assert c == -106 and qt.base == c and qt.codes.tolist() == [[1]]
    assert qt.q.tolist() == [[round(0.5 / s), round(-1.27 / s)]] == [[49, -125]]
    assert qt.dequantize()[0].tolist() == pytest.approx([49 * s, -125 * s], rel=1e-7)


@pytest.mark.parametrize("bits, group", [(8, 32), (10, 32), (8, 384), (4, 8), (16, 64)])
def test_quantize_keeps_each_weight_within_half_a_step_of_a_tight_scale(bits, group):
    rng = np.random.default_rng(bits * 1000 + group)
    W = rng.normal(0, 0.05, (24, 384)) * rng.lognormal(0, 1.5, (24, 1))  # rows of very different sizes
    W[3, :group] = 0  # a group of zeros
    qt = quantize(W, bits, group)
    M = 2 ** (bits - 1) - 1
    peak = np.abs(W.reshape(24, -1, group)).max(-1)  # (24, K // g)
    s = np.repeat(qt.scales, group, axis=1)
    assert np.abs(qt.q).max() <= M and qt.q.dtype == np.int16
    assert (np.abs(qt.dequantize() - W) <= s / 2 + np.abs(W) * 2.0 ** -23).all()  # and float32's rounding
    nonzero = peak > 0
    ratio = qt.scales[nonzero] / (peak[nonzero] / M)  # the scale is the next power of 2**(1/16) up
    assert ratio.min() >= 1 - 1e-12 and ratio.max() < 2 ** (1 / STEPS) * (1 + 1e-12)
    assert qt.codes[3, 0] == 0 and (qt.dequantize()[3, :group] == 0).all() and qt.codes[nonzero].min() == 1


@pytest.mark.parametrize("peak, bits", [(7277.344086872271, 6), (0.0024168688810087074, 4), (1.27, 8)])
def test_quantize_takes_the_smallest_scale_that_clips_nothing_next_to_a_step(peak, bits):
    """Pass seventy-four: a peak a few ulps above M 2**(c/16) was given exponent c (the float
    comparison said it fit), so its scale was one step too small and the peak was clipped to M.
    The exponent, from mpmath at 60 digits: the smallest c with M 2**(c/16) >= peak."""
    import mpmath

    M = 2 ** (bits - 1) - 1
    with mpmath.workdps(60):
        c = int(mpmath.ceil(16 * mpmath.log(mpmath.mpf(peak) / M, 2)))
        assert M * mpmath.power(2, mpmath.mpf(c) / 16) >= peak > M * mpmath.power(2, mpmath.mpf(c - 1) / 16)
    qt = quantize([[peak, -peak / 3]], bits, 2)
    assert qt.base == c and qt.codes.tolist() == [[1]] and qt.q[0, 0] == round(peak / 2 ** (c / 16)) <= M


def test_quantize_refuses_what_it_cannot_store():
    with pytest.raises(ValueError, match="weight must be a 2-D matrix"):
        quantize(np.ones(8), 8, 4)
    with pytest.raises(ValueError, match="bits must be from 2 to 16"):
        quantize(np.ones((2, 8)), 17, 4)
    with pytest.raises(TypeError, match="bits must be an integer"):
        quantize(np.ones((2, 8)), True, 4)
    with pytest.raises(ValueError, match="K \\(weight.shape\\[1\\]\\)=8 is not divisible by group=3"):
        quantize(np.ones((2, 8)), 8, 3)
    with pytest.raises(ValueError, match="weight"):
        quantize([[1.0, float("nan")]], 8, 2)
    with pytest.raises(ValueError, match="span 19.9 octaves; one byte per scale holds 15.9"):
        quantize([[1.0, 1.0], [1e-6, 1e-6]], 8, 2)
    # a subnormal peak: 5e-324 / 127 is 0, and its exponent was log2(0) = -inf cast to an integer
    # (scale 0, every weight dequantized to 0, no error); refused with the smallest peak it stores
    with pytest.raises(ValueError, match=r"largest \|value\| is 4.94e-324, below 1.49e-36"):
        quantize(np.array([[5e-324, 0.0]]), 8, 2)
    tiny = quantize(np.array([[3e-36, -1e-36]]), 8, 2).dequantize()  # just above: within half a step
    step = 2 ** (math.ceil(16 * math.log2(3e-36 / 127)) / 16)
    assert abs(tiny[0, 0] - 3e-36) <= step / 2 * 1.0001 and abs(tiny[0, 1] + 1e-36) <= step / 2 * 1.0001
    # a peak beyond float32's largest (3.4028e38): 1e39 dequantized to inf with only a numpy
    # warning; refused with the value named. Just below it: within half a step, finite
    with pytest.raises(ValueError, match=r"a value of 1e\+39, whose dequantized weight .* beyond float32's largest"):
        quantize(np.array([[1e39, 1.0]]), 8, 2)
    big = quantize(np.array([[3.3e38, 1.0]]), 8, 2).dequantize()
    step = 2 ** (math.ceil(16 * math.log2(3.3e38 / 127)) / 16)
    assert np.isfinite(big).all() and abs(float(big[0, 0]) - 3.3e38) <= step / 2 * 1.0001
    assert stored_bytes((384, 1536), 10, 32) == 384 * 1536 * 10 // 8 + 384 * 48
    assert stored_bytes((3, 4), 10, 4) == math.ceil(3 * 4 * 10 / 8) + 3
    # a group that does not divide K counted a floor of K / group, one larger than K no scale
    # byte at all; a negative or fractional shape, or 0 bits, gave a number (pass thirty-four)
    for shape, bits, group, words in (((3, 4), 8, 3, "not divisible by group=3"), ((3, 4), 8, 8, "group=8"),
                                      ((-3, 4), 8, 1, "N (shape[0]) must be an integer >= 1"),
                                      ((3, 4), 0, 1, "bits must be an integer >= 1")):
        with pytest.raises(ValueError, match=re.escape(words)):
            stored_bytes(shape, bits, group)
    with pytest.raises(TypeError, match="N .shape.0.. must be an integer"):
        stored_bytes((3.5, 4), 8, 1)


# ---- the tokenizer ---------------------------------------------------------------------------------

def _texts() -> list[str]:
    """At least 500 texts, the same every run: words, accents, punctuation runs, numbers, emoji,
    CJK and other scripts, very long words, special tokens and control characters as typed, and
    texts longer than the model's 64 tokens."""
    rng = np.random.default_rng(29)
    pools = {
        "words": "the cat sat on mat attention heads queries keys values model token layer weights softmax "
                 "unbelievable transformers rotary embeddings running jumped quickly".split(),
        "accents": ["café", "naïve", "Zürich", "façade", "résumé", "São", "Ångström", "Dvořák", "Łódź", "crème",
                    "brûlée", "İstanbul", "ΟΔΟΣ", "Ελλάδα", "МОСКВА", "straße", "e\u0301te\u0301", "a\u0308pfel"],
        "punct": ["?!", "...", "--", "!!!", "(", ")", "«", "»", "“", "”", "—", "'s", ",", ";:", "…", "¿", "¡", "@#",
                  "$%", "^&*", "~`", "\\", "/", "_", "+=", "<>", "|"],
        "numbers": ["3.14", "1,000,000", "2024", "-7", "1e-9", "42nd", "0.5%", "½", "²", "Ⅻ", "٣", "१२३", "１２３"],
        "emoji": ["😀", "👍🏽", "🇫🇷", "❤️", "🥲", "👩\u200d💻", "☃", "★", "→", "∑", "∞", "©", "🤖"],
        "cjk": ["東京", "中文", "日本語", "한국어", "テスト", "漢字", "你好世界", "𠀀", "가나다"],
        "other": ["नमस्ते", "สวัสดี", "مرحبا", "שלום", "ﬁne", "ＡＢＣ", "Ǆ", "ǅ", "ß", "ŉ", "İ"],
        "long": ["a" * 101, "x" * 100, "supercalifragilisticexpialidocious",
                 "pneumonoultramicroscopicsilicovolcanoconiosis", "Donaudampfschifffahrtsgesellschaftskapitän"],
        "special": ["[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]", "[cls]", "[unused5]", "x[SEP]y", "[[CLS]]"],
        "control": ["\t", "\n", "\r\n", "\u200b", "\x00", "\ufeff", "\u00ad", "\u0085", "\u2028", "\u3000", "\ufffd",
                    "\ue000", "\x07"],
    }
    names = list(pools)
    texts = ["", " ", "\n\t ", "\u200b", "\x00", "[CLS]", "a" * 101, "a" * 100, "😀", "東京", "Hello, world!",
             "ΟΔΟΣ Σ", "I.B.M. (and co.) – 3.5%!!!"]
    for n in range(560):
        k = int(rng.integers(1, 90 if n % 7 == 0 else 30))  # every 7th text long enough to be cut at 64 tokens
        parts = []
        for _ in range(k):
            pool = pools[names[int(rng.integers(len(names)))]] if rng.random() < 0.45 else pools["words"]
            word = pool[int(rng.integers(len(pool)))]
            if rng.random() < 0.2:
                word = word.upper() if rng.random() < 0.5 else word.capitalize()
            parts.append(word)
            parts.append(["", " ", " ", " ", ", ", "\n", "-"][int(rng.integers(7))])
        texts.append("".join(parts).strip() if n % 3 else "".join(parts))
    return texts


@pytest.fixture(scope="module")
def tables(live, model):
    return live.tokenizer_tables(model)


def _node(request: dict) -> list:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the browser's tokenizer runs in node for these tests")
    res = subprocess.run([node, str(DRIVER)], input=json.dumps(request), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def packaged(model):
    """transformers' BertTokenizer, read from the model package's folder (no network)."""
    from transformers import BertTokenizer

    return BertTokenizer.from_pretrained(str(bert.model_dir()), local_files_only=True)


@pytest.mark.slow
def test_js_tokenizer_equals_the_packaged_tokenizer_on_573_texts(tables, packaged, live):
    texts = _texts()
    assert len(texts) >= 500
    got = _node(dict(vocab=str(bert.model_dir() / "vocab.txt"), tables=tables, max_tokens=live.MAX_TOKENS, texts=texts))
    cut = 0
    for text, g in zip(texts, got):
        want = packaged(text, truncation=True, max_length=live.MAX_TOKENS)["input_ids"]
        assert g["ids"] == want, (text, g["tokens"], packaged.convert_ids_to_tokens(want))
        assert g["tokens"] == packaged.convert_ids_to_tokens(want)
        whole = len(packaged(text)["input_ids"])  # untruncated: what the box says it cut from
        assert g["total"] == whole, text
        assert (g["cut"] is not None) == (whole > live.MAX_TOKENS)
        cut += g["cut"] is not None
    assert 20 <= cut < len(texts) / 4  # the cut is tested, and most texts are not cut
    assert sum("[UNK]" in g["tokens"] for g in got) > 50  # emoji, other scripts, long words
    assert sum(len(g["tokens"]) == 2 for g in got) >= 4  # "", spaces, a lone control character
    assert "tokenizer equal to the\npackaged one on more than 500 texts" in (ROOT / "docs" / "viewer.md").read_text()


@pytest.mark.slow
def test_js_tokenizer_equals_the_packaged_one_on_every_character_of_the_basic_plane(tables, model, live):
    """Each code point between two letters, U+0000 to U+FFFF (surrogates aside): punctuation,
    accents, spaces, control characters, CJK, Hangul, characters newer than some browsers know."""
    chars = [chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF]
    texts = [f"x{c}y" for c in chars]
    got = _node(dict(vocab=str(bert.model_dir() / "vocab.txt"), tables=tables, max_tokens=live.MAX_TOKENS, texts=texts))
    tk = model["tokenizer"]
    want = tk.encode_batch(texts)
    bad = [(hex(ord(c)), g["tokens"], w.tokens) for c, g, w in zip(chars, got, want) if g["ids"] != w.ids]
    assert not bad, bad[:10]


def test_js_tokenizer_says_what_it_could_not_read(tables, live):
    texts = ["I 😀 emoji and 𝔘𝔫𝔦", "a" * 120 + " b", " ".join(["word"] * 70), "[CLS] x [cls]"]
    got = _node(dict(vocab=str(bert.model_dir() / "vocab.txt"), tables=tables, max_tokens=live.MAX_TOKENS, texts=texts))
    emoji, long_word, too_long, special = got
    assert emoji["unknown"] == ["😀", "𝔘𝔫𝔦"] and emoji["tokens"].count("[UNK]") == 2 and emoji["cut"] is None
    assert long_word["longWords"] == ["a" * 120] and long_word["tokens"] == ["[CLS]", "[UNK]", "b", "[SEP]"]
    assert too_long["total"] == 72 and too_long["cut"] == dict(kept=62, dropped=8, first="word")
    assert len(too_long["tokens"]) == 64 and too_long["tokens"][-1] == "[SEP]"
    assert special["tokens"] == ["[CLS]", "[CLS]", "x", "[", "cl", "##s", "]", "[SEP]"]  # typed as the special token


def test_tokenizer_tables_by_hand(tables, live):
    def kind(cp):
        r = next((r for r in tables["runs"] if r[0] <= cp < r[1]), None)
        return None if r is None else r[2]

    mapped = dict((cp, out) for cp, out in tables["map"])
    assert kind(ord("a")) is None and kind(ord("\u200b")) == live.DROP and kind(0) == live.DROP
    assert kind(ord("\t")) == live.SPACE and kind(0x3000) == live.SPACE and kind(0x85) == live.DROP  # NEL is a control
    assert kind(ord("中")) == live.CJK and kind(ord("가")) == live.HANGUL
    assert live._hangul(ord("각")) == "\u1100\u1161\u11a8"  # g + a + final g
    assert mapped[ord("É")] == "e" and mapped[ord("A")] == "a" and mapped[ord("Σ")] == "σ" and mapped[0x130] == "i"
    assert ord("ß") not in mapped and ord("ﬁ") not in mapped  # no case folding, no compatibility decomposition
    punct = lambda cp: any(a <= cp < b for a, b in tables["punct"])  # noqa: E731
    assert all(punct(ord(c)) for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~«»—¿")
    assert not any(punct(ord(c)) for c in "a1€∑😀 中")


# ---- the payload ------------------------------------------------------------------------------------

def read_payload(body: bytes) -> tuple[dict, dict]:
    """The payload by its documented layout, decoded here: the header and every tensor as numpy
    (float32 ones as they are; quantized ones as their integers q and scale codes)."""
    assert body[:4] == b"MHAB"
    n = struct.unpack("<I", body[4:8])[0]
    header = json.loads(body[8:8 + n])
    start = 8 + n
    assert start % 4 == 0

    def section(place):
        return body[start + place["offset"]: start + place["offset"] + place["bytes"]]

    tensors = {}
    for t in header["tensors"]:
        shape = tuple(t["shape"])
        if t["kind"] == "f32":
            tensors[t["name"]] = np.frombuffer(section(t["data"]), "<f4").reshape(shape)
            continue
        raw = np.frombuffer(section(t["data"]), np.uint8)
        size = math.prod(shape)
        if t["bits"] == 8:
            q = raw.view(np.int8).astype(np.int32)
        else:  # low bytes, then 4 high 2-bit fields per byte
            high = (raw[size:, None] >> np.array([0, 2, 4, 6], dtype=np.uint8)) & 3  # (n / 4, 4)
            q = (raw[:size].astype(np.int32) | (high.reshape(-1).astype(np.int32) << 8)) - 512
        codes = np.frombuffer(section(t["codes"]), np.uint8).reshape(shape[0], -1)
        tensors[t["name"]] = dict(q=q.reshape(shape), codes=codes, base=t["base"], bits=t["bits"], group=t["group"])
    header["vocab_text"] = section(header["vocab"]).decode("utf-8")
    return header, tensors


@pytest.fixture(scope="module")
def payload_file(built_site):
    html = (built_site / "viewer" / "index.html").read_text()
    m = re.search(r'data-explorer="bert_live"><script type="application/json" class="mha-explorer-data" '
                  r'data-src="([^"?]+)\?v=([0-9a-f]+)" data-bytes="(\d+)"', html)
    assert m, "the viewer page has no bert_live payload element"
    path = (built_site / "viewer" / m.group(1)).resolve()
    body = path.read_bytes()
    assert hashlib.sha256(body).hexdigest()[:12] == m.group(2) and int(m.group(3)) == len(body)
    return body


@pytest.mark.build
def test_payload_holds_the_package_weights_as_stored_and_fits_25_mb(payload_file, model, live):
    header, tensors = read_payload(payload_file)
    assert len(payload_file) <= 25_000_000, len(payload_file)
    w, cfg = model["weights"], model["config"]
    vocab = (bert.model_dir() / "vocab.txt").read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert header["vocab_text"].split("\n") == vocab
    unused = [i for i, t in enumerate(vocab) if re.fullmatch(r"\[unused\d+\]", t)]
    assert [i for a, b in header["skipped_rows"] for i in range(a, b)] == unused and len(unused) == 994
    kept = np.setdiff1d(np.arange(len(vocab)), unused)
    c = header["config"]
    assert (c["layers"], c["heads"], c["d_model"], c["d_ff"], c["eps"], c["max_tokens"]) == (
        cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["hidden_size"], cfg["intermediate_size"],
        cfg["layer_norm_eps"], 64)
    source = dict(live.needed(model))
    assert set(tensors) == set(source)
    # the last layer stops at its attention weights
    assert "5.v.w" not in tensors and "5.f1.w" not in tensors and "5.k.w" in tensors
    for name, t in tensors.items():
        want = w[source[name]]
        want = want[kept] if name == "word" else want[:64] if name == "pos" else want[0] if name == "type" else want
        if isinstance(t, np.ndarray):
            np.testing.assert_array_equal(t, want, err_msg=name)
            continue
        bits, group = (8, 32) if name == "word" else (10, 32)
        assert (t["bits"], t["group"]) == (bits, group), name
        # what rounding to the group's scale gives, written out here: s = 2**(code/16) >= max|w| / M
        M = 2 ** (bits - 1) - 1
        blocks = want.astype(np.float64).reshape(want.shape[0], -1, group)
        exps = np.ceil(STEPS * np.log2(np.abs(blocks).max(-1) / M))
        s = 2.0 ** ((t["base"] + t["codes"].astype(np.int64) - 1) / STEPS)
        assert (np.abs(s - 2.0 ** (exps / STEPS)) <= 1e-12 * s).mean() > 0.999, name  # a log2 at a power may round up
        half = s[..., None] / 2 * (1 + 1e-6)
        assert (np.abs(t["q"].reshape(blocks.shape) * s[..., None] - blocks) <= half).all(), name
        assert np.abs(t["q"]).max() <= M


@pytest.mark.build
def test_the_page_numbers_and_claims_hold(built_site, live):
    """data() as the build wrote it: the schemes' sizes by hand, and the comparisons the page makes."""
    d = json.loads((built_site / "figures" / "bert_live.json").read_text())
    s = d["schemes"]
    emb = (30522 - 994) * 384
    enc = 5 * (4 * 384 * 384 + 2 * 384 * 1536) + 2 * 384 * 384
    vectors = s["float32"]["bytes"] - 4 * (emb + enc)
    assert s["float16"]["bytes"] == 2 * (emb + enc) + vectors
    assert s["int8_channel"]["bytes"] == emb + 30522 - 994 + enc + (5 * (4 * 384 + 1536 + 384) + 2 * 384) + vectors
    assert s["chosen"]["bytes"] == emb + emb // 32 + enc * 10 // 8 + enc // 32 + vectors
    assert d["payload_bytes"] == len((built_site / "figures" / "bert_live.explorer.bin").read_bytes())
    assert s["chosen"]["mb"] <= d["payload_mb"] <= d["payload_limit_mb"] == 25
    # the page: int8 per output channel and in groups pass the bound; the chosen storage does not
    assert s["int8_channel"]["max_error"] > s["int8_group"]["max_error"] > d["tolerance"] > d["max_error"]
    assert d["max_error"] == s["chosen"]["max_error"] and s["float16"]["max_error"] < d["max_error"] / 5
    assert s["f16_encoder"]["mb"] > d["payload_limit_mb"]
    assert s["f16_encoder"]["max_error"] > 0.5 * d["max_error"]  # "most of the change comes from the 8-bit embeddings"
    assert d["argmax_flips"] == 0 and d["clear_rows"] > 10_000  # "all ... such rows keep theirs"
    assert d["longest"] == 64 and d["n_sentences"] == len(live.CHECK_SENTENCES) == 20


@pytest.mark.build
def test_the_bench_finds_the_payloads_fetched_on_request(built_site, payload_file):
    from tools import bench_bert_live

    assert bench_bert_live.payload_file(built_site).read_bytes() == payload_file
    total, payloads = bench_bert_live.site_sizes(built_site)
    generator = built_site / "figures" / "lm_generator.explorer.json"
    assert payloads == {"figures/bert_live.explorer.bin": len(payload_file),
                        "figures/lm_generator.explorer.json": generator.stat().st_size}
    assert total > sum(payloads.values())


def test_int8_per_output_channel_moves_attention_past_the_bound(model, live):
    """The page's reason not to use the usual int8: quantized here with plain float scales (max|row| / 127),
    the largest change on the check sentences passes 0.02."""
    w = dict(model["weights"])
    for key in [k for k in w if k.startswith("encoder") and k.endswith(".weight") and w[k].ndim == 2] \
            + ["embeddings.word_embeddings.weight"]:
        s = np.abs(w[key]).max(axis=1, keepdims=True) / 127
        w[key] = (np.rint(w[key] / np.where(s == 0, 1, s)) * s).astype(np.float32)
    int8 = dict(model, weights=w)
    worst = 0.0
    for text in live.CHECK_SENTENCES[:8]:
        ids, _ = bert.tokenize(model, text)
        worst = max(worst, float(np.abs(bert.bert_forward(int8, ids)["attentions"]
                                        - bert.bert_forward(model, ids)["attentions"]).max()))
    assert worst > live.TOLERANCE, worst


def test_bert_live_is_a_figure_with_a_binary_explorer():
    import figures

    script = figures.scripts()["bert_live"]
    assert (script.kind, script.explorer, script.explorer_binary, script.chapter) == (
        "figure", "bert_live", True, "real_model")
    assert script.request().outputs("figure")["explorer"] == "bert_live.explorer.bin"


# ---- in Chromium -----------------------------------------------------------------------------------

_RUN_ALL = """async (texts) => {
  const ui = document.querySelector('.mha-explorer[data-explorer=bert_live] .mha-explorer-ui');
  const m = await ui.loadModel();
  const B = window.mhaBertLive;
  const b64 = (f) => {
    const u = new Uint8Array(f.buffer, f.byteOffset, f.byteLength);
    let s = '';
    for (let i = 0; i < u.length; i += 0x8000) s += String.fromCharCode.apply(null, u.subarray(i, i + 0x8000));
    return btoa(s);
  };
  return texts.map((t) => {
    const r = B.run(m, t);
    return {tokens: r.tokens, ids: r.ids, weights: b64(r.weights), scores: r.scores};
  });
}"""


@pytest.mark.build
@pytest.mark.browser
def test_live_model_in_chromium_equals_mhalib_on_the_20_check_sentences(browser, site_url, built_site, payload_file,
                                                                          model, live):
    """The real payload in the page's own code, every check sentence in one call: each head's weights
    within 0.02 of mhalib's float32 forward pass, the strongest key of each clear row the same, the
    head-type scores within 0.02; the page's numbers are what the browser does; and on three
    sentences the browser equals numpy run on the payload's weights as read back here."""
    from tools.screenshots import goto

    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        goto(page, site_url + "viewer/")
        page.locator(BOX + ".mha-explorer-ui[data-ready]").wait_for()
        runs = page.evaluate(_RUN_ALL, list(live.CHECK_SENTENCES))
    finally:
        page.close()
    assert not errors, errors
    d = json.loads((built_site / "figures" / "bert_live.json").read_text())
    header, tensors = read_payload(payload_file)
    stored = {}
    for name, t in tensors.items():  # q * s, as the payload says
        if isinstance(t, np.ndarray):
            stored[name] = t
        else:
            s = 2.0 ** ((t["base"] + t["codes"].astype(np.int64) - 1) / STEPS)
            stored[name] = (t["q"] * np.repeat(s, t["group"], axis=1)).astype(np.float32)
    as_stored = live.as_model(stored)
    worst = score_worst = 0.0
    clear = 0
    for n, (text, r) in enumerate(zip(live.CHECK_SENTENCES, runs)):
        ids, tokens = bert.tokenize(model, text)
        assert r["tokens"] == tokens and r["ids"] == ids.tolist(), text
        T = len(tokens)
        got = np.frombuffer(base64.b64decode(r["weights"]), "<f4").reshape(6, 12, T, T)
        want = bert.bert_forward(model, ids)["attentions"]
        err = np.abs(got - want)
        assert err.max() <= live.TOLERANCE, (text, np.unravel_index(err.argmax(), err.shape), err.max())
        worst = max(worst, float(err.max()))
        top2 = np.sort(want, axis=-1)[..., -2:]
        rows = top2[..., 1] - top2[..., 0] > 0.05
        clear += int(rows.sum())
        assert (got.argmax(-1) == want.argmax(-1))[rows].all(), text
        ref = head_scores(want, tokens)
        for k in HEAD_TYPES:
            js = np.array(r["scores"][k], dtype=float)  # null -> nan
            assert np.array_equal(np.isnan(js), np.isnan(ref[k])), (text, k)
            if not np.isnan(ref[k]).all():
                diff = float(np.nanmax(np.abs(js - ref[k])))
                assert diff <= live.TOLERANCE, (text, k, diff)
                score_worst = max(score_worst, diff)
        if n in (0, 8, 13):  # numpy on the weights as stored: the JavaScript's arithmetic alone
            np.testing.assert_allclose(got, bert.bert_forward(as_stored, ids)["attentions"], rtol=0, atol=2e-5)
    # the page's numbers (data(), numpy on the stored weights) are the browser's, to their printed digits
    assert abs(worst - d["max_error"]) < 1e-4 and abs(score_worst - d["score_error"]) < 1e-4, (worst, score_worst)
    assert clear == d["clear_rows"]
    text = (built_site / "viewer" / "index.html").read_text()
    from decimal import ROUND_CEILING, Decimal

    bound = Decimal(repr(d["max_error"])).quantize(Decimal("0.001"), rounding=ROUND_CEILING)  # a bound rounds up
    assert f"no attention weight moves by more than {bound}" in re.sub(r"<[^>]+>", "", text)


def _download(page, button):
    with page.expect_download() as info:
        button.click()
    d = info.value
    return d.suggested_filename, open(d.path(), "rb").read()


@pytest.mark.build
@pytest.mark.browser
def test_live_widget_loads_on_request_says_what_it_did_and_saves_the_head(browser, site_url, payload_file, model):
    from tools.screenshots import goto

    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = ctx.new_page()
    errors, fetched = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: fetched.append(r.url) if ".explorer.bin" in r.url else None)
    try:
        goto(page, site_url + "viewer/")
        box, viewer = page.locator(BOX.strip()), page.locator(VIEWER + ".mha-explorer-ui")
        ui = box.locator(".mha-explorer-ui[data-ready]")
        ui.wait_for()
        page.locator(VIEWER + ".mha-explorer-ui[data-ready]").wait_for()
        assert page.locator(".mha-explorer-static[data-static-for=bert_live]").is_hidden()
        go = box.locator(".bl-go")
        assert go.text_content() == f"Load the model ({len(payload_file) / 1e6:.1f} MB) and run"
        text = box.get_by_label("Your sentence")
        text.fill("  ")
        go.click()
        assert "The box is empty" in box.locator(".bl-error").text_content()
        assert not fetched, fetched  # nothing fetched before the reader asks for a run

        # the progress bar moves while the weights arrive; one fetch; the viewer shows the sentence
        page.evaluate("""() => { window.__seen = []; const p = document.querySelector('.bl-progress');
          new MutationObserver(() => window.__seen.push([p.hidden, Number(p.value)]))
            .observe(p, {attributes: true}); }""")
        text.fill("I saw 😀 at the café")
        go.click()
        page.wait_for_function("el => el.dataset.runs === '1'", arg=ui.element_handle(), timeout=60_000)
        seen = page.evaluate("window.__seen")
        assert any(not hidden and 0 < v < len(payload_file) for hidden, v in seen), seen[:5]
        assert box.locator(".bl-progress").is_hidden() and go.text_content() == "Run"
        assert len(fetched) == 1 and box.locator(".bl-error").is_hidden()
        ids, tokens = bert.tokenize(model, "I saw 😀 at the café")
        assert viewer.get_attribute("data-sentence") == "9"
        assert page.eval_on_selector_all(VIEWER + ".bv-q .bv-tok .bv-t", "ts => ts.map(t => t.textContent)") == tokens
        assert "[UNK]" in tokens and page.locator(VIEWER + "select[id$='-sentence'] option:checked").text_content() \
            == "Yours: I saw 😀 at the café"
        note = box.locator(".bl-note").text_content()
        assert "“😀” is not in the model's vocabulary of 30,522 tokens" in note and "[UNK]" in note, note
        assert box.locator(".bl-status").text_content().startswith(f"{len(tokens)} tokens, every head of all 6 layers")
        assert page.locator(VIEWER + "select[id$='-from']").input_value() == "sentence"
        assert page.text_content(VIEWER + ".bv-summary").startswith("On this sentence, layer ")

        # past the maximum length, by the keyboard: the box says where the text was cut
        text.fill(" ".join(["word"] * 70))
        text.press("Enter")
        page.wait_for_function("el => el.dataset.runs === '2'", arg=ui.element_handle())
        note = box.locator(".bl-note").text_content()
        assert "Your text makes 72 tokens" in note and "stops before “word” (token 64 of 72" in note, note
        assert page.locator(VIEWER + ".bv-q .bv-tok").count() == 64
        text.fill("\u200b\u200b")
        go.click()
        assert "Nothing of this text is left" in box.locator(".bl-error").text_content()

        # the head on show, saved: a reader's sentence in full precision; named after sentence, layer, head
        text.fill("The cat saw the other cat.")
        go.click()
        page.wait_for_function("el => el.dataset.runs === '3'", arg=ui.element_handle())
        page.click(VIEWER + ".bv-thumb[data-layer='3'][data-head='4']")
        stem = "all-MiniLM-L6-v2_the-cat-saw-the-other-cat_layer3_head4"
        ids, tokens = bert.tokenize(model, "The cat saw the other cat.")
        want = bert.bert_forward(model, ids)["attentions"][2, 3]
        name, body = _download(page, page.locator(VIEWER + ".bv-save[data-kind=csv]"))
        rows = list(csv.reader(io.StringIO(body.decode("utf-8"))))
        assert name == stem + ".csv" and rows[0] == ["query \\ key", *tokens] and [r[0] for r in rows[1:]] == tokens
        got = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
        assert np.abs(got - want).max() <= 0.02
        # six decimals, or every digit of a weight that six would write as 0 or 1
        assert all(len(v.split(".")[1]) == 6 or float(f"{float(v):.6f}") in (0, 1) for r in rows[1:] for v in r[1:])
        name, body = _download(page, page.locator(VIEWER + ".bv-save[data-kind=svg]"))
        svg = body.decode("utf-8")
        assert name == stem + ".svg" and svg.startswith("<svg") and "layer 3, head 4" in svg
        assert svg.count("<line ") == int((want >= 0.005).sum()) and svg.count(">cat</text>") == 4
        name, body = _download(page, page.locator(VIEWER + ".bv-save[data-kind=png]"))
        assert name == stem + ".png" and body[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">I", body[16:20])[0] == 1280  # twice the SVG's 640 px
        # a built-in sentence keeps its stored weights, to 3 decimals
        page.locator(VIEWER + "select[id$='-sentence']").select_option("1")
        name, body = _download(page, page.locator(VIEWER + ".bv-save[data-kind=csv]"))
        assert name == "all-MiniLM-L6-v2_the-cat-sat-on-the-mat_layer3_head4.csv"
        # (or "<0.0005" and ">0.9995": a weight above 0 that rounds to 0.000, one below 1 that rounds to 1.000)
        assert all(v in ("<0.0005", ">0.9995") or len(v.split(".")[1]) == 3 for v in body.decode().splitlines()[1].split(",")[1:])

        page.set_viewport_size({"width": 390, "height": 844})
        assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
        assert not errors, errors
    finally:
        ctx.close()


@pytest.mark.build
@pytest.mark.browser
def test_live_widget_that_cannot_fetch_the_model_says_so(browser, site_url):
    from tools.screenshots import goto

    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route("**/*.explorer.bin*", lambda route: route.fulfill(status=404, body="gone"))
    try:
        goto(page, site_url + "viewer/")
        box = page.locator(BOX.strip())
        box.locator(".mha-explorer-ui[data-ready]").wait_for()
        box.locator(".bl-go").click()
        page.wait_for_function("document.querySelector('.bl-error').textContent.length > 0")
        msg = box.locator(".bl-error").text_content()
        assert "The model could not be loaded (" in msg and "HTTP 404" in msg and "built-in sentences below" in msg
        assert box.locator(".bl-progress").is_hidden() and box.locator(".bl-go").is_enabled()
        assert not errors, errors
    finally:
        page.close()
