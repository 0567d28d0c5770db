"""Shared fixtures: the project root, one strict build of the real site for every test that
only reads a site, one Chromium per test process, and the one browser tour of the site.

Under pytest-xdist (``make test`` runs ``-n 2 --dist loadgroup``) the workers share that one
build: the first to need it builds it under a file lock, the others wait and reuse it. A
build that fails fails once: its log is kept, and every test that needs the site reports that
one failure instead of building again.

Tests that share a module-scoped fixture (a drawn set of figures, a fixture site) are sent to
one worker (:func:`pytest_collection_modifyitems`), so the fixture is made once per run, not
once per worker; the tour's tests are grouped by configuration for the same reason.
"""
from __future__ import annotations

import json
import os

# One BLAS/OpenMP thread per test process (set before numpy or torch is imported): `make test`
# runs two test workers beside the shared build's two render workers on two cores; threaded
# linear algebra on top only oversubscribes them (measured: 30 -> 18 s of CPU for the model
# tests). The shared build inherits it; its render workers set the same.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project: tools.NAME
from helpers import ROOT  # noqa: E402

#: A build is about a minute on a quiet 2-core machine and several on a loaded one: the limit is
#: there only to end a build that hangs, far above any honest build (``MHA_TEST_BUILD_TIMEOUT``).
BUILD_TIMEOUT_S = float(os.environ.get("MHA_TEST_BUILD_TIMEOUT", 2400))
OUT = ROOT / "test-output"
SUMMARY: dict = {"pages": 0, "visits": 0, "requests": 0, "failed_requests": 0, "external_requests": 0,
                 "console_errors": 0, "axe_serious_or_critical": 0, "axe_rules_run": 0, "images_checked": 0,
                 "figure_views_measured": 0}


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def _shared_dir(basetemp: Path, config) -> Path:
    """The folder every process of this run shares: an xdist worker's basetemp is one below it."""
    return basetemp.parent if hasattr(config, "workerinput") else basetemp


