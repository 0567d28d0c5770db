"""MkDocs hook: each value reads on the built page as the build read it in the page's source.

After the page's formulas are rendered (hooks/site_math.py), :func:`seen.check_page` compares
the signs and claim words a reader sees around each value with the ones the build's checks of
its claims read (hooks/claims.py), refuses the page where they differ, and drops the record
each value carried (``data-read``): the page is written as before.
"""
from __future__ import annotations

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

import seen


@event_priority(-50)  # after every hook that writes the page (math, notation links, the head: priority 0)
def on_post_page(output, *, page, config):
    try:
        return seen.check_page(output, page.file.src_uri)
    except seen.SeenError as exc:
        raise PluginError(str(exc)) from None
