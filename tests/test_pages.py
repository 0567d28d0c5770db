"""The built pages hold the key numbers, computed independently here, and the course's structure."""
from __future__ import annotations

import math
import re
from html import unescape

import pytest

import figures
from helpers import math_as_tex, page_text

pytestmark = pytest.mark.build

LECTURE = ["attention", "architecture", "one_head", "mha", "cross_attention", "backward", "heads", "real_heads", "position", "sinusoidal", "learned",
           "rope", "alibi", "compare", "kv_cache", "sampling", "flash_attention", "long_context", "numerics"]


def text(site, page: str) -> str:
    return page_text(site, page)


@pytest.mark.parametrize("page", LECTURE)
def test_lecture_pages_open_with_goals_and_end_with_a_summary(built_site, page):
    t = text(built_site, page)
    assert "What you will learn" in t
    assert t.rfind("Summary") > t.find("What you will learn") > 0


def test_attention_page_numbers(built_site):
    t = text(built_site, "attention")
    z = math.e + 1 + math.exp(0.5)
    a, b, c = math.e / z, 1 / z, math.exp(0.5) / z
    for value in (a, b, c):
        assert f"{value:.4f}" in t
    for value in (2 * a + 1.5 * c, 2 * b + 0.5 * c, 2 * b + 1.5 * c, 2 * a + 0.5 * c):
        assert f"{value:.4f}" in t
    assert f"{8192**2 * 4:,}" in t and "256 MiB" in t
    assert f"{1 / (1 + math.e):.4f}" in t and f"{math.e / (1 + math.e):.4f}" in t
    assert "(1.48, 0.53)" in t and "1.01" in t  # the notes' values, shown as the erratum


def test_mha_page_numbers(built_site):
    t = text(built_site, "mha")
    assert f"{math.e / (math.e + 1):.8f}" in t  # 0.73105858
    assert f"{3 * 512**2:,}" in t and f"{4 * 512**2:,}" in t
    assert "33%" in t
    assert "320 KiB" in t  # LLaMA-2 70B: 2 * 80 * 8 * 128 * 2 bytes
    assert f"{2 * 80 * 8 * 128 * 2 / 1024:.0f} KiB" == "320 KiB"


def test_sinusoidal_page_numbers(built_site):
    t = text(built_site, "sinusoidal")
    for dim in range(0, 512, 64):
        lam = 2 * math.pi * 10000 ** (dim / 512)
        assert f"{lam:,.2f}" in t, dim
    assert "3.98" in t and "15,848.93" in t  # the misprint, shown struck through
    assert f"{3 / (2 * math.pi):.2f}" in t  # nearly half a cycle
    html = (built_site / "sinusoidal" / "index.html").read_text()
    assert "<del>3.98</del>" in html


def test_rope_and_alibi_pages(built_site):
    so = figures.load("rope_signed_offset").data()
    t = text(built_site, "rope")
    assert f"{so['plus']:.4f}" in t and f"{so['minus']:.4f}" in t
    assert "q^\\top R(n - m)\\,k" in (built_site / "rope" / "index.html").read_text()  # the table's header, typeset
    a = text(built_site, "alibi")
    for h in range(1, 9):
        assert f"2^−{h} = {2.0**-h:.6g}" in a
    assert f"2^−0.5 ≈ {2**-0.5:.6g}" in a  # irrational: rounded, and the table says so


def test_quiz_has_at_least_15_collapsible_questions(built_site):
    html = (built_site / "quiz" / "index.html").read_text()
    assert html.count('<details class="question"') >= 15
    t = text(built_site, "quiz")
    assert f"{4 * 512**2:,}" in t and f"{math.e / (math.e + 1):.8f}" in t


def test_gallery_shows_every_figure_with_its_command(built_site):
    t = text(built_site, "gallery") + text(built_site, "gallery_real_model") + text(built_site, "gallery_generation")
    t += text(built_site, "gallery_position")
    t += text(built_site, "gallery_experiments")
    for name, script in figures.scripts().items():
        if script.kind == "figure":
            assert f"python -m figures {name} --out {name}.svg" in t, name


def test_errata_page_lists_the_corrections(built_site):
    t = text(built_site, "errata")
    assert f"{2 * math.pi * 10000 ** (64 / 512):.2f}" in t
    assert "256 MiB" in t and "q^\\top R(n - m)\\,k" in (built_site / "errata" / "index.html").read_text()


def test_labs_ran_and_match_torch(built_site):
    t = text(built_site, "labs/lab1_mha")
    m = re.search(r"mhalib vs torch\s*:\s*([0-9.e+-]+)", t)
    assert m and float(m.group(1)) < 1e-10
    t2 = text(built_site, "labs/lab2_positions")
    assert "largest error for k = 7" in t2


def _gpu(name):
    import json

    return json.loads((figures.FIGURES_DIR / "data" / name).read_text())