def start_build(base: Path) -> None:
    """Start the shared build in the background, once per run (the first process to ask starts
    it, under a file lock). It runs in a session of its own, so it outlives the worker that
    started it; it writes its log to ``base/log.txt`` and, when done, its exit code to
    ``base/rc``."""
    from filelock import FileLock

    base.mkdir(parents=True, exist_ok=True)
    with FileLock(str(base) + ".lock"):
        if (base / "pid").is_file():
            return
        env = dict(os.environ, MHA_CACHE_DIR=str(base / "cache"), NO_MKDOCS_2_WARNING="1",
                   MHA_BUILD_STATS=str(base / "site.stats.json"), MHA_TRACE_LIB="1")
        for var in [v for v in env if v.startswith("COV_CORE_")]:  # the build is not measured for coverage
            env.pop(var)
        script = '"$@" > log.txt 2>&1; echo $? > rc.tmp && mv rc.tmp rc'
        cmd = ["sh", "-c", script, "build", sys.executable, "-m", "mkdocs", "build", "--strict",
               "-f", str(ROOT / "mkdocs.yml"), "-d", str(base / "site")]
        proc = subprocess.Popen(cmd, cwd=base, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        (base / "pid").write_text(str(proc.pid))


def wait_for_build(base: Path, timeout: float = BUILD_TIMEOUT_S) -> Path:
    """The shared site once its build has ended well. A failed build fails every caller with its
    one cause (it is never run twice); one still running after ``timeout`` is ended and failed."""
    start_build(base)
    deadline = time.monotonic() + timeout
    rc, log = base / "rc", base / "log.txt"
    while not rc.is_file():
        if time.monotonic() > deadline:
            try:
                os.killpg(int((base / "pid").read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
            rc.write_text(f"timeout after {timeout:g} s, MHA_TEST_BUILD_TIMEOUT\n")
            break
        time.sleep(0.2)
    code = rc.read_text().strip()
    if code != "0":
        tail = log.read_text(errors="replace")[-5000:] if log.is_file() else "(no log)"
        why = f"exit {code}" if code.lstrip("-").isdigit() else code
        pytest.fail(f"the shared site build failed once ({why}); every test that needs the site "
                    f"reports this one cause. Its log ({log}) ends:\n{tail}", pytrace=False)
    return base / "site"


def stop_build(base: Path) -> None:
    """End a shared build still running when the run ends (an interrupted run)."""
    pid = base / "pid"
    if pid.is_file() and not (base / "rc").is_file():
        try:
            os.killpg(int(pid.read_text()), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, request) -> Path:
    """One clean strict build of the real site (fresh caches), shared by the site tests. It
    starts as soon as the run knows it will need it (:class:`_EagerBuild`), so the tests that
    need no site run while it builds.

    ``MHA_TEST_SITE=DIR`` reads a site built earlier instead (a ``built-site/site`` folder of a
    former run), for iterating on the tests that read a site; CI and ``make test`` never set it."""
    if os.environ.get("MHA_TEST_SITE"):
        return Path(os.environ["MHA_TEST_SITE"])
    return wait_for_build(_shared_dir(tmp_path_factory.getbasetemp(), request.config) / "built-site")


class _EagerBuild:
    """Starts the shared build right after collection when a selected test needs the site, and
    tells the scheduler which tests run together (:func:`pytest_xdist_make_scheduler`)."""

    @pytest.hookimpl(trylast=True)  # after -k and -m have deselected what they deselect
    def pytest_collection_modifyitems(self, config, items):
        if hasattr(config, "workerinput"):
            _write_groups(_shared_dir(config._tmp_path_factory.getbasetemp(), config) / GROUPS, items)
        if (os.environ.get("MHA_TEST_SITE") or config.option.collectonly
                or not any("built_site" in item.fixturenames for item in items)):
            return
        start_build(_shared_dir(config._tmp_path_factory.getbasetemp(), config) / "built-site")
        # the tests that need no site first: they run while it builds (a stable sort, the same
        # order in every worker, as xdist requires)
        items.sort(key=lambda item: "built_site" in item.fixturenames)


def pytest_configure(config):
    config.pluginmanager.register(_EagerBuild(), "mha-eager-build")


def unmarked_site_tests(items) -> list[str]:
    """The tests that read the shared site without the ``build`` mark: ``make check`` selects them,
    and one such test makes the fast tier wait for a whole site build (two did: 47 s of its 123)."""
    return [item.nodeid for item in items
            if "built_site" in item.fixturenames and item.get_closest_marker("build") is None]



def _whole_suite(config) -> bool:
    """A run of every test (``make test``, CI): no test chosen by name, marker, file or folder."""
    o = config.option
    chosen = [a for a in config.args if Path(a).resolve() != ROOT / "tests"]
    return not (chosen or o.keyword or o.markexpr or o.collectonly or os.environ.get("MHA_TEST_SITE"))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """A run of the whole suite starts the shared build at once, in the process that runs the
    session (xdist's controller): it then builds while the workers start and collect (about 7 s
    on two cores), instead of after. Any other run starts it when its collection shows a test
    that needs it (:class:`_EagerBuild`)."""
    config = session.config
    if not hasattr(config, "workerinput") and _whole_suite(config):
        start_build(_shared_dir(config._tmp_path_factory.getbasetemp(), config) / "built-site")
    if not hasattr(config, "workerinput"):  # the browser summary's parts from an earlier run
        for part in OUT.glob("browser-summary.*.part.json"):
            part.unlink()


# ---- which worker runs what ----------------------------------------------------------------------
# xdist's --dist loadgroup passes a test's group to the scheduler by appending "@group" to its node
# id, which pytest >= 9.2 no longer lets a plugin change (pytest-dev/pytest-xdist#1386): the groups
# are silently ignored. So the workers write each grouped test's group to a file beside their own
# folders when they have collected, and the scheduler below reads it.

GROUPS = "xdist-groups.json"


def _write_groups(path: Path, items) -> None:
    """Each grouped test's group, and the tests that need the shared site, for the scheduler."""
    groups = {item.nodeid: "_".join(sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                                             for m in item.iter_markers("xdist_group")}))
              for item in items}
    site = [item.nodeid for item in items if "built_site" in item.fixturenames]
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"groups": {k: v for k, v in groups.items() if v}, "site": site}))
    os.replace(tmp, path)  # every worker writes the same map: the last one wins, whole


def _site_last(workqueue: dict, site: set) -> dict:
    """The scopes in the order they are handed out: those that need no site first (they run
    while the shared site builds), then those that need it; largest first within each (a big
    scope started last would leave the other worker idle at the end). xdist's own reordering
    (largest first over all) sent both workers to wait for the build from their first test."""
    needs_site = {scope: any(nodeid in site for nodeid in unit) for scope, unit in workqueue.items()}
    return dict(sorted(workqueue.items(), key=lambda item: (needs_site[item[0]], -len(item[1]))))


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``: each group's tests go to one worker, as xdist means them to, in the
    order of :func:`_site_last`."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    path = config._tmp_path_factory.getbasetemp() / GROUPS

    class Grouped(LoadScopeScheduling):
        info: dict | None = None

        def _read(self) -> dict:
            if self.info is None:  # read when the workers have collected (scheduling starts then)
                self.info = json.loads(path.read_text()) if path.is_file() else {"groups": {}, "site": []}
            return self.info

        def _split_scope(self, nodeid: str) -> str:
            groups = self._read()["groups"]
            return "group:" + groups[nodeid] if nodeid in groups else nodeid

        def _assign_work_unit(self, node) -> None:
            if not getattr(self, "_ordered", False):  # once, before the first unit goes out
                ordered = _site_last(self.workqueue, set(self._read()["site"]))
                self.workqueue.clear()
                self.workqueue.update(ordered)
                self._ordered = True
            super()._assign_work_unit(node)

    return Grouped(config, log)


