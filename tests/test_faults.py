"""Never publish a wrong number: the renderer and the hook under faults, on small fixture sites.

Fresh code after edits (as under ``mkdocs serve``), damaged and concurrent caches, broken
scripts, typos in pages: each either gives the right output or fails loudly, naming what
is wrong. Every test here runs in seconds.
"""
from __future__ import annotations

import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from figures._kit import build, contract
from helpers import HOOKS, SMALL_FIGURE, SMALL_TABLE, build_stats, mini_project, mkdocs_build, tree

sys.path.insert(0, str(HOOKS))

pytestmark = pytest.mark.build  # renders in worker processes and builds fixture sites


def scripts_dir(tmp_path, **sources) -> Path:
    d = tmp_path / "figs"
    d.mkdir(exist_ok=True)
    for name, source in sources.items():
        (d / f"{name}.py").write_text(source)
    return d


def render(d: Path, cache: Path, *requests, log=None):
    scripts = contract.discover(d)
    reqs = [scripts[name].request(params) for name, params in requests]
    return build.render(reqs, d, cache, log=log, workers=1)


# ---- fresh code ------------------------------------------------------------------------------

def test_an_edited_script_is_rendered_from_its_new_source_in_the_same_process(tmp_path):
    """As under `mkdocs serve`: one process, the script edited, edited back; every render
    shows the source as it is now, and the cache never serves an older edit."""
    d = scripts_dir(tmp_path, small=SMALL_FIGURE)
    cache = tmp_path / "cache"
    outputs = []
    for title in ("first title", "second title", "line"):
        (d / "small.py").write_text(SMALL_FIGURE.replace('label: str = "line"', f'label: str = "{title}"'))
        (result,), _ = render(d, cache, ("small", {}))
        outputs.append(result.file("svg"))
        assert title.encode() in result.file("svg")
    (result,), stats = render(d, cache, ("small", {}))
    assert stats.cached == 1 and result.file("svg") == outputs[-1]


def test_renders_run_in_fresh_processes(tmp_path):
    """Each render call uses new worker processes, so no module imported before an edit
    (mhalib included) is ever reused."""
    source = SMALL_TABLE.replace("return dict(rows=", "import os\n    return dict(pid=os.getpid(), rows=")
    d = scripts_dir(tmp_path, pid_table=source)
    (first,), _ = render(d, tmp_path / "c1", ("pid_table", {}))
    (second,), _ = render(d, tmp_path / "c2", ("pid_table", {}))
    assert os.getpid() not in (first.data["pid"], second.data["pid"])
    assert first.data["pid"] != second.data["pid"]


def test_a_source_changed_during_the_render_is_never_cached(tmp_path):
    source = SMALL_TABLE.replace(
        "    return dict(rows=",
        "    from pathlib import Path\n    p = Path(__file__)\n    p.write_text(p.read_text() + '# edited\\n')\n"
        "    return dict(rows=")
    d = scripts_dir(tmp_path, self_editing=source)
    cache = tmp_path / "cache"
    with pytest.raises(build.FigureError, match="'self_editing': its sources changed while it was rendered"):
        render(d, cache, ("self_editing", {}))
    assert not [p for p in cache.iterdir() if p.name.startswith("self_editing")]


def test_a_broken_script_fails_naming_it_and_the_next_good_save_recovers(tmp_path):
    d = scripts_dir(tmp_path, small=SMALL_FIGURE.replace("return dict(x=", "return dict(boom=1 / 0, x="))
    cache = tmp_path / "cache"
    with pytest.raises(build.FigureError, match=r"figure 'small' .*small\.py\) failed:(.|\n)*ZeroDivisionError"):
        render(d, cache, ("small", {}))
    assert not [p for p in cache.iterdir() if not p.name.startswith(".tmp-")]
    (d / "small.py").write_text(SMALL_FIGURE)
    (result,), stats = render(d, cache, ("small", {}))
    assert stats.rendered == 1 and result.file("svg").startswith(b"<?xml")


# ---- the cache ---------------------------------------------------------------------------------

def _entry(cache: Path, stem: str) -> Path:
    (entry,) = [p for p in cache.iterdir() if p.name.startswith(stem + "-")]
    return entry


