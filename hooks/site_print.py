"""MkDocs hook: the whole lecture on one printable page (``print/``), and its PDF.

A teacher who wants the course on paper should not have to print twenty pages one by one.
This hook adds a page that is not in the navigation, ``print/``, holding every page of the
nav in reading order (the figure galleries and the API reference excepted, see ``SKIP``),
each starting on a new sheet when printed. It goes through the theme like any page, so it
gets the same stylesheets, math rendering and print styles
(``docs/stylesheets/print.css``).

Gluing pages together breaks what was unique per page, so each page's HTML is rewritten:

- every ``id`` gets the page's key as a prefix (``attention--summary``), and so do the
  attributes that point at ids (``for``, ``aria-*``, ``headers``) and radio-button groups
  (``name`` of an input), so two pages' "Summary" headings no longer collide;
- a link to a page that is printed here becomes a link to that page's section
  (``../rope/#the-rotation`` -> ``#rope--the-rotation``); any other relative link or image
  (a figure, a download, a page left out) is re-based on ``print/``; fragments of images
  (``#only-light``) are kept as they are;
- answers and other collapsed blocks (``<details>``) are printed open;
- notebook cell ids (random, and linked from nowhere) are dropped, and each notebook's
  identical inline stylesheet is kept once.

Nothing here is a new number: the page only re-arranges the HTML the other pages built.
On every page, links to other sites get ``data-print-url`` so that paper shows where they
go (the theme makes every link absolute in the browser, so CSS alone cannot tell).

The PDF: with ``MHA_PDF=1`` in the environment (``make pdf`` sets it) the build ends by
printing ``print/`` with headless Chromium into ``site/lecture.pdf``
(``tools/make_pdf.py``), and only then do the home page and ``print/`` link it: a build
without the PDF links no PDF, and the PDF always comes from the same build as the pages.
"""
from __future__ import annotations

import html as html_lib
import logging
import os
import posixpath
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, InclusionLevel
from mkdocs.structure.toc import AnchorLink, TableOfContents
from mkdocs.utils import get_relative_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _context  # noqa: E402

log = logging.getLogger("mkdocs.hooks.print")

PRINT_PAGE = "print.md"
PDF_NAME = "lecture.pdf"
PDF_ENV = "MHA_PDF"
# Nav pages left out of the printable lecture: the galleries show again the figures the
# lecture pages already print, and the API reference documents code, not the course.
SKIP = ("gallery.md", "gallery_position.md", "gallery_real_model.md", "gallery_generation.md",
        "gallery_experiments.md", "api/index.md", "api/attention.md", "api/positions.md", "api/decoding.md",
        "api/examples.md")

SOURCE = """\
---
title: The whole lecture
description: Every page of the lecture in reading order on one page, ready to print or save as PDF.
hide: [navigation]
search:
  exclude: true
---

The pages of the lecture are added here by hooks/site_print.py.
"""

TAG = re.compile(r"<([a-zA-Z][a-zA-Z0-9:-]*)(\s[^<>]*?)?(/?)>")
ATTR = re.compile(r'(\s)([a-zA-Z:-]+)="([^"]*)"')
RAW_BLOCK = re.compile(r"(<(script|style)\b[^>]*>.*?</\2>)", re.S | re.I)
STYLE = re.compile(r"<style\b[^>]*>(.*?)</style>", re.S | re.I)
ID_REFS = ("for", "headers", "aria-labelledby", "aria-describedby", "aria-controls", "aria-owns")


def pdf_enabled() -> bool:
    return os.environ.get(PDF_ENV, "") not in ("", "0")


def page_key(url: str) -> str:
    """A page's key in the printable page: its URL as one word (``labs/lab1_mha/`` -> ``labs-lab1_mha``)."""
    return url.strip("/").replace("/", "-").replace(".", "-") or "home"


def printed_pages(nav) -> list:
    return [p for p in nav.pages if p.file.src_uri not in SKIP and p.file.src_uri != PRINT_PAGE]


