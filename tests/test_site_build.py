"""The real site: a strict build, every reference resolved, reproducible to the byte, crash safe.

These tests read the one session build (``built_site``); the machine's own behaviour
(caching, faults, concurrency) is tested on small fixture sites in ``test_faults.py``.
"""
from __future__ import annotations

import os
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

import figures
from helpers import ROOT, build_stats, data_file, mkdocs_build

pytestmark = pytest.mark.build


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if tag in ("img", "a", "link", "script") and a.get(key):
                self.refs.append((tag, a[key]))


def test_strict_build_renders_every_reference_once(built_site):
    stats = build_stats(built_site)
    assert stats["total"] > 0 and stats["cached"] == 0 and stats["rendered"] == stats["total"]
    assert stats["repaired"] == 0 and stats["workers"] >= 1
    assert (built_site / "index.html").is_file()


def test_every_figure_script_is_published_with_its_outputs(built_site):
    """Every script appears in a gallery or a page, so each has its CSV and its source."""
    for name, script in figures.scripts().items():
        assert (built_site / "figures" / f"{name}.py").read_bytes() == script.path.read_bytes(), name
        assert data_file(built_site, f"{name}.csv").startswith(b"name,index,value\n"), name
        if script.kind == "figure":
            light = (built_site / "figures" / f"{name}.svg").read_bytes()
            dark = (built_site / "figures" / f"{name}-dark.svg").read_bytes()
            assert light.startswith(b"<?xml") and dark.startswith(b"<?xml") and light != dark, name
            assert b"<dc:date>" not in light, name
            assert (built_site / "figures" / f"{name}.pdf").read_bytes().startswith(b"%PDF"), name


def test_no_directive_is_left_in_any_page(built_site):
    for html in built_site.rglob("*.html"):
        text = html.read_text()
        assert not re.search(r"\{\{\s*(table|value|explorer|gallery|ref)\b", text), f"unreplaced directive in {html}"


def test_every_local_link_and_image_resolves(built_site):
    checked = 0
    for html in built_site.rglob("*.html"):
        parser = _Links()
        parser.feed(html.read_text())
        for tag, ref in parser.refs:
            if re.match(r"^[a-z]+:|^#|^//", ref):
                continue
            path = ref.split("#")[0].split("?")[0]
            base = built_site if path.startswith("/") else html.parent  # 404.html links from the root
            target = (base / path.lstrip("/")).resolve()
            if target.is_dir():
                target = target / "index.html"
            assert target.is_file(), f"{html.relative_to(built_site)}: <{tag}> {ref} is missing"
            checked += 1
    assert checked > 20


def test_every_url_a_stylesheet_names_resolves(built_site):
    """CSS ``url(...)`` references (fonts, images) of every stylesheet the site ships, KaTeX's
    included: a browser that takes a listed source the site lacks gets a 404 (KaTeX's stylesheet
    named 40 WOFF and TrueType files that were never shipped)."""
    checked, missing = 0, []
    for css in built_site.rglob("*.css"):
        for ref in re.findall(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)", css.read_text(encoding="utf-8")):
            if re.match(r"^(data|https?):|^#", ref):
                continue
            checked += 1
            if not (css.parent / ref.split("#")[0].split("?")[0]).resolve().is_file():
                missing.append(f"{css.relative_to(built_site)}: {ref}")
    assert not missing, f"{len(missing)} missing: {missing[:10]}"
    assert checked >= 20  # KaTeX's twenty fonts at least


def test_no_navigation_entry_shows_tex(built_site):
    """A heading with a formula is typeset in the page's table of contents, the site's nav and
    the phone drawer as in the heading itself (hooks/site_math.py), never shown as TeX source."""
    shown, typeset = [], 0
    for html in built_site.rglob("*.html"):
        for entry in re.findall(r'<span class="md-ellipsis">(.*?)</span>\s*</a>', html.read_text(), flags=re.S):
            text = re.sub(r"<[^>]+>", "", re.sub(r'<span class="katex-mathml">.*?</span>', "", entry, flags=re.S))
            if "\\(" in text or "\\sqrt" in text or "\\text" in text:
                shown.append((html.relative_to(built_site).as_posix(), text.strip()[:60]))
            typeset += 'class="katex"' in entry
    assert not shown, shown[:5]
    assert typeset >= 2  # the attention page's "Why divide by ..." and one_head's W_O heading


