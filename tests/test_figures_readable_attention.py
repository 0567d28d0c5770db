"""The attention and practice chapters' figures, readable without a browser: text size and colour.

Each figure is drawn to SVG in both themes (and in its phone layout when it has one) and
measured the way ``tools/figure_text.py --svg`` estimates it: an image is drawn at its own
size (pt x 4/3 px) or shrunk to the column it sits in. Limits: 11 px in a desktop column
(688 px), 9 px in a phone's column (358 px); text colours 4.5:1 and plotted lines 3:1 on the
page.
The browser test (tests/test_figure_text.py) measures the built site; this one catches a
regression in seconds, figure by figure.
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

FIGURES = ["mha_pipeline", "heads_in_action", "temperature_sweep", "scaling_variance", "pitfall_exponent",
           "one_head_outputs", "one_head_weights", "attention_memory_measured", "attention_memory",
           "transformer_block", "cat_sat_mat_weights", "cat_sat_down_x"]
#: It draws 28 SVGs (about 20 s of CPU): the full tier, beside the browser's measure of the site.
pytestmark = pytest.mark.build


def smallest_px(svg: bytes, drawn_max: float) -> float:
    """The smallest text of ``svg`` in px when it is drawn at most ``drawn_max`` px wide."""
    natural = float(ET.fromstring(svg).get("width").removesuffix("pt")) * 4 / 3
    box, sizes = figure_text.svg_text_sizes(svg)
    return min(sizes) * min(natural, drawn_max) / box


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """``{(name, theme, layout): svg bytes}`` for every figure of the list."""
    out, svgs = tmp_path_factory.mktemp("figs"), {}
    for name in FIGURES:
        module = figures.load(name)
        data = module.data()
        for theme in ("light", "dark"):
            for layout in ("wide", "narrow") if getattr(module, "NARROW", False) else ("wide",):
                path = out / f"{name}-{theme}-{layout}.svg"
                export.write(module, data, path, theme=theme, layout=layout)
                svgs[name, theme, layout] = path.read_bytes()
    return svgs


def test_the_estimate_by_hand():
    """11 pt (14.67 px) text in a 7 in figure (672 px): its own size in a 688 px column, and
    shrunk to a phone's 358 px, 14.67 x 358 / 672 = 7.81 px."""
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" width="504pt" height="100pt" viewBox="0 0 504 100">'
           b'<text style="font-size: 11px">x</text></svg>')
    assert smallest_px(svg, 688) == pytest.approx(11 * 4 / 3)
    assert smallest_px(svg, 358) == pytest.approx(11 * 4 / 3 * 358 / 672)


@pytest.mark.parametrize("name", FIGURES)
def test_text_reads_on_a_desktop_and_a_phone(drawn, name):
    narrow = ("narrow" in {layout for (n, _, layout) in drawn if n == name})
    for theme in ("light", "dark"):
        wide = drawn[name, theme, "wide"]
        assert smallest_px(wide, figure_text.COLUMN_PX[1280]) >= figure_text.LIMITS[1280], (name, theme, "desktop")
        phone = drawn[name, theme, "narrow" if narrow else "wide"]
        assert smallest_px(phone, figure_text.COLUMN_PX[390]) >= figure_text.LIMITS[390], (name, theme, "phone")


@pytest.mark.parametrize("name", FIGURES)
def test_text_and_lines_have_contrast_on_the_page(drawn, name):
    for (n, theme, layout), svg in drawn.items():
        if n != name:
            continue
        bg = style.THEMES[theme]["bg"]
        texts, lines = figure_text.svg_colours(svg)
        low_text = {c: round(style.contrast(c, bg), 2) for c in texts if style.contrast(c, bg) < style.TEXT_CONTRAST}
        low_line = {c: round(style.contrast(c, bg), 2) for c in lines if style.contrast(c, bg) < 3.0}
        assert not low_text and not low_line, (name, theme, layout, low_text, low_line)
