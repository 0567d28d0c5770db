"""The built site in a real browser: every page, the explorers, accessibility, screenshots.

Playwright drives Debian's Chromium (/usr/bin/chromium), installed with apt by the
``chromium`` fixture when missing. The site is served on 127.0.0.1 only. Screenshots of
every page in light and dark mode go to ``test-output/screenshots/``, and the counts of
what was checked to ``test-output/browser-summary.json``.
"""
from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest
import yaml

from helpers import ROOT, nav_pages

sys.path.insert(0, str(ROOT / "tools"))
from screenshots import ARGS, CHROMIUM, load_all_images, serve  # noqa: E402

pytestmark = [pytest.mark.build, pytest.mark.browser]

OUT = ROOT / "test-output"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SUMMARY: dict = {"pages": 0, "requests": 0, "failed_requests": 0, "external_requests": 0, "console_errors": 0,
                 "axe_serious_or_critical": 0, "axe_rules_run": 0, "images_checked": 0, "screenshots": 0}


def _nav_pages() -> list[str]:
    """Site URLs of every page in mkdocs.yml's nav, in order."""
    return [url for _, url in nav_pages()]


PAGES = _nav_pages()


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium, installed with apt when missing; skip loudly only if that fails."""
    import shutil
    import subprocess
    import warnings

    if not Path(CHROMIUM).exists():
        apt = shutil.which("apt-get")
        steps = [[apt, "update", "-q"], [apt, "install", "-y", "-q", "chromium"]] if apt else []
        for cmd in steps:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200,
                               env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
            if r.returncode:
                break
    if not Path(CHROMIUM).exists():
        msg = ("\n" + "!" * 72 + "\nBROWSER TESTS SKIPPED: Chromium is not at /usr/bin/chromium and "
               "`apt-get install chromium` failed (no apt, no root, or no package mirror).\n" + "!" * 72)
        warnings.warn(msg)
        print(msg, file=sys.stderr)
        pytest.skip(msg)
    return CHROMIUM


@pytest.fixture(scope="session")
def site_url(built_site):
    server, base = serve(built_site)
    yield base
    server.shutdown()


_SHARED: dict = {}  # the one Playwright and browser of this process, and how many fixtures hold them


@pytest.fixture(scope="session")
def browser(chromium):
    """One Chromium for the whole process. Modules that import this fixture (test_search,
    test_explorers_ui, ...) each register their own copy with pytest; Playwright's sync API
    runs one instance per thread, so every copy shares the first one started."""
    if not _SHARED:
        from playwright.sync_api import sync_playwright

        pw = sync_playwright().start()
        _SHARED.update(pw=pw, browser=pw.chromium.launch(executable_path=chromium, args=ARGS), users=0)
    _SHARED["users"] += 1
    yield _SHARED["browser"]
    _SHARED["users"] -= 1
    if not _SHARED["users"]:
        _SHARED["browser"].close()
        _SHARED["pw"].stop()
        _SHARED.clear()
    # Under xdist several workers may run browser tests: each writes its part, and the
    # controller adds the parts up into browser-summary.json (conftest.pytest_sessionfinish).
    OUT.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (OUT / f"browser-summary.{worker}.part.json").write_text(json.dumps(SUMMARY, indent=1) + "\n")


def _failed(request, seen: dict) -> None:
    """A request that failed. ``net::ERR_ABORTED`` is the browser cancelling its own request
    (an image of the other colour scheme whose download began before the stylesheet hid it):
    not a fault of the site, and not counted; a missing file shows as a 4xx response below."""
    if request.failure != "net::ERR_ABORTED":
        seen["failed"].append(f"{request.url} ({request.failure})")


def _watch(page, base: str) -> dict:
    seen = {"requests": [], "failed": [], "console": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("requestfailed", lambda r: _failed(r, seen))
    page.on("response", lambda r: seen["failed"].append(f"{r.url} (HTTP {r.status})") if r.status >= 400 else None)
    page.on("console", lambda m: seen["console"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen["console"].append(str(e)))
    return seen


@pytest.mark.parametrize("url", PAGES)
def test_page_in_the_browser(browser, site_url, url):
    name = url.strip("/").replace("/", "_") or "home"
    shots = OUT / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
    page = ctx.new_page()
    seen = _watch(page, site_url)
    page.goto(site_url + url, wait_until="networkidle")
    load_all_images(page)

    # images: loaded and described
    images = page.evaluate("""Array.from(document.querySelectorAll('.md-content img')).map(i => (
        {src: i.getAttribute('src'), alt: i.getAttribute('alt') || '', w: i.naturalWidth}))""")
    assert all(i["w"] > 0 for i in images), [i["src"] for i in images if i["w"] == 0]
    assert all(i["alt"].strip() for i in images), [i["src"] for i in images if not i["alt"].strip()]

    # math: every arithmatex block rendered by KaTeX, no raw delimiters or TeX commands left in the
    # text outside code (notebook pages included: their Markdown cells go through nbconvert, which
    # ate the backslashes of \\( \\) once), no KaTeX error
    math_state = page.evaluate("""(() => {
        const content = document.querySelector('.md-content');
        const blocks = Array.from(content.querySelectorAll('.arithmatex'));
        const prose = content.cloneNode(true);
        prose.querySelectorAll('.katex, pre, code, script, style, .clipboard-copy-txt').forEach(e => e.remove());
        const text = prose.textContent;
        return {blocks: blocks.length, rendered: blocks.filter(b => b.querySelector('.katex')).length,
                raw: ['$$', '\\\\(', '\\\\[', '\\\\)', '\\\\]'].filter(d => text.includes(d)),
                commands: (text.match(/\\\\[A-Za-z]{2,}/g) || []).slice(0, 5),
                errors: content.querySelectorAll('.katex-error').length,
                notebook: !!content.querySelector('.jupyter-wrapper'),
                notebook_math: content.querySelectorAll('.jupyter-wrapper .arithmatex .katex').length};
    })()""")
    assert math_state["rendered"] == math_state["blocks"] and not math_state["raw"], math_state
    assert not math_state["commands"] and not math_state["errors"], math_state
    assert not math_state["notebook"] or math_state["notebook_math"] > 0, math_state

    # accessibility: axe-core, serious and critical violations
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    bad = [(v["id"], v["impact"], len(v["nodes"]), v["nodes"][0]["target"]) for v in result["violations"]
           if v["impact"] in ("serious", "critical")]
    SUMMARY["axe_rules_run"] += len(result.get("passes", [])) + len(result["violations"])
    SUMMARY["axe_serious_or_critical"] += len(bad)
    assert not bad, bad
    page.screenshot(path=str(shots / f"{name}-light.png"), full_page=True)

    # dark mode and a phone-width viewport
    dark = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    dpage = dark.new_page()
    dseen = _watch(dpage, site_url)
    dpage.goto(site_url + url, wait_until="networkidle")
    load_all_images(dpage)
    assert dpage.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    dpage.screenshot(path=str(shots / f"{name}-dark.png"), full_page=True)
    phone = browser.new_context(viewport={"width": 375, "height": 800}, color_scheme="light", is_mobile=True)
    ppage = phone.new_page()
    pseen = _watch(ppage, site_url)
    ppage.goto(site_url + url, wait_until="networkidle")
    overflow = ppage.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{url} scrolls horizontally by {overflow}px at 375px"

    requests = seen["requests"] + dseen["requests"] + pseen["requests"]
    external = [r for r in requests if urlparse(r).scheme in ("http", "https") and urlparse(r).hostname != "127.0.0.1"]
    failed = seen["failed"] + dseen["failed"] + pseen["failed"]
    console = seen["console"] + dseen["console"] + pseen["console"]
    SUMMARY["pages"] += 1
    SUMMARY["requests"] += len(requests)
    SUMMARY["failed_requests"] += len(failed)
    SUMMARY["external_requests"] += len(external)
    SUMMARY["console_errors"] += len(console)
    SUMMARY["images_checked"] += len(images)
    SUMMARY["screenshots"] += 2
    assert not external, external
    assert not failed, failed
    assert not console, console
    for c in (ctx, dark, phone):
        c.close()


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