def test_no_page_has_a_link_without_a_name(built_site):
    """Every link has a name a screen reader can announce: text, an image's alt, an
    aria-label or a title (pymdownx.highlight's line anchors were 45 to 96 empty links on every
    page with code)."""
    empty, seen = [], 0
    for html in built_site.rglob("*.html"):
        for attrs, inner in re.findall(r"<a\b([^>]*\bhref=[^>]*)>(.*?)</a>", html.read_text(), flags=re.S):
            seen += 1
            if re.search(r"\baria-label=\"[^\"]+\"|\btitle=\"[^\"]+\"", attrs):
                continue
            if re.sub(r"<[^>]+>", "", inner).strip() or re.search(r'<img[^>]*\balt="[^"]+"', inner):
                continue
            empty.append(f"{html.relative_to(built_site)}: <a{attrs[:80]}>")
    assert seen > 1000
    assert not empty, f"{len(empty)} links without a name: {empty[:8]}"


def _dated_site(tmp_path) -> str:
    """A small site with a public address (so its sitemap lists its page) in a git checkout of
    its own whose one commit is dated 2 January 1970, built; its sitemap's text."""
    from helpers import SMALL_FIGURE, mini_project

    proj = mini_project(tmp_path, {"small": SMALL_FIGURE}, "# Home\n")
    (proj / "mkdocs.yml").write_text((proj / "mkdocs.yml").read_text().replace(
        "hooks: [", f"site_url: https://example.org/\nhooks: [\"{ROOT / 'hooks' / 'site_dates.py'}\", "))
    date = "1970-01-02T00:00:00+00:00"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], [*git, "commit", "-q", "-m", "one"]):
        subprocess.run(cmd, cwd=proj, check=True, capture_output=True,
                       env=dict(os.environ, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date))
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode == 0, result.stderr[-3000:]
    return (tmp_path / "site" / "sitemap.xml").read_text()


