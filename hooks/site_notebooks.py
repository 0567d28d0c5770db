"""MkDocs hook: make mkdocs-jupyter's cache notice changes to mhalib and the figures.

mkdocs-jupyter keys its cache on the notebook's own bytes, so after an edit to ``mhalib``
it would serve outputs computed by the old code. This hook points the plugin's cache at a
folder named after a hash of ``mhalib``'s sources (and the shared figure code): any
change there means a fresh folder, and so a fresh execution.

Each notebook page gets a box under its title: the notebook as ``.ipynb`` and as its
jupytext source (which mkdocs-jupyter copies next to the page) and, when the site serves
them (``hooks/site_downloads.py``), the ``mhalib`` wheel and the source archive with the
exact line that installs what the lab imports.

Math: nbconvert reads math between ``$ ... $`` and ``$$ ... $$`` (as Jupyter does; a lone
``\\(`` is a Markdown escape and loses its backslash) and leaves it as raw text. Here each
formula in a Markdown cell becomes the same ``<span class="arithmatex">\\( ... \\)</span>``
(or ``<div class="arithmatex">\\[ ... \\]</div>``) that pymdownx.arithmatex writes on the
Markdown pages, so ``hooks/site_math.py`` renders both alike. Labs write ``$`` only for math.

Exercises: cells tagged ``solution`` (``# %% tags=["solution"]``) are folded into a
``<details>`` element ("Solution"), consecutive ones into one; mkdocs-jupyter can remove
cells by tag but not fold them.

Styles: mkdocs-jupyter puts JupyterLab's whole stylesheet (about 660 KB) and the pygments
colours inline in every notebook page, with MathJax and Mermaid loaders the site does not
use (the math is KaTeX's, rendered at build time by ``hooks/site_math.py``). Here the
inline styles and loaders leave the pages, and the site gets one shared, cacheable
``stylesheets/notebook.css`` holding only the rules that the notebook pages can use
(``hooks/notebook_css.py`` picks them by the classes the pages contain, about 20 KB),
linked from every page that shows a notebook (``print/`` too), after the site's own
stylesheets, where the inline styles were.

It also makes notebook pages byte-for-byte reproducible. jupytext gives every cell of a
``.py`` notebook a random id (nbformat's ``uuid4``), which ends up in the HTML, and neither
mkdocs-jupyter nor nbformat offers a way to choose them. So the finished page's ids are
renumbered in order of appearance (``on_post_page``) and the downloadable ``.ipynb`` gets
numbered ids before it is written; nothing is patched. And a kernel sends printed text in
pieces whose boundaries depend on timing; ``hooks/jupyter/jupyter_nbconvert_config.py``
(put on ``JUPYTER_CONFIG_PATH`` here) has nbconvert join them after execution.
"""
from __future__ import annotations

import hashlib
import html as html_lib
import itertools
import json
import logging
import os
import re
import shutil
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _context  # noqa: E402
import notebook_css  # noqa: E402  (imported now: MkDocs restores sys.path once a hook is loaded)
from _paths import cache_root, project_dir  # noqa: E402

log = logging.getLogger("mkdocs.hooks.notebooks")
CELL_ID_RE = re.compile(r'id="cell-id=[0-9a-f]+"')


def code_digest() -> str:
    """The digest the figure cache uses too: mhalib, the figure machinery, library versions."""
    from figures._kit.contract import code_digest as digest

    return digest()[:16]


#: The tools that turn a lab into its page: a new version of any of them (or of Python) may write
#: other HTML or other outputs, so it executes the labs again (the cached pages were keyed on the
#: code and the settings alone).
NOTEBOOK_DISTS = ("mkdocs-jupyter", "nbconvert", "nbclient", "nbformat", "jupytext", "ipykernel", "pygments")


