"""Shared look of every figure: fonts, palette, light/dark themes and a heatmap helper.

Importing this module changes nothing global: the backend is chosen by the build and the
command line, never here. Figures are drawn twice, once per theme, and the pages show the one matching the
reader's palette. Backgrounds are transparent so a figure sits on the page colour;
text and spines take the theme's foreground. Colour maps are colour-blind safe
(viridis family for magnitudes, a blue-orange diverging map for signed values); the
line palette is Okabe & Ito's.
"""
from __future__ import annotations

import contextlib
import contextvars
import decimal
import functools
import re
from fractions import Fraction

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import to_rgb

from .palette import DIVERGING, OKABE_ITO, SEQUENTIAL, THEMES  # noqa: F401  (style.THEMES, ... for the scripts)
from .reading import bound, read, reads_one

#: The theme that ``with theme(...)`` set in this context (light outside any).
_THEME = contextvars.ContextVar("figure_theme", default="light")
#: ``"wide"`` (the content column of a desktop page, and every download) or ``"narrow"`` (a
#: phone's column, about 360 px). A script with ``NARROW = True`` is drawn in both layouts.
LAYOUTS = ("wide", "narrow")
_LAYOUT = contextvars.ContextVar("figure_layout", default="wide")
#: The widest a figure may be, in inches after the tight bounding box, and still keep
#: 11 pt text at 9 px or more in a phone's 358 px column (11 pt x 358 / 6.0 in = 9.1 px);
#: on a desktop the same figure is drawn at its own size, 11 pt = 14.7 px.
MAX_WIDTH_IN = 6.0


def _luminance(color) -> float:
    """WCAG 2 relative luminance of a colour."""
    channels = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in to_rgb(color)]
    return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]


def contrast(a, b) -> float:
    """WCAG 2 contrast ratio of two colours, 1 to 21."""
    low, high = sorted((_luminance(a), _luminance(b)))
    return (high + 0.05) / (low + 0.05)


def legible(color, ratio: float = 4.5, background: str | None = None) -> str:
    """``color`` with its lightness moved (hue and saturation kept) until it has at least
    ``ratio`` contrast with ``background`` (the current theme's page colour by default):
    darker on a light page, lighter on a dark one. WCAG asks 4.5:1 of text and 3:1 of the
    lines and marks a reader needs. Returns ``#rrggbb``."""
    if not 1 <= ratio <= 21:
        raise ValueError(f"ratio must be between 1 and 21, got {ratio!r}")
    return _legible(to_rgb(color), ratio, to_rgb(background or colors()["bg"]))


@functools.lru_cache(maxsize=4096)
def _legible(rgb: tuple, ratio: float, bg: tuple) -> str:
    """:func:`legible` of RGB tuples, remembered: a figure asks for its palette many times,
    and each answer is a search in steps of 0.005 of lightness."""
    import colorsys

    from matplotlib.colors import to_hex

    step = -0.005 if _luminance(bg) > 0.18 else 0.005
    h, light, s = colorsys.rgb_to_hls(*rgb)
    out = to_hex(rgb)
    while contrast(out, bg) < ratio and 0 <= light <= 1:
        light += step
        out = to_hex(colorsys.hls_to_rgb(h, min(max(light, 0.0), 1.0), s))
    return out


#: Contrast on the page colour: WCAG's 4.5:1 for text; 3:1 for lines and marks, with a margin
#: (the reader's page colour may differ a little from the theme's ``bg``).
TEXT_CONTRAST, LINE_CONTRAST = 4.5, 3.3


def palette() -> list[str]:
    """The line palette of the current theme: Okabe & Ito's hues, each at ``LINE_CONTRAST``
    or more on the theme's page colour (on white, orange, sky blue and yellow are darkened;
    on the dark page, blue is lightened)."""
    return [legible(c, LINE_CONTRAST) for c in OKABE_ITO]


def ink(color) -> str:
    """A colour for *text* in ``color``'s hue: ``TEXT_CONTRAST`` or more on the theme's page."""
    return legible(color, TEXT_CONTRAST)


def colors() -> dict:
    """The colours (``fg``, ``muted``, ``grid``, ``accent``, ``bg``) of the theme that the
    enclosing ``with theme(...)`` set; light outside one."""
    return THEMES[_THEME.get()]


