"""The edit loop: under ``mkdocs serve`` the hooks keep what did not change (hooks/_serve.py),
and a rebuilt site is still exactly what a clean ``mkdocs build`` makes of the same sources.

A small fixture site with the real numbering, figures and notation hooks is built the way
``mkdocs serve`` rebuilds (one process, ``on_startup(command="serve")``, a fresh config per
build), edited, rebuilt, edited back and rebuilt again; each of its sites is compared file by
file with a clean strict build of the same sources in a process of its own. The memos'
counters show the unchanged pages were taken from memory, and that ``mkdocs build`` takes
nothing from memory.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from helpers import HOOKS, SMALL_FIGURE, mini_project, mkdocs_build, tree

pytestmark = pytest.mark.build

SERVE_URL = "http://127.0.0.1:8000/"
EPOCH = "1700000000"

NOTATION = "# Notation\n\n" + "\n".join(
    f'<span id="{a}"></span>`{a}`\n' for a in ("d_model", "d_head", "H_kv", "H", "tau", "W_Q", "W_O", "PE", "m_h"))

HOME = r"""# Home

The model width \(d_{\text{model}}\) is split into heads.

![A line](figures/line.svg "A line.")

As {{ ref fig:line }} shows, the line rises. Its slope is {{ value line y.1 .1f }}.

