"""Long pages paint their first screen first (``docs/stylesheets/extra.css``, ``render_rest.js``).

From the 13th child of a page's article on, every block but a heading carries
``content-visibility: auto``: the first paint lays out only what is on screen, and right after
it ``render_rest.js`` renders the remaining blocks in short slices. Checked in Chromium: the rule
takes effect (without JavaScript a far block stays unrendered until it is scrolled to), the
script renders every block and leaves the page laid out exactly as without the rule, nothing on
a first screen moves, paper lays out every block, and a page reached by instant navigation is
rendered too.
"""
from __future__ import annotations

import pytest


pytestmark = [pytest.mark.build, pytest.mark.browser]

LONG = "sinusoidal/"  # the longest lecture page
FIRST_SKIPPED = 13    # the rule's :nth-child(n+13)
HEADINGS = {"H1", "H2", "H3", "H4", "H5", "H6"}
RENDERED = "document.documentElement.hasAttribute('data-mha-rendered')"

# [tag, computed content-visibility, inline content-visibility, whether its content is drawn]
# for each child of the article. A skipped block's own box is drawn (at its estimated size) but
# not what is inside, so the last question is asked of its first child element: false when only
# content-visibility hides it, null for a block of bare text or a child hidden anyway.
SHOWN = "(c => c && c.checkVisibility() ? c.checkVisibility({contentVisibilityAuto: true}) : null)"
CHILDREN = f"""() => Array.from(document.querySelector('.md-content__inner').children).map(el =>
    [el.tagName, getComputedStyle(el).contentVisibility, el.style.contentVisibility, {SHOWN}(el.firstElementChild)])"""
LAST_BLOCK = f"Array.from(document.querySelectorAll('.md-content__inner > *')).map(el => {SHOWN}(el.firstElementChild))" \
             ".filter(shown => shown !== null).pop()"
# where every child of the article is, and how tall the page is
GEOMETRY = """() => [document.documentElement.scrollHeight,
    ...Array.from(document.querySelector('.md-content__inner').children).map(el => [el.offsetTop, el.offsetHeight])]"""
NO_RULE = "document.head.append(Object.assign(document.createElement('style'), {textContent: " \
          "'.md-content__inner > * { content-visibility: visible !important }'}))"


def _expected_auto(tags: list[str]) -> list[bool]:
    """Which children the rule marks, from their position and tag alone."""
    return [i + 1 >= FIRST_SKIPPED and tag not in HEADINGS for i, tag in enumerate(tags)]


def _context(browser, width=390, **kw):  # noqa: F811
    return browser.new_context(viewport={"width": width, "height": 800}, **kw)


def test_without_javascript_a_far_block_waits_until_it_is_scrolled_to(browser, site_url):  # noqa: F811
    ctx = _context(browser, java_script_enabled=False)
    page = ctx.new_page()
    page.goto(site_url + LONG)
    children = page.evaluate(CHILDREN)
    tags = [c[0] for c in children]
    assert len(tags) > 3 * FIRST_SKIPPED, "the page is no longer long: pick a longer one"
    assert [cv == "auto" for _, cv, _, _ in children] == _expected_auto(tags)
    assert all(shown is not False for *_, shown in children[:FIRST_SKIPPED - 1])  # the first screen and more
    assert sum(shown is False for *_, shown in children) > FIRST_SKIPPED, "the far blocks were laid out at once"
    assert page.evaluate(LAST_BLOCK) is False
    # the last block with a box (the page's hidden provenance records come after it)
    page.evaluate("Array.from(document.querySelector('.md-content__inner').children)"
                  ".filter(el => el.getClientRects().length).pop().scrollIntoView()")
    page.wait_for_function(LAST_BLOCK, polling=100, timeout=10000)
    ctx.close()


def test_the_script_renders_every_block_and_the_page_ends_as_laid_out_without_the_rule(browser, site_url):  # noqa: F811
    ctx = _context(browser)
    page = ctx.new_page()
    page.goto(site_url + LONG)
    page.wait_for_function(RENDERED, polling=100, timeout=20000)
    children = page.evaluate(CHILDREN)
    marked = _expected_auto([c[0] for c in children])
    assert sum(marked) > 2 * FIRST_SKIPPED
    assert [inline == "visible" for _, _, inline, _ in children] == marked  # those, and only those
    assert all(shown is not False for *_, shown in children), "a block is still unrendered"
    rendered = page.evaluate(GEOMETRY)
    page.evaluate(NO_RULE)
    assert page.evaluate(GEOMETRY) == rendered
    ctx.close()


# Layout shift and the first screen's blocks, on every page at 390 and 1280 px: part of the one
# tour of the site (tests/tour.py; test_browser.py's page tests).


def test_on_paper_every_block_is_laid_out(browser, site_url):  # noqa: F811
    ctx = _context(browser, java_script_enabled=False)
    page = ctx.new_page()
    page.goto(site_url + LONG)
    page.emulate_media(media="print")
    assert {cv for _, cv, _, _ in page.evaluate(CHILDREN)} == {"visible"}
    ctx.close()


def test_a_page_swapped_in_as_instant_navigation_does_it_is_rendered_too(browser, site_url):  # noqa: F811
    """Material's instant navigation (on when the site is served from its own site_url) puts the
    next page's article in place and emits ``document$`` again, without a reload. Done here by
    hand, as the theme does it: the long page's article goes into a short page (the errata), and
    the script renders its blocks as it did the first page's."""
    ctx = _context(browser, 1280)
    page = ctx.new_page()
    page.goto(site_url + "errata/")
    page.wait_for_function(RENDERED, polling=100, timeout=20000)
    assert page.evaluate("document.querySelector('.md-content__inner').children.length") < FIRST_SKIPPED
    page.evaluate("""async url => {
        const html = await (await fetch(url)).text();
        const next = new DOMParser().parseFromString(html, 'text/html').querySelector('.md-content__inner');
        document.querySelector('.md-content__inner').replaceWith(document.adoptNode(next));
        document$.next(document);
    }""", site_url + LONG)
    page.wait_for_function(f"{RENDERED} && {LAST_BLOCK}", polling=100, timeout=20000)
    children = page.evaluate(CHILDREN)
    marked = _expected_auto([c[0] for c in children])
    assert sum(marked) > 2 * FIRST_SKIPPED
    assert [inline == "visible" for _, _, inline, _ in children] == marked
    assert all(shown is not False for *_, shown in children)
    ctx.close()
