"""How large the text of every figure is on screen, page by page, at a desktop and a phone width.

    python -m tools.figure_text SITE_DIR [--widths 1280,390] [--pages attention,rope] [--all]
    python -m tools.figure_text --svg FIGURE.svg [FIGURE-narrow.svg ...]   # estimate, no browser

A figure's SVG keeps its text as text (``svg.fonttype: none``), so its sizes can be read from
the file: each ``<text>`` element's body size (the largest ``font-size`` among its runs; in
mathtext, sub- and superscripts are set at 70 % of it, as in print, and are not counted
separately) in the SVG's user units. The browser says how wide the image is drawn; the
rendered size of a text is its body size times ``rendered width / viewBox width``.

The limits the course holds itself to (tests/test_figure_text.py): **11 px on a 1280 px
desktop, 9 px on a 390 px phone**, for every figure the reader can see at that width.
Prints one row per figure and width, smallest first; ``--all`` prints passing rows too.
"""
from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlparse

LIMITS = {1280: 11.0, 390: 9.0}
#: The content column at each viewport width (Material's layout, measured in Chromium): an
#: image is drawn at its own size, or shrunk to the column when it is wider.
COLUMN_PX = {1280: 688.0, 390: 358.0}
_NS = "{http://www.w3.org/2000/svg}"
_SIZE = re.compile(r"font-size:\s*([0-9.]+)px")
_FONT = re.compile(r"font:\s*(?:[a-z-]+\s+)*([0-9.]+)px")


def _own_size(el) -> float | None:
    style = el.get("style", "")
    m = _SIZE.search(style) or _FONT.search(style)
    if m:
        return float(m.group(1))
    if el.get("font-size"):
        return float(el.get("font-size").removesuffix("px"))
    return None


def svg_text_sizes(svg: bytes | str) -> tuple[float, list[float]]:
    """``(viewBox width, [body size of each text element])`` of one SVG, in user units.

    A text element inherits its size from the nearest ancestor that sets one; its body size
    is the largest size among itself and its ``<tspan>`` runs.
    """
    root = ET.fromstring(svg)
    box = root.get("viewBox")
    if not box:
        raise ValueError("svg has no viewBox: its rendered scale cannot be known")
    width = float(box.split()[2])
    sizes: list[float] = []

    def walk(el, inherited):
        own = _own_size(el)
        size = own if own is not None else inherited
        if el.tag == _NS + "text":
            runs = [s for s in (_own_size(t) for t in el.iter(_NS + "tspan")) if s is not None]
            body = max(runs + ([size] if size is not None and not runs else []), default=None)
            if body is not None and "".join(el.itertext()).strip():
                sizes.append(body)
            return
        for child in el:
            walk(child, size)

    walk(root, None)
    return width, sizes


_FILL = re.compile(r"(?:^|;)\s*fill:\s*(#[0-9a-fA-F]{6})")
_STROKE = re.compile(r"(?:^|;)\s*stroke:\s*(#[0-9a-fA-F]{6})")
_OPACITY = re.compile(r"stroke-opacity:\s*([0-9.]+)")
#: Text in these colours is a value printed inside a heatmap cell, black or white by the cell's
#: brightness (figures._kit.style.heatmap): it is read against the cell, not the page.
CELL_TEXT = ("#111111", "#ffffff")


def svg_colours(svg: bytes | str) -> tuple[set[str], set[str]]:
    """``(text colours, line colours)`` of one matplotlib SVG, as ``#rrggbb``.

    Text colours: the fill of every text run that draws something, except :data:`CELL_TEXT`.
    Line colours: the stroke of every plotted line (``line2d`` groups) drawn opaque, outside
    the axes' tick and grid groups (ticks take the theme's colours; grid lines are meant faint).
    """
    root = ET.fromstring(svg)
    texts: set[str] = set()
    lines: set[str] = set()

    def walk(el, fill, in_axis, in_line):
        style = el.get("style", "")
        m = _FILL.search(style)
        fill = m.group(1).lower() if m else fill
        gid = el.get("id", "")
        in_axis = in_axis or gid.startswith("matplotlib.axis")
        in_line = in_line or gid.startswith("line2d")
        if el.tag in (_NS + "text", _NS + "tspan") and (el.text or "").strip() and fill and fill not in CELL_TEXT:
            texts.add(fill)
        if el.tag == _NS + "path" and in_line and not in_axis:
            stroke = _STROKE.search(style)
            opacity = _OPACITY.search(style)
            if stroke and (opacity is None or float(opacity.group(1)) >= 1):
                lines.add(stroke.group(1).lower())
        for child in el:
            walk(child, fill, in_axis, in_line)

    walk(root, None, False, False)
    return texts, lines