\[
x = 1
\]{#eq:one}

By {{ ref eq:one }}, x is one.
"""

# The edit, after the page's last directive (so what the numbering hook recorded from the
# Markdown stays the same and only the HTML tells the two apart): a formula with another
# symbol, which the notation hook links, and an equation, which gets number (2).
HOME_EDITED = HOME + r"""
A head has \(d_{\text{head}}\) dimensions.

\[
z = 3
\]
"""

OTHER = r"""# Other

Each head has \(d_{\text{head}}\) dimensions and sees \(d_{\text{model}}\) inputs.

![A steeper line](figures/line.svg?scale=2 "A steeper line.")

{{ ref fig:line }} is steeper.
"""


# An edit to the figure script: its figure and its script page (the highlighted source) change.
SCRIPT_EDITED = SMALL_FIGURE.replace('label: str = "line"', 'label: str = "a rising line"')
assert SCRIPT_EDITED != SMALL_FIGURE


def _project(base: Path, home: str, script: str = SMALL_FIGURE) -> Path:
    proj = mini_project(base, {"line": script},
                        {"index.md": home, "other.md": OTHER, "notation.md": NOTATION})
    hooks = ", ".join(f'"{HOOKS / name}"' for name in ("site_serve.py", "site_numbering.py", "site_figures.py",
                                                          "site_notation.py"))
    (proj / "mkdocs.yml").write_text(textwrap.dedent(f"""\
        site_name: mini
        site_url: {SERVE_URL}
        strict: true
        theme: {{name: mkdocs}}
        hooks: [{hooks}]
        markdown_extensions: [attr_list, md_in_html, tables, {{pymdownx.arithmatex: {{generic: true}}}}]
        """))
    return proj


class Serve:
    """What ``mkdocs serve`` does (MkDocs 1.6, ``mkdocs/commands/serve.py``), without the server:
    ``on_startup(command="serve")`` once, then ``build(config, serve_url=...)`` with a freshly
    loaded config for every rebuild, in this process."""

    def __init__(self, proj: Path, site: Path):
        from mkdocs.config import load_config

        self.load = lambda: load_config(config_file=str(proj / "mkdocs.yml"), site_dir=str(site))
        self.config = self.load()
        self.config.plugins.on_startup(command="serve", dirty=False)

    def build(self) -> None:
        from mkdocs.commands.build import build

        config, self.config = self.config or self.load(), None
        config.site_url = SERVE_URL
        build(config, serve_url=SERVE_URL, dirty=False)

    def shutdown(self) -> None:
        (self.config or self.load()).plugins.on_shutdown()


def _memo_stats() -> dict:
    sys.path.insert(0, str(HOOKS))
    try:
        import _serve
    finally:
        sys.path.remove(str(HOOKS))
    return _serve.stats()


@pytest.fixture(scope="module")
def clean_sites(tmp_path_factory):
    """Clean strict builds, each in a process of its own, of the site before and after each edit."""
    base = tmp_path_factory.mktemp("serve-clean")
    cache = base / "cache"
    out = {}
    for name, home, script in (("before", HOME, SMALL_FIGURE), ("after", HOME_EDITED, SMALL_FIGURE),
                               ("script", HOME, SCRIPT_EDITED)):
        proj = _project(base / name, home, script)
        site = base / f"site-{name}"
        res = mkdocs_build(proj / "mkdocs.yml", site, cache, env={"SOURCE_DATE_EPOCH": EPOCH})
        assert res.returncode == 0, res.stderr[-3000:]
        out[name] = tree(site)
    return cache, out


def _differences(a: dict, b: dict) -> list:
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def test_a_rebuild_under_serve_is_a_clean_build_and_reuses_the_unchanged_pages(tmp_path, monkeypatch, clean_sites):
    cache, clean = clean_sites
    monkeypatch.setenv("MHA_CACHE_DIR", str(cache))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    proj, site = _project(tmp_path, HOME), tmp_path / "served"
    home = proj / "docs" / "index.md"
    serve = Serve(proj, site)
    try:
        serve.build()
        assert _differences(tree(site), clean["before"]) == []
        first = _memo_stats()
        # notation links index, other and scripts/all (the script's section); numbering reads notation too
        assert first["notation"] == (3, 0) and first["numbering"] == (4, 0) and first["script source"] == (1, 0)
        assert first["page conversion"] == (4, 0)  # index, other, notation, scripts/all

        home.write_text(HOME_EDITED)  # the save
        serve.build()
        assert _differences(tree(site), clean["after"]) == [], "the rebuilt site is not the clean build"
        page = (site / "index.html").read_text()
        assert "(2)" in page and "notation/#d_head" in page  # the edit is there, numbered and linked
        edited = _memo_stats()
        # the edited page is computed again; the unchanged page and the script page come from memory
        assert edited["notation"] == (1, 2), edited
        assert edited["numbering"] == (1, 3), edited
        assert edited["script source"] == (0, 1), edited
        assert edited["directives"][1] > 0, edited
        assert edited["page conversion"] == (1, 3), edited  # only the edited page is converted again

        home.write_text(HOME)  # and back: what the first build showed, not the edit
        serve.build()
        assert _differences(tree(site), clean["before"]) == [], "the site after undoing the edit is stale"
        assert _memo_stats()["notation"] == (1, 2) and _memo_stats()["page conversion"] == (1, 3)

        (proj / "figures" / "line.py").write_text(SCRIPT_EDITED)  # a figure script saved
        serve.build()
        assert _differences(tree(site), clean["script"]) == [], "the site after a script edit is stale"
        assert _memo_stats()["script source"] == (1, 0)
    finally:
        serve.shutdown()


def test_mkdocs_build_takes_nothing_from_memory(tmp_path, monkeypatch, clean_sites):
    """``mkdocs build`` (its ``on_startup`` says "build"), even twice in one process, computes
    every page again: the memos are for serve only."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    cache, clean = clean_sites
    monkeypatch.setenv("MHA_CACHE_DIR", str(cache))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    proj = _project(tmp_path, HOME)
    config = load_config(config_file=str(proj / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    config.plugins.on_startup(command="build", dirty=False)
    try:
        for n in range(2):
            config = config if n == 0 else load_config(config_file=str(proj / "mkdocs.yml"),
                                                       site_dir=str(tmp_path / "site"))
            build(config)
            stats = _memo_stats()
            assert stats["notation"] == (3, 0) and stats["numbering"] == (4, 0), stats
            assert stats["script source"] == (1, 0) and stats["directives"][1] == 0, stats
            assert stats["page conversion"] == (0, 0), stats  # not even asked: build converts every page itself
        assert _differences(tree(tmp_path / "site"), clean["before"]) == []
    finally:
        config.plugins.on_shutdown()


@pytest.mark.parametrize("markdown, kept", [
    ('# A\n\n--8<-- "mhalib/alibi.py:slopes"\n', True),
    ("# A\n\n--8<-- 'mhalib/alibi.py:slopes'\n", False),  # single quotes: not in the key
    ('# A\n\n--8<--\nmhalib/alibi.py\n--8<--\n', False),  # the block form: not in the key
    ("# A\n\n::: mhalib.alibi\n", False),
    ("# A\n\nno include\n", True),
])
def test_a_page_whose_includes_the_key_cannot_follow_is_converted_every_time(markdown, kept):
    """Pass twenty: the page-conversion memo under `mkdocs serve` keys a page on the files its
    double-quoted includes name; an include written another way (pymdownx.snippets reads single
    quotes and a block too) would keep serving the old text after its file changed."""
    sys.path.insert(0, str(HOOKS))
    import site_serve

    assert site_serve._memo_safe(markdown) is kept


def test_a_snippet_that_a_snippet_includes_is_in_the_pages_key(tmp_path):
    """Pass thirty-nine: a page including a.md, which includes b.md, was keyed on a.md alone:
    an edit to b.md under `mkdocs serve` left the old conversion served. The inner file is in the
    key; one included in a form the key cannot follow makes the page converted every time."""
    sys.path.insert(0, str(HOOKS))
    import site_serve

    page = '# A\n\n--8<-- "a.md"\n'
    (tmp_path / "a.md").write_text('a\n\n--8<-- "b.md"\n')
    (tmp_path / "b.md").write_text("b value 1\n")
    before = site_serve._snippets(page, tmp_path)
    assert before is not None and "b.md" in before
    (tmp_path / "b.md").write_text("b value 2\n")
    assert site_serve._snippets(page, tmp_path) != before
    (tmp_path / "a.md").write_text("a\n\n--8<-- 'b.md'\n")  # single quotes: not in any key
    assert site_serve._snippets(page, tmp_path) is None
