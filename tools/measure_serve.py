"""How long `mkdocs serve` takes to rebuild after a page is saved, and where the time goes.

`mkdocs serve` (MkDocs 1.6) builds once, then on every save calls its builder in the same
process: a fresh ``load_config()`` and ``build(config, serve_url=..., dirty=False)``; the hook
modules and plugin objects stay imported, so whatever a hook remembers survives. This tool
does the same in-process, without the HTTP server:

    python -m tools.measure_serve                 # 1 warm-up build, then 5 timed page edits
    python -m tools.measure_serve --plain         # the baseline: MHA_SKIP_FIGURES=1 (as `make bench`)
    python -m tools.measure_serve --phases        # the median time of each MkDocs step and hook event
    python -m tools.measure_serve --profile 25    # cProfile one timed rebuild, top 25 functions
    python -m tools.measure_serve --compare       # and check the served site equals a clean build

It works in a copy of the project (tracked and new files; ``node_modules`` linked; a git
repository of its own), so the page it edits (``--page``, default ``docs/rope.md``) is never
the checkout's own; the figure cache is the checkout's ``.cache`` unless ``MHA_CACHE_DIR`` is
set. ``--keep`` keeps the copy and ``--project COPY`` builds it again (with the checkout's
current hooks, or ``--hooks-from REV``'s for a "before"; its figure code stays as copied, so its
cache entries stay valid while the checkout's figure code changes). Each timed rebuild edits
the page (a different last line each time) and times the builder, from the save to the written
site, and checks the edit is in the page. Prints the load average with the times: the machine
is shared.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def copy_project(dest: Path) -> Path:
    out = subprocess.run(["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, out):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / "node_modules").symlink_to(ROOT / "node_modules")
    # a git checkout, as the real one is: the build dates and the downloads read git
    git = ["git", "-c", "user.name=measure", "-c", "user.email=measure@localhost", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    subprocess.run(["git", "add", "-A"], cwd=dest, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "copy"], cwd=dest, check=True,
                   env=dict(os.environ, GIT_AUTHOR_DATE="2025-01-01T00:00:00Z", GIT_COMMITTER_DATE="2025-01-01T00:00:00Z"))
    return dest


class Serve:
    """The builder of ``mkdocs.commands.serve.serve``, without the server."""

    def __init__(self, project: Path, site_dir: Path):
        from mkdocs.config import load_config
        from mkdocs.livereload import _serve_url
        from urllib.parse import urlsplit

        self.load = lambda: load_config(config_file=str(project / "mkdocs.yml"), site_dir=str(site_dir))
        config = self.load()
        config.plugins.on_startup(command="serve", dirty=False)
        host, port = config.dev_addr
        self.serve_url = _serve_url(host, port, urlsplit(config.site_url or "/").path)
        self.first = config

    def build(self) -> float:
        from mkdocs.commands.build import build

        t0 = time.perf_counter()
        config, self.first = self.first, None
        if config is None:
            config = self.load()
        config.site_url = self.serve_url
        build(config, serve_url=self.serve_url, dirty=False)
        return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--page", default="docs/rope.md", help="the page to edit (default docs/rope.md)")
    ap.add_argument("--runs", type=int, default=5, help="timed page edits (default 5)")
    ap.add_argument("--plain", action="store_true", help="MHA_SKIP_FIGURES=1: the plain-build baseline")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="profile the last rebuild, print N rows")
    ap.add_argument("--only", default="", metavar="REGEX", help="with --profile: only functions whose path matches")
    ap.add_argument("--phases", action="store_true",
                    help="time MkDocs' steps and each plugin's and hook's events in the timed rebuilds (median)")
    ap.add_argument("--keep", action="store_true", help="keep the copy (its path is printed)")
    ap.add_argument("--project", type=Path, help="an existing copy to build (one --keep printed; it stays): its "
                    "hooks/ are refreshed from the checkout, its figures/ and mhalib/ stay as they were")
    ap.add_argument("--compare", action="store_true",
                    help="then build the edited sources clean (`mkdocs build --strict`, a process of its own) and "
                         "fail unless the served site is the same, file for file")
    ap.add_argument("--hooks-from", metavar="REV", help="with --project: the hooks of this commit (a 'before')")
    args = ap.parse_args(argv)
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    os.environ.setdefault("MHA_CACHE_DIR", str(ROOT / ".cache"))
    if args.plain:
        os.environ["MHA_SKIP_FIGURES"] = "1"
    if args.compare:
        # `mkdocs serve` gives the site its own address as site_url; the clean build it is compared
        # with gets the same one, through SITE_URL as a deployment would (the served builds read it too)
        os.environ.setdefault("SITE_URL", "http://127.0.0.1:8000/")
    tmp = Path(tempfile.mkdtemp(prefix="measure-serve-"))
    try:
        project = args.project.resolve() if args.project else copy_project(tmp / "project")
        if args.project:  # the checkout's hooks (what is being measured); figures/ and mhalib/ stay as copied
            for hook in (project / "hooks").iterdir():
                hook.unlink()
            if args.hooks_from:
                names = subprocess.run(["git", "ls-tree", "--name-only", f"{args.hooks_from}:hooks"], cwd=ROOT,
                                       capture_output=True, text=True, check=True).stdout.split()
                for name in names:
                    (project / "hooks" / name).write_bytes(subprocess.run(
                        ["git", "show", f"{args.hooks_from}:hooks/{name}"], cwd=ROOT, capture_output=True,
                        check=True).stdout)
            else:
                for hook in (ROOT / "hooks").iterdir():
                    if hook.is_file():
                        shutil.copy2(hook, project / "hooks" / hook.name)
        os.chdir(project)
        sys.path.insert(0, str(project))  # its figures/ and mhalib/, not the checkout's
        import logging

        # the plain build warns of every figure link it leaves unresolved
        logging.basicConfig(level=logging.ERROR if args.plain else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s")
        serve = Serve(project, tmp / "site")
        if args.phases:
            install_phase_timers()
        print(f"first build: {serve.build():.2f} s", flush=True)
        page = project / args.page
        text = page.read_text(encoding="utf-8")
        try:
            rebuilds(args, serve, page, text, tmp)
            if args.compare and compare(project, tmp):
                return 1
        finally:
            page.write_text(text, encoding="utf-8")
    finally:
        if args.keep and not args.project:
            shutil.move(str(tmp / "project"), str(tmp.parent / (tmp.name + "-project")))
            print(f"kept the copy: {tmp.parent / (tmp.name + '-project')}")
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


PHASES: dict = {}  # step -> seconds in the build in progress
PHASE_RUNS: list = []  # one PHASES per timed rebuild


def _timed(name, fn):
    def wrapper(*a, **kw):
        t0 = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            PHASES[name] = PHASES.get(name, 0.0) + time.perf_counter() - t0
    return wrapper


def install_phase_timers() -> None:
    """Wrap MkDocs' build steps, and each event method of every plugin and hook, with timers."""
    import mkdocs.commands.build as b
    import mkdocs.plugins as p
    from mkdocs import utils
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

    b.utils.clean_directory = _timed("mkdocs: clean the site directory", utils.clean_directory)
    b.get_files = _timed("mkdocs: find the docs' files", b.get_files)
    Files.copy_static_files = _timed("mkdocs: copy/write the other files", Files.copy_static_files)
    Page.render = _timed("mkdocs: Markdown -> HTML (all pages, extensions incl.)", Page.render)
    b._build_theme_template = _timed("mkdocs: theme templates (404, sitemap)", b._build_theme_template)

    def run_event(self, name, item=None, **kwargs):
        pass_item = item is not None
        for method in self.events[name]:
            origin = self._current_plugin = self._event_origins.get(method, "<unknown>")
            t0 = time.perf_counter()
            result = method(item, **kwargs) if pass_item else method(**kwargs)
            key = f"{name}: {origin}"
            PHASES[key] = PHASES.get(key, 0.0) + time.perf_counter() - t0
            if result is not None:
                item = result
        self._current_plugin = None
        return item

    p.PluginCollection.run_event = run_event
    original_build_page = b._build_page
    b._build_page = _timed("mkdocs: page templates (incl. page_context, post_page events)", original_build_page)