def test_kv_cache_page_numbers(built_site):
    """The page's numbers, recomputed here from the stored measurements."""
    t = text(built_site, "kv_cache")
    rows = {(r["context"], r["kv_heads"]): r for r in _gpu("decode_gqa_h100.json")["rows"]}
    L = max(c for c, _ in rows)
    assert f"{rows[L, 32]['ms_median'] / rows[L, 8]['ms_median']:.1f}× and MQA" in t
    assert f"{rows[L, 32]['ms_median'] / rows[L, 1]['ms_median']:.1f}× faster than MHA on the H100" in t
    assert f"only {rows[L, 32]['ms_median'] / rows[L, 8]['ms_median_kv_repeated']:.2f}× faster" in t
    assert f"{rows[L, 32]['achieved_GBps'] / 3350:.0%} of the GPU's specified memory" in t
    cpu = {(r["context"], r["kv_heads"]): r for r in _gpu("decode_cpu.json")["rows"]}
    C = max(c for c, _ in cpu)
    assert f"only {cpu[C, 32]['ms_median'] / cpu[C, 8]['ms_median']:.2f}× at {C:,}" in t
    # LLaMA-2 7B: 2 (K, V) x 32 layers x 32 heads x 128 x 2 bytes = 512 KiB per token
    assert "512 KiB" in t and "2 GiB" in t and "128 KiB" in t  # 4,096 tokens x 512 KiB = 2 GiB
    # the cost figure's ratio: (t x proj + causal attention) / (proj + one row) at t = 4096
    D, H, d, n = 4096, 32, 128, 4096
    proj = 2 * D * 3 * D
    ratio = (n * proj + 4 * H * n * n * d // 2) / (proj + 4 * H * n * d)
    assert f"costs {ratio:,.0f} times more" in t


def test_flash_attention_page_numbers(built_site):
    t = text(built_site, "flash_attention")
    suites = _gpu("attention_gpu_h100.json")["suites"]
    one = {r["T"]: r for r in suites[0]["rows"]}
    assert f"{one[8192]['naive']['peak_extra_bytes'] / 2**20:,.0f} MiB naive" in t  # 514
    assert f"against {one[8192]['efficient']['peak_extra_bytes'] / 2**20:.0f} MiB" in t
    layer = {r["T"]: r for r in suites[1]["rows"]}
    r = layer[16384]
    assert f"{r['naive']['peak_extra_bytes'] / 2**30:.2f} GiB of extra" in t  # 32.25 (the "32 GiB")
    assert f"{r['naive']['ms_median'] / r['flash']['ms_median']:.1f}× faster" in t  # 12.8
    assert f"{8192**2 * 4:,} bytes" in t  # the "256 MB" matrix
    best = max(layer.values(), key=lambda x: 4 * 32 * x["T"] ** 2 * 128 / 2 / x["flash"]["ms_median"])
    tflops = 4 * 32 * best["T"] ** 2 * 128 / 2 / (best["flash"]["ms_median"] * 1e-3) / 1e12
    assert f"{tflops:,.0f} TFLOP/s, {tflops / 798:.0%}" in t


def test_check_yourself_answers_on_the_generation_pages(built_site):
    kv, fa = text(built_site, "kv_cache"), text(built_site, "flash_attention")
    assert f"{32768 * 2 * 32 * 32 * 128 * 2:,} bytes (16 GiB)" in kv  # LLaMA-2 7B, 32k tokens
    assert f"{16384**2 * 4:,} bytes (1 GiB)" in fa
    for page in ("kv_cache", "flash_attention"):
        html = (built_site / page / "index.html").read_text()
        questions = html.find('id="check-yourself"')
        assert questions > html.find('class="admonition success"') > 0, f"{page}: questions after the summary"
        assert html.count('class="admonition question"') + html.count("<details class=\"question\"") >= 3


def test_the_home_page_reading_order_lists_every_lecture_page_of_the_nav_in_order(built_site):
    """Made from the nav (hooks/site_home.py): every page before the reference section, in
    nav order, each once, and the quiz's question count as the quiz page has it."""
    import yaml

    from helpers import ROOT

    nav = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)["nav"]

    def pages(items, top=None):
        for item in items:
            for title, value in (item.items() if isinstance(item, dict) else [(None, item)]):
                if isinstance(value, list):
                    yield from pages(value, top or title)
                else:
                    yield top or title, value

    lecture = [src for top, src in pages(nav) if src != "index.md" and top != "Reference"]
    html = (built_site / "index.html").read_text(encoding="utf-8")
    section = html.split('id="reading-order"', 1)[1].split("</ol>", 1)[0]
    linked = re.findall(r'<li><a href="([^"]+)"', section)
    assert linked == [re.sub(r"\.(md|py)$", "/", src) for src in lecture]
    quiz = (ROOT / "docs" / "quiz.md").read_text(encoding="utf-8")
    n = len(re.findall(r"^\?\?\?\+? question\b", quiz, flags=re.M))
    assert f"{n} questions with worked answers" in section


def test_a_nav_page_without_a_sentence_or_a_sentence_without_a_page_fails_the_reading_order(tmp_path):
    from mkdocs.exceptions import PluginError

    from helpers import HOOKS, load_file

    home = load_file(HOOKS / "site_home.py", "site_home_for_test")
    nav = [{"Home": "index.md"}, {"Part": [{"A": "a.md"}, {"B": "b.md"}]}, {"Reference": [{"Notes": "n.md"}]}]
    (tmp_path / "b.md").write_text("# B\n\n??? question \"One?\"\n    Yes.\n\n??? question \"Two?\"\n    No.\n")
    out = home.reading_order(nav, {"a.md": "first.", "b.md": "{questions} questions."}, tmp_path)
    assert out == "1. [A](a.md) — first.\n2. [B](b.md) — 2 questions.\n\nAlso, for reference: [notes](n.md).\n"
    with pytest.raises(PluginError, match=r"no sentence for b\.md"):
        home.reading_order(nav, {"a.md": "first."}, tmp_path)
    with pytest.raises(PluginError, match=r"names gone\.md, which the nav does not list"):
        home.reading_order(nav, {"a.md": "x", "b.md": "y", "gone.md": "z"}, tmp_path)

