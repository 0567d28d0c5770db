r"""The page grammar: every directive a course page may contain, parsed in one place.

Figures are Markdown images, so a page reads well as plain Markdown::

    ![alt text](figures/NAME.svg "Caption")
    ![alt text](figures/NAME.svg?d_model=4&n_positions=8 "Caption")

Everything else is ``{{ KEYWORD ... }}``; block directives stand on a line of their own::

    {{ table NAME }}                        {{ table NAME?causal=true }}
    {{ explorer NAME alt="..." caption="..." }}   (NAME?params for the static figure)
    {{ gallery }}   {{ gallery only=bert_ }}   {{ gallery except=bert_ }}   {{ gallery chapter=attention,position }}

and three are inline::

    {{ value NAME path.to.item .2f }}       (a dotted path into data() and a format spec;
                                             NaN, an infinity or None stops the build, unless
                                             allow=inf says the prose expects ∞ or −∞;
                                             a value the format rounds says what its
                                             sentence claims: round=up or round=down: a
                                             bound; round=nearest: the value to its digits)
    {{ ref fig:KEY }}  {{ ref table:KEY }}  {{ ref eq:KEY }}   (see below)
    {{ download wheel }}  {{ download source name }}   (the site's downloads: link, name or size;
                                             replaced by hooks/site_downloads.py)

Figures, tables and display equations are numbered per page ("Figure 2", "Table 1",
"(3)"; hooks/site_numbering.py), and prose refers to them by a key, never by a number::

    As {{ ref fig:pe_heatmap }} shows ...   ->  "Figure 2", a link to the figure
    {{ ref table:wavelength_table }}        ->  "Table 1"
    {{ ref eq:softmax }}                    ->  "Equation (3)"

A figure's or table's key is its script's name. Where one script appears twice on a page
(other parameters), give each a label of its own right after it, the way pandoc-crossref
writes them::

    ![alt](figures/pe_heatmap.svg?d_model=4 "caption"){#fig:pe_small}
    {{ table cat_sat_mat_scores?causal=true caption="..." }}{#table:causal_scores}
    {{ explorer pe_heatmap ... }}{#fig:pe_live}

A display equation is numbered whether or not it has a label; to refer to it, label it
right after its closing ``\]``::

    \[
    \mathrm{softmax}(x)_i = e^{x_i} / \textstyle\sum_j e^{x_j}
    \]{#eq:softmax}

Keys are letters, digits, ``_`` and ``-``; the kinds are lower case (``{#Fig:x}`` and
``{#tab:x}`` stop the build with the right spelling). A table directive may carry ``caption="..."``
(default: the first line of the script's docstring); a quoted option value may hold braces,
so a caption can hold math: ``caption="Scores \(s_{ij}\)"``. A figure's alt text and caption, a
table's caption and an explorer's alt and caption may hold ``{{ value }}``s, so that a number
read there comes from data(), as in prose (an option holds no other directive). A reference to
a key the page does not have, a key that names two things (one script shown twice: label them),
two labels with one key, and anything that looks like a label but is not one stop the build.
References are not allowed in headings or figure captions (a caption is also shown in
the gallery, on another page).

A caption shows its text as written: ``keys j<i only`` is not read as HTML
(:func:`caption_text`). A table's caption is Markdown, with emphasis, code and math
(``\( ... \)``) as in prose; a figure's caption is text. A value's format spec is
Python's (``.2f``, ``,``, ``.1%``), with a width and a precision of at most
:data:`MAX_FORMAT_WIDTH` and :data:`MAX_FORMAT_PRECISION` (``999999999.2f`` would make
a string of a gigabyte), padding with spaces or leading zeros only and grouping digits
with ``,`` only (anything else reads as part of the number: 5 at ``<05d`` is 50000).
Error messages name the line in the page's own file (:func:`on_source_lines`).

Parameters are ``name=value`` joined by ``&`` and URL-encoded (``+`` for a space); a
sequence is written ``1,2,3``. Anything that looks like a directive and is not a valid one
is an error naming the page, the line and, for a misspelt keyword, a suggestion: a typo
must fail the build, never publish raw text. Only inline code is not scanned (a page
shows the syntax itself in inline code); fenced code blocks and math are.

This module knows nothing of MkDocs or of the figures: :func:`parse` returns
:class:`Directive` objects and :func:`substitute` replaces them.
"""
from __future__ import annotations

