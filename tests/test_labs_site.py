"""The labs and the downloads on the built site: the run box on every lab with the exact
install line, solutions folded, math in arithmatex's markup, the downloads served fresh,
and the ``download`` directive (built HTML; the browser side is in test_browser.py)."""
from __future__ import annotations

import hashlib
import os
import re
import sys
import tarfile
import zipfile
from html import unescape
from pathlib import Path

import pytest

from helpers import ROOT, load_file, math_as_tex

sys.path.insert(0, str(ROOT / "hooks"))
import directives  # noqa: E402
import downloads  # noqa: E402

LABS = sorted((ROOT / "docs" / "labs").glob("*.py"))
NAMES = downloads.file_names(ROOT)


def _hook(name: str):
    return load_file(ROOT / "hooks" / f"{name}.py", f"{name}_for_test")


# ---- the downloads on the site ------------------------------------------------------------------

@pytest.mark.build
def test_downloads_are_served_at_stable_versioned_urls(built_site):
    wheel = built_site / "downloads" / NAMES["wheel"]
    source = built_site / "downloads" / NAMES["source"]
    version = downloads.project_meta(ROOT)[1]
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        assert f"Version: {version}" in whl.read(f"mhalib-{version}.dist-info/METADATA").decode()
    assert "mhalib/__init__.py" in names and "mhalib/exercises.py" in names and "figures/_kit/cli.py" in names
    with tarfile.open(source) as tar:
        members = [m.name.split("/", 1)[1] for m in tar.getmembers()]
        assert {m.name.split("/", 1)[0] for m in tar.getmembers()} == {f"mha-course-{version}"}
    assert members == [rel for rel, _ in downloads.project_files(ROOT)]


@pytest.mark.build
def test_downloads_are_never_stale(built_site, tmp_path):
    """What the site serves is what the sources on disk give now, byte for byte."""
    site_dates = _hook("site_dates")
    epoch = int(site_dates.last_commit_epoch(ROOT))
    fresh = downloads.build_downloads(ROOT, tmp_path / "cache", epoch=epoch, log=lambda m: None)
    for kind, b in fresh.items():
        served = built_site / "downloads" / b.path.name
        assert hashlib.sha256(served.read_bytes()).digest() == hashlib.sha256(b.path.read_bytes()).digest(), kind


@pytest.mark.build
def test_get_the_code_gives_the_exact_lines(built_site):
    html = (built_site / "get_the_code" / "index.html").read_text()
    assert "{{" not in html and "download wheel" not in html
    text = unescape(re.sub(r"<[^>]+>", "", html))
    assert f"pip install {NAMES['wheel']}" in text
    assert f"tar xzf {NAMES['source']}" in text and f"cd {NAMES['source'].removesuffix('-src.tar.gz')}" in text
    for kind in ("wheel", "source"):
        assert f'href="../downloads/{NAMES[kind]}"' in html
        size = downloads.human_size((built_site / "downloads" / NAMES[kind]).stat().st_size)
        assert f"{NAMES[kind]}</a> ({size})" in html


# ---- the labs on the site -----------------------------------------------------------------------

def _page(built_site, lab: Path) -> str:
    return math_as_tex((built_site / "labs" / lab.stem / "index.html").read_text())


@pytest.mark.build
@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_each_lab_opens_with_the_install_line_and_the_downloads(built_site, lab):
    html = _page(built_site, lab)
    box = re.search(r'<div class="admonition abstract mha-download">(.*?)</div>', html, re.S)
    assert box and html.index(box.group(0)) < html.index('class="jp-Cell jp-CodeCell'), "no box at the top"
    assert html.index("</h1>") < html.index(box.group(0))  # under the title
    lines = unescape(re.search(r"<pre><code>(.*?)</code></pre>", box.group(1), re.S).group(1)).splitlines()
    torch = "torch_ref" in lab.read_text()
    assert lines == [f"pip install {NAMES['wheel']} jupyterlab"] + (
        [f"pip install {downloads.TORCH_CPU}"] if torch else []) + [f"jupyter lab {lab.stem}.ipynb"]
    page_dir = built_site / "labs" / lab.stem
    for kind in ("wheel", "source"):
        href = re.search(r'href="([^"]*%s)"' % re.escape(NAMES[kind]), box.group(1)).group(1)
        assert (page_dir / href).resolve() == (built_site / "downloads" / NAMES[kind]).resolve()


