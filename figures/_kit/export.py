"""Writing a figure script's outputs: image formats, CSV, JSON and Markdown.

Every writer is deterministic: the same data and script give the same bytes (SVG ids
are salted per figure and no dates are written), so two builds of the site are identical.
An SVG keeps its text as text and carries a subset of each font that text uses
(:mod:`figures._kit.fonts`), so it looks the same on a machine without those fonts.

A figure is drawn once per theme and layout, laid out once (:func:`lay_out`), and saved in
each format from that drawing (:func:`write_many`); a save does not depend on the saves
before it, so the command line (:func:`write`, one format) writes the site's bytes.
"""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import fonts, style

IMAGE_FORMATS = ("svg", "png", "pdf")
DATA_FORMATS = ("csv", "json")
ALL_FORMATS = IMAGE_FORMATS + DATA_FORMATS + ("md",)


def _keyed(value: dict, path: str) -> list:
    """``(key as text, its dotted path, value)`` of each item of ``value``; ``ValueError`` for
    two keys that read the same as text or a key holding a dot (see :func:`jsonable`)."""
    out, seen = [], set()
    for k, v in value.items():
        key = str(k)
        where = f"{path}.{key}" if path else key
        if key in seen:
            raise ValueError(f"data() holds two keys that read {key!r} at {where!r} (JSON keys are text): "
                             "one value would overwrite the other")
        if "." in key:
            raise ValueError(f"data() has a key with a dot, {key!r}, at {where!r}: data paths join keys with "
                             "dots, so it could not be told from a nested key (use another character)")
        seen.add(key)
        out.append((key, where, v))
    return out


def jsonable(value, path: str = ""):
    """Numpy arrays and scalars as plain lists and numbers, recursively, a zero unsigned (-0.0
    as 0.0: a download never shows "-0"). Keys become text; two
    keys that read the same as text (1 and "1") or a key holding a dot (the CSV's names and a
    page's value paths join keys with dots: "a.b" and a within a would be one name) raise
    ``ValueError`` naming where: one of the two values would be lost, or read for the other."""
    if isinstance(value, dict):
        return {key: jsonable(v, where) for key, where, v in _keyed(value, path)}
    if isinstance(value, (list, tuple)):
        # (a path only for what can hold keys: a long list of numbers costs no strings)
        try:
            return [jsonable(v, f"{path}.{i}" if path else str(i)) if isinstance(v, (dict, list, tuple))
                    else jsonable(v) for i, v in enumerate(value)]
        except NotJson as exc:
            if exc.path is not None:
                raise
            i = next(i for i, v in enumerate(value) if not isinstance(v, (dict, list, tuple)) and _not_json(v))
            raise NotJson(value[i], f"{path}.{i}" if path else str(i)) from None
    if isinstance(value, np.ndarray):
        if _plain_numbers(value):  # what the element-wise path gives, without a call per number
            return (value + 0.0).tolist() if value.dtype.kind == "f" else value.tolist()
        return jsonable(value.tolist(), path)
    if isinstance(value, np.generic):  # a numpy scalar as the Python value it holds, NaN and infinities included
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None if np.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, float):  # -0.0 + 0.0 is 0.0: a zero is published unsigned, never "-0.0"
        return value + 0.0
    if _not_json(value):
        raise NotJson(value, path or None)
    return value


class NotJson(TypeError):
    """A value of ``data()`` that JSON cannot hold, with its data path (``None`` while it is
    not yet known: an item of a list of numbers, named by the list that holds it)."""

    def __init__(self, value, path):
        self.path = path
        super().__init__(f"data() holds a {type(value).__name__}, {value!r:.60}, at {path!r}, which JSON "
                         "cannot store: give text, a number (int or float), a bool, None, a list, a dict or "
                         "a numpy array")


def _not_json(value) -> bool:
    return not (value is None or isinstance(value, (str, bool, int, float)))


def _plain_numbers(arr: np.ndarray) -> bool:
    """``arr`` holds booleans, integers or finite floats: its ``tolist()`` is already JSON."""
    kind = arr.dtype.kind
    return kind in "biu" or (kind == "f" and bool(np.isfinite(arr).all()))