@dataclass(frozen=True)
class Row:
    page: str       # site-relative page URL
    src: str        # site-relative SVG path
    width: int      # viewport width (px)
    drawn: float    # rendered image width (px)
    smallest: float  # smallest rendered body text (px); inf for a figure without text

    @property
    def limit(self) -> float:
        return LIMITS[self.width]

    @property
    def ok(self) -> bool:
        return self.smallest >= self.limit - 1e-6


_VISIBLE_FIGURES = """() => Array.from(document.querySelectorAll('figure.mha-figure img'))
  .filter(i => i.getBoundingClientRect().width > 0 && getComputedStyle(i).display !== 'none')
  .map(i => [i.currentSrc || i.src, i.getBoundingClientRect().width])"""


#: The interactive figures (explorers, the model viewer) draw their text in the page: the size
#: of each visible text is its computed font size, times the SVG's scale for SVG text.
_INTERACTIVE_TEXT = """() => {
  const out = [];
  for (const root of document.querySelectorAll('.mha-explorer')) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const seen = new Set();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!n.textContent.trim() || seen.has(el) || el.closest('script, style, [hidden]')) continue;
      seen.add(el);
      const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
      if (r.width < 2 || r.height < 2 || cs.visibility === 'hidden' || cs.display === 'none') continue;
      if (cs.clip && cs.clip !== 'auto' && cs.position === 'absolute') continue;  // visually hidden
      let size = parseFloat(cs.fontSize);
      if (el instanceof SVGElement && el.getScreenCTM()) {
        const m = el.getScreenCTM();
        size *= Math.hypot(m.a, m.b);
      }
      out.push([root.dataset.explorer + ':' + (el.getAttribute('class') || el.tagName.toLowerCase()), size]);
    }
  }
  return out;
}"""


def measure_page(page, base: str, url: str, site: Path, width: int, svg_cache: dict) -> list[Row]:
    """Rows for the figures visible on one page at the viewport width already set on ``page``:
    one per static figure, and one per interactive figure (its smallest visible text)."""
    from tools.screenshots import goto, load_all_images

    goto(page, base + url)
    load_all_images(page, timeout_ms=120_000)  # the print page holds every figure
    return measure_loaded(page, base, url, site, width, svg_cache)


def measure_loaded(page, base: str, url: str, site: Path, width: int, svg_cache: dict) -> list[Row]:
    """:func:`measure_page` on a page already loaded with its images (the tests' one tour of
    the site measures the page it loaded for every other check)."""
    rows = []
    smallest: dict[str, float] = {}
    for label, size in page.evaluate(_INTERACTIVE_TEXT):
        widget = label.split(":", 1)[0]
        if size < smallest.get(widget, (float("inf"), ""))[0]:
            smallest[widget] = (size, label)
    for widget, (size, label) in sorted(smallest.items()):
        rows.append(Row(url, f"explorer {label}", width, 0.0, round(size, 2)))
    for src, drawn in page.evaluate(_VISIBLE_FIGURES):
        path = urlparse(urljoin(base + url, src)).path.lstrip("/")
        if not path.endswith(".svg"):
            continue
        if path not in svg_cache:
            svg_cache[path] = svg_text_sizes((site / path).read_bytes())
        box, sizes = svg_cache[path]
        smallest = min(sizes) * drawn / box if sizes else float("inf")
        rows.append(Row(url, path, width, round(drawn, 1), round(smallest, 2)))
    return rows


