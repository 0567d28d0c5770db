"""MkDocs hook: each value reads on the built page as the build read it in the page's source.

After the page's formulas are rendered (hooks/site_math.py), :func:`seen.check_page` compares
the signs and claim words a reader sees around each value with the ones the build's checks of
its claims read (hooks/claims.py), refuses the page where they differ, and drops the record
each value carried (``data-read``): the page is written as before. Under ``mkdocs serve`` a
page whose output did not change is not read again.
"""
from __future__ import annotations

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

import _context
import _serve
import seen

#: The printable lecture (hooks/site_print.py's PRINT_PAGE): the pages' text gathered, each page checked.
GATHERED = "print.md"


class SeenState:
    """One build's count of the records each page's HTML held before its formulas were drawn."""

    def __init__(self):
        self.records: dict[str, int] = {}


@event_priority(50)  # after hooks/site_figures.py's (60), which writes each value's span with its record
def on_page_content(html, *, page, config, files):
    _context.of(config).step(SeenState).records[page.file.src_uri] = html.count('data-read="')
    return html


@event_priority(-50)  # after every hook that writes the page (math, notation links, the head: priority 0)
def on_post_page(output, *, page, config):
    try:
        where = page.file.src_uri  # (under serve, an unchanged page is not read again: hooks/_serve.py)
        expected = _context.of(config).step(SeenState).records.get(where, 0)
        return _serve.memo("seen").get((where, expected, output), lambda: seen.check_page(
            output, where, gathered=where == GATHERED, expected=expected))
    except seen.SeenError as exc:
        raise PluginError(str(exc)) from None
