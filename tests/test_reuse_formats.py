"""Reuse formats: every file a reuse row links exists and is what it says, each script has a
page that shows its source and how to run it, and the gallery follows the lecture."""
from __future__ import annotations

import csv
import io
import posixpath
import re
import sys
from html import unescape
from pathlib import Path

import numpy as np
import pytest

import figures
import mhalib
from helpers import HOOKS, ROOT, nav_pages, script_section

sys.path.insert(0, str(HOOKS))

pytestmark = pytest.mark.build


def _pages(site: Path):
    return sorted(site.rglob("index.html"))


def _resolve(html: Path, href: str) -> Path:
    path, _, fragment = href.partition("#")
    target = (html.parent / path).resolve()
    target = target / "index.html" if path.endswith("/") else target
    if fragment and target.suffix == ".html" and target.is_file():  # a script's section on its chapter's page
        assert f'id="{fragment}"' in target.read_text(), f"{html}: {href}: no #{fragment} there"
    return target


def _rows(html: Path):
    return re.findall(r'<p class="mha-reuse"[^>]*>(.*?)</p>', html.read_text(), flags=re.S)


def test_every_reuse_link_resolves_to_a_file_and_figures_offer_every_format(built_site):
    checked = 0
    for html in _pages(built_site):
        for row in _rows(html):
            hrefs = [h for h in re.findall(r'href="([^"]+)"', row) if not h.startswith("http")]
            for href in hrefs:
                assert _resolve(html, href).is_file(), f"{html}: reuse link {href} leads nowhere"
                checked += 1
            labels = re.sub(r"<code>.*?</code>|<span class=\"mha-credit\">.*?</span>", "", row, flags=re.S)
            labels = unescape(re.sub(r"<[^>]+>", "", labels))
            if any(h.endswith(".svg") for h in hrefs):  # a figure
                for word in ("SVG (light · dark)", "PNG (light · dark)", "PDF", "CSV", "JSON", "script"):
                    assert word in labels, f"{html}: reuse row without {word}: {labels}"
    assert checked > 400


def test_large_data_files_are_served_compressed_and_unpack_to_what_the_command_line_writes(built_site, tmp_path):
    """A CSV or JSON over 64 kB is served as NAME.gz only (a reader's tools unpack gzip), with
    no name or time in its header (the same bytes every build); its reuse link says so and
    gives the size unpacked; a small one is served as it is. The compressed pe_heatmap CSV
    unpacks to exactly what its command line writes in a process of its own."""
    import gzip
    import subprocess
    import sys

    import figure_markdown

    served = {p.name for p in (built_site / "figures").iterdir()}
    packed = sorted(n for n in served if n.endswith((".csv.gz", ".json.gz")))
    assert len(packed) >= 10
    for name in packed:
        raw = (built_site / "figures" / name).read_bytes()
        assert raw[:4] == b"\x1f\x8b\x08\x00" and raw[4:8] == b"\x00\x00\x00\x00", f"{name}: a name or a time in its header"
        assert len(gzip.decompress(raw)) > figure_markdown.COMPRESS_OVER and name[:-3] not in served, name
    for name in served:
        if name.endswith((".csv", ".json")) and not name.endswith(".explorer.json"):
            assert (built_site / "figures" / name).stat().st_size <= figure_markdown.COMPRESS_OVER, f"{name} is large and plain"
    links = 0
    for html in _pages(built_site):
        for row in _rows(html):
            for title, label in re.findall(r'href="[^"]+\.(?:csv|json)\.gz" title="([^"]+)"[^>]*>([^<]+)</a>', row):
                assert label.endswith("(gzip)") and re.search(r"gzip-compressed, [0-9.]+ [kM]B unpacked$", title), (html, label, title)
                links += 1
    assert links >= len(packed)
    out = tmp_path / "pe_heatmap.csv"
    subprocess.run([sys.executable, "-m", "figures", "pe_heatmap", "--out", str(out)], check=True, cwd=ROOT,
                   capture_output=True)
    assert "pe_heatmap.csv.gz" in packed and gzip.decompress((built_site / "figures" / "pe_heatmap.csv.gz").read_bytes()) == out.read_bytes()


def test_the_pdf_is_a_pdf_and_no_png_is_served(built_site):
    fig = built_site / "figures"
    assert (fig / "pe_heatmap.pdf").read_bytes().startswith(b"%PDF")
    assert not list(fig.glob("*.png")), "the site serves no PNG: the reader's browser draws it from the SVG"


