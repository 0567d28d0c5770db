"""The API page documents every public name of mhalib (the built site, not the Markdown)."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

import mhalib

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
    """Where the object may be documented: under ``mhalib.NAME``, or under its defining module.

    ``mhalib.softmax`` is both a function and the submodule that defines it; the docs
    generator keeps the submodule under that path, so the page documents the function as
    ``mhalib.softmax.softmax``.
    """
    obj = getattr(mhalib, name)
    anchors = [f"mhalib.{name}"]
    if callable(obj):
        anchors.append(f"{obj.__module__}.{name}")
    return anchors


@pytest.fixture(scope="module")
def api_objects(built_site: Path) -> dict[str, str]:
    return documented_objects(built_site / "api" / "index.html")


@pytest.mark.build
@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_is_documented_on_the_api_page(api_objects, name):
    import inspect

    obj = getattr(mhalib, name)
    kind = "doc-class" if inspect.isclass(obj) else "doc-function" if callable(obj) else "doc-attribute"
    found = {a: api_objects[a] for a in _anchors(name) if a in api_objects}
    assert any(kind in classes.split() for classes in found.values()), (
        f"mhalib.{name} is not documented as a {kind[4:]} on the API page; anchors found: {found or 'none'}"
    )
