"""Numbered figures, tables and equations, references by key, and click-to-zoom.

- The grammar of labels and references, and the HTML rewriting of hooks/site_numbering.py
  on hand-written HTML, including math already rendered at build time (fast tier).
- A fixture site built with the real hooks: numbers in order and restarting per page,
  references that resolve to the right element and text, zoom links on figures only, a
  byte-identical rebuild; an unknown or ambiguous reference fails the build with the page,
  the line and the directive (build tier).
- The fixture site in Chromium: click or Enter opens the figure large, in the theme's
  variant and on the page's background, Esc closes and gives the focus back, a tap on a
  phone magnifies it, and it keeps working after instant navigation (browser tier).
- The real site: every page's numbers run 1, 2, 3, every reference reads the number of
  the thing it links to, on the pages and in print/ (build tier).
"""
from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from helpers import HOOKS, ROOT, SMALL_FIGURE, SMALL_TABLE, mkdocs_build, nav_pages, tree
from helpers import article as page_article

sys.path.insert(0, str(HOOKS))
import directives as D  # noqa: E402
import numbering as N  # noqa: E402  (the numbering itself: plain functions, no MkDocs)
from tools.screenshots import QuietServer, goto  # noqa: E402

build = pytest.mark.build
in_browser = pytest.mark.browser


# ---- the grammar ----------------------------------------------------------------------------------

def test_labels_and_references_parse():
    text = textwrap.dedent('''\
        See {{ ref fig:small }} and {{ ref eq:soft-max }}, not `{{ ref fig:code }}`.

        ![a](figures/pe_heatmap.svg?d_model=4 "cap"){#fig:small}

        {{ table cat_sat_mat_scores?causal=true caption="Scores \\(s_{ij}\\)" }}{#table:causal}

        {{ explorer pe_heatmap alt="x" caption="y" }}{#fig:live}

        \\[
        x = y
        \\]{#eq:soft-max}
        ''')
    found = D.parse(text, where="p.md")
    got = [(d.keyword, d.name, d.key, d.args, d.line) for d in found]
    assert got == [
        ("ref", "", "small", ("fig", "small"), 1),
        ("ref", "", "soft-max", ("eq", "soft-max"), 1),
        ("figure", "pe_heatmap", "small", (), 3),
        ("table", "cat_sat_mat_scores", "causal", (), 5),
        ("explorer", "pe_heatmap", "live", (), 7),
        ("eq", "", "soft-max", (), 11),
    ]
    table = found[3]
    assert table.options == {"caption": "Scores \\(s_{ij}\\)"}
    assert text[table.start:table.end].endswith("}}{#table:causal}")  # the label is consumed with it


@pytest.mark.parametrize("text, message", [
    pytest.param('![a](figures/x.svg "c") {#fig:k}', r"label not understood: '\{#fig:k\}'", id="space-before-label"),
    pytest.param("{{ table x }} {#table:k}", r"is not a label it takes \(write \{#table:KEY\}", id="table-space"),
    pytest.param("{{ table x }}{#fig:k}", r"'\{#fig:k\}' after '\{\{ table x \}\}' is not a label it takes", id="wrong-kind"),
    pytest.param("{{ gallery }}{#fig:k}", r"a gallery takes no label", id="gallery-label"),
    pytest.param("\\[x\\] {#eq:k}", r"label not understood", id="eq-space"),
    pytest.param("Some text {#eq:k}", r"label not understood", id="eq-not-after-math"),
    pytest.param("\\]{#eq: k}", r"label not understood", id="space-in-key"),
    pytest.param("\\]{#equation:k}", r"label not understood", id="long-kind"),
    pytest.param("{{ ref figure:x }}", r"'figure:x' is not a reference .*\{\{ ref fig:KEY \}\}", id="ref-kind"),
    pytest.param("{{ ref fig:x y }}", r"ref takes 1 arguments, got 2", id="ref-two"),
    pytest.param("{{ ref x }}", r"'x' is not a reference", id="ref-no-kind"),
    pytest.param("{{ rf fig:x }}", r"did you mean 'ref'", id="ref-typo"),
    pytest.param("{{ table x caption=a legend=b }}", r"table takes no option 'legend'", id="table-option"),
])
def test_bad_labels_and_references_are_refused_with_page_and_line(text, message):
    with pytest.raises(D.DirectiveError, match=r"^p\.md:1: .*" + message):
        D.parse(text, where="p.md")


