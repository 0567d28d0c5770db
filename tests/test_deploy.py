"""The site works where it is published: under a sub-path, with its own 404 page and metadata.

GitHub Pages serves a project site under ``/REPO/`` and answers a missing URL with the
site's ``404.html``. This module serves the shared build under a sub-path the way such a host
does and follows every link, image, script and stylesheet of every page (MkDocs writes
relative links, so the sub-path needs no build of its own). What depends on ``SITE_URL`` (the
404 page's absolute links, canonical links, the sitemap) is built again, for a sub-path, on a
small fixture site with the real theme and the hooks that write those parts.
"""
from __future__ import annotations

import functools
import http.server
import re
import sys
import threading
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

from helpers import ROOT, mkdocs_build
from tools.screenshots import QuietServer

sys.path.insert(0, str(ROOT / "hooks"))
import site_meta  # noqa: E402
import site_search  # noqa: E402

PREFIX = "/course/"


class _Links(HTMLParser):
    ATTRS = {"a": "href", "link": "href", "script": "src", "img": "src", "source": "src", "iframe": "src"}

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        want = self.ATTRS.get(tag)
        for key, value in attrs:
            if key == want and value:
                self.urls.append(value)
            if key == "srcset" and value:
                self.urls += [part.strip().split()[0] for part in value.split(",") if part.strip()]


