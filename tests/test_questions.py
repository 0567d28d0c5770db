"""Predict-then-check questions: every concept page ends with them, the quiz has at least 30,
and every number in an answer is recomputed here from its formula (by hand, in plain Python or
numpy, or with Hugging Face's BERT for the real model), so a wrong value fails.

Three tiers: the figure scripts' data and the pages' Markdown (fast), the built pages (build),
the real model recomputed with ``transformers`` (slow).
"""
from __future__ import annotations

import math
import re
from html import unescape
from pathlib import Path

import numpy as np
import pytest

import figures
from helpers import math_as_tex

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# The concept pages whose questions this module holds; kv_cache and flash_attention had theirs
# first (their numbers are held in tests/test_pages.py, and some of their answers are reasoning only);
# sampling's answers are held in tests/test_sampling_page.py with the figures they quote.
PAGES = ["attention", "architecture", "one_head", "mha", "backward", "heads", "real_heads", "position", "sinusoidal",
         "learned", "rope", "alibi", "compare", "long_context", "numerics"]
CONCEPT_PAGES = PAGES + ["kv_cache", "flash_attention", "sampling"]

E = math.e
SQRT2 = math.sqrt(2.0)


def d(name: str, **params) -> dict:
    return figures.load(name).data(**params)


def softmax(x) -> np.ndarray:
    """Softmax of each row, written out here (not mhalib's)."""
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def sinusoidal(n: int, D: int) -> np.ndarray:
    """PE[p, 2i] = sin(p w_i), PE[p, 2i+1] = cos(p w_i), w_i = 10000^(-2i/D), written out here."""
    p = np.arange(n)[:, None]
    w = 10000.0 ** (-np.arange(0, D, 2) / D)
    pe = np.empty((n, D))
    pe[:, 0::2], pe[:, 1::2] = np.sin(p * w), np.cos(p * w)
    return pe


# --- the questions' structure, read from the Markdown --------------------------------------------

def questions(page: str) -> list[tuple[str, str]]:
    """(title, answer) of each question in the page's "Check yourself" section (the quiz: the whole page)."""
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    if page != "quiz":
        summary = text.index('!!! success "Summary"')
        start = text.index("\n## Check yourself\n")
        assert start > summary, f"{page}: the questions come after the summary"
        end = text.find("\n## ", start + 1)
        text = text[start: end if end > 0 else None]
    found = []
    for m in re.finditer(r'^\?\?\? question "([^"\n]+)"\n((?:    .*\n|\n)+)', text, flags=re.M):
        found.append((m.group(1), m.group(2)))
    return found


@pytest.mark.parametrize("page", CONCEPT_PAGES)
def test_every_concept_page_ends_its_lesson_with_questions(page):
    qs = questions(page)
    assert 2 <= len(qs) <= 3, f"{page}: {len(qs)} questions after the summary"
    for title, answer in qs if page in PAGES else ():
        assert "{{ value " in answer or "{{ table " in answer, f"{page}: no number from data() in the answer to {title!r}"


def test_the_questions_section_follows_the_summary_directly():
    """Nothing but the questions between the summary and the next section (other sections go elsewhere)."""
    for page in CONCEPT_PAGES:
        text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
        after = text[text.index('!!! success "Summary"'):]
        first_heading = re.search(r"^## .*$", after, flags=re.M)
        assert first_heading and first_heading.group(0) == "## Check yourself", page


def test_quiz_has_at_least_30_numbered_questions_that_say_where_to_read_more():
    qs = questions("quiz")
    assert len(qs) >= 30
    assert [int(t.split(".")[0]) for t, _ in qs] == list(range(1, len(qs) + 1))
    new = qs[24:]  # the questions added with the page questions
    assert sum("{{ value " in a for _, a in new) == len(new)
    assert sum(t.split(". ", 1)[1].startswith("Predict") for t, _ in new) >= 4


def test_quiz_covers_every_topic():
    titles = " ".join(t for t, _ in questions("quiz")).lower()
    for topic in ("heads", "τ", "minilm", "flops", "kv cache", "sinusoidal", "learned", "rope", "alibi",
                  "no positional encoding", "top-p"):
        assert topic in titles, topic


