"""MkDocs hook: a page waits for nothing it does not use before its first paint.

Every stylesheet in a page's head and every script without ``defer`` holds back the first
paint on a slow phone (Lighthouse lists them as render-blocking). So, on each page as it
is written:

- a stylesheet that only a few pages use is linked only from the pages that use it
  (``PAGE_CSS``: the stylesheet and the markup that needs it; ``hooks/site_notebooks.py``
  does the same for the notebooks' stylesheet). Material's instant navigation adds and
  removes head stylesheets as it moves between pages, so a page reached without a reload
  still gets its own, but only once it has loaded: KaTeX's stylesheet and the real-model
  viewer's, small and needed on most pages or on a page readers reach from many others,
  stay on every page, so that no formula shows unstyled for a moment;
- ``stylesheets/print.css`` is for paper (``@media print``) except on ``print/``, whose
  screen rules it also holds: elsewhere it is linked with ``media="print"``, which the
  browser fetches without waiting for it;
- the theme's script bundle is deferred like the site's own scripts (``defer: true`` in
  ``mkdocs.yml``): it sits at the end of the page and nothing before it needs it, and
  deferred scripts still run in their order, the bundle first.
"""
from __future__ import annotations

import re

# stylesheet (site path) -> what a page holds when it uses it
PAGE_CSS = {
    "assets/_mkdocstrings.css": 'class="doc doc-',  # mkdocstrings' own: the API reference only
}
PRINT_CSS = "stylesheets/print.css"
PRINT_PAGE = "print/"
LINK_RE = re.compile(r'<link rel="stylesheet" href="([^"]+)">')
BUNDLE_RE = re.compile(r'<script src="([^"]*assets/javascripts/bundle\.[0-9a-f]+\.min\.js)"></script>')


def _site_path(href: str) -> str:
    """``../../assets/katex/katex.min.css`` -> ``assets/katex/katex.min.css``."""
    return re.sub(r"^(?:\.\./|\./)+", "", href)


def trim_head(output: str, page_url: str) -> str:
    head_end = output.find("</head>")
    if head_end == -1:
        return output
    head, body = output[:head_end], output[head_end:]

    def link(m: re.Match) -> str:
        path = _site_path(m.group(1))
        if path in PAGE_CSS and PAGE_CSS[path] not in body:
            return ""
        if path == PRINT_CSS and page_url != PRINT_PAGE:
            return f'<link rel="stylesheet" href="{m.group(1)}" media="print">'
        return m.group(0)
    head = LINK_RE.sub(link, head)
    body = BUNDLE_RE.sub(lambda m: f'<script src="{m.group(1)}" defer></script>', body, count=1)
    return head + body


def on_post_page(output, *, page, config):
    return trim_head(output, page.url)
