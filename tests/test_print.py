"""Paper: the print styles, the whole lecture on one page (print/), and its PDF.

- The rewriting that puts many pages on one (hooks/site_print.py) is checked on small
  hand-written HTML (fast tier).
- The built print/ page holds every printed nav page's title in nav order, no id twice, and
  no link that points at nothing (build tier).
- In Chromium, printing a page in dark mode shows one image per figure (the light one) and
  none of the site's chrome (browser tier).
- tools/make_pdf.py prints print/ to a PDF whose outline names the pages (slow: a long page).
"""
from __future__ import annotations

import re
import sys
from html import unescape
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urljoin, urlsplit

import pytest

from helpers import ROOT, nav_pages

sys.path.insert(0, str(ROOT / "hooks"))
from tools import make_pdf  # noqa: E402
import site_print  # noqa: E402

build = pytest.mark.build
in_browser = pytest.mark.browser


def _nav() -> list[tuple[str, str]]:
    """(source path, site URL) of every page in mkdocs.yml's nav, in order."""
    return nav_pages()


PRINTED = [(src, url) for src, url in _nav() if src not in site_print.SKIP]


# ---- the rewriting, on small pages ---------------------------------------------------------------

def _rewrite(html: str, url: str = "attention/", keys=None) -> str:
    keys = keys or {"": "home", "attention/": "attention", "rope/": "rope", "labs/lab1_mha/": "labs-lab1_mha"}
    page = SimpleNamespace(url=url)
    return site_print._Rewriter(page, keys, "print/")(html)


def test_page_keys_are_one_word_per_url():
    assert site_print.page_key("") == "home"
    assert site_print.page_key("attention/") == "attention"
    assert site_print.page_key("labs/lab1_mha/") == "labs-lab1_mha"


def test_ids_and_the_attributes_that_point_at_them_get_the_page_prefix():
    out = _rewrite('<h2 id="summary">S</h2><label for="x">L</label><div aria-labelledby="a b"></div>'
                   '<input type="radio" id="__tabbed_1_1" name="__tabbed_1">')
    assert 'id="attention--summary"' in out
    assert 'for="attention--x"' in out
    assert 'aria-labelledby="attention--a attention--b"' in out
    assert 'id="attention--__tabbed_1_1"' in out and 'name="attention--__tabbed_1"' in out


def test_links_to_printed_pages_become_links_to_their_sections():
    out = _rewrite('<a href="#summary">1</a><a href="../rope/#the-rotation">2</a><a href="../rope/">3</a>'
                   '<a href="../">4</a><a href="../labs/lab1_mha/">5</a>')
    hrefs = re.findall(r'href="([^"]+)"', out)
    assert hrefs == ["#attention--summary", "#rope--the-rotation", "#rope", "#home", "#labs-lab1_mha"]


def test_the_home_page_links_resolve_from_the_site_root():
    out = _rewrite('<a href="rope/#x">r</a><a href="gallery/">g</a>', url="")
    assert re.findall(r'href="([^"]+)"', out) == ["#rope--x", "../gallery/"]


def test_other_links_and_images_are_rebased_on_print_and_keep_their_fragment():
    out = _rewrite('<img src="../figures/a.svg#only-light" alt="a"><a href="../figures/a.csv" download>c</a>'
                   '<a href="../gallery/#x">g</a><a href="https://example.org/p#q">e</a>'
                   '<img src="data:image/png;base64,AAAA" alt="d">')
    assert 'src="../figures/a.svg#only-light"' in out
    assert 'href="../figures/a.csv"' in out
    assert 'href="../gallery/#x"' in out
    assert 'href="https://example.org/p#q"' in out
    assert 'src="data:image/png;base64,AAAA"' in out


def test_a_notebook_page_downloads_are_rebased_from_its_own_folder():
    out = _rewrite('<a href="lab1_mha.ipynb" download>nb</a>', url="labs/lab1_mha/")
    assert 'href="../labs/lab1_mha/lab1_mha.ipynb"' in out


def test_answers_print_open_and_notebook_cell_ids_go():
    out = _rewrite('<details class="question"><summary>Q</summary><p>A</p></details>'
                   '<details open><summary>R</summary></details><div id="cell-id=3f2a9c1d" class="jp-Cell"></div>')
    assert out.count("<details") == 2 and len(re.findall(r"<details[^>]*\sopen", out)) == 2
    assert "cell-id" not in out and '<div class="jp-Cell">' in out


def test_scripts_styles_and_text_are_left_alone():
    html = ('<script type="application/json">{"id": "x", "href": "#y"}</script>'
            '<style>a[id="z"] {}</style><p>write <code>id="q"</code> in code</p>')
    assert _rewrite(html) == html