@pytest.mark.build
@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_solutions_are_folded_and_nothing_else(built_site, lab):
    import jupytext

    html = _page(built_site, lab)
    cells = jupytext.read(lab).cells
    runs = sum(1 for i, c in enumerate(cells) if "solution" in c.metadata.get("tags", [])
               and (i == 0 or "solution" not in cells[i - 1].metadata.get("tags", [])))
    folds = re.findall(r'<details class="success mha-solution"><summary>Solution</summary>', html)
    assert len(folds) == runs >= 2
    assert "<details open" not in html and 'class="celltoolbar"' not in html
    outside = re.sub(r'<details class="success mha-solution">.*?</details>', "", html, flags=re.S)
    assert "celltag_solution" not in outside
    inside = "".join(re.findall(r'<details class="success mha-solution">.*?</details>', html, flags=re.S))
    assert inside.count("right:") >= runs and "not yet:" not in inside
    assert outside.count("not yet:") >= runs
    # checks print; no cell ends in a bare value (an Out[n] prompt that axe finds too pale)
    assert not re.search(r'class="[^"]*jp-OutputArea-executeResult', html)


@pytest.mark.build
@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_lab_math_is_marked_up_like_the_markdown_pages(built_site, lab):
    import jupytext

    html = _page(built_site, lab)
    wrapper = html[html.index('class="jupyter-wrapper"'):]
    formulas = 0
    for cell in jupytext.read(lab).cells:
        if cell.cell_type == "markdown":
            text = re.sub(r"`[^`]*`", "", cell.source)
            blocks = len(re.findall(r"\$\$.+?\$\$", text, re.S))
            formulas += blocks + len(re.findall(r"\$.+?\$", re.sub(r"\$\$.+?\$\$", "", text, flags=re.S), re.S))
    assert formulas > 3
    marked = re.findall(r'<(span|div) class="arithmatex">(\\\(|\\\[)', wrapper)
    assert len(marked) == formulas
    for cell in re.findall(r'<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown.*?(?=<div class="jp-Cell )',
                           wrapper, flags=re.S):
        prose = re.sub(r'<(span|div) class="arithmatex">.*?</\1>|<code>.*?</code>', "", cell, flags=re.S)
        assert "$" not in prose, prose[:300]


def test_the_labs_cache_follows_the_tools_that_render_them(monkeypatch):
    """Pass twenty: the labs' cached pages were keyed on the code and nbconvert's settings only;
    after an upgrade of nbconvert, mkdocs-jupyter or Pygments a lab page came from the old
    render. A new version of each, or of Python, changes the key."""
    from importlib import metadata

    hook = _hook("site_notebooks")
    before = hook.tools_digest()
    real = metadata.version
    for dist in hook.NOTEBOOK_DISTS:
        monkeypatch.setattr(metadata, "version", lambda d, dist=dist: "999.0" if d == dist else real(d))
        assert hook.tools_digest() != before, dist
    monkeypatch.setattr(metadata, "version", real)
    monkeypatch.setattr(hook.sys, "version", "3.99.0")
    assert hook.tools_digest() != before


def test_math_and_solutions_markup_by_example():
    hook = _hook("site_notebooks")
    cell = ('<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-MarkdownOutput" data-mime-type="text/markdown">'
            '<p>Rows $a_{ij} &lt; b$ and <code>$HOME</code></p>\n<p>$$\nx^2\n$$</p><div>in $y$</div></div>'
            '<div class="jp-Cell jp-CodeCell">price $5</div>')
    out = hook.notebook_math(cell)
    assert '<span class="arithmatex">\\(a_{ij} &lt; b\\)</span>' in out
    assert "<code>$HOME</code>" in out and '<div class="arithmatex">\\[\nx^2\n\\]</div>' in out
    assert '<div>in <span class="arithmatex">\\(y\\)</span></div>' in out and "price $5" in out
    cells = ('<div class="jp-Cell a">one</div>'
             '<div class="jp-Cell b celltag_solution"><div class="celltoolbar"><div class="button_container">'
             '<span class="tag-container"><span class="cell-tag">solution</span></span></div></div>two</div>\n'
             '<div class="jp-Cell c"><div class="x celltag_solution">three</div></div>'
             '<div class="jp-Cell d">four</div>')
    out = hook.fold_solutions(cells)
    assert out == ('<div class="jp-Cell a">one</div>'
                   '<details class="success mha-solution"><summary>Solution</summary>'
                   '<div class="jp-Cell b celltag_solution">two</div>\n'
                   '<div class="jp-Cell c"><div class="x celltag_solution">three</div></div></details>'
                   '<div class="jp-Cell d">four</div>')


