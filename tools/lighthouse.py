"""`make lighthouse`: Lighthouse's four scores, CLS and LCP for every page of a built site.

    python -m tools.lighthouse [SITE_DIR] [--pages home,rope,labs_lab1_mha] [--no-scripts] [--runs N] [--json-dir DIR]

A benchmark, not a test: it always exits 0 once it has measured (DESIGN.md's targets are
mobile performance >= 90, accessibility, best practices and SEO 100, CLS < 0.05). It builds
nothing: build first (``make lighthouse`` builds ``site/`` and then runs this on it).

The site is served from 127.0.0.1 the way a real host serves it, with text compressed
(gzip, as GitHub Pages does), so the transfer sizes Lighthouse sees are the real ones.
Each page is measured by the pinned npm ``lighthouse`` (``package.json``) with its
defaults: a mobile phone, simulated slow 4G and a 4x slower CPU, in Debian's Chromium
(``/usr/bin/chromium``, headless). Page names are the ones ``tools/screenshots.py`` uses:
the URL with ``/`` as ``_`` (``home``, ``rope``, ``labs_lab1_mha``). A page takes about 20 s;
``--no-scripts`` measures one of the figure scripts' pages (``scripts/CHAPTER/``: they share
one template) instead of all of them.

Performance scores move from run to run: the simulated CPU slowdown multiplies whatever else
runs, and one run of the same page can score 65 and the next 95. Most of the low runs have
one cause: headless Chromium sometimes shows the first paint only about a second after the
page has loaded, with the page idle in between (a known upstream problem), and Lighthouse's
simulation then counts every request before that paint. So ``--runs N`` measures each page
N times and reports the run with the median performance score, as Lighthouse's own CI does
(``make lighthouse`` uses 3), with the lowest and highest scores beside it, how many runs had
such a stalled first paint, and the median of the others. The table starts with the load
average; compare tables taken at a similar load.
"""
from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
CHROMIUM = "/usr/bin/chromium"
CHROME_FLAGS = "--headless=new --no-sandbox"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
# what a static host compresses
COMPRESSED = ("text/", "application/javascript", "application/json", "image/svg+xml", "application/xml")