def test_identical_notebook_stylesheets_are_kept_once():
    seen: set[str] = set()
    a = site_print._dedupe_styles("<style>.x{}</style><p>1</p>", seen)
    b = site_print._dedupe_styles("<style>.x{}</style><style>.y{}</style><p>2</p>", seen)
    assert a == "<style>.x{}</style><p>1</p>" and b == "<style>.y{}</style><p>2</p>"


def test_links_to_other_sites_carry_their_url_for_paper():
    html = '<a href="https://creativecommons.org/licenses/by/4.0/">CC</a> <a href="../rope/">r</a>' \
           ' <a href="https://example.org/course/x/">self</a>'
    out = site_print.mark_external(html, "https://example.org/course/")
    assert out.count("data-print-url") == 1
    assert 'data-print-url="https://creativecommons.org/licenses/by/4.0/"' in out


def test_pdf_page_count_and_build_dates():
    pdf = (b"%PDF-1.4\n1 0 obj <</Type /Pages /Count 2>> endobj 2 0 obj <</Type /Page>> endobj "
           b"3 0 obj <</Type/Page /Parent 1 0 R>> endobj 4 0 obj <</CreationDate (D:20261122154937+00'00') "
           b"/ModDate (D:20261122154937+00'00')>> endobj")
    assert make_pdf.page_count(pdf) == 2
    fixed = make_pdf.fix_dates(pdf, 86400)
    assert len(fixed) == len(pdf)  # the cross-reference offsets stay valid
    assert fixed.count(b"(D:19700102000000+00'00')") == 2


def test_pdf_structure_ids_are_numbered_by_rank():
    one = b"<</ID (node00001315)>> <</ID (node00000007)>> [(node00000007) 1 0 R (node00001315) 2 0 R]"
    two = b"<</ID (node00001317)>> <</ID (node00000009)>> [(node00000009) 1 0 R (node00001317) 2 0 R]"
    assert make_pdf.fix_node_ids(one) == make_pdf.fix_node_ids(two)
    assert make_pdf.fix_node_ids(one) == b"<</ID (node00000002)>> <</ID (node00000001)>> [(node00000001) 1 0 R (node00000002) 2 0 R]"


def test_the_skipped_pages_are_in_the_nav():
    srcs = [src for src, _ in _nav()]
    assert all(s in srcs for s in site_print.SKIP)


# ---- the built print/ page ---------------------------------------------------------------------

def _article(site: Path, url: str) -> str:
    html = (site / url / "index.html").read_text()
    return re.search(r'<article class="md-content__inner md-typeset">(.*)</article>', html, re.S).group(1)


@build
def test_print_page_holds_every_printed_page_in_nav_order(built_site):
    article = _article(built_site, "print/")
    h1 = [unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in re.findall(r"<h1[^>]*>(.*?)</h1>", article, re.S)]
    expected = []
    for src, url in PRINTED:
        first = re.search(r"<h1[^>]*>(.*?)</h1>", _article(built_site, url), re.S)
        expected.append(unescape(re.sub(r"<[^>]+>", "", first.group(1))).strip())
    assert h1 == expected
    sections = re.findall(r'<section class="mha-print-page" id="([^"]+)"', article)
    assert sections == [site_print.page_key(url) for _, url in PRINTED]


@build
def test_print_page_has_no_id_twice_and_no_link_to_nowhere(built_site):
    html = (built_site / "print" / "index.html").read_text()
    ids = re.findall(r'\sid="([^"]+)"', html)
    twice = sorted({i for i in ids if ids.count(i) > 1})
    assert not twice, twice[:20]
    article = _article(built_site, "print/")
    article = re.sub(r"<(script|style)\b.*?</\1>", "", article, flags=re.S)
    broken = []
    for attr, ref in re.findall(r'\s(href|src)="([^"]+)"', article):
        ref = unescape(ref)
        if urlsplit(ref).scheme:
            continue
        if ref.startswith("#"):
            if ref[1:] not in ids:
                broken.append(ref)
            continue
        target = urlsplit(urljoin("http://x/print/", ref)).path.lstrip("/")
        path = built_site / target
        if not (path.is_file() or (path / "index.html").is_file()):
            broken.append(ref)
    assert not broken, broken[:20]
    assert len(re.findall(r'href="#', article)) > 100  # the pages' links now point within print/


