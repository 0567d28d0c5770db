"""The fonts an SVG uses, carried inside it: a figure looks the same on every reader's machine.

matplotlib writes SVG text as text (``svg.fonttype: none``: small, selectable, searchable,
sharp at any zoom) that *names* its fonts: 'DejaVu Sans' for labels, and for mathtext each
glyph in its own ``<tspan>`` at its own x position, in the font matplotlib chose for it
('DejaVu Sans' upright and oblique, 'STIXSizeOneSym' for a radical sign, ...). A reader
without those fonts (most: macOS, Windows, iOS and Android ship none of them) gets a
fallback font with other widths: a label is wider or narrower than the space laid out for
it, a formula's letters stand apart ("h e a d"), and a radical sign is drawn at the size of
a subscript. :func:`embed_fonts` adds to the SVG's ``<style>`` one ``@font-face`` per font
file the text uses, whose source is a subset of that very file (only the characters the SVG
draws with it) as a WOFF2 data URI, under the family name the text already asks for: the
browser draws with the glyphs matplotlib measured, and the text stays text.

Deterministic: the same SVG gives the same bytes (the font's own ``head.modified`` is kept,
not the time of the subset; fontTools' subsetter and Brotli are deterministic), whichever
process makes it: the command line writes the site's bytes. A subset is remembered in the
process by (font, hash of the font file, characters): the light and dark variants of a
figure draw the same text and share the work (a figure's variants render in one process).
Hinting is dropped (browsers rasterise unhinted outlines well; hints are 60 % of the bytes);
a subset of the three faces a formula uses is 1-3 KB, about 4 KB per SVG as base64.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

_NS = "{http://www.w3.org/2000/svg}"
_FONT_PROPS = ("font-family", "font-style", "font-weight", "font-stretch", "font-variant")
_DECL = re.compile(r"\s*([a-z-]+)\s*:\s*([^;]+?)\s*(?:;|$)")
#: Where the ``@font-face`` rules go: matplotlib's one ``<style>`` element, in the first ``<defs>``.
_STYLE = re.compile(rb'(<style type="text/css">)(.*?)(</style>)', re.S)
#: Characters no font needs to draw (blank space is laid out by the font, but a missing one
#: is not an error: every font the figures use has both).
_BLANK = {0x20, 0xA0}
#: XML white space: SVG collapses it (a run of only these draws nothing).
_XML_SPACE = " \n\r\t"


class FontError(ValueError):
    """A figure's text asks for a character that the font drawing it does not have."""


def _declarations(style: str) -> dict:
    return {m.group(1): m.group(2) for m in _DECL.finditer(style or "")}


def _families(value: str) -> list[str]:
    """``'DejaVu Sans', 'Helvetica', sans-serif`` -> ``['DejaVu Sans', 'Helvetica', 'sans-serif']``."""
    return [name.strip().strip("'\"") for name in value.split(",") if name.strip()]


def text_uses(svg: bytes) -> dict:
    """``{(font-family, font-style, font-weight, font-stretch, font-variant): characters}``
    of every text run in ``svg`` (a matplotlib SVG), each run with the font properties it
    inherits from its ancestors' and its own ``style``."""
    uses: dict = {}

    def add(props: dict, text: str | None) -> None:
        if text and text.strip(_XML_SPACE):  # blank runs between a formula's <tspan>s draw nothing
            key = tuple(props.get(k, "") for k in _FONT_PROPS)
            uses.setdefault(key, set()).update(ord(c) for c in text if c not in "\n\r\t")

    def walk(el, inherited: dict) -> None:
        own = _declarations(el.get("style", ""))
        props = {**inherited, **{k: v for k, v in own.items() if k in _FONT_PROPS}}
        is_text = el.tag in (_NS + "text", _NS + "tspan")
        if is_text:
            add(props, el.text)
        for child in el:
            walk(child, props)
            if is_text:
                add(props, child.tail)

    walk(ET.fromstring(svg), {})
    return uses


