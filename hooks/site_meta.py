"""MkDocs hook: what a page says about itself to search engines and link previews.

Every page gets its own ``<meta name="description">``: the front matter's ``description``
if the page sets one, else the page's first paragraph of prose (tags and math delimiters
stripped, cut at a word boundary under ``MAX_CHARS``, escaped for an HTML attribute). Material writes ``page.meta
["description"]`` into the page head. Pages with no prose paragraph keep the site's
description.
"""
from __future__ import annotations

import html as html_lib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provenance  # noqa: E402

MAX_CHARS = 155

PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)


def first_paragraph_text(html: str) -> str | None:
    """The text of the first ``<p>`` that is not inside an admonition and reads as prose."""
    body = re.sub(r'<div class="admonition.*?</div>|<details.*?</details>', " ", html, flags=re.S)
    for match in PARAGRAPH.finditer(body):
        raw = match.group(1)
        text = re.sub(r"<[^>]+>", "", raw)
        text = re.sub(r"\\[()\[\]]", "", provenance.plain_tex(html_lib.unescape(text)))
        text = re.sub(r"\s+", " ", text).strip()
        if len(text.split()) >= 8:
            return text
    return None


def shorten(text: str, limit: int = MAX_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:.")
    return cut + "…"


def on_page_content(html, *, page, config, files):
    if not page.meta.get("description"):
        text = first_paragraph_text(html)
        if text:
            # Material writes the value into the head as it is: escape it for an attribute
            page.meta["description"] = html_lib.escape(shorten(text), quote=True)
    return html
