"""MkDocs hook: a page's first use of each course symbol links to the notation page.

The symbols and their anchors on ``docs/notation.md`` are listed in ``SYMBOLS``. On every
other page, the first inline formula (``<span class="arithmatex">``) that uses a symbol is
wrapped in a link to its row of the notation table, so a reader who meets
\\(d_{\\text{head}}\\) for the first time is one click from its meaning and shape.
Formulas inside headings, links and summaries are left alone (a link there would nest or
clutter the table of contents). A symbol whose anchor is missing from the notation page
fails the build: a link must never point at nothing.

Under ``mkdocs serve`` a page whose HTML and notation URL did not change since the last
rebuild gets its links from memory (``hooks/_serve.py``); ``mkdocs build`` links every page.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from bs4 import BeautifulSoup
from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _serve  # noqa: E402
from _serve import on_shutdown, on_startup  # noqa: E402,F401  (MkDocs calls them: serve or build)

NOTATION_PAGE = "notation.md"

# (anchor on the notation page, test on the TeX source of one inline formula)
SYMBOLS: tuple[tuple[str, re.Pattern], ...] = (
    ("d_model", re.compile(r"d_\{\\text\{model\}\}")),
    ("d_head", re.compile(r"d_\{\\text\{head\}\}")),
    ("H_kv", re.compile(r"H_\{\\text\{kv\}\}")),
    ("H", re.compile(r"^\\\(\s*H\s*\\\)$")),
    ("tau", re.compile(r"\\tau\b")),
    ("W_Q", re.compile(r"W_[QKV]\b")),
    ("W_O", re.compile(r"W_O\b")),
    ("PE", re.compile(r"\\mathrm\{PE\}")),
    ("m_h", re.compile(r"^\\\(\s*m_h\s*\\\)$")),
)

INLINE = re.compile(r'<span class="arithmatex">(.*?)</span>', re.S)
SKIP_INSIDE = ["a", "h1", "h2", "h3", "h4", "h5", "h6", "summary", "th"]


def _anchors(html: str) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', html))


def link_first_uses(html: str, notation_url: str) -> str:
    """Wrap the first eligible inline formula of each symbol in a link to ``notation_url#anchor``."""
    spans = list(INLINE.finditer(html))
    if not spans:
        return html
    found = BeautifulSoup(html, "html.parser").find_all("span", class_="arithmatex")
    if len(found) != len(spans):  # the two readings disagree: change nothing rather than guess
        return html
    chosen: dict[int, str] = {}
    for anchor, pattern in SYMBOLS:
        for i, (match, node) in enumerate(zip(spans, found)):
            if i in chosen or node.find_parent(SKIP_INSIDE) is not None:
                continue
            if pattern.search(match.group(1)):
                chosen[i] = anchor
                break
    out, last = [], 0
    for i, match in enumerate(spans):
        if i not in chosen:
            continue
        out.append(html[last:match.start()])
        out.append(f'<a class="notation-link" href="{notation_url}#{chosen[i]}" '
                   f'title="Notation: what this symbol means">{match.group(0)}</a>')
        last = match.end()
    out.append(html[last:])
    return "".join(out)




def on_config(config):
    _serve.begin(config)
    return config


def on_page_content(html, *, page, config, files):
    if page.file.src_uri == NOTATION_PAGE:
        return html
    target = files.get_file_from_path(NOTATION_PAGE)
    if target is None:
        raise PluginError(f"hooks/site_notation.py: {NOTATION_PAGE} is missing from docs/")
    url = get_relative_url(target.url, page.url)
    return _serve.memo("notation").get((html, url), lambda: link_first_uses(html, url))


def on_post_page(output, *, page, config):
    if page.file.src_uri == NOTATION_PAGE:
        missing = [anchor for anchor, _ in SYMBOLS if anchor not in _anchors(output)]
        if missing:
            raise PluginError(f"{NOTATION_PAGE} has no anchor for the symbols {missing}: add a row with "
                              f'<span id="NAME"></span> for each, or remove them from hooks/site_notation.py')
    return output
