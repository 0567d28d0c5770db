"""MkDocs hook: every formula is rendered to KaTeX HTML when the site is built.

The pages write math as ``\\( ... \\)`` and ``\\[ ... \\]``; pymdownx.arithmatex (generic mode)
wraps each formula in ``<span class="arithmatex">`` (``<div>`` for a display formula), and
``hooks/site_notebooks.py`` gives the notebooks' ``$ ... $`` the same markup. Rendering those
in the reader's browser cost a 270 KiB script that blocked the first paint and a page that
jumped as each formula took its size. So this hook renders them here, with the pinned
``katex`` from ``node_modules/`` (the same KaTeX and CSS the pages load), and a page ships
finished HTML: no math script at all.

- One ``node`` process per build (``hooks/katex_render.js``), started by the first formula
  that is not in the cache: each page hands its new formulas over as soon as it is converted
  (``on_page_content``), so KaTeX renders them while the figures are still being drawn.
- The cache (``<cache>/math/``) holds one entry per formula, named by a hash of the formula,
  display or inline, KaTeX's version and code and the renderer script, under the one rule of
  every cache here (:mod:`figures._kit.store`): its manifest records the formula it was made
  for and the HTML's SHA-256, both checked on every read, so an entry can only ever serve the
  formula it was made for, with the HTML KaTeX gave. Entries unused for ``PRUNE_DAYS`` days
  are removed.
- A formula KaTeX cannot read fails the build, naming the formula and the pages that hold
  it: a page never shows raw TeX or KaTeX's red error text.
- The formulas are collected again when every page is converted (``on_env``; the printable
  ``print/`` page is assembled by then too; any formula not handed over yet goes to KaTeX
  then, and the build waits for every answer) and put into each page as it is written
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
import _context  # noqa: E402
import _serve  # noqa: E402
import directives  # noqa: E402
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


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise PluginError("hooks/site_math.py: `node` is needed to render the math when the site is built "
                          "(install Node.js, e.g. apt-get install nodejs)")
    return node


class Katex:
    """One ``node`` process (``katex_render.js``) that renders formulas as they are handed over
    (:meth:`ask`) while the build goes on; :meth:`results` waits for every answer.

    A thread reads the answers as they come, so neither side ever waits on a full pipe, and
    hands each to ``on_answer(item, answer)`` (the build stores the HTML in its cache there,
    while the figures are still drawn: 660 entries took 0.6 s at the end of a clean build);
    KaTeX's own messages go to a file, read only if the process fails."""

    def __init__(self, on_answer=None):
        import tempfile
        import threading

        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([_node(), str(RENDERER)], cwd=RENDERER.parent, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._stderr, text=True, encoding="utf-8")
        self.asked: list = []  # in the order handed over (the answers come in that order)
        self.seen: set = set()
        self._answers: list = []
        self._on_answer = on_answer
        self._failure: BaseException | None = None
        self._reader = threading.Thread(target=self._read, name="katex-answers", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for line in self._proc.stdout:
                answer = json.loads(line)
                if self._on_answer is not None:
                    self._on_answer(self.asked[len(self._answers)], answer)
                self._answers.append(answer)
        except BaseException as exc:  # raised by results(), in the build's thread
            self._failure = exc
            self._proc.kill()

    def ask(self, items) -> None:
        """Hand ``items`` (``(tex, display)`` pairs) to KaTeX now; their answers come later."""
        items = [item for item in dict.fromkeys(items) if item not in self.seen]
        if items:
            self.seen.update(items)
            self.asked += items  # before KaTeX can answer them (the reader pairs answers with them)
            try:
                self._proc.stdin.write("".join(json.dumps(item) + "\n" for item in items))
                self._proc.stdin.flush()
            except OSError:  # the process has ended: results() says how, with its messages
                pass

    def results(self, timeout: float = 600) -> dict:
        """``{item: {"html"} or {"error"}}`` for every item asked, once KaTeX has answered them all."""
        try:
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            code = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise PluginError(f"hooks/site_math.py: KaTeX took over {timeout:g} s for {len(self.asked)} "
                              "formulas") from None
        self._reader.join()
        if self._failure is not None:
            raise PluginError(f"hooks/site_math.py: reading KaTeX's answers failed: {self._failure!r}")
        if code:
            self._stderr.seek(0)
            tail = self._stderr.read().decode("utf-8", "replace").strip()[-2000:]
            raise PluginError(f"hooks/site_math.py: the KaTeX renderer failed (exit {code}):\n{tail}")
        if len(self._answers) != len(self.asked):
            raise PluginError(f"hooks/site_math.py: asked KaTeX for {len(self.asked)} formulas, "
                              f"got {len(self._answers)}")
        return dict(zip(self.asked, self._answers))

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()


def run_katex(items: list[tuple[str, bool]]) -> list[dict]:
    """Render ``items`` in one node process; one ``{"html"}`` or ``{"error"}`` per item."""
    katex = Katex()
    katex.ask(items)
    answers = katex.results()
    return [answers[item] for item in items]


class MathState:
    """One build's math: the cache, the HTML of every formula met so far, the KaTeX process
    that renders the formulas handed over while pages are converted, and the counts logged."""

    def __init__(self):
        self.cache: MathCache | None = None
        self.html: dict = {}  # (tex, display) -> its HTML
        self.katex: Katex | None = None
        self.runs = self.rendered = 0

    def missing(self, items) -> list:
        """Of ``items``, those neither rendered nor in the cache (a hit is taken into :attr:`html`)."""
        out = []
        for item in items:
            if item in self.html:
                continue
            hit = self.cache.get(*item)
            if hit is None:
                out.append(item)
            else:
                self.html[item] = hit
        return out

    def store(self, item, answer: dict) -> None:
        """Keep a rendered formula in the cache as soon as KaTeX answers (in the reader's thread)."""
        if "html" in answer:
            self.cache.put(*item, answer["html"])

    def hand_over(self, items) -> None:
        """Give KaTeX the formulas of ``items`` it was not given yet and the cache lacks (one
        process for the build, started by the first such formula)."""
        missing = [item for item in self.missing(items) if self.katex is None or item not in self.katex.seen]
        if missing:
            if self.katex is None:
                self.katex = Katex(on_answer=self.store)
            self.katex.ask(missing)

    def render_all(self, wanted: dict[tuple[str, bool], list[str]]) -> None:
        """Put the HTML of every wanted formula in :attr:`html`: from the cache, else from KaTeX
        (the answers of the formulas handed over while the pages were converted, and one run
        for any others). ``wanted`` maps each formula to the pages that hold it."""
        early, self.katex = self.katex, None
        asked = early.seen if early is not None else set()
        missing = [item for item in self.missing(wanted) if item not in asked]
        answers: dict = {}
        if early is not None:
            early.ask(missing)
            answers = early.results()
        elif missing:
            answers = dict(zip(missing, run_katex(missing)))
        if not answers:
            return
        self.runs += 1
        errors = []
        for item, result in answers.items():
            if "html" in result:
                if early is None:  # (the early process's answers were stored as they came: store)
                    self.cache.put(*item, result["html"])
                self.html[item] = result["html"]
            elif item in wanted:  # (one handed over early that no page holds now is no error)
                pages = sorted(set(wanted[item]), key=lambda p: (p == "print.md", p))
                errors.append(f"  {show(*item)} on {', '.join(pages[:3])}{' ...' if len(pages) > 3 else ''}: "
                              f"{result.get('error', 'no result')}")
        self.rendered += sum("html" in r for r in answers.values())
        if errors:
            raise PluginError(f"hooks/site_math.py: KaTeX cannot render {len(errors)} formula(s):\n" + "\n".join(errors))

    def stop(self) -> None:
        katex, self.katex = self.katex, None
        if katex is not None:
            katex.stop()


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

def _math(config) -> MathState:
    return _context.of(config).step(MathState)


def on_config(config):
    _serve.begin(config)  # (on_build_error finds this build through it)
    _math(config).cache = MathCache(cache_root(config), renderer_id())
    return config


def on_page_content(html, *, page, config, files):
    """Hand this page's new formulas to KaTeX at once: they render while the other pages are
    converted and the figures drawn, instead of after all of them (on_env collects them again
    and waits)."""
    if 'class="arithmatex"' in html:
        _math(config).hand_over(formulas(html, page.file.src_uri, {}))
    return html


def on_build_error(*, error):
    build = _context.current()
    math = build.find(MathState) if build is not None else None
    if math is not None:
        math.stop()


def on_env(env, *, config, files):
    """Every page is converted now: render all their formulas at once."""
    wanted: dict = {}
    for file in files.documentation_pages():
        page = file.page
        if page is not None and page.content:
            formulas(page.content, file.src_uri, wanted)
    _math(config).render_all(wanted)
    return env


def _preload(page) -> str:
    return "".join(f'<link rel="preload" href="{get_relative_url(FONT_DIR + font, page.url)}" as="font" '
                   f'type="font/woff2" crossorigin>' for font in PRELOAD_FONTS)


#: A navigation entry's text (the page's table of contents, the site's nav, the phone drawer):
#: the heading's words, which the theme takes without their markup, so a formula in a heading
#: reaches it as its TeX source.
NAV_TEXT_RE = re.compile(r'(<span class="md-ellipsis">)([^<]*)(</span>)')


def typeset_nav(output: str) -> str:
    """Wrap each ``\\( ... \\)`` of the navigation's entries as the page's own inline math is
    wrapped, so it is typeset like the heading it names instead of showing its TeX."""
    if "\\(" not in output:
        return output
    return NAV_TEXT_RE.sub(lambda m: m.group(1) + directives.math_spans(m.group(2)) + m.group(3), output)


def on_post_page(output, *, page, config):
    output = typeset_nav(output)
    if 'class="arithmatex"' not in output:
        return output
    math = _math(config)
    math.render_all(formulas(output, page.file.src_uri, {}))  # a page on_env did not see (serve --dirty)
    done = math.html
    output = MATH_RE.sub(lambda m: f'<{m.group(1)} class="arithmatex">{done[parse(m.group(2))]}</{m.group(1)}>',
                         output)
    # after the stylesheets, which the first paint waits for; the fonts come next
    return output.replace("</head>", _preload(page) + "</head>", 1)


def on_post_build(*, config):
    math = _context.of(config).find(MathState)
    if math is None or math.cache is None:
        return
    math.cache.prune()
    rendered, runs, n = math.rendered, math.runs, len(math.html)
    log.info(f"math: {n} formulas, {rendered} rendered by KaTeX in {runs} node "
             f"run{'s' if runs != 1 else ''}, {n - rendered} from the cache")
