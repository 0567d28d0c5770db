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
  lead of its section (a paragraph all in emphasis, "**Upper bound**", or a label that opens
  with emphasis, "**Upper bound** (all seeds)"), among those in the boxes, list items and cells
  that hold the value (one tab's heading is not another tab's). Not the page's title (its
  first heading, an ``h1`` with no word before it): "FlashAttention: exact attention" names a
  method, and it stands over every number of the page.
- **Its own label**, where a label leads to it ("Upper bound: 0.56", "Exact: 0.56", "MHA: 0.56
  (exact)"), up to the values beside it: the words the claim rules do not read there.
- **Run-in leads**: emphasis that opens the value's own stretch (after at most
  :data:`LEAD_WORDS` words: "(a) **Upper bound.** For MHA the loss is 0.56"), and a label on
  a line of its own ("Upper bound<br>For MHA ...").
- **Boxes**: the title of every box around it (an admonition's, a ``<details>``'s summary),
  its own tab's label, its definition's term. A question box's title is a question about its
  answer, whose sentences say what they claim: read only where it is a label.
- **Tables**: the headers over its column (``colspan`` and ``rowspan`` counted), the caption,
  every section row above it (one filled cell, or all in emphasis: "| **At most** | |"), and
  where they are labels, the other cells of its row and the cells over it in rows with no
  value (a header row written in the body); the words of the headers over its row's label
  ("| Bound | ... |" over "| Upper | ... |").
- **Label lines**: the text right before its stretch (or its table) and right before each list
  it stands in, where that is a label: a short text with no sentence's end; not another tab's.
- **Footnotes**: the text of each footnote marked on it or in any text read above; the words of
  one marked elsewhere in its stretch; for a value inside a footnote, the sentence of each
  marker that points to it.
- **Hover titles** (``title`` of a link, ``abbr``, ``span``) over any of these.

