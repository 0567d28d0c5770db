"""Math rendered at build time (hooks/site_math.py), the notebook pages' trimmed stylesheet
(hooks/site_notebooks.py, hooks/notebook_css.py) and what a page's head loads
(hooks/site_speed.py)."""
from __future__ import annotations

import json
import re
import shutil
import time
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import ROOT, math_as_tex, mini_project, mkdocs_build, nav_pages, tree

sys.path.insert(0, str(ROOT / "hooks"))
import notebook_css  # noqa: E402
import site_assets  # noqa: E402
import site_math  # noqa: E402
import site_notebooks  # noqa: E402
import site_speed  # noqa: E402

needs_node = pytest.mark.skipif(shutil.which("node") is None or not (site_math.KATEX / "package.json").is_file(),
                                reason="node and node_modules/katex (make deps) render the math")


# ---- the formulas and KaTeX ---------------------------------------------------------------------

def test_arithmatex_markup_reads_as_tex_and_display_mode():
    assert site_math.parse(r"\(a_{ij} &lt; b\)") == ("a_{ij} < b", False)  # the page's text is HTML-escaped
    assert site_math.parse("\\[\nx^2\n\\]") == ("\nx^2\n", True)
    for bad in ("x^2", r"\(x^2\]", "\\("):
        with pytest.raises(ValueError, match="delimiters"):
            site_math.parse(bad)


@needs_node
def test_katex_renders_inline_and_display_math_and_reports_what_it_cannot_read():
    ok, display, bad = site_math.run_katex([("x^2", False), ("x^2", True), (r"\frac{1}{", False)])
    assert ok["html"].startswith('<span class="katex">') and "katex-display" not in ok["html"]
    assert '<annotation encoding="application/x-tex">x^2</annotation>' in ok["html"]  # MathML for screen readers
    assert display["html"].startswith('<span class="katex-display">')
    assert "html" not in bad and bad["error"].startswith("KaTeX parse error")


def test_a_cache_entry_serves_only_the_formula_it_was_made_for(tmp_path):
    cache = site_math.MathCache(tmp_path, "renderer-1")
    cache.put("x^2", False, "<b>two</b>")
    assert cache.get("x^2", False) == "<b>two</b>"
    assert cache.get("x^2", True) is None and cache.get("x^3", False) is None
    # an entry copied under another formula's name is not trusted
    shutil.copytree(cache.path("x^2", False), cache.path("x^3", False))
    assert cache.get("x^3", False) is None
    assert not cache.path("x^3", False).exists()  # discarded
    # another KaTeX (or renderer script) means other entries
    assert site_math.MathCache(tmp_path, "renderer-2").get("x^2", False) is None


@pytest.mark.parametrize("damage", [
    # the HTML edited in place: the formula still matches, the stored hash does not
    pytest.param(lambda e: (e / "formula.html").write_text("<b>3</b>"), id="html-edited"),
    pytest.param(lambda e: (e / "formula.html").unlink(), id="html-missing"),
    pytest.param(lambda e: (e / "manifest.json").write_text("{not json"), id="manifest-garbled"),
    pytest.param(lambda e: (shutil.rmtree(e), e.write_text("x")), id="plain-file"),
])
def test_a_damaged_math_entry_is_discarded_and_never_served(tmp_path, damage):
    cache = site_math.MathCache(tmp_path, "renderer-1")
    cache.put("x^2", False, "<b>two</b>")
    assert cache.get("x^2", False) == "<b>two</b>"
    time.sleep(0.01)
    damage(cache.path("x^2", False))
    fresh = site_math.MathCache(tmp_path, "renderer-1")
    assert fresh.get("x^2", False) is None and fresh.damaged == 1
    fresh.put("x^2", False, "<b>two</b>")  # rendered again, in place of the damaged entry
    assert site_math.MathCache(tmp_path, "renderer-1").get("x^2", False) == "<b>two</b>"


