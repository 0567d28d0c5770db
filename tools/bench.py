"""`make bench`: build times, page weights and test-suite times against the targets in DESIGN.md.

Prints one table: clean build (and its figure step), no-change rebuild (and its ratio to a
plain build with the figure step skipped), a rebuild after editing one figure script and
one after editing one mhalib module (and how many figures each re-rendered), a page edit
under ``mkdocs serve`` against the same edit with a plain build, the heaviest page with everything it loads, the whole
site's size (with and without the payloads fetched on request), two clean builds compared byte for byte, the live
generator's and the live real model's payloads and speed in headless Chromium (:mod:`tools.bench_generator`,
:mod:`tools.bench_bert_live`, which run alone on a built site), and the wall time of `make check`
and `make test` (skip those two with ``--no-tests``). Under it: the share of each step of
the clean build's figure step (``data()``, drawing, each format), its ten slowest renders,
and the ten slowest tests of `make test` (its ``--durations=10`` report). The figure step's
numbers are read from the statistics the hook writes (``MHA_BUILD_STATS``), not from the log.
"""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tools import bench_bert_live, bench_generator  # noqa: E402


def build(site: Path, cache: Path, *, skip_figures=False, strict=True) -> tuple[float, dict]:
    """Build the site; returns the wall time and the figure step's statistics."""
    stats_file = Path(str(site) + ".stats.json")
    env = dict(os.environ, MHA_CACHE_DIR=str(cache), NO_MKDOCS_2_WARNING="1", MHA_BUILD_STATS=str(stats_file))
    if skip_figures:
        env["MHA_SKIP_FIGURES"] = "1"
    cmd = [sys.executable, "-m", "mkdocs", "build", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)]
    if strict:
        cmd.append("--strict")
    t0 = time.perf_counter()
    res = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if res.returncode:
        sys.exit(f"build failed:\n{res.stderr[-4000:]}")
    stats = {} if skip_figures else json.loads(stats_file.read_text())
    return elapsed, stats


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("img", "script") and a.get("src"):
            self.refs.add(a["src"])
        if tag == "link" and a.get("rel") in ("stylesheet",) and a.get("href"):
            self.refs.add(a["href"])


def page_weights(site: Path) -> list[tuple[str, int]]:
    """Bytes a reader's browser fetches for each page: the HTML, its scripts and stylesheets,
    and the images of one colour scheme (the other scheme's variants are display:none and
    never requested); the heavier scheme counts."""
    out = []
    for html in site.rglob("*.html"):
        p = _Refs()
        p.feed(html.read_text())
        per_scheme = []
        for skip in ("#only-dark", "#only-light"):
            total = html.stat().st_size
            for ref in p.refs:
                if re.match(r"^[a-z]+:", ref) or ref.endswith(skip):
                    continue
                path = ref.split("#")[0].split("?")[0]
                f = ((site if path.startswith("/") else html.parent) / path.lstrip("/")).resolve()
                if f.is_file():
                    total += f.stat().st_size
            per_scheme.append(total)
        out.append((str(html.relative_to(site)), max(per_scheme)))
    return sorted(out, key=lambda x: -x[1])


