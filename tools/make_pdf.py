"""Print the built site's whole-lecture page (``print/``) to a PDF with headless Chromium.

    python -m tools.make_pdf SITE_DIR OUT.pdf [--format A4]

``make pdf`` runs it through the site build (``MHA_PDF=1``, see hooks/site_print.py), which
writes ``site/lecture.pdf`` and links it from the home page. Run by hand, it prints any
built site. Uses Playwright with Debian's Chromium (/usr/bin/chromium); no browser download.

Before printing it waits for what a reader's browser would finish first: every lazy image
and the fonts, and it checks that every formula is KaTeX HTML (``hooks/site_math.py``
renders them when the site is built). Links
between pages of the lecture are links within the PDF; links to the rest of the site go
to the published site (the page's canonical URL). The PDF's dates are the build's
(``SOURCE_DATE_EPOCH``) and its structure ids are numbered in order, so an unchanged site
prints to the same bytes.
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
import threading
import time
from pathlib import Path

from tools.screenshots import ARGS, CHROMIUM, serve

PAGE = "print/"

MATH_DONE = """() => Array.from(document.querySelectorAll('.arithmatex'))
  .every(e => e.querySelector('.katex, .katex-error'))"""

# Links to the rest of the site (pages not printed here, downloads) go to the published site
# (the page's canonical URL), not to the temporary server; a site built without SITE_URL has no
# public address, and those links become plain text. The theme has made every link absolute by
# now; links within print/ stay, and the PDF makes them links within itself.
SITE_LINKS = """([server, site]) => {
  const here = new URL(document.location.href); here.hash = "";
  for (const a of document.querySelectorAll('a[href]')) {
    const url = new URL(a.href);
    const within = url.hash && (url.origin + url.pathname) === (here.origin + here.pathname);
    if (!url.href.startsWith(server) || within) continue;
    if (site) a.href = site + url.href.slice(server.length); else a.removeAttribute('href');
  }
}"""

FOOTER = ('<div style="font-size:8px;width:100%;padding:0 13mm;display:flex;justify-content:space-between;'
          'color:#555;font-family:sans-serif"><span class="title"></span>'
          '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>')


def page_count(pdf: bytes) -> int:
    """Pages in a PDF written by Chromium (one ``/Type /Page`` object per page)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def _pdf_date(epoch: int) -> bytes:
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("D:%Y%m%d%H%M%S+00'00'").encode()


def fix_dates(pdf: bytes, epoch: int) -> bytes:
    """Replace Chromium's clock dates with the build's (same length: the offsets stay valid)."""
    date = _pdf_date(epoch)

    def repl(m: re.Match) -> bytes:
        old = m.group(2)
        return m.group(1) + date[: len(old)].ljust(len(old)) + m.group(3)
    return re.sub(rb"(/(?:CreationDate|ModDate)\s*\()([^)]*)(\))", repl, pdf)


def fix_node_ids(pdf: bytes) -> bytes:
    """Number a tagged PDF's structure ids (``(node00001315)``, Chromium's DOM node ids,
    which shift with the order scripts create nodes in) by rank: same order, so the id tree
    stays sorted, same width, so the offsets stay valid, and the same bytes every time."""
    found = sorted(set(re.findall(rb"\(node(\d{8})\)", pdf)), key=int)
    rank = {old: b"%08d" % n for n, old in enumerate(found, 1)}
    return re.sub(rb"\(node(\d{8})\)", lambda m: b"(node" + rank[m.group(1)] + b")", pdf)


def in_own_thread(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run in a new thread: Playwright's sync API refuses to start in a
    thread where another instance runs (a test session's browser, say)."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
    thread = threading.Thread(target=target, name="make_pdf")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def build_pdf(site: Path, out: Path, *, paper: str = "A4", tagged: bool = True, timeout_ms: int = 120_000) -> int:
    """Print ``site``'s ``print/`` page to ``out``; returns the number of pages."""
    site, out = Path(site), Path(out)
    if not (site / PAGE / "index.html").is_file():
        raise FileNotFoundError(f"{site / PAGE / 'index.html'} is missing: build the site first")
    pdf = fix_node_ids(in_own_thread(_print, site, paper, tagged, timeout_ms))
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or 0)
    if epoch:
        pdf = fix_dates(pdf, epoch)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(pdf)
    tmp.replace(out)
    return page_count(pdf)


def _print(site: Path, paper: str, tagged: bool, timeout_ms: int) -> bytes:
    from playwright.sync_api import sync_playwright

    canonical = re.search(r'<link rel="canonical" href="([^"]+)"', (site / PAGE / "index.html").read_text())
    server, base = serve(site)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = browser.new_page(viewport={"width": 1000, "height": 1400}, color_scheme="light")
                page.set_default_timeout(timeout_ms)
                page.goto(base + PAGE, wait_until="load")
                page.emulate_media(media="print", color_scheme="light")
                page.wait_for_function(MATH_DONE, timeout=timeout_ms)
                bad_math = page.evaluate("Array.from(document.querySelectorAll('.katex-error')).map(e => e.title)")
                if bad_math:
                    raise RuntimeError(f"{len(bad_math)} formulas on {PAGE} failed to render, e.g. {bad_math[:2]}")
                # every lazy image, now (the helper in screenshots.py, with this call's patience)
                page.evaluate("document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })")
                page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=timeout_ms)
                broken = page.evaluate("Array.from(document.images).filter(i => !i.naturalWidth).map(i => i.src)")
                if broken:
                    raise RuntimeError(f"{len(broken)} images on {PAGE} did not load, e.g. {broken[:3]}")
                page.evaluate("document.fonts.ready.then(() => true)")
                site_base = canonical.group(1)[: -len(PAGE)] if canonical else None
                page.evaluate(SITE_LINKS, [base, site_base])
                # tagged: a structure screen readers follow, and Chromium's bookmarks (one per
                # heading) need it; it doubles the file (about 2.3 -> 4.7 MB), --untagged drops both
                pdf = page.pdf(format=paper, print_background=True, prefer_css_page_size=True,
                               display_header_footer=True, header_template="<span></span>",
                               footer_template=FOOTER, outline=tagged, tagged=tagged)
            finally:
                browser.close()
    finally:
        server.shutdown()
    return pdf


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("site", type=Path, help="a built site (mkdocs build -d SITE_DIR)")
    p.add_argument("out", type=Path, help="the PDF to write")
    p.add_argument("--format", default="A4", help="paper size Chromium knows (A4, Letter, ...)")
    p.add_argument("--untagged", action="store_true", help="no structure tree and no bookmarks: half the size")
    args = p.parse_args(argv)
    start = time.perf_counter()
    pages = build_pdf(args.site, args.out, paper=args.format, tagged=not args.untagged)
    print(f"{args.out}: {pages} pages, {args.out.stat().st_size / 1e6:.1f} MB, in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
