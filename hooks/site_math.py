"""MkDocs hook: every formula is rendered to KaTeX HTML when the site is built.

The pages write math as ``\\( ... \\)`` and ``\\[ ... \\]``; pymdownx.arithmatex (generic mode)
wraps each formula in ``<span class="arithmatex">`` (``<div>`` for a display formula), and
``hooks/site_notebooks.py`` gives the notebooks' ``$ ... $`` the same markup. Rendering those
in the reader's browser cost a 270 KiB script that blocked the first paint and a page that
jumped as each formula took its size. So this hook renders them here, with the pinned
``katex`` from ``node_modules/`` (the same KaTeX and CSS the pages load), and a page ships
finished HTML: no math script at all.

- One ``node`` process per build (``hooks/katex_render.js``), for every formula of every page
  together, started only if some formula is not in the cache.
- The cache (``<cache>/math/``) holds one entry per formula, named by a hash of the formula,
  display or inline, KaTeX's version and code and the renderer script, under the one rule of
  every cache here (:mod:`figures._kit.store`): its manifest records the formula it was made
  for and the HTML's SHA-256, both checked on every read, so an entry can only ever serve the
  formula it was made for, with the HTML KaTeX gave. Entries unused for ``PRUNE_DAYS`` days
  are removed.
- A formula KaTeX cannot read fails the build, naming the formula and the pages that hold
  it: a page never shows raw TeX or KaTeX's red error text.
- The formulas are collected when every page is converted (``on_env``; the printable
  ``print/`` page is assembled by then too) and put into each page as it is written
  (``on_post_page``). The search index and the page descriptions, built earlier, keep
  the TeX source, as before.

Pages with math preload KaTeX's two most used fonts; ``hooks/site_assets.py`` serves KaTeX's
stylesheet, whose formulas wait for their font (``font-display: block``) rather than being
laid out twice.
"""
from __future__ import annotations

import hashlib
import html as html_lib
import json
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paths import cache_root  # noqa: E402

RENDERER = Path(__file__).resolve().parent / "katex_render.js"
# where node finds `katex` for the script (its own project's node_modules/, whichever site is built)
KATEX = RENDERER.parent.parent / "node_modules" / "katex"
MATH_RE = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
DELIMITERS = {False: ("\\(", "\\)"), True: ("\\[", "\\]")}
PRUNE_DAYS = 30
# KaTeX's fonts for letters (math italic) and for digits, operators and text (main): on every
# page with math; the rarer ones (bold, script, sizes) load when a formula needs them
PRELOAD_FONTS = ("KaTeX_Main-Regular.woff2", "KaTeX_Math-Italic.woff2")
FONT_DIR = "assets/katex/fonts/"

log = logging.getLogger("mkdocs.hooks.math")
_state: dict = {}


def parse(inner: str) -> tuple[str, bool]:
    """``(tex, display)`` of one arithmatex element's text (HTML-escaped, with its delimiters)."""
    text = html_lib.unescape(inner).strip()
    for display, (left, right) in DELIMITERS.items():
        if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
            return text[len(left):-len(right)], display
    raise ValueError(f"math markup without \\( \\) or \\[ \\] delimiters: {text[:80]!r}")


def show(tex: str, display: bool) -> str:
    left, right = DELIMITERS[display]
    return f"{left}{tex}{right}"


# ---- the renderer and its cache --------------------------------------------------------------

def renderer_id() -> str:
    """What a rendering depends on besides its formula: KaTeX's version and code, the script."""
    h = hashlib.sha256()
    for path in (KATEX / "package.json", KATEX / "dist" / "katex.js", RENDERER):
        try:
            h.update(path.read_bytes())
        except OSError:
            raise PluginError(f"hooks/site_math.py: {path} is missing: run `make deps` (npm ci)") from None
    return h.hexdigest()[:16]


def entry_key(rid: str, tex: str, display: bool) -> str:
    return hashlib.sha256(json.dumps([rid, tex, display]).encode()).hexdigest()


class MathCache:
    """One entry per formula under ``<cache>/math/``: a folder holding its HTML, under the one
    rule of every cache here (:mod:`figures._kit.store`): the manifest records what the entry
    was made for (renderer, formula, display) and the HTML's size and SHA-256, and both are
    checked on every read; an entry that fails either is discarded and rendered again."""

    FILE = "formula.html"

    def __init__(self, root: Path, rid: str):
        self.dir, self.rid = root / "math", rid
        self.used: set[str] = set()
        self.damaged = 0

    def path(self, tex: str, display: bool) -> Path:
        return self.dir / entry_key(self.rid, tex, display)

    def _meta(self, tex: str, display: bool) -> dict:
        return {"renderer": self.rid, "tex": tex, "display": display}

    def get(self, tex: str, display: bool) -> str | None:
        from figures._kit import store

        path = self.path(tex, display)
        if not (path.exists() or path.is_symlink()):
            return None
        try:
            html = store.read(path, self._meta(tex, display), expected=(self.FILE,),
                              make=lambda files: files[self.FILE].decode("utf-8"))
        except (store.Damaged, UnicodeDecodeError) as exc:
            log.info(f"math: cache entry {path.name} is damaged ({exc}); discarded, rendering it again")
            store.discard(path)
            self.damaged += 1
            return None
        self.used.add(path.name)
        return html

    def put(self, tex: str, display: bool, html: str) -> None:
        from figures._kit import store

        path = self.path(tex, display)
        store.put(self.dir, path, self._meta(tex, display), {self.FILE: html.encode("utf-8")})
        self.used.add(path.name)

    def prune(self, days: float = PRUNE_DAYS) -> None:
        """Mark this build's entries as used and drop long-unused ones."""
        from figures._kit import store

        for name in self.used:
            store.touch(self.dir / name)
        store.prune(self.dir, used=self.used, unused_for_s=days * 86400)


