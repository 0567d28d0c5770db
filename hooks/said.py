"""What a reader reads as said of a value from outside its own stretch of text.

A value's stretch is its paragraph, table cell or list item: hooks/claims.py reads the words
there, in the page's source. A reader also reads a value under its section's heading, its
table's headers and its row's label, its box's title, the bold lead or the label line before
it, its list's lead, and the footnotes marked beside it. A rounded value under "Upper bound"
or "Exact" is a claim its rounding can make false (issue 25, passes 109 to 116, each of which
published one such place the build did not read). :class:`Context` follows the page as
hooks/seen.py's reader walks it and gathers, for each value, that text
(:meth:`Context.said_of`); hooks/seen.py holds it to no sign or word of a bound.

The places, and why each is read where it is:

- **Headings**: the nearest heading of each level above the value in its section, and the
  bold lead of its section (a paragraph that is all emphasis, "**Upper bound**"), among those
  in the boxes, list items and cells that hold the value (one tab's heading is not another
  tab's). Not the page's title (its first heading, where it is an ``h1``): "FlashAttention:
  exact attention" names a method, and it stands over every number of the page.
- **Run-in leads**: emphasis that opens the value's own stretch, with words between it and
  the value ("**Upper bound.** For MHA the loss is 0.56").
- **Boxes**: the titles of every box around it (an admonition's, a ``<details>``'s summary, a
  set of tabs' labels, a definition list's terms). A question box's title is a question about
  its answer, whose sentences say what they claim: read only where it is a label.
- **Tables**: the headers over its column (``colspan`` and ``rowspan`` counted), the caption,
  a section row above it (a row with one filled cell, "| **At most** | |"), and where they are
  labels, the other cells of its row and the cells over it in rows with no value (a header row
  written in the body).
- **Label lines**: the text right before its stretch (or its table) and right before each list
  it stands in, where that is a label: a short text with no sentence's end.
- **Footnotes**: the text of each footnote marked in its stretch or in any text read above,
  and for a value inside a footnote, the sentence of each marker that points to it.
- **Hover titles** (``title`` of a link, ``abbr``, ``span``) over any of these.

A *label* is at most :data:`LABEL_WORDS` words and not a question or a sentence (it does not
end in "?", and a label line not in "." or "!"). Over a value that a label leads to (at most
:data:`LEAD_WORDS` words before it in its stretch, or "label: value"), a longer text is read
as its label too: a row, a title, the sentence that leads into it with a colon. Over a value a
sentence leads to, a longer row or question is a sentence of its own: the site's quiz answers
and its table of corrections are sentences under questions and quotations full of "=" and
"more", which say what they claim of their own numbers.

Pages: every page with a value (README, "Write a page").
"""
from __future__ import annotations

import re

#: Where one stretch of text ends and the next starts in the reader's text (hooks/seen.py).
EDGE = "\x00"
#: The most words before a value in its stretch where it is a label's ("MHA: 0.56 nats", "0.57
#: nats (mean of five seeds, ...)": passes 111 and 112; the count of the whole stretch, first
#: used, read a short sentence as a label, pass 113).
LEAD_WORDS = 2
#: The most words of a label (a row's label, a box's title, a heading-like line before the
#: value): longer, a text is a sentence, read only over a value a label leads to.
LABEL_WORDS = 8
#: Where a footnote's marker points (``fnref:1``, ``fnref2:1``) and the footnote's own item.
_NOTE_REF, _NOTE = re.compile(r"fnref\d*:(.+)"), re.compile(r"fn:(.+)")
#: The elements that hold a part of the page: a heading inside one is a heading of that part.
_PARTS = frozenset("article aside blockquote dd details div dl dt figure li ol section summary table td th ul".split())
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_EMPHASIS = frozenset("b em i mark strong u".split())
#: The level of a bold lead: below every heading, so the next heading of any level ends its section.
_LEAD_LEVEL = 7


def words(text: str) -> int:
    """How many words (runs of letters) ``text`` holds."""
    return len(re.findall(r"[^\W\d_]+", text))