def to_json(data: dict) -> str:
    """``data`` as JSON, keys sorted, one value a line (indent 1): the text of
    ``json.dumps(jsonable(data), indent=1, sort_keys=True)``, written faster for long lists
    of numbers (a position table is a million of them)."""
    out: list = []
    _encode(jsonable(data), 0, out)
    out.append("\n")
    return "".join(out)


def _encode(value, level: int, out: list) -> None:
    """Append the text ``json.dumps(value, indent=1, sort_keys=True)`` gives at ``level``."""
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        pad = "\n" + " " * (level + 1)
        out.append("{")
        for i, (key, item) in enumerate(sorted(value.items())):
            out.append(("," if i else "") + pad + json.dumps(key) + ": ")
            _encode(item, level + 1, out)
        out.append("\n" + " " * level + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
            return
        pad = "\n" + " " * (level + 1)
        numbers = _number_texts(value)
        if numbers is not None:
            out.append("[" + pad + ("," + pad).join(numbers) + "\n" + " " * level + "]")
            return
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + pad)
            _encode(item, level + 1, out)
        out.append("\n" + " " * level + "]")
    else:
        out.append(json.dumps(value))


def _number_texts(items: list):
    """JSON texts of a list of only finite floats or only ints (``None`` for any other list)."""
    first = type(items[0])
    if first is float:
        if all(type(v) is float for v in items) and np.isfinite(items).all():
            return list(map(float.__repr__, items))
    elif first is int:
        if all(type(v) is int for v in items):
            return list(map(int.__repr__, items))
    return None


def _rows(prefix: str, value):
    if isinstance(value, dict):
        for _, where, v in _keyed(value, prefix):
            yield from _rows(where, v)
        return
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            yield from _rows(f"{prefix}.{i}", v)
        return
    arr = np.asarray(value, dtype=object if isinstance(value, (list, tuple)) else None)
    if arr.ndim == 0:
        yield prefix, "", jsonable(arr.item() if hasattr(arr, "item") else value)
        return
    if _plain_numbers(arr):  # the same rows as below, as one block of text (a table has a million)
        values = (arr.ravel() + 0.0 if arr.dtype.kind == "f" else arr.ravel()).tolist()  # (-0.0 + 0.0 is 0.0)
        texts = [_g7(v) for v in values] if arr.dtype.kind == "f" else list(map(str, values))
        yield _Block(prefix, _index_texts(arr.shape), texts)
        return
    for idx, v in np.ndenumerate(arr):
        yield prefix, ";".join(map(str, idx)), jsonable(v)


def _index_texts(shape) -> list:
    """``"i;j;..."`` for every index of an array of ``shape``, in C order."""
    texts = None
    for n in shape:
        axis = list(map(str, range(n)))
        texts = axis if texts is None else [f"{t};{a}" for t in texts for a in axis]
    return texts or []


def to_csv(data: dict) -> str:
    """Long-format CSV of every value in ``data``: ``name, index, value`` (index ``i;j`` for 2-D).

    Floats carry 7 significant digits; ``--out x.json`` gives every digit.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["name", "index", "value"])
    for row in _rows("", data):
        if isinstance(row, _Block):  # indices and numbers never need quoting; the name may
            name = io.StringIO()
            csv.writer(name, lineterminator="\n").writerow([row.name, ""])
            start = name.getvalue()[:-1]  # 'name,' as the writer quotes it
            buf.write("".join(f"{start}{i},{v}\n" for i, v in zip(row.indices, row.values)))
            continue
        name, index, value = row
        if isinstance(value, float):
            value = _g7(value + 0.0)
        w.writerow([name, index, value])
    return buf.getvalue()


class _Block(NamedTuple):
    """The rows of one array of numbers: its name, each element's index and value as text."""

    name: str
    indices: list
    values: list


#: Arrays larger than this stay out of the wide CSV (the long CSV and the JSON hold them).
WIDE_MAX_CELLS = 1_000_000


