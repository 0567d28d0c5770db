"""Where each number on a page comes from: the ``mha-value`` marks and the records a reader opens.

A ``{{ value SCRIPT PATH }}`` is filled in while the page is still Markdown, and the number
can land anywhere Markdown goes: prose, a table cell, a heading, an admonition's title, a
figure's caption or alt text, a code block. Only some of those places can hold an element.
So the value goes in *marked* (:func:`mark`): its source and its request's key, written in
Unicode private-use characters that Markdown, the table of contents' slugs and the search
index pass through or drop, around the value's text. Once the page is HTML, :func:`spans`
turns each mark that stands in text into

    <span class="mha-value" data-source="SCRIPT PATH" data-prov="KEY">0.84</span>

and drops the marks where no element can go (an attribute, a ``<script>``, a heading's entry
in the table of contents: :func:`plain`). A value inside a formula is written as KaTeX's
``\\htmlData{source=SCRIPT PATH, prov=KEY}{0.84}`` instead (:func:`math_value`), which the
build's KaTeX renders as a span with the same ``data-source``. Nothing here may reach a
reader as a private-use character: :func:`spans` raises if one is left.

``data-prov`` keys the page's provenance records (:func:`record`, written into the page as
JSON by :func:`records_html`): the script, its parameters, the command that recomputes the
number, the stored measurement it reads (file, machine, date, the tool that measured it) and
the tests that name it (:func:`tests_index`). ``docs/javascripts/provenance.js`` shows them
on hover, focus or tap. The page "Get the code" explains them to a reader.
"""
from __future__ import annotations

import ast
import hashlib
import html as html_lib
import json
import re
from pathlib import Path

# (hooks/numbering.py's references use U+E000 and U+E001: these marks stay clear of them)
OPEN, CLOSE = "\ue010", "\ue012"
_BYTE0 = 0xE100  # a byte b of a token's payload is chr(_BYTE0 + b): private use, dropped by slugs
_ANY_MARK = re.compile("[\ue010-\ue012\ue100-\ue1ff]")
_TOKEN_RE = re.compile(f"{OPEN}([\ue100-\ue1ff]*){CLOSE}")


class ProvenanceError(ValueError):
    """A value that cannot be shown where it stands (the page names itself in the message)."""


def key(request) -> str:
    """The request's key in a page's records: the script's name, and for parameters other than
    the defaults a hash of them (no comma or ``=``: it also goes into a KaTeX ``\\htmlData``)."""
    if not request.params:
        return request.name
    return f"{request.name}-{hashlib.sha256(request.canonical().encode()).hexdigest()[:8]}"


def token(source: str, prov: str, text: str, read: str = "") -> str:
    """A value as the page's Markdown holds it: its ``source`` ("SCRIPT PATH"), its request's
    ``prov`` key, its ``text`` and what the build read around it (``read``, hooks/seen.py's
    record, hex), all written in private-use characters, so that nothing in the text (``*``,
    ``<b>``, a backtick, ``\\(``) is read as Markdown, HTML or math, wherever the directive
    stands. :func:`spans` writes it out once the page is HTML."""
    if not re.fullmatch(r"[0-9a-f]*", read):
        raise ProvenanceError(f"a value's record of what the build read must be hex, not {read!r}")
    payload = "\t".join((source, prov, read, text)).encode("utf-8")
    return OPEN + "".join(chr(_BYTE0 + b) for b in payload) + CLOSE


def _fields(m) -> tuple[str, str, str, str]:
    """A token's source, prov key, text and record of what the build read (:func:`token`)."""
    source, prov, read, text = bytes(ord(c) - _BYTE0 for c in m.group(1)).decode("utf-8").split("\t", 3)
    return source, prov, text, read


#: A number as the pages show one: digits, a point, grouping commas, an exponent, a percent sign.
_NUMBER = re.compile(r"[-+−]?[\d.,]+(?P<exp>[eE][-+]?\d+)?%?")
#: What each TeX-active character of a text becomes inside ``\text{...}``.
_TEX_TEXT = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "_": r"\_", "^": r"\textasciicircum{}",
             "~": r"\textasciitilde{}", "%": r"\%", "&": r"\&", "#": r"\#", "$": r"\$"}


