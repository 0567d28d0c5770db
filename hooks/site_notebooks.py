"""MkDocs hook: make mkdocs-jupyter's cache notice changes to mhalib and the figures.

mkdocs-jupyter keys its cache on the notebook's own bytes, so after an edit to ``mhalib``
it would serve outputs computed by the old code. This hook points the plugin's cache at a
folder named after a hash of ``mhalib``'s sources (and the shared figure code): any
change there means a fresh folder, and so a fresh execution.

Each notebook page gets download links under its title: the jupytext source (which
mkdocs-jupyter copies next to the page) and the same notebook as ``.ipynb``.

It also makes notebook pages byte-for-byte reproducible. jupytext gives every cell of a
``.py`` notebook a random id (nbformat's ``uuid4``), which ends up in the HTML, and neither
mkdocs-jupyter nor nbformat offers a way to choose them. So the finished page's ids are
renumbered in order of appearance (``on_post_page``) and the downloadable ``.ipynb`` gets
numbered ids before it is written; nothing is patched.
"""
from __future__ import annotations

import hashlib
import html as html_lib
import itertools
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paths import cache_root  # noqa: E402

CELL_ID_RE = re.compile(r'id="cell-id=[0-9a-f]+"')


def code_digest() -> str:
    """The digest the figure cache uses too: mhalib, the figure machinery, library versions."""
    from figures._kit.contract import code_digest as digest

    return digest()[:16]


def on_config(config):
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None:
        return config
    base = cache_root(config) / "notebooks"
    digest = code_digest()
    plugin.config["cache_dir"] = str(base / digest)
    if base.is_dir():
        for old in base.iterdir():
            if old.name != digest:
                shutil.rmtree(old, ignore_errors=True)
    return config


def _numbered_id(n: int) -> str:
    return hashlib.sha256(f"cell-{n}".encode()).hexdigest()[:8]


def _is_notebook(page) -> bool:
    return getattr(page, "nb_url", None) is not None and page.file.abs_src_path.endswith(".py")


def on_page_content(html, *, page, config, files):
    if not _is_notebook(page):
        return html
    stem = Path(page.file.abs_src_path).stem
    link = (
        '<p class="mha-download">Download this lab: '
        f'<a href="{stem}.ipynb" download>{html_lib.escape(stem)}.ipynb</a> (Jupyter) · '
        f'<a href="{stem}.py" download>{html_lib.escape(stem)}.py</a> (jupytext percent script)</p>'
    )
    match = re.search(r"</h1>", html)
    return html[: match.end()] + link + html[match.end():] if match else link + html


def on_post_page(output, *, page, config):
    if not _is_notebook(page):
        return output
    import jupytext

    counter = itertools.count()
    output = CELL_ID_RE.sub(lambda m: f'id="cell-id={_numbered_id(next(counter))}"', output)
    notebook = jupytext.read(page.file.abs_src_path)
    for n, cell in enumerate(notebook.cells):
        cell.id = _numbered_id(n)
    target = Path(page.file.abs_dest_path).parent / f"{Path(page.file.abs_src_path).stem}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(notebook, target, fmt="ipynb")
    return output