@build
def test_print_page_opens_answers_and_names_what_it_leaves_out(built_site):
    article = _article(built_site, "print/")
    details = re.findall(r"<details[^>]*>", article)
    assert details and all(re.search(r"\sopen", d) for d in details)
    contents = re.search(r'<section class="mha-print-contents".*?</section>', article, re.S).group(0)
    for src in site_print.SKIP:
        stem = src.removesuffix(".md")  # api/index.md is served at api/
        url = stem.removesuffix("index") if stem.endswith("/index") else stem + "/"
        assert f'href="../{url}"' in contents, src


@build
def test_home_page_links_the_print_page_and_the_pdf_only_when_the_build_made_it(built_site):
    home = (built_site / "index.html").read_text()
    assert re.search(r'<p class="mha-print-note">.*?href="print/"', home, re.S)
    made = site_print.pdf_enabled()  # MHA_PDF=1 (make pdf); the test session's build normally has it unset
    assert ('href="lecture.pdf"' in home) == made == (built_site / "lecture.pdf").is_file()
    assert "print/" not in [u for _, u in _nav()]  # a page of its own, not in the nav


@build
@in_browser
def test_a_build_with_mha_pdf_prints_the_pdf_and_links_it(tmp_path):
    """The whole path of `make pdf` on a small site: the hook prints print/ after the build
    and the home page links the file."""
    from helpers import mini_project, mkdocs_build

    if not Path(make_pdf.CHROMIUM).exists():
        pytest.skip(f"no Chromium at {make_pdf.CHROMIUM}")
    pages = {"index.md": "# Home\n\nA course.\n\nPrint it: [one page](print.md).\n{ .mha-print-note }\n",
             "one.md": "# One\n\n## Summary\n\nSee [two](two.md#summary).\n",
             "two.md": "# Two\n\n## Summary\n\nBack to [one](one.md).\n"}
    pages.update({src: f"# {src}\n" for src in site_print.SKIP})
    pages["stylesheets/print.css"] = (ROOT / "docs" / "stylesheets" / "print.css").read_text()
    proj = mini_project(tmp_path, {}, pages)
    config = proj / "mkdocs.yml"
    config.write_text(config.read_text().replace(
        "hooks: [", "site_url: https://example.org/course/\nextra_css: [stylesheets/print.css]\n"
                    f"hooks: [\"{ROOT / 'hooks' / 'site_print.py'}\", "))
    result = mkdocs_build(config, tmp_path / "site", tmp_path / "cache", env={"MHA_PDF": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    site = tmp_path / "site"
    pdf = (site / "lecture.pdf").read_bytes()
    assert make_pdf.page_count(pdf) >= 3  # home + contents, one, two: a sheet each
    assert {"Home", "One", "Two"} <= set(_outline_titles(pdf))
    assert '<a href="lecture.pdf" download>' in (site / "index.html").read_text()
    printed = (site / "print" / "index.html").read_text()
    assert 'href="#two--summary"' in printed and 'id="one--summary"' in printed and 'id="two--summary"' in printed


@build
def test_print_page_is_left_out_of_search(built_site):
    import json

    index = json.loads((built_site / "search" / "search_index.json").read_text())
    assert not [d["location"] for d in index["docs"] if d["location"].startswith("print/")]


# ---- print styles in Chromium --------------------------------------------------------------------

VISIBLE_IMAGES = """() => Array.from(document.querySelectorAll('.md-content figure.mha-figure')).map(f => ({
  explorer: f.closest('.mha-explorer-static') !== null,
  shown: Array.from(f.querySelectorAll('img')).filter(i => {
    const s = getComputedStyle(i);
    return s.display !== 'none' && s.visibility !== 'hidden' && i.offsetParent !== null;
  }).map(i => i.getAttribute('src'))}))"""

HIDDEN = """(selectors) => selectors.map(sel => [sel, Array.from(document.querySelectorAll(sel))
  .filter(e => getComputedStyle(e).display !== 'none' && e.getClientRects().length > 0).length])"""

CHROME = [".md-header", ".md-tabs", ".md-sidebar--primary", ".md-sidebar--secondary", ".md-footer", ".md-search",
          ".md-top", ".md-content .mha-reuse", ".md-content .headerlink", ".md-clipboard"]


@build
@in_browser
@pytest.mark.parametrize("url", ["attention/", "heads/", "print/"])
def test_printing_in_dark_mode_shows_each_figure_once_light_and_no_chrome(browser, site_url, url):
    ctx = browser.new_context(viewport={"width": 1000, "height": 900}, color_scheme="dark")
    page = ctx.new_page()
    page.goto(site_url + url, wait_until="load", timeout=120_000)  # print/ holds every figure (tools.screenshots.goto)
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    # the explorers start once widgets.js has loaded their script, which may be after `load`
    page.wait_for_function("Array.from(document.querySelectorAll('.mha-explorer-ui'))"
                           ".every(ui => ui.dataset.ready)", timeout=20000, polling=100)
    screen = page.evaluate(VISIBLE_IMAGES)
    page.emulate_media(media="print", color_scheme="dark")
    paper = page.evaluate(VISIBLE_IMAGES)
    chrome = page.evaluate(HIDDEN, CHROME)
    explorers = page.evaluate("""() => [
        Array.from(document.querySelectorAll('.mha-explorer-static')).filter(e => getComputedStyle(e).display !== 'none').length,
        Array.from(document.querySelectorAll('.mha-explorer-static')).length,
        Array.from(document.querySelectorAll('.mha-explorer-ui')).filter(e => e.getClientRects().length > 0).length]""")
    colours = page.evaluate("""() => [getComputedStyle(document.querySelector('.md-typeset p')).color,
                                      getComputedStyle(document.body).backgroundColor]""")
    ctx.close()
    assert paper, f"{url}: no figure found"
    # on screen in dark mode: the dark copy (so the check below is not vacuous); an explorer
    # that runs hides its static figure on screen
    assert all(len(f["shown"]) == (0 if f["explorer"] else 1) for f in screen), screen
    assert all(src.endswith("#only-dark") for f in screen for src in f["shown"]), screen
    # on paper: one copy of every figure, the light one (explorers' static figures included)
    assert all(len(f["shown"]) == 1 and f["shown"][0].endswith("#only-light") for f in paper), paper
    assert all(n == 0 for _, n in chrome), chrome
    shown, total, ui = explorers
    assert shown == total and ui == 0, explorers  # the static figure, not the controls
    text, background = (re.findall(r"[\d.]+", c) for c in colours)
    assert max(map(float, text[:3])) <= 40 and (len(text) == 3 or float(text[3]) >= 0.8), colours  # dark text ...
    assert background in (["255", "255", "255"], ["0", "0", "0", "0"]), colours  # ... on white paper


# ---- the PDF -------------------------------------------------------------------------------------

def _pdf_strings(pdf: bytes, key: bytes) -> list[bytes]:
    """The literal strings after ``/key`` in a PDF: balanced parentheses, backslash escapes."""
    out = []
    for m in re.finditer(rb"/" + key + rb"\s*\(", pdf):
        i, depth, buf = m.end(), 1, bytearray()
        while depth:
            c = pdf[i:i + 1]
            if c == b"\\":
                octal = re.match(rb"[0-7]{1,3}", pdf[i + 1:i + 4])
                if octal:
                    buf.append(int(octal.group(0), 8))
                    i += 1 + len(octal.group(0))
                    continue
                buf += pdf[i + 1:i + 2]
                i += 2
                continue
            depth += {b"(": 1, b")": -1}.get(c, 0)
            if depth:
                buf += c
            i += 1
        out.append(bytes(buf))
    return out


def _outline_titles(pdf: bytes) -> list[str]:
    """The bookmark titles Chromium writes (one per heading of print/)."""
    out = []
    for raw in _pdf_strings(pdf, b"Title"):
        out.append(raw[2:].decode("utf-16-be") if raw.startswith(b"\xfe\xff") else raw.decode("latin-1"))
    return out


@build
@in_browser
@pytest.mark.slow
def test_make_pdf_prints_the_whole_lecture(built_site, tmp_path, monkeypatch):
    if not Path(make_pdf.CHROMIUM).exists():
        pytest.skip(f"no Chromium at {make_pdf.CHROMIUM}")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    out = tmp_path / "lecture.pdf"
    pages = make_pdf.build_pdf(built_site, out)
    pdf = out.read_bytes()
    assert pdf.startswith(b"%PDF-") and pages == make_pdf.page_count(pdf)
    assert pages > 3 * len(PRINTED)  # each page of the lecture starts a sheet, most take several
    titles = _outline_titles(pdf)
    for src in ("attention.md", "rope.md", "quiz.md"):
        first = re.search(r"^# (.+)$", (ROOT / "docs" / src).read_text(), re.M).group(1).strip()
        assert first in titles, (first, titles[:30])
    assert b"(D:19700102000000+00'00')" in pdf  # dated by the build, not by the clock
    # links to the rest of the site go to the site's own address, never to the printing server;
    # built without SITE_URL (no public address, no canonical link) they are plain text
    canonical = re.search(r'<link rel="canonical" href="([^"]+)print/"', (built_site / "print" / "index.html").read_text())
    uris = _pdf_strings(pdf, b"URI")
    assert not [u for u in uris if u.startswith((b"http://127.0.0.1", b"http://localhost"))], uris[:10]
    if canonical:
        assert any(u.startswith(canonical.group(1).encode()) for u in uris), uris[:10]