def tex_of(text: str) -> str:
    """A value's text as TeX that draws it as written: a number with its grouping commas kept
    tight (``{,}``; a bare comma is punctuation in math and gets a space) and its percent sign
    escaped; anything else as ``\text{...}`` with TeX's active characters escaped (in math,
    ``attn_head`` would be attn with a subscript h, ``1_234`` a wrong number)."""
    number = _NUMBER.fullmatch(text)
    if number:
        tex = text.replace(",", "{,}").replace("%", r"\%")
        if number["exp"]:  # 1.5e-05: an upright e and a signed exponent, not a variable e minus 5
            e = number["exp"]
            tex = tex.replace(e, rf"\mathrm{{{e[0]}}}{{{e[1:]}}}", 1)
        return tex
    return r"\text{" + "".join(_TEX_TEXT.get(c, c) for c in text) + "}"


def math_value(source: str, prov: str, text: str, read: str = "") -> str:
    """A value inside a formula: KaTeX's ``\\htmlData`` puts the value's attributes on its span
    (``read``, hooks/seen.py's record, as ``data-read``, which the build checks and drops)."""
    if not re.fullmatch(r"[\w .\-]+", source + prov):
        raise ProvenanceError(f"a value's source {source!r} cannot go into a formula's \\htmlData "
                              "(a data path inside math is letters, digits, _, - and dots)")
    record = f", read={read}" if read else ""
    return rf"\htmlData{{source={source}, prov={prov}{record}}}{{{tex_of(text)}}}"


def plain(text: str) -> str:
    """``text`` (HTML) with each value token written as its escaped text: what a value shows
    where no element can go (a table of contents' entry, a page title, an attribute)."""
    if OPEN not in text:
        return text
    # (a backslash as a character reference: the navigation's math typesetting reads "\\(")
    return _TOKEN_RE.sub(lambda m: html_lib.escape(_fields(m)[2], quote=True).replace("\\", "&#92;"), text)


def plain_tex(text: str) -> str:
    """``text`` with each value inside a formula unwrapped (``\\htmlData{...}{0.84}`` -> ``0.84``,
    its braces matched: a number's ``{,}`` stays): what the search index and a page's
    description show of a formula's TeX."""
    out, pos = [], 0
    while (i := text.find("\\htmlData{source=", pos)) >= 0:
        j = text.find("}{", i)
        if j < 0:
            break
        depth, k = 1, j + 2
        while k < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[k], 0) if text[k - 1] != "\\" else 0
            k += 1
        if depth:
            break
        out += [text[pos:i], text[j + 2:k - 1]]
        pos = k
    return "".join(out) + text[pos:]


#: Elements whose text is not HTML (a span there would show as text): a value is its bare text.
_RAW = ("script", "style", "textarea", "title")
_TAG = re.compile(r"<!--.*?-->|<(/?)([A-Za-z][A-Za-z0-9]*)\b(?:[^>\"']|\"[^\"]*\"|'[^']*')*>", re.S)
_MATH_OPEN = re.compile(r'<(span|div) class="arithmatex">')