def test_sitemap_date_comes_from_the_sources_not_the_clock(tmp_path, monkeypatch):
    """Rebuilding an unchanged site on another day gives the same bytes: lastmod is the date
    of the last commit, never today's date (the course's own build has no public address
    unless SITE_URL is set, so its sitemap lists no page: a fixture site with one)."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    sitemap = _dated_site(tmp_path)
    assert "<url>" in sitemap
    assert set(re.findall(r"<lastmod>([^<]+)</lastmod>", sitemap)) == {"1970-01-02"}


def test_sitemap_honours_source_date_epoch(tmp_path):
    from helpers import SMALL_FIGURE, mini_project

    proj = mini_project(tmp_path, {"small": SMALL_FIGURE}, "# Home\n")
    (proj / "mkdocs.yml").write_text((proj / "mkdocs.yml").read_text().replace(
        "hooks: [", f"site_url: https://example.org/\nhooks: [\"{ROOT / 'hooks' / 'site_dates.py'}\", "))
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache",
                          env={"SOURCE_DATE_EPOCH": "86400"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "<lastmod>1970-01-02</lastmod>" in (tmp_path / "site" / "sitemap.xml").read_text()


def test_notebook_page_has_a_working_download_link(built_site):
    import jupytext

    for nb in (ROOT / "docs" / "labs").glob("*.py"):
        page = built_site / "labs" / nb.stem / "index.html"
        html = page.read_text()
        m = re.search(r'href="([^"]*%s)"' % re.escape(nb.name), html)
        assert m, f"no download link to {nb.name} on {page}"
        assert (page.parent / m.group(1)).resolve().read_bytes() == nb.read_bytes()
        m = re.search(r'href="([^"]*%s)"' % re.escape(nb.stem + ".ipynb"), html)
        assert m, f"no .ipynb download link on {page}"
        ipynb = jupytext.read(page.parent / m.group(1))
        code = [c.source for c in ipynb.cells if c.cell_type == "code"]
        assert code and code == [c.source for c in jupytext.read(nb).cells if c.cell_type == "code"]


def test_failing_notebook_cell_fails_the_build(tmp_path):
    proj = tmp_path / "nbproj"
    (proj / "docs" / "labs").mkdir(parents=True)
    (proj / "docs" / "index.md").write_text("# Home\n")
    (proj / "docs" / "labs" / "bad.py").write_text("# %%\nraise RuntimeError('cell failed on purpose')\n")
    (proj / "mkdocs.yml").write_text(
        "site_name: nb\ntheme: {name: mkdocs}\nplugins:\n"
        "  - mkdocs-jupyter: {include: [\"labs/*.py\"], execute: true, allow_errors: false}\n"
        f"hooks: [\"{ROOT / 'hooks' / 'site_notebooks.py'}\"]\n")
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode != 0
    assert "cell failed on purpose" in result.stderr


def _notebooks_hook(tmp_path, monkeypatch):
    """hooks/site_notebooks.py loaded fresh, with stand-ins for mkdocs-jupyter and the config,
    its cache under ``tmp_path``."""
    from helpers import load_file

    hook = load_file(ROOT / "hooks" / "site_notebooks.py", "site_notebooks_for_test")

    class Plugin:
        config = {"cache_dir": ".cache/mkdocs-jupyter"}

    class Config:
        config_file_path = str(tmp_path / "mkdocs.yml")
        plugins = {"mkdocs-jupyter": Plugin()}

    monkeypatch.setenv("MHA_CACHE_DIR", str(tmp_path / "cache"))
    return hook, Plugin, Config


def test_notebook_cache_follows_the_shared_code_digest(tmp_path, monkeypatch):
    """mkdocs-jupyter keys its cache on the notebook alone; the hook names the cache folder
    after the digest that the figure cache uses (all of mhalib and the figure machinery)."""
    from figures._kit import contract

    hook, Plugin, Config = _notebooks_hook(tmp_path, monkeypatch)
    (tmp_path / "cache" / "notebooks" / "stale").mkdir(parents=True)
    hook.on_config(Config())
    assert Path(Plugin.config["cache_dir"]).name.startswith(contract.code_digest()[:16])
    assert not (tmp_path / "cache" / "notebooks" / "stale").exists()


def test_notebook_cache_follows_the_nbconvert_settings(tmp_path, monkeypatch):
    """A change to the labs' nbconvert settings (hooks/jupyter) names a new cache folder."""
    hook, Plugin, Config = _notebooks_hook(tmp_path, monkeypatch)
    hook.on_config(Config())
    before = Path(Plugin.config["cache_dir"]).name
    settings = tmp_path / "jupyter"
    settings.mkdir()
    (settings / "jupyter_nbconvert_config.py").write_text((hook.NBCONVERT_CONFIG / "jupyter_nbconvert_config.py").read_text() + "\n# edited\n")
    monkeypatch.setattr(hook, "NBCONVERT_CONFIG", settings)
    hook.on_config(Config())
    assert Path(Plugin.config["cache_dir"]).name != before


