"""MkDocs hook: each References entry says which pages cite it, made from the pages so that it cannot go stale.

An entry of ``docs/references.md`` is a paragraph followed by its anchor line ``{: #ANCHOR }``.
Before that line this hook adds "Used on" and a link to every page whose Markdown links
``references.md#ANCHOR``, in nav order, each named by its nav title. The build fails, naming
the entry, when an entry is cited by no page or still carries a "Used on" written by hand,
and, naming the page, when a page cites an anchor that has no entry.
"""
from __future__ import annotations

import re

from mkdocs.exceptions import PluginError

import navigation  # (hooks/: MkDocs puts a hook's folder on the path while it loads it)

REFERENCES = "references.md"
CITE_RE = re.compile(r"references\.md#([A-Za-z0-9_-]+)")
ANCHOR_RE = re.compile(r"^\{: #([A-Za-z0-9_-]+) \}[ \t]*$", re.M)


def nav_titles(nav) -> dict[str, str]:
    """``src -> title`` of every page of a configured nav, in nav order (a page listed without a
    title is named by its source; a page listed twice keeps its first title)."""
    out: dict[str, str] = {}
    for _, title, src in navigation.pages(nav):
        out.setdefault(src, title if title is not None else src)
    return out


def _name(title: str) -> str:
    """A nav title as it reads inside a sentence: "Sinusoidal encoding" -> "sinusoidal encoding";
    a first word with capitals inside ("RoPE", "ALiBi", "FlashAttention: ...") stays."""
    first = title.split(" ", 1)[0]
    return title[:1].lower() + title[1:] if first[:1].isupper() and first[1:] == first[1:].lower() else title


def citations(pages: dict[str, str]) -> dict[str, list[str]]:
    """``anchor -> [src, ...]``: the pages (given as ``src -> Markdown``, in order) that cite each anchor."""
    cited: dict[str, list[str]] = {}
    for src, text in pages.items():
        for anchor in dict.fromkeys(CITE_RE.findall(text)):
            cited.setdefault(anchor, []).append(src)
    return cited


def with_used_on(markdown: str, cited: dict[str, list[str]], titles: dict[str, str]) -> str:
    """``references.md`` with a "Used on" line before each anchor line (see the module's docstring)."""
    anchors = ANCHOR_RE.findall(markdown)
    unknown = {a: srcs for a, srcs in cited.items() if a not in anchors}
    if unknown:
        a, srcs = next(iter(unknown.items()))
        raise PluginError(f"{srcs[0]} cites references.md#{a}, which has no entry: add one ending in '{{: #{a} }}'")

    def used_on(match: re.Match) -> str:
        anchor = match.group(1)
        entry = markdown[:match.start()].rsplit("\n\n", 1)[-1]
        if "Used on" in entry:
            raise PluginError(f"references.md: the entry #{anchor} says 'Used on' by hand; the build writes "
                              "that list from the pages' citations, so remove it")
        srcs = cited.get(anchor)
        if not srcs:
            raise PluginError(f"references.md: no page cites #{anchor}; link it from the page that uses it "
                              f"([...](references.md#{anchor})) or remove the entry")
        links = ", ".join(f"[{_name(titles.get(src, src))}]({src})" for src in srcs)
        return f"Used on {links}.\n{match.group(0)}"

    return ANCHOR_RE.sub(used_on, markdown)


def on_page_markdown(markdown, *, page, config, files):
    if page.file.src_uri != REFERENCES:
        return markdown
    titles = nav_titles(config["nav"])
    order = {src: i for i, src in enumerate(titles)}
    docs = [f for f in files.documentation_pages() if f.src_uri != REFERENCES and f.src_uri.endswith(".md")]
    docs.sort(key=lambda f: (order.get(f.src_uri, len(order)), f.src_uri))
    pages = {f.src_uri: f.content_string for f in docs}
    return with_used_on(markdown, citations(pages), titles)