def real_model_figures() -> tuple[int, float]:
    """Render the real-model chapter's figures from a cold cache; (count, seconds)."""
    code = ("import time, tempfile; from pathlib import Path; t = time.perf_counter()\n"
            "import figures; from figures._kit.build import render\n"
            "s = [x for x in figures.scripts().values() if x.chapter == 'real_model']\n"
            "with tempfile.TemporaryDirectory() as tmp: render([x.request() for x in s], figures.FIGURES_DIR, Path(tmp))\n"
            "print(len(s), time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    n, seconds = out.stdout.split()
    return int(n), float(seconds)


def timed(cmd: list[str]) -> tuple[float, str]:
    """Run ``cmd``; its wall time and its output."""
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if res.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{res.stdout[-3000:]}{res.stderr[-2000:]}")
    return time.perf_counter() - t0, res.stdout


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(call|setup|teardown)\s+(\S.*?)\s*$")


def slowest_tests(output: str, n: int = 10) -> list[tuple[float, str, str]]:
    """``(seconds, phase, test id)`` of the slowest tests in pytest's ``--durations`` report."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if "slowest" in line and "durations" in line), None)
    if start is None:
        return []
    found = []
    for line in lines[start + 1:]:
        m = _DURATION.match(line)
        if m:
            found.append((float(m.group(1)), m.group(2), m.group(3)))
        elif found and line.startswith("="):
            break
    return sorted(found, key=lambda t: -t[0])[:n]


#: The steps of one render, in the order of the share table (see ``Stats.format_seconds``).
STEPS = {
    "data": "data()", "draw": "drawing and layout (light, dark)", "draw_narrow": "drawing and layout (phone)",
    "svg": "SVG light", "svg_dark": "SVG dark", "svg_narrow": "SVG phone light", "svg_narrow_dark": "SVG phone dark",
    "pdf": "PDF", "json": "JSON", "csv": "CSV",
    "wide_csv": "wide CSV", "explorer": "explorer payload", "md": "table Markdown",
}


def render_profile(stats: dict, n: int = 10) -> str:
    """Markdown: the share of each step (format) of the figure step's work, and the ``n``
    slowest renders with their three costliest steps, from a build's statistics."""
    steps, renders = stats.get("format_seconds", {}), stats.get("render_seconds", {})
    total = sum(renders.values())
    if not total:
        return "(no figure was rendered)\n"
    by_step: dict = {}
    for seconds in steps.values():
        for step, t in seconds.items():
            by_step[step] = by_step.get(step, 0.0) + t
    by_step["other"] = max(0.0, total - sum(by_step.values()))  # checks, manifest, cache entry
    out = [f"Figure step: {len(renders)} renders, {total:.1f} s of worker time "
           f"({stats.get('workers', 0)} workers, {stats.get('seconds', 0):.1f} s wall)\n",
           "| step | seconds | share |", "|---|---:|---:|"]
    for step, t in sorted(by_step.items(), key=lambda kv: -kv[1]):
        label = STEPS.get(step, "checks, manifest, cache entry" if step == "other" else step)
        out.append(f"| {label} | {t:.1f} | {100 * t / total:.0f} % |")
    out += ["", f"The {n} slowest renders:\n", "| render | seconds | costliest steps |", "|---|---:|---|"]
    for stem, t in sorted(renders.items(), key=lambda kv: -kv[1])[:n]:
        top = sorted(steps.get(stem, {}).items(), key=lambda kv: -kv[1])[:3]
        out.append(f"| {stem} | {t:.2f} | " + ", ".join(f"{k} {v:.2f}" for k, v in top) + " |")
    return "\n".join(out) + "\n"


#: The library module the bench edits (the ALiBi figures and their tables use it).
LIB_MODULE, LIB_MODULE_NAME = "alibi.py", "mhalib.alibi"


def edited_build(path: Path, site: Path, cache: Path) -> tuple[float, dict]:
    """:func:`build` with a comment appended to ``path`` (a figure script or a library module),
    which is put back as it was however the build ends."""
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\n# bench: one edited file\n")
        return build(site, cache)
    finally:
        path.write_bytes(original)


def serve_edit(plain: bool) -> float:
    """The median time from a page save to the rebuilt site under ``mkdocs serve``
    (tools/measure_serve.py, which edits a copy of the project)."""
    cmd = [sys.executable, str(ROOT / "tools" / "measure_serve.py")] + (["--plain"] if plain else [])
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+) s", res.stdout)
    if res.returncode or not m:
        sys.exit(f"{' '.join(cmd)} failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    return float(m.group(1))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    n_bert, bert_seconds = real_model_figures()
    serve, serve_plain = serve_edit(plain=False), serve_edit(plain=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cache = tmp / "cache"
        clean, clean_stats = build(tmp / "clean", cache)
        n_total = clean_stats["total"]
        again = [build(tmp / "site", cache)[0] for _ in range(3)]
        plain = [build(tmp / "plain", cache, skip_figures=True, strict=False)[0] for _ in range(3)]
        import figures

        found = figures.scripts()
        script = sorted(s.path for s in found.values())[0]
        # the edited script and every script that imports it (its table, say) must re-render
        expected = 1 + sum(1 for s in found.values() if script.stem in s.imports)
        one, stats1 = edited_build(script, tmp / "site", cache)
        rerendered = stats1["rendered"]
        # one mhalib module edited: only the figures whose scripts run it render again (a
        # script's key covers the library modules it imports, tests/test_faults.py checks which)
        lib_one, lib_stats = edited_build(ROOT / "mhalib" / LIB_MODULE, tmp / "site", cache)
        # its dependents in the import graph the cache key follows (mha.py imports alibi.py, so
        # every script that runs multi-head attention is one); each stem is a script's request
        from figures._kit import contract

        library = contract.Library(contract.library_dir())
        users = {n for n, s in found.items()
                 if (mods := library.modules_for(s.lib_refs)) is None or LIB_MODULE_NAME in mods}
        while grown := {n for n, s in found.items() if n not in users and set(s.imports) & users}:
            users |= grown  # and the scripts that import those scripts
        lib_expected = sum(1 for stem in clean_stats["render_seconds"] if stem.split("--")[0] in users)
        weights = page_weights(tmp / "clean")
        generator = bench_generator.rows(tmp / "clean")  # in headless Chromium (tools/bench_generator.py)
        # the live real model, and the site's size with and without the payloads fetched on request
        bert_live = bench_bert_live.rows(tmp / "clean")
        # print/ is the whole lecture on one page, for paper: heavy by design, reported apart
        print_weight = dict(weights).get("print/index.html", 0)
        weights = [w for w in weights if w[0] != "print/index.html"]
        build(tmp / "clean2", tmp / "cache2")
        differ = _differences(tmp / "clean", tmp / "clean2")
        identical = not differ

    nochange, base = statistics.median(again), statistics.median(plain)
    rows = [
        ("clean build (figures, tables, notebooks)", f"{clean:.1f} s", "<= 30 s", clean <= 30),
        (f"  of which the figure step ({clean_stats['workers']} workers)", f"{clean_stats['seconds']:.1f} s", "", None),
        ("no-change rebuild", f"{nochange:.2f} s", "", None),
        ("plain build of the same pages, figure step skipped", f"{base:.2f} s", "", None),
        ("no-change / plain", f"{nochange / base:.2f} x", "<= 1.25 x", nochange / base <= 1.25),
        (f"rebuild after editing {script.name}", f"{one:.2f} s", "", None),
        ("figures re-rendered by that edit (it and its importers)", f"{rerendered} of {n_total}", str(expected),
         rerendered == expected),
        (f"rebuild after editing mhalib/{LIB_MODULE}", f"{lib_one:.2f} s", "", None),
        ("figures re-rendered by that edit", f"{lib_stats['rendered']} of {n_total}",
         f"{lib_expected} (the renders of the {len(users)} scripts that import it)",
         lib_stats["rendered"] == lib_expected),
        ("page edit under serve (tools/measure_serve.py, median of 5)", f"{serve:.2f} s", "<= 2 s or <= 1.5 x plain",
         serve <= 2 or serve / serve_plain <= 1.5),
        ("  the same edit, plain build of the same pages", f"{serve_plain:.2f} s", "", None),
        (f"heaviest page ({weights[0][0]})", f"{weights[0][1] / 1e6:.2f} MB", "<= 1.5 MB", weights[0][1] <= 1.5e6),
        ("whole lecture on one page (print/, images load lazily)", f"{print_weight / 1e6:.2f} MB", "", None),
        (f"real-model page: {n_bert} figures, cold cache", f"{bert_seconds:.1f} s", "<= 30 s", bert_seconds <= 30),
        ("two clean builds byte-identical", "yes" if identical else
         f"NO: {len(differ)} files differ, " + ", ".join(differ[:5]), "yes", identical),
    ] + generator + bert_live
    slow_tests = []
    if "--no-tests" not in argv:
        check, _ = timed(["make", "check"])
        full, output = timed(["make", "test"])  # make test passes --durations=10 to pytest
        slow_tests = slowest_tests(output)
        rows += [("make check (fast tier)", f"{check:.0f} s", "< 60 s", check < 60),
                 ("make test (everything)", f"{full / 60:.1f} min", "<= 5 min", full <= 300)]
    print(f"\nmake bench on {os.cpu_count()} cores, load average {_load()} at the end "
          "(median of 3 for the rebuilds)\n")
    print("| measure | value | target | ok |\n|---|---:|---:|:---:|")
    for name, value, target, ok in rows:
        mark = "" if ok is None else ("yes" if ok else "**NO**")
        print(f"| {name} | {value} | {target} | {mark} |")
    print("\nWhere the clean build's figure step spends its time (seconds inside the workers):\n")
    print(render_profile(clean_stats))
    if slow_tests:
        print("The 10 slowest tests of make test:\n\n| test | phase | seconds |\n|---|---|---:|")
        for seconds, phase, test in slow_tests:
            print(f"| {test} | {phase} | {seconds:.1f} |")
    return 0


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def _differences(a: Path, b: Path) -> list[str]:
    """The files that differ between two trees (or are in one only), sorted."""
    fa = {p.relative_to(a): p.read_bytes() for p in a.rglob("*") if p.is_file()}
    fb = {p.relative_to(b): p.read_bytes() for p in b.rglob("*") if p.is_file()}
    return sorted(str(k) for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))


if __name__ == "__main__":
    raise SystemExit(main())