#: CSS's generic families: an ``@font-face`` rule cannot stand in for one of them.
_GENERIC = {"serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui", "math"}


class Font(NamedTuple):
    """A font file and the index of the face in it (a collection holds several)."""

    path: str
    index: int = 0


@functools.lru_cache(maxsize=None)
def _resolve(family: str, style: str, weight: str, stretch: str, variant: str) -> tuple[Font, str]:
    """``(font, CSS family name)`` of a text run: the font matplotlib drew it with (its own
    font search over the same family list) and the first family the run names (the name the
    browser looks up first)."""
    from matplotlib import font_manager as fm

    names = _families(family)
    if not names or names[0] in _GENERIC:
        raise FontError(f"a text run names no font family before a generic one (font-family: {family!r}): "
                        "no embedded font can stand in for it; set font.sans-serif (style.py)")
    prop = fm.FontProperties(family=names, style=style or "normal", weight=weight or "normal",
                             stretch=stretch or "normal", variant=variant or "normal")
    found = fm.findfont(prop, fallback_to_default=False)
    return Font(str(found), getattr(found, "face_index", 0)), names[0]  # FontPath from matplotlib 3.11


@functools.lru_cache(maxsize=None)
def _face(font: Font) -> tuple[str, str, frozenset]:
    """``(font-style, font-weight, code points)`` of a font: its CSS descriptors as matplotlib
    reads them, and the characters it has."""
    from fontTools.ttLib import TTFont
    from matplotlib import font_manager as fm

    entry = fm.ttfFontProperty(fm.get_font(font.path) if font.index == 0 else fm.get_font(fm.FontPath(*font)))
    with TTFont(font.path, fontNumber=font.index, lazy=True) as tt:
        cmap = frozenset(tt.getBestCmap())
    return entry.style, str(entry.weight), cmap


