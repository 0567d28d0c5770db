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
  deferred scripts still run in their order, the bundle first;
- the bundle's request for the search index (130 KB compressed, the largest thing a page
  loads) waits until the reader goes to search: ``hooks/search_on_demand.js`` holds it back,
  and goes inline just before the bundle, so it runs first without a request of its own.

A page without the bundle's script tag stops the build: the tag's form is the theme's, and a
new form would otherwise drop both changes silently.
"""
from __future__ import annotations

import re
from pathlib import Path

# stylesheet (site path) -> what a page holds when it uses it
PAGE_CSS = {
    "assets/_mkdocstrings.css": 'class="doc doc-',  # mkdocstrings' own: the API reference only
}
PRINT_CSS = "stylesheets/print.css"
PRINT_PAGE = "print/"
LINK_RE = re.compile(r'<link rel="stylesheet" href="([^"]+)">')
BUNDLE_RE = re.compile(r'<script src="([^"]*assets/javascripts/bundle\.[0-9a-f]+\.min\.js)"></script>')
SEARCH_ON_DEMAND = Path(__file__).with_name("search_on_demand.js")


def _site_path(href: str) -> str:
    """``../../assets/katex/katex.min.css`` -> ``assets/katex/katex.min.css``; the 404 page's
    absolute ``/course/assets/katex/katex.min.css`` -> ``course/assets/katex/katex.min.css``."""
    return re.sub(r"^(?:\.\./|\./|/)+", "", href)


def _is(path: str, site_path: str) -> bool:
    return path == site_path or path.endswith("/" + site_path)


def _inline_script(path: Path) -> str:
    """The script as an inline ``<script>``: its opening comment (why it is there) becomes one
    line naming the file, since every page carries it."""
    code = path.read_text(encoding="utf-8").strip()
    if "</script" in code.lower():
        raise ValueError(f"{path}: an inline script cannot contain '</script'")
    code = re.sub(r"\A/\*.*?\*/\s*", "", code, count=1, flags=re.S)
    return f"<script>/* {path.parent.name}/{path.name} */\n{code}\n</script>"


def trim_head(output: str, page_url: str, search_script: str = "") -> str:
    head_end = output.find("</head>")
    if head_end == -1:
        return output
    head, body = output[:head_end], output[head_end:]

    def link(m: re.Match) -> str:
        path = _site_path(m.group(1))
        if any(_is(path, css) and marker not in body for css, marker in PAGE_CSS.items()):
            return ""
        if _is(path, PRINT_CSS) and page_url != PRINT_PAGE:
            return f'<link rel="stylesheet" href="{m.group(1)}" media="print">'
        return m.group(0)
    head = LINK_RE.sub(link, head)
    body, n = BUNDLE_RE.subn(lambda m: f'{search_script}<script src="{m.group(1)}" defer></script>', body, count=1)
    if n != 1:
        raise ValueError(f"page {page_url!r}: no theme script tag of the form {BUNDLE_RE.pattern!r} was found; "
                         "hooks/site_speed.py defers it and puts the search-on-demand script before it")
    return head + body


def on_post_page(output, *, page, config):
    return trim_head(output, page.url, _inline_script(SEARCH_ON_DEMAND))


def on_post_template(output_content, *, template_name, config):
    """The 404 page is a theme template, not a page: it gets the same head and scripts."""
    if template_name != "404.html":
        return output_content
    return trim_head(output_content, "404.html", _inline_script(SEARCH_ON_DEMAND))
