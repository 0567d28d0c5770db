"""MkDocs hook: under ``mkdocs serve``, a page whose Markdown did not change is not converted again.

A save under ``mkdocs serve`` rebuilds every page: about half of that rebuild is converting
Markdown that did not change. Here each page's conversion (MkDocs' ``Page.render``: the HTML,
the table of contents, the title and the anchors it found) is kept in a :class:`_serve.Memo`
keyed by everything the conversion reads:

- the page's Markdown as the other hooks left it (figures, values and downloads already
  filled in), its source path and its URL;
- the Markdown extensions and their configuration, and the site's files with their URLs
  (links are resolved against them);
- the bytes of every file a ``--8<--`` snippet line of the page names.

Not kept: notebook pages (mkdocs-jupyter has its own cache), pages with ``::: `` blocks
(mkdocstrings registers cross-reference anchors while converting them), and a conversion
that logged a warning (the next rebuild converts the page again, and warns again). Only under
``mkdocs serve`` (``hooks/_serve.py``); ``mkdocs build`` converts every page.
"""
from __future__ import annotations

import hashlib
import logging
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _serve  # noqa: E402
from _serve import on_shutdown, on_startup  # noqa: E402,F401  (MkDocs calls them: serve or build)

SNIPPET_RE = re.compile(r'^\s*-{1,}8<-{1,}\s+"([^"]+?)(?::[^"]*)?"', re.M)
SNIPPET_LINE = re.compile(r"^\s*-{1,}8<-{1,}", re.M)  # any snippet line: quoted either way, or a block


def _memo_safe(markdown: str) -> bool:
    """Whether a page's conversion can be kept under its key: no ``:::`` block, and every snippet
    line the double-quoted form the key follows (a single-quoted or block include would keep
    serving the old snippet after its file is edited: such a page is converted every time)."""
    if re.search(r"^:::", markdown, re.M):
        return False
    return len(SNIPPET_LINE.findall(markdown)) == len(SNIPPET_RE.findall(markdown))


class _Warnings(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record):
        self.count += 1


def _build_key(config, files) -> str:
    """What every page's conversion reads besides its own Markdown: ``mkdocs.yml`` (every
    extension's and plugin's configuration), the extensions by name (plugins add instances,
    whose ``repr`` names a memory address: their class instead), the site's files."""
    exts = [e if isinstance(e, str) else f"{type(e).__module__}.{type(e).__qualname__}"
            for e in config["markdown_extensions"]]
    site = sorted((f.src_uri, f.url, f.inclusion.name) for f in files)
    return _serve.key(Path(config.config_file_path).read_bytes(), repr(exts),
                      repr(sorted((config["mdx_configs"] or {}).keys())), repr(site))


def _snippets(markdown: str, root: Path, depth: int = 0) -> list | None:
    """The files ``markdown`` includes (``--8<-- "FILE"``), each with its hash, and those they
    include in turn (a snippet that includes another: an edit to the inner one must change the
    key too, pass thirty-nine); None where an included file includes in a form the key cannot
    follow (the page is then converted every time, as :func:`_memo_safe` says)."""
    out = []
    for rel in sorted(set(SNIPPET_RE.findall(markdown))):
        try:
            content = (root / rel).read_bytes()
        except OSError:
            out += [rel, None]  # missing: the conversion says so (and is not kept: it warns)
            continue
        out += [rel, hashlib.sha256(content).hexdigest()]
        text = content.decode("utf-8", errors="replace")
        if SNIPPET_LINE.search(text):
            inner = _snippets(text, root, depth + 1) if depth < 8 and _memo_safe(text) else None
            if inner is None:
                return None
            out += inner
    return out


def on_config(config):
    _serve.begin(config)
    return config


def on_pre_page(page, *, config, files):
    if not _serve.serving() or getattr(page, "nb_url", None) is not None:
        return page
    render = page.render  # MkDocs' own (or another plugin's), bound to this page

    def memo_render(config, files):
        markdown = page.markdown or ""
        if not _memo_safe(markdown):
            return render(config, files)
        root = Path(config.config_file_path).resolve().parent
        included = _snippets(markdown, root)
        if included is None:
            return render(config, files)
        parts = (_build_key(config, files), page.file.src_uri, page.url, markdown, *included)

        def convert():
            handler = _Warnings()
            logging.getLogger("mkdocs").addHandler(handler)
            try:
                render(config, files)
            finally:
                logging.getLogger("mkdocs").removeHandler(handler)
            if handler.count:
                raise _NotKept()
            links = {f.src_uri: dict(v) for f, v in (page.links_to_anchors or {}).items()}
            return (page.content, page.toc, page._title_from_render, set(page.present_anchor_ids or ()), links)

        try:
            content, toc, title, anchors, links = _serve.memo("page conversion").get(parts, convert)
        except _NotKept:
            return None  # converted (and warned) this time; nothing kept
        page.content, page.toc, page._title_from_render = content, toc, title
        page.present_anchor_ids = set(anchors)
        page.links_to_anchors = {files.get_file_from_path(uri): dict(v) for uri, v in links.items()
                                 if files.get_file_from_path(uri) is not None}
        return None

    page.render = memo_render
    return page


class _NotKept(Exception):
    """A conversion that warned: done, but not remembered."""
