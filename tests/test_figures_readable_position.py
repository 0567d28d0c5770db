"""The position chapter's figures can be read on a desktop and on a phone, in both themes.

Every figure script of figures/position/ is drawn to SVG with its default parameters, light and
dark, and also in its phone layout when it declares ``NARROW = True``. Its smallest text is
estimated as ``tools/figure_text.py --svg`` does: the image is shown at its natural size
(1 pt = 4/3 px) unless that is wider than the column, where it is shrunk to the column
(688 px on a 1280 px desktop, 358 px on a 390 px phone). Limits: 11 px and 9 px. Colours: text
at 4.5:1 or more on the page, plotted lines at 3:1 or more.
tests/test_figure_text.py measures the built site in a browser; this one names the figure that
regressed without building anything.
"""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import pytest

from helpers import ROOT

sys.path.insert(0, str(ROOT))
from tools import figure_text  # noqa: E402

import figures  # noqa: E402
from figures._kit import export, style  # noqa: E402

#: Every figure (not table) of the chapter, found on disk so that a new one is checked too.
NAMES = sorted(p.stem for p in (ROOT / "figures" / "position").glob("*.py")
               if p.stem != "__init__" and "\ndef draw(" in p.read_text())
#: About 45 SVGs, some 40 s of CPU: the build tier, beside the browser's measure of the site.
pytestmark = pytest.mark.build


def shown_px(svg: bytes, column_px: float) -> float:
    """Smallest body text of ``svg``, in px, once the image is drawn in a ``column_px`` column."""
    natural_px = float(ET.fromstring(svg).get("width").removesuffix("pt")) * 4 / 3
    view_width, sizes = figure_text.svg_text_sizes(svg)
    return min(sizes) * min(natural_px, column_px) / view_width


@pytest.fixture(scope="module")
def svgs(tmp_path_factory) -> dict:
    """``{(name, theme, layout): SVG bytes}``; layout ``narrow`` only for a NARROW script."""
    folder, out = tmp_path_factory.mktemp("position-figures"), {}
    for name in NAMES:
        module = figures.load(name)
        values = module.data()
        layouts = ("wide", "narrow") if getattr(module, "NARROW", False) else ("wide",)
        for theme in ("light", "dark"):
            for layout in layouts:
                path = folder / f"{name}-{theme}-{layout}.svg"
                export.write(module, values, path, theme=theme, layout=layout)
                out[name, theme, layout] = path.read_bytes()
    return out


def test_the_chapter_has_the_figures_this_checks():
    assert {"pe_heatmap", "rope_rotation_2d", "alibi_bias_heads", "t5_buckets"} <= set(NAMES)
    assert "wavelength_table" not in NAMES  # a table: text on the page, not in an image


def test_shown_px_by_hand():
    """A 10 pt text in a 9 in (648 pt = 864 px) figure: shrunk to 688 px on a desktop,
    10 x 4/3 x 688 / 864 = 10.62 px; in a 4.5 in (432 px) figure, its own size, 13.33 px."""
    def svg(width_pt):
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width_pt}pt" height="50pt" '
                f'viewBox="0 0 {width_pt} 50"><text style="font-size: 10px">a</text></svg>').encode()

    assert shown_px(svg(648), 688) == pytest.approx(40 / 3 * 688 / 864)
    assert shown_px(svg(324), 688) == pytest.approx(40 / 3)
    assert shown_px(svg(324), 358) == pytest.approx(40 / 3 * 358 / 432)


@pytest.mark.parametrize("name", NAMES)
def test_smallest_text_is_readable_on_a_desktop_and_a_phone(svgs, name):
    has_narrow = (name, "light", "narrow") in svgs
    for theme in ("light", "dark"):
        desktop = shown_px(svgs[name, theme, "wide"], figure_text.COLUMN_PX[1280])
        phone = shown_px(svgs[name, theme, "narrow" if has_narrow else "wide"], figure_text.COLUMN_PX[390])
        assert desktop >= figure_text.LIMITS[1280], (name, theme, "desktop", round(desktop, 2))
        assert phone >= figure_text.LIMITS[390], (name, theme, "phone", round(phone, 2))


@pytest.mark.parametrize("name", NAMES)
def test_text_and_lines_stand_out_from_the_page(svgs, name):
    for (n, theme, layout), svg in svgs.items():
        if n != name:
            continue
        page = style.THEMES[theme]["bg"]
        texts, lines = figure_text.svg_colours(svg)
        faint = sorted((kind, c, round(style.contrast(c, page), 2))
                       for kind, colours, floor in (("text", texts, 4.5), ("line", lines, 3.0))
                       for c in colours if style.contrast(c, page) < floor)
        assert not faint, (name, theme, layout, faint)
