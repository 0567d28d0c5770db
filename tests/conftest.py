"""Shared fixtures: the project root and one strict build of the real site for every test
that only reads a site (builds that test the machine itself use small fixture sites)."""
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
def built_site(tmp_path_factory) -> Path:
    """One clean strict build of the real site (fresh caches), shared by the site tests."""
    base = tmp_path_factory.mktemp("build-a")
    result = mkdocs_build(ROOT / "mkdocs.yml", base / "site", base / "cache")
    assert result.returncode == 0, result.stderr[-5000:]
    (base / "log.txt").write_text(result.stderr)
    return base / "site"