def test_renderer_id_follows_katex_and_the_script():
    rid = site_math.renderer_id()
    assert re.fullmatch(r"[0-9a-f]{16}", rid) and rid == site_math.renderer_id()
    key = site_math.entry_key(rid, "x", False)
    assert key != site_math.entry_key(rid, "x", True) != site_math.entry_key(rid + "0", "x", True)


# ---- fixture sites --------------------------------------------------------------------------------

def math_site(tmp_path: Path, pages: dict[str, str]) -> Path:
    """A mini project whose only hook is the math hook, with pymdownx.arithmatex as the site has it."""
    proj = mini_project(tmp_path, {}, pages)
    (proj / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: mini
        theme: {{name: mkdocs}}
        hooks: ["{ROOT / 'hooks' / 'site_math.py'}"]
        markdown_extensions:
          - pymdownx.arithmatex:
              generic: true
        """))
    return proj / "mkdocs.yml"


@needs_node
@pytest.mark.build
def test_a_formula_katex_cannot_read_fails_the_build_naming_page_and_formula(tmp_path):
    config = math_site(tmp_path, {"index.md": "# Home\n\nFine: \\(x^2\\).\n",
                                  "broken.md": "# Broken\n\nA fraction \\(\\frac{1}{\\) left open.\n"})
    result = mkdocs_build(config, tmp_path / "site", tmp_path / "cache")
    assert result.returncode != 0
    assert "broken.md" in result.stderr and "\\(\\frac{1}{\\)" in result.stderr, result.stderr[-2000:]
    assert "index.md" not in result.stderr.split("cannot render", 1)[-1]


@needs_node
@pytest.mark.build
def test_math_is_rendered_once_per_build_cached_and_never_stale(tmp_path):
    pages = {"index.md": "# Home\n\nInline \\(a < b\\) and display:\n\n\\[\nx^2\n\\]\n",
             "two.md": "# Two\n\nAgain \\(a < b\\), and \\(y_1\\).\n"}
    config = math_site(tmp_path, pages)
    cache, epoch = tmp_path / "cache", {"SOURCE_DATE_EPOCH": "1700000000"}
    first = mkdocs_build(config, tmp_path / "s1", cache, env=epoch)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "3 formulas, 3 rendered by KaTeX in 1 node run, 0 from the cache" in first.stderr
    home = (tmp_path / "s1" / "index.html").read_text()
    assert home.count('class="katex"') == 2 and '<span class="katex-display">' in home
    assert "\\(" not in home and "\\[" not in home  # no raw TeX left outside the MathML annotations
    assert re.search(r'<div class="arithmatex"><span class="katex-display">', home)

    again = mkdocs_build(config, tmp_path / "s2", cache, env=epoch)
    assert "3 formulas, 0 rendered by KaTeX in 0 node runs, 3 from the cache" in again.stderr
    cold = mkdocs_build(config, tmp_path / "s3", tmp_path / "cold-cache", env=epoch)
    assert tree(tmp_path / "s2") == tree(tmp_path / "s3") == tree(tmp_path / "s1")  # cached = fresh, byte for byte

    # an edited formula is a new rendering, never the old one from the cache
    (config.parent / "docs" / "two.md").write_text("# Two\n\nAgain \\(a < b\\), and \\(y_2\\).\n")
    edited = mkdocs_build(config, tmp_path / "s4", cache)
    assert "3 formulas, 1 rendered by KaTeX in 1 node run, 2 from the cache" in edited.stderr
    two = math_as_tex((tmp_path / "s4" / "two" / "index.html").read_text())
    assert "\\(y_2\\)" in two and "y_1" not in two
    assert cold.returncode == edited.returncode == 0


# ---- the notebook stylesheet ----------------------------------------------------------------------

def test_prune_keeps_the_rules_the_pages_can_use_and_the_properties_they_read():
    css = (".w{--used: 1px;--chain: var(--used);--unused: 2px;--read-by-page: 3px}"
           ".a{margin:var(--chain)}.a .missing{color:red}.b,.a:hover,.zz{color:blue}"
           ".a:not(.nowhere){top:0}pre{line-height:125%}"
           "@media print{.a{left:0}.nope{right:0}}@media screen{.nope{right:0}}"
           ".a{animation:spin 1s}@keyframes spin{to{opacity:1}}@keyframes idle{to{opacity:0}}@charset \"UTF-8\";")
    out = notebook_css.prune(css, {"w", "a"}, also_reads="<p style='x: var(--read-by-page)'>")
    assert "--used: 1px" in out and "--chain: var(--used)" in out and "--read-by-page" in out
    assert "--unused" not in out
    assert ".missing" not in out and ".zz" not in out and ".b," not in out and ".a:hover{color:blue}" in out
    assert ".a:not(.nowhere){top:0}" in out and "pre{line-height:125%}" in out
    assert "@media print{.a{left:0}}" in out and "@media screen" not in out and ".nope" not in out
    assert "@keyframes spin" in out and "idle" not in out and "@charset" not in out


def test_notebook_head_loses_its_styles_and_loaders_but_not_its_outputs():
    html = ('<style type="text/css">pre{x:1}</style><style>.jp-Mermaid{y:2}</style>\n<!-- Load mathjax -->'
            '<script src=""> </script><!-- MathJax configuration --><script type="text/x-mathjax-config">m</script>'
            '<!-- End of mathjax configuration --><script type="module">document.querySelectorAll(".jp-Mermaid > pre")'
            '</script><div class="jupyter-wrapper"><div class="jp-OutputArea-output"><style scoped>td{z:3}</style>'
            '</div></div>')
    out, styles = site_notebooks.strip_head(html)
    assert styles == ["pre{x:1}", ".jp-Mermaid{y:2}"]
    assert out == ('\n<div class="jupyter-wrapper"><div class="jp-OutputArea-output"><style scoped>td{z:3}</style>'
                   '</div></div>')


# ---- the head of a page ---------------------------------------------------------------------------

HEAD = ('<head><link rel="stylesheet" href="../assets/stylesheets/main.css">'
        '<link rel="stylesheet" href="../assets/katex/katex.min.css">'
        '<link rel="stylesheet" href="../stylesheets/bert_viewer.css">'
        '<link rel="stylesheet" href="../assets/_mkdocstrings.css">'
        '<link rel="stylesheet" href="../stylesheets/print.css"></head>')
TAIL = '<script src="../assets/javascripts/bundle.0123abcd.min.js"></script></body>'


def test_a_page_links_the_stylesheets_it_uses_and_defers_the_theme_script():
    plain = site_speed.trim_head(HEAD + "<body><p>text</p>" + TAIL, "rope/")
    assert "main.css" in plain and "katex.min.css" in plain and "bert_viewer" in plain  # on every page
    assert "_mkdocstrings" not in plain
    assert '<link rel="stylesheet" href="../stylesheets/print.css" media="print">' in plain
    assert '<script src="../assets/javascripts/bundle.0123abcd.min.js" defer></script>' in plain
    full = site_speed.trim_head(HEAD + '<body><span class="katex"></span><div data-explorer="bert"></div>'
                                '<div class="doc doc-object"></div>' + TAIL, "print/")
    assert full.startswith(HEAD)  # print/ keeps print.css for the screen too


def test_the_palette_switching_rule_goes_and_nothing_else_of_the_themes_stylesheet():
    import material  # the installed theme: its stylesheet is what the site ships
    [palette] = (Path(material.__file__).parent / "templates" / "assets" / "stylesheets").glob("palette.*.min.css")
    css = palette.read_text(encoding="utf-8")
    trimmed, n = site_assets.drop_switching_rule(css)
    assert n == 1 and "data-md-color-switching" in css and "data-md-color-switching" not in trimmed
    gone = "[data-md-color-switching] *,[data-md-color-switching] :after,[data-md-color-switching] :before" \
           "{transition-duration:0s!important}"
    assert css.replace(gone, "") == trimmed  # exactly that rule: no selector list left dangling
    assert trimmed.count("{") == trimmed.count("}") == css.count("{") - 1
    # a rule whose selector list holds anything else is left whole (and the build warns)
    for other in (".a{color:red}[data-md-color-switching] .b,.c{x:y}.d{z:w}",
                  ".a{color:red}.c,[data-md-color-switching] .b{x:y}"):
        assert site_assets.drop_switching_rule(other) == (other, 0)


# ---- the real site --------------------------------------------------------------------------------

def _pages(site: Path) -> list[tuple[str, str]]:
    return [(url, (site / url / "index.html").read_text(encoding="utf-8")) for _, url in nav_pages()] + \
        [("print/", (site / "print" / "index.html").read_text(encoding="utf-8"))]


@pytest.mark.build
def test_every_formula_of_the_site_is_katex_html_and_no_page_loads_a_math_script(built_site):
    total = 0
    for url, html in _pages(built_site):
        elements = re.findall(r'<(?:span|div) class="arithmatex">(.{0,40})', html, flags=re.S)
        assert all(e.startswith(('<span class="katex">', '<span class="katex-display">')) for e in elements), \
            (url, [e for e in elements if not e.startswith('<span class="katex')][:3])
        assert "katex.min.js" not in html and "auto-render" not in html and "katex-init" not in html, url
        assert "katex-error" not in html, url
        if elements:
            assert 'rel="preload" href="' in html and "KaTeX_Main-Regular.woff2" in html, url
        total += len(elements)
    assert total > 500
    assert not (built_site / "assets" / "katex" / "katex.min.js").exists()
    css = (built_site / "assets" / "katex" / "katex.min.css").read_text()
    assert "font-display:block" in css and "font-display:swap" not in css  # KaTeX's own: one layout
    [palette] = (built_site / "assets" / "stylesheets").glob("palette.*.min.css")
    assert "data-md-color-switching" not in palette.read_text(encoding="utf-8")


@pytest.mark.build
def test_notebook_pages_link_one_small_shared_stylesheet(built_site):
    labs = [(url, html) for url, html in _pages(built_site) if url.startswith("labs/")]
    assert len(labs) >= 3
    for url, html in labs:
        inline = sum(len(s) for s in re.findall(r"<style\b[^>]*>(.*?)</style>", html, flags=re.S))
        assert inline < 10_000, (url, inline)
        assert html.count('href="../../stylesheets/notebook.css"') == 1, url
        assert "mathjax" not in html.lower() and "cdnjs" not in html, url
    shared = (built_site / "stylesheets" / "notebook.css").read_text()
    assert 5_000 < len(shared) < 40_000
    for rule in (".jp-InputArea", ".jp-OutputArea-output", ".highlight-ipynb .k", "--jp-cell-editor-background"):
        assert rule in shared, rule
    print_page = (built_site / "print" / "index.html").read_text()
    assert 'href="../stylesheets/notebook.css"' in print_page


@pytest.mark.build
def test_search_still_indexes_formulas_as_tex(built_site):
    """The math is put into the pages after the search index is built: the index holds the
    TeX as the pages wrote it, not KaTeX's glyphs and MathML, each formula twice."""
    docs = json.loads((built_site / "search" / "search_index.json").read_text())["docs"]
    text = " ".join(d["text"] for d in docs)
    assert "\\(d_{\\text{head}}\\)" in text and "katex" not in text


def test_a_katex_process_that_dies_fails_the_build_with_its_exit_code_and_messages(tmp_path, monkeypatch):
    """The renderer is fed while pages are converted: if it ends early, handing it more formulas
    raises nothing there, and the build stops where it waits for the answers, naming the exit
    code and what the process printed, never with answers missing or paired with other formulas."""
    from mkdocs.exceptions import PluginError

    dying = tmp_path / "dying.js"
    dying.write_text('process.stderr.write("renderer gave up\\n"); process.exit(3);\n')
    monkeypatch.setattr(site_math, "RENDERER", dying)
    if shutil.which("node") is None:
        pytest.skip("no node")
    katex = site_math.Katex()
    katex._proc.wait(30)
    katex.ask([(f"x^{{{i}}}", False) for i in range(5000)])  # into a closed pipe
    with pytest.raises(PluginError, match=r"exit 3\):\s+renderer gave up"):
        katex.results()
