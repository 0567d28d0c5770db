"""A figure looks the same on any machine: the fonts its SVG uses travel inside it.

The failure this guards against: every figure SVG names 'DejaVu Sans' (and 'STIXSizeOneSym'
for a radical sign) and keeps its text as text. A reader without those fonts (macOS,
Windows, iOS, Android) got a fallback font: labels of another width, a formula's letters
apart ("h e a d"), exponents off their base, a radical sign at subscript size. So the test
draws every light figure SVG of the build (wide and phone variants) in Chromium twice,
with the machine's fonts and with a font configuration that holds only Liberation, and
asks for the same pixels (``figures/_kit/fonts.py`` embeds the subsets); a dark SVG carries
its light twin's faces (checked first, without a browser), so the light drawings stand for it.
"""
from __future__ import annotations

import base64
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT

from figures._kit import export, fonts

#: Liberation only: the fonts a reader's machine is sure to lack are the ones the figures name.
LIBERATION = Path("/usr/share/fonts/truetype/liberation")
#: A channel difference that counts as a different pixel (of 255): above antialiasing's
#: half-tones at a glyph's edge, below any glyph drawn in another place or font.
PIXEL_DELTA = 48
#: Differing pixels a figure may have and still look the same: a quarter of one 11 px glyph.
#: Measured (Debian's Chromium 156, the 128 SVGs of the site: light, dark, phone): the same SVG drawn
#: twice, or drawn with and without the system's fonts once it carries its own, differs in
#: 0 pixels (not one pixel differs at all); the SVGs that only named their fonts differed
#: in 4,192 to 35,517 pixels each (all 128 failed).
MAX_PIXELS = 25


def _fontconfig(folder: Path) -> Path:
    """A fontconfig file that lists only Liberation, with the system's rendering rules."""
    folder.mkdir(parents=True, exist_ok=True)
    conf = folder / "fonts.conf"
    conf.write_text(f"""<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>{LIBERATION}</dir>
  <cachedir>{folder / 'cache'}</cachedir>
  <include ignore_missing="yes">/etc/fonts/conf.d</include>
</fontconfig>
""")
    return conf


def _svg_px(svg: bytes) -> tuple[int, int]:
    m = re.search(rb'<svg[^>]*?width="([0-9.]+)pt" height="([0-9.]+)pt"', svg)
    return round(float(m.group(1)) * 4 / 3), round(float(m.group(2)) * 4 / 3)


#: The figures are drawn side by side on sheets this wide and at most this tall (one screenshot
#: per sheet instead of one per figure: the screenshots were most of the test's time).
SHEET_WIDTH, SHEET_HEIGHT = 4000, 8000


def _sheets(site: Path, names: list[str]) -> list[dict[str, tuple[int, int, int, int]]]:
    """Each SVG's box (x, y, width, height) on a sheet, in rows, the sheets in order."""
    sheets, boxes, x, y, row = [], {}, 0, 0, 0
    for name in names:
        w, h = _svg_px((site / "figures" / name).read_bytes())
        if x and x + w > SHEET_WIDTH:
            x, y, row = 0, y + row, 0
        if boxes and y + h > SHEET_HEIGHT:
            sheets.append(boxes)
            boxes, x, y, row = {}, 0, 0, 0
        boxes[name] = (x, y, w, h)
        x, row = x + w, max(row, h)
    return sheets + ([boxes] if boxes else [])


def render_all(browser, base: str, site: Path, names: list[str]) -> dict[str, np.ndarray]:
    """Each SVG of ``site/figures`` in ``names`` drawn as the site draws it (an ``<img>`` at its
    own size, on its theme's page colour), as RGB pixels; the figures share sheets, each at its
    own place, so a sheet is one screenshot."""
    from PIL import Image

    from figures._kit import style

    page = browser.new_page(device_scale_factor=1)
    out = {}
    try:
        for boxes in _sheets(site, names):
            width = max(x + w for x, _, w, _ in boxes.values())
            height = max(y + h for _, y, _, h in boxes.values())
            cells = "".join(
                f'<div style="position:absolute;left:{x}px;top:{y}px;width:{w}px;height:{h}px;background:'
                f'{style.THEMES["dark" if name.endswith("-dark.svg") else "light"]["bg"]}">'
                f'<img src="{base}figures/{name}" width="{w}" height="{h}" style="display:block"></div>'
                for name, (x, y, w, h) in boxes.items())
            page.set_viewport_size({"width": width, "height": height})
            page.set_content(f'<html><body style="margin:0;background:#808080">{cells}</body></html>')
            page.evaluate("() => Promise.all(Array.from(document.images, i => i.decode()))")
            shot = np.asarray(Image.open(io.BytesIO(page.screenshot(clip={"x": 0, "y": 0, "width": width,
                                                                         "height": height}))).convert("RGB"))
            for name, (x, y, w, h) in boxes.items():
                out[name] = shot[y:y + h, x:x + w]
    finally:
        page.close()
    return out


