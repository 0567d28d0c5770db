"""Where attention lives: the block diagram's numbers, the shape and parameter tables, and the
course's opening pages.

MiniLM's counts are checked against the tensors in the shipped model file, GPT-2 small's
against a count by hand from the published configuration and against the model that
``transformers`` builds from it; the per-block formula against a count written out here.
"""
from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import numpy as np
import pytest

from helpers import page_text

import figures
import mhalib

ROOT = Path(__file__).resolve().parent.parent


def d(name, **params):
    return figures.load(name).data(**params)


@pytest.fixture(scope="module")
def arch():
    return d("transformer_block")


@pytest.fixture(scope="module")
def weights():
    from mhalib.models import bert

    return bert.load_model()["weights"]


# ---- the library's per-block count ------------------------------------------------------------

def test_block_param_count_by_hand():
    # BERT-base / GPT-2 small widths: D = 768, d_ff = 3072.
    D, F = 768, 3072
    attention = 3 * (D * D + D) + (D * D + D)  # W_Q, W_K, W_V and W_O, each with a bias
    ffn = (D * F + F) + (F * D + D)
    norms = 2 * (D + D)
    got = mhalib.transformer_block_param_count(D, 12, F)
    assert got == dict(attention=attention, feed_forward=ffn, layer_norms=norms, total=attention + ffn + norms)
    assert got["total"] == 12 * D * D + 13 * D  # 4D^2 + 4D + 8D^2 + 5D + 4D
    no_bias = mhalib.transformer_block_param_count(D, 12, F, bias=False)
    assert no_bias["attention"] == 4 * D * D and no_bias["feed_forward"] == 2 * D * F
    # the head count never changes the count (H d_head = D)
    assert mhalib.transformer_block_param_count(D, 1, F) == mhalib.transformer_block_param_count(D, 64, F)


