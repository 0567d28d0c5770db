"""Writing a figure script's outputs: image formats, CSV, JSON and Markdown.

Every writer is deterministic: the same data and script give the same bytes (SVG ids
are salted per figure and no dates are written), so two builds of the site are identical.
"""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np

from . import style

IMAGE_FORMATS = ("svg", "png", "pdf")
DATA_FORMATS = ("csv", "json")
ALL_FORMATS = IMAGE_FORMATS + DATA_FORMATS + ("md",)


def jsonable(value):
    """Numpy arrays and scalars as plain lists and numbers, recursively."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def to_json(data: dict) -> str:
    return json.dumps(jsonable(data), indent=1, sort_keys=True) + "\n"


def _rows(prefix: str, value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _rows(f"{prefix}.{k}" if prefix else str(k), v)
        return
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            yield from _rows(f"{prefix}.{i}", v)
        return
    arr = np.asarray(value, dtype=object if isinstance(value, (list, tuple)) else None)
    if arr.ndim == 0:
        yield prefix, "", jsonable(arr.item() if hasattr(arr, "item") else value)
        return
    for idx, v in np.ndenumerate(arr):
        yield prefix, ";".join(map(str, idx)), jsonable(v)


def to_csv(data: dict) -> str:
    """Long-format CSV of every value in ``data``: ``name, index, value`` (index ``i;j`` for 2-D).

    Floats carry 7 significant digits; ``--out x.json`` gives every digit.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["name", "index", "value"])
    for name, index, value in _rows("", data):
        if isinstance(value, float):
            value = f"{value:.7g}"  # float32-level precision keeps big tables small; JSON keeps all digits
        w.writerow([name, index, value])
    return buf.getvalue()


#: Arrays larger than this stay out of the wide CSV (the long CSV and the JSON hold them).
WIDE_MAX_CELLS = 1_000_000


def _grids(prefix: str, value, siblings: dict):
    """``(name, 2-D array, row labels, column labels)`` for every numeric 2-D array in ``value``
    (a 3-D array gives one grid per slice). Labels are a sibling list of texts as long as the
    rows (columns); without one, positions 0, 1, ... label them."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _grids(f"{prefix}.{k}" if prefix else str(k), v, value)
        return
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            yield from _grids(f"{prefix}.{i}", v, {})
        return
    if not isinstance(value, (list, tuple, np.ndarray)):
        return
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return  # ragged, or not numbers
    if arr.ndim not in (2, 3) or arr.size == 0 or arr.size > WIDE_MAX_CELLS:
        return

    def labels(n):
        for v in siblings.values():
            if isinstance(v, (list, tuple)) and len(v) == n and all(isinstance(t, str) for t in v):
                return [str(t) for t in v]
        return list(range(n))

    rows, cols = labels(arr.shape[-2]), labels(arr.shape[-1])
    if arr.ndim == 2:
        yield prefix, arr, rows, cols
    else:
        for i, grid in enumerate(arr):
            yield f"{prefix}[{i}]", grid, rows, cols


def to_wide_csv(data: dict) -> str | None:
    """Every 2-D array of ``data`` as a grid a spreadsheet opens as rows x columns, or ``None``
    when ``data`` holds none. Each grid starts with a header row (its name, then the column
    labels) and each row with its label; grids are separated by an empty line."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    found = False
    for name, grid, rows, cols in _grids("", data, {}):
        if found:
            w.writerow([])
        found = True
        w.writerow([name, *cols])
        for label, row in zip(rows, grid):
            w.writerow([label, *(_cell(v) for v in row)])
    return buf.getvalue() if found else None


def _cell(v: float) -> str:
    if np.isnan(v):
        return ""
    return f"{v:.7g}"


def markdown_table(header, rows, align: str) -> str:
    """A Markdown table: ``header`` and each row are lists of cell strings; ``align`` has one
    letter per column, ``l`` (left) or ``r`` (right)."""
    if len(align) != len(header) or set(align) - {"l", "r"}:
        raise ValueError(f"align must give l or r for each of the {len(header)} columns, got {align!r}")
    rule = "|" + "".join("---:|" if a == "r" else "---|" for a in align)
    lines = ["| " + " | ".join(header) + " |", rule]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a table row has {len(row)} cells, the header {len(header)}: {row!r}")
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def save_figure(fig, path: Path, *, salt: str) -> None:
    """Save ``fig`` to ``path`` (svg/png/pdf by suffix) with no dates and a fixed SVG salt."""
    import matplotlib.pyplot as plt

    fmt = path.suffix.lstrip(".")
    meta = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {"Software": None}}[fmt]
    kwargs = {"dpi": 150} if fmt == "png" else {}
    if fmt == "png":
        # A PNG may travel to slides: give it an opaque background in its theme's colour.
        kwargs["facecolor"] = style.colors()["bg"]
    with plt.rc_context({"svg.hashsalt": salt}):
        if fmt == "svg":
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, metadata=meta, **kwargs)
            path.write_bytes(_stable_clip_ids(buffer.getvalue()))
            return
        if fmt != "png":
            fig.savefig(path, format=fmt, metadata=meta, **kwargs)
            return
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=meta, **kwargs)
    path.write_bytes(_palette_png(buffer.getvalue()))


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


def _palette_png(png: bytes) -> bytes:
    """The same picture as a 256-colour PNG: a third of the bytes, no visible change for a chart.

    A figure is flat colours, anti-aliased edges and at most one colour map, which 256
    median-cut colours hold without dithering. Deterministic: same input, same bytes.
    """
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        quantized = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                                               dither=Image.Dither.NONE)
    out = io.BytesIO()
    quantized.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _draw_and_save(module, data: dict, path: Path, *, theme: str, salt: str, layout: str = "wide") -> None:
    import matplotlib.pyplot as plt

    with style.theme(theme), style.layout_of(layout):
        fig = module.draw(data)
        try:
            save_figure(fig, path, salt=salt)
        finally:
            plt.close(fig)


def write_many(module, data: dict, paths, *, theme: str, salt: str, layout: str = "wide") -> None:
    """One drawing of ``data`` saved to each of ``paths`` (image formats by suffix), in order."""
    import matplotlib.pyplot as plt

    with style.theme(theme), style.layout_of(layout):
        fig = module.draw(data)
        try:
            for path in paths:
                save_figure(fig, Path(path), salt=salt)
        finally:
            plt.close(fig)


def write(module, data: dict, path: Path, *, theme: str = "light", salt: str | None = None,
          layout: str = "wide") -> Path:
    """Write ``data`` (from ``module.data``) to ``path`` in the format its suffix names."""
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
            path.write_text(module.table(data).rstrip() + "\n", encoding="utf-8")
        else:
            title = (module.__doc__ or name).strip().splitlines()[0]
            path.write_text(f"![{title}]({name}.svg)\n", encoding="utf-8")
    else:
        if not hasattr(module, "draw"):
            raise ValueError(f"{name} is a table: write .md, .csv or .json, not .{fmt}")
        _draw_and_save(module, data, path, theme=theme, salt=salt or name, layout=layout)
    return path
