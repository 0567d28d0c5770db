"""The notation page and the hook that links each page's first use of a symbol to it."""
from __future__ import annotations

import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "hooks"))
import site_notation  # noqa: E402

URL = "../notation/"


def span(tex: str) -> str:
    return f'<span class="arithmatex">\\({tex}\\)</span>'


def links(html: str) -> list[tuple[str, str]]:
    """(anchor, tex) of every notation link, in order."""
    return re.findall(r'href="\.\./notation/#([^"]+)"[^>]*><span class="arithmatex">\\\((.*?)\\\)</span></a>', html)


def test_first_use_of_each_symbol_is_linked_once():
    html = ("<p>" + span(r"d_{\text{head}} = 2") + " then " + span(r"\sqrt{d_{\text{head}}}")
            + " and " + span("H") + " heads, " + span("H") + " again.</p>")
    out = site_notation.link_first_uses(html, URL)
    assert links(out) == [("d_head", r"d_{\text{head}} = 2"), ("H", "H")]
    # everything else is untouched
    assert out.replace('<a class="notation-link" href="../notation/#d_head" title="Notation: what this symbol means">', "") \
        .replace('<a class="notation-link" href="../notation/#H" title="Notation: what this symbol means">', "") \
        .replace("</a>", "") == html


def test_formulas_in_headings_links_and_summaries_are_skipped():
    html = ("<h2>Width " + span(r"d_{\text{model}}") + "</h2>"
            + '<p><a href="x">' + span(r"d_{\text{model}}") + "</a></p>"
            + "<details><summary>" + span(r"d_{\text{model}}") + "</summary></details>"
            + "<p>" + span(r"d_{\text{model}} = 4") + "</p>")
    assert links(site_notation.link_first_uses(html, URL)) == [("d_model", r"d_{\text{model}} = 4")]


def test_one_formula_holds_one_link():
    html = "<p>" + span(r"d_{\text{head}} = d_{\text{model}} / H") + " " + span(r"d_{\text{model}}") + "</p>"
    out = site_notation.link_first_uses(html, URL)
    # the first formula is claimed by the first symbol in SYMBOLS it contains (d_model), the
    # second formula cannot be claimed again by d_model, and d_head has no other formula
    assert links(out) == [("d_model", r"d_{\text{head}} = d_{\text{model}} / H")]
    assert out.count("<a ") == 1


def test_notation_page_must_define_every_anchor():
    page = SimpleNamespace(file=SimpleNamespace(src_uri="notation.md"))
    full = "".join(f'<span id="{a}"></span>' for a, _ in site_notation.SYMBOLS)
    assert site_notation.on_post_page(full, page=page, config={}) == full
    with pytest.raises(PluginError, match=r"tau"):
        site_notation.on_post_page(full.replace('id="tau"', 'id="t"'), page=page, config={})


def test_notation_page_lists_every_linked_symbol():
    text = (ROOT / "docs" / "notation.md").read_text(encoding="utf-8")
    ids = set(re.findall(r'<span id="([^"]+)"></span>', text))
    assert {a for a, _ in site_notation.SYMBOLS} <= ids


#: Lecture pages that use none of the linked symbols in their prose, each with the reason.
#: Empty: every lecture page talks about widths, heads, projections, temperature or
#: positions in the notation page's symbols (tests/test_notation_consistency.py holds the
#: symbols themselves), so each one links its first use.
NO_LINKED_SYMBOL: dict[str, str] = {}


@pytest.mark.build
def test_built_pages_link_their_symbols_to_rows_that_exist(built_site):
    from test_pages import LECTURE

    anchors = set(re.findall(r'id="([^"]+)"', (built_site / "notation" / "index.html").read_text()))
    unlinked = []
    for page in LECTURE:
        html = (built_site / page / "index.html").read_text()
        targets = re.findall(r'class="notation-link" href="\.\./notation/#([^"]+)"', html)
        assert len(targets) == len(set(targets)), f"{page}: a symbol is linked more than once"
        assert set(targets) <= anchors, f"{page}: links to missing notation rows {set(targets) - anchors}"
        if not targets:
            unlinked.append(page)
    assert set(unlinked) <= set(NO_LINKED_SYMBOL), (
        f"lecture pages with no link to the notation page: {sorted(set(unlinked) - set(NO_LINKED_SYMBOL))}; "
        "write their widths, heads and temperature as \\(d_{\\text{model}}\\), \\(d_{\\text{head}}\\), \\(H\\), "
        "\\(\\tau\\) (docs/notation.md), or list the page in NO_LINKED_SYMBOL with the reason")
