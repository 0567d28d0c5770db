"""Every figure can be read on a desktop and on a phone, in both themes: text size and colour,
read from the SVGs the shared build wrote (nothing is drawn again).

Every figure script's default render is checked, light and dark, and its phone layout when it
declares ``NARROW = True``. Its smallest text is estimated as ``tools/figure_text.py --svg``
does: the image is shown at its natural size (1 pt = 4/3 px) unless that is wider than the
column, where it is shrunk to the column (688 px on a 1280 px desktop, 358 px on a 390 px
phone). Limits: 11 px and 9 px. Colours: text at 4.5:1 or more on the page, plotted lines at
3:1 or more. The browser tour (tests/tour.py) measures every figure as the pages show it,
parameter variants and explorers included; this test names the figure file that regressed.
"""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import pytest

from helpers import ROOT

sys.path.insert(0, str(ROOT))
from tools import figure_text  # noqa: E402

import figures  # noqa: E402
from figures._kit import style  # noqa: E402

SCRIPTS = figures.scripts()
NAMES = sorted(n for n, s in SCRIPTS.items() if s.kind == "figure")


def shown_px(svg: bytes, column_px: float) -> float:
    """Smallest body text of ``svg``, in px, once the image is drawn in a ``column_px`` column."""
    natural_px = float(ET.fromstring(svg).get("width").removesuffix("pt")) * 4 / 3
    view_width, sizes = figure_text.svg_text_sizes(svg)
    return min(sizes) * min(natural_px, column_px) / view_width


def test_shown_px_by_hand():
    """A 10 pt text in a 9 in (648 pt = 864 px) figure: shrunk to 688 px on a desktop,
    10 x 4/3 x 688 / 864 = 10.62 px; in a 4.5 in (432 px) figure, its own size, 13.33 px;
    11 pt text in a 7 in figure (672 px) on a phone: 14.67 x 358 / 672 = 7.81 px."""
    def svg(width_pt, size=10):
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width_pt}pt" height="50pt" '
                f'viewBox="0 0 {width_pt} 50"><text style="font-size: {size}px">a</text></svg>').encode()

    assert shown_px(svg(648), 688) == pytest.approx(40 / 3 * 688 / 864)
    assert shown_px(svg(324), 688) == pytest.approx(40 / 3)
    assert shown_px(svg(324), 358) == pytest.approx(40 / 3 * 358 / 432)
    assert shown_px(svg(504, 11), 358) == pytest.approx(11 * 4 / 3 * 358 / 672)


def test_every_chapter_has_figures_checked_here():
    chapters = {SCRIPTS[n].chapter for n in NAMES}
    assert {"attention", "position", "real_model", "generation", "experiments"} <= chapters
    assert {"pe_heatmap", "rope_rotation_2d", "alibi_bias_heads", "mha_pipeline"} <= set(NAMES)
    assert "wavelength_table" not in NAMES  # a table: text on the page, not in an image


def _files(site, name: str) -> dict:
    """``{(theme, layout): SVG bytes}`` of the build's default render of ``name``."""
    out = {}
    for theme, suffix in (("light", ""), ("dark", "-dark")):
        out[theme, "wide"] = (site / "figures" / f"{name}{suffix}.svg").read_bytes()
        if SCRIPTS[name].narrow:
            out[theme, "narrow"] = (site / "figures" / f"{name}-narrow{suffix}.svg").read_bytes()
    return out


@pytest.mark.build
@pytest.mark.parametrize("name", NAMES)
def test_smallest_text_is_readable_on_a_desktop_and_a_phone(built_site, name):
    svgs = _files(built_site, name)
    for theme in ("light", "dark"):
        desktop = shown_px(svgs[theme, "wide"], figure_text.COLUMN_PX[1280])
        phone = shown_px(svgs.get((theme, "narrow"), svgs[theme, "wide"]), figure_text.COLUMN_PX[390])
        assert desktop >= figure_text.LIMITS[1280], (name, theme, "desktop", round(desktop, 2))
        assert phone >= figure_text.LIMITS[390], (name, theme, "phone", round(phone, 2))


@pytest.mark.build
@pytest.mark.parametrize("name", NAMES)
def test_text_and_lines_stand_out_from_the_page(built_site, name):
    for (theme, layout), svg in _files(built_site, name).items():
        page = style.THEMES[theme]["bg"]
        texts, lines = figure_text.svg_colours(svg)
        faint = sorted((kind, c, round(style.contrast(c, page), 2))
                       for kind, colours, floor in (("text", texts, style.TEXT_CONTRAST), ("line", lines, 3.0))
                       for c in colours if style.contrast(c, page) < floor)
        assert not faint, (name, theme, layout, faint)