def test_the_wide_csv_of_the_pe_heatmap_is_the_table_as_a_grid(built_site):
    from helpers import data_file

    rows = list(csv.reader(io.StringIO(data_file(built_site, "pe_heatmap.wide.csv").decode())))
    n, d_model = 64, 128  # pe_heatmap's defaults
    assert len(rows) == 1 + n and all(len(r) == 1 + d_model for r in rows)
    assert rows[0] == ["pe", *map(str, range(d_model))]
    assert [r[0] for r in rows[1:]] == [str(i) for i in range(n)]
    grid = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    # PE[p, 2i] = sin(p / 10000^(2i/D)), PE[p, 2i+1] = cos(...), written here from the formula.
    pos = np.arange(n)[:, None]
    angle = pos / 10000.0 ** (np.arange(0, d_model, 2)[None, :] / d_model)
    expected = np.empty((n, d_model))
    expected[:, 0::2], expected[:, 1::2] = np.sin(angle), np.cos(angle)
    np.testing.assert_allclose(grid, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grid, mhalib.sinusoidal_encoding(n, d_model, 10000.0), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["pe_heatmap", "models_table"])
def test_a_script_page_shows_the_source_exactly_and_the_two_lines_to_run_it(built_site, name):
    """Its source, and the reuse row's lines: the wheel with its figures extra, then the
    command (they are run in a fresh venv by test_reuse_venv.py)."""
    html, page = script_section(built_site, name)
    code = re.search(r'<div class="language-python highlight mha-script-source"><pre><span></span><code>(.*?)</code>',
                     html, flags=re.S).group(1)
    script = figures.scripts()[name]
    assert unescape(re.sub(r"<[^>]+>", "", code)) == script.path.read_text()
    (wheel,) = [p.name for p in (built_site / "downloads").glob("mhalib-*.whl")]
    ext = "svg" if script.kind == "figure" else "md"
    text = unescape(re.sub(r"<[^>]+>", "", html))
    assert f'pip install "{wheel}[figures]"\npython -m figures {name} --out {name}.{ext}' in text
    assert re.search(rf'<a download href="../../figures/{name}\.py"', html)
    assert re.search(rf'href="../../downloads/{re.escape(wheel)}"', page)  # once, at the top of the page


def _nav_order() -> list[str]:
    return [src for src, _ in nav_pages()]


def _first_appearance() -> dict[str, str]:
    """Figure -> the first page (in nav order, gallery pages aside) that shows it."""
    first = {}
    for page in _nav_order():
        if not page.endswith(".md"):
            continue
        source = (ROOT / "docs" / page).read_text()
        if "{{ gallery" in source:
            continue
        for name in re.findall(r"\]\((?:\.\./)*figures/([a-z0-9_]+)\.svg|\{\{ explorer ([a-z0-9_]+)", source):
            name = name[0] or name[1]
            first.setdefault(name, page)
    return first


# what a reader should not have to decode in a gallery title or caption: x^T, sqrt(d), omega,
# x_i, -inf, m*j, q . k, W_O (the pages typeset these; a title is plain text, so it uses Unicode:
# xᵀ, √d, ω, xᵢ, −∞, m·j, q · k, or words). d_model and d_head stay: they are names, written so on every page.
ASCII_MATH = re.compile(r"\^|\bsqrt\(|\b(?:omega|tau|theta|pi|inf)\b|\b[A-Za-z]_(?:[0-9ijkt]|\{)|\b[A-Z]_[A-Z]\b"
                        r"|\b[a-z]\*[a-z]\b|\b[a-z] \. [a-z]\b")


def test_gallery_entries_follow_the_lecture_and_link_back_to_their_page(built_site):
    first = _first_appearance()
    rank = {name: i for i, name in enumerate(first)}
    galleries = [p for p in _nav_order() if (ROOT / "docs" / p).is_file() and "{{ gallery" in (ROOT / "docs" / p).read_text()]
    assert len(galleries) >= 3
    shown = 0
    for page in galleries:
        html_path = built_site / page.removesuffix(".md") / "index.html"
        html = html_path.read_text()
        ids = re.findall(r'<h2 id="([a-z0-9_]+)"', html)
        assert ids, page
        keys = [(rank[n], n) if n in rank else (len(rank) + 1, n) for n in ids]
        assert keys == sorted(keys), f"{page}: gallery not in lecture order: {ids}"
        blocks = re.split(r'<h2 id="', html)[1:]
        for name, block in zip(ids, blocks):
            script = figures.scripts()[name]
            heading = unescape(re.sub(r"<[^>]+>", "", block.split("</h2>")[0].split('">', 1)[1])).replace("¶", "").strip()
            assert heading == script.title.rstrip("."), name
            # each page's first figure loads at once (it may be the largest paint), the rest lazily
            assert ('loading="eager"' if name == ids[0] else 'loading="lazy"') in block
            assert "mha-gallery-item" in block
            if name in first:
                target = first[name].removesuffix(".md")
                link = re.search(r'Appears on: <a href="([^"]+)">', block)
                assert link, f"{page}: {name} does not link back to its page"
                assert posixpath.normpath(posixpath.join(page.removesuffix(".md"), link.group(1))) == target, name
            caption = re.search(r"<figcaption>(.*?)</figcaption>", block, flags=re.S)
            assert caption, name
            # the text a reader sees: typeset math (KaTeX's HTML) counts, its MathML copy for screen
            # readers (which holds the TeX source) does not
            visible = re.sub(r'<span class="katex-mathml">.*?</math></span>', "", caption.group(1), flags=re.S)
            shown_text = unescape(re.sub(r"<[^>]+>", "", visible))
            assert not re.search(r"\*\*|`|Page: |\]\(", shown_text), f"{name}: raw Markdown in the caption"
            for what, text in (("title", heading), ("caption", shown_text)):
                ascii_math = ASCII_MATH.search(text)
                assert not ascii_math, f"{name}: ASCII math {ascii_math.group(0)!r} in the {what}: {text}"
            shown += 1
    assert shown >= 35