def differing_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels of two RGB images whose colour differs by more than :data:`PIXEL_DELTA` in a channel
    (all of them if the sizes differ)."""
    x, y = (np.asarray(img, dtype=np.int16) for img in (a, b))
    if x.shape != y.shape:
        return max(x.shape[0] * x.shape[1], y.shape[0] * y.shape[1])
    return int((np.abs(x - y).max(axis=2) > PIXEL_DELTA).sum())


# ---- what fonts.py does, without a browser --------------------------------------------------------

@pytest.fixture(scope="module")
def formula_svg() -> bytes:
    """A small matplotlib SVG with a label, a bold title and a formula with a radical sign."""
    import matplotlib

    matplotlib.use("Agg")
    from figures._kit import style

    with style.theme("light"):
        fig, ax = style.new_figure(3, 2)
        ax.set_title("Bold title", fontweight="bold")
        ax.set_xlabel(r"$q \cdot k / \sqrt{d_\mathrm{head}}$")
        ax.set_ylabel("variance")
        ax.plot([0, 1], [0, 1])
        bbox = export.lay_out(fig)
        svg = export.figure_bytes(fig, "svg", salt="t", bbox_inches=bbox)
        import matplotlib.pyplot as plt

        plt.close(fig)
    return svg


def test_an_svg_carries_a_subset_of_each_font_its_text_uses(formula_svg):
    from fontTools.ttLib import TTFont

    faces = {(m.group(1), m.group(2), m.group(3)): base64.b64decode(m.group(4)) for m in re.finditer(
        rb"@font-face\{font-family:'([^']+)';font-style:(\w+);font-weight:(\d+);"
        rb"src:url\(data:font/woff2;base64,([A-Za-z0-9+/=]+)\) format\('woff2'\)\}", formula_svg)}
    assert set(faces) == {(b"DejaVu Sans", b"normal", b"400"), (b"DejaVu Sans", b"oblique", b"400"),
                          (b"DejaVu Sans", b"normal", b"700"), (b"STIXSizeOneSym", b"normal", b"400")}
    # each face holds what the SVG draws with it, and little else
    upright = TTFont(io.BytesIO(faces[b"DejaVu Sans", b"normal", b"400"]))
    cmap = set(upright.getBestCmap())
    assert {ord(c) for c in "variance0.21\u22c5"} <= cmap and len(cmap) < 40
    assert ord("√") in TTFont(io.BytesIO(faces[b"STIXSizeOneSym", b"normal", b"400"])).getBestCmap()
    bold = TTFont(io.BytesIO(faces[b"DejaVu Sans", b"normal", b"700"]))
    assert set(map(chr, bold.getBestCmap())) >= set("Bold title")
    # the text is still text
    assert b">variance</text>" in formula_svg


def test_embedding_is_deterministic_and_keeps_the_fonts_own_date(formula_svg):
    from fontTools.ttLib import TTFont
    from matplotlib import font_manager as fm

    plain = re.sub(rb"\n@font-face.*\n(?=</style>)", b"", formula_svg, flags=re.S)
    assert b"@font-face" not in plain
    fonts._subset.cache_clear()  # made again, not remembered
    assert fonts.embed_fonts(plain) == formula_svg
    data = re.search(rb"base64,([A-Za-z0-9+/=]+)", formula_svg).group(1)
    subset = TTFont(io.BytesIO(base64.b64decode(data)))
    original = TTFont(fm.findfont("DejaVu Sans"))
    assert subset["head"].modified == original["head"].modified  # not the time of the subset


def test_a_subset_cut_from_the_common_characters_is_the_subset_of_the_whole_font(formula_svg):
    """The shortcut (fonts._base: each font cut once to the common characters) gives the bytes
    that cutting the whole font gives, for the formula's faces and for a wide set of text."""
    wide = frozenset(map(ord, "The quick brown fox: 0123456789 (q·k)/√d → ∑ α β θ ω × − ≤ … ⊤ ᵀ"))
    faces = fonts.font_faces(formula_svg)
    regular = next(face[3] for face in faces if face[1:3] == ("normal", "400") and face[0] == "DejaVu Sans")
    for font, chars in [(face[3], face[4]) for face in faces] + [(regular, wide)]:
        assert chars <= fonts.COMMON
        assert fonts._subset(font, fonts._file_hash(font.path), chars) == fonts._cut(font, chars, "woff2")


