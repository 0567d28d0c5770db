"""Shared fixtures: the project root and a helper that runs a strict MkDocs build."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def mkdocs_build(config: Path, site_dir: Path, cache_dir: Path, *, timeout=600, **popen):
    """Run ``mkdocs build --strict`` for ``config`` into ``site_dir`` with its own cache."""
    env = dict(os.environ, MHA_CACHE_DIR=str(cache_dir), NO_MKDOCS_2_WARNING="1")
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site_dir)]
    if popen:
        return subprocess.Popen(cmd, env=env, cwd=config.parent, **popen)
    return subprocess.run(cmd, env=env, cwd=config.parent, capture_output=True, text=True, timeout=timeout)


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