# ---- the browser -------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium, installed with apt when missing; skip loudly only if that fails."""
    import shutil

    from tools.screenshots import CHROMIUM

    if not Path(CHROMIUM).exists():
        apt = shutil.which("apt-get")
        steps = [[apt, "update", "-q"], [apt, "install", "-y", "-q", "chromium"]] if apt else []
        for cmd in steps:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200,
                               env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
            if r.returncode:
                break
    if not Path(CHROMIUM).exists():
        msg = ("\n" + "!" * 72 + "\nBROWSER TESTS SKIPPED: Chromium is not at /usr/bin/chromium and "
               "`apt-get install chromium` failed (no apt, no root, or no package mirror).\n" + "!" * 72)
        warnings.warn(msg)
        print(msg, file=sys.stderr)
        pytest.skip(msg)
    return CHROMIUM


@pytest.fixture(scope="session")
def browser(chromium):
    """One Chromium for the whole test process (Playwright's sync API runs one per thread)."""
    from playwright.sync_api import sync_playwright

    from tools.screenshots import ARGS

    pw = sync_playwright().start()
    b = pw.chromium.launch(executable_path=chromium, args=ARGS)
    yield b
    b.close()
    pw.stop()


@pytest.fixture(scope="session")
def site_url(built_site):
    from tools.screenshots import serve

    server, base = serve(built_site)
    yield base
    server.shutdown()


@pytest.fixture(scope="session")
def tour(browser, site_url, built_site):
    """The one tour of the site (tests/tour.py): each page loaded once per configuration."""
    from tour import Tour

    t = Tour(browser, site_url, built_site)
    yield t
    t.close()
    for v in t.visits.values():
        SUMMARY["visits"] += 1
        SUMMARY["requests"] += len(v.requests)
        SUMMARY["failed_requests"] += len(v.failed)
        SUMMARY["external_requests"] += len(v.external)
        SUMMARY["console_errors"] += len(v.console)
        SUMMARY["images_checked"] += len(v.images)
        SUMMARY["figure_views_measured"] += len(v.figure_text)
        if v.axe is not None:
            SUMMARY["pages"] += 1
            SUMMARY["axe_serious_or_critical"] += len(v.axe)
            SUMMARY["axe_rules_run"] += v.axe_rules
    # Under xdist each worker writes its part; the controller adds them up (pytest_sessionfinish).
    OUT.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (OUT / f"browser-summary.{worker}.part.json").write_text(json.dumps(SUMMARY, indent=1) + "\n")


# ---- distribution over the workers -------------------------------------------------------------

@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups, and before -m deselects
def pytest_collection_modifyitems(config, items):
    """A test that uses a module- or class-scoped fixture runs on the worker of its module's
    other such tests (``--dist loadgroup``), so the fixture is made once per run. And every test
    that reads the site is marked ``build`` (:func:`unmarked_site_tests`), in any run."""
    unmarked = unmarked_site_tests(items)
    if unmarked:
        raise pytest.UsageError("these tests read the built site (fixture built_site) but are not marked "
                                "@pytest.mark.build, so `make check` would build the site for them: "
                                + ", ".join(unmarked))
    for item in items:
        if any(True for _ in item.iter_markers("xdist_group")):
            continue
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info else ()
        if any(d.scope in ("module", "class") for seq in defs for d in seq):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


def pytest_sessionfinish(session, exitstatus):
    """End a shared build the run left running; add up the browser tests' counts from every
    worker into test-output/browser-summary.json (the controller only)."""
    if hasattr(session.config, "workerinput"):
        return
    stop_build(session.config._tmp_path_factory.getbasetemp() / "built-site")
    parts = sorted(OUT.glob("browser-summary.*.part.json"))
    if not parts:
        return
    total: dict = {}
    for part in parts:
        for key, value in json.loads(part.read_text()).items():
            total[key] = total.get(key, 0) + value
        part.unlink()
    (OUT / "browser-summary.json").write_text(json.dumps(total, indent=1) + "\n")


# ---- coverage: measured where the library is tested ------------------------------------------------
# `make test` measures mhalib's coverage (--cov-fail-under). The library's own tests reach 99 % of
# its lines without the build and browser tests; those run mhalib in worker processes (not
# measured anyway) and spend their time in Playwright and MkDocs, whose every Python call the
# tracer pays for. So coverage is paused while a build or browser test sets up and runs, and
# while a test marked ``no_cover`` (pytest-cov's marker: the figure kit's export tests, drawing
# with matplotlib) sets up; pytest-cov pauses it for the call.

UNMEASURED = ("build", "browser")


def _coverage(item, phase: str):
    """pytest-cov's controller when coverage is on and ``item``'s ``phase`` is not measured here."""
    marks = UNMEASURED + (("no_cover",) if phase == "setup" else ())
    if not any(item.get_closest_marker(m) for m in marks) or (phase == "call" and item.get_closest_marker("no_cover")):
        return None
    plugin = item.config.pluginmanager.getplugin("_cov")
    controller = getattr(plugin, "cov_controller", None)
    return controller if controller is not None and getattr(controller, "started", False) else None


def _paused(item, phase: str):
    controller = _coverage(item, phase)
    if controller is not None:
        controller.pause()
    try:
        yield
    finally:
        if controller is not None:
            controller.resume()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _paused(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _paused(item, "call")