def _declared(path: str, labels: dict) -> tuple | None:
    """The ``(row list, column list)`` that ``labels`` (a script's ``GRID_LABELS``) declares for
    the grid at ``path``; ``*`` in a pattern stands for any one key or index."""
    from .contract import declared_at  # the matching NON_FINITE's patterns use

    parts = tuple(path.split("[")[0].split("."))
    return next(((pattern, axes) for pattern, axes in labels.items() if declared_at(parts, ((pattern, axes),))), None)


def _grids(prefix: str, value, siblings: dict, labels: dict, used: set):
    """``(name, 2-D array, row labels, column labels)`` for every numeric 2-D array in ``value``
    (a 3-D array gives one grid per slice). An axis is labelled by the sibling list of texts that
    the script's ``GRID_LABELS`` names for it (``{"weights": ("tokens", "tokens"), "X": ("tokens",
    None)}``), else by its positions 0, 1, ...: a list is never chosen by its length alone (the
    tokens labelled embedding dimensions that happened to number as many)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _grids(f"{prefix}.{k}" if prefix else str(k), v, value, labels, used)
        return
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            yield from _grids(f"{prefix}.{i}", v, {}, labels, used)
        return
    if not isinstance(value, (list, tuple, np.ndarray)):
        return
    try:
        arr = np.asarray(value)
        if arr.dtype.kind not in "iu":  # integers stay exact (as float, 12345678 was written 1.234568e+07)
            arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return  # ragged, or not numbers
    if arr.ndim not in (2, 3) or arr.size == 0 or arr.size > WIDE_MAX_CELLS:
        return
    declared = _declared(prefix, labels)
    if declared:
        used.add(declared[0])

    def axis(i: int, n: int) -> list:
        key = declared[1][i] if declared else None
        if key is None:
            return list(range(n))
        texts = siblings.get(key)
        if not (isinstance(texts, (list, tuple)) and len(texts) == n and all(isinstance(t, str) for t in texts)):
            got = f"{len(texts)} items" if isinstance(texts, (list, tuple)) else "nothing" if texts is None \
                else type(texts).__name__
            raise ValueError(f"GRID_LABELS labels the {('rows', 'columns')[i]} of {prefix!r} with {key!r}, which must "
                             f"be a list of {n} texts beside it in data(); it holds {got}")
        return [str(t) for t in texts]

    rows, cols = axis(0, arr.shape[-2]), axis(1, arr.shape[-1])
    if arr.ndim == 2:
        yield prefix, arr, rows, cols
    else:
        for i, grid in enumerate(arr):
            yield f"{prefix}[{i}]", grid, rows, cols


def to_wide_csv(data: dict, labels: dict | None = None) -> str | None:
    """Every 2-D array of ``data`` as a grid a spreadsheet opens as rows x columns, or ``None``
    when ``data`` holds none. Each grid starts with a header row (its name, then the column
    labels) and each row with its label (``labels``: the script's ``GRID_LABELS``, pattern ->
    (row list, column list), each a key beside the grid or None for positions); grids are
    separated by an empty line. A pattern that labels no grid is refused (a typo)."""
    labels = dict(labels or {})
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    found, used = False, set()
    for name, grid, rows, cols in _grids("", data, {}, labels, used):
        if found:
            w.writerow([])
        found = True
        w.writerow([name, *cols])
        for label, row in zip(rows, grid):
            w.writerow([label, *(_cell(v) for v in row)])
    unused = sorted(set(labels) - used)
    if unused:
        raise ValueError(f"GRID_LABELS names {', '.join(map(repr, unused))}, where data() holds no grid (a 2-D or 3-D "
                         "array of numbers)")
    return buf.getvalue() if found else None


def _g7(v: float) -> str:
    """A float in a CSV: 7 significant digits (float32's precision keeps big tables small; the
    JSON keeps all digits), more where 7 would write a value just short of 1 or -1 as 1 or -1
    (style.sig: a weight of 0.99999999998 is not "1" beside its row's 1.4e-11)."""
    return style.sig(v, 7) if 0.9999999 < abs(v) < 1 else f"{v:.7g}"


def _cell(v) -> str:
    if isinstance(v, np.integer):
        return str(int(v))
    if np.isnan(v):
        return ""
    return _g7(float(v) + 0.0)  # (a zero unsigned: "0", never "-0")


#: A cell that shows how Python writes a missing or non-finite number ("nan", "inf", "None"),
#: bold or as a percentage too: never published (a table says in words what such a value means,
#: or shows an infinity as ∞).
_NOT_A_NUMBER = re.compile(r"^\**[-+−]?(nan|inf|infinity|none|null)%?\**$", re.IGNORECASE)


def not_a_number_cell(cell) -> bool:
    """A table cell that is NaN, an infinity or no value (a cell may say "NaN" inside a text on
    purpose: the float16 table shows what a naive softmax returns, "[NaN, NaN, NaN]")."""
    return bool(_NOT_A_NUMBER.match(str(cell).strip()))


#: NON_FINITE's key for a table column whose cells may show NaN or an infinity in words on
#: purpose: ``"table: naive, fp16"`` names the column by its header, exactly.
TABLE_COLUMN = "table: "


def nan_columns(module) -> tuple:
    """The table columns a script's ``NON_FINITE`` declares (``"table: HEADER"`` keys): their
    cells may show NaN in words, as the float16 table shows what a naive softmax returns."""
    declared = getattr(module, "NON_FINITE", None) or {}
    return tuple(sorted(k[len(TABLE_COLUMN):] for k in declared if k.startswith(TABLE_COLUMN)))


def _cells(line: str) -> list[str]:
    """A table row's cells as Python-Markdown splits them: at each ``|`` that is neither escaped
    (``\\|``) nor inside a code span."""
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    cells, start, i = [], 0, 0
    while i < len(line):
        if line[i] == "`":
            ticks = re.match(r"`+", line[i:]).group(0)
            close = line.find(ticks, i + len(ticks))
            i = close + len(ticks) if close >= 0 else i + len(ticks)
            continue
        if line[i] == "\\":
            i += 2
            continue
        if line[i] == "|":
            cells.append(line[start:i].strip())
            start = i + 1
        i += 1
    return cells + [line[start:].strip()]


def _is_rule(cells: list[str]) -> bool:
    """The rule under a Markdown table's header: ``---``, ``---:`` ... in every cell."""
    return all(c and set(c) <= set("-: ") and "-" in c for c in cells)


def check_table_markdown(md: str, columns: tuple = ()) -> None:
    """Every cell of every Markdown table in ``md`` (a table script's output, however it was
    written) is a finite number or words: a cell that is NaN, an infinity or no value
    (:func:`not_a_number_cell`), or that shows one inside its words ("nan ms", "[NaN, 0]"),
    raises naming its row and column, unless its column is one of ``columns`` (the headers a
    script's ``NON_FINITE`` declares with ``"table: HEADER"``). A declared column that no table
    has raises too: a misspelled header would otherwise cover nothing, silently.

    Tables are found as Python-Markdown finds them: a block (lines between blank lines) whose
    first line holds a ``|`` and whose second is the rule; each further line of the block is
    a row, with or without its leading ``|``. Anything else the script wrote (a note, an HTML
    table) is text, and may not show NaN, an infinity or a missing value either."""
    from .contract import NOT_A_NUMBER_WORD

    lines = md.splitlines()
    blocks, block = [], []  # each block: [(line number, text), ...]
    for n, line in enumerate(lines, 1):
        if line.strip():
            block.append((n, line))
        elif block:
            blocks.append(block)
            block = []
    if block:
        blocks.append(block)
    tables, text = [], []
    for b in blocks:
        if len(b) >= 2 and "|" in b[0][1] and "|" in b[1][1] and _is_rule(_cells(b[1][1])):
            tables.append((_cells(b[0][1]), b[0][0], [(n, _cells(line)) for n, line in b[2:]]))
        else:
            text += b
    seen = {h for header, _, _ in tables for h in header}
    missing = sorted(set(columns) - seen)
    if missing:
        raise ValueError(f"NON_FINITE declares the table column(s) {missing!r}, which no table has; its "
                         f"columns are {sorted(seen)!r}")
    for n, line in text:
        if NOT_A_NUMBER_WORD.search(line):
            raise ValueError(f"table line {n}, outside any table, would show {line.strip()!r}: a table's page shows "
                             "finite numbers or words, never NaN, an infinity or a missing value")
    for header, at, rows in tables:
        if not rows:  # a header, its rule, and then at least one row of its own
            raise ValueError(f"table line {at}: a table with a header and no rows (nothing to show: say so in "
                             "words on the page instead)")
        for n, cells in rows:
            if len(cells) != len(header):  # Markdown drops the cells past the header's and leaves missing ones blank
                raise ValueError(f"table line {n} has {len(cells)} cells and its header {len(header)} "
                                 f"({' | '.join(cells)!r} under {' | '.join(header)!r}): Markdown would drop or shift "
                                 "them under other headers; a '|' in a cell's text is written '\\|'")
            for column, cell in zip(header, cells):
                if not_a_number_cell(cell) or (column not in columns and NOT_A_NUMBER_WORD.search(cell)):
                    raise ValueError(f"table line {n}, column {column!r} would show {cell!r}: a table shows "
                                     "finite numbers or words, never NaN, an infinity or a missing value (say what it "
                                     "means, write ∞, or, where a column shows NaN on purpose, declare it: "
                                     f"NON_FINITE = {{'{TABLE_COLUMN}{column}': 'what it means'}})")


def markdown_table(header, rows, align: str) -> str:
    """A Markdown table: ``header`` and each row are lists of cell strings; ``align`` has one
    letter per column, ``l`` (left) or ``r`` (right). A cell that reads "nan", "inf" or "None"
    (how Python formats a missing or non-finite number) is refused, naming its row and column."""
    if len(align) != len(header) or set(align) - {"l", "r"}:
        raise ValueError(f"align must give l or r for each of the {len(header)} columns, got {align!r}")
    if not rows:
        raise ValueError("a table needs at least one row (nothing to show: say so in words on the page instead)")
    rule = "|" + "".join("---:|" if a == "r" else "---|" for a in align)
    lines = ["| " + " | ".join(header) + " |", rule]
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"a table row has {len(row)} cells, the header {len(header)}: {row!r}")
        for column, cell in zip(header, row):
            if not_a_number_cell(cell):
                raise ValueError(f"table row {i + 1}, column {column!r} would show {str(cell).strip()!r}: a table "
                                 "shows finite numbers or words, never NaN, an infinity or a missing value "
                                 "(say what it means, or write ∞)")
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


