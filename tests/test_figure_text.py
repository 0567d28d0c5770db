"""Every figure readable where it is read: text sizes on screen, the phone layout, reserved space.

The limits (tools/figure_text.py): the smallest body text of every figure a reader sees is at
least 11 px on a 1280 px desktop and 9 px on a 390 px phone. The browser says how wide each
image is drawn; the SVG says how large its text is in its own units.
"""
from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET

import pytest

from helpers import ROOT, SMALL_FIGURE, SMALL_TABLE, mini_project, mkdocs_build

sys.path.insert(0, str(ROOT))
from tools import figure_text  # noqa: E402

from figures._kit import contract, style  # noqa: E402

# ---- reading an SVG's text sizes ----------------------------------------------------------------

SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="300pt" height="100pt" viewBox="0 0 300 100">
 <g style="font: 12px 'DejaVu Sans'"><text x="1" y="1">inherits 12</text></g>
 <text style="font-size: 10px">ten</text>
 <text><tspan style="font-size: 11px">10</tspan><tspan style="font-size: 7.7px">2</tspan></text>
 <text style="font-size: 4px">  </text>
</svg>"""


def test_text_sizes_are_body_sizes_inherited_from_groups_scripts_not_counted():
    width, sizes = figure_text.svg_text_sizes(SVG)
    # 12 from the group's font shorthand, 10 own, 11 the body of "10" with a 70 % superscript;
    # the blank text draws nothing and is not counted
    assert width == 300 and sorted(sizes) == [10, 11, 12]


def test_an_svg_without_a_viewbox_is_refused():
    with pytest.raises(ValueError, match="viewBox"):
        figure_text.svg_text_sizes('<svg xmlns="http://www.w3.org/2000/svg"><text>a</text></svg>')


def test_a_row_fails_below_the_limit_of_its_width():
    assert not figure_text.Row("p/", "f.svg", 390, 358.0, 8.99).ok
    assert figure_text.Row("p/", "f.svg", 390, 358.0, 9.0).ok
    assert not figure_text.Row("p/", "f.svg", 1280, 688.0, 10.9).ok


# ---- the phone layout ----------------------------------------------------------------------------

NARROW_FIGURE = SMALL_FIGURE.replace('from figures._kit import cli, style\n', '''from figures._kit import cli, style

NARROW = True
''').replace("style.new_figure(3, 2)", "style.new_figure(2 if style.narrow() else 5, 2)")


def test_narrow_is_read_from_the_source_and_only_a_figure_has_it(tmp_path):
    (tmp_path / "wide.py").write_text(NARROW_FIGURE)
    script = contract.read_script(tmp_path / "wide.py")
    assert script.narrow and {"svg_narrow", "svg_narrow_dark"} <= set(script.request().outputs("figure"))
    (tmp_path / "tab.py").write_text(SMALL_TABLE.replace("\nfrom figures._kit import cli\n",
                                                         "\nfrom figures._kit import cli\nNARROW = True\n"))
    with pytest.raises(contract.ContractError, match="only a figure"):
        contract.read_script(tmp_path / "tab.py")


def test_layout_context_is_checked_and_restored():
    assert style.layout() == "wide"
    with style.layout_of("narrow"):
        assert style.narrow()
    assert not style.narrow()
    with pytest.raises(ValueError, match="layout must be one of wide, narrow, got 'phone'"):
        with style.layout_of("phone"):
            pass


def _svg_px(svg: bytes) -> tuple[int, int]:
    root = ET.fromstring(svg)
    return tuple(round(float(root.get(k).removesuffix("pt")) * 4 / 3) for k in ("width", "height"))


@pytest.mark.build
def test_a_narrow_figure_gets_a_phone_source_and_every_image_its_size(tmp_path):
    proj = mini_project(tmp_path, {"wide": NARROW_FIGURE, "small": SMALL_FIGURE},
                        {"index.md": "# Home\n\n![first](figures/small.svg)\n\n![second](figures/wide.svg)\n",
                         "part/deep.md": "# Deep\n\n![again](../figures/wide.svg)\n"})
    run = mkdocs_build(proj / "mkdocs.yml", tmp_path / "site", tmp_path / "cache")
    assert run.returncode == 0, run.stderr[-3000:]
    site = tmp_path / "site"
    html = (site / "index.html").read_text()
    figs = site / "figures"
    wide, narrow = _svg_px((figs / "wide.svg").read_bytes()), _svg_px((figs / "wide-narrow.svg").read_bytes())
    assert narrow[0] < wide[0]  # drawn 2 in wide, not 5
    assert (figs / "wide-narrow-dark.svg").is_file() and not (figs / "small-narrow.svg").exists()
    for scheme, suffix in (("light", ""), ("dark", "-dark")):
        pic = re.search(rf'<picture><source media="\(max-width: 599.98px\)" srcset="figures/wide-narrow{suffix}.svg" '
                        rf'width="{narrow[0]}" height="{narrow[1]}"><img src="figures/wide{suffix}.svg#only-{scheme}" '
                        rf'alt="second" width="{wide[0]}" height="{wide[1]}" loading="lazy"', html)
        assert pic, html
    # the page's first figure loads at once, in both themes; it has no phone layout, so no <picture>
    small = _svg_px((figs / "small.svg").read_bytes())
    assert re.search(rf'<img src="figures/small.svg#only-light" alt="first" width="{small[0]}" '
                     rf'height="{small[1]}" loading="eager"', html), html
    assert 'src="figures/small-dark.svg#only-dark" alt="first"' in html and html.count('loading="eager"') == 2
    # raw HTML is not rewritten by MkDocs: a page one folder down (part/deep/) links ../../figures/
    deep = (site / "part" / "deep" / "index.html").read_text()
    assert 'srcset="../../figures/wide-narrow.svg"' in deep and 'src="../../figures/wide.svg#only-light"' in deep
    for url in re.findall(r'(?:src|srcset)="([^"#]+\.svg)', deep):
        assert (site / "part" / "deep" / url).resolve().is_file(), url


@pytest.mark.build
def test_the_command_line_draws_the_phone_layout_of_a_narrow_script(tmp_path):
    import subprocess

    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "wide.py").write_text(NARROW_FIGURE + '\nif __name__ == "__main__":\n'
                                                  "    raise SystemExit(main())\n")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"}
    sizes = {}
    for layout in ("wide", "narrow"):
        out = tmp_path / f"{layout}.svg"
        r = subprocess.run([sys.executable, str(tmp_path / "figures" / "wide.py"), "--layout", layout,
                            "--out", str(out)], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        sizes[layout] = _svg_px(out.read_bytes())[0]
    assert sizes["narrow"] < sizes["wide"]


# ---- every figure of the real site ----------------------------------------------------------------
# The smallest text of every figure on every page, measured in the browser at 1280 and 390 px, is
# part of the one tour of the site (tests/tour.py, checked in test_browser.py).

@pytest.mark.build
def test_every_figure_image_reserves_its_space(built_site):
    """width/height on every figure image (and source), matching its SVG: no layout shift."""
    checked = 0
    for html in built_site.rglob("index.html"):
        text = html.read_text(encoding="utf-8")
        for tag in re.findall(r'<(?:img|source)\b[^>]*?(?:src|srcset)="[^"]*figures/[^"#]+\.svg[^>]*>', text):
            url = re.search(r'(?:src|srcset)="([^"#]+)', tag).group(1)
            svg = (html.parent / url).resolve()
            w, h = _svg_px(svg.read_bytes())
            assert f'width="{w}"' in tag and f'height="{h}"' in tag, (html, tag)
            checked += 1
    assert checked > 100


# ---- contrast on the page colour -------------------------------------------------------------------

def test_contrast_ratio_follows_wcag_by_hand():
    # WCAG 2: (L1 + 0.05) / (L2 + 0.05); white L = 1, black L = 0 -> 21; #777777: channel
    # 0x77/255 = 0.4667 -> ((0.4667 + 0.055) / 1.055) ** 2.4 = 0.1845 -> 1.05 / 0.2345 = 4.48
    assert style.contrast("#ffffff", "#000000") == pytest.approx(21)
    assert style.contrast("#777777", "#ffffff") == pytest.approx(1.05 / 0.2345, rel=2e-3)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_line_palette_and_ink_meet_their_contrast_on_the_theme_page(theme):
    bg = style.THEMES[theme]["bg"]
    with style.theme(theme):
        lines = style.palette()
        inks = [style.ink(c) for c in style.OKABE_ITO]
    assert len(set(lines)) == len(style.OKABE_ITO)  # still seven different colours
    assert min(style.contrast(c, bg) for c in lines) >= 3.0
    assert min(style.contrast(c, bg) for c in inks) >= 4.5
    for key in ("fg", "muted", "accent"):
        assert style.contrast(style.THEMES[theme][key], bg) >= 4.5, key


def test_colours_are_read_from_text_runs_and_plotted_lines_not_ticks_or_cells():
    svg = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">
     <g id="line2d_1"><path style="fill: none; stroke: #e69f00; stroke-width: 1.5"/></g>
     <g id="line2d_2"><path style="stroke: #aaaaaa; stroke-opacity: 0.4"/></g>
     <g id="matplotlib.axis_1"><g id="line2d_3"><path style="stroke: #d0d7de"/></g></g>
     <text><tspan style="font-size: 11px; fill: #B8860B">a</tspan></text>
     <g style="fill: #123456"><text>inherited</text></g>
     <text style="fill: #ffffff">0.25</text>
    </svg>"""
    assert figure_text.svg_colours(svg) == ({"#b8860b", "#123456"}, {"#e69f00"})


@pytest.mark.build
def test_every_figure_text_and_line_has_contrast_on_its_page_colour(built_site):
    low = []
    svgs = sorted((built_site / "figures").glob("*.svg"))
    for path in svgs:
        bg = style.THEMES["dark" if path.stem.endswith("-dark") else "light"]["bg"]
        texts, lines = figure_text.svg_colours(path.read_bytes())
        low += [(path.name, "text", c, round(style.contrast(c, bg), 2)) for c in texts if style.contrast(c, bg) < 4.5]
        low += [(path.name, "line", c, round(style.contrast(c, bg), 2)) for c in lines if style.contrast(c, bg) < 3.0]
    assert len(svgs) > 100
    assert not low, low