class _Rewriter:
    """Rewrites one page's HTML for its place in ``print/``."""

    def __init__(self, page, keys: dict[str, str], print_url: str):
        self.page, self.keys, self.print_url = page, keys, print_url
        self.key = keys[page.url]

    def target(self, url: str, is_link: bool) -> str:
        """Where ``url`` (relative to this page) points from ``print/``."""
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or url.startswith("/"):
            return url
        if not parts.path:  # "#frag" or "?q": a place on this page
            return f"#{self.key}--{parts.fragment}" if parts.fragment else f"#{self.key}"
        path = posixpath.normpath(posixpath.join(self.page.url, parts.path))
        if path == ".":
            path = ""
        elif parts.path.endswith("/") or parts.path.rsplit("/", 1)[-1] in (".", ".."):
            path += "/"
        path = path.removesuffix("index.html")
        if is_link and path in self.keys:  # a printed page: its section here
            key = self.keys[path]
            return f"#{key}--{parts.fragment}" if parts.fragment else f"#{key}"
        rebased = get_relative_url(path or ".", self.print_url)
        if path.endswith("/") and not rebased.endswith("/"):
            rebased += "/"
        return rebased + (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")

    def attr(self, tag: str, match: re.Match) -> str:
        space, name, value = match.groups()
        low = name.lower()
        if low == "id":
            if value.startswith("cell-id="):
                return ""
            return f'{space}id="{self.key}--{value}"'
        if low in ID_REFS:
            return f'{space}{name}="' + " ".join(f"{self.key}--{v}" for v in value.split()) + '"'
        if low == "name" and tag == "input":
            return f'{space}name="{self.key}--{value}"'
        if low in ("href", "xlink:href"):
            return f'{space}{name}="{html_lib.escape(self.target(html_lib.unescape(value), True), quote=True)}"'
        if low == "src":
            return f'{space}{name}="{html_lib.escape(self.target(html_lib.unescape(value), False), quote=True)}"'
        if low == "srcset":  # "url [descriptor], url [descriptor]"
            parts = [c.strip().split(None, 1) for c in html_lib.unescape(value).split(",") if c.strip()]
            value = ", ".join(" ".join([self.target(p[0], False), *p[1:]]) for p in parts)
            return f'{space}{name}="{html_lib.escape(value, quote=True)}"'
        return match.group(0)

    def tag(self, match: re.Match) -> str:
        name, attrs, close = match.group(1), match.group(2) or "", match.group(3)
        attrs = ATTR.sub(lambda m: self.attr(name.lower(), m), attrs)
        if name.lower() == "details" and not re.search(r"\sopen\b", attrs):
            attrs += " open"
        return f"<{name}{attrs}{close}>"

    def __call__(self, html: str) -> str:
        out = []
        for i, chunk in enumerate(RAW_BLOCK.split(html)):
            if i % 3 == 0:
                out.append(TAG.sub(self.tag, chunk))
            elif i % 3 == 1:
                out.append(chunk)
        return "".join(out)


def _dedupe_styles(html: str, seen: set[str]) -> str:
    """Keep each identical inline ``<style>`` block once (every notebook page carries the same)."""
    def keep(match: re.Match) -> str:
        if match.group(1) in seen:
            return ""
        seen.add(match.group(1))
        return match.group(0)
    return STYLE.sub(keep, html)


def _contents(nav, keys: dict[str, str], config, print_url: str) -> str:
    """The list of printed pages, grouped by the nav's sections, and what is left out."""
    def item(node) -> str:
        if getattr(node, "is_page", False):
            if node.url not in keys:
                return ""
            return f'<li><a href="#{keys[node.url]}">{html_lib.escape(node.title)}</a></li>'
        if getattr(node, "is_section", False):
            inner = "".join(item(child) for child in node.children)
            return f"<li>{html_lib.escape(node.title)}<ol>{inner}</ol></li>" if inner else ""
        return ""

    left_out = [p for p in nav.pages if p.file.src_uri in SKIP]
    skipped = ", ".join(f'<a href="{get_relative_url(p.url, print_url)}">{html_lib.escape(p.title)}</a>'
                        for p in left_out)
    pdf = (f' It is also a <a href="{get_relative_url(PDF_NAME, print_url)}" download>PDF</a>, '
           "printed from this page when the site was built." if pdf_enabled() else "")
    notice = f"<p>{mark_external(config['copyright'], '')}</p>" if config.get("copyright") else ""
    return (
        '<section class="mha-print-contents" id="print-contents">'
        "<h2>Contents</h2>"
        "<p>Every page of the lecture in reading order, each starting on a new sheet when printed; "
        f"collapsed answers are shown open.{pdf} Not printed here: {skipped}.</p>"
        f'<ol class="mha-print-toc">{"".join(item(n) for n in nav.items)}</ol>{notice}</section>'
    )


def on_files(files, *, config):
    files.append(File.generated(config, PRINT_PAGE, content=SOURCE, inclusion=InclusionLevel.NOT_IN_NAV))
    return files


class PrintState:
    """One build's print step: the site's navigation (``on_env``, which assembles ``print/``, gets none)."""

    nav = None


def on_nav(nav, *, config, files):
    _context.of(config).step(PrintState).nav = nav
    missing = [uri for uri in SKIP if files.get_file_from_path(uri) is None]
    if missing:
        raise PluginError(f"hooks/site_print.py: SKIP names pages that are not in docs/: {missing}")
    unlisted = [p.file.src_uri for p in nav.pages
                if p.file.src_uri.startswith(("gallery", "api/")) and p.file.src_uri not in SKIP]
    if unlisted:  # a new gallery would print every figure a second time
        raise PluginError(f"hooks/site_print.py: {unlisted} are galleries or API pages: add them to SKIP, "
                          "or the printable lecture shows their figures twice")
    return nav


EXTERNAL = re.compile(r'<a (?=[^>]*href="(https?://[^"]+)")(?![^>]*data-print-url)')


def mark_external(html: str, site_url: str) -> str:
    """Give each link to another site ``data-print-url`` (the print style writes it out on
    paper). The theme makes every link absolute in the browser, so the stylesheet cannot
    tell other sites from this one by the ``href`` alone."""
    def mark(m: re.Match) -> str:
        if site_url and m.group(1).startswith(site_url):
            return m.group(0)
        return f'<a data-print-url="{m.group(1)}" '
    return EXTERNAL.sub(mark, html)


def on_page_content(html, *, page, config, files):
    html = mark_external(html, config["site_url"] or "")
    if page.file.src_uri == "index.md" and pdf_enabled():
        # the home page's printing line links the PDF too, but only in a build that makes it
        link = f'<a href="{get_relative_url(PDF_NAME, page.url)}" download>Download it as a PDF</a>'
        html, n = re.subn(r'(<p class="mha-print-note">.*?)(</p>)', rf"\1 {link}.\2", html, count=1, flags=re.S)
        if not n:
            raise PluginError('hooks/site_print.py: the home page has no paragraph marked { .mha-print-note } '
                              "to link the PDF from")
    return html


def on_env(env, *, config, files):
    """Every page is converted by now (``page.content``): assemble ``print/``."""
    file = files.get_file_from_path(PRINT_PAGE)
    nav = _context.of(config).step(PrintState).nav
    print_page = file.page
    pages = printed_pages(nav)
    keys = {p.url: page_key(p.url) for p in pages}
    if any(page.content is None for page in pages):  # `mkdocs serve --dirty` converts edited pages only
        log.info("print: print/ is assembled by full builds only")
        return env
    seen_styles: set[str] = set()
    parts, toc = [], []
    for n, page in enumerate(pages):
        body = _dedupe_styles(_Rewriter(page, keys, print_page.url)(page.content), seen_styles)
        parts.append(f'<section class="mha-print-page" id="{keys[page.url]}">\n{body}\n</section>\n')
        if n == 0:
            parts.append(_contents(nav, keys, config, print_page.url) + "\n")
        link = AnchorLink(page.title, keys[page.url], 2)
        link.children = [AnchorLink(c.title, f"{keys[page.url]}--{c.id}", 3)
                         for top in page.toc.items for c in top.children]
        toc.append(link)
    print_page.content = f'<div class="mha-print">\n{"".join(parts)}</div>\n'
    # the theme's sidebar lists the children of the first top-level entry: one root, the pages under it
    root = AnchorLink(print_page.title, keys[pages[0].url], 1)
    root.children = toc
    print_page.toc = TableOfContents([root])
    return env


def on_post_build(*, config):
    if not pdf_enabled():
        return
    root = str(Path(__file__).resolve().parents[1])  # the project's tools, under their one name (tools.make_pdf)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        from tools import make_pdf
    except ImportError as exc:
        raise PluginError(f"{PDF_ENV}=1 needs tools/make_pdf.py and Playwright ({exc}); run `make deps`") from None
    site = Path(config["site_dir"])
    start = time.perf_counter()
    try:
        pages = make_pdf.build_pdf(site, site / PDF_NAME)
    except Exception as exc:  # the build promised a PDF and links it: no PDF, no site
        raise PluginError(f"hooks/site_print.py: printing {PDF_NAME} failed: {exc}") from exc
    log.info(f"print: {PDF_NAME}, {pages} pages, in {time.perf_counter() - start:.1f} s")
