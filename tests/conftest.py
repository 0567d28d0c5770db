"""Shared fixtures: the project root and one strict build of the real site for every test
that only reads a site (builds that test the machine itself use small fixture sites).

Under pytest-xdist (``make test`` runs ``-n 2``) the workers share that one build: the
first to need it builds it under a file lock, the others wait and reuse it.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import ROOT, mkdocs_build  # noqa: E402


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, request) -> Path:
    """One clean strict build of the real site (fresh caches), shared by the site tests."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # an xdist worker: one folder above the workers' own
        shared = shared.parent
    base = shared / "built-site"
    with FileLock(str(shared / "built-site.lock")):
        if not (base / "ok").is_file():
            base.mkdir(exist_ok=True)
            result = mkdocs_build(ROOT / "mkdocs.yml", base / "site", base / "cache")
            (base / "log.txt").write_text(result.stderr)
            assert result.returncode == 0, result.stderr[-5000:]
            (base / "ok").write_text("built\n")
    return base / "site"


def pytest_sessionstart(session):
    """Remove the browser summary's parts from an earlier run (the controller only)."""
    if not hasattr(session.config, "workerinput"):
        for part in (ROOT / "test-output").glob("browser-summary.*.part.json"):
            part.unlink()


def pytest_sessionfinish(session, exitstatus):
    """Add up the browser tests' counts from every worker into test-output/browser-summary.json."""
    import json

    if hasattr(session.config, "workerinput"):
        return
    parts = sorted((ROOT / "test-output").glob("browser-summary.*.part.json"))
    if not parts:
        return
    total: dict = {}
    for part in parts:
        for key, value in json.loads(part.read_text()).items():
            total[key] = total.get(key, 0) + value
        part.unlink()
    (ROOT / "test-output" / "browser-summary.json").write_text(json.dumps(total, indent=1) + "\n")