class _PagesHost(http.server.SimpleHTTPRequestHandler):
    """Serves ``root`` with the site at PREFIX; a missing path gets the site's 404.html (status 404)."""

    def log_message(self, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / PREFIX.strip("/") / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def _host(root: Path):
    server = QuietServer(("127.0.0.1", 0), functools.partial(_PagesHost, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module")
def subpath_site(built_site, tmp_path_factory):
    """The shared build, served at PREFIX."""
    root = tmp_path_factory.mktemp("pages-host")
    (root / PREFIX.strip("/")).symlink_to(built_site, target_is_directory=True)
    server, host = _host(root)
    yield built_site, host
    server.shutdown()


@pytest.fixture(scope="module")
def subpath_fixture(tmp_path_factory):
    """A two-page site with the real theme and the hooks that write the 404 page, canonical links
    and the sitemap, built for ``https://example.org/course/`` and served at PREFIX."""
    base = tmp_path_factory.mktemp("subpath-fixture")
    (base / "docs").mkdir()
    (base / "docs" / "index.md").write_text("# Multi-head attention\n\nHome.\n")
    (base / "docs" / "rope.md").write_text("# RoPE\n\nRotary positions.\n")
    hooks = ", ".join(f'"{ROOT / "hooks" / h}"' for h in ("site_dates.py", "site_meta.py", "site_speed.py"))
    (base / "mkdocs.yml").write_text(f"""site_name: Multi-head attention and positional encoding
site_url: https://example.org{PREFIX}
theme: {{name: material, font: false}}
plugins: [search]
hooks: [{hooks}]
nav: [index.md, rope.md]
""")
    root = base / "host"
    result = mkdocs_build(base / "mkdocs.yml", root / PREFIX.strip("/"), base / "cache")
    assert result.returncode == 0, result.stderr[-4000:]
    server, host = _host(root)
    yield root / PREFIX.strip("/"), host
    server.shutdown()


def _status(url: str) -> int:
    """The status a request for ``url`` gets, asked with HEAD: the same answer as GET (the server's
    handler runs the same lookup), without sending every file of the site's 32 MB (a third of
    this test's time)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


@pytest.mark.build
def test_every_link_image_script_and_notebook_resolves_under_a_sub_path(subpath_site):
    site, host = subpath_site
    # 404.html links its assets by absolute path, built for the site's own address: the fixture
    # site checks it for a sub-path (below)
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 20
    checked: dict[str, int] = {}
    broken = []
    for html in pages:
        rel = html.relative_to(site).as_posix()
        page_url = host + PREFIX + (rel[: -len("index.html")] if rel.endswith("index.html") else rel)
        parser = _Links()
        parser.feed(html.read_text(encoding="utf-8"))
        for raw in parser.urls:
            url = urldefrag(urljoin(page_url, raw))[0].split("?")[0]
            if urlparse(url).netloc != urlparse(host).netloc or not url.startswith(host):
                continue  # other hosts: the browser tests prove pages request none
            if url not in checked:
                checked[url] = _status(url)
            if checked[url] != 200:
                broken.append(f"{rel}: {raw} -> {checked[url]}")
            if not urlparse(url).path.startswith(PREFIX):
                broken.append(f"{rel}: {raw} leaves the site's sub-path")
    notebooks = [u for u in checked if u.endswith(".ipynb")]
    assert notebooks, "the labs' notebook downloads were not found among the links"
    assert not broken, "\n".join(broken[:30])


@pytest.mark.build
def test_a_missing_url_gets_the_sites_own_404_page_with_working_assets(subpath_fixture):
    site, host = subpath_fixture
    url = host + PREFIX + "no/such/page/"
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(url, timeout=10)
    assert err.value.code == 404
    body = err.value.read().decode()
    assert "404" in body and "Multi-head attention" in body
    parser = _Links()
    parser.feed(body)
    assets = [urljoin(url, u) for u in parser.urls if re.search(r"\.(css|js)$", u.split("?")[0])]
    assert assets and all(_status(a) == 200 for a in assets), [a for a in assets if _status(a) != 200]


@pytest.mark.build
def test_canonical_links_and_sitemap_use_the_configured_site_url(subpath_fixture):
    site, _ = subpath_fixture
    html = (site / "rope" / "index.html").read_text()
    assert '<link rel="canonical" href="https://example.org/course/rope/">' in html
    sitemap = (site / "sitemap.xml").read_text()
    assert "https://example.org/course/rope/" in sitemap and "127.0.0.1" not in sitemap


@pytest.mark.build
def test_pages_describe_themselves_differently(built_site):
    found = {}
    for html in sorted(built_site.rglob("index.html")):
        m = re.search(r'<meta name="description" content="([^"]*)">', html.read_text())
        assert m, f"{html}: no description"
        found[html.parent.relative_to(built_site).as_posix()] = m.group(1)
    lecture = {k: v for k, v in found.items() if not k.startswith(("gallery", "api", "."))}
    assert len(set(lecture.values())) == len(lecture), "two pages share a description"
    assert all(20 <= len(v) <= site_meta.MAX_CHARS + 10 for v in found.values())  # +10: escaped quotes


def test_description_is_the_first_prose_paragraph_cut_at_a_word_and_escaped():
    html = ('<div class="admonition abstract"><p class="admonition-title">Goals</p><p>not this one at all, '
            'it sits in a box</p></div><p>Short.</p><p>RoPE ("rotary") turns each query \\(q\\) and key by an '
            "angle that grows with position, " + "and so on " * 30 + "</p>")
    text = site_meta.first_paragraph_text(html)
    assert text.startswith('RoPE ("rotary") turns each query q and key')
    short = site_meta.shorten(text)
    assert len(short) <= site_meta.MAX_CHARS and short.endswith("…") and not short[:-1].endswith(" ")
    assert site_meta.shorten("a b c") == "a b c"


def test_search_hook_hides_notebook_chrome_and_weighs_pages_by_kind():
    cell = ('<div class="jp-InputPrompt jp-InputArea-prompt">In [1]:</div>'
            '<div class="zeroclipboard-container"><span class="notice">Copied!</span></div>'
            '<div class="clipboard-copy-txt" id="cell-1">x = 1</div><pre>x = 1</pre>')
    out = site_search.exclude_chrome(cell)
    assert out.count('data-search-exclude="true"') == 3 and "<pre>x = 1</pre>" in out
    assert site_search.page_kind("rope.md") == "lecture"
    assert site_search.page_kind("labs/lab2_positions.py") == "lab"
    assert site_search.page_kind("gallery_generation.md") == "reference"
    assert site_search.page_kind("numerics.md") == "practice"
    assert site_search.BOOST["lecture"] > site_search.BOOST["practice"] > site_search.BOOST["lab"] > site_search.BOOST["reference"]
