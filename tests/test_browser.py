"""The built site in a real browser: every page in every configuration, and the explorers.

Playwright drives Debian's Chromium (/usr/bin/chromium; the ``chromium`` fixture in conftest.py
installs it with apt when missing). The site is served on 127.0.0.1 only. The page checks read
the one tour of the site (tests/tour.py): each page is loaded once per width (1280 px in light,
then switched to dark with its palette toggle; 390 px phone) and every check of that page reads
that load. The counts
of what was checked go to ``test-output/browser-summary.json``; full-page screenshots are
``make screenshots``.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from helpers import nav_pages
from tools.screenshots import goto, load_all_images
from tour import AXE_WHOLE_PAGE, FIRST_SKIPPED, NARROWEST
from tools import figure_text

pytestmark = [pytest.mark.build, pytest.mark.browser]

PAGES = [url for _, url in nav_pages()]
#: The tour's configurations by xdist group: each group's loads are made on one worker.
GROUP = {"light": "desktop", "dark": "desktop", "phone": "phone"}
#: Pages outside the nav whose figures and layout are measured too: the whole lecture on one page.
EXTRA = ["print/"]


def _loaded_cleanly(v) -> None:
    """What every page must show in every configuration: its images loaded and described, its
    math rendered by KaTeX with no raw TeX left in the prose (notebook pages included: their
    Markdown cells go through nbconvert, which once ate the backslashes of \\( \\)), and no
    request to another host, no failed request, no console error."""
    assert all(i["w"] > 0 for i in v.images), [i["src"] for i in v.images if i["w"] == 0]
    assert all(i["alt"].strip() for i in v.images), [i["src"] for i in v.images if not i["alt"].strip()]
    m = v.math
    assert m["rendered"] == m["blocks"] and not m["raw"], m
    assert not m["commands"] and not m["errors"], m
    assert not m["escapes"], f"{v.url}: an escaped quote shows as text: {m['escapes']}"
    assert not m["notebook"] or m["notebook_math"] > 0, m
    assert not v.code, f"{v.url}: inline code shown otherwise than written (text, shown): {v.code[:5]}"
    assert not v.external, v.external
    assert not v.failed, v.failed
    assert not v.console, v.console


def _figure_text_ok(v) -> None:
    low = sorted((r.smallest, r.src) for r in v.figure_text if not r.ok)
    width = {"light": 1280, "phone": 390}[v.config]
    assert not low, f"{v.url}: {len(low)} figure views under {figure_text.LIMITS[width]} px at {width} px: {low[:10]}"


def _fits_or_shows_it_scrolls(v) -> None:
    """Every table and display formula fits its column or lies in a box that scrolls and shows
    it: at the start a shade on the right only and the hint (inside the box, text at least the
    figures' minimum), scrolled to the end a shade on the left only and no hint; the hint adds
    no height (the box never scrolls up and down). A code block that scrolls shows the same
    shades and no hint (its text is what its copy button copies). Nothing is cut off by a box
    that cannot scroll, nothing spills out of the article."""
    width = {"light": 1280, "phone": 390}[v.config]
    boxes = v.boxes
    assert not boxes["clipped"], f"{v.url}: cut off at {width} px: {boxes['clipped']}"
    assert not boxes["spill"], f"{v.url}: wider than the article at {width} px: {boxes['spill']}"
    bad = []
    for box in boxes["boxes"]:
        start, end = box["start"], box["end"]
        hinted = (not start["hint"] if box["kind"] == "code"
                  else start["hint"] and start["hint_px"] >= figure_text.LIMITS[width] and start["taller"] <= 0)
        if not (start["right"] and not start["left"] and start["shades"] == 1 and hinted
                and end["left"] and not end["right"] and end["shades"] == 1 and not end["hint"]):
            bad.append((box["kind"], box["label"], f"{box['scroll']} px in {box['client']}", start, end))
    assert not bad, f"{v.url}: {len(bad)} boxes at {width} px scroll without their cue: {bad}"
    assert not v.covered, f"{v.url}: the copy button lies over code at {width} px: {v.covered}"


def _focus_visible(v) -> None:
    """The focus ring of every kind of control on the page (links, navigation, buttons, the
    scrollable regions...) is drawn, at 3:1 or more against what is behind it (WCAG 2.2, 1.4.11)."""
    faint = [(f["kind"], f["style"], f["colour"], f["behind"], f["ratio"], f["what"])
             for f in v.focus if f["style"] == "none" or f["width"] <= 0 or f["ratio"] < 3]
    assert not faint, f"{v.url} ({v.config}): focus rings missing or under 3:1: {faint}"


def _layout_ok(v) -> None:
    """Layout shift while render_rest.js renders the later blocks (a block drawn a frame after the
    first paint would push what is below it down; what is left is the fonts' own, at most a few
    thousandths), and a first screen that never holds a skipped block: a margin of one block, so
    a first screen holding all FIRST_SKIPPED - 1 unskipped blocks fails (raise the rule's n+13)."""
    layout = v.layout
    assert layout["first_screen"] < FIRST_SKIPPED - 1, f"{v.url}: first screen holds {layout['first_screen']} blocks"
    if layout["blocks"] >= FIRST_SKIPPED:
        assert layout["cls"] < 0.01, f"{v.url}: layout shift {layout['cls']:.4f} at {v.config}"


@pytest.mark.xdist_group("tour-desktop")
@pytest.mark.parametrize("url", PAGES)
def test_page_on_a_desktop_in_light(tour, url):
    v = tour.visit("light", url)
    _loaded_cleanly(v)
    assert not v.axe, v.axe  # axe-core: no serious or critical violation
    assert v.htmlcs == [], v.htmlcs  # HTML_CodeSniffer (WCAG 2 AA): no error but the theme's two forms
    _figure_text_ok(v)
    _layout_ok(v)
    _fits_or_shows_it_scrolls(v)
    _focus_visible(v)


@pytest.mark.xdist_group("tour-desktop")  # the light load, switched to dark (tests/tour.py)
@pytest.mark.parametrize("url", PAGES)
def test_page_on_a_desktop_in_dark(tour, url):
    v = tour.visit("dark", url)
    assert v.scheme == "slate"
    _loaded_cleanly(v)
    _focus_visible(v)


def test_a_reader_whose_system_prefers_dark_gets_the_dark_page_at_first_load(browser, site_url):
    """The tour reads dark by switching a light page; a first load with the system's dark
    preference comes up in the dark scheme by itself, showing the dark figures only."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    page = ctx.new_page()
    try:
        goto(page, site_url + "attention/")
        load_all_images(page)
        assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
        shown = page.evaluate("""Array.from(document.querySelectorAll('.md-content figure img'))
            .filter(i => i.getClientRects().length).map(i => i.getAttribute('src'))""")
    finally:
        ctx.close()
    assert len(shown) >= 2 and all("-dark" in src and src.endswith("#only-dark") for src in shown), shown


@pytest.mark.xdist_group("tour-phone")
@pytest.mark.parametrize("url", PAGES)
def test_page_on_a_phone(tour, url):
    v = tour.visit("phone", url)
    _loaded_cleanly(v)
    assert all(px <= 0 for px in v.overflow.values()), f"{url} scrolls horizontally: {v.overflow} (width: px)"
    assert set(v.overflow) == {390, NARROWEST}
    _figure_text_ok(v)
    _layout_ok(v)
    _fits_or_shows_it_scrolls(v)


IN_GROUP = [pytest.param(c, marks=pytest.mark.xdist_group(f"tour-{GROUP[c]}")) for c in ("light", "phone")]


@pytest.mark.parametrize("config", IN_GROUP)
@pytest.mark.parametrize("url", EXTRA)
def test_the_printable_lecture_on_screen(tour, url, config):
    """print/ holds every figure: each readable at both widths, and nothing moves."""
    v = tour.visit(config, url, checks=False)
    assert len(v.figure_text) > 50
    _figure_text_ok(v)
    _layout_ok(v)


_PLANTED = """<!doctype html><html><head><title>{title}</title><link rel="icon" href="data:,"></head><body data-md-color-scheme="default">
<div class="md-content"><p>{title}</p><img src="{img}" alt="a figure"></div>
<script>{script}</script></body></html>"""


def test_the_tour_keeps_each_visit_to_its_own_page(browser, tmp_path):
    """One tab per configuration loads the pages in turn (tests/tour.py): what a page does while
    it is visited is put down to it (a console error after load, a missing image), and nothing it
    would do later reaches the next page's visit (its tab has gone to about:blank)."""
    from tools.screenshots import serve
    from tour import Tour

    (tmp_path / "fig.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')
    faulty = ("setTimeout(() => console.error('late but seen'), 50);"
              "setTimeout(() => console.error('after the visit'), 1500);"
              "setTimeout(() => fetch('gone-later.json'), 1500);")
    for name, img, script in (("faulty", "missing.svg", faulty), ("clean", "../fig.svg", ""), ("slow", "../fig.svg", "")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "index.html").write_text(_PLANTED.format(title=name, img=img, script=script))
    server, base = serve(tmp_path)
    tour = Tour(browser, base, tmp_path)
    try:
        faulty_visit = tour.visit("dark", "faulty/", checks=False)
        clean = tour.visit("dark", "clean/", checks=False)
        tour._tabs["dark"][0].wait_for_timeout(1800)  # past the faulty page's later timers
        slow = tour.visit("dark", "slow/", checks=False)
    finally:
        tour.close()
        server.shutdown()
    assert [m for m in faulty_visit.console if "404" not in m] == ["late but seen"], faulty_visit.console
    assert any("missing.svg" in f and "404" in f for f in faulty_visit.failed), faulty_visit.failed
    assert [i["w"] for i in faulty_visit.images] == [0]
    for v in (clean, slow):
        assert not v.console and not v.failed, (v.url, v.console, v.failed)
        assert not [r for r in v.requests if "gone-later" in r or "missing" in r], v.requests
        assert [i["w"] for i in v.images] == [10], v.images


def test_the_tour_reads_inline_code_as_the_reader_sees_it(browser):
    """The tour's reading of inline code (tests/tour.py, _CODE) on a planted page: a leading
    space and a run of two that the browser collapses are found (model text in the sampling
    tables lost them); a line break in a code span's source, code kept as written
    (white-space: pre-wrap), and code in a folded block are not."""
    from tour import _CODE

    page = browser.new_page()
    try:
        page.set_content('<div class="md-content"><p><code> lead</code> <code>a  b</code> <code>one\n  line</code>'
                         ' <code style="white-space: pre-wrap"> kept  </code></p><p><code>plain</code></p>'
                         '<details><summary><code>shown</code></summary><code> folded</code></details></div>')
        assert page.evaluate(_CODE) == [[" lead", "lead"], ["a  b", "a b"]]
    finally:
        page.close()


@pytest.mark.parametrize("config", IN_GROUP)
def test_the_tour_measured_enough(tour, config):
    """The checks above are not vacuous: many pages show figures, many are long enough to
    have skipped blocks."""
    visits = [tour.visit(config, url) for url in PAGES]
    assert sum(bool(v.figure_text) for v in visits) >= 10
    assert sum(v.layout["blocks"] >= FIRST_SKIPPED for v in visits) >= 10
    assert sum(len(v.images) for v in visits) > 100
    assert sum(v.boxes["items"] for v in visits) > 80  # tables and formulas measured
    tables = [b for v in visits for b in v.boxes["boxes"] if b["kind"] != "code"]
    if config == "phone":  # a few still scroll there (and show it): the cue's check ran
        assert len(tables) >= 3
        assert sum(b["kind"] == "code" for v in visits for b in v.boxes["boxes"]) >= 10  # install lines, code
    else:  # on a desktop only the API reference's table of a docstring's code block scrolls
        assert AXE_WHOLE_PAGE <= set(PAGES), AXE_WHOLE_PAGE - set(PAGES)  # the navigation is checked somewhere
        assert len(tables) <= 2
        kinds = [f["kind"] for v in visits for f in v.focus]
        for kind in ("skip", "header", "nav", "toc", "link", "figure", "copy", "summary", "footer"):
            assert kinds.count(kind) >= 3, (kind, kinds.count(kind))


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    p = ctx.new_page()
    errors = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    yield p
    ctx.close()
    assert not errors, errors


def _cells(page) -> np.ndarray:
    values = page.eval_on_selector_all(".mha-maps table", """tables => tables.map(t =>
        Array.from(t.querySelectorAll('tbody tr')).map(r => Array.from(r.querySelectorAll('td')).map(td => Number(td.dataset.value))))""")
    return np.array(values)


def test_heads_explorer_matches_mhalib(page, site_url):
    from mhalib import examples

    goto(page, site_url + "heads/")
    assert page.is_visible(".mha-explorer-ui") and not page.is_visible(".mha-explorer-static")
    expected = examples.heads_in_action("Identity")  # tau = sqrt(2) by default
    np.testing.assert_allclose(_cells(page), [expected[k] for k in ("single", "head1", "head2")], atol=1e-12)
    shown = page.eval_on_selector(".mha-maps td", "td => td.textContent")
    assert shown == f"{expected['single'][0][0]:.2f}"
    labels = page.eval_on_selector_all(".mha-maps table:first-child thead th", "ths => ths.map(t => t.textContent)")
    assert labels[1:] == ["The", "cat", "sat", "down"]

    page.select_option(".mha-explorer-ui select", "Swap K blocks")
    page.fill(".mha-explorer-ui input[type=range]", "0.5")
    expected = examples.heads_in_action("Swap K blocks", 0.5)
    np.testing.assert_allclose(_cells(page), [expected[k] for k in ("single", "head1", "head2")], atol=1e-12)
    assert page.text_content(".mha-explorer-ui output") == "0.50"

    # keyboard: focus the slider and step it with the arrow key
    page.focus(".mha-explorer-ui input[type=range]")
    page.keyboard.press("ArrowRight")
    tau = float(page.eval_on_selector(".mha-explorer-ui", "ui => ui.dataset.tau"))
    assert tau == pytest.approx(0.51)
    expected = examples.heads_in_action("Swap K blocks", tau)
    np.testing.assert_allclose(_cells(page), [expected[k] for k in ("single", "head1", "head2")], atol=1e-12)
    # every control has a label a screen reader can announce
    unlabeled = page.evaluate("""Array.from(document.querySelectorAll('.mha-explorer-ui input, .mha-explorer-ui select'))
        .filter(e => !(e.labels && e.labels.length)).length""")
    assert unlabeled == 0


def test_explorer_functions_agree_with_mhalib_on_a_grid(page, site_url):
    import mhalib
    from mhalib import examples

    goto(page, site_url + "heads/")
    data = json.loads(page.text_content(".mha-explorer-data"))
    taus = [0.1, 0.5, 1.0, math.sqrt(2), 3.0, 5.0]
    got = page.evaluate("""([data, presets, taus]) => presets.map(p => taus.map(t => mhaExplorers.headsInAction(data, p, t)))""",
                        [data, list(examples.HEADS_PRESETS), taus])
    for p, preset in enumerate(examples.HEADS_PRESETS):
        for t, tau in enumerate(taus):
            want = examples.heads_in_action(preset, tau)
            for key in ("single", "head1", "head2"):
                np.testing.assert_allclose(got[p][t][key], want[key], atol=1e-12)

    grid = [(m, n, th) for m in (0, 1, 7) for n in (0, 3, 12) for th in (0.0, 0.5, 1.3)]
    q, k = [1.0, 0.3], [0.8, -0.5]
    scores = page.evaluate("([q, k, grid]) => grid.map(([m, n, th]) => mhaExplorers.ropeScore(q, k, m, n, th))", [q, k, grid])
    for (m, n, th), s in zip(grid, scores):
        rq = mhalib.apply_rope(np.array([q]), np.array([m * th]))[0]  # d = 2: theta_0 = 1
        rk = mhalib.apply_rope(np.array([k]), np.array([n * th]))[0]
        assert s == pytest.approx(rq @ rk, abs=1e-12)

    for n_pos, d in ((1, 2), (7, 4), (50, 16), (20, 128)):
        table = page.evaluate("([n, d]) => mhaExplorers.peTable(n, d, 10000)", [n_pos, d])
        np.testing.assert_allclose(table, mhalib.sinusoidal_encoding(n_pos, d), atol=1e-12)
        lam = page.evaluate("d => mhaExplorers.wavelengths(d, 10000)", d)
        np.testing.assert_allclose(lam, mhalib.wavelengths(d), rtol=1e-12)


def test_rope_and_pe_explorers_respond(page, site_url):
    import mhalib

    goto(page, site_url + "rope/")
    sliders = page.locator(".mha-explorer-ui input[type=range]")
    sliders.nth(0).fill("0.7")
    sliders.nth(1).fill("2")
    sliders.nth(2).fill("5")
    score = float(page.eval_on_selector(".mha-readout", "p => p.dataset.score"))
    rq = mhalib.apply_rope(np.array([[1.0, 0.3]]), np.array([2 * 0.7]))[0]
    rk = mhalib.apply_rope(np.array([[0.8, -0.5]]), np.array([5 * 0.7]))[0]
    assert score == pytest.approx(rq @ rk, abs=1e-12)
    same = page.eval_on_selector_all(".mha-same-offset tbody td:nth-child(3)", "tds => tds.map(t => t.textContent)")
    assert len(set(same)) == 1 and same[0] == f"{rq @ rk:.4f}"

    goto(page, site_url + "sinusoidal/")
    sliders = page.locator(".mha-explorer-ui input[type=range]")
    sliders.nth(0).fill("32")
    sliders.nth(1).fill("10")
    readout = page.text_content(".mha-explorer-ui .mha-readout")
    lam = mhalib.wavelengths(32)
    assert f"dims 2–3: {lam[1]:.2f}" in readout and f"dims 30–31: {lam[-1]:.2f}" in readout
    assert "10 positions" in page.get_attribute(".mha-pe-canvas", "aria-label")


def test_explorers_work_after_instant_navigation(page, site_url):
    goto(page, site_url)
    page.click("nav.md-nav--primary a[href$='heads/']")
    page.wait_for_selector(".mha-explorer-ui:not([hidden]) table")
    assert page.evaluate("document.querySelectorAll('.mha-maps table').length") == 3


def test_a_wide_box_in_a_folded_solution_becomes_reachable_when_it_opens(browser, site_url):
    """a11y.js leaves boxes in a closed <details> unmeasured (measuring one lays out the hidden
    content for nothing) and measures them when it opens: on a phone a solution's wide code
    box then scrolls with the keyboard, like every other wide box."""
    ctx = browser.new_context(viewport={"width": 390, "height": 800})
    page = ctx.new_page()
    goto(page, site_url + "labs/lab1_mha/")
    boxes = ".md-typeset__scrollwrap, .md-typeset .arithmatex, .jp-OutputArea-output pre, .highlight pre, .highlight-ipynb"
    fold = page.locator("details.mha-solution").first
    assert fold.evaluate("d => d.open") is False
    assert fold.evaluate(f"d => d.querySelectorAll(`{boxes}`).length") > 0
    assert fold.evaluate("d => d.querySelectorAll('[role=region]').length") == 0
    fold.locator("summary").click()
    page.wait_for_function("d => d.querySelector('[role=region][tabindex=\"0\"]')", arg=fold.element_handle(), polling=100)
    marked = fold.evaluate(f"""d => Array.from(d.querySelectorAll(`{boxes}`)).map(b =>
        [b.scrollWidth > b.clientWidth, b.getAttribute('tabindex'), b.getAttribute('role')])""")
    assert any(wide for wide, _, _ in marked)
    assert all((t, r) == ("0", "region") for wide, t, r in marked if wide)
    assert all(t is None for wide, t, _ in marked if not wide)
    ctx.close()


def test_waiting_for_images_names_the_one_that_never_arrives(page, site_url):
    """The screenshot and text-size tools wait for every image; one whose request is never
    answered fails the wait with the page and the image named, not a bare timeout."""
    goto(page, site_url)
    load_all_images(page)  # the home page's own images load
    page.route("**/figures/never-answered.svg", lambda route: None)  # the request stays open
    page.evaluate("document.body.append(Object.assign(new Image(), {src: 'figures/never-answered.svg'}))")
    with pytest.raises(TimeoutError, match=r"1 of its images or blocks still loading after 0\.5 s.*never-answered\.svg"):
        load_all_images(page, timeout_ms=500)
    assert site_url in str(page.url)


def test_waiting_for_images_waits_for_the_blocks_rendered_after_the_first_paint(page, site_url):
    """A long page leaves its later blocks for render_rest.js (a figure in a skipped block
    measures 120 px wide): the tools that measure or photograph figures wait for those too."""
    goto(page, site_url + "sinusoidal/")
    load_all_images(page)
    assert page.evaluate("document.documentElement.hasAttribute('data-mha-rendered')")
    page.evaluate("document.documentElement.removeAttribute('data-mha-rendered')")  # as if not yet done
    with pytest.raises(TimeoutError, match=r"1 of its images or blocks still loading.*render_rest\.js has not rendered"):
        load_all_images(page, timeout_ms=500)
    page.evaluate("document.documentElement.setAttribute('data-mha-rendered', '')")
    load_all_images(page, timeout_ms=500)


def test_without_javascript_the_static_figure_is_shown(browser, site_url):
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    for url in ("heads/", "rope/", "sinusoidal/"):
        page.goto(site_url + url)
        assert page.locator(".mha-explorer-static img").first.is_visible()
        assert not page.is_visible(".mha-explorer-ui")
    ctx.close()


def test_lab_solutions_stay_folded_until_asked(page, site_url):
    """A lab's exercise shows its unfinished check; its solution opens on a click, with its
    math rendered and its check saying right."""
    goto(page, site_url + "labs/lab2_positions/")
    folds = page.locator("details.mha-solution")
    assert folds.count() == 3
    first = folds.first
    assert first.evaluate("d => d.open") is False
    assert not first.locator(".jp-CodeCell").first.is_visible()
    exercise = page.locator(".jp-CodeCell:has-text('TODO')").first
    assert "not yet:" in exercise.inner_text()
    first.locator("summary").click()
    assert first.evaluate("d => d.open") is True
    assert first.locator(".jp-CodeCell").first.is_visible()
    assert "right:" in first.inner_text() and "not yet:" not in first.inner_text()
    second = folds.nth(1)  # its explanation holds math
    second.locator("summary").click()
    assert second.locator(".arithmatex .katex").count() >= 4
    # the install line at the top, before the notebook
    box = page.locator(".mha-download").first
    assert box.is_visible() and "pip install mhalib-" in box.inner_text()


def _phone(browser, **options):
    return browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, **options)


@pytest.mark.parametrize("url", ["compare/", "notation/"])
def test_tables_read_across_are_a_card_per_row_on_a_phone(browser, site_url, url):
    """The methods side by side (compare/) and the symbols (notation/) on a phone: each row a
    card, its first cell the title, every other cell labelled with its column's header (its
    words, or the last of them); nothing scrolls. On a desktop they are tables again."""
    ctx = _phone(browser)
    page = ctx.new_page()
    goto(page, site_url + url)
    tables = page.locator(".mha-stack table")
    assert tables.count() == {"compare/": 1, "notation/": 3}[url]
    for t in range(tables.count()):
        table = tables.nth(t)
        header = table.locator("thead th").all_text_contents()
        rows = table.evaluate("""t => Array.from(t.querySelectorAll('tbody tr')).map(tr => Array.from(tr.cells).map((td, i) => {
            const label = getComputedStyle(td, '::before').content;
            return {label: i && label !== 'none' ? JSON.parse(label) : null, left: Math.round(td.getBoundingClientRect().left)};
        }))""")
        assert len(rows) >= 3 and all(len(r) == len(header) for r in rows)
        for cells in rows:
            assert cells[0]["label"] is None
            for cell, head in zip(cells[1:], header[1:]):
                assert cell["label"] and cell["label"].lower() in head.lower(), (cell["label"], head)
            assert len({c["left"] for c in cells}) == 1  # one cell under the other
        assert table.locator("thead").evaluate("h => h.getBoundingClientRect().width") <= 1  # for screen readers only
    wraps = page.locator(".mha-stack .md-typeset__scrollwrap")
    assert wraps.evaluate_all("ws => ws.map(w => w.scrollWidth - w.clientWidth)") == [0] * tables.count()
    ctx.close()
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    goto(page, site_url + url)
    assert page.locator(".mha-stack thead").first.evaluate("h => getComputedStyle(h).display") == "table-header-group"
    assert page.locator(".mha-stack tbody tr").first.evaluate("tr => getComputedStyle(tr).display") == "table-row"
    ctx.close()


_REUSE = """r => ({h: r.getBoundingClientRect().height, links: Array.from(r.querySelectorAll('a'))
    .filter(a => a.getClientRects().length).length, text: r.innerText.trim()})"""


def test_a_reuse_row_is_one_line_that_opens_on_a_phone(browser, site_url):
    """On a phone a figure's reuse row (files, command line, credit) is one line, a button; its
    links are not displayed (so not focusable) until it opens. Without JavaScript, and on a
    desktop, the row is open and there is no button."""
    ctx = _phone(browser)
    page = ctx.new_page()
    goto(page, site_url + "sinusoidal/")
    row = page.locator(".mha-reuse").first
    closed = row.evaluate(_REUSE)
    assert closed["h"] <= 30 and closed["links"] == 0 and closed["text"] == "Reuse and credit", closed
    button = row.locator(".mha-reuse-toggle")
    assert button.get_attribute("aria-expanded") == "false"
    button.click()
    opened = row.evaluate(_REUSE)
    assert button.get_attribute("aria-expanded") == "true"
    assert opened["links"] >= 8 and "Credit:" in opened["text"] and "python -m figures " in opened["text"], opened
    button.click()
    assert row.evaluate(_REUSE) == closed
    ctx.close()
    for ctx in (_phone(browser, java_script_enabled=False), browser.new_context(viewport={"width": 1280, "height": 800})):
        page = ctx.new_page()
        goto(page, site_url + "sinusoidal/")
        row = page.locator(".mha-reuse").first
        shown = row.evaluate(_REUSE)
        assert shown["links"] >= 8 and "Credit:" in shown["text"], shown
        assert not row.locator(".mha-reuse-toggle").is_visible()
        ctx.close()


def test_a_dark_page_prints_on_white_paper(browser, site_url):
    """Printed from the dark scheme with background graphics, a page is white to its edges: the
    sheet's margins once took the dark scheme's canvas colour, a black frame round the page.
    Read in the PDF's drawing operations: the fills that cover most of a sheet are all white."""
    import re
    import zlib

    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    page = ctx.new_page()
    goto(page, site_url + "attention/")
    load_all_images(page)
    page.emulate_media(media="print", color_scheme="dark")
    pdf = page.pdf(print_background=True, format="A4")  # 794 x 1123 px a sheet
    ctx.close()
    fills = []
    for stream in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf, flags=re.S):
        try:
            ops = zlib.decompress(stream)
        except zlib.error:
            continue  # an image or a font
        for m in re.finditer(rb"([\d.]+) ([\d.]+) ([\d.]+) rg\s+(?:[^\n]*\n){0,3}?[^\n]*?"
                             rb"-?[\d.]+ -?[\d.]+ ([\d.]+) ([\d.]+) re\s+f", ops):
            if float(m.group(4)) > 600 and float(m.group(5)) > 900:
                fills.append(tuple(float(c) for c in m.group(1, 2, 3)))
    assert fills, "no fill of a whole sheet found: has the PDF's form changed?"
    assert all(min(c) > 0.95 for c in fills), sorted(set(fills))


def test_masked_cells_of_the_tiny_decoders_do_not_glare_in_dark_mode(browser, site_url):
    """A tiny decoder's thumbnails leave the cells a causal model cannot see (above the
    diagonal) transparent over a faint hatch in the page's colours: in dark mode they stay dark,
    where a fixed grey (150) glared."""
    from io import BytesIO

    from PIL import Image

    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page = ctx.new_page()
    goto(page, site_url + "viewer/")
    box = ".mha-explorer[data-explorer=tiny] "
    page.wait_for_selector(box + ".mha-explorer-ui[data-ready] .bv-thumb canvas")
    canvas = page.locator(box + ".bv-thumb canvas").first
    canvas.scroll_into_view_if_needed()
    alpha = canvas.evaluate("c => { const d = c.getContext('2d').getImageData(c.width - 1, 0, 1, 1).data; return [d[3], c.width]; }")
    assert alpha[0] == 0 and alpha[1] > 2  # the top right cell: masked, transparent
    shot = Image.open(BytesIO(canvas.screenshot())).convert("L")
    w, h = shot.size
    corner = [shot.getpixel((x, y)) for x in range(w * 3 // 4, w) for y in range(0, h // 4)]  # masked cells
    r, g, b = page.evaluate("getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number)")
    page_bg = (299 * r + 587 * g + 114 * b) / 1000  # as PIL's "L"
    assert sum(corner) / len(corner) < page_bg + 40 < 150, (sum(corner) / len(corner), page_bg)
    ctx.close()


_BOX = """() => { const b = document.getElementById('mha-prov');
  if (!b || b.hidden) return null;
  const r = b.getBoundingClientRect();
  return {text: b.innerText, left: r.left, right: r.right, top: r.top, bottom: r.bottom,
          inside: b.contains(document.activeElement), width: document.documentElement.clientWidth}; }"""


def test_a_number_says_where_it_comes_from_on_focus_hover_and_tap(browser, site_url):
    """A number the build inserted is a control: focused (Tab), hovered or tapped, a box under it
    names its script, its path in data(), the command and the tests, without moving the page;
    Tab goes into the box, Esc closes it and gives focus back. A number in a formula opens on
    hover; a reuse row's "Where from" opens the figure's record. On a phone the box fits the screen."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    goto(page, site_url + "one_head/")
    value = page.locator(".mha-value[role=button]:visible").first
    source = value.get_attribute("data-source")
    script, path = source.split(" ", 1)
    block = "(v) => { const b = v.closest('.md-content__inner > *').getBoundingClientRect(); return [b.top + scrollY, b.height]; }"
    before = value.evaluate(block)
    value.focus()
    box = page.evaluate(_BOX)
    assert box, "no box on focus"
    assert f"{script}.py" in box["text"] and path in box["text"], box["text"]
    assert f"python -m figures {script} --out {script}.json" in box["text"]
    assert "Tests that name it" in box["text"] and "tests/test_" in box["text"]
    assert value.get_attribute("aria-expanded") == "true"
    assert value.evaluate(block) == before  # nothing moved
    assert box["top"] >= value.bounding_box()["y"] + value.bounding_box()["height"] - 1
    page.keyboard.press("Tab")
    assert page.evaluate(_BOX)["inside"], "Tab does not reach the box's link"
    page.keyboard.press("Escape")
    assert page.evaluate(_BOX) is None
    assert page.evaluate("document.activeElement.dataset.source") == source
    assert value.get_attribute("aria-expanded") == "false"
    # a number in a formula, on hover
    in_math = page.locator(".katex [data-source]").first
    in_math.scroll_into_view_if_needed()
    in_math.hover()
    page.wait_for_timeout(50)
    box = page.evaluate(_BOX)
    assert box and in_math.get_attribute("data-source").split(" ", 1)[1] in box["text"], box
    page.mouse.move(5, 5)
    page.wait_for_timeout(450)
    assert page.evaluate(_BOX) is None, "the box stays after the pointer left"
    # a reuse row's button
    button = page.locator(".mha-reuse .mha-prov-button").first
    button.scroll_into_view_if_needed()
    button.click()
    box = page.evaluate(_BOX)
    assert box and box["text"].startswith("Made by") and "Recompute" in box["text"], box
    page.mouse.click(5, 400)
    assert page.evaluate(_BOX) is None
    # a phone: tapped, inside the screen
    page.set_viewport_size({"width": 390, "height": 844})
    value.scroll_into_view_if_needed()
    value.click()
    box = page.evaluate(_BOX)
    assert box and box["left"] >= 0 and box["right"] <= box["width"], box
    ctx.close()