def compare(project: Path, tmp: Path) -> list:
    """The files in which the served site differs from a clean build of the same sources."""
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp / "clean")],
                         cwd=project, capture_output=True, text=True)
    if res.returncode:
        sys.exit(f"the clean build failed:\n{res.stderr[-3000:]}")

    def tree(site):
        return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}

    served, clean = tree(tmp / "site"), tree(tmp / "clean")
    diff = sorted(k for k in served.keys() | clean.keys() if served.get(k) != clean.get(k))
    print(f"served site vs a clean build of the same sources: {len(served)} and {len(clean)} files, "
          + (f"{len(diff)} differ: {', '.join(diff[:10])}" if diff else "identical"))
    return diff


def rebuilds(args, serve, page, text, tmp) -> list:
    times = []
    for i in range(args.runs):
        PHASES.clear()
        page.write_text(text + f"\nEdited {i}.\n", encoding="utf-8")
        profile = args.profile and i == args.runs - 1
        prof = cProfile.Profile() if profile else None
        if prof:
            prof.enable()
        times.append(serve.build())
        if prof:
            prof.disable()
        html = (tmp / "site" / Path(args.page).relative_to("docs").with_suffix("") / "index.html")
        if f"Edited {i}." not in html.read_text(encoding="utf-8"):
            sys.exit(f"the rebuilt {html} does not hold the edit: stale output")
        print(f"rebuild {i + 1}: {times[-1]:.2f} s", flush=True)
        PHASE_RUNS.append(dict(PHASES, total=times[-1]))
    load = os.getloadavg()
    print(f"{'plain ' if args.plain else ''}page edit under serve: median {statistics.median(times):.2f} s, "
          f"min {min(times):.2f} s over {len(times)} (load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
    if args.phases:
        names = sorted({k for run in PHASE_RUNS for k in run}, key=lambda k: -statistics.median(
            [run.get(k, 0.0) for run in PHASE_RUNS]))
        for k in names:
            t = statistics.median([run.get(k, 0.0) for run in PHASE_RUNS])
            if t >= 0.01:
                print(f"  {t:6.2f} s  {k}")
    if args.profile:
        out = io.StringIO()
        only = (args.only,) if args.only else ()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(*only, args.profile)
        print(out.getvalue())
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(*only, args.profile)
        print(out.getvalue())
    return times


if __name__ == "__main__":
    raise SystemExit(main())