def spans(html: str, where: str) -> tuple[str, list]:
    """``html`` with each value token written out by where it stands, and the keys of the requests
    it shows, in order of first appearance:

    - in text (prose, a table, a heading, a caption, a code block): ``<span class="mha-value"
      data-source="SCRIPT PATH" data-prov="KEY">TEXT</span>``, the text escaped;
    - in a formula (pymdownx.arithmatex's element): KaTeX's ``\\htmlData{source=..., prov=...}{TEXT}``;
    - in a tag's attribute, a textarea or a title: its escaped text (in a script or a style: refused).

    A token that is left (cut apart by markup) raises, naming ``where``."""
    if OPEN not in html:
        return html, []
    keys: list = []

    def seen(prov: str) -> None:
        if prov not in keys:
            keys.append(prov)

    def in_text(m) -> str:
        source, prov, text, read = _fields(m)
        seen(prov)
        record = f' data-read="{read}"' if read else ""  # (hooks/seen.py checks it and drops it)
        return (f'<span class="mha-value" data-source="{html_lib.escape(source)}" '
                f'data-prov="{html_lib.escape(prov)}"{record}>{html_lib.escape(text, quote=False)}</span>')

    def in_math(m) -> str:
        source, prov, text, read = _fields(m)
        seen(prov)
        try:
            return html_lib.escape(math_value(source, prov, text, read), quote=False)
        except ProvenanceError as exc:
            raise ProvenanceError(f"{where}: {exc}") from None

    def in_raw(m) -> str:  # textarea, title: text, escaped; a script or a style cannot hold a value safely
        if raw in ("script", "style"):
            raise ProvenanceError(f"{where}: a {{{{ value }}}} inside a <{raw}> element: its text would be read "
                                  "as code; put the value in the page's text")
        return html_lib.escape(_fields(m)[2], quote=False)

    def write(text: str, raw, math) -> str:
        if OPEN not in text:
            return text
        return _TOKEN_RE.sub(in_raw if raw else in_math if math else in_text, text)

    out, pos, raw, math = [], 0, None, None
    for m in _TAG.finditer(html):
        out.append(write(html[pos:m.start()], raw, math))
        tag = m.group(0)
        out.append(plain(tag) if OPEN in tag else tag)
        name = (m.group(2) or "").lower()
        if raw is None and math is None and not m.group(1):
            if name in _RAW:
                raw = name
            elif _MATH_OPEN.match(tag):
                math = name
        elif m.group(1) and name in (raw, math):
            raw = math = None
        pos = m.end()
    out.append(write(html[pos:], raw, math))
    result = "".join(out)
    left = _ANY_MARK.search(result)
    if left:
        context = _ANY_MARK.sub("", result[max(0, left.start() - 80):left.start() + 80])
        raise ProvenanceError(f"{where}: a {{{{ value }}}} was cut apart by the page's markup and cannot be "
                              f"shown: near {context!r}")
    return result, keys


def clean_toc(items) -> None:
    """The table of contents' titles (and their children's) with each value as its text, in place."""
    for item in items:
        item.title = plain(item.title)
        item.id = plain(item.id)  # a heading's { #id-{{ value }} }: its link too
        clean_toc(item.children)


# ---- the tests that name a script -------------------------------------------------------------------

def _tokens(node) -> set:
    """Every identifier and every word of every string in ``node``."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", n.value))
        elif isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.alias):
            out.update(n.name.split(".") + ([n.asname] if n.asname else []))
    return out


def tests_in(path: Path, rel: str) -> list:
    """Each test function of the test module ``path`` as ``(rel, name, line, words)``: ``words``
    the identifiers and string words it reads, the module-level names it uses included (a
    ``NAMES = [...]`` it is parametrized over)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module_names: dict = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            words = _tokens(node.value) if node.value is not None else set()
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        module_names[n.id] = words
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            words = _tokens(node)
            for name in list(words):
                words |= module_names.get(name, set())
            out.append((rel, node.name, node.lineno, frozenset(words)))
    return out


def tests_index(tests_dir: Path, names, functions) -> dict:
    """``{name: [(file, test, line), ...]}``: for each script name in ``names`` and each mhalib
    function name in ``functions``, the tests that name it (in a string, as an identifier,
    an import or a module-level list they use)."""
    wanted = set(names) | set(functions)
    found: dict = {n: [] for n in wanted}
    for path in sorted(Path(tests_dir).glob("test_*.py")):
        rel = f"tests/{path.name}"
        for file, test, line, words in tests_in(path, rel):
            for n in words & wanted:
                found[n].append((not words & _READS_DATA, file, test, line))
    # the tests that compute the numbers (call data()) first, then the machine's tests
    return {n: [t[1:] for t in sorted(found[n])] for n in wanted}