# --- the data the answers use ---------------------------------------------------------------------

def test_temperature_two_keys_is_a_sigmoid_of_the_score_gap():
    out = d("temperature_two_keys")
    assert out["scores"] == [2.0, 0.0] and [r["tau"] for r in out["rows"]] == [0.5, 1.0, 2.0, 4.0]
    for r in out["rows"]:
        p = 1 / (1 + math.exp(-2 / r["tau"]))
        assert r["weights"][0] == pytest.approx(p, abs=1e-12) and r["weights"][1] == pytest.approx(1 - p, abs=1e-12)
        assert r["entropy"] == pytest.approx(-p * math.log(p) - (1 - p) * math.log(1 - p), abs=1e-12)
    assert out["uniform"] == pytest.approx(math.log(2))
    three = d("temperature_two_keys", scores=(1.0, 1.0, 1.0), taus=(0.3,))
    assert three["rows"][0]["entropy"] == pytest.approx(math.log(3)) == pytest.approx(three["uniform"])
    with pytest.raises(ValueError, match="scores must hold at least two"):
        d("temperature_two_keys", scores=(1.0,))


def test_attention_flops_table_against_8TD2_and_4T2D():
    out = d("attention_flops_table")
    D, H = 768, 12
    assert (out["d_model"], out["n_heads"], out["d_head"], out["crossover"]) == (D, H, 64, 1536)
    for r in out["rows"]:
        T = r["T"]
        assert r["projections"] == 8 * T * D * D and r["attention"] == 4 * T * T * D
        assert r["attention_share"] == pytest.approx(T / (T + 2 * D))
    at = {r["T"]: r for r in out["rows"]}
    assert at[1536]["projections"] == at[1536]["attention"]
    with pytest.raises(ValueError, match="n_heads must divide d_model"):
        d("attention_flops_table", d_model=100, n_heads=12)


def test_nope_counting_gives_one_over_the_number_of_keys_seen():
    out = d("nope_counting", n_tokens=7)
    assert out["tokens"] == ["BOS"] + ["a"] * 6
    assert list(out["keys_seen"]) == [1, 2, 3, 4, 5, 6, 7]
    np.testing.assert_allclose(out["causal"], [1 / (i + 1) for i in range(7)], rtol=0, atol=1e-15)
    np.testing.assert_allclose(out["bidirectional"], np.full(7, 1 / 7), rtol=0, atol=1e-15)


def test_cat_sat_mat_causal_outputs_by_hand():
    out = d("cat_sat_mat_outputs")
    np.testing.assert_array_equal(out["v"], [[2, 0], [0, 2], [1.5, 0.5]])  # the values the answer names
    z = E + 1 + math.exp(0.5)
    expected = [[2, 0],  # cat sees itself only
                [2 / (1 + E), 2 * E / (1 + E)],  # sat: 1/(1+e) on cat, e/(1+e) on itself
                [2 * E / z + 1.5 * math.exp(0.5) / z, 2 / z + 0.5 * math.exp(0.5) / z]]  # mat sees everything
    np.testing.assert_allclose(out["causal_outputs"], expected, rtol=0, atol=1e-12)


# --- the answers on the built pages ---------------------------------------------------------------

