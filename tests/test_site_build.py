"""The site machine: strict build, references resolved, determinism, crash safety, caching."""
from __future__ import annotations

import filecmp
import os
import re
import shutil
import signal
import subprocess
import textwrap
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROOT, mkdocs_build

pytestmark = pytest.mark.build

REF_RE = re.compile(r"figures/([a-z0-9_]+)\.svg|\{\{\s*(?:table|value)\s+([a-z0-9_]+)")
STATS_RE = re.compile(r"figures: (\d+) figures/tables, (\d+) cached, (\d+) rendered")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if tag in ("img", "a", "link", "script") and a.get(key):
                self.refs.append((tag, a[key]))


def _tree(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _stats(log: str):
    m = STATS_RE.search(log)
    assert m, f"no figures progress line in the build log:\n{log[-3000:]}"
    return tuple(map(int, m.groups()))


def test_strict_build_passes_and_logs_progress(built_site):
    log = (built_site.parent / "log.txt").read_text()
    total, cached, rendered = _stats(log)
    assert total > 0 and cached == 0 and rendered == total
    assert (built_site / "index.html").is_file()


def test_every_referenced_figure_and_table_is_in_the_site(built_site):
    names = set()
    for md in (ROOT / "docs").rglob("*.md"):
        for fig, other in REF_RE.findall(md.read_text()):
            names.add(fig or other)
    assert names
    for name in names:
        assert (built_site / "figures" / f"{name}.csv").is_file(), name
        assert (built_site / "figures" / f"{name}.py").is_file(), name
    for html in built_site.rglob("*.html"):
        text = html.read_text()
        assert "{{ table" not in text and "{{ value" not in text, f"unreplaced placeholder in {html}"


def test_every_local_link_and_image_resolves(built_site):
    checked = 0
    for html in built_site.rglob("*.html"):
        parser = _Links()
        parser.feed(html.read_text())
        for tag, ref in parser.refs:
            if re.match(r"^[a-z]+:|^#|^//", ref):
                continue
            path = ref.split("#")[0].split("?")[0]
            base = built_site if path.startswith("/") else html.parent  # 404.html links from the root
            target = (base / path.lstrip("/")).resolve()
            if target.is_dir():
                target = target / "index.html"
            assert target.is_file(), f"{html.relative_to(built_site)}: <{tag}> {ref} is missing"
            checked += 1
    assert checked > 20


def test_two_clean_builds_are_byte_identical(built_site, tmp_path):
    result = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode == 0, result.stderr[-3000:]
    a, b = _tree(built_site), _tree(tmp_path / "site")
    assert sorted(a) == sorted(b)
    differing = [name for name in a if a[name] != b[name]]
    assert not differing, f"files differ between two clean builds: {differing[:10]}"


def test_build_killed_mid_way_then_rebuilt_gives_a_correct_site(built_site, tmp_path):
    cache = tmp_path / "cache"
    proc = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "killed", cache,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    # Kill it while a figure is being written (a temporary entry exists in the cache).
    while time.monotonic() < deadline and proc.poll() is None:
        if list((cache / "figures").glob(".tmp-*")) if (cache / "figures").is_dir() else []:
            break
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the build finished before it could be killed"
    result = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site", cache)
    assert result.returncode == 0, result.stderr[-3000:]
    assert _tree(tmp_path / "site") == _tree(built_site)


def _mini_project(tmp_path: Path, scripts: dict[str, str], page: str) -> Path:
    """A small MkDocs project using the real figures hook, with its own figures/ folder."""
    proj = tmp_path / "proj"
    (proj / "docs").mkdir(parents=True)
    (proj / "figures").mkdir()
    for name, source in scripts.items():
        (proj / "figures" / f"{name}.py").write_text(source)
    (proj / "docs" / "index.md").write_text(page)
    (proj / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: mini
        theme: {{name: mkdocs}}
        hooks: ["{ROOT / 'hooks' / 'site_figures.py'}"]
        markdown_extensions: [attr_list, md_in_html, tables]
        """))
    return proj


def test_failing_figure_fails_the_build_with_its_name(tmp_path):
    broken = textwrap.dedent('''\
        """A figure that fails, for the test of the build's failure path."""
        def data(n: int = 3):
            return dict(x=1 / (n - 3))
        def draw(d):
            raise AssertionError("never reached")
        ''')
    proj = _mini_project(tmp_path, {"broken_demo": broken}, "# Page\n\n![a failing figure](figures/broken_demo.svg)\n")
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode != 0
    assert "figure 'broken_demo'" in result.stderr
    assert "ZeroDivisionError" in result.stderr and "Traceback" in result.stderr
    assert not list((tmp_path / "cache" / "figures").glob("broken_demo*"))


def test_missing_figure_and_bad_value_path_fail_the_build(tmp_path):
    proj = _mini_project(tmp_path, {}, "# Page\n\n![nothing](figures/not_there.svg)\n")
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode != 0 and "'not_there' is referenced" in result.stderr
    proj3 = _mini_project(tmp_path / "c", {}, "# P\n\n![alt with [brackets]](figures/anything.svg)\n")
    result = mkdocs_build(proj3 / "mkdocs.yml", tmp_path / "c" / "site", tmp_path / "c" / "cache")
    assert result.returncode != 0 and "not understood" in result.stderr
    script = (ROOT / "figures" / "pe_heatmap.py").read_text()
    proj2 = _mini_project(tmp_path / "b", {"pe_heatmap": script}, "# P\n\n{{ value pe_heatmap no.such.key }}\n")
    result = mkdocs_build(proj2 / "mkdocs.yml", tmp_path / "b" / "site", tmp_path / "b" / "cache")
    assert result.returncode != 0 and "'no.such.key' is not in the figure's data" in result.stderr


def test_touching_one_script_rerenders_exactly_one_figure(tmp_path):
    import figures

    scripts = {n: (ROOT / "figures" / f"{n}.py").read_text() for n in figures.names()}
    lines = ["# All figures", ""]
    for n in scripts:
        mod = figures.load(n)
        lines.append(f"{{{{ table {n} }}}}" if hasattr(mod, "table") else f"![figure {n}](figures/{n}.svg)")
        lines.append("")
    proj = _mini_project(tmp_path, scripts, "\n".join(lines))
    shutil.copytree(ROOT / "figures" / "data", proj / "figures" / "data")
    first = mkdocs_build(proj / "mkdocs.yml", tmp_path / "s1", tmp_path / "cache")
    assert first.returncode == 0, first.stderr[-3000:]
    assert _stats(first.stderr) == (len(scripts), 0, len(scripts))
    again = mkdocs_build(proj / "mkdocs.yml", tmp_path / "s2", tmp_path / "cache")
    assert _stats(again.stderr) == (len(scripts), len(scripts), 0)
    touched = sorted(scripts)[0]
    with open(proj / "figures" / f"{touched}.py", "a") as f:
        f.write("\n# touched\n")
    third = mkdocs_build(proj / "mkdocs.yml", tmp_path / "s3", tmp_path / "cache")
    assert third.returncode == 0, third.stderr[-3000:]
    assert _stats(third.stderr) == (len(scripts), len(scripts) - 1, 1)


def test_notebook_page_has_a_working_download_link(built_site):
    for nb in (ROOT / "docs" / "labs").glob("*.py"):
        page = built_site / "labs" / nb.stem / "index.html"
        html = page.read_text()
        m = re.search(r'href="([^"]*%s)"' % re.escape(nb.name), html)
        assert m, f"no download link to {nb.name} on {page}"
        assert (page.parent / m.group(1)).resolve().read_bytes() == nb.read_bytes()
        m = re.search(r'href="([^"]*%s)"' % re.escape(nb.stem + ".ipynb"), html)
        assert m, f"no .ipynb download link on {page}"
        import jupytext
        ipynb = jupytext.read(page.parent / m.group(1))
        code = [c.source for c in ipynb.cells if c.cell_type == "code"]
        assert code and code == [c.source for c in jupytext.read(nb).cells if c.cell_type == "code"]


def test_failing_notebook_cell_fails_the_build(tmp_path):
    proj = tmp_path / "nbproj"
    (proj / "docs" / "labs").mkdir(parents=True)
    (proj / "docs" / "index.md").write_text("# Home\n")
    (proj / "docs" / "labs" / "bad.py").write_text("# %%\nraise RuntimeError('cell failed on purpose')\n")
    (proj / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: nb
        theme: {{name: mkdocs}}
        plugins:
          - mkdocs-jupyter: {{include: ["labs/*.py"], execute: true, allow_errors: false}}
        hooks: ["{ROOT / 'hooks' / 'site_notebooks.py'}"]
        """))
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode != 0
    assert "cell failed on purpose" in result.stderr


def test_notebook_cache_follows_changes_to_mhalib(tmp_path):
    """mkdocs-jupyter keys its cache on the notebook alone; our hook adds mhalib's sources."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_notebooks_for_test", ROOT / "hooks" / "site_notebooks.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    (tmp_path / "mhalib").mkdir()
    (tmp_path / "figures").mkdir()
    src = tmp_path / "mhalib" / "attention.py"
    src.write_text("SCALE = 1\n")
    before = hook.code_digest(tmp_path)
    assert hook.code_digest(tmp_path) == before
    src.write_text("SCALE = 2\n")
    assert hook.code_digest(tmp_path) != before

    class Plugin:
        config = {"cache_dir": ".cache/mkdocs-jupyter"}

    class Config:
        config_file_path = str(tmp_path / "mkdocs.yml")
        plugins = {"mkdocs-jupyter": Plugin()}

    import os
    os.environ["MHA_CACHE_DIR"] = str(tmp_path / "cache")
    try:
        hook.on_config(Config())
    finally:
        del os.environ["MHA_CACHE_DIR"]
    assert Plugin.config["cache_dir"].endswith(hook.code_digest(tmp_path))
