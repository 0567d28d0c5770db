"""The explorers' scripts load on the pages that have an explorer, and only there (docs/javascripts/widgets.js)."""
from __future__ import annotations

import pytest

from tools.screenshots import goto


pytestmark = [pytest.mark.build, pytest.mark.browser]

SCRIPTS = ("/javascripts/explorers.js", "/javascripts/bert_viewer.js", "/javascripts/generator.js",
           "/javascripts/bert_live.js")
STARTED = ".mha-explorer[data-explorer='{}'] .mha-explorer-ui[data-ready]"


def _visit(browser, site_url, path: str, route=None):  # noqa: F811
    page = browser.new_page()
    asked, errors = [], []
    # the path from the site's root, as requests go out (the list fills while the test runs)
    page.on("request", lambda r: asked.append(r.url[len(site_url) - 1:]) if r.url.endswith(SCRIPTS) else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    if route:
        page.route(*route)
    goto(page, site_url + path)
    return page, asked, errors


@pytest.mark.xdist_group("tour-desktop")  # reads the tour's desktop visits (tests/tour.py): no page loaded again
@pytest.mark.parametrize("path, scripts, widgets", [
    ("attention/", [], []),
    ("", [], []),
    ("labs/lab1_mha/", [], []),
    ("heads/", ["/javascripts/explorers.js"], ["heads"]),
    ("rope/", ["/javascripts/explorers.js"], ["rope"]),
    ("sinusoidal/", ["/javascripts/explorers.js"], ["pe"]),
    # the live model's payload is fetched when the reader asks for a run, never with the page
    ("viewer/", ["/javascripts/explorers.js", "/javascripts/bert_viewer.js", "/javascripts/bert_live.js"],
     ["bert", "bert_live", "tiny"]),
    ("kv_cache/", ["/javascripts/generator.js"], ["generator"]),  # its model is fetched on Generate only
])
def test_a_page_loads_the_scripts_of_its_explorers_and_no_others(tour, site_url, path, scripts, widgets):  # noqa: F811
    v = tour.visit("light", path)
    asked = [url[len(site_url) - 1:] for url in v.requests if url.endswith(SCRIPTS)]
    assert asked == scripts  # in this order: bert_viewer.js registers with explorers.js
    # the page's own explorers are exactly what the loader was asked for, and each started
    assert sorted(v.explorers) == sorted(widgets) and sorted(v.started) == sorted(widgets), (v.explorers, v.started)
    assert not [url for url in v.requests if ".explorer.bin" in url]  # a model's weights: only on request
    assert not v.console, v.console


def test_an_explorer_reached_by_instant_navigation_starts(browser, site_url):  # noqa: F811
    """Material's instant navigation swaps the article in and emits ``document$`` again, without
    loading the new page's scripts. Done here by hand, as the theme does it (the test server is
    not on the site's own origin, where the theme would do it itself)."""
    page, asked, errors = _visit(browser, site_url, "attention/")
    try:
        assert asked == []
        page.evaluate("""async url => {
            const html = await (await fetch(url)).text();
            const next = new DOMParser().parseFromString(html, 'text/html').querySelector('.md-content__inner');
            document.querySelector('.md-content__inner').replaceWith(document.adoptNode(next));
            document$.next(document);
        }""", site_url + "heads/")
        page.wait_for_selector(STARTED.format("heads"), timeout=20000)
        assert asked == ["/javascripts/explorers.js"]
        assert page.locator(".mha-explorer-static[data-static-for=heads]").is_hidden()
        assert not errors, errors
    finally:
        page.close()


def test_an_explorer_whose_script_cannot_load_keeps_its_static_figure_and_says_so(browser, site_url):  # noqa: F811
    page, asked, errors = _visit(browser, site_url, "heads/",
                                 route=("**/javascripts/explorers.js", lambda r: r.fulfill(status=404, body="gone")))
    try:
        page.wait_for_timeout(500)
        assert page.locator(".mha-explorer-static[data-static-for=heads] img").first.is_visible()
        assert page.locator(".mha-explorer-ui[data-ready]").count() == 0
        assert any("widgets.js" in e and "explorers.js did not load" in e for e in errors), errors
    finally:
        page.close()
