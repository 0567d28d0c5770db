"""The one browser tour of the built site: each page loaded once per configuration.

A configuration is a viewport and a colour scheme (:data:`CONFIGS`: a 1280 px desktop in light
and in dark, a 390 px phone). :meth:`Tour.visit` loads a page once in its configuration and
reads everything the page-level checks need from that one load (the dark desktop is the light
load switched with the page's own palette toggle, as a reader does: :data:`DARK_FROM_LIGHT`):
the requests it made and those that failed, console errors, its images, its math, its inline
code as the reader sees it, axe-core's verdict (desktop, light), the smallest text of every figure it shows (desktop and phone), the
layout shift while ``render_rest.js`` renders the later blocks, how many blocks the first screen
holds, every table and display formula that does not fit its column with the cues it shows and
any code whose copy button lies over its text (desktop and phone), the focus ring of each kind
of control against what is behind it (desktop, light and dark), and the horizontal overflow on a
phone. Every visit is kept, so a second check of the same page and configuration costs nothing:
a new page adds one load per width, not a tour.

Why dark is a switch and not a load of its own: the site's scripts never read the colour scheme
(the theme's CSS variables carry it), the light load already loads and checks every dark image
(lazy images are made eager, hidden ones included), so a second load in dark repeated the light
one's work for what only the switch shows: the scheme, and the focus rings and any console error
or request in dark. The scheme a reader whose system prefers dark gets at first load is checked
once, in a load of its own (tests/test_browser.py).

Each configuration keeps one browser tab and loads its pages in turn, as a reader clicking
through the site does: a new tab per page starts a new renderer process, which cost more of
Chromium's time than the page itself (measured: 10.7 s of Chromium's CPU for ten pages, one tab
per page; 4.5 s in one tab). Between two pages the tab goes to ``about:blank``, which ends the
earlier page (its timers and requests); events arrive for the visit being made only.

Full-page screenshots are not taken here (they cost more than the checks): ``make
screenshots`` takes them, or ``MHA_SCREENSHOTS=1`` makes the tour save them as it goes.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from helpers import ROOT

sys.path.insert(0, str(ROOT))
from tools.screenshots import Network, goto, load_all_images  # noqa: E402
from tools import figure_text  # noqa: E402

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
#: A second accessibility engine, HTML_CodeSniffer (pa11y's default), WCAG 2 AA: it reads the
#: markup differently from axe (it found the empty line-anchor links axe let pass).
HTMLCS = ROOT / "node_modules" / "html_codesniffer" / "build" / "HTMLCS.js"
#: What it reports on every page and this site cannot change: the theme's palette switch and
#: search box are forms without a submit button (they act as the reader types or clicks).
HTMLCS_THEME = {("WCAG2AA.Principle3.Guideline3_2.3_2_2.H32.2", "FORM", "md-header__option"),
                ("WCAG2AA.Principle3.Guideline3_2.3_2_2.H32.2", "FORM", "md-search__form")}
_HTMLCS_RUN = """() => new Promise((done) => HTMLCS.process('WCAG2AA', document, () => done(
  HTMLCS.getMessages().filter((m) => m.type === HTMLCS.ERROR).map((m) => [m.code, m.element ? m.element.tagName : '',
    m.element && typeof m.element.className === 'string' ? m.element.className : '',
    (m.element && m.element.outerHTML || '').slice(0, 200), m.msg.slice(0, 200)]))))"""
#: Pages axe-core checks whole; on the others it leaves out the site's navigation and the page's
#: table of contents (the same kinds of links in the same colours on every page: a quarter of
#: axe's time on each, and its colour-contrast rule took 2.2 s on mha/ with the contents, 1.2 s
#: without): the home page, a lecture page, a lab, an API page and the gallery hold each state
#: of them (top level, section, nested, current; a short and a long table of contents).
AXE_WHOLE_PAGE = {"", "mha/", "labs/lab1_mha/", "api/attention/", "gallery/"}
AXE_PART = "{exclude: [['.md-sidebar--primary'], ['.md-sidebar--secondary']]}"
SHOTS = ROOT / "test-output" / "screenshots"

CONFIGS = {
    "light": dict(viewport={"width": 1280, "height": 800}, color_scheme="light"),
    "dark": dict(viewport={"width": 1280, "height": 800}, color_scheme="dark"),
    "phone": dict(viewport={"width": 390, "height": 844}, color_scheme="light", is_mobile=True),
}
#: Configurations read from another's load, after its own checks, by switching the page's palette
#: (the header's toggle, clicked as a reader clicks it, and clicked back before the tab moves on).
DARK_FROM_LIGHT = {"dark": "light"}
_SWITCHED = ("(scheme) => document.body.getAttribute('data-md-color-scheme') === scheme"
             " && !document.body.hasAttribute('data-md-color-switching')")
#: The viewport width whose figure-text limit applies (tools/figure_text.LIMITS), per configuration.
TEXT_WIDTH = {"light": 1280, "phone": 390}
#: The narrowest phone checked for horizontal overflow (the page is re-laid out at this width).
NARROWEST = 375
#: The rule in extra.css that leaves blocks unrendered: ``.md-content__inner > :nth-child(n+13)``.
FIRST_SKIPPED = 13
RENDERED = "document.documentElement.hasAttribute('data-mha-rendered')"

_MATH = """(() => {
    const content = document.querySelector('.md-content');
    const blocks = Array.from(content.querySelectorAll('.arithmatex'));
    const prose = content.cloneNode(true);
    prose.querySelectorAll('.katex, pre, code, script, style, .clipboard-copy-txt').forEach(e => e.remove());
    const text = prose.textContent;
    return {blocks: blocks.length, rendered: blocks.filter(b => b.querySelector('.katex')).length,
            raw: ['$$', '\\\\(', '\\\\[', '\\\\)', '\\\\]'].filter(d => text.includes(d)),
            commands: (text.match(/\\\\[A-Za-z]{2,}/g) || []).slice(0, 5),
            escapes: (text.match(/.{0,30}\\\\".{0,30}/g) || []).slice(0, 5),
            errors: content.querySelectorAll('.katex-error').length,
            notebook: !!content.querySelector('.jupyter-wrapper'),
            notebook_math: content.querySelectorAll('.jupyter-wrapper .arithmatex .katex').length};
})()"""

# Inline code whose text the reader does not see as written: white space the browser collapsed
# (a leading or trailing space, a run of two), as model text in a table once lost its spaces. A
# line break in the page's source of a code span is a space (Markdown's rule), and so it shows;
# code in a folded block is not shown (checkVisibility), so not read.
_CODE = """Array.from(document.querySelectorAll('.md-content code')).filter(c => !c.closest('pre')
    && c.checkVisibility() && c.innerText !== c.textContent.replace(/\\n\\s*/g, ' '))
    .map(c => [c.textContent, c.innerText])"""

_EXPLORERS = "Array.from(document.querySelectorAll('.mha-explorer[data-explorer]')).map(e => e.dataset.explorer)"
_STARTED = ("Array.from(document.querySelectorAll('.mha-explorer[data-explorer]'))"
            ".filter(e => e.querySelector('.mha-explorer-ui[data-ready]')).map(e => e.dataset.explorer)")

_IMAGES = """Array.from(document.querySelectorAll('.md-content img')).map(i => (
    {src: i.getAttribute('src'), alt: i.getAttribute('alt') || '', w: i.naturalWidth}))"""

# Layout shift, summed from the first moment of every page the tour loads (an observer added
# before the page's own scripts run; buffered, so nothing before it is lost either). Shifts
# right after input do not count (as in CLS).
_SHIFTS = """(() => {
    let total = 0;
    const add = list => { for (const e of list) if (!e.hadRecentInput) total += e.value; };
    const observer = new PerformanceObserver(list => add(list.getEntries()));
    observer.observe({type: 'layout-shift', buffered: true});
    window.__mhaLayoutShift = () => { add(observer.takeRecords()); return total; };
})();"""

# The blocks on the first screen (laid out, so at their real size), the article's block count,
# and the layout shift so far (every entry since the page began to load, the ones the observer
# has not been handed yet included: takeRecords).
_LAYOUT = """() => {
    const inner = document.querySelector('.md-content__inner');
    // (an element with no box, such as the page's hidden provenance records, takes no room)
    const first = Array.from(inner.children).filter(el => el.getClientRects().length > 0
        && el.getBoundingClientRect().top + scrollY < innerHeight).length;
    return {first_screen: first, blocks: inner.children.length, cls: window.__mhaLayoutShift()};
}"""

_OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"

# Every table and display formula of the article: fits its column, or lies in a box that scrolls
# sideways and shows it. For each such box: its sizes, and its cues (a11y.js and extra.css) at
# the start and once scrolled to the end: the classes and shades on each side, and the hint
# (shown while there is more to the right, inside the box's visible area, its text size).
# `clipped`: part of one hidden by a box that cannot scroll; `spill`: one wider than the article
# outside any box (it would lie over the sidebar, or widen a phone's page).
_BOXES = """async () => {
    const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const inner = document.querySelector('.md-content__inner');
    const article = document.querySelector('.md-content').getBoundingClientRect();
    const label = el => (el.matches('table')
        ? (el.querySelector('caption') || el.querySelector('th') || el).textContent
        : (el.querySelector('annotation') || el).textContent).trim().replace(/\\s+/g, ' ').slice(0, 60);
    const boxes = new Map(), clipped = [], spill = [];
    let items = 0;
    for (const el of inner.querySelectorAll('table, .katex-display')) {
        if (el.closest('details:not([open])') || !el.getClientRects().length) continue;
        items++;
        let box = null;
        for (let b = el.parentElement; b && b !== inner; b = b.parentElement) {
            if (getComputedStyle(b).overflowX !== 'visible' && b.scrollWidth - b.clientWidth > 1) { box = b; break; }
        }
        const kind = el.matches('table') ? 'table' : 'formula';
        if (!box) {
            if (el.getBoundingClientRect().right > article.right + 1) spill.push([kind, label(el)]);
        } else if (['hidden', 'clip'].includes(getComputedStyle(box).overflowX)) {
            clipped.push([kind, label(el)]);
        } else if (!boxes.has(box)) {
            boxes.set(box, {kind, label: label(el), scroll: box.scrollWidth, client: box.clientWidth});
        }
    }
    const cue = box => {
        const hint = box.querySelector(':scope > .mha-scroll-hint');
        const r = box.getBoundingClientRect(), h = hint && hint.getBoundingClientRect();
        const style = hint && getComputedStyle(hint);
        const bg = getComputedStyle(box).backgroundImage;
        return {left: box.classList.contains('mha-more-left'), right: box.classList.contains('mha-more-right'),
                shades: (bg.match(/gradient/g) || []).length,
                hint: !!hint && style.visibility === 'visible' && style.display !== 'none' && h.width > 0
                      && h.left >= r.left - 1 && h.right <= r.right + 1 && h.top >= r.top - 1 && h.bottom <= r.bottom + 1
                      && hint.textContent.trim().length > 0,
                hint_px: hint ? parseFloat(style.fontSize) : 0,
                taller: box.scrollHeight - box.clientHeight};
    };
    // code blocks that scroll (the block's <code> is the scroller): shades, and no hint (its
    // text is what the copy button copies)
    for (const code of inner.querySelectorAll('pre > code')) {
        if (code.closest('details:not([open])') || !code.getClientRects().length) continue;
        if (code.scrollWidth - code.clientWidth > 1 && getComputedStyle(code).overflowX !== 'visible')
            boxes.set(code, {kind: 'code', label: code.textContent.trim().split('\\n')[0].slice(0, 60),
                             scroll: code.scrollWidth, client: code.clientWidth});
    }
    const list = Array.from(boxes.keys());
    list.forEach(b => { boxes.get(b).start = cue(b); b.scrollLeft = b.scrollWidth; });
    await frame();
    list.forEach(b => { boxes.get(b).end = cue(b); b.scrollLeft = 0; });
    await frame();
    return {items, clipped, spill, boxes: Array.from(boxes.values())};
}"""

# Code blocks whose copy button lies over their text (the button sits at the top right, over the
# end of a first line that reaches it): the first line of each.
_COVERED = """() => Array.from(document.querySelectorAll('.md-content pre')).flatMap(pre => {
    const nav = pre.querySelector(':scope > .md-code__nav'), code = pre.querySelector(':scope > code');
    if (!nav || !code || !nav.getClientRects().length || pre.closest('details:not([open])')) return [];
    const b = (nav.querySelector('button') || nav).getBoundingClientRect();
    const text = document.createRange();
    text.selectNodeContents(code);
    const under = Array.from(text.getClientRects()).some(t => t.width > 0 && t.height > 0
        && t.right > b.left && t.left < b.right && t.bottom > b.top && t.top < b.bottom);
    return under ? [code.textContent.trim().split('\\n')[0].slice(0, 70)] : [];
})"""

# The focus ring of the first visible control of each kind, focused as from the keyboard (after a
# real Tab press): its outline and its contrast against what lies behind it (the first opaque
# background among its ancestors, the ones above it blended in).
_FOCUS = """() => {
    const KINDS = {skip: '.md-skip', header: '.md-header__button, .md-header label, .md-header a[href]',
        nav: '.md-nav--primary .md-nav__link[href]', toc: '.md-nav--secondary .md-nav__link[href]',
        link: '.md-content .md-typeset :is(p, li, td) a[href]', headerlink: '.md-content .headerlink',
        summary: '.md-content summary', copy: '.md-content .md-clipboard, .md-content .md-code__button',
        figure: '.md-content .mha-zoom', region: '.md-content [role=region][tabindex="0"]',
        control: '.md-content :is(input, select, button)', footer: '.md-footer a[href]'};
    const rgba = c => {
        const m = c.match(/rgba?\\(([^)]+)\\)/);
        if (!m) return null;  // another colour syntax: no ratio, the check fails and shows it
        const v = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
        return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
    };
    const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
    const lum = c => {  // WCAG relative luminance
        const [r, g, b] = c.slice(0, 3).map(v => (v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const behind = el => {
        const layers = [];
        for (let a = el.parentElement; a; a = a.parentElement) {
            const c = rgba(getComputedStyle(a).backgroundColor);
            if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
        }
        return layers.reverse().reduce((under, top) => over(top, under), [255, 255, 255, 1]);
    };
    const out = [];
    for (const [kind, sel] of Object.entries(KINDS)) {
        const el = Array.from(document.querySelectorAll(sel)).find(e => e.getClientRects().length
            && getComputedStyle(e).visibility === 'visible'  // a summary shows while its own <details> is closed
            && !(e.matches('summary') ? e.parentElement.parentElement : e).closest('[hidden], details:not([open])'));
        if (!el) continue;
        el.focus({preventScroll: true});
        if (document.activeElement !== el) continue;  // not focusable (a label for a hidden input)
        const s = getComputedStyle(el), c = rgba(s.outlineColor), bg = behind(el);
        const ring = c && over(c, bg);
        const L = ring && [lum(ring), lum(bg)].sort((x, y) => y - x);
        out.push({kind, what: el.outerHTML.slice(0, 80), style: s.outlineStyle, width: parseFloat(s.outlineWidth),
                  colour: s.outlineColor, behind: `rgb(${bg.slice(0, 3).map(Math.round).join(', ')})`,
                  ratio: L ? Math.round((L[0] + 0.05) / (L[1] + 0.05) * 100) / 100 : 0});
    }
    if (document.activeElement) document.activeElement.blur();
    return out;
}"""


@dataclass
class Visit:
    """What one load of one page in one configuration showed."""

    config: str
    url: str
    requests: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    console: list = field(default_factory=list)
    images: list = field(default_factory=list)
    math: dict = field(default_factory=dict)
    code: list = field(default_factory=list)  # inline code not shown as written: (text, shown) (light, phone)
    axe: list | None = None         # serious or critical violations (desktop, light only)
    axe_rules: int = 0
    htmlcs: list | None = None      # HTML_CodeSniffer's errors, the theme's own aside (desktop, light only)
    scheme: str | None = None       # the theme's data-md-color-scheme
    layout: dict | None = None      # first_screen, blocks, cls
    figure_text: list = field(default_factory=list)  # figure_text.Row per figure shown
    overflow: dict = field(default_factory=dict)     # viewport width -> px of horizontal scroll
    boxes: dict | None = None       # tables and formulas that do not fit, and their cues (light, phone)
    covered: list | None = None     # code blocks whose copy button hides text (light, phone)
    focus: list | None = None       # focus ring per kind of control (light, dark)
    explorers: list = field(default_factory=list)  # the page's explorers by name (light)
    started: list = field(default_factory=list)    # those whose interface came up within 20 s (light)

    @property
    def external(self) -> list[str]:
        return [r for r in self.requests
                if urlparse(r).scheme in ("http", "https") and urlparse(r).hostname != "127.0.0.1"]


def _failed(request, seen: Visit) -> None:
    """``net::ERR_ABORTED`` is the browser cancelling its own request (an image of the other
    colour scheme whose download began before the stylesheet hid it): not a fault of the site;
    a missing file shows as a 4xx response instead."""
    if request.failure != "net::ERR_ABORTED":
        seen.failed.append(f"{request.url} ({request.failure})")


class Tour:
    """Visits of the built ``site`` (served at ``base``) in ``browser``, one per page and
    configuration, kept for the whole test session of this process."""

    def __init__(self, browser, base: str, site: Path):
        self.browser, self.base, self.site = browser, base, site
        self.visits: dict[tuple[str, str], Visit] = {}
        self._contexts: dict = {}
        self._tabs: dict = {}        # config -> (page, Network): one tab per configuration
        self._current: dict = {}     # config -> the Visit its tab is loading now (None between visits)
        self._svg_cache: dict = {}

    def _tab(self, config: str):
        """The configuration's one tab and its request tracker, made on first use, whose events
        are written into the visit being made (``self._current``) and dropped between visits."""
        if config not in self._tabs:
            ctx = self._contexts[config] = self.browser.new_context(**CONFIGS[config])
            ctx.add_init_script(_SHIFTS)
            page = ctx.new_page()

            def to(record):  # an event handler that writes into the current visit, if any
                return lambda event: record(self._current[config], event) if self._current.get(config) else None

            page.on("request", to(lambda v, r: v.requests.append(r.url)))
            page.on("requestfailed", to(lambda v, r: _failed(r, v)))
            page.on("response", to(lambda v, r: v.failed.append(f"{r.url} (HTTP {r.status})") if r.status >= 400 else None))
            page.on("console", to(lambda v, m: v.console.append(m.text) if m.type == "error" else None))
            page.on("pageerror", to(lambda v, e: v.console.append(str(e))))
            self._tabs[config] = (page, Network(page))
        return self._tabs[config]

    def visit(self, config: str, url: str, *, checks: bool = True) -> Visit:
        """The page at ``url`` (site-relative) in ``config``, loaded once.

        ``checks=False`` (the print page) reads only the figures and the layout, not the
        accessibility and request checks that a lecture page gets."""
        key = (config, url)
        if key in self.visits:
            return self.visits[key]
        if config not in CONFIGS:
            raise ValueError(f"config must be one of {', '.join(CONFIGS)}, got {config!r}")
        if config in DARK_FROM_LIGHT and checks:  # (unchecked, a load of its own: a page without the theme)
            self.visit(DARK_FROM_LIGHT[config], url)
            return self.visits[key]
        visit = Visit(config, url)
        page, network = self._tab(config)
        self._current[config] = visit
        try:
            goto(page, self.base + url, network)  # loaded, and no request for 100 ms
            self._read(page, config, url, visit, checks)
            switched = {dark: self._switch(page, network, dark, url) for dark, base in DARK_FROM_LIGHT.items()
                        if base == config and checks}
        except BaseException:  # a visit that failed hands its tab to nobody: the next makes a new one
            self._current[config] = None
            self._tabs.pop(config)
            self._contexts.pop(config).close()
            raise
        # the page ends here: nothing it does later is put down to the next visit
        self._current[config] = None
        page.goto("about:blank")
        network.forget()
        self.visits[key] = visit
        self.visits.update({(dark, url): v for dark, v in switched.items()})
        return visit

    def _switch(self, page, network, config: str, url: str) -> Visit:
        """The loaded page switched to ``config``'s scheme with its palette toggle (the header's
        button, clicked), read as a visit of its own (its events from the click on), and switched
        back, so the tab's next page loads in its own scheme."""
        visit = Visit(config, url)
        base = DARK_FROM_LIGHT[config]
        scheme = {"light": "default", "dark": "slate"}
        self._current[base] = visit
        toggle = "[data-md-component=palette] label:not([hidden])"
        page.locator(toggle).click()
        page.wait_for_function(_SWITCHED, arg=scheme[CONFIGS[config]["color_scheme"]], polling=50, timeout=10_000)
        network.wait_quiet(100)
        load_all_images(page, timeout_ms=60_000)
        visit.images = page.evaluate(_IMAGES)
        visit.math = page.evaluate(_MATH)
        visit.scheme = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
        # The click was a pointer's: focus from the keyboard again, backwards from the toggle (Tab
        # would focus the search box next to it, which opens the search over the header).
        page.keyboard.press("Shift+Tab")
        visit.focus = page.evaluate(_FOCUS)
        if os.environ.get("MHA_SCREENSHOTS") == "1":
            SHOTS.mkdir(parents=True, exist_ok=True)
            name = url.strip("/").replace("/", "_") or "home"
            page.screenshot(path=str(SHOTS / f"{name}-{config}.png"), full_page=True)
        page.locator(toggle).click()
        page.wait_for_function(_SWITCHED, arg=scheme[CONFIGS[base]["color_scheme"]], polling=50, timeout=10_000)
        return visit

    def _read(self, page, config: str, url: str, visit: Visit, checks: bool) -> None:
        """Everything the checks need from the loaded page (see the module's docstring)."""
        if config in TEXT_WIDTH:  # the layout while the later blocks render, before anything is forced
            page.wait_for_function(RENDERED, polling=100, timeout=60_000)
            visit.layout = page.evaluate(_LAYOUT)
        load_all_images(page, timeout_ms=120_000)  # the print page holds every figure
        if visit.layout is not None:  # and every shift since, up to now (before any input or resize)
            visit.layout["cls"] = page.evaluate("window.__mhaLayoutShift()")
        visit.images = page.evaluate(_IMAGES)
        visit.math = page.evaluate(_MATH)
        visit.scheme = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
        if config in TEXT_WIDTH:
            visit.code = page.evaluate(_CODE)
            visit.figure_text = figure_text.measure_loaded(page, self.base, url, self.site, TEXT_WIDTH[config],
                                                           self._svg_cache)
        if config == "light":  # the explorers the page holds, and which of them started
            visit.explorers = page.evaluate(_EXPLORERS)
            deadline = time.monotonic() + 20
            visit.started = page.evaluate(_STARTED)
            while len(visit.started) < len(visit.explorers) and time.monotonic() < deadline:
                page.wait_for_timeout(50)
                visit.started = page.evaluate(_STARTED)
        if checks and config == "light":
            page.add_script_tag(path=str(AXE))
            scope = "document" if url in AXE_WHOLE_PAGE else AXE_PART
            result = page.evaluate(f"axe.run({scope}, {{resultTypes: ['violations']}})")
            visit.axe = [(v["id"], v["impact"], len(v["nodes"]), v["nodes"][0]["target"])
                         for v in result["violations"] if v["impact"] in ("serious", "critical")]
            visit.axe_rules = len(result.get("passes", [])) + len(result["violations"])
            page.add_script_tag(path=str(HTMLCS))
            visit.htmlcs = [e for e in page.evaluate(_HTMLCS_RUN) if (e[0], e[1], e[2]) not in HTMLCS_THEME]
        if checks and config in TEXT_WIDTH:
            visit.boxes = page.evaluate(_BOXES)
            visit.covered = page.evaluate(_COVERED)
        if checks and config in ("light", "dark"):
            page.keyboard.press("Tab")  # keyboard focus from here on, as a reader who tabs
            visit.focus = page.evaluate(_FOCUS)
        if config == "phone":
            size = CONFIGS[config]["viewport"]
            visit.overflow[size["width"]] = page.evaluate(_OVERFLOW)
            page.set_viewport_size({"width": NARROWEST, "height": size["height"]})
            visit.overflow[NARROWEST] = page.evaluate(_OVERFLOW)
            page.set_viewport_size(size)
        if os.environ.get("MHA_SCREENSHOTS") == "1" and checks:
            SHOTS.mkdir(parents=True, exist_ok=True)
            name = url.strip("/").replace("/", "_") or "home"
            page.screenshot(path=str(SHOTS / f"{name}-{config}.png"), full_page=True)

    def close(self) -> None:
        for ctx in self._contexts.values():
            ctx.close()
        self._contexts.clear()
        self._tabs.clear()
