"""The nav of ``mkdocs.yml`` as a list: one walker for every hook that reads the nav as written.

The figure step needs the reading order before MkDocs has built its own ``Navigation`` (the
renders start in ``on_pre_build``, in the order the pages will ask for them); the home page's
reading order and the References' "Used on" lists are made from the same nav. So they all read
the configured nav through :func:`pages`. (``hooks/site_print.py`` assembles ``print/`` after
MkDocs' ``on_nav`` and uses MkDocs' ``Navigation`` itself.)
"""
from __future__ import annotations


def pages(nav, section: tuple = ()) -> list[tuple[tuple, str | None, str]]:
    """``(sections, title, src)`` of every page of a configured nav, in reading order: the
    titles of the sections it is in, its title (``None`` for a page listed without one) and its
    Markdown source (or a URL, as the nav lists it)."""
    out = []
    for item in nav or ():
        if isinstance(item, str):
            out.append((section, None, item))
        elif isinstance(item, dict):
            for title, value in item.items():
                if isinstance(value, str):
                    out.append((section, title, value))
                elif isinstance(value, list):
                    out += pages(value, section + (title,))
    return out
