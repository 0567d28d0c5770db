"""Numbering figures, tables and equations on a page, with no MkDocs in it: plain functions of
text that :mod:`site_numbering` (the MkDocs adapter) calls.

:func:`plan_page` reads a page's Markdown (its directives, :mod:`directives`) and returns the
:class:`Plan` of what to number with the Markdown it needs; :func:`number` numbers the page's
HTML by that plan. Both raise :class:`NumberingError` naming the page, the line and the
directive; the adapter turns it into MkDocs' build error. What the numbering does for a reader
is in :mod:`site_numbering`'s docstring.
"""
from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

import directives


class NumberingError(ValueError):
    """A page the numbering cannot number: the message names the page, the line and the directive."""


REF_OPEN, REF_CLOSE = "\ue000", "\ue001"  # private-use characters: Markdown leaves them alone
REF_PLACEHOLDER = re.compile(REF_OPEN + r"(\d+)" + REF_CLOSE)
EQ_MARK = re.compile(r"(?:<p>\s*)?<!-- mha-eq:(" + directives.KEY + r") -->(?:\s*</p>)?")
WORD = {"fig": "Figure", "table": "Table", "eq": "Equation"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Item:
    """One numbered thing a directive asked for: a figure, an explorer or a table."""

    kind: str  # "fig" or "table"
    key: str
    explicit: bool  # the page labelled it ({#fig:KEY}); else the key is the script's name
    line: int
    raw: str
    source: str  # "figure", "explorer" or "table"
    number: int = 0
    id: str = ""


@dataclass
class Plan:
    """What :func:`plan_page` learnt about one page (and :func:`number` numbers by)."""

    items: list = field(default_factory=list)
    refs: list = field(default_factory=list)  # Directive, in placeholder order
    eq_labels: dict = field(default_factory=dict)  # key -> Directive


# ---- Markdown: record, label, placeholders --------------------------------------------------------

def _md_text(text: str) -> str:
    """``text`` as Markdown that shows it as written."""
    return re.sub(r"([\\`*_{}\[\]#<>])", r"\\\1", text)


def plan_page(markdown: str, found: list, where: str, titles: dict) -> tuple[str, Plan]:
    """What a page's Markdown asks to number (its :class:`Plan`), and the Markdown with a caption
    paragraph before each table, each equation label turned into a marker after its equation
    and each reference into a placeholder. ``found`` is the page's directives
    (:func:`directives.parse`), ``titles`` each script's title (a table's default caption)."""
    plan = Plan()
    edits = []  # (start, end, replacement)
    holders = [d for d in found if d.keyword in ("figure", "explorer")]
    for d in found:
        here = f"{where}:{d.line}: {d.raw}"
        if d.keyword in ("figure", "explorer"):
            plan.items.append(Item("fig", d.key or d.name, bool(d.key), d.line, d.raw, d.keyword))
        elif d.keyword == "table":
            plan.items.append(Item("table", d.key or d.name, bool(d.key), d.line, d.raw, "table"))
            line_start = markdown.rfind("\n", 0, d.start) + 1
            indent = markdown[line_start:d.start]
            caption = d.options.get("caption") or _md_text(titles.get(d.name, d.name))
            before = markdown[markdown.rfind("\n", 0, max(line_start - 1, 0)) + 1:max(line_start - 1, 0)]
            edits.append((line_start, line_start, ("\n" if before.strip() else "")
                          + f"{indent}{caption}\n{indent}{{: .mha-table-caption }}\n\n"))
        elif d.keyword == "eq":
            if d.key in plan.eq_labels:
                first = plan.eq_labels[d.key]
                raise NumberingError(f"{here}: the label eq:{d.key} is already used on line {first.line}")
            plan.eq_labels[d.key] = d
            line_start = markdown.rfind("\n", 0, d.start) + 1
            indent = re.match(r"[ \t]*", markdown[line_start:]).group(0)
            line_end = markdown.find("\n", d.end)
            line_end = len(markdown) if line_end < 0 else line_end
            edits.append((d.start, d.end, ""))
            edits.append((line_end, line_end, f"\n\n{indent}<!-- mha-eq:{d.key} -->\n"))
        elif d.keyword == "ref":
            inside = next((h for h in holders if h.start <= d.start < h.end), None)
            if inside is not None:
                raise NumberingError(f"{here}: a reference cannot stand in a figure's caption or alt text "
                                  f"(line {inside.line}; the gallery shows captions on another page): "
                                  "write it in the prose around the figure")
            line_start = markdown.rfind("\n", 0, d.start) + 1
            if re.match(r" {0,3}#", markdown[line_start:d.start]):
                raise NumberingError(f"{here}: a reference cannot stand in a heading (the table of contents "
                                  "shows headings elsewhere)")
            edits.append((d.start, d.end, f"{REF_OPEN}{len(plan.refs)}{REF_CLOSE}"))
            plan.refs.append(d)
    _check_keys(plan, where)
    out, pos = [], 0
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1])):
        out += [markdown[pos:start], text]
        pos = end
    out.append(markdown[pos:])
    return "".join(out), plan


