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
    "temperature": "heads/",
    "causal mask": "attention/",
    "overflow": "numerics/",
    "notation": "notation/",
    "learned positions": "learned/",
    "induction head": "induction/",
    "extrapolate": "extrapolation/",
}


@pytest.fixture(scope="module")
def search_page(browser, site_url):  # noqa: F811
    page = browser.new_page()
    yield page
    page.close()


def top_hits(page, base: str, query: str, n: int = 3) -> list[str]:
    page.goto(base + "notation/")
    page.keyboard.press("/")
    box = page.locator("input.md-search__input")
    box.wait_for(state="visible")
    page.wait_for_function("document.querySelector('.md-search-result__meta').textContent.trim()"
                           " !== 'Initializing search'", timeout=20000, polling=100)
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