@pytest.mark.parametrize("damage", [
    pytest.param(lambda e: (e / "small.svg").write_bytes((e / "small.svg").read_bytes()[:200]), id="truncated-svg"),
    pytest.param(lambda e: (e / "small.png").unlink(), id="missing-png"),
    pytest.param(lambda e: (e / "small.json").write_text("{"), id="truncated-data-json"),
    pytest.param(lambda e: (e / "manifest.json").unlink(), id="missing-manifest"),
    pytest.param(lambda e: (e / "manifest.json").write_text("not json"), id="garbled-manifest"),
    pytest.param(lambda e: [p.unlink() for p in e.iterdir()], id="empty-entry"),
    pytest.param(lambda e: (e / "small.csv").write_text("name,index,value\nx,0,999\n"), id="same-size-other-bytes"),
    pytest.param(lambda e: (e / "small.pdf").write_bytes((e / "small.pdf").read_bytes()[:100]), id="truncated-pdf"),
    pytest.param(lambda e: (e / "small-dark.png").unlink(), id="missing-dark-png"),
])
def test_a_damaged_cache_entry_is_discarded_and_rendered_again(tmp_path, damage):
    d = scripts_dir(tmp_path, small=SMALL_FIGURE)
    cache = tmp_path / "cache"
    (good,), _ = render(d, cache, ("small", {}))
    damage(_entry(cache, "small"))
    lines = []
    (again,), stats = render(d, cache, ("small", {}), log=lines.append)
    assert stats.repaired == 1 and stats.rendered == 1 and stats.cached == 0
    assert any("is damaged" in line and "rendering it again" in line for line in lines), lines
    assert again.files == good.files
    (third,), stats = render(d, cache, ("small", {}))
    assert stats.cached == 1 and third.files == good.files


MATRIX_FIGURE = SMALL_FIGURE.replace("return dict(x=list(range(n))",
                                     "return dict(grid=[[i * n + j for j in range(n)] for i in range(n)], x=list(range(n))")


def test_a_damaged_wide_csv_is_caught_although_only_matrix_figures_have_one(tmp_path):
    d = scripts_dir(tmp_path, small=MATRIX_FIGURE)
    cache = tmp_path / "cache"
    (good,), _ = render(d, cache, ("small", {"n": 3}))
    wide = good.request.wide_csv()
    assert good.files[wide].decode().splitlines()[:2] == ["grid,0,1,2", "0,0,1,2"]
    entry = _entry(cache, good.request.stem)
    (entry / wide).write_text((entry / wide).read_text().replace("0,0,1,2", "0,0,1,9"))
    (again,), stats = render(d, cache, ("small", {"n": 3}))
    assert stats.repaired == 1 and again.files == good.files


def test_two_builds_on_one_cold_cache_both_succeed_with_identical_sites(tmp_path):
    proj = mini_project(tmp_path, {"small": SMALL_FIGURE, "tab": SMALL_TABLE},
                        "# Home\n\n![a line](figures/small.svg)\n\n{{ table tab }}\n\n"
                        "![another](figures/small.svg?n=5&label=five)\n")
    cache = tmp_path / "cache"
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda i: mkdocs_build(proj / "mkdocs.yml", tmp_path / f"site{i}", cache,
                                                    env={"SOURCE_DATE_EPOCH": "0"}), (1, 2)))
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
    assert tree(tmp_path / "site1") == tree(tmp_path / "site2")


def test_older_renders_of_a_figure_are_pruned(tmp_path):
    d = scripts_dir(tmp_path, small=SMALL_FIGURE)
    cache = tmp_path / "cache"
    render(d, cache, ("small", {}))
    (d / "small.py").write_text(SMALL_FIGURE + "\n# v2\n")
    render(d, cache, ("small", {}))
    assert len([p for p in cache.iterdir() if p.name.startswith("small-")]) == 1


def test_results_are_read_from_memory_not_from_files_that_may_change_later(tmp_path):
    d = scripts_dir(tmp_path, small=SMALL_FIGURE)
    cache = tmp_path / "cache"
    (result,), _ = render(d, cache, ("small", {}))
    shutil.rmtree(cache)
    assert result.file("svg").startswith(b"<?xml") and result.data["label"] == "line"


# ---- pages ------------------------------------------------------------------------------------

@pytest.mark.parametrize("page, message", [
    pytest.param("# Home\n\nIntro.\n\n{{ tabel tab }}\n", r"index.md:5: unknown directive 'tabel'.*did you mean 'table'",
                 id="typo"),
    pytest.param("# Home\n\n{{ table tab }\n", r"index.md:3: directive not closed", id="one-brace"),
    pytest.param("# Home\n\n{{ value tab rows.9.square }}\n", r"index.md:3: .*'rows.9.square' is not in the figure's data",
                 id="bad-value-path"),
    pytest.param("# Home\n\n{{ value tab rows .2f }}\n", r"is a list, not a number", id="value-of-a-list"),
    pytest.param("# Home\n\n![](figures/small.svg)\n", r"index.md:3: figure 'small' has no alt text", id="no-alt"),
])
def test_a_page_error_fails_the_build_naming_the_page(tmp_path, page, message):
    proj = mini_project(tmp_path, {"small": SMALL_FIGURE, "tab": SMALL_TABLE}, page)
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode != 0
    import re
    assert re.search(message, result.stderr), result.stderr[-2000:]


