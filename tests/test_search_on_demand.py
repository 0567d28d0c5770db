"""The search index loads when the reader goes to search (hooks/search_on_demand.js), and only then.

A page that loads it with every visit spends 130 KB of a phone's connection on something most
readers never use; a page that never loads it has a search box that says "Initializing search"
for ever. Both are checked, in the real built site, for every way a reader reaches search.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
import site_speed  # noqa: E402



def in_browser(test):
    """The tests that need the built site in Chromium (the hook's own tests below need neither).
    They run together on one worker, scheduled early (xdist schedules larger groups first): most
    of their time is waiting for late timers, which the other worker's work fills; at the end of
    the run it would be waiting alone."""
    return pytest.mark.xdist_group("search-on-demand")(pytest.mark.build(pytest.mark.browser(test)))


INDEX = "/search/search_index.json"
READY = ("document.querySelector('.md-search-result__meta').textContent.trim() !== 'Initializing search'"
         " && document.querySelector('.md-search-result__meta').textContent.trim() !== ''")


def _open(browser, site_url, path: str, width: int = 1280):  # noqa: F811
    ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme="light",
                              has_touch=width < 600, is_mobile=width < 600)
    page = ctx.new_page()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if INDEX in r.url else None)
    page.goto(site_url + path, wait_until="load")
    return ctx, page, asked


def _settle(page, late_ms: int = 1000) -> None:
    """Everything the page does by itself: loaded, rendered, and a second for late timers."""
    page.wait_for_function("document.documentElement.hasAttribute('data-mha-rendered')", timeout=20000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(late_ms)


def _results(page, query: str) -> list[str]:
    box = page.locator("input.md-search__input")
    box.press_sequentially(query, delay=10)
    page.wait_for_function("document.querySelectorAll('.md-search-result__item').length > 0", timeout=20000)
    # the first results may answer a prefix of the query ("ro"): read until they stay the same
    # for half a second (a loaded machine answers the last keystroke late)
    read = lambda: page.eval_on_selector_all(".md-search-result__item > a", "els => els.map(e => e.pathname)")
    last, since = read(), time.monotonic()
    deadline = since + 15
    while time.monotonic() - since < 0.5 and time.monotonic() < deadline:
        page.wait_for_timeout(100)
        now = read()
        if now != last:
            last, since = now, time.monotonic()
    return last


@in_browser
def test_a_page_that_is_only_read_never_asks_for_the_index(browser, site_url):  # noqa: F811
    """Four pages open side by side, so their waits for late timers overlap."""
    opened = [(path, width, *_open(browser, site_url, path, width))
              for path, width in (("attention/", 1280), ("rope/", 390), ("labs/lab1_mha/", 390), ("", 1280))]
    try:
        for path, width, ctx, page, asked in opened:
            _settle(page, late_ms=0)
        opened[-1][3].wait_for_timeout(1000)  # a second for late timers, on every page at once
        for path, width, ctx, page, asked in opened:
            page.mouse.wheel(0, 2000)  # reading: scrolling down the page is not searching
        opened[-1][3].wait_for_timeout(300)
        for path, width, ctx, page, asked in opened:
            assert asked == [], f"{path or 'home'} at {width} px asked for the index unprompted: {asked}"
            assert page.get_attribute("html", "data-mha-search-index") is None
            # the theme's own requests still go out: the script holds back only the index
            assert page.evaluate("performance.getEntriesByType('resource')"
                                 ".some(e => e.name.endsWith('/sitemap.xml'))"), path
    finally:
        for path, width, ctx, page, asked in opened:
            ctx.close()


@in_browser
@pytest.mark.parametrize("path, width, go, query, first", [
    ("notation/", 1280, "the / key", "softmax", "/attention/"),  # the theme's key focuses the box
    ("mha/", 390, "the magnifier", "rotary", "/rope/"),           # a phone's way in
])
def test_going_to_search_loads_the_index_once_and_search_finds_the_lesson(  # noqa: PLR0913
        browser, site_url, path, width, go, query, first):  # noqa: F811
    ctx, page, asked = _open(browser, site_url, path, width)
    try:
        _settle(page)
        assert asked == []
        if go == "the / key":
            page.keyboard.press("/")
        else:
            page.tap('label.md-header__button[for="__search"]')
        page.wait_for_function(READY, timeout=20000, polling=100)
        assert len(asked) == 1 and asked[0].endswith(INDEX), f"{go}: {asked}"
        hits = _results(page, query)
        assert hits[0].endswith(first), hits
    finally:
        ctx.close()


@in_browser
def test_the_pointer_over_the_search_box_starts_loading_it(browser, site_url):  # noqa: F811
    ctx, page, asked = _open(browser, site_url, "rope/")
    try:
        _settle(page)
        page.hover("input.md-search__input")
        page.wait_for_function("document.documentElement.dataset.mhaSearchIndex === 'requested'", timeout=5000)
        page.wait_for_timeout(500)
        assert len(asked) == 1, asked
    finally:
        ctx.close()


@in_browser
@pytest.mark.parametrize("query", ["?q=ALiBi", "?h=softmax"])
def test_a_link_that_searches_or_highlights_loads_the_index_at_once(browser, site_url, query):  # noqa: F811
    ctx, page, asked = _open(browser, site_url, "attention/" + query)
    try:
        page.wait_for_function("document.documentElement.dataset.mhaSearchIndex === 'requested'", timeout=5000)
        page.wait_for_load_state("networkidle")
        assert len(asked) == 1, asked
        if query.startswith("?q="):  # the theme opens search with the query and shows its results
            page.wait_for_function("document.querySelectorAll('.md-search-result__item').length > 0", timeout=20000)
            first = page.eval_on_selector(".md-search-result__item > a", "a => a.pathname")
            assert first.endswith("/alibi/"), first
        else:  # the theme marks the searched word on the page, from the index's settings
            page.wait_for_selector("article mark[data-md-highlight]", timeout=20000)
    finally:
        ctx.close()


# ---- the hook -------------------------------------------------------------------------------------

PAGE = ('<head><link rel="stylesheet" href="../stylesheets/print.css"></head><body><p>x</p>'
        '<script src="../assets/javascripts/bundle.0123abcd.min.js"></script></body>')


def test_the_hook_puts_the_script_inline_just_before_the_deferred_bundle():
    script = site_speed._inline_script(site_speed.SEARCH_ON_DEMAND)
    out = site_speed.trim_head(PAGE, "rope/", script)
    before, after = out.split('<script src="../assets/javascripts/bundle.0123abcd.min.js" defer></script>')
    assert before.endswith(script) and after == "</body>"
    assert "XMLHttpRequest.prototype.send" in script and script.count("<script") == 1
    assert not script.split("\n", 1)[1].lstrip().startswith("/*")  # the long comment stays in the file


def test_a_page_whose_theme_script_tag_changed_form_stops_the_build():
    changed = PAGE.replace('<script src="../assets/javascripts/bundle.0123abcd.min.js">',
                           '<script type="module" src="../assets/javascripts/bundle.0123abcd.min.js">')
    with pytest.raises(ValueError, match=r"page 'rope/': no theme script tag"):
        site_speed.trim_head(changed, "rope/", "<script></script>")


def test_a_script_that_would_end_its_own_inline_tag_is_refused(tmp_path):
    bad = tmp_path / "bad.js"
    bad.write_text('/* why */\ndocument.write("</script>");\n')
    with pytest.raises(ValueError, match="cannot contain '</script'"):
        site_speed._inline_script(bad)


def test_the_404_page_links_stylesheets_by_absolute_path_and_is_trimmed_the_same():
    page = ('<head><link rel="stylesheet" href="/course/assets/_mkdocstrings.css">'
            '<link rel="stylesheet" href="/course/stylesheets/print.css"></head><body>'
            '<script src="/course/assets/javascripts/bundle.0123abcd.min.js"></script></body>')
    out = site_speed.on_post_template(page, template_name="404.html", config={})
    assert "_mkdocstrings" not in out
    assert '<link rel="stylesheet" href="/course/stylesheets/print.css" media="print">' in out
    assert "hooks/search_on_demand.js" in out
    assert site_speed.on_post_template("<p>other</p>", template_name="sitemap.xml", config={}) == "<p>other</p>"
