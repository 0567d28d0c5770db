"""MkDocs hook: figures, tables and display equations numbered per page, references to them
by key, and click-to-zoom on every figure.

A reader who is told "the figure below" has to guess which one when a page holds six, and
on paper or in the PDF "below" may be on the next sheet. So, on every page, in reading order:

- each figure (``figure.mha-figure``: a figure directive, or an explorer's static figure)
  gets ``id="fig-KEY"`` and its caption starts with a bold "Figure N." (a figure without a
  caption gets one holding only that); an explorer's interactive widget shows the same number,
  since the static figure is hidden when the widget runs;
- each ``{{ table NAME }}`` gets ``id="table-KEY"`` and a ``<caption>``: "Table N." and the
  directive's ``caption="..."`` or, by default, the first line of the script's docstring;
- each display equation (``div.arithmatex``, whatever is inside it: TeX for KaTeX in the
  browser, or HTML rendered at build time) is wrapped in ``div.mha-eq`` with its number
  "(N)" beside it, and gets ``id="eq-KEY"`` if the page labels it ``\\]{#eq:KEY}``;
- ``{{ ref fig:KEY }}``, ``{{ ref table:KEY }}``, ``{{ ref eq:KEY }}`` become links reading
  "Figure 2", "Table 1", "Equation (3)".

The syntax is part of the page grammar (:mod:`directives`). Figures inside a gallery item
are not numbered (each is under its own heading on a reference page). The printable page
(hooks/site_print.py) glues the pages' HTML together, so numbers restart with each chapter
and its rewriting of ids and ``#`` links keeps every reference pointing into its chapter.

How it finds things: ``on_page_markdown`` runs before hooks/site_figures.py's (``event_priority``,
whatever the order of ``mkdocs.yml``'s hooks) and records the
page's figure, explorer and table directives in order, puts a caption paragraph
(``p.mha-table-caption``) before each table directive, turns each equation label into an
HTML comment after the equation and each reference into a placeholder. ``on_page_content``
(early, before other hooks rewrite the HTML) matches the n-th recorded figure with the n-th
figure of the HTML, and so on, and edits the HTML at those places only (nothing else of the
page is re-serialised). If the two counts differ, or a reference names no key or two
things, the build stops with the page, the line and the directive.

Zoom: the images of each figure are wrapped in ``<a class="mha-zoom" href="LIGHT.svg">``
(without JavaScript the link opens the SVG itself); ``docs/javascripts/zoom.js`` opens the
image the reader sees (the light or the dark variant) large in a ``<dialog>``. A figure
whose images already sit in a link is left alone. ``MHA_SKIP_FIGURES=1`` turns this hook
off together with the figures.

Under ``mkdocs serve`` a page whose HTML and recorded directives did not change since the last
rebuild gets its numbered HTML from memory (``hooks/_serve.py``); ``mkdocs build`` numbers
every page.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _context  # noqa: E402
import _serve  # noqa: E402
import directives  # noqa: E402
import numbering  # noqa: E402
from _paths import project_dir  # noqa: E402
from _serve import on_shutdown, on_startup  # noqa: E402,F401  (MkDocs calls them: serve or build)
from numbering import Plan  # noqa: E402


def _skipped() -> bool:
    return os.environ.get("MHA_SKIP_FIGURES") == "1"


@dataclass
class NumberingState:
    """One build's numbering: the scripts' titles (a table's default caption) and each page's :class:`Plan`."""

    titles: dict = field(default_factory=dict)
    pages: dict = field(default_factory=dict)  # src_uri -> Plan


def _numbering(config) -> NumberingState:
    return _context.of(config).step(NumberingState)


def on_config(config):
    _serve.begin(config)
    return config


def on_files(files, *, config):
    """The scripts' titles: a table's default caption."""
    if _skipped():
        return files
    from figures._kit import contract

    try:
        folder = project_dir(config) / "figures"  # (discovered once a build: the figures hook reads them too)
        scripts = _context.of(config).once(("scripts", str(folder)), lambda: contract.discover(folder))
    except contract.ContractError as exc:
        raise PluginError(str(exc)) from None
    _numbering(config).titles = {name: s.title for name, s in scripts.items()}
    return files


@event_priority(10)  # before hooks/site_figures.py's (priority 0): it reads the figure directives
def on_page_markdown(markdown, *, page, config, files):
    if _skipped():
        return markdown
    where = page.file.src_uri
    state = _numbering(config)
    try:
        found = directives.on_source_lines(_serve.parse_directives(markdown, where), markdown, _serve.page_source(page))
        markdown, state.pages[where] = numbering.plan_page(markdown, found, where, state.titles)
    except (directives.DirectiveError, numbering.NumberingError) as exc:
        raise PluginError(str(exc)) from None
    return markdown


@event_priority(50)  # before the hooks that rewrite the page's HTML (math, notation links, print)
def on_page_content(html, *, page, config, files):
    if _skipped():
        return html
    plan = _numbering(config).pages.get(page.file.src_uri) or Plan()
    where = page.file.src_uri
    # number() reads nothing but these three (and fills in the plan's numbers, which nothing else reads)
    try:
        return _serve.memo("numbering").get((html, repr(plan), where), lambda: numbering.number(html, plan, where))
    except numbering.NumberingError as exc:
        raise PluginError(str(exc)) from None
