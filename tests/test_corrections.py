"""The corrected sentences of issue 10 (section 7), the source notes, the references and further reading.

Each corrected number is recomputed here independently (closed forms, torch, hand-built
RoPE) and compared with what ``data()`` returns; the built pages are then checked for the
corrected sentence and against the old one. Figure scripts named here: "bert_positions",
"pe_attention_effect", "dog_bites_man", "embedding_scale", "wavelength_table",
"heads_cost_table".
"""
from __future__ import annotations

import math
import re
from html import unescape

import numpy as np
import pytest
import torch

import figures
from helpers import math_as_tex
from mhalib import examples


def d(name, **params):
    return figures.load(name).data(**params)


def _pe(T: int, D: int) -> np.ndarray:
    """Sinusoidal PE from the formula: sin on even dims, cos on odd, omega_i = 10000^(-2i/D)."""
    pe = np.zeros((T, D))
    for p in range(T):
        for i in range(D // 2):
            w = 10000.0 ** (-2 * i / D)
            pe[p, 2 * i], pe[p, 2 * i + 1] = math.sin(p * w), math.cos(p * w)
    return pe


def _softmax_attention(x: np.ndarray, scale: float, causal: bool = False, q=None, k=None) -> np.ndarray:
    """torch softmax(q k^T * scale) x, with q = k = x unless given; returns (out, weights)."""
    X = torch.tensor(x, dtype=torch.float64)
    Q = X if q is None else torch.tensor(q, dtype=torch.float64)
    K = X if k is None else torch.tensor(k, dtype=torch.float64)
    s = Q @ K.T * scale
    if causal:
        s = s.masked_fill(torch.triu(torch.ones_like(s, dtype=torch.bool), 1), float("-inf"))
    w = torch.softmax(s, dim=-1)
    return (w @ X).numpy(), w.numpy()


# ---- real-model page: 511 of 512, and which position is the exception ------------------------

@pytest.mark.slow
def test_bert_positions_511_of_512_and_the_exception_is_position_0():
    from mhalib.models import bert

    P = torch.tensor(bert.load_model()["weights"]["embeddings.position_embeddings.weight"], dtype=torch.float64)
    S = torch.nn.functional.cosine_similarity(P[:, None, :], P[None, :, :], dim=-1)
    S.fill_diagonal_(-2.0)
    nearest = S.argmax(dim=1)
    adjacent = (nearest - torch.arange(len(P))).abs() == 1
    pos = d("bert_positions")
    assert pos["learned_adjacent_count"] == int(adjacent.sum()) == 511 and pos["n_positions"] == 512
    assert pos["learned_not_adjacent"] == torch.nonzero(~adjacent).flatten().tolist() == [0]
    assert pos["first_nearest"] == int(nearest[0]) == 3
    assert pos["first_nearest_cos"] == pytest.approx(float(S[0, 3]), abs=1e-12)
    assert pos["first_next_cos"] == pytest.approx(float(S[0, 1]), abs=1e-12)
    assert pos["learned_adjacent_share"] == pytest.approx(511 / 512)
    assert f"{pos['learned_adjacent_share']:.0%}" == "100%"  # why the old sentence said 100%
    norms = P.norm(dim=1)
    assert pos["first_norm"] == pytest.approx(float(norms[0])) and pos["median_norm"] == pytest.approx(float(norms[1:].median()), rel=1e-3)
    assert pos["first_norm"] > 4 * pos["median_norm"]
    assert pos["sinusoidal_adjacent_count"] == 512


# ---- sinusoidal page: self rises for all four, neighbours fall for two -----------------------

def test_pe_attention_effect_self_rises_everywhere_neighbours_fall_for_cat_and_down():
    ex = examples.the_cat_sat_down()
    X = ex["X"]
    _, w = _softmax_attention(X, 1 / math.sqrt(2))
    _, w_pe = _softmax_attention(X + _pe(4, 4), 1 / math.sqrt(2))
    eff = d("pe_attention_effect")
    for i in range(4):
        near = [j for j in (i - 1, i + 1) if 0 <= j < 4]
        far = [j for j in range(4) if abs(i - j) >= 2]
        assert eff["self_weight"][i] == pytest.approx((w[i, i], w_pe[i, i]), abs=1e-12)
        assert eff["neighbour_weight"][i] == pytest.approx((w[i, near].sum(), w_pe[i, near].sum()), abs=1e-12)
        assert eff["far_weight"][i] == pytest.approx((w[i, far].sum(), w_pe[i, far].sum()), abs=1e-12)
        assert w_pe[i, i] > w[i, i]                      # self: rises for all four
        assert w_pe[i, far].sum() < w[i, far].sum()      # two or more away: falls for all four
    rises = [i for i in range(4) if eff["neighbour_weight"][i][1] > eff["neighbour_weight"][i][0]]
    assert [ex["tokens"][i] for i in rises] == ["The", "sat"]  # neighbours: falls for cat and down


# ---- position page and quiz Q1: only without a causal mask ---------------------------------

def _dog_bites_man():
    ex = examples.dog_bites_man()
    a, b = ex["sentences"]
    E = ex["embeddings"]
    return a, b, np.array([E[w] for w in a]), np.array([E[w] for w in b])


def test_dog_bites_man_same_outputs_only_without_a_causal_mask():
    a, b, Xa, Xb = _dog_bites_man()
    rows = {r["word"]: r for r in d("dog_bites_man")["rows"]}
    for causal in (False, True):
        oa, _ = _softmax_attention(Xa, 0.5, causal=causal)
        ob, _ = _softmax_attention(Xb, 0.5, causal=causal)
        for w in a:
            diff = np.abs(oa[a.index(w)] - ob[b.index(w)]).max()
            if causal:
                assert rows[w]["diff_causal"] == pytest.approx(diff, abs=1e-12) and diff > 0.1
            else:
                assert rows[w]["diff_plain"] < 1e-14 and diff < 1e-14
    # "dog" sees only itself at position 0 under the mask: its output is its own value
    oa, _ = _softmax_attention(Xa, 0.5, causal=True)
    np.testing.assert_allclose(oa[0], Xa[0], atol=1e-15)


def _rope(x: np.ndarray) -> np.ndarray:
    """RoPE by hand, interleaved planes (2i, 2i+1), theta_i = 10000^(-2i/D), position p = row index."""
    out = x.copy()
    D = x.shape[1]
    for p in range(len(x)):
        for i in range(D // 2):
            a = p * 10000.0 ** (-2 * i / D)
            c, s = math.cos(a), math.sin(a)
            x0, x1 = x[p, 2 * i], x[p, 2 * i + 1]
            out[p, 2 * i], out[p, 2 * i + 1] = c * x0 - s * x1, s * x0 + c * x1
    return out


def test_rope_leaves_values_alone_but_the_outputs_carry_position():
    a, b, Xa, Xb = _dog_bites_man()
    rows = {r["word"]: r for r in d("dog_bites_man")["rows"]}
    oa, _ = _softmax_attention(Xa, 0.5, q=_rope(Xa), k=_rope(Xa))  # values: Xa, not rotated
    ob, _ = _softmax_attention(Xb, 0.5, q=_rope(Xb), k=_rope(Xb))
    for w in a:
        diff = np.abs(oa[a.index(w)] - ob[b.index(w)]).max()
        assert rows[w]["diff_rope"] == pytest.approx(diff, abs=1e-12)
        assert diff > 0.05, w  # the next layer's V = out W_V differs with the order


# ---- sinusoidal page: the initialisation behind the embedding-scale table ------------------

def test_embedding_scale_states_its_initialisation():
    module = figures.load("embedding_scale")
    data = module.data()
    assert data["init"] == "N(0, 1/d_model)"
    assert "N(0, 1/d)" in module.__doc__ and "tensor2tensor" in module.__doc__
    assert "N(0, 1/d_model)" in module.table(data)
    for r in data["rows"]:
        D = r["d_model"]
        assert r["emb_norm"] == pytest.approx(1.0, rel=0.05)               # E|x| ~ 1 for N(0, 1/D) entries
        assert r["unit_init_scaled_norm"] == pytest.approx(D, rel=0.05)    # N(0, 1) entries times sqrt(D)


# ---- sinusoidal page: what the base 10000 sets ---------------------------------------------

def test_base_sets_the_longest_wavelength_not_a_context_length():
    t = d("wavelength_table")
    assert t["longest_wavelength"] == pytest.approx(2 * math.pi * 10000 ** (510 / 512), rel=1e-13)
    assert t["wavelength_limit"] == pytest.approx(2 * math.pi * 10000, rel=1e-15)
    assert 60_000 < t["longest_wavelength"] < t["wavelength_limit"] < 62_832.0
    wider = d("wavelength_table", d_model=8192)
    assert t["longest_wavelength"] < wider["longest_wavelength"] < wider["wavelength_limit"]


# ---- multi-head attention page: 8x capacity, wall-clock, head widths ------------------------

@pytest.mark.parametrize("D, H, T", [(512, 8, 2048), (768, 12, 100), (64, 1, 7)])
def test_heads_cost_same_weights_and_flops_as_one_wide_head(D, H, T):
    c = d("heads_cost_table", d_model=D, n_heads=H, T=T)
    wide, multi, narrow = c["rows"]
    dh = D // H
    assert wide["params"] == multi["params"] == 4 * D * D
    assert narrow["params"] == 4 * D * dh
    assert wide["attn_flops"] == multi["attn_flops"] == 2 * (2 * T * T * D)  # QK^T and PV, 2 FLOPs per multiply-add
    assert narrow["attn_flops"] == 4 * T * T * dh
    assert multi["proj_flops"] == 2 * T * 4 * D * D
    assert multi["scores_bytes"] == H * T * T * 4 and wide["scores_bytes"] == T * T * 4
    assert c["params_ratio_vs_wide"] == 1 and c["flops_ratio_vs_wide"] == 1
    assert c["attn_flops_ratio_vs_narrow"] == H and c["scores_ratio_vs_wide"] == H


def test_heads_cost_refuses_a_head_count_that_does_not_divide_the_width():
    with pytest.raises(ValueError, match="n_heads"):
        d("heads_cost_table", d_model=512, n_heads=7)


def test_heads_cost_published_numbers():
    pub = d("heads_cost_table")["published"]
    assert pub["transformer_single_head_bleu_gap"] == 0.9  # Vaswani et al. 2017, Table 3 (A): 25.8 - 24.9
    g = pub["gemma_7b"]
    assert (g["d_model"], g["heads"], g["d_head"]) == (3072, 16, 256) and g["heads"] * g["d_head"] != g["d_model"]


# ---- the built pages ------------------------------------------------------------------------

LESSON = ["attention", "architecture", "one_head", "mha", "backward", "heads", "real_heads", "position", "sinusoidal", "learned",
          "rope", "alibi", "compare", "kv_cache", "sampling", "flash_attention", "long_context", "numerics"]


def html(site, page):
    return math_as_tex((site / page / "index.html").read_text())


def text(site, page: str) -> str:
    h = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html(site, page), flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", h)))


@pytest.mark.build
def test_real_heads_page_says_511_of_512_and_names_position_0(built_site):
    pos = d("bert_positions")
    t = text(built_site, "real_heads")
    assert f"for {pos['learned_adjacent_count']} of the {pos['n_positions']} positions" in t
    assert "The exception is position 0" in t and "position 3" in t
    assert f"cosine {pos['first_nearest_cos']:.2f}" in t
    assert "for 100% of the positions" not in t


@pytest.mark.build
def test_sinusoidal_page_corrections(built_site):
    t = text(built_site, "sinusoidal")
    assert "leans more towards itself and its neighbours" not in t
    eff = d("pe_attention_effect")
    for i, name in ((1, "cat"), (3, "down")):
        before, after = eff["neighbour_weight"][i]
        assert after < before
        assert f"{name} ({before:.2f} → {after:.2f})" in t
    assert "does not make every token lean towards its neighbours" in t
    # the initialisation behind the embedding-scale table, stated on the page
    assert "tensor2tensor" in t and re.search(r"Table \d+ assumes that initialisation", t)
    assert r"draws every entry from \(\mathcal N(0, 1/d_{\text{model}})\)" in t
    # what the base sets
    assert f"{2 * math.pi * 10000 ** (510 / 512):,.0f} positions" in t and f"{2 * math.pi * 10000:,.0f}" in t
    assert "10,000 tokens" in t  # the claim, quoted in the note


@pytest.mark.build
def test_position_page_and_quiz_say_without_a_causal_mask(built_site):
    dog = d("dog_bites_man")["rows"][0]
    t = text(built_site, "position")
    assert "with every word free to attend to every other" in t
    assert f"its output differs by {dog['diff_causal']:.3f} with no position vector" in t
    assert "no PE, causal mask" in t
    q = text(built_site, "quiz")
    assert "Without positions and without a causal mask" in q and f"{dog['diff_causal']:.3f}" in q


@pytest.mark.build
def test_rope_page_and_quiz_say_no_explicit_signal(built_site):
    dog = d("dog_bites_man")["rows"][0]
    t = text(built_site, "rope")
    assert "carries no position signal" not in t
    assert "no explicit position signal" in t and f"differs between the two sentences by {dog['diff_rope']:.3f}" in t
    q = text(built_site, "quiz")
    assert "values carry no position signal" not in q and "no explicit position signal" in q


@pytest.mark.build
def test_citations_ntk_is_bloc97s_and_the_layer_story_is_tenneys(built_site):
    c = html(built_site, "compare")
    assert "NTK-aware scaling and YaRN (Peng" not in text(built_site, "compare")
    assert "bloc97" in c and 'href="../references/#bloc97-2023"' in c and 'href="../references/#peng-2023"' in c
    r = html(built_site, "real_heads")
    assert 'href="../references/#tenney-2019"' in r and "BERT Rediscovers the Classical NLP Pipeline" in r


@pytest.mark.build
def test_mha_page_notes_on_capacity_wall_clock_and_head_width(built_site):
    c = d("heads_cost_table")
    t = text(built_site, "mha")
    assert f"{4 * 512 * 512:,}" in t and f"{2 * 2048 * 4 * 512 * 512 / 1e9:,.2f}" in t
    assert f"{c['published']['transformer_single_head_bleu_gap']:.1f} BLEU worse" in t
    assert "eight times the representational capacity" in t and "parallel does not mean free" in t
    assert f"{c['attn_flops_ratio_vs_narrow']:.0f} times the attention FLOPs" in t
    assert "Gemma 7B has 16 heads of 256" in t and "optimal, not shown" in t


@pytest.mark.build
@pytest.mark.parametrize("page", LESSON)
def test_no_errata_boxes_in_the_lesson_only_collapsed_source_notes(built_site, page):
    h = html(built_site, page)
    assert 'class="admonition warning"' not in h
    assert "Erratum" not in h
    t = text(built_site, page)
    for phrase in ("The notes round", "A popular tutorial", "The source notebook", "The source tutorial",
                   "The lecture notes", "The notes print", "The tutorial's", "The notes give", "Like the notes"):
        assert phrase not in t, (page, phrase)
    for m in re.finditer(r'<details class="note">\s*<summary>([^<]*)</summary>', h):
        assert m.group(1) == "Note on common sources"


@pytest.mark.build
def test_source_notes_where_the_errata_boxes_were(built_site):
    count = {p: html(built_site, p).count('<summary>Note on common sources</summary>') for p in LESSON}
    assert count["attention"] >= 1 and count["mha"] >= 2 and count["sinusoidal"] >= 2
    assert count["rope"] >= 1 and count["compare"] >= 1 and count["real_heads"] >= 1
    assert "(1.48, 0.53)" in text(built_site, "attention")  # the circulating values, explained


REQUIRED = {  # anchor: (year, words of the title, link)
    "vaswani-2017": ("2017", "Attention Is All You Need", "arxiv.org/abs/1706.03762"),
    "shaw-2018": ("2018", "Self-Attention with Relative Position Representations", "aclanthology.org/N18-2074"),
    "raffel-2020": ("2020", "Unified Text-to-Text Transformer", "arxiv.org/abs/1910.10683"),
    "su-2021": ("2021", "RoFormer", "arxiv.org/abs/2104.09864"),
    "press-2022": ("2022", "Train Short, Test Long", "arxiv.org/abs/2108.12409"),
    "shazeer-2019": ("2019", "One Write-Head is All You Need", "arxiv.org/abs/1911.02150"),
    "ainslie-2023": ("2023", "GQA", "aclanthology.org/2023.emnlp-main.298"),
    "dao-2022": ("2022", "FlashAttention", "arxiv.org/abs/2205.14135"),
    "clark-2019": ("2019", "What Does BERT Look At?", "aclanthology.org/W19-4828"),
    "michel-2019": ("2019", "Are Sixteen Heads Really Better than One?", "arxiv.org/abs/1905.10650"),
    "voita-2019": ("2019", "Specialized Heads Do the Heavy Lifting", "aclanthology.org/P19-1580"),
    "tenney-2019": ("2019", "BERT Rediscovers the Classical NLP Pipeline", "aclanthology.org/P19-1452"),
    "olsson-2022": ("2022", "In-context Learning and Induction Heads", "arxiv.org/abs/2209.11895"),
    "kazemnejad-2023": ("2023", "The Impact of Positional Encoding on Length Generalization", "arxiv.org/abs/2305.19466"),
    "chen-2023": ("2023", "Positional Interpolation", "arxiv.org/abs/2306.15595"),
    "peng-2023": ("2023", "YaRN", "arxiv.org/abs/2309.00071"),
    "xiao-2023": ("2023", "Attention Sinks", "arxiv.org/abs/2309.17453"),
    "bloc97-2023": ("2023", "NTK-Aware Scaled RoPE", "reddit.com/r/LocalLLaMA/comments/14lz7j5"),
}


@pytest.mark.build
def test_references_page_lists_the_papers_with_links(built_site):
    h = html(built_site, "references")
    for anchor, (year, title, link) in REQUIRED.items():
        m = re.search(rf'<p id="{anchor}">(.*?)</p>', h, flags=re.S)
        assert m, anchor
        entry = unescape(re.sub(r"\s+", " ", m.group(1)))
        assert f"({year})" in entry and title in entry and link in entry, anchor


@pytest.mark.build
def test_every_reference_link_on_the_site_has_its_entry(built_site):
    ids = set(re.findall(r'<p id="([a-z0-9-]+)"', html(built_site, "references")))
    for page in LESSON + ["quiz", "errata"]:
        for anchor in re.findall(r'href="\.\./references/#([a-z0-9-]+)"', html(built_site, page)):
            assert anchor in ids, (page, anchor)
    # the methods the lesson names link their papers where they are introduced
    for page, anchors in {"rope": ["su-2021"], "alibi": ["press-2022"], "mha": ["ainslie-2023", "shazeer-2019"],
                          "kv_cache": ["shazeer-2019", "ainslie-2023"], "flash_attention": ["dao-2022"],
                          "sampling": ["holtzman-2020", "fan-2018"],
                          "compare": ["chen-2023", "peng-2023", "bloc97-2023", "kazemnejad-2023", "raffel-2020"],
                          "sinusoidal": ["vaswani-2017"], "learned": ["vaswani-2017"]}.items():
        for a in anchors:
            assert f'href="../references/#{a}"' in html(built_site, page), (page, a)


@pytest.mark.build
@pytest.mark.parametrize("page", LESSON)
def test_every_concept_page_ends_with_further_reading(built_site, page):
    h = html(built_site, page)
    article = h[h.index('<article'):h.index('</article>')]
    headings = re.findall(r'<h2 id="([^"]+)"', article)
    assert headings[-1] == "further-reading", (page, headings[-3:])
    start = article.index('<h2 id="further-reading"')
    assert start > article.rfind('class="admonition success"') > 0  # after the summary
    items = re.findall(r"<li>(.*?)</li>", article[start:], flags=re.S)
    assert 2 <= len(items) <= 4, (page, len(items))
    for item in items:
        assert 'href="../references/#' in item and ":" in unescape(re.sub(r"<[^>]+>", "", item)), (page, item)


@pytest.mark.build
def test_errata_page_has_the_new_claims_and_the_corrections(built_site):
    t = text(built_site, "errata")
    for claim in ("8× the representational capacity", "the same wall-clock time as a single head",
                  "64–128 is the optimal head dimension", "up to ~10,000 tokens",
                  "Corrections to this course's own pages", "511 of 512", "bloc97", "Tenney"):
        assert claim in t, claim