def _check_keys(plan: Plan, where: str) -> None:
    """Two labels with one key are an error; ids are ``fig-KEY`` (``-2``, ``-3`` for a script
    shown again without a label of its own)."""
    for kind in ("fig", "table"):
        items = [i for i in plan.items if i.kind == kind]
        for item in items:
            if item.explicit:
                clash = next((o for o in items if o is not item and o.key == item.key), None)
                if clash is not None:
                    raise NumberingError(f"{where}:{item.line}: {item.raw}: the key {kind}:{item.key} is also "
                                      f"{'the label' if clash.explicit else 'the script name'} of line "
                                      f"{clash.line}: {clash.raw}; a key names one thing on a page")
        taken: set = set()
        for item in items:
            base = f"{kind}-{item.key}"
            item.id, n = base, 1
            while item.id in taken:
                n += 1
                item.id = f"{base}-{n}"
            taken.add(item.id)


# ---- HTML: where things are ------------------------------------------------------------------------

#: What an explorer's number line says it does, by widget (``data-explorer``); None: the others.
INTERACTIVE = {None: "the controls redraw it.", "generator": "the tiny model runs in your browser.",
               "bert_live": "all-MiniLM-L6-v2 runs in your browser, on your sentence."}


@dataclass(eq=False)  # compared by identity: `node in parents`
class Node:
    tag: str
    attrs: dict
    start: int  # where the start tag begins
    open_end: int  # where it ends
    parents: tuple  # the enclosing Nodes, outermost first
    end: int = -1  # where the end tag ends (-1: void or never closed)
    close_start: int = -1  # where the end tag begins

    @property
    def classes(self) -> list:
        return (self.attrs.get("class") or "").split()

    def inside(self, cls: str) -> bool:
        return any(cls in p.classes for p in self.parents)


