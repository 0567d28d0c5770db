"""The built pages hold the key numbers, computed independently here, and the course's structure."""
from __future__ import annotations

import math
import re
from html import unescape

import pytest

import figures

pytestmark = pytest.mark.build

LECTURE = ["attention", "one_head", "mha", "heads", "real_heads", "position", "sinusoidal", "learned", "rope", "alibi",
           "compare", "numerics"]


def text(site, page: str) -> str:
    html = (site / page / "index.html").read_text()
    html = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


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
    assert "qᵀR(n−m)k" in t and "q^\\top R(n - m)\\,k" in (built_site / "rope" / "index.html").read_text()
    a = text(built_site, "alibi")
    for h in range(1, 9):
        assert f"2^−{h} = {2.0**-h:.6g}" in a
    assert f"2^−0.5 = {2**-0.5:.6g}" in a


def test_quiz_has_at_least_15_collapsible_questions(built_site):
    html = (built_site / "quiz" / "index.html").read_text()
    assert html.count('<details class="question"') >= 15
    t = text(built_site, "quiz")
    assert f"{4 * 512**2:,}" in t and f"{math.e / (math.e + 1):.8f}" in t


def test_gallery_shows_every_figure_with_its_command(built_site):
    t = text(built_site, "gallery") + text(built_site, "gallery_real_model")
    for name, script in figures.scripts().items():
        if script.kind == "figure":
            assert f"python {script.repo_path} --out {name}.svg" in t, name


def test_errata_page_lists_the_corrections(built_site):
    t = text(built_site, "errata")
    assert f"{2 * math.pi * 10000 ** (64 / 512):.2f}" in t
    assert "qᵀR(n − m)k" in t and "256 MiB" in t


def test_api_reference_documents_the_public_api(built_site):
    import mhalib

    t = text(built_site, "api")
    for name in mhalib.__all__:
        if name != "examples":
            assert name in t, name


def test_labs_ran_and_match_torch(built_site):
    t = text(built_site, "labs/lab1_mha")
    m = re.search(r"mhalib vs torch\s*:\s*([0-9.e+-]+)", t)
    assert m and float(m.group(1)) < 1e-10
    t2 = text(built_site, "labs/lab2_positions")
    assert "largest error for k = 7" in t2
