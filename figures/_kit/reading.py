"""How a reader reads a number as written: whether its text says "none" (0) or "all" (1).

A rounded number is true to half a unit of its last digit, but two values are read as more
than that: 0 (none of it) and 1 (all of it, a perfect score, no change). So a number that is
not 0 never reads as 0, and one strictly between -1 and 1 never reads as 1 or -1, in a figure,
a table or a page (figures/_kit/style.py writes them; hooks/figure_markdown.py refuses a
``{{ value }}`` that would).
"""
from __future__ import annotations

import re

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