#: What a saved image carries besides the picture: no dates, no software line.
_METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {"Software": None}}
#: Pixels per inch of the PNGs (a 6 in figure is 900 px wide: sharp on a slide).
PNG_DPI = 150


def save_figure(fig, path: Path, *, salt: str, bbox_inches=None) -> None:
    """Save ``fig`` to ``path`` (svg/png/pdf by suffix) with no dates and a fixed SVG salt.

    ``bbox_inches`` is the area to save, from :func:`lay_out` (default: the tight box that
    matplotlib measures again for this save)."""
    path = Path(path)
    path.write_bytes(figure_bytes(fig, path.suffix.lstrip(".").lower(), salt=salt, bbox_inches=bbox_inches))


def figure_bytes(fig, fmt: str, *, salt: str, bbox_inches=None) -> bytes:
    """The bytes of ``fig`` as ``fmt`` (svg, png or pdf): see :func:`save_figure`."""
    import matplotlib.pyplot as plt

    kwargs = {"metadata": _METADATA[fmt]}
    if bbox_inches is not None:
        kwargs["bbox_inches"] = bbox_inches
    if fmt == "png":
        # A PNG may travel to slides: give it an opaque background in its theme's colour.
        kwargs.update(dpi=PNG_DPI, facecolor=style.colors()["bg"])
    buffer = io.BytesIO()
    with plt.rc_context({"svg.hashsalt": salt}):
        if fmt == "png" and bbox_inches is not None:
            # the pixels themselves: no PNG to encode and decode again before the palette
            fig.savefig(buffer, format="rgba", **{k: v for k, v in kwargs.items() if k != "metadata"})
            size = _pixel_size(len(buffer.getvalue()), bbox_inches.width * PNG_DPI, bbox_inches.height * PNG_DPI)
            if size is not None:
                return _palette_png(buffer.getvalue(), size)
            buffer = io.BytesIO()  # the size is ambiguous: let matplotlib write the PNG
        fig.savefig(buffer, format=fmt, **kwargs)
    raw = buffer.getvalue()
    if fmt == "svg":
        # the fonts its text uses travel inside it: it looks the same on any machine (fonts.py)
        return fonts.embed_fonts(compact_svg(_stable_clip_ids(raw)))
    if fmt == "png":
        return _palette_png(raw)
    return raw


