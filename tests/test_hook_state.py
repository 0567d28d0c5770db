"""Who owns a build's state: the build's config carries it (hooks/_context.py), the serving
process keeps one session (hooks/_serve.py), and no hook module keeps state of its own.

Module-level state in a hook survives from one ``mkdocs serve`` rebuild to the next (MkDocs
loads each hook file once per process), so a step that forgets to reset it publishes what an
earlier build knew; a test reads every hook's source for such state.
"""
from __future__ import annotations

import ast
import sys
from types import SimpleNamespace

import pytest

from helpers import HOOKS

sys.path.insert(0, str(HOOKS))
import _context  # noqa: E402
import _serve  # noqa: E402

MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "Memo", "Session"}
MUTATORS = {"append", "extend", "update", "clear", "pop", "popitem", "setdefault", "add", "remove", "discard",
            "insert"}
#: The one object that holds the serving process's state on purpose (what it keeps between rebuilds).
SESSION = ("_serve.py", "SESSION")


def _mutable(value) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in MUTABLE_CALLS
    return False


def module_state(source: str, filename: str) -> list[str]:
    """What in a hook module's ``source`` is state kept by the module itself: a module-level name
    bound to a mutable container (unless it is an UPPER_CASE constant nothing mutates), and any
    ``global`` statement."""
    tree = ast.parse(source, filename)
    bound = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        for t in targets:
            if isinstance(t, ast.Name) and value is not None and _mutable(value):
                bound[t.id] = node.lineno
    mutated = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append(f"{filename}:{node.lineno}: global {', '.join(node.names)}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            for t in getattr(node, "targets", None) or [node.target]:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    mutated.add(t.value.id)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
              and isinstance(node.func.value, ast.Name)):
            mutated.add(node.func.value.id)
    for name, line in sorted(bound.items(), key=lambda x: x[1]):
        if (filename, name) == SESSION:
            continue
        if not name.isupper() or name in mutated:
            found.append(f"{filename}:{line}: module-level {name} is mutable state")
    return found


def test_no_hook_module_keeps_state_of_its_own():
    found = [f for path in sorted(HOOKS.glob("*.py"))
             for f in module_state(path.read_text(encoding="utf-8"), path.name)]
    assert found == [], "a build's state belongs on its config (hooks/_context.py):\n" + "\n".join(found)


@pytest.mark.parametrize("source, expected", [
    ("_state: dict = {}\n", ["h.py:1: module-level _state is mutable state"]),
    ("_seen = []\n", ["h.py:1: module-level _seen is mutable state"]),
    ("_memo = _serve.Memo('x')\n", ["h.py:1: module-level _memo is mutable state"]),
    ("NAMES = {'a': 1}\ndef f():\n    NAMES['b'] = 2\n", ["h.py:1: module-level NAMES is mutable state"]),
    ("SEEN = set()\ndef f(x):\n    SEEN.add(x)\n", ["h.py:1: module-level SEEN is mutable state"]),
    ("_on = False\ndef f():\n    global _on\n    _on = True\n", ["h.py:3: global _on"]),
    ("NAMES = {'a': 1}\nLIMIT = 3\nPATTERN = ('x', 'y')\ndef f():\n    return NAMES['a']\n", []),
])
def test_the_state_check_finds_each_form_of_module_state(source, expected):
    assert module_state(source, "h.py") == expected


class _Config:
    """Stands for MkDocs' config object: a build's state goes on it."""


def test_each_build_gets_its_own_state_and_the_error_hook_finds_the_current_one():
    class Step:
        def __init__(self):
            self.seen = []

    one, two = _Config(), _Config()
    _context.of(one).step(Step).seen.append("from the first build")
    assert _context.of(one).step(Step).seen == ["from the first build"]  # the same object within a build
    assert _context.of(two).step(Step).seen == []  # a rebuild (a fresh config) starts empty
    assert _context.of(two).find(Step) is not None and _context.of(_Config()).find(Step) is None
    keep = _serve.SESSION.build
    try:
        _serve.begin(two)
        assert _context.current() is _context.of(two)  # on_build_error has no config: it finds the build
        _serve.begin(one)
        assert _context.current() is _context.of(one)
    finally:
        _serve.SESSION.build = keep


def test_the_serving_process_says_a_note_once_until_it_restarts():
    keep = _serve.SESSION.said
    try:
        _serve.SESSION.said = set()
        assert _serve.once("no public address") is True
        assert _serve.once("no public address") is False
        assert _serve.once("another note") is True
        _serve.SESSION.said = set()  # what on_startup does
        assert _serve.once("no public address") is True
    finally:
        _serve.SESSION.said = keep


