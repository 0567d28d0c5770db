"""MkDocs hook: serve KaTeX from the project's own npm install, so math renders offline.

``make`` runs ``npm ci``, which puts the pinned ``katex`` package in ``node_modules/``;
this hook adds its script, stylesheet and WOFF2 fonts to the site under
``assets/katex/``. No page loads anything from another host.
"""
from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paths import project_dir  # noqa: E402

KATEX_FILES = ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js")


def on_files(files, *, config):
    dist = project_dir(config) / "node_modules" / "katex" / "dist"
    if not (dist / "katex.min.js").is_file():
        raise PluginError(f"KaTeX is missing from {dist}: run `make deps` (it runs `npm ci`) first")
    for rel in KATEX_FILES:
        files.append(File.generated(config, f"assets/katex/{rel}", abs_src_path=str(dist / rel)))
    for font in sorted((dist / "fonts").glob("*.woff2")):
        files.append(File.generated(config, f"assets/katex/fonts/{font.name}", abs_src_path=str(font)))
    return files