def _pixel_size(n_bytes: int, width: float, height: float):
    """``(w, h)`` with ``4 * w * h == n_bytes`` within a pixel of ``width`` x ``height`` (how
    matplotlib rounds a canvas to whole pixels changes between versions); ``None`` unless
    exactly one pair fits."""
    fits = {(w, h) for w in range(int(width) - 1, int(width) + 2) for h in range(int(height) - 1, int(height) + 2)
            if w > 0 and h > 0 and 4 * w * h == n_bytes}
    return fits.pop() if len(fits) == 1 else None


def lay_out(fig):
    """Lay ``fig`` out once, fix that layout and return the area to save (the tight box plus
    ``savefig.pad_inches``, in inches).

    Without this every save lays the figure out again (a measuring pass, then the drawing),
    and each format a figure is saved in pays for it. After it, every save of the figure
    draws it once, with the same geometry, so the SVG, the PDF and the PNG of one drawing
    agree, and a save does not depend on the saves before it: the command line, which lays
    out and saves one format, writes the bytes the site's build writes. The layout engine
    and the box measure text with the renderer the figure's canvas gives (Agg, at the
    figure's dpi, on every backend matplotlib offers for files and screens).
    """
    import matplotlib

    engine = fig.get_layout_engine()
    if engine is not None and fig.axes:  # what savefig's measuring pass runs (Figure.draw)
        try:
            engine.execute(fig)  # constrained layout
        except ValueError:  # as Figure.draw: a figure too small to lay out keeps its positions
            pass
    bbox = fig.get_tightbbox().padded(matplotlib.rcParams["savefig.pad_inches"])
    with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)  # keep the positions just computed
    return bbox