def test_a_lab_cell_printing_in_several_flushes_shows_one_output_block(tmp_path, monkeypatch):
    """A kernel sends printed text in pieces, one per flush, and where the flushes fall
    depends on timing: Lab 3 came out as one output block in one clean build and two in
    the next. With the hook's nbconvert settings (hooks/jupyter), mkdocs-jupyter's exporter
    joins the pieces after executing; a notebook holding one print split in three pieces
    around an image shows two blocks of text, each whole."""
    import nbformat
    from mkdocs_jupyter import nbconvert2

    hook, Plugin, Config = _notebooks_hook(tmp_path, monkeypatch)
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    hook.on_config(Config())
    pieces = [nbformat.v4.new_output("stream", name="stdout", text=t) for t in ("alpha = 1", "28 and", " more\n")]
    image = nbformat.v4.new_output("display_data", data={"text/plain": "an image"})
    cell = nbformat.v4.new_code_cell("print(...)", outputs=[pieces[0], pieces[1], image, pieces[2]])
    path = tmp_path / "split.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)

    page = nbconvert2.nb2html(str(path), execute=False)
    texts = re.findall(r'data-mime-type="text/plain"[^>]*>\s*<pre>(.*?)</pre>', page, re.S)
    assert texts == ["alpha = 128 and", "an image", " more\n"], texts
    app = nbconvert2.get_nbconvert_app(execute=True)
    order = app.config.HTMLExporter.default_preprocessors
    assert order.index("nbconvert.preprocessors.CoalesceStreamsPreprocessor") == \
        order.index("nbconvert.preprocessors.ExecutePreprocessor") + 1


@pytest.mark.parametrize("damage, left", [
    pytest.param(lambda f: f.write_text(f.read_text().replace("cell", "CELL")), [], id="page-edited"),
    pytest.param(lambda f: f.write_text(f.read_text()[:10]), [], id="page-truncated"),
    pytest.param(lambda f: (f.parent / "manifest.json").write_text("{not json"), [], id="manifest-garbled"),
    pytest.param(lambda f: (f.parent / "extra.json").write_text("{}"), ["0123abcd.json"], id="unrecorded-file"),
])
def test_a_damaged_notebook_cache_page_is_removed_before_mkdocs_jupyter_reads_it(tmp_path, monkeypatch, damage, left):
    """mkdocs-jupyter reads its cached pages unchecked; the hook keeps a manifest of them
    (store.seal after a build) and removes any page that does not match it (store.reconcile)."""
    hook, Plugin, Config = _notebooks_hook(tmp_path, monkeypatch)
    hook.on_config(Config())
    folder = Path(Plugin.config["cache_dir"])
    folder.mkdir(parents=True)
    page = folder / "0123abcd.json"
    page.write_text('{"content": "<div>a cell</div>", "toc_tokens": [], "title": null}')
    hook.on_post_build(config=Config())  # what the build kept is recorded
    hook.on_config(Config())
    assert page.exists()  # intact: kept
    damage(page)
    hook.on_config(Config())
    assert sorted(p.name for p in folder.iterdir() if p.name != "manifest.json") == left


def test_page_text_draws_in_a_font_readers_have(built_site):
    """What a reader reads outside formulas and code is drawn in their own fonts. Liberation
    Sans stands in for a machine without DejaVu: every character of every page's text (captions,
    tables, headings, credit lines) is in it. Subscripts (x₁), ᵀ, ‖, ⊕ and ω₀ showed as empty boxes
    there; they are math now, which KaTeX draws with its own fonts."""
    from bs4 import BeautifulSoup
    from fontTools.ttLib import TTFont

    font = Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf")
    if not font.is_file():
        pytest.skip(f"{font} is missing (apt-get install fonts-liberation)")
    cmap = TTFont(font).getBestCmap()
    missing = {}
    for html in sorted(built_site.rglob("index.html")):
        if html.parent.name == "print" or html.parent.parent.name == "scripts":
            continue  # print/ repeats the pages; a scripts page's text is its scripts' titles (held in test_figure_scripts)
        soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
        for el in soup.select(".katex, .arithmatex, script, style, svg, math, pre, code, .md-search"):
            el.decompose()
        bad = {ch for ch in soup.get_text() if not ch.isspace() and ord(ch) > 127 and ord(ch) not in cmap}
        if bad:
            missing[str(html.relative_to(built_site))] = "".join(sorted(bad))
    assert missing == {}