@contextlib.contextmanager
def theme(name: str = "light"):
    """Draw inside ``with theme("dark"):`` to get the dark variant of a figure."""
    if name not in THEMES:
        raise ValueError(f"theme must be one of {', '.join(THEMES)}, got {name!r}")
    c = THEMES[name]
    token = _THEME.set(name)
    rc = {
        "font.family": "sans-serif",
        "font.size": 11,
        "axes.titlesize": 12,
        "axes.labelsize": 11,
        "text.color": c["fg"],
        "axes.labelcolor": c["fg"],
        "axes.edgecolor": c["muted"],
        "axes.titlecolor": c["fg"],
        "xtick.color": c["fg"],
        "ytick.color": c["fg"],
        "grid.color": c["grid"],
        "axes.prop_cycle": matplotlib.cycler(color=palette()),
        "figure.facecolor": "none",
        "axes.facecolor": "none",
        "savefig.facecolor": "none",
        "savefig.bbox": "tight",
        "savefig.pad_inches": 0.08,
        "legend.frameon": False,
        # text stays text (small files, selectable, sharp at any zoom); export.py embeds a subset
        # of each font it uses (fonts.py), so it looks the same without DejaVu on the machine
        "svg.fonttype": "none",
        "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial", "sans-serif"],
        "image.cmap": SEQUENTIAL,
    }
    try:
        with plt.rc_context():
            # from matplotlib's own defaults, not from a matplotlibrc the machine or the working
            # folder holds (one with axes.autolimit_mode or axes.formatter.limits changed the
            # ticks a figure prints, under the same cache key: pass thirty-nine)
            matplotlib.rcdefaults()
            plt.rcParams.update(rc)
            yield c
    finally:
        _THEME.reset(token)


def layout() -> str:
    """The layout the enclosing ``with layout_of(...)`` set: ``"wide"`` (default) or ``"narrow"``.

    A figure script that declares ``NARROW = True`` reads it in ``draw()`` to stack its
    panels for a phone; the site shows that variant on screens under 600 px wide.
    """
    return _LAYOUT.get()


def narrow() -> bool:
    """``True`` inside ``with layout_of("narrow")``: draw for a phone's column."""
    return _LAYOUT.get() == "narrow"


@contextlib.contextmanager
def layout_of(name: str = "wide"):
    """Draw inside ``with layout_of("narrow"):`` to get the phone layout of a figure."""
    if name not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {name!r}")
    token = _LAYOUT.set(name)
    try:
        yield name
    finally:
        _LAYOUT.reset(token)


def _text_color_for(rgb) -> str:
    r, g, b = to_rgb(rgb)
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#111111" if luminance > 0.5 else "#ffffff"


def cell_text(value: float, fmt: str = "{:.2f}", *, more: int = 3, compact: bool = False) -> str:
    """``value`` in a heatmap's cell, written by ``fmt``, unless that reads a value that is not
    zero as zero: then to one significant digit (0.003 is "0.003", never "0.00" or "-0.00"; a
    weight of 9e-05 "9e-05"); a zero reads unsigned ("0.00", never "-0.00"). One strictly
    between -1 and 1 that would read as 1 or -1 gets up to ``more`` more digits, then "≈"
    (a figure whose cells are narrow asks for fewer).

    >>> [cell_text(v) for v in (0.25, 0.0029999, -0.0029999, 9.02e-05, -0.0, 0.999, 0.99995, 1 - 1e-9)]
    ['0.25', '0.003', '-0.003', '9e-05', '0.00', '0.999', '0.99995', '≈1.00']
    >>> cell_text(0.99995, more=1), cell_text(0.996, more=1)
    ('≈1.00', '0.996')

    ``compact``: a grid of many small cells, where "3e-53" and "0.99999" ran into their
    neighbours: a value that ``fmt`` would write as 0 or as ±1 is written as the bound it
    passes, "<.01" or ">.99" (at ``fmt``'s last place, without the leading zero), which is
    true and no wider than "0.50".

    >>> [cell_text(v, compact=True) for v in (3e-53, 0.99999, 0.5, 0.0, 1.0, -0.004)]
    ['<.01', '>.99', '0.50', '0.00', '1.00', '>-.01']
    """
    text = fmt.format(value)
    reads_zero = not re.search(r"[1-9]", re.split(r"[eE]", text)[0])
    m = re.fullmatch(r"\{:\.(\d+)f\}", fmt)
    if compact and m and np.isfinite(value) and (value != 0 and reads_zero or -1 < value < 1 and reads_one(text)):
        unit = 10.0 ** -int(m.group(1))  # the last place fmt writes
        edge = f"{unit:.{m.group(1)}f}" if reads_zero else f"{1 - unit:.{m.group(1)}f}"
        edge = edge.removeprefix("0") if "." in edge else edge  # ".01"; at no decimals the bound is "0" or "1"
        if edge == "0":  # (".0f": a value between 0.5 and 1 is "<1", one below 0.5 ">0", as written)
            edge = "1" if reads_one(text) else "0"
            return (("<" if value > 0 else ">-") if reads_one(text) else (">" if value > 0 else "<-")) + edge
        return (("<" if value > 0 else ">-") if reads_zero else (">" if value > 0 else "<-")) + edge
    if reads_zero and np.isfinite(value) and value != 0:
        return f"{value:.1g}"
    if -1 < value < 1 and reads_one(text):  # a weight of 0.99995 is not all of it: up to `more` more digits
        m = re.fullmatch(r"\{:([^{}]*?)\.(\d+)([fFgG%])\}", fmt)
        for extra in range(1, more + 1) if m else ():
            longer = f"{{:{m.group(1)}.{int(m.group(2)) + extra}{m.group(3)}}}".format(value)
            if not reads_one(longer):
                return longer
        return f"≈{text}"
    return text.replace("-", "", 1) if reads_zero and value == 0 else text


