"""MkDocs hook: date the build by its sources, not by the clock.

MkDocs writes the build date into ``sitemap.xml`` (``lastmod``) and its gzip header, and
takes it from ``SOURCE_DATE_EPOCH`` when that is set. If it is not, this hook sets it to
the time of the project's last commit, so rebuilding an unchanged checkout on another day
gives the same bytes. Outside a git checkout the clock is used, and the log says so.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paths import project_dir  # noqa: E402

log = logging.getLogger("mkdocs.hooks.dates")


def last_commit_epoch(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=root, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    value = out.stdout.strip()
    return value if out.returncode == 0 and value.isdigit() else None


def on_config(config):
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return config
    epoch = last_commit_epoch(project_dir(config))
    if epoch:
        os.environ["SOURCE_DATE_EPOCH"] = epoch
    else:
        log.info("dates: not a git checkout and SOURCE_DATE_EPOCH is unset; the sitemap carries today's date")
    return config