class _Scan(HTMLParser):
    """Every element of a fragment with its offsets; comments with theirs."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.html = html
        self.lines = [0] + [m.end() for m in re.finditer("\n", html)]
        self.nodes: list[Node] = []
        self.comments: list = []  # (start, end, text)
        self.stack: list[Node] = []
        self.feed(html)
        self.close()

    def _pos(self) -> int:
        line, col = self.getpos()
        return self.lines[line - 1] + col

    def handle_starttag(self, tag, attrs):
        start = self._pos()
        node = Node(tag, dict(attrs), start, start + len(self.get_starttag_text()), tuple(self.stack))
        self.nodes.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        start = self._pos()
        self.nodes.append(Node(tag, dict(attrs), start, start + len(self.get_starttag_text()), tuple(self.stack)))

    def handle_endtag(self, tag):
        start = self._pos()
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i].tag == tag:
                node = self.stack[i]
                node.close_start, node.end = start, self.html.index(">", start) + 1
                del self.stack[i:]
                return

    def handle_comment(self, data):
        start = self._pos()
        self.comments.append((start, start + len(data) + 7, data))


def _within(node: Node, outer: Node) -> bool:
    return any(p is outer for p in node.parents)


# ---- HTML: numbers, ids, zoom ------------------------------------------------------------------------

def number(html: str, plan: Plan, where: str) -> str:
    """``html`` with its figures, tables and equations numbered and its references filled in."""
    if not (plan.items or plan.refs or plan.eq_labels or "mha-figure" in html
            or re.search(r'<div class="[^"]*\barithmatex\b', html)):
        return html  # nothing to number (a notebook's page: a megabyte not worth parsing)
    scan = _Scan(html)
    edits: list = []  # (position, order, delete_to, text): insertions and replacements
    existing = set(re.findall(r'\sid="([^"]+)"', html))
    targets: dict = {}  # (kind, key) -> [(number, id, item or label)]

    # Figures, in reading order; an explorer's static figure stands for the explorer.
    figures = [n for n in scan.nodes if n.tag == "figure" and "mha-figure" in n.classes]
    # Numbers pair the HTML's figures and tables with the Markdown's directives, in order; the
    # footnotes extension moves a footnote's content to the end of the page, out of that order
    # (a figure in a footnote took the number, id and references of the next one in the text).
    moved = [n for n in scan.nodes if n.inside("footnote") and (
        (n.tag == "figure" and "mha-figure" in n.classes) or (n.tag == "p" and "mha-table-caption" in n.classes))]
    if moved:
        what = "figure" if moved[0].tag == "figure" else "table"
        raise NumberingError(f"{where}: a {what} inside a footnote: footnotes move to the end of the page, so its number "
                             "and every reference to it would not follow the text; put it in the text and refer to "
                             "it from the footnote")
    numbered = [n for n in figures if not n.inside("mha-gallery-item")]
    fig_items = [i for i in plan.items if i.kind == "fig"]
    if len(numbered) != len(fig_items):
        raise NumberingError(f"{where}: {len(fig_items)} figure and explorer directives but {len(numbered)} figures "
                          "in the page's HTML (a figure inside a code block or in raw HTML without markdown=\"1\"?); "
                          "hooks/site_numbering.py cannot tell which number goes where")
    explorers = iter([n for n in scan.nodes if n.tag == "div" and "mha-explorer" in n.classes])
    for number_, (node, item) in enumerate(zip(numbered, fig_items), start=1):
        item.number = number_
        label = f'<strong class="mha-num">Figure {number_}.</strong>'
        static = next((p for p in reversed(node.parents) if "mha-explorer-static" in p.classes), None)
        if (item.source == "explorer") != (static is not None):
            raise NumberingError(f"{where}:{item.line}: {item.raw}: figure {number_} of the HTML is "
                              f"{'not ' if static is None else ''}an explorer's static figure")
        if static is not None:
            edits.append((static.start, 0, static.start, f'<span class="mha-anchor" id="{item.id}"></span>'))
            widget = next(explorers, None)
            ui = widget and next((n for n in scan.nodes if n.tag == "div" and "mha-explorer-ui" in n.classes
                                  and _within(n, widget)), None)
            if ui is None:
                raise NumberingError(f"{where}:{item.line}: {item.raw}: no explorer widget after its static figure")
            what = INTERACTIVE.get(widget.attrs.get("data-explorer"), INTERACTIVE[None])
            edits.append((ui.open_end, 0, ui.open_end, f'<p class="mha-explorer-num">{label} Interactive: {what}</p>'))
        else:
            edits.append((node.start + len("<figure"), 0, node.start + len("<figure"), f' id="{item.id}"'))
        _caption(scan, node, label, edits)
        targets.setdefault(("fig", item.key), []).append((number_, item.id, item))
    for node in figures:
        _zoom(scan, node, edits)

    # Tables: the caption paragraph on_page_markdown wrote goes into the table that follows it.
    captions = [n for n in scan.nodes if n.tag == "p" and "mha-table-caption" in n.classes]
    table_items = [i for i in plan.items if i.kind == "table"]
    if len(captions) != len(table_items):
        raise NumberingError(f"{where}: {len(table_items)} table directives but {len(captions)} table captions in "
                          "the page's HTML; hooks/site_numbering.py cannot tell which number goes where")
    tables = [n for n in scan.nodes if n.tag == "table"]
    for number_, (cap, item) in enumerate(zip(captions, table_items), start=1):
        item.number = number_
        table = next((t for t in tables if t.start >= cap.end), None)
        after = [c for c in captions if cap.end <= c.start < (table.start if table else len(html))]
        if table is None or after:
            raise NumberingError(f"{where}:{item.line}: {item.raw}: no table follows its caption in the HTML")
        inner = html[cap.open_end:cap.close_start].strip()
        edits.append((cap.start, 0, cap.end, ""))
        edits.append((table.start + len("<table"), 0, table.start + len("<table"), f' id="{item.id}"'))
        edits.append((table.open_end, 0, table.open_end,
                      f'\n<caption><strong class="mha-num">Table {number_}.</strong> {inner}</caption>'))
        targets.setdefault(("table", item.key), []).append((number_, item.id, item))

    # Display equations: every div.arithmatex, numbered; a label comment names the one before it.
    equations = [n for n in scan.nodes if n.tag == "div" and "arithmatex" in n.classes
                 and not any("arithmatex" in p.classes for p in n.parents)]
    labels = {}
    for start, end, text in scan.comments:
        mark = re.fullmatch(r" mha-eq:(" + directives.KEY + r") ", text)
        if not mark:
            continue
        label = plan.eq_labels.get(mark[1])
        before = [e for e in equations if 0 <= e.end <= start]
        if label is None or not before or html[before[-1].end:start].strip() not in ("", "<p>"):
            d = label
            raise NumberingError(f"{where}:{d.line if d else '?'}: {d.raw if d else mark[0]}: the label is not "
                              "right after a display equation (\\[ ... \\]{#eq:KEY}, the equation a block of its own)")
        labels[before[-1].start] = mark[1]
        block = EQ_MARK.match(html, html.rfind("<p>", 0, start) if html[before[-1].end:start].strip() else start)
        edits.append((block.start(), 0, block.end(), ""))
    for key, d in plan.eq_labels.items():
        if key not in labels.values():
            raise NumberingError(f"{where}:{d.line}: {d.raw}: the label is not right after a display equation")
    for number_, eq in enumerate(equations, start=1):
        key = labels.get(eq.start)
        ident = f' id="eq-{key}"' if key else ""
        edits.append((eq.start, 1, eq.start, f'<div class="mha-eq"{ident}>'))
        edits.append((eq.end, -1, eq.end, f'<span class="mha-eq-num">({number_})</span></div>'))
        if key:
            targets[("eq", key)] = [(number_, f"eq-{key}", plan.eq_labels[key])]

    for kind_key, found in targets.items():
        for _, ident, _ in found:
            if ident in existing:
                raise NumberingError(f"{where}: the id {ident!r} for {kind_key[0]}:{kind_key[1]} is already an id "
                                  "on the page (a heading's?); give the figure, table or equation a label")

    html = _apply(html, edits)
    return _fill_refs(html, plan, targets, where)


def _caption(scan: _Scan, figure: Node, label: str, edits: list) -> None:
    caption = next((n for n in scan.nodes if n.tag == "figcaption" and _within(n, figure)), None)
    if caption is not None:
        edits.append((caption.open_end, 0, caption.open_end, label + " "))
    else:
        edits.append((figure.close_start, 0, figure.close_start, f"<figcaption>{label}</figcaption>\n"))


def _zoom(scan: _Scan, figure: Node, edits: list) -> None:
    """Wrap the figure's images (every variant, up to its caption) in one link that zooms."""
    inner = [n for n in scan.nodes if _within(n, figure)]
    caption = next((n for n in inner if n.tag == "figcaption"), None)
    media = [n for n in inner if n.tag in ("img", "picture") and (caption is None or n.start < caption.start)
             and not any(p.tag == "picture" and _within(p, figure) for p in n.parents)]
    if not media or any(p.tag == "a" for p in figure.parents) or any(n.tag == "a" for n in inner
                                                                       if caption is None or n.start < caption.start):
        return
    first = next(n for n in scan.nodes if n.tag == "img" and (n is media[0] or _within(n, media[0])))
    src = (first.attrs.get("src") or "").split("#", 1)[0]
    last = media[-1].end if media[-1].tag == "picture" else media[-1].open_end
    edits.append((media[0].start, 2, media[0].start,
                  f'<a class="mha-zoom" href="{html_lib.escape(src, quote=True)}" title="Enlarge the figure">'))
    edits.append((last, -2, last, "</a>"))