class Layout(NamedTuple):
    """What :func:`lay_out` fixed in a figure: the area to save (inches), and where it put each
    Axes (its original and active position and anchor, colour bars included) and the figure's
    own titles (``suptitle``, ``supxlabel``, ``supylabel``: position, vertical alignment)."""

    bbox: object
    axes: tuple
    titles: tuple


_TITLES = ("_suptitle", "_supxlabel", "_supylabel")


def laid_out(fig) -> Layout:
    """:func:`lay_out` ``fig`` and return everything the layout fixed, so that another drawing
    of the same figure in the other theme can take it (:func:`lay_out_like`)."""
    bbox = lay_out(fig)
    axes = tuple((type(ax).__name__, ax.get_position(original=True).frozen(),
                  ax.get_position(original=False).frozen(), ax.get_anchor()) for ax in fig.get_axes())
    titles = tuple((name, tuple(t.get_position()), t.get_verticalalignment())
                   for name in _TITLES if (t := getattr(fig, name, None)) is not None)
    return Layout(bbox, axes, titles)


def lay_out_like(fig, layout: Layout):
    """Give ``fig`` the layout another drawing of the same figure got from :func:`laid_out`, if
    their structure is the same (the same kinds of Axes in the same order, the same figure
    titles, no subfigures); returns the area to save, or ``None`` (lay it out itself then).

    A theme changes colours only (:func:`style.theme`), and a layout depends on sizes and text
    only, so the dark drawing of a figure has the light one's layout: taking it saves the dark
    drawing the constrained-layout pass and the measuring of its tight box (about 40 ms a
    figure, 5 s of a clean build), and gives the same bytes as laying it out again
    (tests/test_render_speed.py compares the two)."""
    import matplotlib

    mine = fig.get_axes()
    titles = tuple(name for name in _TITLES if getattr(fig, name, None) is not None)
    if (fig.subfigs or len(mine) != len(layout.axes) or titles != tuple(t[0] for t in layout.titles)
            or any(type(ax).__name__ != kind for ax, (kind, *_) in zip(mine, layout.axes))):
        return None
    for ax, (_, original, active, anchor) in zip(mine, layout.axes):
        ax._set_position(original, which="original")
        ax._set_position(active, which="active")
        ax.set_anchor(anchor)
    for name, position, va in layout.titles:
        getattr(fig, name).set_position(position)
        getattr(fig, name).set_verticalalignment(va)
    with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)  # as lay_out leaves it: the positions are fixed
    return layout.bbox