def test_an_svg_without_text_is_unchanged_and_a_missing_glyph_is_refused():
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><defs><style type="text/css">*{}</style></defs></svg>'
    assert fonts.embed_fonts(svg) == svg
    bad = svg.replace(b"</svg>", "<text style=\"font-family: 'DejaVu Sans'\">tea \U0001F375</text></svg>".encode())
    with pytest.raises(fonts.FontError, match=r"DejaVuSans.ttf .* U\+1F375"):
        fonts.embed_fonts(bad)


@pytest.mark.build
def test_the_command_line_writes_the_embedded_fonts(tmp_path):
    """The CLI goes through export.figure_bytes too: its SVG carries the same fonts."""
    out = tmp_path / "sv.svg"
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, str(ROOT / "figures/attention/scaling_variance.py"), "--out", str(out)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes().count(b"@font-face{font-family:'STIXSizeOneSym'") == 1


# ---- every figure of the build, in Chromium, with and without the fonts it names ---------------

_FACE = re.compile(rb"@font-face\{font-family:'([^']+)';font-style:(\w+);font-weight:(\d+);")
_FAMILY = re.compile(rb"font-family: ?'([^']+)'")


@pytest.mark.build
def test_every_figure_svg_carries_a_face_for_each_font_it_names_and_dark_carries_lights(built_site):
    """Each SVG of the build, dark ones included: every family its text names has an embedded
    face, and a dark drawing (the light one's text in other colours, laid out alike) carries
    the same faces as its light twin, so the light ones drawn below stand for both."""
    svgs = {p.name: p.read_bytes() for p in (built_site / "figures").glob("*.svg")}
    faces = {name: set(_FACE.findall(svg)) for name, svg in svgs.items()}
    named = {name: set(_FAMILY.findall(svg.split(b"</style>", 1)[-1])) for name, svg in svgs.items()}
    with_text = [name for name in svgs if named[name]]
    assert len(with_text) > 100
    missing = {name: named[name] - {f[0] for f in faces[name]} for name in with_text}
    assert not {k: v for k, v in missing.items() if v}, {k: v for k, v in missing.items() if v}
    dark = [name for name in svgs if name.endswith("-dark.svg")]
    assert len(dark) > 50
    for name in dark:
        light = name.removesuffix("-dark.svg") + ".svg"
        assert faces[name] == faces[light], (name, faces[name] ^ faces[light])


@pytest.mark.build
@pytest.mark.browser
def test_every_figure_looks_the_same_without_the_fonts_it_names(built_site, site_url, browser, tmp_path):
    """Every light figure SVG of the build (wide and phone) drawn in the session's Chromium
    (the machine's fonts) and in one more launched with Liberation only; a figure fails if more
    than MAX_PIXELS pixels differ by more than PIXEL_DELTA. The dark SVGs are the same text
    with the same embedded faces (the test above), in other colours: drawing them too doubled
    the test's time and could find nothing the light ones do not."""
    from tools.screenshots import ARGS, CHROMIUM

    if not LIBERATION.is_dir():
        pytest.skip(f"{LIBERATION} is missing (apt-get install fonts-liberation)")
    names = sorted(p.name for p in (built_site / "figures").glob("*.svg") if not p.name.endswith("-dark.svg"))
    assert len(names) > 60
    conf = _fontconfig(tmp_path / "fontconfig")
    system = render_all(browser, site_url, built_site, names)
    bare = browser.browser_type.launch(executable_path=CHROMIUM, args=ARGS,
                                       env={**os.environ, "FONTCONFIG_FILE": str(conf)})
    try:
        liberation = render_all(bare, site_url, built_site, names)
    finally:
        bare.close()
    diffs = {name: differing_pixels(system[name], liberation[name]) for name in names}
    bad = sorted(((n, name) for name, n in diffs.items() if n > MAX_PIXELS), reverse=True)
    assert not bad, (f"{len(bad)} of {len(names)} figures draw differently without the fonts they name "
                     f"(differing pixels, figure): {bad[:15]}")