def section(site: Path, page: str) -> str:
    """The text of the page's "Check yourself" section (the quiz: the whole article)."""
    html = math_as_tex((site / page / "index.html").read_text(encoding="utf-8"))
    if page == "quiz":
        html = html[html.find("<article"):html.find("</article>")]
    else:
        start = html.find('id="check-yourself"')
        assert start > html.find('class="admonition success"') > 0, f"{page}: questions after the summary"
        end = html.find("<h2", start)
        html = html[start: end if end > 0 else html.find("</article>", start)]
    html = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html, flags=re.S)
    html = re.sub(r'<span class="katex-mathml">.*?</span>', " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def has(text: str, *numbers: str) -> None:
    for n in numbers:
        assert n in text, f"{n!r} not in {text[:300]!r}..."


def heads_maps(tau=SQRT2):
    """The Identity and Swap-K-blocks maps of "The cat sat down", computed here from the embeddings."""
    X = np.array([[0.1, 0.0, 1.0, 0.6], [1.0, 0.5, 0.0, 0.1], [0.9, 0.7, 0.1, 0.0], [0.0, 0.1, 0.8, 0.9]])
    np.testing.assert_array_equal(X, d("heads_in_action")["X"])  # the embeddings the page shows
    identity = dict(single=softmax(X @ X.T / tau), head1=softmax(X[:, :2] @ X[:, :2].T / tau),
                    head2=softmax(X[:, 2:] @ X[:, 2:].T / tau))
    swap_head1 = softmax(X[:, :2] @ X[:, 2:].T / tau)  # head 1: queries' dims 0-1 against keys' dims 2-3
    return X, identity, swap_head1


@pytest.mark.build
@pytest.mark.parametrize("page", CONCEPT_PAGES)
def test_questions_are_collapsed_after_the_summary(built_site, page):
    html = (built_site / page / "index.html").read_text(encoding="utf-8")
    start = html.find('id="check-yourself"')
    assert start > html.find('class="admonition success"') > 0
    end = html.find("<h2", start)
    part = html[start: end if end > 0 else None]
    assert part.count('<details class="question"') >= 2
    assert "{{" not in section(built_site, page)


@pytest.mark.build
def test_attention_answers(built_site):
    t = section(built_site, "attention")
    z = E + 1 + math.exp(0.5)
    zs = math.exp(1 / SQRT2) + 1 + math.exp(0.5 / SQRT2)
    has(t, "(1, 0, 0.5)", f"{math.exp(1 / SQRT2) / zs:.4f}", f"{E / z:.4f}")  # 0.4555, down from 0.5065
    has(t, "(2, 0)", "(0, 2)", f"({2 / (1 + E):.4f}, {2 * E / (1 + E):.4f})")
    a, b, c = E / z, 1 / z, math.exp(0.5) / z  # sat's row without the mask: b on cat, a on itself, c on mat
    has(t, f"({2 * b + 1.5 * c:.4f}, {2 * a + 0.5 * c:.4f})")
    D = 768
    assert 8 * 1536 * D * D == 4 * 1536**2 * D  # equal at T = 2D
    has(t, f"{2 * D:,} tokens", f"{8 * 1536 * D * D:,} FLOPs", f"{128:,} tokens the products are only "
        f"{128 / (128 + 2 * D):.0%}", f"{8192:,} tokens they are {8192 / (8192 + 2 * D):.0%}")


@pytest.mark.build
def test_architecture_answers(built_site):
    t = section(built_site, "architecture")
    D = 768  # GPT-2 small, d_ff = 4 D
    ffn, attention = D * 4 * D + 4 * D + 4 * D * D + D, 4 * D * D + 4 * D
    assert 1.99 < ffn / attention < 2.0
    has(t, f"per block {ffn:,} against {attention:,} .")
    D, H, T = 384, 12, 500  # MiniLM
    assert H * T * T == 3_000_000 and T * D == 192_000
    has(t, f"(1, {H}, 500, 500)", "= 3,000,000 numbers per layer", "= 192,000 numbers", "has 512 position vectors")
    token, position, segment, norm = 30522 * D, 512 * D, 2 * D, 2 * D
    block = (4 * D * D + 4 * D) + (8 * D * D + 5 * D) + 2 * 2 * D  # attention, feed-forward (d_ff = 4 D), two layer norms
    total = token + position + segment + norm + 6 * block
    has(t, f"More than half: {(token + position + segment + norm) / total:.0%} .", f"= {token:,} numbers",
        f"together hold {6 * (4 * D * D + 4 * D) / total:.0%} of the model")


def one_head_by_hand(s: float) -> dict:
    """'The cat quietly sat' at strength s (sat's query and the keys of cat and quietly), in closed form.

    sat's query is (s, 0 || s, 0); cat's key is (s, 0 || 0, 0), quietly's (0, 0 || s, 0); the others are 0.
    One head (width 4): cat and quietly both score s^2 / 2, the others 0. Each of the two heads (width 2):
    its own token scores s^2 / sqrt(2), the other three 0. Values: cat (1, 0 || 1, 0), quietly (0, 1 || 0, 1).
    """
    a = math.exp(s * s / 2)
    w1 = a / (2 * a + 2)  # one head: weight on cat = weight on quietly
    single = math.sqrt(2 * ((1 - w1) ** 2 + w1**2))  # output (w1, w1 || w1, w1) against (1, 0 || 0, 1)
    b = math.exp(s * s / SQRT2)
    w2, other = b / (b + 3), 1 / (b + 3)  # each head: on its token, and on each other token
    two = math.sqrt(2 * ((1 - w2) ** 2 + other**2))  # head 1 returns (w2, other), head 2 (other, w2)
    return dict(w1=w1, single=single, w2=w2, two=two)


@pytest.mark.build
def test_one_head_answers(built_site):
    t = section(built_site, "one_head")
    assert one_head_by_hand(3.0)["two"] == pytest.approx(d("one_head_outputs")["distance"]["two"], rel=1e-9)  # the page's case
    strong, weak = one_head_by_hand(6.0), one_head_by_hand(1.0)
    has(t, f"now {strong['w1']:.4f} each", f"stays {strong['single']:.4f} away", "floor of 1 that",
        f"does not want falls to {1 / (math.exp(36 / SQRT2) + 3):.1e},", f"only {strong['two']:.1e} away")
    assert weak["two"] < 1 < weak["single"]
    has(t, f"just {weak['w2']:.3f} on cat", f"output is {weak['two']:.3f} from", f"head is {weak['single']:.3f} away",
        "best possible 1.")


@pytest.mark.build
def test_mha_answers(built_site):
    t = section(built_site, "mha")
    D = 768
    has(t, f"{4 * D * D + 4 * D:,} with 12 heads and {4 * D * D + 4 * D:,} with 24")
    per_token = 2 * 80 * 8 * 128 * 2
    assert per_token == 320 * 2**10 and 8 * per_token == 2.5 * 2**20
    has(t, f"{per_token:,} bytes (320 KiB)", f"{8 * per_token:,} bytes (2.5 MiB)", "8 times more")
    D = 8192
    gqa, full = 2 * D * D + 2 * D * (8 * 128), 4 * D * D
    assert gqa * 16 == full * 9
    has(t, f"{gqa:,}", f"{full:,}", "9/16")


@pytest.mark.build
def test_heads_answers(built_site):
    t = section(built_site, "heads")

    def w(tau):
        return 1 / (1 + math.exp(-2 / tau))

    def h(p):
        return -p * math.log(p) - (1 - p) * math.log(1 - p)

    has(t, f"{w(1):.4f} at τ = 1", f"{w(0.5):.4f} at τ = 0.5", f"{w(2):.4f} at τ = 2")
    has(t, f"from {h(w(0.5)):.3f} to {h(w(2)):.3f}", f"≈ {math.log(2):.3f}", f"≈ {math.log(4):.3f}")  # (rounded: ≈)
    _, _, swap = heads_maps()
    cat = swap[1]
    assert cat.argmax() == 0 and cat[3] > cat[1]  # The first, then down
    has(t, f"{cat[0]:.2f} and {cat[3]:.2f}, against {cat[1]:.2f} on itself and {cat[2]:.2f} on sat")


@pytest.mark.build
def test_real_heads_answers_structure_and_positions(built_site):
    """The numbers that need only the model's weights file, read here with safetensors."""
    from safetensors.numpy import load_file

    from mhalib.models import bert

    t = section(built_site, "real_heads")
    path = Path(bert.model_dir())
    import json

    config = json.loads((path / "config.json").read_text())
    D, H = config["hidden_size"], config["num_attention_heads"]
    assert (D, H, D // H) == (384, 12, 32)
    weights = load_file(str(path / "model.safetensors"))
    layer0 = [k for k in weights if ".layer.0.attention." in k and "LayerNorm" not in k]
    count = sum(weights[k].size for k in layer0)
    assert count == 4 * D * D + 4 * D
    has(t, "384 / 12 = 32", f"= {count:,} parameters")

    P = weights["embeddings.position_embeddings.weight"].astype(np.float64)
    S = sinusoidal(P.shape[0], D)

    def neighbour_cos(M):
        return float(np.mean([M[p] @ M[p + 1] / np.linalg.norm(M[p]) / np.linalg.norm(M[p + 1])
                              for p in range(len(M) - 1)]))

    learned, sin = neighbour_cos(P), neighbour_cos(S)
    assert sin > learned
    has(t, f"neighbours is {sin:.2f} there, against {learned:.2f} in the learned table")


@pytest.mark.build
def test_position_answers(built_site):
    t = section(built_site, "position")
    X, m, _ = heads_maps()
    order = [2, 0, 3, 1]  # sat The down cat
    Xp = X[order]
    shuffled = softmax(Xp @ Xp.T / SQRT2)
    assert shuffled[0, 1] == pytest.approx(m["single"][2, 0], abs=1e-14)
    has(t, f"{m['single'][2, 0]:.4f} in the original map", f"{shuffled[0, 1]:.4f} in the shuffled")
    tea = d("i_like_tea")
    np.testing.assert_array_equal(tea["E"], [[1, 0], [0, 1], [1, 1]])  # the vectors the answer adds
    np.testing.assert_array_equal(tea["P"], [[0.1, 0], [0, 0.1], [0.1, 0.1]])
    has(t, "\\((0, 1) + (0, 0.1)\\) = (0.0, 1.1)", "\\((1, 1) + (0.1, 0.1)\\) = (1.1, 1.1)")


@pytest.mark.build
def test_sinusoidal_answers(built_site):
    t = section(built_site, "sinusoidal")
    has(t, f"({math.sin(1):.4f}, {math.cos(1):.4f}, {math.sin(0.01):.4f}, {math.cos(0.01):.5f})")  # 0.99995, not 1.0000
    dot = math.cos(1) + math.cos(0.01)
    pe = sinusoidal(60, 4)
    assert pe[0] @ pe[1] == pytest.approx(dot) and pe[50] @ pe[51] == pytest.approx(dot)
    has(t, f"{dot:.4f} from \\(p = 0\\) , and {dot:.4f} from \\(p = 50\\)", "= 2, the largest")
    has(t, f"{2 * math.pi * 10000 ** (510 / 512):,.0f} positions, just under")


@pytest.mark.build
def test_learned_answers(built_site):
    t = section(built_site, "learned")
    has(t, f"= {1024 * 768:,} ,", f"{512 * 768:,} new parameters")
    # mean |cos| of two independent Gaussian directions in 32 dimensions: Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2))
    exact = math.exp(math.lgamma(16) - math.lgamma(16.5)) / math.sqrt(math.pi)
    assert abs(exact - math.sqrt(2 / (math.pi * 32))) < 0.002 and f"{math.sqrt(2 / (math.pi * 32)):.2f}" == "0.14"
    m = re.search(r"The table gives ([0-9.]+)", t)
    assert m and abs(float(m.group(1)) - exact) < 0.01  # 2,016 pairs: the sample mean is this close


@pytest.mark.build
def test_rope_answers(built_site):
    t = section(built_site, "rope")
    q2 = 1.0**2 + 0.3**2
    assert f"{q2:.2f}" == "1.09"
    has(t, f"1.09 \\cos 1.5\\) ≈ {q2 * math.cos(1.5):.4f} , the same", f"= {q2:.2f}.")

    def slowest(d_head):
        return 2 * math.pi * 10000 ** ((d_head - 2) / d_head)

    has(t, f"has {64 // 2} planes", f"≈ {slowest(64):,.0f} positions", f"it is {slowest(128):,.0f}: wider")

    def bound(r, d_head=128):
        theta = [10000 ** (-2 * i / d_head) for i in range(d_head // 2)]
        partial, total = 0j, 0.0
        for th in theta:
            partial += complex(math.cos(r * th), math.sin(r * th))
            total += abs(partial)
        return total / (d_head // 2)

    assert bound(0) == 65 / 2
    has(t, f"= {65 / 2:.1f} , its largest", f"fallen to {bound(256):.1f}")


@pytest.mark.build
def test_alibi_answers(built_site):
    t = section(built_site, "alibi")
    four = [2.0 ** (-2 * h) for h in range(1, 5)]
    eight = [2.0 ** (-h) for h in range(1, 9)]
    has(t, f"{four[0]:.6g}, {four[1]:.6g}, {four[2]:.6g} and {four[3]:.6g}")
    has(t, f"8 heads, {eight[0]:.6g} and {eight[2]:.6g}")  # every other slope of 8 heads, from the first
    has(t, f"= {-7 / 2:.4g} and", f"= {-7 / 256!r} .")  # every digit of -0.02734375: exact
    assert f"{math.exp(-3.5):.2f}" == "0.03"
    has(t, "\\approx 0.03\\) times the weight")


@pytest.mark.build
def test_compare_answers(built_site):
    t = section(built_site, "compare")
    has(t, f"= {512 * 768:,} .", f"{1 / 2:.4f}, {1 / 3:.4f}, {1 / 4:.4f} at positions 1, 2 and 3",
        f"receives {1 / 6:.4f} (one over the length)")


@pytest.mark.build
def test_numerics_answers(built_site):
    t = section(built_site, "numerics")
    f16max = float(np.finfo(np.float16).max)
    assert math.exp(12) > f16max
    has(t, f"{f16max:,.0f}: any score above {math.log(f16max):.2f}", "gives [NaN, 0]")
    m = re.search(r"and gives \[1, ([0-9.e+-]+)\]", t)
    step = float(np.finfo(np.float16).smallest_subnormal)
    assert m and abs(float(m.group(1)) - 1 / (1 + math.exp(12))) <= step  # within one float16 step
    assert float(np.float16(-1e4)) == -10000.0
    with np.errstate(over="ignore"):
        assert np.isneginf(np.float16(-1e9))
    has(t, f"[{1 / 3:.3g}, {1 / 3:.3g}, {1 / 3:.3g}]", "(-10,000)", "stores as −∞", "[0, 0, 0] instead")
    has(t, f"≈ {2 * math.pi * 10000 ** (255 / 512):,.0f} positions instead of {2 * math.pi * 10000 ** (510 / 512):,.0f}")


@pytest.mark.build
def test_quiz_answers(built_site):
    t = section(built_site, "quiz")
    html = (built_site / "quiz" / "index.html").read_text(encoding="utf-8")
    assert html.count('<details class="question"') >= 30
    assert 768 // 12 == 64 and math.sqrt(64) == 8
    has(t, "768/12\\) = 64 , and the scores are divided by \\(\\sqrt{64} = 8\\)")
    has(t, f"≈ {1 / (1 + math.exp(-0.5)):.4f} ; the entropy", f"≈ {math.log(2):.3f}")
    D, T = 768, 8192
    has(t, f"= {4 * T * T * D:,} FLOPs", f"only {8 * T * D * D:,}", f"= {2 * D:,} the")
    per_token = 2 * 32 * 1 * 64 * 2
    assert per_token == 8 * 2**10 and per_token * 32768 == 256 * 2**20
    has(t, f"= {per_token:,} bytes (8 KiB)", f"{per_token * 32768:,} bytes (256 MiB)")
    pe = sinusoidal(3, 128)
    assert pe[2] @ pe[2] == pytest.approx(64)
    has(t, "= 64 ; a PE row", f"= {1024 * 1024:,} (", f"≈ {2 * math.pi:.2f} positions",
        f"≈ {2 * math.pi * 10000 ** (126 / 128):,.0f} (")
    has(t, f"≈ {2**-0.5:.4f} and", f"= {2.0**-8:.6g} (")
    has(t, f"{128 // 2} planes. The fastest", f"It sees {4 + 1} keys, so \\(1/5\\) = {1 / 5:.4f} : under the causal mask",
        f"= {33 / 2:.1f} (")
    scores = 8 * 12 * 2048**2 * 2
    assert scores == 768 * 2**20
    has(t, f"= {scores:,} bytes (768 MiB)")


# --- the real model, recomputed with Hugging Face's BERT ------------------------------------------

@pytest.fixture(scope="module")
def hf_bert():
    import os

    os.environ["HF_HUB_OFFLINE"] = "1"  # the weights ship in site-packages
    import torch
    from transformers import BertModel

    from mhalib.models import bert

    ours = bert.load_model()
    model = BertModel.from_pretrained(ours["path"], attn_implementation="eager", add_pooling_layer=False).eval()
    return ours, model, torch


def _cut(hf, removed):
    """A copy of the model with the heads in ``removed`` (layer, head) cut out of their layer's W_O."""
    import copy

    _, model, torch = hf
    width = model.config.hidden_size // model.config.num_attention_heads
    model = copy.deepcopy(model)
    with torch.no_grad():
        for layer, head in removed:
            model.encoder.layer[layer].attention.output.dense.weight[:, head * width:(head + 1) * width] = 0.0
    return model


def _embedding(model, torch, ids):
    """all-MiniLM-L6-v2's sentence embedding: the mean of the last hidden states, normalised."""
    with torch.no_grad():
        h = model(torch.tensor(ids[None])).last_hidden_state[0].double().numpy()
    v = h.mean(axis=0)
    return v / np.linalg.norm(v)


@pytest.mark.slow
@pytest.mark.build
def test_real_heads_ablation_answer_with_transformers(built_site, hf_bert):
    """The most important head's effect and the least important half's, recomputed with transformers."""
    from mhalib import examples
    from mhalib.models import bert

    t = section(built_site, "real_heads")
    m = re.search(r"most important head \(layer (\d+), head (\d+)\) moves it by ([0-9.]+)", t)
    assert m
    top = (int(m.group(1)) - 1, int(m.group(2)) - 1)
    half = np.zeros((6, 12))  # the ranking is the input (read from the figure's CSV); the drift is checked here
    from helpers import data_file

    for line in data_file(built_site, "bert_head_ablation.csv").decode().splitlines():
        name, index, value = line.split(",")
        if name == "importance":
            layer, head = map(int, index.split(";"))
            half[layer, head] = float(value)
    order = np.argsort(half, axis=None, kind="stable")[: half.size // 2]
    removed = [divmod(int(i), half.shape[1]) for i in order]
    assert top not in removed and len(removed) == 36
    ours, model, torch = hf_bert
    without_top, without_half = _cut(hf_bert, [top]), _cut(hf_bert, removed)
    single = drift = 0.0
    for s in examples.REAL_SENTENCES:
        ids, _ = bert.tokenize(ours, s)
        intact = _embedding(model, torch, ids)
        single += 1 - _embedding(without_top, torch, ids) @ intact
        drift += 1 - _embedding(without_half, torch, ids) @ intact
    n = len(examples.REAL_SENTENCES)
    assert abs(float(m.group(3)) - single / n) < 1.5e-3
    assert single / n > np.sort(half, axis=None)[-2] - 1e-3  # no other head comes close to it
    has(t, f"removing the {len(removed)} least important heads together moves it by {drift / n:.3f}")


@pytest.mark.slow
@pytest.mark.build
def test_quiz_previous_and_next_token_heads_with_transformers(built_site, hf_bert):
    from mhalib import examples
    from mhalib.models import bert

    ours, model, torch = hf_bert
    prev, nxt = np.zeros((6, 12)), np.zeros((6, 12))
    for s in examples.REAL_SENTENCES:
        ids, _ = bert.tokenize(ours, s)
        with torch.no_grad():
            att = np.stack([a[0].numpy() for a in model(torch.tensor(ids[None]), output_attentions=True).attentions])
        T = len(ids)
        prev += np.mean([att[:, :, i, i - 1] for i in range(1, T)], axis=0)  # (L, H)
        nxt += np.mean([att[:, :, i, i + 1] for i in range(T - 1)], axis=0)
    prev, nxt = prev / len(examples.REAL_SENTENCES), nxt / len(examples.REAL_SENTENCES)
    (pl, ph), (nl, nh) = np.unravel_index(prev.argmax(), prev.shape), np.unravel_index(nxt.argmax(), nxt.shape)
    t = section(built_site, "quiz")
    has(t, f"{prev.max():.2%} on average (layer {pl + 1}, head {ph + 1})",
        f"(layer {nl + 1}, head {nh + 1}) manages only {nxt.max():.0%}")