import difflib
import html
import re
import shlex
from dataclasses import dataclass, field, replace

BLOCK = {"table": 1, "explorer": 1, "gallery": 0}  # keyword -> number of positional arguments
INLINE = {"value": (2, 3), "download": (1, 2), "ref": (1, 1)}  # keyword -> (min, max) positional arguments
OPTIONS = {"explorer": {"alt", "caption"}, "gallery": {"only", "except", "chapter"}, "table": {"caption"},
           "value": {"allow", "round"}}
#: ``{{ value ... allow=inf }}``: the prose expects an infinity there (shown as ∞ or −∞); any
#: other non-finite or missing value stops the build.
VALUE_ALLOW = ("inf",)
#: ``{{ value ... .2f round=up }}``: the sentence states a bound ("within", "up to", "at most":
#: up; "at least": down), and the number is rounded toward the side that keeps it true (a
#: largest error of 0.1312 "within 0.13" was false; "within 0.14" is true).
#: ``round=nearest``: the sentence states the value to its digits and no more: two values joined
#: as a range ("from {{ value a }} to {{ value b }}", rising) are a change (before and after),
#: not a range whose ends bound what lies between (hooks/figure_markdown.check_range).
#: Every value its format rounds says one of the three (hooks/claims.check_declared).
VALUE_ROUND = ("up", "down", "nearest")
KEYWORDS = sorted([*BLOCK, *INLINE, "figure"])
# Directives about the page's own numbering, not about a figure script (hooks/site_numbering.py).
NUMBERING = ("ref", "eq")
REF_KINDS = ("fig", "table", "eq")
KEY = r"[A-Za-z0-9_-]+"
# What may be labelled, and the label it takes: a figure or an explorer {#fig:KEY}, a table {#table:KEY}.
LABEL_KIND = {"figure": "fig", "explorer": "fig", "table": "table"}

FIGURE_RE = re.compile(
    r'!\[(?P<alt>[^\]\n]*)\]\((?P<prefix>(?:\.\./)*)figures/(?P<name>[A-Za-z0-9_]+)\.svg'
    r'(?:\?(?P<query>[^\s)"]*))?(?:\s+"(?P<caption>[^"\n]*)")?\)'
    r'(?:\{\s*#fig:(?P<key>' + KEY + r')\s*\})?'
)
# A reference to a figure that FIGURE_RE did not read: a typo, brackets in the alt text, ...
FIGURE_LIKE_RE = re.compile(r'!\[[^\n]*?\]\([^)\n]*figures/[^)\n]*?\.svg(?!#only-)[^)\n]*\)')
# Braces only inside "quoted" values (a caption's math: \(d_{\text{head}}\)); an unclosed quote
# is read too, so that the error names it.
BRACES_RE = re.compile(r'\{\{(?P<body>(?:"[^"\n]*"|[^{}"\n])*(?:"[^{}"\n]*)?)\}\}')
OPENING_RE = re.compile(r"\{\{\s*[A-Za-z_]")  # what starts a directive (math like {{x} is masked)
TARGET_RE = re.compile(r"(?P<name>[A-Za-z0-9_]+)(?:\?(?P<query>\S*))?$")
REF_RE = re.compile(r"(?P<kind>[a-z]+):(?P<key>" + KEY + r")$")
# A label: {#fig:KEY}, {#table:KEY}, {#eq:KEY}; and what looks like one (a typo must not pass).
LABEL_RE = re.compile(r"\{\s*#(?P<kind>fig|table|eq):(?P<key>" + KEY + r")\s*\}")
# Anything of the shape {#word:...}: a label of a kind the grammar does not know ({#Fig:x},
# {#figure:x}, {#tab:x}) must fail, not become an HTML id that nothing refers to.
LABEL_LIKE_RE = re.compile(r"\{\s*:?\s*#\s*[A-Za-z]+\s*:[^}\n]*\}?")
# How a label's or reference's kind is misspelt, and the kind meant.
KIND_ALIASES = {"fig": "fig", "figure": "fig", "img": "fig", "image": "fig", "tab": "table", "tbl": "table",
                "table": "table", "eq": "eq", "eqn": "eq", "equation": "eq", "math": "eq"}
