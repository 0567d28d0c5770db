"""Where the site build keeps its caches (outside docs/, never committed)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_root(config) -> Path:
    """``$MHA_CACHE_DIR`` if set (tests use a fresh one per clean build), else ``<project>/.cache``."""
    env = os.environ.get("MHA_CACHE_DIR")
    return Path(env).resolve() if env else Path(config.config_file_path).resolve().parent / ".cache"


def project_dir(config) -> Path:
    return Path(config.config_file_path).resolve().parent