def heatmap(data, row_labels=None, col_labels=None, ax=None, *, cmap=SEQUENTIAL, vmin=None, vmax=None,
            annotate: bool | str = False, colorbar: bool | str = False, xlabel=None, ylabel=None, title=None,
            fontsize=10, compact: bool = False):
    """Draw ``data`` as a heatmap with labelled rows/columns; returns ``(image, texts)``.

    ``annotate`` may be a format string (``"{:.2f}"``) to print each value in its cell, in
    black or white according to the cell's brightness so it reads on any colour.
    ``colorbar`` may be a label string. ``compact``: small cells (:func:`cell_text`).
    """
    data = np.asarray(data, dtype=float)
    if ax is None:
        ax = plt.gca()
    im = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    if row_labels is not None:
        ax.set_yticks(range(data.shape[0]), labels=row_labels)
    if col_labels is not None:
        ax.set_xticks(range(data.shape[1]), labels=col_labels)
    if row_labels is None:
        whole_ticks(ax, "y")  # rows and columns are counted: no tick at row 0.5
    if col_labels is None:
        whole_ticks(ax, "x")
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    texts = []
    if annotate:
        fmt = annotate if isinstance(annotate, str) else "{:.2f}"
        for (i, j), value in np.ndenumerate(data):
            color = _text_color_for(im.cmap(im.norm(value)))
            texts.append(ax.text(j, i, cell_text(value, fmt, compact=compact), ha="center", va="center", color=color,
                                 fontsize=fontsize))
    if colorbar:
        cb = ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        cb.outline.set_visible(False)
        if isinstance(colorbar, str):
            cb.set_label(colorbar)
    return im, texts