def measure(site: Path, urls: list[str], widths=(1280, 390), scheme: str = "light", *,
            browser=None, base: str | None = None) -> list[Row]:
    """Every visible figure of every page in ``urls``, at every width, in one colour scheme
    (``light`` or ``dark``: the site follows the reader's system setting).

    ``browser`` (a Playwright Chromium) and ``base`` (the URL ``site`` is served at) may be
    given by a caller that has them (the tests share one browser); otherwise both are started here.
    """
    if browser is not None and base is not None:
        return _measure(browser, base, site, urls, widths, scheme)
    from playwright.sync_api import sync_playwright
    from tools.screenshots import ARGS, CHROMIUM, serve

    server, base = serve(site)
    try:
        with sync_playwright() as p:
            own = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                return _measure(own, base, site, urls, widths, scheme)
            finally:
                own.close()
    finally:
        server.shutdown()


def _measure(browser, base: str, site: Path, urls, widths, scheme: str) -> list[Row]:
    rows: list[Row] = []
    cache: dict = {}
    for width in widths:
        ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
        try:
            page = ctx.new_page()
            for url in urls:
                rows += measure_page(page, base, url, site, width, cache)
        finally:
            ctx.close()
    return rows


def estimate(svg: bytes, width: int) -> tuple[float, float]:
    """``(drawn width, smallest text)`` in px of an SVG in the column of a ``width`` viewport,
    without a browser: drawn at its own size (pt x 4/3) or shrunk to the column."""
    root = ET.fromstring(svg)
    natural = float(root.get("width", "0").removesuffix("pt")) * 4 / 3
    box, sizes = svg_text_sizes(svg)
    drawn = min(natural, COLUMN_PX[width])
    return drawn, (min(sizes) * drawn / box if sizes else float("inf"))


def check_files(paths: list[Path]) -> int:
    """Print the estimate of each SVG at both widths (a ``*-narrow*.svg`` at the phone width
    only, a file with a narrow sibling at the desktop width only); 1 if any is under its limit."""
    bad = 0
    for path in paths:
        sibling = path.with_name(path.stem.replace("-dark", "-narrow-dark") if path.stem.endswith("-dark")
                                 else path.stem + "-narrow").with_suffix(".svg")
        widths = [390] if "-narrow" in path.stem else [1280] if sibling.exists() else [1280, 390]
        for width in widths:
            drawn, small = estimate(path.read_bytes(), width)
            ok = small >= LIMITS[width] - 1e-6
            bad += not ok
            print(f"{'ok ' if ok else 'LOW'} {width:>5} {small:6.2f} px (limit {LIMITS[width]:g}) drawn {drawn:6.1f} px  {path}")
    return 1 if bad else 0


def main(argv=None) -> int:
    from tools.screenshots import pages

    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "--svg":  # figure_text.py --svg FILE...: estimate files, no site, no browser
        return check_files([Path(a) for a in argv[1:]])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("site", type=Path)
    p.add_argument("--widths", default="1280,390")
    p.add_argument("--pages", default="", help="comma-separated page names (default: every page)")
    p.add_argument("--all", action="store_true", help="print passing figures too")
    args = p.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    for w in widths:
        if w not in LIMITS:
            raise SystemExit(f"--widths: {w} has no limit; allowed: {', '.join(map(str, LIMITS))}")
    wanted = [x.strip("/") for x in args.pages.split(",") if x]
    urls = [u for u in pages(args.site) if not wanted or u.strip("/") in wanted]
    rows = sorted(measure(args.site, urls, widths), key=lambda r: (r.ok, r.smallest))
    for r in rows:
        if args.all or not r.ok:
            print(f"{'ok ' if r.ok else 'LOW'} {r.width:>5} {r.smallest:6.2f} px (limit {r.limit:g})"
                  f" drawn {r.drawn:6.1f} px  {r.src}  on /{r.page}")
    bad = [r for r in rows if not r.ok]
    print(f"{len(rows)} figure views, {len(bad)} below the limit; figures below: "
          f"{len({r.src.rsplit('/', 1)[-1] for r in bad})}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
