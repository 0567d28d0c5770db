"""Reuse outside the repository: licences stated, and a credit line under every figure and table."""
from __future__ import annotations

import re
from html import unescape

import pytest

import figures
from helpers import ROOT


def test_code_and_content_licences_are_in_the_repository_and_named_in_the_readme():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    content = (ROOT / "LICENSE-CONTENT.md").read_text()
    assert "CC BY 4.0" in content and "creativecommons.org/licenses/by/4.0" in content
    readme = (ROOT / "README.md").read_text()
    assert "LICENSE" in readme and "CC BY 4.0" in readme


@pytest.mark.build
def test_every_reuse_row_carries_a_credit_line_with_the_title_page_and_licence(built_site):
    """The credit names the figure, the course, where it is and the licence: the page's public
    address when the site was built for one (SITE_URL), else the page's title (never a
    localhost URL)."""
    import os

    public = os.environ.get("SITE_URL")
    rows = 0
    for html in sorted(built_site.rglob("index.html")):
        if html.parent.name == "print":  # the whole lecture on one page: each credit names the figure's own page
            continue
        rel = "" if html.parent == built_site else html.parent.relative_to(built_site).as_posix() + "/"
        text = html.read_text()
        assert "creativecommons.org/licenses/by/4.0" in text, f"{html}: footer without the content licence"
        # the page's title as the browser's tab and the navigation give it
        page_title = unescape(re.search(r"<title>(.*?)</title>", text).group(1)).rsplit(" - ", 1)[0]
        for row in re.findall(r'<p class="mha-reuse"[^>]*>(.*?)</p>', text, flags=re.S):
            rows += 1
            name = re.search(r'href="[./]*scripts/[a-z_]+/#([a-z0-9_]+)"', row).group(1)
            credit = re.search(r'<span class="mha-credit">Credit: “(.*?)”, from <cite>(.*?)</cite>, (.*?), '
                               r'<a [^>]*href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a></span>', row)
            assert credit, f"{html}: reuse row of {name} has no credit line"
            title = figures.load(name).__doc__.strip().splitlines()[0].rstrip(".")
            assert unescape(credit.group(1)) == title.replace("[", "(").replace("]", ")"), name
            assert credit.group(2) == "Multi-head attention and positional encoding"
            where = unescape(credit.group(3))
            if public:
                assert where == public.rstrip("/") + "/" + rel, (html, where)
            else:
                assert where.startswith("page “") and where.endswith("”") and "://" not in where, (html, where)
                assert where[len("page “"):-1] == page_title, (html, where, page_title)
    assert rows > 50