@functools.lru_cache(maxsize=None)
def _file_hash(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


#: The characters a figure's text is drawn from, almost always: ASCII and Latin-1, Greek,
#: phonetic super- and subscripts (U+1D40, a superscript T), punctuation, super- and subscript digits,
#: arrows, mathematical operators and technical symbols, the first dingbats (check marks).
#: A process cuts each font to these once (:func:`_base`, about 0.25 s for a DejaVu face)
#: and each figure's subset from that: twice as fast as from the whole font (DejaVu Sans
#: has 6,000 glyphs), and the same bytes (the fonts' layout closure stays inside the set;
#: tests/test_figure_fonts.py checks it). Measured over the site's figures split between
#: two processes as a build splits them: 3.7 s of CPU in all with bases, 5.5 s without,
#: and still 4.3 s making a face's base only after its third subset. A figure with a
#: character outside the set is cut from the whole font.
COMMON = frozenset([*range(0x20, 0x7F), *range(0xA0, 0x100), *range(0x370, 0x400), *range(0x1D00, 0x1DC0),
                    *range(0x2000, 0x20D0), *range(0x2190, 0x2300), *range(0x2700, 0x2720)])


def _options(flavor: str | None):
    from fontTools import subset

    options = subset.Options()
    options.flavor = flavor
    options.hinting = False          # browsers rasterise unhinted outlines well; hints are most of the bytes
    options.desubroutinize = True    # (CFF fonts) smaller after Brotli
    options.name_IDs = [1, 2]        # family and style: enough to name the face
    options.drop_tables += ["FFTM", "MATH"]  # a FontForge time stamp; math layout the browser does not read here
    return options


def _cut(source: Font | bytes, codepoints, flavor: str | None) -> bytes:
    """``source`` (a font, or the bytes of a TrueType font) subset to ``codepoints`` and what
    shaping them needs (ligatures, kerning, marks), as ``flavor`` (``"woff2"``, or ``None``
    for TrueType). The font's own ``head.modified`` is kept, not the time of the subset."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    if isinstance(source, bytes):
        file, number = io.BytesIO(source), 0
    else:
        file, number = source.path, source.index
    with TTFont(file, fontNumber=number, recalcTimestamp=False, lazy=True) as font:  # lazy: reads what it needs
        subsetter = subset.Subsetter(_options(flavor))
        subsetter.populate(unicodes=sorted(codepoints))
        subsetter.subset(font)
        font.flavor = flavor
        out = io.BytesIO()
        font.save(out)
    return out.getvalue()


@functools.lru_cache(maxsize=None)
def _base(font: Font, digest: str) -> bytes:
    """``font`` (its file's bytes hashing to ``digest``) cut to :data:`COMMON`, as TrueType."""
    return _cut(font, COMMON & _face(font)[2], None)


@functools.lru_cache(maxsize=256)
def _subset(font: Font, digest: str, codepoints: frozenset) -> bytes:
    """A WOFF2 subset of ``font`` (its file's bytes hashing to ``digest``: with the face and
    the characters, the key of this cache) holding ``codepoints``: cut from the font's base
    (:data:`COMMON`) when it holds them, the same bytes as from the whole font."""
    if codepoints <= COMMON:
        return _cut(_base(font, digest), codepoints, "woff2")
    return _cut(font, codepoints, "woff2")


def font_faces(svg: bytes) -> list[tuple[str, str, str, Font, frozenset]]:
    """``(CSS family, font-style, font-weight, font, code points)`` for every font the text of
    ``svg`` is drawn with, in a fixed order. Raises :class:`FontError` for a character its
    font lacks (matplotlib drew a missing-glyph box for it), or for two fonts the browser
    could not tell apart (the same family name, style and weight)."""
    faces: dict = {}
    for key, chars in sorted(text_uses(svg).items()):
        font, name = _resolve(*key)
        style, weight, cmap = _face(font)
        missing = sorted(c for c in chars - cmap if c not in _BLANK)
        if missing:
            shown = ", ".join(f"U+{c:04X} {chr(c)!r}" for c in missing[:10])
            raise FontError(f"the figure's text uses {len(missing)} character(s) that {Path(font.path).name} "
                            f"(font-family: {key[0]}) does not have: {shown}; use a character the font has, "
                            "or mathtext")
        faces.setdefault((name, style, weight), {}).setdefault(font, set()).update(chars & cmap)
    out = []
    for (name, style, weight), by_font in sorted(faces.items()):
        if len(by_font) > 1:
            raise FontError(f"two fonts would be embedded as font-family {name!r}, {style}, {weight}: "
                            f"{sorted(f.path for f in by_font)}")
        (font, chars), = by_font.items()
        out.append((name, style, weight, font, frozenset(chars)))
    return out


def font_face_css(svg: bytes) -> str:
    """The ``@font-face`` rules that carry the fonts of ``svg``: one per font its text uses."""
    rules = []
    for name, style, weight, font, chars in font_faces(svg):
        data = base64.b64encode(_subset(font, _file_hash(font.path), chars)).decode("ascii")
        quoted = name.replace("\\", "\\\\").replace("'", "\\'")
        rules.append(f"@font-face{{font-family:'{quoted}';font-style:{style};font-weight:{weight};"
                     f"src:url(data:font/woff2;base64,{data}) format('woff2')}}")
    return "\n".join(rules)


def embed_fonts(svg: bytes) -> bytes:
    """``svg`` (a matplotlib SVG) with the fonts its text uses inside it (see the module's text)."""
    css = font_face_css(svg)
    if not css:
        return svg
    match = _STYLE.search(svg)
    if match is None:
        raise ValueError("the SVG has no <style> element to carry its fonts (not written by matplotlib?)")
    return svg[:match.end(2)] + b"\n" + css.encode("ascii") + b"\n" + svg[match.start(3):]