#: Words of a test that computes a script's numbers (``SCRIPT.data()``, ``d(NAME)``, ``figures.load``).
_READS_DATA = frozenset({"data", "d", "load"})


# ---- stored measurements --------------------------------------------------------------------------------

def stored_files(data_dir: Path) -> dict:
    """``{file: {"what", "by", "machine", "date"}}`` for the stored measurements: what and by
    whom from ``figures/data/README.md``'s table, the machine and date from the file itself."""
    readme = (Path(data_dir) / "README.md").read_text(encoding="utf-8")
    out = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`([^`]+)`", cells[0]) if len(cells) == 4 else None
        if not m:
            continue
        name = m.group(1)
        entry = {"what": _md_plain(cells[1]), "by": _md_plain(cells[2]), "machine": "", "date": ""}
        path = Path(data_dir) / name
        if path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            machine = data.get("machine") or {}
            entry["machine"] = machine.get("gpu") or (
                f"{machine['cores']}-core CPU ({machine.get('cpu', 'CPU')})" if "cores" in machine else
                machine.get("device", "") and f"{machine['device'].upper()}")
            entry["date"] = machine.get("measured_on") or data.get("date", "")
        out[name] = entry
    return out


def _md_plain(text: str) -> str:
    return re.sub(r"`([^`]*)`", r"\1", text)


# ---- a request's record -----------------------------------------------------------------------------------

#: How many tests a record lists by name; the script's section lists them all.
TESTS_SHOWN = 5


def record(request, *, command: str, script_url: str, tests: dict, stored: dict, data_files) -> dict:
    """What a reader sees about ``request``'s numbers (see the module's docstring). ``tests`` is
    :func:`tests_index`'s, ``stored`` :func:`stored_files`', ``data_files`` the stored files the
    script reads."""
    script = request.script
    own = tests.get(script.name, [])
    functions = sorted({ref.rsplit(".", 1)[-1] for kind, ref in script.lib_refs
                        if kind == "use" and ref.count(".") == 1})
    library = [[f"mhalib.{f}", len(tests.get(f, []))] for f in functions if tests.get(f)]
    return {
        "script": script.name,
        "title": script.title.rstrip("."),
        "url": script_url,
        "params": [[k, list(v) if isinstance(v, tuple) else v] for k, v in request.params],
        "command": command,
        "stored": [dict(file=f"figures/data/{f}", **stored[f]) for f in sorted(data_files) if f in stored],
        "tests": [f"{file}::{test}" for file, test, _ in own[:TESTS_SHOWN]],
        "tests_total": len(own),
        "library": library,
    }


def tests_html(name: str, tests: dict, repo_url: str = "") -> str:
    """The script's section's list of the tests that name it (``file::test``, line), each linked
    to its line in the repository where the site names one (``repo_url``)."""
    found = tests.get(name, [])
    if not found:
        return "<p>No test names this script.</p>\n"
    items = []
    for file, test, line in found:
        text = f"<code>{html_lib.escape(file)}::{html_lib.escape(test)}</code> (line {line})"
        if repo_url:
            text = f'<a href="{html_lib.escape(repo_url.rstrip("/"))}/blob/main/{file}#L{line}">{text}</a>'
        items.append(f"<li>{text}</li>")
    where = "" if repo_url else " (in the source archive's <code>tests/</code>)"
    return (f'<p>Tests that name this script{where}:</p>\n<ul class="mha-tests">{"".join(items)}</ul>\n')


def records_html(records: dict) -> str:
    """The page's records as JSON in a hidden element's attribute (nothing is fetched). Not a
    ``<script type="application/json">``: the theme's instant navigation runs every script of a
    page it brings in again, without its type, and JSON run as JavaScript is an error."""
    text = json.dumps(records, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f'<div class="mha-provenance" hidden data-records="{html_lib.escape(text, quote=True)}"></div>'