#: The largest width and precision a value's format spec may ask for.
MAX_FORMAT_WIDTH = 40
MAX_FORMAT_PRECISION = 30
# Python's format spec: [[fill]align][sign][z][#][0][width][grouping][.precision][type] (no type c: a
# number shown as the character of that code is never what a reader should read)
#: A value's format: Python's, less what writes a number as another number in prose: the types
#: b, o, x, X, c and n (100 at "x" read "64"), and a digit as the fill (0.004 at "1>5.2f" read
#: "10.00"): pass thirty-five.
FORMAT_SPEC_RE = re.compile(r"(?:(?P<fill>[^1-9\n])?(?P<align>[<>=^]))?(?P<sign>[-+ ])?z?#?0?(?P<width>\d+)?[,_]?"
                            r"(?:\.(?P<precision>\d+))?[deEfFgGs%]?", re.S)
EQ_LABEL_RE = re.compile(r"\\\](?P<label>\{\s*#eq:(?P<key>" + KEY + r")\s*\})")


class DirectiveError(ValueError):
    """A directive the grammar cannot read; the message names the page and line."""


@dataclass(frozen=True)
class Directive:
    keyword: str  # figure, table, value, explorer, gallery, download, ref, eq (a display equation's label)
    start: int
    end: int
    line: int
    raw: str
    name: str = ""  # the figure or table script
    query: str = ""
    args: tuple = ()  # further positional arguments (value: path, format)
    options: dict = field(default_factory=dict, compare=False, hash=False)
    alt: str = ""  # figure only
    caption: str = ""  # figure only
    prefix: str = ""  # figure only: the "../" the page wrote before figures/
    key: str = ""  # its label ({#fig:KEY} after a figure, ...), or the key a ref names
    # the {{ value }}s inside a table's or an explorer's alt and caption options: option -> directives,
    # their offsets in that option's text, their line the block directive's (see PROSE_OPTIONS)
    inner: dict = field(default_factory=dict, compare=False, hash=False)


def _mask(text: str) -> str:
    """``text`` with inline code blanked out (same length, same lines).

    Inline code is how a page shows the syntax itself (`` `{{ table NAME }}` ``). Fenced
    code blocks and math are scanned: a listing may show a computed value (an error
    message), and a formula may hold one (``\\(T = {{ value ... }}\\)``). Math that
    happens to contain ``{{x}}`` fails loudly as an unknown directive: write ``{ {x} }``.
    """
    out = list(text)
    for m in re.finditer(r"(`+)[^`\n].*?\1", text):
        for i in range(m.start(), m.end()):
            if out[i] != "\n":
                out[i] = " "
    return "".join(out)


#: The line after the caption paragraph hooks/numbering.py writes before a table.
_TABLE_CAPTION_MARK = re.compile(r"^[ \t]*\{: \.mha-table-caption \}[ \t]*$", re.M)


