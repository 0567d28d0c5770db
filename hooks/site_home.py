"""MkDocs hook: the home page's reading order, made from the nav so that it cannot go stale.

``docs/index.md`` holds a line ``<!-- reading order -->`` and, in its front matter, one
sentence per page under ``reading_order`` (``src: 'what the page does'``). The line becomes a
numbered list of every page of the nav outside its last section ("Reference"), in nav
order, each linked by its nav title with its sentence, and one line naming the reference
pages. The build fails, naming the page, when a nav page has no sentence, or a sentence names
a page that is not in the nav: a new page cannot be left out of the reading order.

Counts come from the pages: ``{questions}`` in a sentence is the number of questions
(``??? question`` blocks) on the page it describes.
"""
from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError

import navigation  # (hooks/: MkDocs puts a hook's folder on the path while it loads it)

MARKER = "<!-- reading order -->"
QUESTION_RE = re.compile(r"^\?\?\?\+? question\b", re.M)


def reading_order(nav, sentences: dict, docs_dir: Path) -> str:
    """The Markdown of the reading order (see the module's docstring); ``PluginError`` names
    what is missing or left over."""
    if not isinstance(sentences, dict):
        raise PluginError("index.md: the front matter's reading_order must map each page (e.g. attention.md) "
                          "to one sentence")
    pages = [p for p in navigation.pages(nav) if p[2] != "index.md" and not re.match(r"[a-z]+://", p[2])]
    last = pages[-1][0][:1] if pages else ()
    lecture = [p for p in pages if p[0][:1] != last]
    reference = [p for p in pages if p[0][:1] == last and (len(p[0]) == 1 or p[1] is None)]
    missing = [src for _, _, src in lecture if src not in sentences]
    if missing:
        raise PluginError(f"index.md: the reading order has no sentence for {', '.join(missing)}: add "
                          f"'{missing[0]}: ...' under reading_order in index.md's front matter")
    extra = sorted(set(sentences) - {src for _, _, src in lecture})
    if extra:
        raise PluginError(f"index.md: reading_order names {', '.join(extra)}, which the nav does not list "
                          "before its reference section")
    lines = []
    for n, (_, title, src) in enumerate(lecture, 1):
        sentence = str(sentences[src]).strip()
        if "{questions}" in sentence:
            count = len(QUESTION_RE.findall((docs_dir / src).read_text(encoding="utf-8")))
            if not count:
                raise PluginError(f"index.md: the sentence for {src} counts its questions, and it has none")
            sentence = sentence.replace("{questions}", str(count))
        lines.append(f"{n}. [{title or src}]({src}) — {sentence}")
    names = [(title or section[-1], src) for section, title, src in reference]
    also = ", ".join(f"[{title.lower() if title[:1].isupper() and not title[1:2].isupper() else title}]({src})"
                     for title, src in names)
    return "\n".join(lines) + (f"\n\nAlso, for reference: {also}.\n" if names else "\n")


def on_page_markdown(markdown, *, page, config, files):
    if page.file.src_uri != "index.md":
        return markdown
    has_marker, has_sentences = MARKER in markdown, "reading_order" in page.meta
    if not (has_marker or has_sentences):
        return markdown
    if not (has_marker and has_sentences):
        raise PluginError(f"index.md: a reading order needs both the line {MARKER} and reading_order in the "
                          "front matter; one of them is missing")
    return markdown.replace(MARKER, reading_order(config["nav"], page.meta["reading_order"],
                                                  Path(config["docs_dir"])), 1)