def test_heading_ids_are_not_labels():
    assert D.parse("## Figures {#fig-overview}\n\n## Tables {#tables}\n", where="p.md") == []


# ---- the HTML rewriting, on hand-written HTML --------------------------------------------------------

def _ref(key: str, line: int) -> D.Directive:
    kind, _, name = key.partition(":")
    return D.Directive("ref", 0, 0, line, f"{{{{ ref {key} }}}}", args=(kind, name), key=name)


def _fig(name: str, img: str, caption: str = "") -> str:
    cap = f"\n<figcaption>{caption}</figcaption>" if caption else ""
    return (f'<figure class="mha-figure">\n  <img alt="{name}" loading="lazy" src="figures/{img}.svg#only-light" />\n'
            f'  <img alt="{name}" loading="lazy" src="figures/{img}-dark.svg#only-dark" />\n<br />{cap}\n</figure>\n')


KATEX = ('<div class="arithmatex"><span class="katex-display"><span class="katex"><span class="katex-mathml">'
         '<math><mi>x</mi></math></span><span class="katex-html" aria-hidden="true"><span class="base">x'
         '</span></span></span></span></div>')


def _page():
    """A page as Markdown and site_figures would leave it, and the plan on_page_markdown made."""
    html = (
        "<p>See R0, R1, R2 and R3.</p>\n"
        + _fig("first", "a", "The first.")
        + '<p><img alt="a logo" src="logo.png" /></p>\n'
        + _fig("second", "b")  # no caption
        + '<div class="mha-gallery-item">\n' + _fig("thumb", "g", "In a gallery.") + "</div>\n"
        + '<p><a href="x/"><img alt="linked" src="l.png" /></a></p>\n'
        + '<p class="mha-table-caption">Squares of <span class="arithmatex">\\(i\\)</span>.</p>\n'
        + "<table>\n<thead><tr><th>i</th></tr></thead>\n</table>\n"
        + '<div class="arithmatex">\\[\ny = x\n\\]</div>\n'
        + KATEX + "\n<!-- mha-eq:rendered -->\n"
        + '<div class="admonition"><div class="arithmatex">\\[z\\]</div>\n<p><!-- mha-eq:boxed --></p>\n</div>\n'
    )
    plan = N.Plan(items=[N.Item("fig", "a", False, 3, "![first](figures/a.svg)", "figure"),
                         N.Item("fig", "b_small", True, 5, "![second](figures/b.svg){#fig:b_small}", "figure"),
                         N.Item("table", "squares", False, 9, "{{ table squares }}", "table")],
                  refs=[_ref("fig:b_small", 1), _ref("table:squares", 1), _ref("eq:rendered", 2), _ref("fig:a", 2)],
                  eq_labels={"rendered": D.Directive("eq", 0, 0, 14, "{#eq:rendered}", key="rendered"),
                             "boxed": D.Directive("eq", 0, 0, 18, "{#eq:boxed}", key="boxed")})
    N._check_keys(plan, "p.md")
    for i in range(4):
        html = html.replace(f"R{i}", f"{N.REF_OPEN}{i}{N.REF_CLOSE}", 1)
    return html, plan


