"""How a reader reads a number as written: whether its text says "none" (0) or "all" (1).

A rounded number is true to half a unit of its last digit, but two values are read as more
than that: 0 (none of it) and 1 (all of it, a perfect score, no change). So a number that is
not 0 never reads as 0, and one strictly between -1 and 1 never reads as 1 or -1, in a figure,
a table or a page (figures/_kit/style.py writes them; hooks/figure_markdown.py refuses a
``{{ value }}`` that would).
"""
from __future__ import annotations

import math
import numbers
import re
import sys

_NUMBER = re.compile(r"[-+\u2212]?[\d.,_]*\d(?:[eE][-+]?\d+)?%?")


def read(text: str) -> float | None:
    """The number ``text`` shows ("1.00", "−0.5", "***1.00", "100%", "1e+00", "12,345"), or None."""
    m = _NUMBER.search(text)
    if not m:
        return None
    t = m.group(0).replace(",", "").replace("_", "").replace("\u2212", "-")
    return float(t[:-1]) / 100 if t.endswith("%") else float(t)


def reads_one(text: str) -> bool:
    """Whether ``text`` reads as 1 or -1 ("1.00", "-1.0000", "100%", "1e+00", "***1.00")."""
    v = read(text)
    return v is not None and abs(v) == 1


def bound(value, fmt: str, direction: str) -> float:
    """``value`` rounded ``up`` (toward +inf) or ``down`` to the digits ``fmt`` (an f, e or %
    format) shows, as a float that ``fmt`` writes exactly: a bound the prose states stays true
    (``bound(0.1312, ".2f", "up")`` is 0.14). The value is read as Python writes it (0.13 is
    0.13, not the binary 0.13000000000000000444 that would round up to 0.14), and so is the
    bound: a value the format already shows whole (0.1 at ``.1f``) is its own bound. A bound of
    zero is 0, never "-0". Refused: a format of another kind (``g`` may switch to an exponent
    and drop digits, so it cannot promise a side), and a bound ``fmt`` cannot write on its side."""
    import decimal

    if direction not in ("up", "down"):
        raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"value must be a finite number to round as a bound, got {value!r}")
    kind = fmt[-1:]
    if not kind or kind not in "fFeE%":
        raise ValueError(f"fmt must be an f, e or % format (a fixed number of digits) to round a bound; got {fmt!r}")
    digits = re.search(r"\.(\d+)", fmt)
    places = int(digits.group(1)) if digits else 6
    # an integer is read as itself (2**60 is 1152921504606846976, not the float repr
    # 1.152921504606847e18 above it, which round=down showed at .15e: pass ninety-two)
    x = decimal.Decimal(int(value)) if isinstance(value, numbers.Integral) else decimal.Decimal(repr(float(value)))
    if kind in "eE":
        exponent = (x.adjusted() if x else 0) - places
    else:
        exponent = -(places + (2 if kind == "%" else 0))
    rounding = decimal.ROUND_CEILING if direction == "up" else decimal.ROUND_FLOOR
    digits_needed = max(x.adjusted(), 0) - exponent + 2  # every digit from the value's first to the format's last
    q = x.quantize(decimal.Decimal(1).scaleb(exponent), rounding=rounding,
                   context=decimal.Context(prec=max(400, digits_needed)))  # (1e308 at .100f passed 400 digits)
    shown = float(q) or 0.0  # -0.0 (a small negative rounded up) is written "-0": the bound is 0

    # the digits the format writes, without its fill, alignment and width ("*>8.2f" pads 0.14
    # with stars, which no number reads: pass thirty-eight)
    spec = re.fullmatch(r"(?:.?[<>=^])?([-+ ]?)(z?)#?0?\d*([_,]?)(\.\d+)?([eEfF%])", fmt)
    if spec is None:
        raise ValueError(f"fmt must be a format spec such as '.2f', '>8.3e' or '.1%', got {fmt!r}")
    digits_only = "".join(spec.groups(""))

    def written_as(f: float) -> tuple[str, decimal.Decimal]:
        text = format(f, digits_only)
        written = decimal.Decimal(text.replace(",", "").replace("_", "").rstrip("%"))
        return text, written.scaleb(-2) if kind == "%" else written

    text, written = written_as(shown)
    if written != q and 0 < abs(shown) < sys.float_info.min:
        # a subnormal holds fewer digits than its repr: 5e-324 is the float 4.94e-324, which
        # .1e writes "4.9e-324", below 5e-324 (it was refused); "4.9e-324" is a true lower
        # bound, and the next float up, "9.9e-324", the nearest upper one a float can write
        toward = math.inf if direction == "up" else -math.inf
        while (written < x) if direction == "up" else (written > x):
            shown = math.nextafter(shown, toward)
            text, written = written_as(shown)
        return shown
    if written != q:  # q is on the bound's side; the float the format writes is not q
        raise ValueError(f"{value!r} has more digits at {fmt!r} than a float holds: the bound {q} is written "
                         f"{text!r}, on the wrong side; show it with 'e'")
    return shown
