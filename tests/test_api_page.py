"""The API reference documents every public name of mhalib (the built site, not the Markdown).

It is split into pages by part of the course (docs/api/); a name may be on any of them, once."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import mhalib
from helpers import nav_pages

# `examples` is a submodule with a section of its own on the page.
PUBLIC = [name for name in mhalib.__all__ if name != "examples"]


class _DocObjects(HTMLParser):
    """Maps each element id to the classes of the mkdocstrings ``div.doc-object`` around it."""

    def __init__(self):
        super().__init__()
        self.divs: list[str] = []  # classes of the open <div> elements, innermost last
        self.ids: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div":
            self.divs.append(attrs.get("class") or "")
        if attrs.get("id"):
            owner = next((c for c in reversed(self.divs) if "doc-object" in c.split()), "")
            self.ids[attrs["id"]] = owner

    def handle_endtag(self, tag):
        if tag == "div" and self.divs:
            self.divs.pop()


def documented_objects(page: Path) -> dict[str, str]:
    parser = _DocObjects()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.ids


def _anchors(name: str) -> list[str]:
    """Where the object may be documented: under ``mhalib.NAME``, or under a module of the
    package that holds it (a function's defining module; a constant such as ``DEFAULT_BASE``
    has no ``__module__``, so every submodule holding the same object counts).

    ``mhalib.softmax`` is both a function and the submodule that defines it; the docs
    generator keeps the submodule under that path, so the page documents the function as
    ``mhalib.softmax.softmax``.
    """
    import sys

    obj = getattr(mhalib, name)
    anchors = [f"mhalib.{name}"]
    if callable(obj):
        anchors.append(f"{obj.__module__}.{name}")
    else:
        anchors += [f"{m}.{name}" for m, mod in sorted(sys.modules.items())
                    if m.startswith("mhalib.") and getattr(mod, name, None) is obj]
    return anchors


# the parts of the reference, as the nav lists them (api/index.md is the overview)
API_PAGES = tuple(url.removeprefix("api/").strip("/") for src, url in nav_pages()
                  if src.startswith("api/") and src != "api/index.md")


@pytest.fixture(scope="module")
def api_pages(built_site: Path) -> dict[str, dict[str, str]]:
    """page name -> (element id -> classes of its doc-object) for the overview and each part."""
    pages = {"": documented_objects(built_site / "api" / "index.html")}
    for name in API_PAGES:
        pages[name] = documented_objects(built_site / "api" / name / "index.html")
    return pages


@pytest.fixture(scope="module")
def api_objects(api_pages) -> dict[str, str]:
    return {k: v for ids in api_pages.values() for k, v in ids.items()}


@pytest.mark.build
@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_is_documented_on_the_api_page(api_objects, name):
    import inspect

    obj = getattr(mhalib, name)
    kind = "doc-class" if inspect.isclass(obj) else "doc-function" if callable(obj) else "doc-attribute"
    found = {a: api_objects[a] for a in _anchors(name) if a in api_objects}
    assert any(kind in classes.split() for classes in found.values()), (
        f"mhalib.{name} is not documented as a {kind[4:]} on the API pages; anchors found: {found or 'none'}"
    )


@pytest.mark.build
def test_every_module_is_on_one_api_page_and_the_overview_links_them(api_pages, built_site):
    """Each module with a public name has its section on exactly one part; the overview
    documents none of them again (a second copy would repeat its element ids) and links
    every part."""
    modules = {getattr(mhalib, n).__module__ for n in PUBLIC if callable(getattr(mhalib, n))} | {"mhalib.examples"}
    for module in sorted(modules):
        on = [page for page, ids in api_pages.items() if module in ids and "doc-module" in ids[module].split()]
        assert len(on) == 1 and on != [""], f"{module} is documented on {on or 'no page'}"
    overview = (built_site / "api" / "index.html").read_text(encoding="utf-8")
    for name in API_PAGES:
        assert f'href="{name}/"' in overview, name


@pytest.mark.build
def test_no_reference_role_is_shown_raw(api_pages, built_site):
    """Docstrings are rendered as Markdown, which has no ``:func:`name``` roles: written that
    way, a reader would see the role's name printed before the function's."""
    for page in api_pages:
        html = (built_site / "api" / page / "index.html").read_text(encoding="utf-8")
        raw = re.findall(r":(?:func|class|meth|mod|attr):", re.sub(r"<[^>]+>", "", html))
        assert not raw, f"api/{page}: {len(raw)} raw roles"


@pytest.mark.build
def test_each_returns_section_is_one_row_whose_type_is_a_type(api_pages, built_site):
    """A Returns section is one description, however many lines it wraps over, and its type
    column holds a type (``np.ndarray``, ``tuple[...]``), not the first words of a sentence
    that happened to contain a colon."""
    import ast

    from bs4 import BeautifulSoup

    checked = 0
    for page in api_pages:
        soup = BeautifulSoup((built_site / "api" / page / "index.html").read_text(encoding="utf-8"), "html.parser")
        for table in soup.select("table"):
            if [th.get_text(strip=True) for th in table.select("thead th")] != ["Type", "Description"]:
                continue
            rows = table.select("tbody tr")
            assert len(rows) == 1, f"api/{page}: a Returns table of {len(rows)} rows: {table.get_text(' ', strip=True)[:200]}"
            kind = rows[0].select("td")[0].get_text(" ", strip=True)
            if kind:
                ast.parse(kind, mode="eval")  # a SyntaxError names the cell
            checked += 1
    assert checked >= 7


@pytest.mark.build
def test_headings_on_the_api_pages_never_skip_a_level(api_pages, built_site):
    """A heading written inside a docstring is shifted below its object's heading; one that
    lands two levels down (an h4 straight under a module's h2) breaks the outline that
    screen readers navigate by (axe's heading-order)."""
    for page in api_pages:
        html = (built_site / "api" / page / "index.html").read_text(encoding="utf-8")
        article = html[html.index("<article"):html.index("</article>")]
        levels = [int(n) for n in re.findall(r"<h([1-6])\b", article)]
        jumps = [(a, b) for a, b in zip(levels, levels[1:]) if b > a + 1]
        assert levels and not jumps, f"api/{page}: heading levels jump {jumps}"