def test_numbers_ids_and_references_on_one_page():
    html, plan = _page()
    soup = BeautifulSoup(N.number(html, plan, "p.md"), "html.parser")
    figures = soup.select("figure.mha-figure")
    assert [f.get("id") for f in figures] == ["fig-a", "fig-b_small", None]  # the gallery's is not numbered
    assert [f.figcaption.get_text(" ", strip=True) for f in figures] == [
        "Figure 1. The first.", "Figure 2.", "In a gallery."]
    assert figures[0].figcaption.strong["class"] == ["mha-num"]
    table = soup.find("table")
    assert table["id"] == "table-squares" and table.caption.get_text(" ", strip=True) == "Table 1. Squares of \\(i\\) ."
    assert table.caption.find("span", class_="arithmatex") is not None  # the caption's math goes with it
    assert not soup.select("p.mha-table-caption")
    eqs = soup.select("div.mha-eq")
    assert [e.get("id") for e in eqs] == [None, "eq-rendered", "eq-boxed"]
    assert [e.select_one(".mha-eq-num").text for e in eqs] == ["(1)", "(2)", "(3)"]
    assert [e.select_one("div.arithmatex") is not None for e in eqs] == [True] * 3
    assert eqs[1].select_one(".katex-display") is not None  # build-time KaTeX HTML untouched, inside
    assert "mha-eq:" not in str(soup) and N.REF_OPEN not in str(soup)
    refs = soup.select("a.mha-ref")
    assert [(a["href"], a.text) for a in refs] == [
        ("#fig-b_small", "Figure 2"), ("#table-squares", "Table 1"), ("#eq-rendered", "Equation (2)"), ("#fig-a", "Figure 1")]


def test_zoom_wraps_the_images_of_figures_and_nothing_else():
    html, plan = _page()
    soup = BeautifulSoup(N.number(html, plan, "p.md"), "html.parser")
    links = soup.select("a.mha-zoom")
    assert len(links) == 3  # two numbered figures and the gallery's
    for link, name in zip(links, ["a", "b", "g"]):
        assert link.find_parent("figure")["class"] == ["mha-figure"]
        assert [i["src"] for i in link.find_all("img")] == [f"figures/{name}.svg#only-light",
                                                            f"figures/{name}-dark.svg#only-dark"]
        assert link["href"] == f"figures/{name}.svg"  # without JavaScript: the SVG itself
        assert link.find("figcaption") is None
    assert soup.find("img", alt="a logo").parent.name == "p"
    assert soup.find("img", alt="linked").parent["href"] == "x/"


def test_a_figure_already_in_a_link_is_not_wrapped_again():
    html = '<p><a href="page/">' + _fig("thumb", "t", "A thumbnail.").replace("\n", " ") + "</a></p>"
    plan = N.Plan(items=[N.Item("fig", "t", False, 1, "![t](figures/t.svg)", "figure")])
    out = N.number(html, plan, "p.md")
    assert "mha-zoom" not in out and "Figure 1." in out


def test_explorer_numbers_its_static_figure_and_its_widget():
    html = ('<div class="mha-explorer-static" data-static-for="pe">\n' + _fig("static", "s", "Static version.")
            + '</div>\n<div class="mha-explorer" data-explorer="pe"><script type="application/json" '
            'class="mha-explorer-data">{}</script><div class="mha-explorer-ui" hidden></div></div>\n')
    plan = N.Plan(items=[N.Item("fig", "live", True, 4, "{{ explorer pe }}{#fig:live}", "explorer")],
                  refs=[_ref("fig:live", 1)])
    N._check_keys(plan, "p.md")
    soup = BeautifulSoup(N.number(html.replace("</figure>", "</figure>\n<p>R0</p>".replace(
        "R0", f"{N.REF_OPEN}0{N.REF_CLOSE}"), 1), plan, "p.md"), "html.parser")
    anchor = soup.find(id="fig-live")
    assert anchor.name == "span" and anchor.find_next("div")["class"] == ["mha-explorer-static"]
    assert soup.figcaption.get_text(" ", strip=True) == "Figure 1. Static version."
    assert soup.select_one(".mha-explorer-ui > p.mha-explorer-num").strong.text == "Figure 1."
    assert soup.select_one("a.mha-ref").text == "Figure 1"


@pytest.mark.parametrize("refs, message", [
    pytest.param(["fig:nope"], r"p\.md:7: \{\{ ref fig:nope \}\}: this page has no figure with the key 'nope'; "
                               r"its fig keys: a, b_small", id="unknown-figure"),
    pytest.param(["table:nope"], r"p\.md:7: .*no table with the key 'nope'; its table keys: squares", id="unknown-table"),
    pytest.param(["eq:nope"], r"p\.md:7: .*no equation with the key 'nope'", id="unknown-equation"),
])
def test_an_unknown_reference_stops_the_build(refs, message):
    html, plan = _page()
    plan.refs.append(D.Directive("ref", 0, 0, 7, f"{{{{ ref {refs[0]} }}}}", args=tuple(refs[0].split(":")),
                                 key=refs[0].split(":")[1]))
    html += f"<p>{N.REF_OPEN}4{N.REF_CLOSE}</p>"
    with pytest.raises(N.NumberingError, match=message):
        N.number(html, plan, "p.md")