def run_katex(items: list[tuple[str, bool]]) -> list[dict]:
    """Render ``items`` in one node process; one ``{"html"}`` or ``{"error"}`` per item."""
    node = shutil.which("node")
    if node is None:
        raise PluginError("hooks/site_math.py: `node` is needed to render the math when the site is built "
                          "(install Node.js, e.g. apt-get install nodejs)")
    try:
        res = subprocess.run([node, str(RENDERER)], input=json.dumps(items), cwd=RENDERER.parent, capture_output=True,
                             text=True, encoding="utf-8", timeout=600)
    except subprocess.TimeoutExpired:
        raise PluginError(f"hooks/site_math.py: KaTeX took over 600 s for {len(items)} formulas") from None
    if res.returncode:
        raise PluginError(f"hooks/site_math.py: the KaTeX renderer failed (exit {res.returncode}):\n"
                          f"{res.stderr.strip()[-2000:]}")
    out = json.loads(res.stdout)
    if len(out) != len(items):
        raise PluginError(f"hooks/site_math.py: asked KaTeX for {len(items)} formulas, got {len(out)}")
    return out


def render_all(wanted: dict[tuple[str, bool], list[str]]) -> None:
    """Put the HTML of every wanted formula in ``_state["html"]``: from the cache, else from one
    KaTeX run for all the others. ``wanted`` maps each formula to the pages that hold it."""
    cache, done = _state["cache"], _state["html"]
    missing = []
    for item in wanted:
        if item in done:
            continue
        hit = cache.get(*item)
        if hit is None:
            missing.append(item)
        else:
            done[item] = hit
    if not missing:
        return
    results = run_katex(missing)
    _state["runs"] = _state.get("runs", 0) + 1
    errors = []
    for item, result in zip(missing, results):
        if "html" in result:
            cache.put(*item, result["html"])
            done[item] = result["html"]
        else:
            pages = sorted(set(wanted[item]), key=lambda p: (p == "print.md", p))
            errors.append(f"  {show(*item)} on {', '.join(pages[:3])}{' ...' if len(pages) > 3 else ''}: "
                          f"{result.get('error', 'no result')}")
    _state["rendered"] = _state.get("rendered", 0) + len(missing) - len(errors)
    if errors:
        raise PluginError(f"hooks/site_math.py: KaTeX cannot render {len(errors)} formula(s):\n" + "\n".join(errors))


def formulas(html: str, where: str, into: dict) -> dict:
    """Add every formula of ``html`` (a page's content) to ``into`` with ``where`` as one of its pages."""
    for m in MATH_RE.finditer(html):
        try:
            item = parse(m.group(2))
        except ValueError as exc:
            raise PluginError(f"hooks/site_math.py: {where}: {exc}") from None
        into.setdefault(item, []).append(where)
    return into


# ---- the hooks -------------------------------------------------------------------------------

def on_config(config):
    _state.clear()
    _state.update(cache=MathCache(cache_root(config), renderer_id()), html={})
    return config


def on_env(env, *, config, files):
    """Every page is converted now: render all their formulas at once."""
    wanted: dict = {}
    for file in files.documentation_pages():
        page = file.page
        if page is not None and page.content:
            formulas(page.content, file.src_uri, wanted)
    render_all(wanted)
    return env


def _preload(page) -> str:
    return "".join(f'<link rel="preload" href="{get_relative_url(FONT_DIR + font, page.url)}" as="font" '
                   f'type="font/woff2" crossorigin>' for font in PRELOAD_FONTS)


def on_post_page(output, *, page, config):
    if 'class="arithmatex"' not in output:
        return output
    render_all(formulas(output, page.file.src_uri, {}))  # a page on_env did not see (serve --dirty)
    done = _state["html"]
    output = MATH_RE.sub(lambda m: f'<{m.group(1)} class="arithmatex">{done[parse(m.group(2))]}</{m.group(1)}>',
                         output)
    # after the stylesheets, which the first paint waits for; the fonts come next
    return output.replace("</head>", _preload(page) + "</head>", 1)


def on_post_build(*, config):
    cache = _state.get("cache")
    if cache is None:
        return
    cache.prune()
    rendered, runs = _state.get("rendered", 0), _state.get("runs", 0)
    log.info(f"math: {len(_state['html'])} formulas, {rendered} rendered by KaTeX in {runs} node "
             f"run{'s' if runs != 1 else ''}, {len(_state['html']) - rendered} from the cache")
