"""Serve a built site on 127.0.0.1 and screenshot every page in light and dark mode.

    python -m tools.screenshots SITE_DIR OUT_DIR [--width 1280] [--pages attention,rope]

Uses Playwright with Debian's Chromium (/usr/bin/chromium); no browser download.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import os
import sys
import threading
import time
from pathlib import Path

#: Debian's Chromium; ``CHROMIUM=/path/to/chrome`` uses another (e.g. Google Chrome on a CI runner).
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    """A threading HTTP server that says nothing when the browser drops a connection mid-answer
    (a page left while its images load: the browser's choice, not a fault); other errors are
    printed as before."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(site: Path):
    """Start a static server for ``site`` on a free port of 127.0.0.1; returns (server, base_url)."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


# What the page still lacks: images still loading, and, until docs/javascripts/render_rest.js has
# rendered them, the blocks a long page leaves for after its first paint (skipped, such a block
# has no real size: a figure in it measures 120 px wide)
_PENDING_IMAGES = """() => {
  document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; });
  const pending = Array.from(document.images).filter(i => !i.complete).map(i => i.currentSrc || i.src);
  if (window.mhaWhenRendered && !document.documentElement.hasAttribute('data-mha-rendered'))
    pending.push('(the blocks render_rest.js has not rendered yet)');
  return pending;
}"""


def load_all_images(page, timeout_ms: int = 15000) -> None:
    """Make lazy images load now (a full-page screenshot does not scroll) and wait for them, and
    for the page's later blocks to be rendered (``render_rest.js``).

    Polled from here, not with ``wait_for_function``, whose default polling runs on the page's
    animation frames: in the full test run (and only there) that wait on the print page once
    ran out its 120 s, twice in a row, where it takes 3 s alone. Polling from Python depends on
    nothing the page schedules, and a timeout names the page and the images still loading.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    while pending := page.evaluate(_PENDING_IMAGES):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{page.url}: {len(pending)} of its images or blocks still loading after "
                               f"{timeout_ms / 1000:g} s: {pending[:5]}")
        time.sleep(0.05)
    page.wait_for_timeout(100)


class Network:
    """The requests of one Playwright page still in flight, for :func:`goto`.

    Playwright's ``wait_until="networkidle"`` waits for 500 ms without a request; on this site's
    pages the last request ends a few milliseconds after ``load`` (or after the later blocks
    render), so most of that half second is spent waiting for nothing, on every load of every
    test. This tracker lets a caller wait for a shorter quiet spell, with the same meaning: no
    request in flight, none started or ended for ``quiet_ms``."""

    def __init__(self, page):
        self.page, self.in_flight, self.changed = page, {}, time.monotonic()
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    def _started(self, request) -> None:
        self.in_flight[id(request)] = request.url
        self.changed = time.monotonic()

    def _ended(self, request) -> None:
        self.in_flight.pop(id(request), None)
        self.changed = time.monotonic()

    def forget(self) -> None:
        """Start afresh (a tab gone to another page: what the earlier one had in flight was cancelled)."""
        self.in_flight.clear()
        self.changed = time.monotonic()

    def wait_quiet(self, quiet_ms: int = 100, timeout_ms: int = 60_000) -> None:
        """Return once no request has been in flight, nor started or ended, for ``quiet_ms``;
        a ``TimeoutError`` after ``timeout_ms`` names the page and the requests still open."""
        deadline = time.monotonic() + timeout_ms / 1000
        while self.in_flight or time.monotonic() - self.changed < quiet_ms / 1000:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.page.url}: requests still in flight after {timeout_ms / 1000:g} s: "
                                   f"{sorted(self.in_flight.values())[:5]}")
            self.page.wait_for_timeout(20)  # lets Playwright deliver the page's events


def goto(page, url: str, network: Network | None = None, *, quiet_ms: int = 100, timeout_ms: int = 120_000) -> None:
    """Load ``url`` in ``page`` and wait until its network has been quiet for ``quiet_ms``
    (:class:`Network`; pass the page's tracker if it has one, made before any request).

    The load may take ``timeout_ms``: the print page loads every figure of the course, which
    took past Playwright's default 30 s on a slow machine whose two cores the other tests share."""
    network = network or Network(page)
    page.goto(url, wait_until="load", timeout=timeout_ms)
    network.wait_quiet(quiet_ms)


def pages(site: Path) -> list[str]:
    """Site-relative URLs of every page (directory URLs), 404 excluded."""
    out = []
    for html in sorted(site.rglob("index.html")):
        rel = html.parent.relative_to(site).as_posix()
        out.append("" if rel == "." else rel + "/")
    return out


def main(argv=None) -> int:
    from playwright.sync_api import sync_playwright

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("site", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--pages", default="", help="comma-separated page names (default: all)")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    server, base = serve(args.site)
    wanted = [x for x in args.pages.split(",") if x]
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for scheme in ("light", "dark"):
                ctx = browser.new_context(viewport={"width": args.width, "height": 900}, color_scheme=scheme)
                page = ctx.new_page()
                network = Network(page)
                for url in pages(args.site):
                    name = url.strip("/").replace("/", "_") or "home"
                    if wanted and name not in wanted:
                        continue
                    goto(page, base + url, network)
                    load_all_images(page)
                    page.screenshot(path=str(args.out / f"{name}-{scheme}.png"), full_page=True)
                ctx.close()
            browser.close()
    finally:
        server.shutdown()
    print(f"screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
