"""MkDocs hook: serve the project's source archive and the ``mhalib`` wheel, built at build time.

:mod:`downloads` builds them (deterministic, cached by the hash of the files they hold);
here they become site files at ``downloads/<name>`` (``on_files``), and pages name them
with the ``download`` directive (``on_page_markdown``), so no page types a version::

    {{ download wheel }}          a link: [mhalib-0.1.0-py3-none-any.whl](downloads/...)
    {{ download source }}         the same for mha-course-0.1.0-src.tar.gz
    {{ download wheel name }}     the bare file name (for an install line in a code block)
    {{ download wheel size }}     its size, e.g. 143 kB
    {{ download source version }} the version both carry (pyproject.toml's), e.g. 0.1.0

Its ``on_page_markdown`` runs before the figures hook's whatever the order of ``mkdocs.yml``'s
hooks (``event_priority``): it replaces the ``download`` directives, and the figures hook
refuses any it still finds. Notebook pages
link the downloads in their own box (``site_notebooks.py``).
"""
from __future__ import annotations

import logging
import os
import posixpath
import sys
import time
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _context  # noqa: E402
import _serve  # noqa: E402
import directives  # noqa: E402
import downloads  # noqa: E402
from _paths import cache_root, project_dir  # noqa: E402
from _serve import on_shutdown, on_startup  # noqa: E402,F401  (MkDocs calls them: serve or build)

log = logging.getLogger("mkdocs.hooks.downloads")
FORMS = ("link", "name", "size", "version")


class Built(dict):
    """This build's downloads: kind (``wheel``, ``source``) -> (its site file, its size in bytes)."""


def on_config(config):
    _serve.begin(config)
    return config


def on_files(files, *, config):
    epoch = os.environ.get("SOURCE_DATE_EPOCH")  # set by site_dates.py from the last commit
    try:
        built = downloads.build_downloads(
            project_dir(config), cache_root(config) / "downloads",
            epoch=int(epoch) if epoch and epoch.isdigit() else int(time.time()), log=log.info,
            exclude=(Path(config.site_dir), cache_root(config)))
    except downloads.DownloadError as exc:
        raise PluginError(f"downloads: {exc}") from None
    published = _context.of(config).step(Built)
    published.clear()
    for kind, b in built.items():
        f = File.generated(config, f"downloads/{b.path.name}", abs_src_path=str(b.path))
        files.append(f)
        published[kind] = (f, b.path.stat().st_size)
    log.info("downloads: %s", ", ".join(f"{b.path.name} ({'cached' if b.cached else 'built'})"
                                        for b in built.values()))
    return files


def _replace(page, config, d) -> str:
    where = f"{page.file.src_uri}:{d.line}: {d.raw}"
    if d.name not in ("wheel", "source"):
        raise PluginError(f"{where}: download takes wheel or source, not {d.name!r}")
    if d.query:
        raise PluginError(f"{where}: download takes no parameters")
    form = d.args[0] if d.args else "link"
    if form not in FORMS:
        raise PluginError(f"{where}: download {d.name} takes one of {', '.join(FORMS)}, not {form!r}")
    f, size = _context.of(config).step(Built)[d.name]
    name = downloads.basename(f)
    if form == "name":
        return name
    if form == "size":
        return downloads.human_size(size)
    if form == "version":
        return downloads.project_meta(project_dir(config))[1]
    href = posixpath.relpath(f.src_uri, posixpath.dirname(page.file.src_uri) or ".")
    return f"[{name}]({href})"


@event_priority(10)  # before hooks/site_figures.py's (priority 0), which refuses a download directive
def on_page_markdown(markdown, *, page, config, files):
    try:
        found = [d for d in _serve.parse_directives(markdown, page.file.src_uri) if d.keyword == "download"]
    except directives.DirectiveError as exc:
        raise PluginError(str(exc)) from None
    return directives.substitute(markdown, found, lambda d: _replace(page, config, d))


def on_serve(server, *, config, builder):
    """Rebuild when any file the downloads hold changes (docs/, figures/ and mhalib/ are
    watched already; tests/, hooks/, tools/ and the top-level files are not)."""
    root = project_dir(config)
    tops = {rel.split("/", 1)[0] for rel, _ in downloads.project_files(root)}
    for top in sorted(tops):
        server.watch(str(root / top))
    return server