class CompressingHandler(http.server.SimpleHTTPRequestHandler):
    """Static files as GitHub Pages serves them: text types gzipped for clients that accept it
    (the whole file, Content-Length set) and a 10-minute cache lifetime on everything."""

    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not self.path.split("?", 1)[0].endswith("/"):
                return super().send_head()  # the redirect to the slash URL
            path = os.path.join(path, "index.html")
        ctype = self.guess_type(path)
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and os.path.isfile(path) and ctype.startswith(COMPRESSED)):
            return super().send_head()
        with open(path, "rb") as f:
            body = gzip.compress(f.read(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", ctype + ("; charset=utf-8" if ctype.startswith("text/") else ""))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def serve(site: Path):
    """A compressing static server for ``site`` on a free port of 127.0.0.1: (server, base URL)."""
    handler = functools.partial(CompressingHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def page_urls(site: Path) -> dict[str, str]:
    """Page name -> site-relative URL, for every page of the site (``404.html`` and ``print/`` aside:
    one is an error page, the other the whole lecture on one page, for paper)."""
    out = {}
    for html in sorted(site.rglob("index.html")):
        rel = html.parent.relative_to(site).as_posix()
        url = "" if rel == "." else rel + "/"
        if url != "print/":
            out[url.strip("/").replace("/", "_") or "home"] = url
    return out


def measure(url: str, json_out: Path | None, timeout: int = 300, cpu_slowdown: float | None = None) -> dict:
    """One Lighthouse run of ``url``: the four scores (0-100), CLS and LCP (s) and the run's
    CPU benchmark index, or an error. ``cpu_slowdown`` replaces Lighthouse's 4x CPU multiplier."""
    with tempfile.TemporaryDirectory(prefix="lighthouse-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [str(LIGHTHOUSE), url, "--output=json", f"--output-path={report}", "--quiet",
               f"--chrome-path={CHROMIUM}", f"--chrome-flags={CHROME_FLAGS}",
               f"--only-categories={','.join(CATEGORIES)}"]
        if cpu_slowdown is not None:
            cmd.append(f"--throttling.cpuSlowdownMultiplier={cpu_slowdown:g}")
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                 env=dict(os.environ, TMPDIR=tmp))
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout} s"}
        if res.returncode or not report.is_file():
            return {"error": (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1][:200]}
        data = json.loads(report.read_text())
        if json_out is not None:
            shutil.copyfile(report, json_out)
    if data.get("runtimeError"):
        return {"error": data["runtimeError"].get("message", "runtime error")[:200]}
    scores = {c: data["categories"][c]["score"] for c in CATEGORIES}
    audits = data["audits"]
    failing = sorted(f"{a['id']}" for a in audits.values()
                     if a.get("score") is not None and a["score"] < 1 and a.get("scoreDisplayMode") == "binary")
    return {**{c: None if s is None else round(100 * s) for c, s in scores.items()},
            "cls": audits["cumulative-layout-shift"].get("numericValue"),
            "lcp": (audits["largest-contentful-paint"].get("numericValue") or 0) / 1000,
            "failing": failing, "benchmark": (data.get("environment") or {}).get("benchmarkIndex"),
            "stalled": paint_stalled(audits)}


def paint_stalled(audits: dict) -> bool:
    """Whether the browser showed the page's first paint only after the page had finished
    loading (observed, unthrottled times): the signature of headless Chromium holding back
    frames from a page it judged unresponsive, about a whole second, while the page sits
    idle (open upstream: GoogleChrome/lighthouse#17148 and #17230). Lighthouse's simulation
    then counts every request before that late paint, and the score of the same page falls
    from the 90s to the 60s. Such a run measures the browser, not the page."""
    observed = ((audits.get("metrics") or {}).get("details") or {}).get("items") or [{}]
    fcp, load = observed[0].get("observedFirstContentfulPaint"), observed[0].get("observedLoad")
    return fcp is not None and load is not None and fcp > load


def pages_to_measure(urls: dict[str, str], one_script_page: bool) -> list[str]:
    """Every page name, or, with ``one_script_page``, every page but the figure scripts' pages
    save the first (they are one template with a different listing)."""
    scripts = [n for n, url in urls.items() if url.startswith("scripts/")]
    return [n for n in urls if not (one_script_page and n in scripts[1:])]


def median_run(runs: list[dict]) -> dict:
    """Of several runs of one page, the one with the median performance score (the lower middle
    one of an even count), with every run's score in ``perf_runs``; failed runs are left out,
    and if every run failed, the last error is returned. ``perf_unstalled`` is the median score
    of the runs whose first paint was not held back (``paint_stalled``), None if there is none,
    and ``stalled_runs`` how many were."""
    ok = [r for r in runs if "error" not in r and r.get("performance") is not None]
    if not ok:
        return runs[-1]
    ranked = sorted(ok, key=lambda r: r["performance"])
    clean = [r["performance"] for r in ranked if not r.get("stalled")]
    return {**ranked[(len(ranked) - 1) // 2], "perf_runs": [r["performance"] for r in ok],
            "perf_unstalled": clean[(len(clean) - 1) // 2] if clean else None,
            "stalled_runs": len(ok) - len(clean)}


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("site", type=Path, nargs="?", default=ROOT / "site", help="a built site (default: site/)")
    p.add_argument("--pages", default="", help="comma-separated page names (default: every page)")
    p.add_argument("--no-scripts", action="store_true",
                   help="measure one figure scripts page (scripts/CHAPTER/, one template), not all of them")
    p.add_argument("--runs", type=int, default=1, help="measure each page N times, report the median run (default 1)")
    p.add_argument("--json-dir", type=Path, help="keep each page's full Lighthouse report here (the median run's)")
    p.add_argument("--cpu-slowdown", type=float, default=None,
                   help="CPU slowdown multiplier instead of Lighthouse's 4 (its docs: lower it on a host "
                        "whose benchmark index is under a desktop's 1500-2000); the table says which was used")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error(f"--runs must be at least 1, got {args.runs}")
    if args.cpu_slowdown is not None and not 1 <= args.cpu_slowdown <= 20:
        p.error(f"--cpu-slowdown must be between 1 and 20, got {args.cpu_slowdown:g}")
    if not (args.site / "index.html").is_file():
        print(f"{args.site} holds no built site: run `make site` first", file=sys.stderr)
        return 2
    if not LIGHTHOUSE.exists():
        print(f"{LIGHTHOUSE} is missing: run `make lighthouse` (it installs the pinned lighthouse, a dev dependency)", file=sys.stderr)
        return 2
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install chromium", file=sys.stderr)
        return 2
    urls = page_urls(args.site)
    wanted = [x for x in args.pages.split(",") if x]
    unknown = [x for x in wanted if x not in urls]
    if unknown:
        print(f"--pages: no page named {unknown}; the pages are: {', '.join(urls)}", file=sys.stderr)
        return 2
    if args.json_dir:
        args.json_dir.mkdir(parents=True, exist_ok=True)
    names = wanted or pages_to_measure(urls, args.no_scripts)
    server, base = serve(args.site)
    throttling = ("default throttling" if args.cpu_slowdown is None
                  else f"CPU slowdown {args.cpu_slowdown:g}x instead of 4x, network as default")
    print(f"Lighthouse (mobile, {throttling}) on {len(names)} pages of {args.site}, "
          f"{args.runs} run{'s' * (args.runs > 1)} each; load average {_loadavg()} on {os.cpu_count()} cores\n")
    spread = " (runs)" if args.runs > 1 else ""
    print(f"| page | performance{spread} | stalled runs | without them | accessibility | best practices | SEO | CLS "
          "| LCP (s) | failing audits |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    start = time.perf_counter()
    benchmarks: list[float] = []
    try:
        for name in names:
            reports = [args.json_dir / f"{name}.run{i}.json" if args.json_dir else None for i in range(args.runs)]
            runs = [{**measure(base + urls[name], report, cpu_slowdown=args.cpu_slowdown), "report": report}
                    for report in reports]
            benchmarks += [x["benchmark"] for x in runs if x.get("benchmark")]
            r = median_run(runs)
            if args.json_dir:  # keep the median run's report as NAME.json
                if r.get("report") and r["report"].is_file():
                    shutil.copyfile(r["report"], args.json_dir / f"{name}.json")
                for report in reports:
                    report.unlink(missing_ok=True)
            if "error" in r:
                print(f"| {name} | failed: {r['error']} | | | | | | | | |", flush=True)
                continue
            cells = ["-" if r[c] is None else str(r[c]) for c in CATEGORIES]
            if len(r.get("perf_runs", [])) > 1:
                cells[0] += f" ({min(r['perf_runs'])}–{max(r['perf_runs'])})"
            cls = "-" if r["cls"] is None else f"{r['cls']:.3f}"
            unstalled = "-" if r.get("perf_unstalled") is None else str(r["perf_unstalled"])
            stalled = f"{r.get('stalled_runs', int(bool(r.get('stalled'))))} of {len(r.get('perf_runs', [1]))}"
            print(f"| {name} | {cells[0]} | {stalled} | {unstalled} | {' | '.join(cells[1:])} | {cls} "
                  f"| {r['lcp']:.1f} | {', '.join(r['failing'])} |", flush=True)
    finally:
        server.shutdown()
    print(f"\n{len(names)} pages in {time.perf_counter() - start:.0f} s; load average now {_loadavg()}. "
          "Targets: performance >= 90, the others 100, CLS < 0.05. A stalled run showed its first paint "
          "only after the page had loaded (the browser held back frames; see paint_stalled): "
          "'without them' is the median of the other runs.")
    if benchmarks:
        print(benchmark_note(benchmarks))
    return 0


def benchmark_note(indices: list[float]) -> str:
    """What Lighthouse's CPU benchmark said of this machine during the runs, and how its default
    4x slowdown reads against it (Lighthouse's docs/throttling.md: 4x turns a 1500-2000 desktop
    into a mid-tier phone, and Lighthouse warns of a slow host below 1000)."""
    ordered = sorted(indices)
    median = ordered[(len(ordered) - 1) // 2]
    note = (f"CPU benchmark index (Lighthouse's, each run): median {median:.0f}, "
            f"{ordered[0]:.0f}-{ordered[-1]:.0f} over {len(ordered)} runs.")
    if median < 1000:
        note += (" Lighthouse calls a host under 1000 slower than it expects: its default 4x slowdown "
                 "assumes a desktop of 1500-2000, so here it simulates a slower phone than the mid-tier one "
                 "its scores are meant for (see --cpu-slowdown).")
    return note


if __name__ == "__main__":
    raise SystemExit(main())