@pytest.mark.browser
def test_a_png_link_draws_the_figure_at_slide_width_over_its_theme_and_hides_without_javascript(browser, site_url, tmp_path):
    """The site serves no PNG: the reader's browser draws one from the SVG (javascripts/png_export.js).
    Clicking the light and dark PNG links of the attention page's first figure saves NAME.png and
    NAME-dark.png, 2,400 px wide (at least twice the figure's own size), the SVG's shape, opaque in
    the theme's background; and the light one is the figure the command line draws with
    matplotlib (scaled to its size, the mean difference is a few levels of 255; the dark one
    differs from it by tens). Without JavaScript the links are not shown."""
    import io
    import subprocess
    import sys

    from PIL import Image

    from figures._kit import style

    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(site_url + "attention/", wait_until="load")
    links = page.locator("a[data-png]")
    name = links.first.get_attribute("data-png")
    got = {}
    for i, theme in enumerate(("light", "dark")):
        link = links.nth(i)
        assert link.is_visible() and link.inner_text() == theme
        with page.expect_download() as download:
            link.click()
        got[theme] = (download.value.suggested_filename, Path(download.value.path()).read_bytes())
    svg_w = page.evaluate("""async (src) => { const i = new Image(); i.src = src; await i.decode();
                              return [i.naturalWidth, i.naturalHeight]; }""", links.first.get_attribute("href"))
    context.close()
    assert got["light"][0] == name and got["dark"][0] == name.replace(".png", "-dark.png")
    images = {t: Image.open(io.BytesIO(raw)) for t, (_, raw) in got.items()}
    for t, im in images.items():
        assert im.format == "PNG" and im.width == 2400 >= 2 * svg_w[0], (t, im.size, svg_w)
        assert abs(im.height / im.width - svg_w[1] / svg_w[0]) < 2 / im.width
        rgba = np.asarray(im.convert("RGBA"))
        assert rgba[..., 3].min() == 255, f"{t}: not opaque"
        corner = "#%02x%02x%02x" % tuple(rgba[2, 2, :3])
        assert corner == style.THEMES[t]["bg"], (t, corner)
    out = tmp_path / name
    subprocess.run([sys.executable, "-m", "figures", name.removesuffix(".png"), "--out", str(out)], check=True,
                   cwd=ROOT, capture_output=True)
    agg = Image.open(out).convert("RGB")
    mine = np.asarray(images["light"].convert("RGB").resize(agg.size, Image.LANCZOS), float)
    assert np.abs(mine - np.asarray(agg, float)).mean() < 8
    dark = np.asarray(images["dark"].convert("RGB").resize(agg.size, Image.LANCZOS), float)
    assert np.abs(dark - np.asarray(agg, float)).mean() > 30  # the comparison tells pictures apart
    bare = browser.new_context(java_script_enabled=False)
    page = bare.new_page()
    page.goto(site_url + "attention/", wait_until="load")
    shown = page.evaluate("""() => [document.querySelectorAll('a[data-png]').length,
        getComputedStyle(document.querySelector('.mha-png')).display,
        getComputedStyle(document.querySelector(".mha-reuse a[download][href$='.pdf']")).display]""")
    assert shown[0] > 0 and shown[1:] == ["none", "inline"], shown  # no PNG link; the SVG and PDF stay
    bare.close()


@pytest.mark.browser
def test_a_link_to_a_place_far_down_a_long_page_lands_there(browser, site_url, built_site):
    """A figure's "script" link goes to its section of the chapter's scripts page, and a
    contents entry to a section of a long page: blocks far down keep estimated sizes until
    javascripts/render_rest.js renders them, so without reachTarget() the browser landed a
    screen or more away (the alibi_bias_heads link showed rope_layouts' source)."""
    heads = re.findall(r'<h2 id="([^"]+)"', (built_site / "sinusoidal" / "index.html").read_text())
    last = heads[len(heads) * 2 // 3]  # far down, with a screen of page still below it
    page = browser.new_page(viewport={"width": 390, "height": 800})
    try:
        for url, target in [("scripts/position/#alibi_bias_heads", "alibi_bias_heads"), (f"sinusoidal/#{last}", last)]:
            page.goto(site_url + url, wait_until="load")
            page.wait_for_timeout(300)
            top = page.evaluate(f"document.getElementById({target!r}).getBoundingClientRect().top")
            assert 0 <= top <= 160, (url, top)  # just under the header
    finally:
        page.close()