def tools_digest() -> str:
    """A digest of Python's version and those of :data:`NOTEBOOK_DISTS` (a missing one as such)."""
    from importlib import metadata

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "missing"

    parts = [sys.version, *(f"{d}=={version(d)}" for d in NOTEBOOK_DISTS)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


NBCONVERT_CONFIG = Path(__file__).resolve().parent / "jupyter"


def use_nbconvert_config() -> str:
    """Put ``hooks/jupyter`` first on ``JUPYTER_CONFIG_PATH``, where the nbconvert app that
    mkdocs-jupyter makes reads its settings (one output block per stream, whatever the
    kernel's flush timing: see the file there); return a digest of those settings, so a
    change to them executes the labs again."""
    folder = str(NBCONVERT_CONFIG)
    paths = [p for p in os.environ.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p and p != folder]
    os.environ["JUPYTER_CONFIG_PATH"] = os.pathsep.join([folder, *paths])
    if os.environ.get("JUPYTER_NO_CONFIG"):
        raise PluginError("JUPYTER_NO_CONFIG is set: the labs need the nbconvert settings in "
                          f"{NBCONVERT_CONFIG} to come out the same in every build; unset it")
    settings = b"".join(f.read_bytes() for f in sorted(NBCONVERT_CONFIG.glob("*.py")))
    return hashlib.sha256(settings).hexdigest()[:8]


def on_config(config):
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None:
        return config
    base = cache_root(config) / "notebooks"
    digest = code_digest() + use_nbconvert_config() + tools_digest()
    plugin.config["cache_dir"] = str(base / digest)
    if base.is_dir():
        for old in base.iterdir():
            if old.name != digest:
                shutil.rmtree(old, ignore_errors=True)
    # The one rule of every cache here (figures._kit.store): mkdocs-jupyter reads its cached
    # pages unchecked, so a file the last build's manifest does not list with its size and
    # SHA-256 (edited, truncated, left by a build that did not finish) is removed first, and
    # that notebook runs again.
    from figures._kit import store

    for name in store.reconcile(base / digest, {"digest": digest}):
        log.info(f"notebooks: cached page {name} is not the one the last build recorded; discarded, running it again")
    return config


def on_post_build(*, config):
    """Record the cached pages mkdocs-jupyter kept (its own on_post_build has evicted the
    unused ones by now: plugins run before hooks) in the cache's manifest."""
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None or not Path(plugin.config["cache_dir"]).is_dir():
        return
    from figures._kit import store

    folder = Path(plugin.config["cache_dir"])
    store.seal(folder, {"digest": folder.name})


def _numbered_id(n: int) -> str:
    return hashlib.sha256(f"cell-{n}".encode()).hexdigest()[:8]


def _is_notebook(page) -> bool:
    return getattr(page, "nb_url", None) is not None and page.file.abs_src_path.endswith(".py")


# ---- math ----------------------------------------------------------------------------------

MARKDOWN_CELL_RE = re.compile(r'<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown[^"]*"[^>]*>')
CODE_RE = re.compile(r"<(code|pre)\b.*?</\1>", re.S)
BLOCK_MATH_P_RE = re.compile(r"<p>\s*\$\$(.+?)\$\$\s*</p>", re.S)
BLOCK_MATH_RE = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE_MATH_RE = re.compile(r"\$(.+?)\$", re.S)


def _div_end(html: str, start: int) -> int:
    """Index just after the ``</div>`` that closes the ``<div`` opening at ``start``."""
    depth = 0
    for m in re.compile(r"<div\b|</div>").finditer(html, start):
        depth += 1 if m.group(0) == "<div" else -1
        if depth == 0:
            return m.end()
    raise ValueError(f"unclosed <div> at offset {start}")


def _math_in_text(text: str) -> str:
    text = BLOCK_MATH_P_RE.sub(lambda m: f'<div class="arithmatex">\\[{m.group(1)}\\]</div>', text)
    text = BLOCK_MATH_RE.sub(lambda m: f'<span class="arithmatex">\\[{m.group(1)}\\]</span>', text)
    return INLINE_MATH_RE.sub(lambda m: f'<span class="arithmatex">\\({m.group(1)}\\)</span>', text)


def _math(cell_html: str) -> str:
    """Formulas nbconvert left as ``$ ... $`` text, as arithmatex's markup; code untouched."""
    out, pos = [], 0
    for m in CODE_RE.finditer(cell_html):
        out += [_math_in_text(cell_html[pos:m.start()]), m.group(0)]
        pos = m.end()
    out.append(_math_in_text(cell_html[pos:]))
    return "".join(out)


def notebook_math(html: str) -> str:
    """Every Markdown cell of a rendered notebook with its math in arithmatex's markup."""
    out, pos = [], 0
    for m in MARKDOWN_CELL_RE.finditer(html):
        if m.start() < pos:
            continue
        end = _div_end(html, m.start())
        out += [html[pos:m.end()], _math(html[m.end():end])]
        pos = end
    out.append(html[pos:])
    return "".join(out)


# ---- solutions -------------------------------------------------------------------------------

CELL_RE = re.compile(r'<div class="jp-Cell ')
SOLUTION_RE = re.compile(r'class="[^"]*\bcelltag_solution\b')
TOOLBAR_RE = re.compile(r'<div class="celltoolbar">.*?</span>\s*</span>\s*</div>\s*</div>', re.S)


def fold_solutions(html: str) -> str:
    """Cells tagged ``solution`` inside ``<details>`` (one for each run of consecutive ones)."""
    cells, pos = [], 0  # (start, end, is_solution) of every top-level cell
    while (m := CELL_RE.search(html, pos)) is not None:
        end = _div_end(html, m.start())
        cells.append((m.start(), end, bool(SOLUTION_RE.search(html, m.start(), end))))
        pos = end
    out, pos, open_ = [], 0, False
    for start, end, solution in cells:
        between = html[pos:start]
        if open_ and (not solution or between.strip()):
            out.append("</details>")
            open_ = False
        out.append(between)
        if solution and not open_:
            out.append('<details class="success mha-solution"><summary>Solution</summary>')
            open_ = True
        cell = html[start:end]
        out.append(TOOLBAR_RE.sub("", cell) if solution else cell)  # the tag is said by the summary
        pos = end
    if open_:
        out.append("</details>")
    out.append(html[pos:])
    return "".join(out)


# ---- the box under the title -------------------------------------------------------------------

TORCH_RE = re.compile(r"^\s*(?:import torch\b|from torch\b|from mhalib\.torch_ref\b|import mhalib\.torch_ref\b)", re.M)


def _downloads(files) -> dict:
    """The wheel and the source archive that hooks/site_downloads.py added, if any."""
    import downloads

    return downloads.served(files)


def run_box(page, files) -> str:
    import downloads

    stem = Path(page.file.abs_src_path).stem
    e = html_lib.escape
    notebook = (f'<a href="{e(stem)}.ipynb" download>{e(stem)}.ipynb</a> (Jupyter), or as a jupytext '
                f'script, <a href="{e(stem)}.py" download>{e(stem)}.py</a>')
    served = _downloads(files)
    if "wheel" not in served:
        return f'<p class="mha-download">Download this lab: {notebook}.</p>'
    from mkdocs.utils import get_relative_url

    def link(kind):
        f = served[kind]
        return (f'<a href="{e(get_relative_url(f.url, page.url))}" download>{e(downloads.basename(f))}</a> '
                f'({downloads.human_size(Path(f.abs_src_path).stat().st_size)})')

    code = Path(page.file.abs_src_path).read_text(encoding="utf-8")
    lines = [f"pip install {downloads.basename(served['wheel'])} jupyterlab"]
    if TORCH_RE.search(code):
        lines.append(f"pip install {downloads.TORCH_CPU}")
    lines.append(f"jupyter lab {stem}.ipynb")
    source = f'<p>The whole project, pages and tests included: {link("source")}.</p>' if "source" in served else ""
    return ('<div class="admonition abstract mha-download"><p class="admonition-title">Run this lab yourself</p>'
            f'<p>Download the notebook, {notebook}, and the library, {link("wheel")}; then, in that folder '
            '(the notebook comes without its outputs: running it makes them):</p>'
            f'<pre><code>{e(chr(10).join(lines))}</code></pre>{source}</div>')


# ---- styles and loaders -------------------------------------------------------------------------

NOTEBOOK_CSS = "stylesheets/notebook.css"
WRAPPER = '<div class="jupyter-wrapper">'
STYLE_RE = re.compile(r"<style\b[^>]*>(.*?)</style>", re.S)
MATHJAX_RE = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
MERMAID_RE = re.compile(r'<script type="module">(?:(?!</script>).)*?\.jp-Mermaid.*?</script>', re.S)


def strip_head(html: str) -> tuple[str, list[str]]:
    """A rendered notebook without the styles and script loaders mkdocs-jupyter puts before the
    notebook itself (styles inside cell outputs stay); returns the HTML and the styles."""
    cut = html.find(WRAPPER)
    if cut == -1:
        return html, []
    head, body = html[:cut], html[cut:]
    styles = [m.group(1) for m in STYLE_RE.finditer(head)]
    head = MATHJAX_RE.sub("", STYLE_RE.sub("", head))
    if 'class="jp-Mermaid' not in body:  # no diagram: no loader (it would fetch Mermaid from a CDN)
        head = MERMAID_RE.sub("", head)
    return head + body, styles


def notebook_stylesheet(styles: list[str], pages: list[str] | None, config) -> str:
    """The rules of ``styles`` the notebook ``pages`` can use (all of them if a page is not
    converted in this build: ``mkdocs serve --dirty``), cached by everything the choice reads."""
    css = "\n".join(styles)
    if pages is None:
        return css
    site_css = [project_dir(config) / config.docs_dir / path for path in config.extra_css]
    reads = "".join(pages) + "".join(p.read_text(encoding="utf-8") for p in site_css if p.is_file())
    used = set().union(*(notebook_css.classes_in(p) for p in pages))
    key = hashlib.sha256(json.dumps([css, sorted(used), sorted(set(notebook_css.VAR_RE.findall(reads))),
                                     hashlib.sha256(Path(notebook_css.__file__).read_bytes()).hexdigest()])
                         .encode()).hexdigest()[:24]
    cached = cache_root(config) / "notebook-css" / f"{key}.css"
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    out = notebook_css.prune(css, used, reads)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
    tmp.write_text(out, encoding="utf-8")
    os.replace(tmp, cached)
    return out


class NotebookStyles:
    """One build's notebook stylesheet: the inline stylesheets of the notebook pages, each once,
    in order, and the stylesheet made from them while the figures render."""

    def __init__(self):
        self.styles: list[str] = []
        self.early: dict = {}  # (styles, notebook contents) -> their stylesheet


def _state(config) -> NotebookStyles:
    return _context.of(config).step(NotebookStyles)


def _notebook_pages(files) -> list:
    return [f.page for f in files.documentation_pages() if f.page is not None and _is_notebook(f.page)]


def on_env(env, *, config, files):
    """Every page is converted: the notebook pages' shared stylesheet (made earlier, while the
    figures rendered, if the pages and styles are still the ones it was made from)."""
    state = _state(config)
    if not state.styles:
        return env
    if files.get_file_from_path(NOTEBOOK_CSS) is not None:
        raise PluginError(f"hooks/site_notebooks.py writes {NOTEBOOK_CSS}: docs/{NOTEBOOK_CSS} is in the way")
    notebooks = _notebook_pages(files)
    contents = None if any(p.content is None for p in notebooks) else [p.content for p in notebooks]
    css = state.early.get((tuple(state.styles), tuple(contents))) if contents is not None else None
    if css is None:
        css = notebook_stylesheet(state.styles, contents, config)
    files.append(File.generated(config, NOTEBOOK_CSS, content=css))
    return env


def _stylesheet_early(page, config, files) -> None:
    """Once every notebook page is converted (they come first: they wait for no figure), make
    their stylesheet now, while the figures render, rather than at ``on_env`` after the last
    one (pruning it took 0.4 s there)."""
    state = _state(config)
    if state.early or not state.styles or _is_notebook(page):
        return
    notebooks = _notebook_pages(files)
    if notebooks and all(p.content is not None for p in notebooks):
        contents = [p.content for p in notebooks]
        state.early[(tuple(state.styles), tuple(contents))] = notebook_stylesheet(state.styles, contents, config)


def on_page_content(html, *, page, config, files):
    if not _is_notebook(page):
        _stylesheet_early(page, config, files)
        return html
    html, styles = strip_head(html)
    known = _state(config).styles
    known.extend(s for s in styles if s not in known)
    html = fold_solutions(notebook_math(html))
    box = run_box(page, files)
    match = re.search(r"</h1>", html)
    return html[: match.end()] + box + html[match.end():] if match else box + html


def on_post_page(output, *, page, config):
    if _state(config).styles and WRAPPER in output:  # a notebook page, or print/ holding some
        link = f'<link rel="stylesheet" href="{get_relative_url(NOTEBOOK_CSS, page.url)}">'
        output = output.replace("</head>", link + "</head>", 1)
    if not _is_notebook(page):
        return output
    import jupytext

    counter = itertools.count()
    output = CELL_ID_RE.sub(lambda m: f'id="cell-id={_numbered_id(next(counter))}"', output)
    target = Path(page.file.abs_dest_path).parent / f"{Path(page.file.abs_src_path).stem}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(downloadable_notebook(page.file.abs_src_path), encoding="utf-8")
    return output


def downloadable_notebook(path) -> str:
    """The ``.ipynb`` text of a jupytext notebook, the same in every process: numbered cell
    ids, and the cell-metadata filter jupytext builds from a set (``tags,jupyter`` or
    ``jupyter,tags`` by the string hash seed) in sorted order."""
    import jupytext

    notebook = jupytext.read(path)
    for n, cell in enumerate(notebook.cells):
        cell.id = _numbered_id(n)
    # opens in Jupyter with a Python kernel, without asking which (the outputs are not in the
    # download: the box on the page says the reader runs it)
    notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook.metadata["language_info"] = {"name": "python"}
    meta = notebook.metadata.get("jupytext", {})
    if meta.get("cell_metadata_filter"):
        keys = meta["cell_metadata_filter"].split(",")
        meta["cell_metadata_filter"] = ",".join(sorted(k for k in keys if not k.startswith("-"))
                                                + [k for k in keys if k.startswith("-")])
    return jupytext.writes(notebook, fmt="ipynb")