_CLIP_ID = re.compile(rb'(id="|url\(#)(p[0-9a-f]{10})\b')


def _stable_clip_ids(svg: bytes) -> bytes:
    """Clip-path ids renamed ``clip1``, ``clip2``, ... in order of first use.

    matplotlib's SVG writer hashes the salt with the clip path's ``id()`` (a memory address)
    when an artist is clipped to a path rather than a rectangle, so the same figure saved
    twice gets different ids; renaming them by order makes the file a function of the figure.
    """
    names: dict[bytes, bytes] = {}

    def rename(m: re.Match) -> bytes:
        new = names.setdefault(m.group(2), b"clip%d" % (len(names) + 1))
        return m.group(1) + new

    return _CLIP_ID.sub(rename, svg)


_INDENT = re.compile(rb"\n[ \t]+")
_STYLE_ATTR = re.compile(rb'style="([^"]*)"')
_STYLE_GAP = re.compile(rb"\s*([:;])\s*")
_NO_ROTATION = re.compile(rb' transform="rotate\(-?0 [-0-9.e]+ [-0-9.e]+\)"')


def compact_svg(svg: bytes) -> bytes:
    """matplotlib's SVG without what draws nothing: the indentation of each line (elements stand
    one to a line, text included, so no text loses a space; base64 data ignores white space),
    the spaces around ``:`` and ``;`` in style attributes, and ``rotate(0 x y)`` transforms. The
    same picture in 8 % fewer bytes (the site's figures: 6.2 MB -> 5.7 MB)."""
    svg = _INDENT.sub(b"\n", svg)
    svg = _STYLE_ATTR.sub(lambda m: b'style="' + _STYLE_GAP.sub(rb"\1", m.group(1)).rstrip(b";") + b'"', svg)
    return _NO_ROTATION.sub(b"", svg)