def test_a_script_shown_twice_needs_labels_to_be_referred_to():
    html = _fig("one", "x", "One.") + _fig("two", "x2", "Two.") + f"<p>{N.REF_OPEN}0{N.REF_CLOSE}</p>"
    plan = N.Plan(items=[N.Item("fig", "x", False, 3, "![one](figures/x.svg)", "figure"),
                         N.Item("fig", "x", False, 5, "![two](figures/x.svg?n=2)", "figure")],
                  refs=[_ref("fig:x", 9)])
    N._check_keys(plan, "p.md")
    assert [i.id for i in plan.items] == ["fig-x", "fig-x-2"]  # ids stay unique
    with pytest.raises(N.NumberingError, match=r"p\.md:9: \{\{ ref fig:x \}\}: fig:x names 2 figures \(lines 3, 5\); "
                                          r"label the one you mean: \{#fig:KEY\}"):
        N.number(html, plan, "p.md")


def test_two_labels_with_one_key_stop_the_build():
    plan = N.Plan(items=[N.Item("fig", "x", False, 3, "![one](figures/x.svg)", "figure"),
                         N.Item("fig", "x", True, 5, "![two](figures/y.svg){#fig:x}", "figure")])
    with pytest.raises(N.NumberingError, match=r"p\.md:5: .*the key fig:x is also the script name of line 3"):
        N._check_keys(plan, "p.md")


def test_counts_that_do_not_match_stop_the_build():
    plan = N.Plan(items=[N.Item("fig", "x", False, 3, "![one](figures/x.svg)", "figure")])
    with pytest.raises(N.NumberingError, match=r"p\.md: 1 figure and explorer directives but 0 figures"):
        N.number("<p>no figure</p>", plan, "p.md")


# ---- a fixture site with the real hooks ----------------------------------------------------------------

PAGE_ONE = textwrap.dedent('''\
    # One

    See {{ ref fig:small_figure }}, {{ ref fig:five }}, {{ ref table:small_table }},
    {{ ref table:three }} and {{ ref eq:line }}.

    ![A line](figures/small_figure.svg "A small line.")

    ![A longer line](figures/small_figure.svg?n=5 "Five points."){#fig:five}

    Some text right before the table.
    {{ table small_table }}

    {{ table small_table?rows=3 caption="Three rows, \\\\(i^2\\\\) in the second column." }}{#table:three}

    \\[
    y = x
    \\]{#eq:line}

    !!! note "In a box"

        \\[
        y = 2x
        \\]{#eq:boxed}

        As {{ ref eq:boxed }} says. ![a logo, not a figure](logo.svg)

    [Page two](two.md)
    ''')
PAGE_TWO = textwrap.dedent('''\
    # Two

    Numbers start again: {{ ref fig:small_figure }}, {{ ref eq:only }}.

    ![A line again](figures/small_figure.svg?n=4 "Four points.")

    \\[
    z = 1
    \\]{#eq:only}
    ''')
LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#888"/></svg>\n'


