"""The built site in a real browser: every page in every configuration, and the explorers.

Playwright drives Debian's Chromium (/usr/bin/chromium; the ``chromium`` fixture in conftest.py
installs it with apt when missing). The site is served on 127.0.0.1 only. The page checks read
the one tour of the site (tests/tour.py): each page is loaded once per configuration (1280 px
light, 1280 px dark, 390 px phone) and every check of that page reads that load. The counts
of what was checked go to ``test-output/browser-summary.json``; full-page screenshots are
``make screenshots``.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from helpers import nav_pages
from screenshots import load_all_images
from tour import FIRST_SKIPPED, NARROWEST
from tools import figure_text

pytestmark = [pytest.mark.build, pytest.mark.browser]

PAGES = [url for _, url in nav_pages()]
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
    assert not m["notebook"] or m["notebook_math"] > 0, m
    assert not v.external, v.external
    assert not v.failed, v.failed
    assert not v.console, v.console


def _figure_text_ok(v) -> None:
    low = sorted((r.smallest, r.src) for r in v.figure_text if not r.ok)
    width = {"light": 1280, "phone": 390}[v.config]
    assert not low, f"{v.url}: {len(low)} figure views under {figure_text.LIMITS[width]} px at {width} px: {low[:10]}"


def _layout_ok(v) -> None:
    """Layout shift while render_rest.js renders the later blocks (a block drawn a frame after the
    first paint would push what is below it down; what is left is the fonts' own, at most a few
    thousandths), and a first screen that never holds a skipped block: a margin of one block, so
    a first screen holding all FIRST_SKIPPED - 1 unskipped blocks fails (raise the rule's n+13)."""
    layout = v.layout
    assert layout["first_screen"] < FIRST_SKIPPED - 1, f"{v.url}: first screen holds {layout['first_screen']} blocks"
    if layout["blocks"] >= FIRST_SKIPPED:
        assert layout["cls"] < 0.01, f"{v.url}: layout shift {layout['cls']:.4f} at {v.config}"


@pytest.mark.xdist_group("tour-light")
@pytest.mark.parametrize("url", PAGES)
def test_page_on_a_desktop_in_light(tour, url):
    v = tour.visit("light", url)
    _loaded_cleanly(v)
    assert not v.axe, v.axe  # axe-core: no serious or critical violation
    _figure_text_ok(v)
    _layout_ok(v)


@pytest.mark.xdist_group("tour-dark")
@pytest.mark.parametrize("url", PAGES)
def test_page_on_a_desktop_in_dark(tour, url):
    v = tour.visit("dark", url)
    assert v.scheme == "slate"
    _loaded_cleanly(v)


@pytest.mark.xdist_group("tour-phone")
@pytest.mark.parametrize("url", PAGES)
def test_page_on_a_phone(tour, url):
    v = tour.visit("phone", url)
    _loaded_cleanly(v)
    assert all(px <= 0 for px in v.overflow.values()), f"{url} scrolls horizontally: {v.overflow} (width: px)"
    assert set(v.overflow) == {390, NARROWEST}
    _figure_text_ok(v)
    _layout_ok(v)


IN_GROUP = [pytest.param(c, marks=pytest.mark.xdist_group(f"tour-{c}")) for c in ("light", "phone")]


@pytest.mark.parametrize("config", IN_GROUP)
@pytest.mark.parametrize("url", EXTRA)
def test_the_printable_lecture_on_screen(tour, url, config):
    """print/ holds every figure: each readable at both widths, and nothing moves."""
    v = tour.visit(config, url, checks=False)
    assert len(v.figure_text) > 50
    _figure_text_ok(v)
    _layout_ok(v)


@pytest.mark.parametrize("config", IN_GROUP)
def test_the_tour_measured_enough(tour, config):
    """The checks above are not vacuous: many pages show figures, many are long enough to
    have skipped blocks."""
    visits = [tour.visit(config, url) for url in PAGES]
    assert sum(bool(v.figure_text) for v in visits) >= 10
    assert sum(v.layout["blocks"] >= FIRST_SKIPPED for v in visits) >= 10
    assert sum(len(v.images) for v in visits) > 100


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

    page.goto(site_url + "heads/", wait_until="networkidle")
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

    page.goto(site_url + "heads/", wait_until="networkidle")
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

    page.goto(site_url + "rope/", wait_until="networkidle")
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

    page.goto(site_url + "sinusoidal/", wait_until="networkidle")
    sliders = page.locator(".mha-explorer-ui input[type=range]")
    sliders.nth(0).fill("32")
    sliders.nth(1).fill("10")
    readout = page.text_content(".mha-explorer-ui .mha-readout")
    lam = mhalib.wavelengths(32)
    assert f"dims 2–3: {lam[1]:.2f}" in readout and f"dims 30–31: {lam[-1]:.2f}" in readout
    assert "10 positions" in page.get_attribute(".mha-pe-canvas", "aria-label")


def test_explorers_work_after_instant_navigation(page, site_url):
    page.goto(site_url, wait_until="networkidle")
    page.click("nav.md-nav--primary a[href$='heads/']")
    page.wait_for_selector(".mha-explorer-ui:not([hidden]) table")
    assert page.evaluate("document.querySelectorAll('.mha-maps table').length") == 3


def test_a_wide_box_in_a_folded_solution_becomes_reachable_when_it_opens(browser, site_url):
    """a11y.js leaves boxes in a closed <details> unmeasured (measuring one lays out the hidden
    content for nothing) and measures them when it opens: on a phone a solution's wide code
    box then scrolls with the keyboard, like every other wide box."""
    ctx = browser.new_context(viewport={"width": 390, "height": 800})
    page = ctx.new_page()
    page.goto(site_url + "labs/lab1_mha/", wait_until="networkidle")
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
    page.goto(site_url, wait_until="networkidle")
    load_all_images(page)  # the home page's own images load
    page.route("**/figures/never-answered.svg", lambda route: None)  # the request stays open
    page.evaluate("document.body.append(Object.assign(new Image(), {src: 'figures/never-answered.svg'}))")
    with pytest.raises(TimeoutError, match=r"1 of its images or blocks still loading after 0\.5 s.*never-answered\.svg"):
        load_all_images(page, timeout_ms=500)
    assert site_url in str(page.url)


def test_waiting_for_images_waits_for_the_blocks_rendered_after_the_first_paint(page, site_url):
    """A long page leaves its later blocks for render_rest.js (a figure in a skipped block
    measures 120 px wide): the tools that measure or photograph figures wait for those too."""
    page.goto(site_url + "sinusoidal/", wait_until="networkidle")
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
    page.goto(site_url + "labs/lab2_positions/", wait_until="networkidle")
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