def _apply(html: str, edits: list) -> str:
    """Apply ``(position, order, delete_to, text)`` edits: at one position, lower ``order``
    first (a closing tag before an opening one)."""
    out, pos = [], 0
    for at, _, to, text in sorted(edits, key=lambda e: (e[0], e[1])):
        if at < pos:
            raise NumberingError(f"hooks/numbering.py: overlapping edits at {at} (a bug)")
        out += [html[pos:at], text]
        pos = max(at, to)
    out.append(html[pos:])
    return "".join(out)


def _fill_refs(html: str, plan: Plan, targets: dict, where: str) -> str:
    seen = set()

    def fill(m: re.Match) -> str:
        d = plan.refs[int(m.group(1))]
        seen.add(int(m.group(1)))
        kind, key = d.args
        found = targets.get((kind, key), [])
        here = f"{where}:{d.line}: {d.raw}"
        if not found:
            known = sorted(k for (t, k) in targets if t == kind)
            raise NumberingError(f"{here}: this page has no {WORD[kind].lower()} with the key {key!r}; "
                              + (f"its {kind} keys: {', '.join(known)}" if known else f"it has no labelled {WORD[kind].lower()}")
                              + ("" if kind != "eq" else " (label one: \\[ ... \\]{#eq:KEY})"))
        if len(found) > 1:
            lines = ", ".join(str(t[2].line) for t in found)
            raise NumberingError(f"{here}: {kind}:{key} names {len(found)} {WORD[kind].lower()}s (lines {lines}); "
                              f"label the one you mean: {{#{kind}:KEY}} right after it")
        number_, ident, _ = found[0]
        text = f"Equation ({number_})" if kind == "eq" else f"{WORD[kind]} {number_}"
        tag_open = html.rfind("<", 0, m.start())
        if tag_open > html.rfind(">", 0, m.start()):  # inside a tag (an alt text, a title): words only
            return text
        return f'<a class="mha-ref" href="#{ident}">{text}</a>'

    html = REF_PLACEHOLDER.sub(fill, html)
    for i, d in enumerate(plan.refs):
        if i not in seen:
            raise NumberingError(f"{where}:{d.line}: {d.raw}: the reference did not reach the page's HTML "
                              "(inside an HTML comment or raw HTML?)")
    return html