# ---- the download directive ------------------------------------------------------------------------

def test_download_directive_parses_and_is_refused_when_malformed():
    found = directives.parse("get {{ download wheel }} and {{ download source name }}.", where="p.md")
    assert [(d.keyword, d.name, d.args) for d in found] == [("download", "wheel", ()),
                                                            ("download", "source", ("name",))]
    with pytest.raises(directives.DirectiveError, match="download takes 1–2 arguments"):
        directives.parse("{{ download }}", where="p.md")


def test_download_directive_replacement(tmp_path):
    from mkdocs.exceptions import PluginError

    hook = _hook("site_downloads")

    class F:
        src_uri = f"downloads/{NAMES['wheel']}"

    class Page:
        class file:
            src_uri = "reference/get.md"

    class Config:
        config_file_path = str(ROOT / "mkdocs.yml")

    config = Config()
    hook._context.of(config).step(hook.Built)["wheel"] = (F(), 152_598)  # as on_files publishes it
    markdown = ("{{ download wheel }} ({{ download wheel size }}):\n```\npip install {{ download wheel name }}\n```\n"
                "version {{ download wheel version }}, not in inline code: `{{ download wheel }}`")
    assert hook.on_page_markdown(markdown, page=Page, config=config, files=None) == (
        f"[{NAMES['wheel']}](../downloads/{NAMES['wheel']}) (153 kB):\n```\npip install {NAMES['wheel']}\n```\n"
        f"version {downloads.project_meta(ROOT)[1]}, not in inline code: `{{{{ download wheel }}}}`")
    for bad, words in [("{{ download egg }}", "wheel or source"), ("{{ download wheel url }}", "one of link"),
                       ("{{ download wheel?x=1 }}", "no parameters")]:
        with pytest.raises(PluginError, match=words):
            hook.on_page_markdown(bad, page=Page, config=config, files=None)


def test_serve_watches_every_folder_the_downloads_hold():
    hook = _hook("site_downloads")
    watched = []

    class Server:
        def watch(self, path):
            watched.append(Path(path).relative_to(ROOT).as_posix())

    class Config:
        config_file_path = str(ROOT / "mkdocs.yml")

    hook.on_serve(Server(), config=Config, builder=None)
    assert {"tests", "hooks", "tools", "mhalib", "pyproject.toml", "README.md"} <= set(watched)
    assert not {"node_modules", ".cache", "site"} & set(watched)


@pytest.mark.slow
def test_downloadable_notebook_is_the_same_whatever_the_hash_seed(tmp_path):
    """jupytext lists the cell metadata keys in set order, which the string hash seed sets;
    the hook sorts them, so the .ipynb is the same bytes in every build process."""
    import subprocess

    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('h', sys.argv[1]);"
            "h = importlib.util.module_from_spec(spec); spec.loader.exec_module(h);"
            "sys.stdout.write(h.downloadable_notebook(sys.argv[2]))")
    lab = ROOT / "docs" / "labs" / "lab2_positions.py"
    outs = {subprocess.run([sys.executable, "-c", code, str(ROOT / "hooks" / "site_notebooks.py"), str(lab)],
                           capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
            for seed in range(6)}
    assert len(outs) == 1
    assert '"cell_metadata_filter": "jupyter,tags,-all"' in outs.pop()


def test_the_downloaded_notebook_opens_with_a_python_kernel_in_a_fresh_jupyter():
    """The .ipynb download names its kernel (Jupyter otherwise asks which to use), and
    nbformat accepts it as a valid notebook."""
    import json

    import nbformat

    hook = load_file(ROOT / "hooks" / "site_notebooks.py", "site_notebooks_for_kernel")
    text = hook.downloadable_notebook(ROOT / "docs" / "labs" / "lab1_mha.py")
    meta = json.loads(text)["metadata"]
    assert meta["kernelspec"] == {"display_name": "Python 3", "language": "python", "name": "python3"}
    assert meta["language_info"]["name"] == "python"
    nbformat.validate(nbformat.reads(text, as_version=4))
