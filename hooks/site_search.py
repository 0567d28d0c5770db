"""MkDocs hook: the search index finds the lesson first.

Material's search indexes each page's HTML section by section. Two things pushed the
lessons down: notebook pages index their chrome ("In [4]:", "Copied!") and every line of
code twice, and every page weighs the same. This hook

- marks notebook prompts, copy buttons and the copy buttons' hidden text with ``data-search-exclude`` (Material skips such
  elements when it builds the index);
- gives each page a search boost by its kind (``BOOST``): lecture pages above the pitfalls page, that above labs, labs
  above the reference pages (galleries, errata, API), unless the page's front matter sets
  ``search: boost:`` itself.

- shows a value inside a formula as the number it is, not as the ``\\htmlData`` wrapper that
  carries its source (:func:`provenance.plain_tex`): the index keeps each formula's TeX.

``tests/test_browser.py`` types queries into the real search box and checks the top hit.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from mkdocs.plugins import event_priority

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provenance  # noqa: E402

# page kind -> Material search boost (1 is Material's default)
BOOST = {"lecture": 4.0, "practice": 1.5, "lab": 0.5, "reference": 0.25}
# pages about pitfalls name every concept they warn about; the concept's own page comes first
PRACTICE_PAGES = ("numerics.md",)
REFERENCE_PAGES = ("gallery", "errata.md", "api/", "references.md", "notation.md")

# notebook chrome: the input/output prompts and the copy button's container
# and the hidden plain-text copy of each cell's code that the copy button reads
CHROME = re.compile(r'<(div|span) class="(jp-InputPrompt[^"]*|jp-OutputPrompt[^"]*|zeroclipboard-container'
                    r'|clipboard-copy-txt)"')


def page_kind(src_uri: str) -> str:
    if src_uri.startswith("labs/"):
        return "lab"
    if src_uri in PRACTICE_PAGES:
        return "practice"
    if src_uri.startswith(REFERENCE_PAGES) or src_uri == "index.md" or src_uri == "quiz.md":
        return "reference"
    return "lecture"


def exclude_chrome(html: str) -> str:
    """Add ``data-search-exclude`` to every notebook prompt and copy-button container."""
    return CHROME.sub(lambda m: f'<{m.group(1)} data-search-exclude="true" class="{m.group(2)}"', html)


def on_page_content(html, *, page, config, files):
    search = page.meta.setdefault("search", {}) if isinstance(page.meta.get("search", {}), dict) else None
    if search is not None and "boost" not in search:
        search["boost"] = BOOST[page_kind(page.file.src_uri)]
    return exclude_chrome(html) if page.file.src_uri.startswith("labs/") else html


@event_priority(-100)  # after the search plugin has written its index
def on_post_build(*, config):
    index = Path(config["site_dir"]) / "search" / "search_index.json"
    if not index.is_file() or "htmlData" not in (text := index.read_text(encoding="utf-8")):
        return
    data = json.loads(text)
    for doc in data["docs"]:
        for field in ("title", "text"):
            if isinstance(doc.get(field), str):
                doc[field] = provenance.plain_tex(doc[field])
    index.write_text(json.dumps(data, separators=(",", ":"), default=str), encoding="utf-8")  # as Material writes it