def test_a_fixture_site_builds_with_values_tables_and_parameters(tmp_path):
    proj = mini_project(tmp_path, {"small": SMALL_FIGURE, "tab": SMALL_TABLE}, {
        "index.md": "# Home\n\n![a line](figures/small.svg?n=4&label=four \"Four points.\")\n\n{{ table tab?rows=3 }}\n\n"
                    "The last square is {{ value tab?rows=3 rows.2.square }}.\n",
        "sub/page.md": "# Sub\n\n![a line](../figures/small.svg)\n"})
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode == 0, result.stderr[-3000:]
    html = (tmp_path / "site" / "index.html").read_text()
    assert "The last square is 4." in html and "<figcaption>Four points.</figcaption>" in html
    s = contract.discover(proj / "figures")["small"].parse_query("n=4&label=four", where="t")
    assert (tmp_path / "site" / "figures" / f"{s.stem}.svg").is_file()
    assert "--n 4" in html and "--label four" in html
    sub = (tmp_path / "site" / "sub" / "page" / "index.html").read_text()
    assert 'src="../../figures/small.svg#only-light"' in sub
    assert build_stats(tmp_path / "site")["rendered"] == 3


# ---- mkdocs serve -----------------------------------------------------------------------------

def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(predicate, what: str, timeout: float = 90.0):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def test_serve_shows_each_edit_reports_a_broken_script_and_recovers(tmp_path):
    """Under `mkdocs serve`: edit a figure, edit it again, break it, fix it. Every served
    SVG shows the source as saved; the broken save is reported naming the script; and a
    later `mkdocs build` on the same cache publishes the last edit, not a stale one."""
    import subprocess
    import urllib.request

    def titled(title: str) -> str:
        return SMALL_FIGURE.replace('label: str = "line"', f'label: str = "{title}"')

    proj = mini_project(tmp_path, {"small": titled("first edit")}, "# Home\n\n![a line](figures/small.svg)\n")
    port = _free_port()
    log = tmp_path / "serve.log"
    env = dict(os.environ, MHA_CACHE_DIR=str(tmp_path / "cache"), NO_MKDOCS_2_WARNING="1")
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-f", str(proj / "mkdocs.yml"),
                                 "-a", f"127.0.0.1:{port}"], cwd=proj, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/figures/small.svg"

    def served() -> str:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            return ""

    try:
        assert "first edit" in _wait_for(lambda: "first edit" in served() and served(), "the first render")
        (proj / "figures" / "small.py").write_text(titled("second edit"))
        _wait_for(lambda: "second edit" in served(), "the second edit to be served")
        (proj / "figures" / "small.py").write_text(titled("second edit").replace("return dict(x=", "return dict(b=1 / 0, x="))
        _wait_for(lambda: "ZeroDivisionError" in log.read_text(), "the broken script to be reported")
        assert "figure 'small'" in log.read_text()
        (proj / "figures" / "small.py").write_text(titled("third edit"))
        _wait_for(lambda: "third edit" in served(), "the fixed script to be served")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    result = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert result.returncode == 0, result.stderr[-3000:]
    published = (tmp_path / "site" / "figures" / "small.svg").read_text()
    assert "third edit" in published and "second edit" not in published


def test_an_explorer_payload_is_part_of_the_entry_and_cannot_close_its_script_element(tmp_path):
    source = SMALL_FIGURE.replace("main = cli.main_for(__name__)", (
        'EXPLORER = "demo"\n\n\ndef explorer(data):\n    return dict(label="</script><b>", n=len(data["x"]))\n\n\n'
        "main = cli.main_for(__name__)"))
    d = scripts_dir(tmp_path, small=source)
    cache = tmp_path / "cache"
    (result,), _ = render(d, cache, ("small", {}))
    assert "</script>" not in result.explorer and '"n":3' in result.explorer
    import json
    assert json.loads(result.explorer)["label"] == "</script><b>"  # the same text once parsed
    (_entry(cache, "small") / "small.explorer.json").unlink()
    (again,), stats = render(d, cache, ("small", {}))
    assert stats.repaired == 1 and again.explorer == result.explorer