hooks/seen.py holds what is read to no claim the value's rounding may make false: a value
rounded up is shown at least as large as it is, so "Upper bound" over it is true (and "Lower
bound" over one rounded down); exactness is true of none.

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

#: Where one stretch of text ends and the next starts in the reader's text (hooks/seen.py), and
#: where one text said of a value ends and the next starts in :meth:`Context.said_of`'s.
EDGE, PART = "\x00", "\x1f"
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
#: The most words of a label line that ends in a full stop ("Upper bound."): longer, a sentence.
_TERSE = 3
#: The level of a bold lead: below every heading, so the next heading of any level ends its section.
_LEAD_LEVEL = 7


def words(text: str) -> int:
    """How many words (runs of letters) ``text`` holds."""
    return len(re.findall(r"[^\W\d_]+", text))


def _is_label(text: str, *, line: bool = False) -> bool:
    """Whether ``text`` is a label: at most :data:`LABEL_WORDS` words, not a question (and, for a
    ``line`` of its own before a value, a word and no sentence: more than :data:`_TERSE` words do
    not end in "." or "!")."""
    text = text.replace(EDGE, " ")
    end = text.rstrip().rstrip("\"'”’)]*_").rstrip()
    count = words(text)
    sentence = end.endswith("?") or line and end.endswith((".", "!")) and count > _TERSE
    return (count > 0 or not line) and count <= LABEL_WORDS and not sentence


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
        self.headings: list[tuple] = []  # (level, start, end, the parts it stands in) of each heading
        self.leads: list[tuple] = []  # (start, end, the parts, all emphasis, opens with emphasis) of each paragraph
        self.breaks: list[int] = []  # (where each line break stands)
        self.emphasis: list[tuple[int, int]] = []  # (start, end) of each run of emphasis
        self._tables: list[list] = []  # [table, row, next column, open cell or None, {column: end row of a rowspan}]
        self._boxes: list[list] = []  # each open box: [its kind, [(start, end)] of its titles, tab blocks begun]
        self.tab_blocks: list[tuple] = []  # (start, end) of each tab's content
        self._notes: list[str] = []
        self._lists: list[int] = []  # (where each open list starts)
        self._parts: list[int] = []  # (each open part of the page, numbered)
        self._paragraphs: list[list] = []  # each open paragraph: [start, the parts, plain, emphasised, opens emphasised]
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
        if tag == "figure" and self._paragraphs:
            self._paragraphs[-1][2] = True  # (a figure's caption is said of the figure: no lead)
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
            kind = "question" if "question" in classes else "tabs" if "tabbed-set" in classes else tag
            self._boxes.append([kind, [], 0])
            return "box"
        elif self._boxes and (tag in ("summary", "dt", "label") or "admonition-title" in classes):
            return ("title", self._boxes[-1][1], at)
        elif tag == "p":
            self._paragraphs.append([at, tuple(self._parts), False, False, None])
            return "paragraph"
        elif "tabbed-block" in classes and self._boxes:
            self._boxes[-1][2] += 1
            return ("tab", at)
        elif note:
            self._notes.append(note[1])
            return ("note", note[1], at)
        elif ref:
            return ("ref", ref[1], at)
        return None

    def data(self, text: str) -> None:
        """Text a reader sees, in the innermost open paragraph: emphasised or plain."""
        if self._paragraphs and text.strip():
            paragraph = self._paragraphs[-1]
            paragraph[3 if self._emphasis else 2] = True
            paragraph[4] = bool(self._emphasis) if paragraph[4] is None else paragraph[4]

    def end(self, role_and_part, at: int) -> None:
        role, part = role_and_part
        if part:
            self._parts.pop()
        if role == "table":
            self._tables.pop()
        elif role == "paragraph":
            start, parts, plain, emphasised, opens = self._paragraphs.pop()
            if emphasised:  # (a bold lead, maybe: a heading of its section's last level, :meth:`_headings`)
                self.leads.append((start, at, parts, not plain, bool(opens)))
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
        elif role[0] == "tab":
            self.tab_blocks.append((role[1], at))
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
        if self._paragraphs:  # (a value in plain text makes its paragraph no bold lead; "**At most (n = 3)**" is one)
            paragraph = self._paragraphs[-1]
            paragraph[3 if self._emphasis else 2] = True
            paragraph[4] = bool(self._emphasis) if paragraph[4] is None else paragraph[4]
        self.of_value[at] = (cell, [tuple(box) for box in self._boxes], self._notes[-1] if self._notes else None,
                             list(self._lists),
                             tuple(self._parts))

    def said_of(self, at: int, text: str) -> tuple[str, str, str]:
        """The text said of the value that starts at ``at`` in ``text``, from outside its stretch;
        the text whose words only are said of it (a footnote marked elsewhere in its stretch); and,
        for a value a label leads to, its own label (its stretch up to the values beside it, whose
        signs and words next to it the claim rules read: hooks/seen.py reads the others)."""
        cell, boxes, note, lists, parts = self.of_value.get(at, (None, [], None, [], ()))
        stretch = (text.rfind(EDGE, 0, at) + 1, (text.find(EDGE, at) + 1 or len(text) + 1) - 1)
        lead = text[stretch[0]:at]
        head, colon, tail = lead.rpartition(":")
        labelled = words(lead) <= LEAD_WORDS  # (a label leads to it: any text around it is read as its label)
        led = labelled or bool(colon) and words(tail) <= LEAD_WORDS and words(head) <= LABEL_WORDS

        def label(a: int, b: int) -> bool:
            return labelled or _is_label(text[a:b])

        read = self._headings(at, parts, text)
        own = []  # (its own label: "Upper bound: 0.56", "Exact: 0.56", "MHA: 0.56 (exact)", up to the next value)
        if led:
            values = [v for v in self.of_value if stretch[0] <= v < stretch[1]]
            own = [text[max([v + 3 for v in values if v < at], default=stretch[0]):at],
                   text[at + 3:min([v for v in values if v > at], default=stretch[1])]]
        read += [(a, b) for a, b in self.emphasis  # (a run-in lead: "(a) **Upper bound.** For MHA ... 0.56")
                 if stretch[0] <= a and b <= at and words(text[stretch[0]:a]) <= LEAD_WORDS and words(text[b:at])
                 and _is_label(text[a:b])]
        lines = [b for b in self.breaks if stretch[0] < b < at]  # (a label on a line of its own: "Upper bound<br>")
        read += [(stretch[0], b) for b in lines[:1] if _is_label(text[stretch[0]:b], line=True)]
        for kind, titles, tab in boxes:  # (a tab's own label; a definition's nearest term; a question's if a label)
            titles = [t for t in titles if not t[0] <= at < t[1]]
            titles = (titles[tab - 1:tab] if kind == "tabs" else [t for t in titles if t[1] <= at][-1:] if kind == "dl"
                      else titles)
            read += [(a, b) for a, b in titles if kind != "question" or label(a, b)]
        top = self.table_starts.get(cell[0], stretch[0]) if cell is not None else stretch[0]
        for n, end in enumerate([top, *reversed(lists)]):  # (right before it, or its table; before each list)
            for a, b in _before(text, end):
                if self._title(text) in [(a, b)] or any(t0 <= a < t1 and not t0 <= at < t1 for t0, t1 in self.tab_blocks):
                    continue  # (the page's title; another tab's text, not shown with it)
                if (_is_label(text[a:b], line=True) or led and words(text[a:b]) <= LABEL_WORDS
                        or labelled and not n and text[a:b].rstrip().endswith(":")):
                    read.append((a, b))
        corner = []  # (the headers over its row's label: "| Bound | Loss |" over "| Upper | 0.56 |", words only)
        if cell is not None:
            read += self._table(cell, text, label)
            corner = [text[a:b] for t, r0, r1, a0, a1, header, a, b in self.cells if t == cell[0] and header
                      and (a, b) not in read and any(t2 == cell[0] and h0 < a1 and a0 < h1 and (c, d) in read
                                                     for t2, q0, q1, h0, h1, _, c, d in self.cells)]
        read = list(dict.fromkeys(r for r in read if r != stretch))
        said = [text[a:b] for a, b in read]
        said += [hover for where, hover in self.hover if any(a <= where < b for a, b in [stretch, *read])]
        worded = corner  # (words only: a footnote marked elsewhere in its sentence may give its own "= 0.5")
        for name, marks in self.refs.items():  # (the footnotes marked on it, or in the text read above)
            if name not in self.notes:
                continue
            if any(m >= at and not text[at + 3:m].strip() or any(a <= m < b for a, b in read) for m, _ in marks):
                said.append(text[slice(*self.notes[name])])
            elif any(stretch[0] <= m < stretch[1] for m, _ in marks):  # (on its unit, its noun, its sentence's end)
                worded.append(text[slice(*self.notes[name])])
        for a, b in self.refs.get(note, ()) if note is not None else ():
            said.append(text[text.rfind(EDGE, 0, a) + 1:(text.find(EDGE, b) + 1 or len(text) + 1) - 1])
        # (each text apart: "Loss, lower than" ends in a bound, "Lower than MHA" compares)
        return tuple(f" {PART} ".join(" ".join(p.replace(EDGE, " ").split()) for p in t if p.strip())
                     for t in (said, worded, own))

    def _title(self, text: str) -> tuple[int, int] | None:
        """Where the page's title stands: its first heading, an ``h1`` with no word before it."""
        first = min(self.headings, key=lambda h: h[1], default=None)
        return first[1:3] if first and first[0] == 1 and not words(text[:first[1]]) else None

    def _headings(self, at: int, parts: tuple, text: str) -> list[tuple[int, int]]:
        """The nearest heading of each level above ``at`` in the parts of the page that hold it,
        and the lead after the last of them (a paragraph all in emphasis, or a label that opens
        with it: "**Upper bound** (all seeds)"); not the page's title."""
        leads = [(_LEAD_LEVEL, a, b, where) for a, b, where, whole, opens in self.leads
                 if whole or opens and _is_label(text[a:b], line=True)]
        out, lowest, title = [], _LEAD_LEVEL + 1, self._title(text)
        for level, a, b, where in sorted(self.headings + leads, key=lambda h: -h[1]):
            if b <= at and level < lowest and parts[:len(where)] == where and (a, b) != title:
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
        # (every section row above: one filled cell, or all in emphasis, "| **Upper bound** | *all seeds* |")
        for r, cells in sorted(filled.items()):
            if len(cells) == 1 or all(self._emphasised(text, *c) for c in cells):
                out += [c for c in cells if label(*c)]
        return list(dict.fromkeys(out)) + self.captions.get(table, [])

    def _emphasised(self, text: str, a: int, b: int) -> bool:
        """Whether every word of ``text[a:b]`` stands in emphasis."""
        inside = [(e0, e1) for e0, e1 in self.emphasis if a <= e0 and e1 <= b]
        return words(text[a:b]) <= sum(words(text[e0:e1]) for e0, e1 in inside)


def _before(text: str, end: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` of the nearest stretch of ``text`` before ``end`` that holds text."""
    b = end
    while b > 0:
        a = text.rfind(EDGE, 0, b) + 1
        if text[a:b].strip():
            return [(a, b)]
        b = a - 1
    return []