def _is_label(text: str, *, line: bool = False) -> bool:
    """Whether ``text`` is a label: at most :data:`LABEL_WORDS` words, not a question (and, for a
    ``line`` of its own before a value, a word and no sentence: it does not end in "." or "!")."""
    end = text.rstrip().rstrip("\"'”’)]*_").rstrip()
    count = words(text)
    return (count > 0 or not line) and count <= LABEL_WORDS and not end.endswith(("?", ".", "!") if line else "?")


class Context:
    """Follows :class:`seen._Seen`'s walk of a page (:meth:`start`, :meth:`data`, :meth:`end`,
    :meth:`value_at`) and gathers the text said of each value (:meth:`said_of`), as ``[start,
    end)`` ranges of the reader's text."""

    def __init__(self):
        self.cells: list[tuple] = []  # (table, first row, end row, first column, end column, is a header, start, end)
        self.valued_rows: set = set()  # (table, row) of the rows that hold a value
        self.table_starts: dict[int, int] = {}  # table -> where it starts in the text
        self.captions: dict[int, list] = {}
        self.refs: dict[str, list] = {}  # footnote -> [(start, end)] of its markers
        self.notes: dict[str, tuple] = {}  # footnote -> (start, end) of its text
        self.of_value: dict[int, tuple] = {}  # a value's start -> (cell, boxes, footnote, lists, parts)
        self.hover: list[tuple[int, str]] = []  # (where, text) of each title a pointer shows over the text
        self.headings: list[tuple] = []  # (level, start, end, the parts it stands in) of each heading and bold lead
        self.emphasis: list[tuple[int, int]] = []  # (start, end) of each run of emphasis
        self._tables: list[list] = []  # [table, row, next column, open cell or None, {column: end row of a rowspan}]
        self._boxes: list[tuple] = []  # each open box: (a question's, [(start, end)] of its titles)
        self._notes: list[str] = []
        self._lists: list[int] = []  # (where each open list starts)
        self._parts: list[int] = []  # (each open part of the page, numbered)
        self._paragraphs: list[list] = []  # each open paragraph: [start, the parts, plain text, emphasised text]
        self._emphasis = 0
        self._count = 0

    def start(self, tag: str, a: dict, classes: set, at: int):
        """What :meth:`end` does with the element that starts at ``at`` (its role)."""
        if a.get("title") and tag in ("a", "abbr", "span"):
            self.hover.append((at, a["title"]))
        part = tag in _PARTS
        if part:
            self._count += 1
            self._parts.append(self._count)
        return self._role(tag, a, classes, at), part

    def _role(self, tag: str, a: dict, classes: set, at: int):
        note = _NOTE.fullmatch(a.get("id", "")) if tag == "li" else None
        ref = _NOTE_REF.fullmatch(a.get("id", "")) if tag == "sup" else None
        if tag in _HEADINGS:
            return ("heading", _HEADINGS[tag], at, tuple(self._parts))
        if tag in _EMPHASIS:
            self._emphasis += 1
            return ("emphasis", at)
        if tag in ("ul", "ol"):
            self._lists.append(at)
            return "list"
        if tag == "table":
            self._tables.append([self._count, -1, 0, None, {}])
            self.table_starts[self._count] = at
            return "table"
        if tag == "tr" and self._tables:
            table = self._tables[-1]
            table[1:4] = [table[1] + 1, 0, None]
        elif tag in ("td", "th") and self._tables:
            table = self._tables[-1]
            while table[4].get(table[2], 0) > table[1]:  # (a column a cell above spans down into)
                table[2] += 1
            # (as a browser clamps them; rowspan="0" spans to the table's end)
            span = min(max(1, int(a["colspan"])), 1000) if a.get("colspan", "").isdigit() else 1
            down = int(a["rowspan"]) if a.get("rowspan", "").isdigit() else 1
            rows = table[1] + (min(down, 65534) if down > 0 else 10**6)
            table[4].update({c: rows for c in range(table[2], table[2] + span)})
            table[3] = (table[1], rows, table[2], table[2] + span, tag == "th", at)
            table[2] += span
            return "cell"
        elif tag == "caption" and self._tables:
            return ("caption", self._tables[-1][0], at)
        elif tag in ("details", "dl") or classes & {"admonition", "tabbed-set"}:
            self._boxes.append(("question" in classes, []))
            return "box"
        elif self._boxes and (tag in ("summary", "dt", "label") or "admonition-title" in classes):
            return ("title", self._boxes[-1][1], at)
        elif tag == "p":
            self._paragraphs.append([at, tuple(self._parts), False, False])
            return "paragraph"
        elif note:
            self._notes.append(note[1])
            return ("note", note[1], at)
        elif ref:
            return ("ref", ref[1], at)
        return None

    def data(self, text: str) -> None:
        """Text a reader sees, in the innermost open paragraph: emphasised or plain."""
        if self._paragraphs and text.strip():
            self._paragraphs[-1][3 if self._emphasis else 2] = True

    def end(self, role_and_part, at: int) -> None:
        role, part = role_and_part
        if part:
            self._parts.pop()
        if role == "table":
            self._tables.pop()
        elif role == "paragraph":
            start, parts, plain, emphasised = self._paragraphs.pop()
            if emphasised and not plain:  # (a bold lead: a heading of its section's last level)
                self.headings.append((_LEAD_LEVEL, start, at, parts))
        elif role == "cell" and self._tables and self._tables[-1][3] is not None:
            table = self._tables[-1]
            self.cells.append((table[0], *table[3], at))
            table[3] = None
        elif role == "box":
            self._boxes.pop()
        elif role == "list":
            self._lists.pop()
        elif not isinstance(role, tuple):
            return
        elif role[0] == "emphasis":
            self._emphasis -= 1
            self.emphasis.append((role[1], at))
        elif role[0] == "note":
            self._notes.pop()
            self.notes[role[1]] = (role[2], at)
        elif role[0] == "caption":
            self.captions.setdefault(role[1], []).append((role[2], at))
        elif role[0] == "title":
            role[1].append((role[2], at))
        elif role[0] == "heading":
            self.headings.append((role[1], role[2], at, role[3]))
        elif role[0] == "ref":
            self.refs.setdefault(role[1], []).append((role[2], at))

    def value_at(self, at: int) -> None:
        """A value starts at ``at``: where it stands."""
        cell = None
        if self._tables and self._tables[-1][3] is not None:
            table = self._tables[-1]
            cell = (table[0], table[3][0], *table[3][2:4])  # (table, row, first column, end column)
            self.valued_rows.add(cell[:2])
        if self._paragraphs:
            self._paragraphs[-1][2] = True  # (a paragraph that holds a value is no bold lead)
        self.of_value[at] = (cell, list(self._boxes), self._notes[-1] if self._notes else None, list(self._lists),
                             tuple(self._parts))

    def said_of(self, at: int, text: str) -> tuple[str, str]:
        """The text said of the value that starts at ``at`` in ``text``, from outside its stretch,
        and the text whose words only are said of it (a footnote marked elsewhere in its stretch)."""
        cell, boxes, note, lists, parts = self.of_value.get(at, (None, [], None, [], ()))
        stretch = (text.rfind(EDGE, 0, at) + 1, (text.find(EDGE, at) + 1 or len(text) + 1) - 1)
        lead = text[stretch[0]:at]
        head, colon, tail = lead.rpartition(":")
        labelled = words(lead) <= LEAD_WORDS  # (a label leads to it: any text around it is read as its label)
        led = labelled or bool(colon) and words(tail) <= LEAD_WORDS and words(head) <= LABEL_WORDS

        def label(a: int, b: int) -> bool:
            return labelled or _is_label(text[a:b])

        read = self._headings(at, parts)
        read += [(a, b) for a, b in self.emphasis  # (a run-in lead: "**Upper bound.** For MHA ... 0.56")
                 if stretch[0] <= a and b <= at and not text[stretch[0]:a].strip() and words(text[b:at])
                 and _is_label(text[a:b])]
        read += [(a, b) for question, titles in boxes for a, b in titles
                 if not a <= at < b and (not question or label(a, b))]
        top = self.table_starts.get(cell[0], stretch[0]) if cell is not None else stretch[0]
        for n, end in enumerate([top, *reversed(lists)]):  # (right before it, or its table; before each list)
            for a, b in _before(text, end):
                if any(a < h[2] and h[1] < b for h in self.headings):
                    continue  # (a heading: read above, in its section only)
                if (_is_label(text[a:b], line=True) or led and words(text[a:b]) <= LABEL_WORDS
                        or labelled and not n and text[a:b].rstrip().endswith(":")):
                    read.append((a, b))
        if cell is not None:
            read += self._table(cell, text, label)
        read = list(dict.fromkeys(r for r in read if r != stretch))
        said = [text[a:b] for a, b in read]
        said += [hover for where, hover in self.hover if any(a <= where < b for a, b in [stretch, *read])]
        worded = []  # (read for its words only: a footnote marked elsewhere in its sentence may give its own "= 0.5")
        for name, marks in self.refs.items():  # (the footnotes marked on it, or in the text read above)
            if name not in self.notes:
                continue
            if any(m >= at and not text[at + 3:m].strip() or any(a <= m < b for a, b in read) for m, _ in marks):
                said.append(text[slice(*self.notes[name])])
            elif any(stretch[0] <= m < stretch[1] for m, _ in marks):  # (on its unit, its noun, its sentence's end)
                worded.append(text[slice(*self.notes[name])])
        for a, b in self.refs.get(note, ()) if note is not None else ():
            said.append(text[text.rfind(EDGE, 0, a) + 1:(text.find(EDGE, b) + 1 or len(text) + 1) - 1])
        return tuple(" ".join(" ".join(t).replace(EDGE, " ").split()) for t in (said, worded))

    def _headings(self, at: int, parts: tuple) -> list[tuple[int, int]]:
        """The nearest heading of each level above ``at`` in the parts of the page that hold it,
        and the bold lead after the last of them; not the page's title."""
        out, lowest = [], _LEAD_LEVEL + 1
        title = self.headings and min(self.headings, key=lambda h: h[1])
        for heading in sorted(self.headings, key=lambda h: -h[1]):
            level, a, b, where = heading
            if b <= at and level < lowest and parts[:len(where)] == where and not (heading == title and level == 1):
                out.append((a, b))
                lowest = level
        return out

    def _table(self, cell: tuple, text: str, label) -> list[tuple[int, int]]:
        """What a value's table says of it: the headers over its column, its row's other cells and
        the cells over it in rows with no value (where they are labels), the nearest section row
        above it, and the caption."""
        table, row, c0, c1 = cell
        out, filled = [], {}
        for t, r0, r1, a0, a1, header, a, b in self.cells:
            if t != table or (r0, a0) == (row, c0):
                continue
            over = a0 < c1 and c0 < a1  # (the cell's columns meet the value's)
            same = r0 <= row < r1  # (its row, or a cell spanning down into it)
            heading = r1 <= row and (t, r0) not in self.valued_rows  # (a header row written in the body)
            if over and header or (same or over and heading) and label(a, b):
                out.append((a, b))
            if r1 <= row and text[a:b].strip():
                filled.setdefault(r0, []).append((a, b))
        # (the nearest row above of one filled cell: a section's label over the rows below it)
        sections = [cells[0] for r, cells in sorted(filled.items()) if len(cells) == 1]
        out += [r for r in sections[-1:] if label(*r)]
        return out + self.captions.get(table, [])


def _before(text: str, end: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` of the nearest stretch of ``text`` before ``end`` that holds text."""
    b = end
    while b > 0:
        a = text.rfind(EDGE, 0, b) + 1
        if text[a:b].strip():
            return [(a, b)]
        b = a - 1
    return []
