"""Search finds the lesson first: queries typed into the site's own search box, top hit checked."""
from __future__ import annotations

import pytest


pytestmark = [pytest.mark.build, pytest.mark.browser]

# query -> the page a learner should land on first
TOP_HIT = {
    "RoPE": "rope/",
    "rotary": "rope/",
    "softmax": "attention/",
    "ALiBi": "alibi/",
    "sinusoidal": "sinusoidal/",
    "wavelength": "sinusoidal/",
    "KV cache": "kv_cache/",
    "FlashAttention": "flash_attention/",
    "temperature": "sampling/",  # the word most readers mean; attention's τ is on heads/
    "beam search": "sampling/",
    "greedy": "sampling/",
    "causal mask": "attention/",
    "overflow": "numerics/",
    "notation": "notation/",
    "learned positions": "learned/",
    "induction head": "induction/",
    "extrapolate": "extrapolation/",
}


@pytest.fixture(scope="module")
def search_page(browser, site_url):  # noqa: F811
    """The notation page with its search box open and its index loaded: every query is typed
    into this one box (loading the page and the index again for each query cost about a second)."""
    page = browser.new_page()
    page.goto(site_url + "notation/")
    page.keyboard.press("/")
    page.locator("input.md-search__input").wait_for(state="visible")
    page.wait_for_function("document.querySelector('.md-search-result__meta').textContent.trim()"
                           " !== 'Initializing search'", timeout=20000, polling=100)
    yield page
    page.close()


def top_hits(page, base: str, query: str, n: int = 3) -> list[str]:
    box = page.locator("input.md-search__input")
    box.fill("")  # the last query's results go first
    page.wait_for_function("document.querySelectorAll('.md-search-result__item').length === 0",
                           timeout=20000, polling=50)
    box.press_sequentially(query, delay=10)
    page.wait_for_function("document.querySelectorAll('.md-search-result__item').length > 0", timeout=20000, polling=100)
    page.wait_for_timeout(200)  # results settle after the last keystroke
    hrefs = page.eval_on_selector_all(".md-search-result__item > a", "els => els.map(e => e.href)")
    pages = []
    for href in hrefs:
        path = href[len(base):].split("?")[0].split("#")[0]
        if path not in pages:
            pages.append(path)
    return pages[:n]


@pytest.mark.parametrize("query", sorted(TOP_HIT))
def test_search_puts_the_lesson_first(search_page, site_url, query):  # noqa: F811
    hits = top_hits(search_page, site_url, query)
    assert hits and hits[0] == TOP_HIT[query], f"{query!r}: top pages {hits}"