def new_figure(width: float = 6.4, height: float = 4.0, **kwargs):
    """``plt.subplots`` with the project's defaults (constrained layout)."""
    return plt.subplots(figsize=(width, height), layout="constrained", **kwargs)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun, singular for one, with thousands separators: "1 head", "32 heads",
    "4,096 tokens" (tables wrote "1 heads" and "1 tokens" at the ends of their ranges).

    >>> counted(1, "head"), counted(32, "head"), counted(4096, "token"), counted(1, "query", "queries")
    ('1 head', '32 heads', '4,096 tokens', '1 query')
    """
    if (isinstance(n, bool) or not isinstance(n, (int, np.integer, float, np.floating)) or not float(n).is_integer()
            or n < 0):
        raise ValueError(f"n must be a whole number, 0 or more, to count {plural or noun + 's'}; got {n!r}")
    n = int(n)  # a count held as a float (1.0) is written as the count, "1 head", not "1.0 head"
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def position_labels(n: int, most: int = 4) -> list[str]:
    """Labels for the ``n`` rows or columns of a heatmap of positions 0 .. n-1: the multiples of
    a step of 1, 2, 5, 10, 20, 50, ... (the smallest giving at most ``most`` of them) and the
    last position, the others blank. A multiple closer to the last than half a step is left
    blank, so no two labels run together (every fifth and the last read "6063" at n = 64).

    >>> [t for t in position_labels(16) if t], [t for t in position_labels(64) if t]
    (['0', '5', '10', '15'], ['0', '20', '40', '63'])
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a whole number of positions, 1 or more; got {n!r}")
    if isinstance(most, bool) or not isinstance(most, (int, np.integer)) or most < 1:
        raise ValueError(f"most must be a whole number of labels, 1 or more; got {most!r}")
    n = int(n)
    step = next(s * 10**k for k in range(40) for s in (1, 2, 5) if -(-n // (s * 10**k)) <= most)
    return [str(j) if j == n - 1 or (j % step == 0 and n - 1 - j >= step / 2) else "" for j in range(n)]


def whole_ticks(ax, axis: str = "x") -> None:
    """Ticks at whole numbers only, on an axis that counts (positions, steps, dimensions, pairs):
    over a few points matplotlib ticked "position 0.25" and "step 1.50". Over a longer axis
    they are the ticks matplotlib chooses anyway (the same steps of 1, 2, 5 and 10)."""
    from matplotlib.ticker import MaxNLocator

    for name in ("x", "y") if axis == "both" else (axis,):  # (one tick, at 0, for an axis of one point)
        locator = MaxNLocator("auto", steps=[1, 2, 2.5, 5, 10], integer=True, min_n_ticks=1)
        getattr(ax, f"{name}axis").set_major_locator(locator)


def plain_log_ticks(ax, axis: str = "both") -> None:
    """Label a log axis with plain numbers (0.25, 0.5, 1, 2, ..., 512, 1024) instead of powers,
    each exactly the tick's value (2**-9 is "0.001953125", where ``g`` wrote "0.00195312").

    (matplotlib's ScalarFormatter would print 0.25 as "0" on a log axis.)

    An axis that spans less than a decade holds one power of ten or none: its minor ticks at
    2 and 5 times a power are labelled too, the same way (matplotlib labelled every minor tick
    there, "5×10¹6×10¹7×10¹" running together at a single width: pass forty-eight); over a
    decade or more the minor ticks stay unlabelled, as before.
    """
    import math

    from matplotlib.ticker import FuncFormatter

    def plain(value, _pos) -> str:
        return f"{value:.0f}" if value >= 1 and float(value).is_integer() else exact(value)

    for name in ("x", "y") if axis == "both" else (axis,):
        ax_axis = getattr(ax, f"{name}axis")

        def minor(value, _pos, ax_axis=ax_axis) -> str:
            lo, hi = sorted(ax_axis.get_view_interval())
            if not (0 < lo and hi / lo < 10) or value <= 0:
                return ""
            mantissa = round(value / 10 ** math.floor(math.log10(value) + 1e-9), 6)
            return plain(value, None) if mantissa in (2, 5) else ""

        ax_axis.set_major_formatter(FuncFormatter(plain))
        ax_axis.set_minor_formatter(FuncFormatter(minor))


def exact(value: float) -> str:
    """A parameter as a label shows it: the short ``g`` form (0.9, 1e-05, 10000) when that reads
    back as the same float, else the shortest text that does (``repr``), so ``top_p=0.9999999``
    is labelled 0.9999999 and never "1". Integers in float form lose their ``.0``; a zero is
    "0", unsigned.

    >>> exact(0.9), exact(0.9999999), exact(10000.0), exact(1e-5), exact(123456789.0)
    ('0.9', '0.9999999', '10000', '1e-05', '123456789')
    """
    x = float(value)
    if x == 0:
        return "0"
    short = f"{x:g}"
    if float(short) == x:
        return short
    if x.is_integer() and abs(x) < 1e16:  # past 2**53 too (repr wrote 9007199254740994.0); from 1e16 repr has an exponent
        return str(int(x))
    return repr(x)


def equals(value: float, digits: int = 3) -> str:
    """``"= x"`` with the parameter as :func:`exact` writes it when that is at most 8 characters,
    else ``"≈ x"`` rounded to ``digits`` significant digits (τ = √2 reads "≈ 1.41", τ = 1.005
    "= 1.005": a label never rounds a value without saying so).

    >>> equals(1.005), equals(2 ** 0.5), equals(0.5), equals(12345.0)
    ('= 1.005', '≈ 1.41', '= 0.5', '= 12345')
    """
    text = exact(value)
    return f"= {text}" if len(text) <= 8 else stated(value, f".{digits}g")


def stated(value: float, spec: str = ".6g") -> str:
    """``"= x"`` with ``value`` written by ``spec`` when that text reads back as the same float,
    else ``"≈ x"``: a slope of 2^-0.5 is "≈ 0.707107", one of 2^-8 "= 0.00390625".

    >>> stated(2 ** -0.5), stated(2 ** -8), stated(10 ** -0.5, ".3g"), stated(0.5, ".3g")
    ('≈ 0.707107', '= 0.00390625', '≈ 0.316', '= 0.5')
    """
    x = float(value)
    if not np.isfinite(x):
        raise ValueError(f"value must be a finite number; got {value!r}")
    text = format(x, spec)
    if float(text) == 0:
        text = text.replace("-", "", 1)  # -1e-4 to three places is "≈ 0.000", never "≈ -0.000"
    return f"{'=' if float(text) == x else '≈'} {text}"


#: Between a number and its unit: a table cell or label never breaks "4.29 GFLOP" across lines.
NBSP = "\u00a0"


def three_digits(x: float) -> str:
    """``x`` (at least 1) to three significant digits, every digit of its whole part kept;
    trailing zeros are dropped only where the shorter text is the value itself: 2.5, 1.51,
    15.6, 520, 1,234, 16 for 16.0, but 1.00 for 1.000977 and 4.00 for 3.996 (a bare "1" or
    "4" reads as exact: "1 TiB" stood for 1.001 TiB beside another 1.002 TiB, pass
    fifty-nine). The number of decimals follows the rounded text, not the float: 9.995
    (9.99499999...) is "9.99", 9.996 "10.0".

    >>> [three_digits(x) for x in (2.5, 1.514, 15.64, 520.0, 1234.0, 9.995, 9.996, 99.95, 99.96, 3.996, 16.0)]
    ['2.5', '1.51', '15.6', '520', '1,234', '9.99', '10.0', '100', '100', '4.00', '16']
    """
    text = f"{x:.2f}"
    if float(text) >= 10:
        text = f"{x:.1f}"
        if float(text) >= 100:
            text = f"{x:,.0f}"
    short = text.rstrip("0").rstrip(".") if "." in text else text
    return short if decimal.Decimal(short.replace(",", "")) == decimal.Decimal(float(x)) else text


def sig(x: float, digits: int, *, sep: bool = False) -> str:
    """``x`` to ``digits`` significant digits (Python's ``g``; ``sep``: with thousands separators),
    with the digits that tell a value strictly between -1 and 1 from 1 or -1: a probability of
    0.99995458 at four is "0.99995", never "1" (``g`` never writes a number that is not zero as 0).

    >>> sig(0.99995458, 4), sig(4.54e-05, 4), sig(-0.99999, 3), sig(1.0, 4), sig(123456.0, 3)
    ('0.99995', '4.54e-05', '-0.99999', '1', '1.23e+05')
    """
    x, comma = float(x) + 0.0, "," if sep else ""
    text = f"{x:{comma}.{digits}g}"
    while -1 < x < 1 and reads_one(text) and digits < 17:
        digits += 1
        text = f"{x:{comma}.{digits}g}"
    return text


def sci(x: float, places: int = 1) -> str:
    """``x`` in scientific notation with ``places`` decimals (a difference of 1.1e-16, the
    float64 round-off between two exact-in-arithmetic results); an exact zero as "0"; and with
    the decimals that tell a value strictly between -1 and 1 from 1 or -1 (0.99996 is
    "9.9996e-01", never "1.0e+00": figures/_kit/reading.py).

    >>> sci(1.1102e-16), sci(0.0), sci(-0.0), sci(0.99996), sci(2.5e3, 2)
    ('1.1e-16', '0', '0', '9.9996e-01', '2.50e+03')
    """
    x = float(x) + 0.0
    if x == 0:
        return "0"
    text = f"{x:.{places}e}"
    while -1 < x < 1 and reads_one(text) and places < 17:
        places += 1
        text = f"{x:.{places}e}"
    return text


def bounded(x: float, places: int, direction: str, *, percent: bool = False) -> str:
    """``x`` rounded ``up`` or ``down`` to ``places`` decimals, for a bound a text states ("up to
    0.87" for a largest score of 0.8649: rounded to nearest, "up to 0.86" cut off the value it
    bounds; figures/_kit/reading.bound); with more decimals where the bound would read a number
    that is not 0 as 0, or one strictly between -1 and 1 as 1 or -1.

    >>> bounded(0.8649, 2, "up"), bounded(0.8649, 2, "down"), bounded(0.99997, 2, "up"), bounded(0.0003, 2, "down")
    ('0.87', '0.86', '0.99997', '0.0003')

    ``percent``: a share as a percentage (``places`` decimals of the percentage), rounded on the
    percentage's own digits (0.07 is "7%" either way, not the 7.000000000000001 of 0.07 × 100).

    >>> bounded(0.1613, 0, "up", percent=True), bounded(0.07, 0, "up", percent=True), bounded(0.99996, 1, "up", percent=True)
    ('17%', '7%', '99.996%')
    """
    x = float(x) + 0.0
    asked = places
    while True:
        fmt = f".{places}{'%' if percent else 'f'}"
        try:
            text = format(bound(x, fmt, direction), fmt)
        except ValueError:
            if places == asked:  # the places the caller asked for: refused, as bound() refuses them
                raise
            # the places this loop added pass what a float holds (0.9999999999999992 at ".14%": pass
            # forty-four): the value itself, every digit of it, is its own bound either way
            digits = f"{decimal.Decimal(repr(x)) * (100 if percent else 1):f}"
            return (digits.rstrip("0").rstrip(".") if "." in digits else digits) + ("%" if percent else "")
        if places < 17 and ((x != 0 and read(text) == 0) or (-1 < x < 1 and reads_one(text))):
            places += 1
            continue
        if x != 0 and read(text) == 0:  # below 17 decimals (1e-20): in powers of ten, rounded the same way
            text = format(bound(x, ".1e", direction), ".1e")
            if percent:  # the bound of the share, times 100 in decimal (exact): "1.0e-20%"
                text = f"{decimal.Decimal(text) * 100:.1e}%"
        return text


def fixed(x: float, places: int, *, sep: bool = False) -> str:
    """``x`` to ``places`` decimals (``sep``: with thousands separators), unless that reads a
    number that is not zero as zero: then to two significant digits, so a weight of 4.5e-05 is
    never a table's "0.0000"; and with the decimals that tell a number strictly between -1 and 1
    from 1 or -1 (0.9998 at two places is "0.9998": not all of it, figures/_kit/reading.py).
    Every decimal number a figure script writes goes through here or
    :func:`share` or :func:`sig` (tests/test_parameter_labels.py holds the scripts to it).

    >>> fixed(0.25, 4), fixed(4.54e-05, 4), fixed(0.0, 3), fixed(-2e-9, 3), fixed(-0.0, 3), fixed(-0.99996, 2)
    ('0.2500', '4.5e-05', '0.000', '-2e-09', '0.000', '-0.99996')
    >>> fixed(12345.678, 2, sep=True)
    '12,345.68'
    """
    x = float(x) + 0.0  # -0.0 + 0.0 is 0.0: a zero reads unsigned, never "-0.000"
    text = f"{x:{',' if sep else ''}.{places}f}"
    if x != 0 and float(text.replace(',', '')) == 0:
        return f"{x:.2g}"
    while -1 < x < 1 and reads_one(text):  # 0.9998 at two places is "0.9998", never "1.00"
        places += 1
        text = f"{x:.{places}f}"
    return text


def share(x: float, places: int) -> str:
    """A weight, probability or accuracy (0 to 1) as :func:`fixed` writes it, which keeps the
    decimals that tell one that is not all from all: 0.9986 to two places is "0.999", never
    "1.00" (a seed that missed answers is not a perfect score), as :func:`percent` never writes
    "100%"; a value outside 0 to 1 is refused.

    >>> share(0.36, 2), share(0.998592, 2), share(1.0, 2), share(0.0036, 2), share(0.99999, 3)
    ('0.36', '0.999', '1.00', '0.0036', '0.99999')
    """
    x = float(x)
    if not 0 <= x <= 1:
        raise ValueError(f"x must be a share from 0 to 1; got {x!r}")
    return fixed(x, places)


def _significant(x: float, digits: int) -> str:
    """``x`` (1 <= x < 10^digits) to ``digits`` significant digits in plain decimals, trailing
    zeros kept: 1.99998 at four is "2.000", 12.0 at four "12.00", 9999.6 at four "10000"."""
    text = f"{x:.{digits - 1}f}"
    for places in range(digits - 1, -1, -1):  # fewer decimals as the whole part grows
        text = f"{x:.{places}f}"
        if len(text.split(".")[0]) + places <= digits:
            return text
    return text


def times(ratio: float, digits: int = 3) -> str:
    """A ratio as "N×", to ``digits`` significant digits whatever its size (27.3×, 0.312×,
    0.0471×; every digit of a whole part of more), so a ratio that is not zero never reads
    "0.0×" and one that is not 1 never reads "1×".

    >>> [times(x) for x in (27.34, 1.0, 0.3123, 0.04707, 1.0004, 1.000001)]
    ['27.3×', '1×', '0.312×', '0.0471×', '1.0004×', '1.000001×']
    >>> times(1.0625, digits=4), times(1.0000001, digits=4), times(1.99998, digits=4)
    ('1.062×', '1.0000001×', '2.000×')
    """
    x = float(ratio) + 0.0  # (-0.0 is 0.0: an unsigned "0×")
    if not np.isfinite(x) or x < 0:
        raise ValueError(f"ratio must be a finite number, 0 or more; got {ratio!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= 17:
        raise ValueError(f"digits must be a whole number from 1 to 17; got {digits!r}")
    # (beyond three digits the trailing zeros stay: 1.99998 at four is "2.000×", not "2×")
    text = (three_digits(x) if digits == 3 else f"{x:,.0f}" if x >= 10 ** digits
            else _significant(x, digits)) if x >= 1 else f"{x:.{digits}g}"
    digits += 2
    while x != 1 and float(text.replace(",", "")) == 1:  # 1.0004, 0.9996, 1.000001: the digits that say so
        text, digits = f"{x:.{digits}g}", digits + 1
    return f"{text}×"


#: Binary units, the largest first: (bytes in one, name).
BINARY_UNITS = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (1, "bytes"))


def binary_unit(n: float) -> tuple[int, str]:
    """(bytes in one, name) of the largest binary unit ``n`` bytes fill at least once (an axis
    whose largest value is 512 KiB reads in KiB, not "0.00049 GiB"); bytes below 1 KiB.

    >>> binary_unit(2**31), binary_unit(524_288), binary_unit(3)
    ((1073741824, 'GiB'), (1024, 'KiB'), (1, 'bytes'))
    """
    if isinstance(n, bool) or not isinstance(n, (int, float, np.integer, np.floating)) or not 0 <= float(n) < float("inf"):
        raise ValueError(f"n must be a finite number of bytes, 0 or more; got {n!r}")
    return next((size, name) for size, name in BINARY_UNITS if n >= size or size == 1)


def _decimal_digits(x: Fraction, places: int) -> str:
    """``x`` (>= 0) to ``places`` decimals, rounded half to even, exactly, with separators."""
    scaled = x * 10**places
    whole, rest = divmod(scaled.numerator, scaled.denominator)
    whole += 2 * rest > scaled.denominator or (2 * rest == scaled.denominator and whole % 2)
    text = f"{whole:0{places + 1}d}"
    return f"{int(text[:-places]):,}.{text[-places:]}"


def _number_of(text: str) -> Fraction:
    """The number a size's text states: "1,234.5 MiB" is 1234.5."""
    return Fraction(text.split(NBSP)[0].replace(",", ""))


def binary_size(n: int, *, apart_from: int | None = None) -> str:
    """A byte count in the largest binary unit it fills (GiB, MiB, KiB), to three significant
    digits, or in bytes below 1 KiB: a count that is not zero never reads 0, and two counts in
    a table read as far apart as they are (whole MiB wrote 2.5 MiB and 1.51 MiB both as "2 MiB").
    The number and its unit are joined by a no-break space (:data:`NBSP`).

    >>> [binary_size(n).replace(NBSP, " ") for n in (2_621_440, 1_587_200, 40_000, 1000, 2**34)]
    ['2.5 MiB', '1.51 MiB', '39.1 KiB', '1,000 B', '16 GiB']

    ``apart_from``: another count the text stands beside; where the two differ but their texts
    would not, this one gets the digits that tell them apart (8 GiB and 8.0039 GiB both read
    "8 GiB" in a cell that said "more": pass fifty-two): more decimals than either text has,
    as many as both need, so that two counts given each other read apart (1.0157 and 1.0236
    MiB both read "1.0 MiB" when each took the fewest decimals that differ from the other's
    plain "1.02": pass sixty-one). A text that is its count exactly stays as it is.

    >>> binary_size(2**33 + 2**22, apart_from=2**33).replace(NBSP, " ")
    '8.004 GiB'
    >>> [binary_size(a, apart_from=b).replace(NBSP, " ") for a, b in ((1_065_024, 1_073_280), (1_073_280, 1_065_024))]
    ['1.016 MiB', '1.024 MiB']
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a whole number of bytes, 0 or more; got {n!r}")
    for scale, unit in BINARY_UNITS[:-1]:  # (bytes below 1 KiB: the count itself)
        if n >= scale * 0.9995:  # 1,048,575 bytes is "1 MiB", not "1,024 KiB"
            text = f"{three_digits(n / scale)}{NBSP}{unit}"
            other = apart_from is not None and apart_from != n and binary_size(apart_from)
            exact = Fraction(int(n), scale)
            if other and other.endswith(unit) and _number_of(text) == _number_of(other) and _number_of(text) != exact:
                # (the same number: "8.00 GiB" beside "8 GiB" too; a text that is the value stays) more
                # decimals than either shows, the same for both counts, until the two differ
                theirs = Fraction(int(apart_from), scale)
                shown = max(len(t.split(NBSP)[0].partition(".")[2]) for t in (text, other))
                places = next(p for p in range(shown + 1, 60)
                              if Fraction(_decimal_digits(exact, p).replace(",", "")) !=
                              Fraction(_decimal_digits(theirs, p).replace(",", "")))
                text = f"{_decimal_digits(exact, places)}{NBSP}{unit}"
            return text
    return f"{int(n):,}{NBSP}B"


def si(n: float, unit: str) -> str:
    """A count with an SI prefix (k, M, G, T, P), to three significant digits: ``si(2.56e6,
    "FLOP")`` is "2.56 MFLOP"; below 1,000 the count itself, never "0.00 G".

    >>> [si(n, "FLOP").replace(NBSP, " ") for n in (2_560_000, 1.0737e9, 640, 0)]
    ['2.56 MFLOP', '1.07 GFLOP', '640 FLOP', '0 FLOP']
    """
    x = float(n) + 0.0  # (-0.0 is 0.0: an unsigned "0 FLOP")
    if not np.isfinite(x) or x < 0:
        raise ValueError(f"n must be a finite count, 0 or more; got {n!r}")
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale * 0.9995:  # 999,999 is "1 M", not "1,000 k"
            return f"{three_digits(x / scale)}{NBSP}{prefix}{unit}"
    return f"{x:,.0f}{NBSP}{unit}" if x.is_integer() else f"{three_digits(x) if x >= 1 else f'{x:.3g}'}{NBSP}{unit}"


def percent(share: float, places: int = 0, *, also: tuple = ()) -> str:
    """A share as a percentage: ``places`` decimals (whole percents by default) from 1 % on, two
    significant digits below (a share that is not zero never reads "0%"), and the digits that
    tell a share that is not 1 from all of it (it never reads "100%" or "100.0%"): 0.4 is
    "40%", 7.2e-5 "0.0072%", 0.9951 "99.5%" (0.995 is 0.99499999… as a float: "99%").
    ``also``: other shares the text must not meet unless it is them (a table that compares with
    half: 0.50000005 at one decimal is "50.00001%", not "50.0%").

    >>> [percent(x) for x in (0.4, 0.9951, 0.9987, 0.99999, 1.0, 0.0123, 7.2e-5, 0.0, 0.015)]
    ['40%', '99.5%', '99.9%', '99.999%', '100%', '1%', '0.0072%', '0%', '1%']
    >>> percent(0.5625, places=1), percent(0.9999900001, places=1)
    ('56.2%', '99.999%')
    """
    x = float(share) + 0.0  # (-0.0 is 0.0: an unsigned "0%")
    if not np.isfinite(x) or x < 0:
        raise ValueError(f"share must be a finite number, 0 or more; got {share!r}")
    if isinstance(places, bool) or not isinstance(places, int) or not 0 <= places <= 15:
        raise ValueError(f"places must be a whole number from 0 to 15; got {places!r}")
    # from the float's exact value times 100, rounded once (f"{x:.0%}" multiplies in floats
    # first: 0.015, which is 1.49999...%, came out "2%")
    hundred = decimal.Decimal(x) * 100
    small = float(f"{hundred:.2g}")  # two significant digits, rounded once, written as a float
    if x != 0 and small < 1:
        return f"{small:.2g}%"
    text, more = f"{hundred:.{places}f}", places + 1
    marks = {decimal.Decimal(100) * decimal.Decimal(m) for m in (1, *also)}  # (exact: 0.5 is 50)
    while hundred not in marks and decimal.Decimal(text) in marks:  # 0.995, 0.99999, 1.000001: the digits that say so
        text, more = f"{hundred:.{more}f}", more + 1
    return f"{text}%"