@pytest.mark.parametrize("kwargs,exc,name", [
    (dict(d_model=0, n_heads=1, d_ff=4), ValueError, "d_model"),
    (dict(d_model=8, n_heads=3, d_ff=4), ValueError, "n_heads"),
    (dict(d_model=8, n_heads=2, d_ff=-1), ValueError, "d_ff"),
    (dict(d_model=8, n_heads=2, d_ff=2.5), TypeError, "d_ff"),
    (dict(d_model=8, n_heads=2, d_ff=4, bias="yes"), TypeError, "bias"),
])
def test_block_param_count_refuses_bad_input(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        mhalib.transformer_block_param_count(**kwargs)


# ---- all-MiniLM-L6-v2, against the weights in the model file ---------------------------------

def test_minilm_shape_from_the_weights(arch, weights):
    m = arch["encoder"]
    layers = {int(k.split(".")[2]) for k in weights if k.startswith("encoder.layer.")}
    assert m["layers"] == len(layers) == 6
    V, D = weights["embeddings.word_embeddings.weight"].shape
    assert (m["vocab"], m["d_model"]) == (V, D) == (30522, 384)
    assert m["max_positions"] == weights["embeddings.position_embeddings.weight"].shape[0] == 512
    assert m["d_ff"] == weights["encoder.layer.0.intermediate.dense.weight"].shape[0] == 4 * D
    assert m["heads"] == 12 and m["d_head"] * m["heads"] == D
    assert (m["kind"], m["norm"], m["causal"]) == ("encoder", "post", False)


def test_minilm_parameter_counts_match_the_weights(arch, weights):
    m = arch["encoder"]
    sizes = {k: int(np.prod(v.shape)) for k, v in weights.items() if k != "embeddings.position_ids"}  # a buffer
    layer0 = {k[len("encoder.layer.0."):]: n for k, n in sizes.items() if k.startswith("encoder.layer.0.")}
    attention = sum(n for k, n in layer0.items() if k.startswith("attention.") and "LayerNorm" not in k)
    norms = sum(n for k, n in layer0.items() if "LayerNorm" in k)
    ffn = sum(n for k, n in layer0.items() if k.startswith(("intermediate.", "output.dense")))
    assert attention + norms + ffn == sum(layer0.values())
    assert m["block_params"] == dict(attention=attention, feed_forward=ffn, layer_norms=norms,
                                     total=sum(layer0.values()))
    every_layer = sum(n for k, n in sizes.items() if k.startswith("encoder.layer."))
    assert m["blocks_total"] == every_layer
    embeddings = sum(n for k, n in sizes.items() if k.startswith("embeddings."))
    assert m["embeddings_total"] == embeddings
    pooler = sum(n for k, n in sizes.items() if k.startswith("pooler."))
    assert m["unused_pooler_params"] == pooler == 384 * 384 + 384
    assert m["total_params"] == sum(sizes.values()) - pooler == 22_565_376


def test_minilm_tensor_shapes_are_those_of_a_real_forward_pass(arch):
    from mhalib.models import bert

    r = bert.encode("The keys to the cabinet are on the table.")
    T = len(r["tokens"])
    rows = {row["tensor"]: row["shape"] for row in arch["encoder"]["shapes"]}
    B = 1
    sub = {"B": B, "T": T}

    def concrete(shape):
        return tuple(sub.get(s, s) for s in shape)

    L = arch["encoder"]["layers"]
    assert np.shape(r["hidden_states"]) == (L + 1,) + concrete(rows["hidden states X (into and out of every block)"])[1:]
    assert np.shape(r["attentions"]) == (L,) + concrete(rows["scores and attention weights"])[1:]
    assert concrete(rows["Q, K, V split into heads"]) == (B, 12, T, 32)
    assert np.shape(r["embedding"]) == concrete(rows["output: " + arch["encoder"]["output"]])[1:]


# ---- GPT-2 small, from its published configuration -------------------------------------------

def test_gpt2_config_file_is_the_published_one_and_is_declared():
    stored = json.loads((ROOT / "figures" / "data" / "gpt2_small_config.json").read_text())
    assert {k: stored["config"][k] for k in ("n_layer", "n_head", "n_embd", "n_positions", "vocab_size")} == dict(
        n_layer=12, n_head=12, n_embd=768, n_positions=1024, vocab_size=50257)
    assert "huggingface.co/openai-community/gpt2" in stored["config_source"]
    assert "openai/gpt-2" in stored["architecture_source"]
    assert figures.scripts()["transformer_block"].data_files == ("gpt2_small_config.json",)
    # the other table that lists GPT-2 small agrees with the stored configuration
    row = next(r for r in d("models_table")["rows"] if r["model"].startswith("GPT-2"))
    assert (row["layers"], row["d_model"], row["heads"]) == (12, 768, 12)


def test_gpt2_counts_by_hand(arch):
    m = arch["decoder"]
    V, P, D, L, F = 50257, 1024, 768, 12, 3072
    assert (m["vocab"], m["max_positions"], m["d_model"], m["layers"], m["d_ff"], m["d_head"]) == (V, P, D, L, F, 64)
    assert (m["kind"], m["norm"], m["causal"]) == ("decoder", "pre", True)
    c_attn = D * 3 * D + 3 * D  # GPT-2 stores W_Q, W_K, W_V side by side as one (D, 3D) matrix
    c_proj = D * D + D
    mlp = D * F + F + F * D + D
    ln = 2 * D
    block = c_attn + c_proj + mlp + 2 * ln
    assert m["block_params"]["total"] == block == 7_087_872
    total = V * D + P * D + L * block + ln  # wte, wpe, the blocks, ln_f; the head is tied to wte
    assert m["total_params"] == total == 124_439_808
    assert round(total / 1e6) == int(m["released_name"].rstrip("M")) == 124
    assert m["paper_params_millions"] == 117  # what the paper's Table 2 says, shown as such


@pytest.mark.slow
def test_gpt2_count_matches_transformers(arch):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    stored = json.loads((ROOT / "figures" / "data" / "gpt2_small_config.json").read_text())["config"]
    cfg = transformers.GPT2Config(**stored)
    with torch.device("meta"):  # shapes only, no memory, no download
        model = transformers.GPT2LMHeadModel(cfg)
    assert sum(p.numel() for p in model.parameters()) == arch["decoder"]["total_params"]  # tied head counted once
    block = model.transformer.h[0]
    assert sum(p.numel() for p in block.parameters()) == arch["decoder"]["block_params"]["total"]
    assert sum(p.numel() for p in block.mlp.parameters()) == arch["decoder"]["block_params"]["feed_forward"]


# ---- the tables and the figure -----------------------------------------------------------------

def test_tables_show_the_counts_and_shapes(arch):
    params = figures.load("block_params_table").table(arch)
    for n in (22_565_376, 124_439_808, 7_087_872, 1_774_464, 50257 * 768):
        assert f"{n:,}" in params, n
    shapes = figures.load("model_shapes_table").table(arch)
    for s in ("(B, 12, T, 32)", "(B, 12, T, 64)", "(B, 12, T, T)", "(384, 1,536)", "(B, T, 50,257)", "(B, H, T, S)"):
        assert s in shapes, s
    shares = arch["encoder"]["share"]
    assert shares["attention"] == pytest.approx(6 * 591_360 / 22_565_376)
    assert arch["decoder"]["share"]["feed_forward"] == pytest.approx(12 * 4_722_432 / 124_439_808)


def test_block_diagram_is_readable_and_shows_both_models(arch):
    import matplotlib

    matplotlib.use("Agg")
    from figures._kit import style

    for theme, layout in [(t, lay) for t in ("light", "dark") for lay in ("wide", "narrow")]:
        with style.theme(theme), style.layout_of(layout):
            fig = figures.load("transformer_block").draw(arch)
        width, _ = fig.get_size_inches()
        # 11 pt in 7 in reads at 11 px in a desktop column and a gallery thumbnail; in 6 in, at 9 px on a phone
        assert 6.5 <= width <= 7.0 if layout == "wide" else width <= 6.0
        texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
        assert min(t.get_fontsize() for t in texts) >= 11
        words = " ".join(t.get_text().replace("\n", " ") for t in texts)
        for s in ("× 6 layers", "× 12 layers", "masked self-attention", "12 heads × 32", "12 heads × 64, causal",
                  "384 → 1,536 → 384", "768 → 3,072 → 768", "final LayerNorm", "encoder, post-norm",
                  "decoder, pre-norm", "logits (B, T, 50,257)"):
            assert s in words, s
        matplotlib.pyplot.close(fig)


def test_real_heads_background_tokenization(arch):
    """The page spells out how a sentence is tokenized and counts the heads; hold both."""
    from mhalib.models import bert

    m = arch["encoder"]
    page = re.sub(r"\s+", " ", (ROOT / "docs" / "real_heads.md").read_text())
    assert (f"{m['layers']} blocks, each with one multi-head attention of {m['heads']} heads, so "
            f"{m['layers'] * m['heads']} heads in all") in page

    tokens = bert.tokenize(bert.load_model(), "The lawyer questioned the witness about the crime.")[1]
    spelled = "[CLS] the lawyer questioned the witness about the crime . [SEP]"
    assert " ".join(tokens) == spelled and len(tokens) == 11
    assert f"`{spelled}`" in page and "the 11 tokens" in page


# ---- the built pages ---------------------------------------------------------------------------

def text(site, page: str) -> str:
    return page_text(site, page, tex=False)


def article(site, page: str) -> str:
    html = (site / page / "index.html").read_text() if page else (site / "index.html").read_text()
    return html[html.index('<article'):html.index('</article>')]


@pytest.mark.build
def test_architecture_page(built_site):
    t = text(built_site, "architecture")
    assert t.rfind("Summary") > t.find("What you will learn") > 0
    for n in (22_565_376, 124_439_808, 384 * 384 + 384):
        assert f"{n:,}" in t, n
    emb_share = ((30522 + 512 + 2) * 384 + 2 * 384) / 22_565_376
    assert f"{emb_share:.0%}" in t
    assert "117M" in t and '"124M"' in t
    html = article(built_site, "architecture")
    assert "transformer_block" in html and "model_shapes_table" in html and "block_params_table" in html


@pytest.mark.build
@pytest.mark.parametrize("page", ["", "attention"])
def test_course_opens_with_the_problem_before_any_formula(built_site, page):
    """Home and attention pages: next-token prediction and a token needing another token come
    before the first piece of math."""
    html = article(built_site, page)
    first_math = html.find('class="arithmatex"')
    why = html.find("keys to the cabinet")
    assert 0 < why < first_math
    if not page:
        assert 0 < html.find("predict the next one") < first_math and html.find("bank") < first_math


@pytest.mark.build
def test_real_heads_comes_after_the_position_chapter(built_site):
    order = yaml_nav()
    assert order.index("real_heads.md") > order.index("compare.md") > order.index("position.md")
    assert order.index("attention.md") < order.index("architecture.md") < order.index("one_head.md")
    html = (built_site / "real_heads" / "index.html").read_text()
    prev = re.search(r'<a href="([^"]+)"[^>]*class="md-footer__link md-footer__link--prev"', html)
    assert prev and prev.group(1).rstrip("/").endswith("compare"), prev
    body = article(built_site, "real_heads")
    first_result = body.index('id="every-head-on-one-sentence"')
    for word in ("[CLS]", "[SEP]", "Entropy", "Ablation", "Learned positions", 'href="../learned/"'):
        assert 0 < body.find(word) < first_result, word


def yaml_nav() -> list[str]:
    """The Markdown files of mkdocs.yml's nav, in order (read as text: the file has !!python tags)."""
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:", 1)[1]
    return re.findall(r":\s*([\w/]+\.(?:md|py))\s*$", nav, flags=re.M)