def on_source_lines(found: list, text: str, source: str | None) -> list:
    """The directives ``found`` in ``text`` (a page as earlier hooks left it: table captions and
    equation markers add lines, a reference's "Used on" list, the home page's reading order)
    with the line each stands on in ``source``, the page's own file, where an author looks (a
    message named line 188 for a directive on line 164: pass sixty-three). The k-th directive
    with a given text is the k-th in the source, not counting the copies in the caption
    paragraphs numbering writes before a table (a value in a table's caption: pass sixty-four),
    which stand on their table's line; one the source does not hold keeps its line."""
    if not source:
        return list(found)
    captions = []  # (start, end) of each caption paragraph numbering wrote, and its table's start
    for mark in _TABLE_CAPTION_MARK.finditer(text):
        start = max(text.rfind("\n\n", 0, mark.start()) + 2, 0)
        captions.append((start, mark.end()))

    def copies_before(raw: str, end: int) -> int:
        return sum(text.count(raw, a, min(b, end)) for a, b in captions if a < end)

    def line_in_source(raw: str, at: int) -> int | None:
        pos = -1
        for _ in range(text.count(raw, 0, at) - copies_before(raw, at) + 1):
            pos = source.find(raw, pos + 1)
            if pos < 0:
                return None
        return source.count("\n", 0, pos) + 1

    out = []
    for d in found:
        caption = next(((a, b) for a, b in captions if a <= d.start < b), None)
        if caption:  # on its table's line: the first directive after the caption paragraph
            table = text.find("{{", caption[1])
            line = line_in_source(text[table:text.find("}}", table) + 2], table) if table >= 0 else None
        else:
            line = line_in_source(d.raw, d.start)
        out.append(replace(d, line=line) if line else d)
    return out


def parse(text: str, *, where: str = "page") -> list[Directive]:
    """Every directive in ``text``, in order; :class:`DirectiveError` for anything malformed."""
    masked = _mask(text)
    found: list[Directive] = []

    def line_of(i: int) -> int:
        return text.count("\n", 0, i) + 1

    for m in FIGURE_RE.finditer(masked):
        m = FIGURE_RE.match(text, m.start())  # read alt/caption from the original text
        line_start, line_end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
        rest = text[m.end(): line_end if line_end >= 0 else None]
        # (a label-like rest, {#Fig:x} or { #fig:x}, is the label checks' to name)
        if text[line_start:m.start()].strip() or (rest.strip() and not re.fullmatch(r"\s*\{[^}\n]*\}?\s*", rest)):
            raise DirectiveError(f"{where}:{line_of(m.start())}: a figure must stand on a line of its own (in "
                                 "running text, a table cell, a link or a list item it would break the page "
                                 f"around it): {text[line_start: line_end if line_end >= 0 else None].strip()!r}")
        found.append(Directive("figure", m.start(), m.end(), line_of(m.start()), m.group(0),
                               name=m["name"], query=m["query"] or "", alt=m["alt"].strip(),
                               caption=caption_text(m["caption"] or "", markdown=False), prefix=m["prefix"] or "",
                               key=m["key"] or ""))
    leftover = FIGURE_RE.sub(lambda m: " " * len(m.group(0)), masked)
    bad = FIGURE_LIKE_RE.search(leftover)
    if bad:
        raise DirectiveError(f"{where}:{line_of(bad.start())}: figure reference not understood: "
                             f"{text[bad.start():bad.end()]!r} (write ![alt](figures/NAME.svg?p=v \"caption\"); "
                             "the alt text may not contain brackets)")
    for m in BRACES_RE.finditer(masked):
        body = text[m.start("body"):m.end("body")]
        if not re.match(r"\s*[A-Za-z_]", body):
            continue  # not directive-shaped
        if m.start() > 0 and text[m.start() - 1] == "{":
            raise DirectiveError(f"{where}:{line_of(m.start())}: a stray '{{' before {m.group(0)!r} (a directive "
                                 "starts with two braces; the third would show on the page; in a formula, write a space between: "
                                 "\\text{ {{ value ... }} })")
        if text[m.end():m.end() + 1] == "}":
            raise DirectiveError(f"{where}:{line_of(m.start())}: a stray '}}' after {m.group(0)!r} (a directive "
                                 "ends with two braces; the third would show on the page; in a formula, write a space between: "
                                 "\\text{ {{ value ... }} })")
        found.append(_directive(text, m, body, line_of(m.start()), where))
    covered = masked
    for d in found:
        covered = covered[: d.start] + " " * (d.end - d.start) + covered[d.end:]
    for m in EQ_LABEL_RE.finditer(covered):
        found.append(Directive("eq", m.start("label"), m.end("label"), line_of(m.start()),
                               text[m.start("label"):m.end("label")], key=m["key"]))
        covered = covered[: m.start("label")] + " " * (m.end("label") - m.start("label")) + covered[m.end("label"):]
    label = LABEL_LIKE_RE.search(covered)
    if label:
        raise DirectiveError(f"{where}:{line_of(label.start())}: label not understood: {label.group(0)!r}"
                             f"{_label_hint(label.group(0))} (a label goes right after what it names, with no space: "
                             "![alt](figures/NAME.svg \"caption\"){#fig:KEY}, {{ table NAME }}{#table:KEY}, "
                             "{{ explorer NAME ... }}{#fig:KEY}, or a display equation's \\]{#eq:KEY}; "
                             "a key is letters, digits, _ and -)")
    stray = OPENING_RE.search(covered)
    if stray:
        line_end = text.find("\n", stray.start())
        snippet = text[stray.start(): line_end if line_end >= 0 else None]
        raise DirectiveError(f"{where}:{line_of(stray.start())}: directive not closed: {snippet!r} "
                             "(a directive is {{ KEYWORD ... }} on one line)")
    return sorted(found, key=lambda d: d.start)