def _palette_png(image: bytes, size: tuple | None = None) -> bytes:
    """The same picture as a 256-colour PNG: a third of the bytes, no visible change for a chart.

    ``image`` is a PNG, or raw RGBA pixels of ``size`` (width, height). A figure is flat
    colours, anti-aliased edges and at most one colour map, which 256 colours hold without
    dithering. Pillow's maximum-coverage quantizer picks them in 60 % of median cut's time
    (the quantizer was 40 % of a PNG's cost). Measured on the site's figures, light and dark:
    no pixel off by more than 13 of 255 in a channel (median cut: up to 81, on the rare colours
    of an annotated heatmap), at most 2.6 on average over one figure, and 6 % fewer bytes.
    Deterministic: same input, same bytes. zlib level 7 gives files about 6 % larger than
    level 9 (``optimize``) in a fifth of its time.
    """
    from PIL import Image

    if size is None:
        with Image.open(io.BytesIO(image)) as im:
            rgb = im.convert("RGB")
    else:
        if len(image) != 4 * size[0] * size[1]:
            raise ValueError(f"expected {size[0]} x {size[1]} RGBA pixels, got {len(image)} bytes")
        rgb = Image.frombuffer("RGBA", size, image, "raw", "RGBA", 0, 1).convert("RGB")
    quantized = rgb.quantize(colors=256, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    quantized.save(out, format="PNG", compress_level=7)
    return out.getvalue()


def salt_for(stem: str, theme: str = "light", layout: str = "wide") -> str:
    """The SVG id salt of a figure's variant: the stem for the light wide figure, then
    ``-dark``, ``-svg_narrow``, ``-svg_narrow_dark`` (the site's roles), distinct per file."""
    if layout == "narrow":
        return f"{stem}-svg_narrow" + ("_dark" if theme == "dark" else "")
    return stem + ("-dark" if theme == "dark" else "")


def write_many(module, data: dict, paths, *, theme: str, salt: str, layout: str = "wide",
               timings: dict | None = None, like: Layout | None = None, laid=None) -> Layout | None:
    """One drawing of ``data``, laid out once (:func:`lay_out`), saved to each of ``paths``
    (image formats by suffix). Each file is the same bytes as :func:`write` gives alone.

    ``like``: the :class:`Layout` of this figure drawn in the other theme (same ``layout``),
    taken instead of laying the figure out again where its structure matches
    (:func:`lay_out_like`). Returns the drawing's layout (``None`` if it was taken from
    ``like``). ``timings``, if given, gains ``"draw"`` (drawing and laying out) and one entry
    per path (keyed by the path) in seconds. ``laid``, if given, is called once the figure is
    drawn and laid out, before the first save (the build ends its trace there)."""
    import time

    import matplotlib.pyplot as plt

    t = {} if timings is None else timings
    with style.theme(theme), style.layout_of(layout):
        t0 = time.perf_counter()
        fig = module.draw(data)
        try:
            fixed = None
            bbox = lay_out_like(fig, like) if like is not None else None
            if bbox is None:
                fixed = laid_out(fig)
                bbox = fixed.bbox
            t["draw"] = t.get("draw", 0.0) + time.perf_counter() - t0
            if laid is not None:
                laid()
            for path in paths:
                t0 = time.perf_counter()
                save_figure(fig, Path(path), salt=salt, bbox_inches=bbox)
                t[path] = time.perf_counter() - t0
        finally:
            plt.close(fig)
    return fixed


def write(module, data: dict, path: Path, *, theme: str = "light", salt: str | None = None,
          layout: str = "wide", alt: str | None = None) -> Path:
    """Write ``data`` (from ``module.data``) to ``path`` in the format its suffix names. A
    figure's ``.md`` is an image line for the SVG of the same name beside it, described by
    ``alt`` (the docstring's title by default: the figure at its default parameters)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    name = Path(module.__file__).stem
    if fmt not in ALL_FORMATS:
        raise ValueError(f"--out must end in one of .{', .'.join(ALL_FORMATS)}; got {path.name!r}")
    if fmt == "csv":
        path.write_text(to_csv(data), encoding="utf-8")
    elif fmt == "json":
        path.write_text(to_json(data), encoding="utf-8")
    elif fmt == "md":
        if hasattr(module, "table"):
            md = module.table(data)
            check_table_markdown(md, nan_columns(module))  # also a table written without markdown_table
            path.write_text(md.rstrip() + "\n", encoding="utf-8")
        else:
            title = alt or (module.__doc__ or name).strip().splitlines()[0]
            title = title.replace("[", "(").replace("]", ")")
            path.write_text(f"![{title}]({path.with_suffix('.svg').name})\n", encoding="utf-8")
    else:
        if not hasattr(module, "draw"):
            raise ValueError(f"{name} is a table: write .md, .csv or .json, not .{fmt}")
        write_many(module, data, [path], theme=theme, salt=salt or salt_for(name, theme, layout), layout=layout)
    return path