def _site(base: Path, pages: dict[str, str], port: int = 8000) -> Path:
    """A Material site with the numbering and figures hooks, the zoom script and stylesheet.
    Material's instant navigation works only on the origin of ``site_url``: serve it on ``port``."""
    proj = base / "proj"
    (proj / "docs" / "javascripts").mkdir(parents=True)
    (proj / "docs" / "stylesheets").mkdir()
    (proj / "figures").mkdir()
    (proj / "figures" / "small_figure.py").write_text(SMALL_FIGURE)
    (proj / "figures" / "small_table.py").write_text(SMALL_TABLE)
    for rel, text in pages.items():
        (proj / "docs" / rel).write_text(text)
    (proj / "docs" / "logo.svg").write_text(LOGO)
    (proj / "docs" / "javascripts" / "zoom.js").write_bytes((ROOT / "docs/javascripts/zoom.js").read_bytes())
    (proj / "docs" / "stylesheets" / "extra.css").write_bytes((ROOT / "docs/stylesheets/extra.css").read_bytes())
    (proj / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: mini
        site_url: http://127.0.0.1:{port}/
        theme:
          name: material
          font: false
          features: [navigation.instant]
          palette:
            - media: "(prefers-color-scheme: light)"
              scheme: default
            - media: "(prefers-color-scheme: dark)"
              scheme: slate
        hooks: ["{HOOKS / 'site_numbering.py'}", "{HOOKS / 'site_figures.py'}"]
        markdown_extensions: [admonition, attr_list, md_in_html, tables, {{pymdownx.arithmatex: {{generic: true}}}}]
        extra_javascript: [javascripts/zoom.js]
        extra_css: [stylesheets/extra.css]
        """))
    return proj


@pytest.fixture(scope="module")
def fixture_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory, fixture_port) -> Path:
    base = tmp_path_factory.mktemp("numbering")
    proj = _site(base, {"index.md": PAGE_ONE, "two.md": PAGE_TWO}, fixture_port)
    result = mkdocs_build(proj / "mkdocs.yml", base / "site", base / "cache")
    assert result.returncode == 0, result.stderr[-3000:]
    return base / "site"


def _article(site: Path, rel: str):
    return page_article((site / rel).read_text())


@build
def test_fixture_site_numbers_in_order_and_references_resolve(fixture_site):
    one = _article(fixture_site, "index.html")
    assert [f.figcaption.get_text(" ", strip=True) for f in one.select("figure.mha-figure")] == [
        "Figure 1. A small line.", "Figure 2. Five points."]
    assert [t.caption.get_text(" ", strip=True) for t in one.find_all("table")] == [
        "Table 1. A small table, for the machine's tests.", "Table 2. Three rows, \\(i^2\\) in the second column."]
    assert "Some text right before the table." in one.find("p", string=re.compile("Some text")).text  # not a caption
    assert [e.select_one(".mha-eq-num").text for e in one.select(".mha-eq")] == ["(1)", "(2)"]
    refs = [(a["href"], a.text) for a in one.select("a.mha-ref")]
    assert refs == [("#fig-small_figure", "Figure 1"), ("#fig-five", "Figure 2"), ("#table-small_table", "Table 1"),
                    ("#table-three", "Table 2"), ("#eq-line", "Equation (1)"), ("#eq-boxed", "Equation (2)")]
    for href, text in refs:  # each link lands on the element that carries its number
        target = one.find(id=href[1:])
        label = target.select_one(".mha-num, .mha-eq-num").text
        assert re.sub(r"[^\d]", "", label) == re.sub(r"[^\d]", "", text)
    two = _article(fixture_site, "two/index.html")
    assert two.select_one("figure.mha-figure figcaption").get_text(" ", strip=True) == "Figure 1. Four points."
    assert [(a["href"], a.text) for a in two.select("a.mha-ref")] == [("#fig-small_figure", "Figure 1"),
                                                                      ("#eq-only", "Equation (1)")]


@build
def test_fixture_site_zooms_figures_only(fixture_site):
    one = _article(fixture_site, "index.html")
    figure_images = one.select("figure.mha-figure img")
    assert figure_images and all(i.parent.name == "a" and "mha-zoom" in i.parent["class"] for i in figure_images)
    assert len(one.select("a.mha-zoom")) == len(one.select("figure.mha-figure"))
    logo = one.find("img", alt="a logo, not a figure")
    assert logo.find_parent("a") is None
    html = (fixture_site / "index.html").read_text()
    head = html[:html.index("</head>")]
    assert "zoom.js" not in head and "glightbox" not in html  # nothing render-blocking added
    assert html.rindex('src="javascripts/zoom.js"') > html.index("</article>")


@build
def test_fixture_site_rebuilds_byte_identical(fixture_site, tmp_path):
    proj = fixture_site.parent / "proj"
    again = tmp_path / "again"
    result = mkdocs_build(proj / "mkdocs.yml", again, fixture_site.parent / "cache")
    assert result.returncode == 0, result.stderr[-3000:]
    assert tree(again) == tree(fixture_site)


@build
@pytest.mark.parametrize("line, message", [
    pytest.param("See {{ ref fig:missing }}.", r"index\.md:3: \{\{ ref fig:missing \}\}: this page has no figure "
                                               r"with the key 'missing'; its fig keys: small_figure", id="unknown"),
    pytest.param("## See {{ ref fig:small_figure }}", r"index\.md:3: .*cannot stand in a heading", id="in-heading"),
])
def test_a_bad_reference_fails_the_build(tmp_path, line, message):
    """End to end, once per kind of failure the hook raises: an unknown key (the other messages
    of number() are checked in-process above) and a reference in a heading."""
    page = f"# Bad\n\n{line}\n\n![A line](figures/small_figure.svg \"A line.\")\n"
    proj = _site(tmp_path, {"index.md": page})
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode != 0
    assert re.search(message, result.stderr), result.stderr[-2000:]
    assert "Figure ??" not in result.stderr


@build
def test_a_directive_error_names_its_line_in_the_page_s_file(tmp_path):
    """Pass sixty-three: numbering adds a table's caption and an equation's marker as lines of
    their own, and the figures hook named the lines of that text (188 for a directive on 164).
    The error names the line of the file the author edits."""
    page = ("# Lines\n\n{{ table small_table }}\n\n\\[ x = 1 \\]{#eq:one}\n\n"
            "See {{ ref eq:one }}: {{ value small_table rows.9.i }}.\n")
    proj = _site(tmp_path, {"index.md": page})
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode != 0
    assert re.search(r"index\.md:7: \{\{ value small_table rows\.9\.i \}\}", result.stderr), result.stderr[-2000:]


def test_directives_are_placed_on_the_lines_of_the_source():
    import directives
    import numbering

    source = "# T\n\n{{ table t }}\n\n\\[ x \\]{#eq:a}\n\n{{ value t a }} and {{ value t a }}\n"
    text, _ = numbering.plan_page(source, directives.parse(source, where="p.md"), "p.md", {"t": "T"})
    found = [d for d in directives.parse(text, where="p.md") if d.keyword == "value"]
    assert [d.line for d in found] != [7, 7]  # the caption and the marker moved them
    assert [d.line for d in directives.on_source_lines(found, text, source)] == [7, 7]
    assert [d.line for d in directives.on_source_lines(found, text, None)] == [d.line for d in found]
    # pass sixty-four: a value in a table's caption is copied into the caption paragraph; that copy
    # stands on its table's line, and a later directive with the same text keeps its own
    source = ('# T\n\n{{ value t a }} here.\n\n{{ table t caption="Cap {{ value t a }}" }}\n\n\\[ x \\]{#eq:a}\n\n'
              '{{ value t a }}\n')
    text, _ = numbering.plan_page(source, directives.parse(source, where="p.md"), "p.md", {"t": "T"})
    placed = directives.on_source_lines(directives.parse(text, where="p.md"), text, source)
    assert [(d.keyword, d.line) for d in placed] == [("value", 3), ("value", 5), ("table", 5), ("value", 9)]


# ---- the fixture site in Chromium ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fixture_url(fixture_site, fixture_port):
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = QuietServer(("127.0.0.1", fixture_port),
                         functools.partial(Quiet, directory=str(fixture_site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{fixture_port}/"
    server.shutdown()


def _open_page(browser, url: str, scheme: str = "light", **context):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme, **context)
    page = ctx.new_page()
    seen = {"requests": [], "errors": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
    goto(page, url)
    return ctx, page, seen


ZOOM_STATE = """(() => {
    const d = document.querySelector('dialog.mha-zoom-dialog');
    const img = d && d.querySelector('img');
    return d && {open: d.open, src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0,
                 width: img.getBoundingClientRect().width, bg: getComputedStyle(d).backgroundColor,
                 page_bg: getComputedStyle(document.body).backgroundColor,
                 label: d.getAttribute('aria-label'), caption: d.querySelector('.mha-zoom-caption').textContent,
                 focus: document.activeElement.className};
})()"""


@build
@in_browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_figure_opens_large_in_its_theme_and_closes(browser, fixture_url, scheme):  # noqa: F811
    ctx, page, seen = _open_page(browser, fixture_url, scheme)
    link = page.locator("a.mha-zoom").first
    assert link.get_attribute("role") == "button" and link.get_attribute("aria-haspopup") == "dialog"
    small = page.evaluate("document.querySelector('a.mha-zoom img:not([style*=none])').getBoundingClientRect().width")
    link.click()
    page.wait_for_function("document.querySelector('dialog.mha-zoom-dialog img').complete", polling=100)
    state = page.evaluate(ZOOM_STATE)
    variant = "small_figure-dark.svg" if scheme == "dark" else "small_figure.svg"
    assert state["open"] and state["loaded"] and state["src"].endswith(variant), state
    assert state["bg"] == state["page_bg"], state  # the dark SVG's light text on the dark page colour
    assert state["width"] > 1.5 * small, (state, small)
    assert state["label"] == "Figure 1, enlarged" and state["caption"].startswith("Figure 1.")
    assert state["focus"].startswith("mha-zoom-close")
    page.keyboard.press("Escape")
    state = page.evaluate(ZOOM_STATE)
    assert not state["open"] and "mha-zoom" in state["focus"] and "mha-zoom-close" not in state["focus"]
    # the keyboard: Enter on the focused figure opens it, and the page did not navigate to the SVG
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelector('dialog.mha-zoom-dialog').open", polling=100)
    assert page.url == fixture_url
    page.locator(".mha-zoom-close").click()
    assert not page.evaluate(ZOOM_STATE)["open"]
    assert not [r for r in seen["requests"] if not r.startswith(fixture_url)], seen["requests"]
    assert not seen["errors"], seen["errors"]
    ctx.close()


@build
@in_browser
def test_a_tap_magnifies_on_a_phone(browser, fixture_url):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 390, "height": 800}, is_mobile=True, has_touch=True)
    page = ctx.new_page()
    goto(page, fixture_url)
    page.locator("a.mha-zoom").first.tap()
    page.wait_for_function("document.querySelector('dialog.mha-zoom-dialog img').complete", polling=100)
    assert "Tap" in page.text_content(".mha-zoom-hint")
    fitted = page.evaluate(ZOOM_STATE)["width"]
    page.locator("dialog.mha-zoom-dialog img").tap()
    state = page.evaluate(ZOOM_STATE)
    assert state["width"] >= 2 * fitted - 2 and state["width"] > 390, (state, fitted)
    scroller = page.evaluate("(() => { const b = document.querySelector('.mha-zoom-body'); "
                             "return {scroll: b.scrollWidth > b.clientWidth, touch: getComputedStyle(b).touchAction}; })()")
    assert scroller["scroll"] and scroller["touch"] in ("manipulation", "pan-x pan-y pinch-zoom"), scroller
    ctx.close()


@build
@in_browser
def test_zoom_works_after_instant_navigation(browser, fixture_url):  # noqa: F811
    ctx, page, seen = _open_page(browser, fixture_url)
    page.evaluate("window.mhaMarker = 1")  # gone if the next page were a full load
    page.click("text=Page two")
    page.wait_for_function("location.pathname.endsWith('/two/')", polling=100)
    page.wait_for_selector("a.mha-zoom[role=button]")
    assert page.evaluate("window.mhaMarker") == 1, "instant navigation is off: the test proves nothing"
    page.locator("a.mha-zoom").first.click()
    page.wait_for_function("document.querySelector('dialog.mha-zoom-dialog img').complete", polling=100)
    state = page.evaluate(ZOOM_STATE)
    assert state["open"] and "small_figure--n-4" in state["src"] and state["caption"].startswith("Figure 1.")
    assert not seen["errors"], seen["errors"]
    ctx.close()


# ---- the real site ----------------------------------------------------------------------------------------

def _label_number(target) -> str:
    if target.name == "figure":
        return target.figcaption.select_one(".mha-num").text
    if target.name == "table":
        return target.caption.select_one(".mha-num").text
    if "mha-eq" in (target.get("class") or []):
        return target.select_one(".mha-eq-num").text
    return target.find_next(class_="mha-num").text  # an explorer's anchor: its static figure follows


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


@build
def test_every_page_numbers_in_order_and_every_reference_reads_its_target(built_site):
    pages_with_refs = 0
    for src, url in nav_pages():
        article = page_article((built_site / url / "index.html").read_text())
        figures = [f for f in article.select("figure.mha-figure") if not f.find_parent(class_="mha-gallery-item")]
        numbers = [_digits(f.figcaption.select_one(".mha-num").text) for f in figures]
        assert numbers == [str(i) for i in range(1, len(figures) + 1)], (url, numbers)
        tables = [t.caption.select_one(".mha-num").text for t in article.find_all("table") if t.caption
                  and t.caption.select_one(".mha-num")]
        assert tables == [f"Table {i}." for i in range(1, len(tables) + 1)], (url, tables)
        eqs = [e.select_one(".mha-eq-num").text for e in article.select(".mha-eq")]
        assert eqs == [f"({i})" for i in range(1, len(eqs) + 1)], (url, eqs)
        assert len(eqs) == len(article.select("div.arithmatex")), url
        refs = article.select("a.mha-ref")
        pages_with_refs += bool(refs)
        by_id = {}
        for element in article.find_all(id=True) if refs else ():
            by_id.setdefault(element["id"], element)  # the first, as find() would return
        for a in refs:
            target = by_id.get(a["href"][1:])
            assert target is not None, (url, a)
            assert _digits(a.text) == _digits(_label_number(target)), (url, a, _label_number(target))
        for img in article.select("figure.mha-figure img"):
            assert img.find_parent("a")["class"] == ["mha-zoom"], (url, img["src"])
    assert pages_with_refs >= 12
    for html in built_site.rglob("*.html"):
        text = html.read_text()
        assert not re.search(r"\{\{\s*ref\b|\{#(fig|table|eq):|mha-eq:", text), html
        assert N.REF_OPEN not in text and N.REF_CLOSE not in text, html


@build
def test_references_in_print_point_into_their_own_chapter(built_site):
    soup = BeautifulSoup((built_site / "print" / "index.html").read_text(), "html.parser")
    refs = soup.select("a.mha-ref")
    assert len(refs) >= 40
    by_id = {}  # one pass over the page (a find() per reference walked all 2.8 MB of it each time)
    for element in soup.find_all(id=True):
        by_id.setdefault(element["id"], element)  # the first, as find() would return
    for a in refs:
        target = by_id.get(a["href"][1:])
        assert target is not None, a
        assert a.find_parent("section", class_="mha-print-page") is target.find_parent("section", class_="mha-print-page")
        assert _digits(a.text) == _digits(_label_number(target)), (a, _label_number(target))


@pytest.mark.parametrize("kind", ["figure", "table"])
def test_a_figure_or_table_in_a_footnote_stops_the_build(kind):
    """Footnotes move to the end of the page: a figure in one was numbered as the next figure of
    the text ("As Figure 2 shows, the flat line" linked to "Figure 2. Steep: scale 3."). The
    numbers pair the HTML's order with the Markdown's, so one in a footnote is refused."""
    if kind == "figure":
        body, note = _fig("Flat.", "flat", "Flat."), _fig("Steep.", "steep", "Steep.")
        plan = N.Plan(items=[N.Item("fig", "steep", False, 3, "![steep](figures/steep.svg)", "figure"),
                             N.Item("fig", "flat", False, 5, "![flat](figures/flat.svg)", "figure")])
    else:
        cap = '<p class="mha-table-caption">{}</p>\n<table>\n<tr><td>1</td></tr>\n</table>\n'
        body, note = cap.format("Two rows."), cap.format("Five rows.")
        plan = N.Plan(items=[N.Item("table", "five", False, 3, "{{ table five }}", "table"),
                             N.Item("table", "two", False, 5, "{{ table two }}", "table")])
    html = body + f'<div class="footnote">\n<hr />\n<ol>\n<li id="fn:1">{note}</li>\n</ol>\n</div>\n'
    N._check_keys(plan, "p.md")
    with pytest.raises(N.NumberingError, match=rf"p\.md: a {kind} inside a footnote: footnotes move to the end"):
        N.number(html, plan, "p.md")