def test_the_print_hook_takes_its_navigation_from_the_build_it_belongs_to():
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_print_under_test", HOOKS / "site_print.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    files = SimpleNamespace(get_file_from_path=lambda uri: object())
    one, two = _Config(), _Config()
    nav_one, nav_two = SimpleNamespace(pages=[], name="one"), SimpleNamespace(pages=[], name="two")
    hook.on_nav(nav_one, config=one, files=files)
    hook.on_nav(nav_two, config=two, files=files)
    assert _context.of(one).step(hook.PrintState).nav is nav_one
    assert _context.of(two).step(hook.PrintState).nav is nav_two


# ---- the MkDocs-bound code is thin: the grammar, the numbering and the figure step are plain ----

#: What a move to another site generator keeps as it is (README, "What is where").
PLAIN = ("directives.py", "claims.py", "numbering.py", "figure_markdown.py", "navigation.py", "downloads.py", "notebook_css.py")


def _imports(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("name", PLAIN)
def test_the_grammar_numbering_and_figure_step_import_nothing_of_mkdocs(name):
    imported = _imports(HOOKS / name)
    assert not imported & {"mkdocs", "material", "mkdocs_jupyter", "pymdownx", "markdown"}, (name, sorted(imported))
    assert not any(i.startswith("site_") for i in imported), (name, sorted(imported))  # nor the adapters


def test_the_plain_functions_take_and_give_plain_values():
    """Called as another generator would: text in, text out, errors of their own."""
    import directives
    import figure_markdown as M
    import numbering

    markdown = "# Page\n\nSee {{ ref eq:one }}.\n\n\\[\nx = 1\n\\]{#eq:one}\n"
    found = directives.parse(markdown, where="p.md")
    text, plan = numbering.plan_page(markdown, found, "p.md", titles={})
    assert list(plan.eq_labels) == ["one"] and "<!-- mha-eq:one -->" in text and "{{ ref" not in text
    with pytest.raises(numbering.NumberingError, match=r"p\.md:1: .*cannot stand in a heading"):
        numbering.plan_page("# A {{ ref fig:x }}\n", directives.parse("# A {{ ref fig:x }}\n", where="p.md"),
                            "p.md", titles={})
    page = M.PageRef("attention.md", "attention/", "Attention")
    assert M.link(page, "figures/x.svg") == "figures/x.svg" and M.site_url(page, "figures/x.svg") == "../figures/x.svg"
    with pytest.raises(M.FigureMarkdownError, match=r"^attention\.md:3: figure 'x' has no alt text"):
        M.figure_html(M.Site(), page, SimpleNamespace(alt="", line=3, name="x", raw="![](figures/x.svg)"), None)


PATHS = ["", ".", "/", "index.md", "a/", "a/b/", "a/b.md", "a/b/c.md", "a/../b/", "a/./b/", "../a/", "a/b/../../..",
         "figures/x.svg", "figures/x.svg#only-dark", "scripts/x/", "api/attention/", "api/index.md", "a//b/",
         "x.y/z/", "x.y/z.md", "/abs/path/", "downloads/m-0.1-py3-none-any.whl"]


def test_relative_urls_are_the_ones_mkdocs_makes():
    """The emitters' own relative_url (no MkDocs in them) against MkDocs' get_relative_url, the
    peer every link of the site was made with before, on every pair of paths above."""
    from mkdocs.utils import get_relative_url

    import figure_markdown as M

    wrong = [(url, other, M.relative_url(url, other), get_relative_url(url, other))
             for url in PATHS for other in PATHS if M.relative_url(url, other) != get_relative_url(url, other)]
    assert wrong == []


def test_each_tool_is_imported_under_one_name():
    """A tool imported both as ``screenshots`` (its folder on sys.path) and as
    ``tools.screenshots`` is two modules with two states; every import names ``tools.NAME``."""
    root = HOOKS.parent
    tools = {p.stem for p in (root / "tools").glob("*.py")} - {"__init__"}
    found = []
    for folder in ("tests", "tools", "hooks"):
        for path in sorted((root / folder).glob("*.py")):
            for top in _imports(path) & tools:
                found.append(f"{folder}/{path.name} imports {top} (write tools.{top})")
            if '/ "tools' + '"))' in path.read_text(encoding="utf-8"):  # (split: this line is not one)
                found.append(f"{folder}/{path.name} puts tools/ on sys.path")
    assert found == []


def test_the_build_process_never_loads_matplotlib():
    """Drawing happens in the render workers; the build's own process reads colours from
    figures._kit.palette. Loading matplotlib there (through figures._kit.style) cost every
    build half a second (the no-change rebuild went from 1.15 to 1.30 times the plain one)."""
    import subprocess

    code = ("import sys; sys.path.insert(0, 'hooks'); import figure_markdown, site_figures, site_numbering; "
            "from figures._kit import palette, build, contract, store; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=HOOKS.parent, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    for path in sorted(HOOKS.glob("*.py")):
        assert "figures._kit.style" not in _imports_full(path) and "matplotlib" not in _imports(path), path.name


def _imports_full(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out |= {f"{node.module}.{a.name}" for a in node.names} | {node.module}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out