def _directive(text: str, m, body: str, line: int, where: str) -> Directive:
    here = f"{where}:{line}"
    try:
        words = shlex.split(body)
    except ValueError as exc:
        raise DirectiveError(f"{here}: cannot read {m.group(0)!r}: {exc}") from None
    keyword, rest = words[0], words[1:]
    if keyword not in BLOCK and keyword not in INLINE:
        close = difflib.get_close_matches(keyword, [*BLOCK, *INLINE], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise DirectiveError(f"{here}: unknown directive {keyword!r} in {m.group(0)!r}{hint}; "
                             f"known: {', '.join(sorted([*BLOCK, *INLINE]))}")
    # an option is name=value; a word such as =+8.2f or 0=8.2f is a format spec ('=' aligns after the sign)
    positional = [w for w in rest if not re.match(r"[A-Za-z_]\w*=", w) or TARGET_RE.match(w)]
    options = {}
    for w in rest:
        if w in positional:
            continue
        key, _, value = w.partition("=")
        allowed = OPTIONS.get(keyword, set())
        if key not in allowed:
            raise DirectiveError(f"{here}: {keyword} takes no option {key!r} in {m.group(0)!r}; "
                                 f"allowed: {', '.join(sorted(allowed)) or 'none'}")
        if key in options:
            raise DirectiveError(f"{here}: option {key!r} is given twice in {m.group(0)!r}")
        options[key] = caption_text(value, markdown=keyword == "table") if key == "caption" else value
    inner = {k: _inner(options[k], k, m.group(0), line, where) for k in PROSE_OPTIONS if k in options}
    key, end = "", m.end()
    if keyword in BLOCK:
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end < 0 else line_end
        after = text[m.end():line_end]
        label = LABEL_RE.match(after)
        if label and keyword in LABEL_KIND and label["kind"] == LABEL_KIND[keyword] and not after[label.end():].strip():
            key, end = label["key"], m.end() + label.end()
        elif label or LABEL_LIKE_RE.match(after.lstrip()):
            raise DirectiveError(f"{here}: {after.strip()!r} after {m.group(0)!r} is not a label it takes"
                                 + _label_hint(after.strip())
                                 + (f" (write {{#{LABEL_KIND[keyword]}:KEY}} right after the }}}}, no space)"
                                    if keyword in LABEL_KIND else f" (a {keyword} takes no label)"))
        if text[line_start:m.start()].strip() or (after.strip() and not key):
            raise DirectiveError(f"{here}: {{{{ {keyword} }}}} must stand on a line of its own: {m.group(0)!r}")
        want = (BLOCK[keyword], BLOCK[keyword])
    else:
        want = INLINE[keyword]
    if not want[0] <= len(positional) <= want[1]:
        spaced = any(a == "=" or a.endswith("=") or a.startswith("=") for a in positional)
        raise DirectiveError(f"{here}: {keyword} takes {want[0]}" + (f"–{want[1]}" if want[1] != want[0] else "")
                             + f" arguments, got {len(positional)} in {m.group(0)!r}"
                             + (" (an option is written with no space around its '=': round=up)" if spaced else ""))
    name = query = ""
    args = tuple(positional)
    if keyword == "ref":
        ref = REF_RE.match(positional[0])
        if not ref or ref["kind"] not in REF_KINDS:
            raise DirectiveError(f"{here}: {positional[0]!r} is not a reference in {m.group(0)!r}"
                                 f"{_ref_hint(positional[0])}; write "
                                 "{{ ref fig:KEY }}, {{ ref table:KEY }} or {{ ref eq:KEY }} "
                                 "(a key is letters, digits, _ and -)")
        return Directive(keyword, m.start(), m.end(), line, m.group(0), args=(ref["kind"], ref["key"]), key=ref["key"])
    if positional and keyword != "gallery":
        target = TARGET_RE.match(positional[0])
        if not target:
            raise DirectiveError(f"{here}: {positional[0]!r} is not a figure name (letters, digits, _) "
                                 f"with optional ?name=value parameters, in {m.group(0)!r}")
        name, query, args = target["name"], target["query"] or "", tuple(positional[1:])
    if keyword == "value" and len(args) > 1:
        _check_format(args[1], f"{here}: {m.group(0)!r}")
    if keyword == "value" and "round" in options and (options["round"] not in VALUE_ROUND or (
            options["round"] != "nearest" and (len(args) < 2 or args[1][-1:] not in tuple("eEfF%")))):
        raise DirectiveError(f"{here}: round={options['round']!r} in {m.group(0)!r}: a bound rounds "
                             "up or down, with a format spec that gives a fixed number of digits (f, e or %); "
                             "round=nearest states the value to its digits (an end of a change, from before to after)")
    if keyword == "value" and options.get("allow", VALUE_ALLOW[0]) not in VALUE_ALLOW:
        raise DirectiveError(f"{here}: allow={options['allow']!r} in {m.group(0)!r}: a value may allow "
                             f"{', '.join(VALUE_ALLOW)} only (a NaN or a missing value is never published)")
    return Directive(keyword, m.start(), end, line, text[m.start():end], name=name, query=query, args=args,
                     options=options, key=key, inner={k: v for k, v in inner.items() if v})


#: The options whose text a reader reads (an explorer's ``alt`` and ``caption``, a table's
#: ``caption``): like a figure's alt text and caption they may hold ``{{ value }}``s, so that a
#: number there comes from data() as it does in prose. The block directive reads them
#: (:attr:`Directive.inner`); the rest of the page's grammar never sees them, as the whole
#: ``{{ explorer ... }}`` is one directive.
PROSE_OPTIONS = ("alt", "caption")


def _inner(text: str, option: str, raw: str, line: int, where: str) -> tuple:
    """The ``{{ value }}``s of the option ``option``'s ``text`` (of the block directive ``raw``
    on ``line``); anything else there that looks like a directive is refused."""
    if "{{" not in text:
        return ()
    try:
        found = parse(text, where=where)
    except DirectiveError as exc:
        reason = str(exc).removeprefix(f"{where}:1: ")
        raise DirectiveError(f"{where}:{line}: in the {option} of {raw!r}: {reason}") from None
    for x in found:
        if x.keyword != "value":
            raise DirectiveError(f"{where}:{line}: {x.raw!r} in the {option} of {raw!r}: an alt text or a caption "
                                 "may hold {{ value }}s only (write a reference or a download in the prose around it)")
    return tuple(Directive(x.keyword, x.start, x.end, line, x.raw, name=x.name, query=x.query, args=x.args,
                           options=x.options) for x in found)


def _kind_meant(kind: str) -> str | None:
    """The kind (fig, table, eq) a misspelt one means: ``Fig``, ``figure``, ``tab``, ``tbl``, ..."""
    kind = kind.lower()
    if kind in KIND_ALIASES:
        return KIND_ALIASES[kind]
    close = difflib.get_close_matches(kind, list(KIND_ALIASES), n=1, cutoff=0.6)
    return KIND_ALIASES[close[0]] if close else None


def _label_hint(text: str) -> str:
    """``; did you mean {#fig:KEY}?`` for a label whose kind is misspelt (``{#Fig:small}``)."""
    m = re.match(r"\{\s*#\s*([A-Za-z]+)\s*:\s*([^}\s]*)", text)
    if not m:
        return ""
    meant = _kind_meant(m.group(1))
    if meant is None:
        return f"; a label's kind is one of {', '.join(REF_KINDS)} (lower case)"
    if meant == m.group(1):
        return ""  # the kind is right: the label is misplaced (the message says where it goes)
    return f"; did you mean {{#{meant}:{m.group(2)}}}?" if re.fullmatch(KEY, m.group(2)) else \
        f"; a label is {{#{meant}:KEY}}"


def _ref_hint(text: str) -> str:
    m = re.fullmatch(r"([A-Za-z]+)\s*:\s*(.*)", text)
    meant = _kind_meant(m.group(1)) if m else None
    if meant is None or not re.fullmatch(KEY, m.group(2)):
        return ""
    return f" (did you mean {{{{ ref {meant}:{m.group(2)} }}}}?)"


def _check_format(spec: str, where: str) -> None:
    """A value's format spec: Python's, with a bounded width and precision (a spec such as
    ``999999999.2f`` would build a string of a gigabyte before anything could refuse it)."""
    if spec.endswith("n"):
        raise DirectiveError(f"{where}: the format spec {spec!r} writes the number in the build machine's "
                             "locale (its separators depend on where the site is built); use ',' or 'd' for "
                             "grouped digits, or 'g'")
    if spec[-1:] in ("b", "o", "x", "X", "c"):
        raise DirectiveError(f"{where}: the format spec {spec!r} writes the number in base 2, 8 or 16 or as a "
                             "character, which prose reads as another number (100 at 'x' is 64); use d, f, e, g or %")
    # padding: spaces, or zeros on the left (which change nothing); anything else reads as part of
    # the number: a digit, a sign or a dash of any kind (0.004 at '1>5.2f' is 10.00, 0.14 at
    # '->8.2f' or '–>6.2f' reads as a minus: passes thirty-five and sixty-three), and zeros on the
    # right (5 at '<05d' is 50000: the 0 flag pads with zeros whatever the alignment)
    if "#" in spec:
        raise DirectiveError(f"{where}: the format spec {spec!r} asks for Python's alternate form ('#'), which "
                             "writes a point after every number ('5.' for 5 at '#.0f', '5.e-01', '56.%'): prose reads "
                             "such a point as the sentence's, and the check of a bound as another number; leave it out")
    if re.match(r"(?:[^0]?=)", spec, re.S):  # (zeros there are leading zeros: '0=8.2f' is the 0 flag)
        raise DirectiveError(f"{where}: the format spec {spec!r} pads between a number's sign and its digits with "
                             "spaces ('=' alignment: -5.382 at '=+9.1f' is '-     5.4', which a page shows as '- 5.4', "
                             "a dash or a minus); align with '>', pad with zeros ('0=9.1f') or not at all")
    if "_" in spec:
        raise DirectiveError(f"{where}: the format spec {spec!r} groups digits with '_', which prose does not read "
                             "as a separator (1234.567 at '_.2f' is 1_234.57); use ','")
    explicit = re.match(r"(?P<fill>.)(?P<align>[<>=^])", spec, re.S)
    zero = re.match(r"(?:.?[<>=^])?[-+ ]?z?#?0", spec, re.S)  # the 0 flag: zeros as the fill
    align = explicit["align"] if explicit else spec[:1] if spec[:1] in "<>=^" else ""
    fill = explicit["fill"] if explicit else "0" if zero and align else " "
    if fill == "0" and align == ">":  # ('0>6.2f', and the 0 flag with '>': '>06.2f', pass ninety-three)
        raise DirectiveError(f"{where}: the format spec {spec!r} pads with zeros before a number's sign (−0.57 at "
                             "'0>6.2f' is '0-0.57', +0.57 at '0>+6.2f' '0+0.57'); pad with the 0 flag ('06.2f'), "
                             "which puts them after it, or with spaces")
    if fill not in (" ", "\u00a0", "0") or (fill == "0" and align in ("<", "^")):
        raise DirectiveError(f"{where}: the format spec {spec!r} pads with {fill!r}"
                             f"{' on the right' if fill == '0' and align in ('<', '^') else ''}, which reads as part "
                             "of the number (5 at '<05d' is 50000, 0.004 at '1>5.2f' is 10.00, 0.14 at '->8.2f' is "
                             "----0.14, a minus); pad with a space or not at all")
    m = FORMAT_SPEC_RE.fullmatch(spec)
    if not m:
        raise DirectiveError(f"{where}: {spec!r} is not a format spec (Python's: .2f, ',', .1%, .3g, ...)")
    for part, limit in (("width", MAX_FORMAT_WIDTH), ("precision", MAX_FORMAT_PRECISION)):
        if m[part] is not None and int(m[part]) > limit:
            raise DirectiveError(f"{where}: the format spec {spec!r} asks for a {part} of {int(m[part])}; "
                                 f"at most {limit} (a value is a few characters of prose)")


#: What a table's caption keeps as written: code spans (Markdown escapes them), math
#: (arithmatex escapes it: ``\(j < i\)`` must reach KaTeX as written) and directives (filled
#: in later). A figure's caption keeps only its directives (see :func:`caption_text`).
_CAPTION_KEEP = re.compile(r"(`+)[^`].*?\1|\\\(.*?\\\)|\\\[.*?\\\]|\$\$.+?\$\$|\$[^$\s][^$]*?\$|\{\{.*?\}\}", re.S)
_DIRECTIVE_KEEP = re.compile(r"\{\{.*?\}\}", re.S)


def caption_text(text: str, *, markdown: bool = True) -> str:
    """A caption as it goes into the page, showing the text as written: ``<``, ``>`` and ``&``
    escaped, so ``keys j<i only`` does not open an ``<i>`` tag that swallows the rest.

    A table's caption (``markdown=True``) becomes a Markdown paragraph: emphasis, code and math
    work as in prose, and code spans and math are left to Markdown and arithmatex, which escape
    them themselves. A figure's or an explorer's caption (``markdown=False``) stands inside the
    figure's HTML, which Markdown reads as HTML and does not convert: it is text, escaped
    throughout (in TeX, write ``\\lt``), and its inline math is typeset by :func:`math_spans`."""
    keep = _CAPTION_KEEP if markdown else _DIRECTIVE_KEEP
    out, pos = [], 0
    for m in keep.finditer(text):
        out += [html.escape(text[pos:m.start()], quote=False), m.group(0)]
        pos = m.end()
    out.append(html.escape(text[pos:], quote=False))
    return "".join(out)


#: Inline math as a page writes it, ``\\( ... \\)`` on one line.
INLINE_MATH_RE = re.compile(r"\\\(.+?\\\)")


def math_spans(text: str) -> str:
    """``text`` (HTML) with each inline formula wrapped as arithmatex wraps the prose's, so the
    build typesets it (hooks/site_math.py): for text that reaches the page as HTML without
    passing through Markdown (a figure's caption, a navigation entry)."""
    return INLINE_MATH_RE.sub(lambda m: f'<span class="arithmatex">{m.group(0)}</span>', text)


def substitute(text: str, directives, replace) -> str:
    """``text`` with each directive's span replaced by ``replace(directive)``."""
    out, pos = [], 0
    for d in sorted(directives, key=lambda d: d.start):
        out.append(text[pos:d.start])
        out.append(replace(d))
        pos = d.end
    out.append(text[pos:])
    return "".join(out)
