"""The fast paths of the figure step give the bytes the plain ones would.

A figure is drawn once per theme and layout, laid out once (``export.lay_out``) and saved in
every format from that drawing; JSON and CSV write long arrays of numbers as blocks of text.
These tests hold the shortcuts to what they replace: the command line (which draws and saves
one format) writes the site's bytes, each writer equals its element-by-element reference,
and the build records where its time went.
"""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

import figures
from figures._kit import export
from helpers import build_stats

# The figure kit's export paths, drawn with matplotlib: not mhalib's coverage, and the tracer
# makes matplotlib half as fast again (tests/conftest.py).
pytestmark = pytest.mark.no_cover

# ---- JSON and CSV: the same text as the element-by-element writers -----------------------------

EDGE_CASES = dict(
    grid=np.arange(6.0).reshape(2, 3), mixed=[1, 2.5, None, "x", True], empty_dict={}, empty_list=[],
    non_finite=np.array([np.nan, np.inf, -np.inf, 1.0]), nan_scalar=np.float64("nan"), int32=np.int32(3),
    bools=np.array([[True, False]]), pair=(1, 2), no_columns=np.zeros((2, 0)), no_rows=np.zeros((0,)),
    records=[{"x": 1.0}, {"y": [1, 2]}], cube=np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7,
    nested=[[1.5, 2.5], [3.5, float("nan")]], text="ünï, \"quoted\"", deep={"z": 1, "a": {"q": []}},
    int_and_float=[1, 2.0], strings=np.array(["a", "b"]), uint8=np.uint8(7), inf_list=[float("inf")],
    zero_d=np.array(5.0), ragged=[[], [1]], big_ints=np.array([2**40, -3]), tiny=np.array([1e-300, 5e-324]),
    **{"name, with comma": np.arange(3.0), 'quote"name': np.ones((2, 2))},
)


def _reference_csv(data: dict) -> str:
    """The long CSV written one element at a time (the writer before the fast path)."""

    def rows(prefix, value):
        if isinstance(value, dict):
            for k, v in value.items():
                yield from rows(f"{prefix}.{k}" if prefix else str(k), v)
            return
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
            for i, v in enumerate(value):
                yield from rows(f"{prefix}.{i}", v)
            return
        arr = np.asarray(value, dtype=object if isinstance(value, (list, tuple)) else None)
        if arr.ndim == 0:
            yield prefix, "", export.jsonable(arr.item() if hasattr(arr, "item") else value)
            return
        for idx, v in np.ndenumerate(arr):
            yield prefix, ";".join(map(str, idx)), export.jsonable(v)

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["name", "index", "value"])
    for name, index, value in rows("", data):
        w.writerow([name, index, export._g7(value) if isinstance(value, float) else value])
    return buf.getvalue()


@pytest.mark.parametrize("key", sorted(EDGE_CASES))
def test_json_and_csv_equal_the_element_by_element_writers(key):
    data = {key: EDGE_CASES[key], "n": 1}
    assert export.to_json(data) == json.dumps(export.jsonable(data), indent=1, sort_keys=True) + "\n"
    assert export.to_csv(data) == _reference_csv(data)


#: Scripts whose data hold long arrays, records, texts and tables.
DATA_SAMPLE = ["learned_positions", "pe_heatmap", "heads_in_action", "flash_memory_time", "wavelength_table",
               "rope_layouts"]


def test_json_and_csv_of_scripts_equal_the_element_by_element_writers():
    for name in DATA_SAMPLE:
        data = figures.load(name).data()
        assert export.to_json(data) == json.dumps(export.jsonable(data), indent=1, sort_keys=True) + "\n", name
        assert export.to_csv(data) == _reference_csv(data), name


def test_a_million_numbers_are_written_as_blocks():
    grid = np.random.default_rng(0).normal(size=(1000, 1000))
    data = dict(grid=grid)
    text = export.to_csv(data)
    assert text.count("\n") == 1 + grid.size and text.splitlines()[2] == f"grid,0;1,{grid[0, 1]:.7g}"
    assert json.loads(export.to_json(data))["grid"][999][998] == grid[999, 998]


def test_pixel_size_is_unique_or_refused():
    assert export._pixel_size(4 * 900 * 601, 900.0, 600.99999999) == (900, 601)
    assert export._pixel_size(4 * 900 * 600, 900.4, 600.2) == (900, 600)
    assert export._pixel_size(4 * 1000 * 1001, 1000.5, 1000.5) is None  # 1000 x 1001 or 1001 x 1000
    assert export._pixel_size(12, 900.0, 600.0) is None


# ---- images: one drawing saved in every format is what the command line writes -------------------

#: Annotated heatmaps (an explorer; one of its panels, drawn as the six are), a script with a
#: phone layout (markers, log axes), a figure with a colour bar and math in its title.
SAMPLE = {"heads_in_action": dict(presets=("Random",)), "flash_memory_time": {}, "pe_heatmap": {}}
#: Besides SAMPLE (whose dark drawings take the light layout too: figure titles, a phone layout),
#: a figure with colour bars beside several panels and one with a figure title.
LAYOUT_SAMPLE = ["alibi_bias_heads", "temperature_sweep"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLE)
def test_one_drawing_saved_in_every_format_gives_the_bytes_of_each_format_alone(name, tmp_path):
    """The site's build saves one drawing per theme in several formats, the dark drawing with
    the light one's layout (as the build does: export.lay_out_like); the command line saves one,
    laid out alone. The layout is fixed before the first save, so the order of the saves
    changes nothing (checked where there are several)."""
    script = figures.scripts()[name]
    module = figures.load(name)
    data = module.data(**SAMPLE[name])
    checks = [("light", "wide", ("svg", "pdf", "png")), ("dark", "wide", ("svg", "png"))]
    if script.narrow:
        checks += [("light", "narrow", ("svg",)), ("dark", "narrow", ("svg",))]
    light = {}
    for theme, layout, formats in checks:
        salt = export.salt_for(name, theme, layout)
        together = [tmp_path / f"{theme}-{layout}-together.{f}" for f in formats]
        laid = export.write_many(module, data, together, theme=theme, salt=salt, layout=layout, like=light.get(layout))
        assert (laid is None) == (theme == "dark"), (name, theme, layout)  # the dark drawing took the layout
        light.setdefault(layout, laid)
        for path, fmt in zip(together, formats):
            alone = export.write(module, data, tmp_path / f"{theme}-{layout}-alone.{fmt}", theme=theme, layout=layout)
            assert alone.read_bytes() == path.read_bytes(), (name, theme, layout, fmt)
        if len(formats) == 1:
            continue
        # and saved in the reverse order
        backwards = [tmp_path / f"{theme}-{layout}-backwards.{f}" for f in formats]
        export.write_many(module, data, backwards[::-1], theme=theme, salt=salt, layout=layout,
                          like=light[layout] if theme == "dark" else None)
        assert [p.read_bytes() for p in backwards] == [p.read_bytes() for p in together]


@pytest.mark.slow
@pytest.mark.parametrize("name", LAYOUT_SAMPLE)
def test_the_dark_drawing_that_takes_the_light_layout_is_the_dark_drawing_laid_out_alone(name, tmp_path):
    """The build lays each figure out once per layout (wide, phone) and gives the dark drawing
    the light one's layout (export.lay_out_like): its files are the bytes the command line
    writes for ``--theme dark``, which lays the dark drawing out by itself."""
    script = figures.scripts()[name]
    module = figures.load(name)
    data = module.data()
    for layout, formats in [("wide", ("svg", "png"))] + ([("narrow", ("svg",))] if script.narrow else []):
        light = export.write_many(module, data, [tmp_path / f"light-{layout}.svg"], theme="light",
                                  salt=export.salt_for(name, "light", layout), layout=layout)
        assert light is not None and light.axes, name
        taken = [tmp_path / f"taken-{layout}.{f}" for f in formats]
        salt = export.salt_for(name, "dark", layout)
        assert export.write_many(module, data, taken, theme="dark", salt=salt, layout=layout, like=light) is None
        # laid out by itself, as the command line does (one drawing saved in each format gives the
        # bytes of each format alone: the test above)
        alone = [tmp_path / f"alone-{layout}.{f}" for f in formats]
        assert export.write_many(module, data, alone, theme="dark", salt=salt, layout=layout) is not None
        for a, t, fmt in zip(alone, taken, formats):
            assert a.read_bytes() == t.read_bytes(), (name, layout, fmt)


def test_a_layout_is_taken_only_by_a_drawing_of_the_same_structure():
    """Another number of panels, another kind of Axes or another figure title: the drawing is
    laid out by itself (lay_out_like returns None and changes nothing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from figures._kit import style

    def drawing(panels=1, suptitle=False, polar=False):
        fig, axes = style.new_figure(4, 3, ncols=panels, subplot_kw={"projection": "polar"} if polar else {})
        if suptitle:
            fig.suptitle("A title")
        return fig

    with style.theme("light"):
        one = drawing()
        laid = export.laid_out(one)
        plt.close(one)
        assert laid.titles == ()
        for other in (drawing(panels=2), drawing(suptitle=True), drawing(polar=True)):
            before = [ax.get_position().bounds for ax in other.get_axes()]
            assert export.lay_out_like(other, laid) is None
            assert [ax.get_position().bounds for ax in other.get_axes()] == before
            assert other.get_layout_engine() is not None  # still to be laid out
            plt.close(other)
        same = drawing()
        assert export.lay_out_like(same, laid) == laid.bbox
        assert same.get_layout_engine() is None
        assert [ax.get_position().bounds for ax in same.get_axes()] == [a[2].bounds for a in laid.axes]
        plt.close(same)


def test_a_theme_changes_colours_only():
    """What lets the dark drawing take the light layout: the two themes set the same settings,
    and differ only in colours."""
    import matplotlib

    from figures._kit import style

    def settings(theme):
        with style.theme(theme):
            return dict(matplotlib.rcParams)

    light, dark = settings("light"), settings("dark")
    differ = {k for k in light if light[k] != dark[k]}
    assert differ and all("color" in k or k == "axes.prop_cycle" for k in differ), differ
    assert light["axes.prop_cycle"].keys == dark["axes.prop_cycle"].keys == {"color"}


@pytest.mark.build
@pytest.mark.parametrize("name", SAMPLE)
def test_the_command_line_writes_the_site_s_files(built_site, name, tmp_path):
    """``python -m figures NAME --out x.svg`` (and .pdf, --theme dark, --layout narrow) gives the
    bytes a reader downloads from the site (which serves no PNG: the browser draws it from the SVG)."""
    script = figures.scripts()[name]
    site = built_site / "figures"
    main = figures.load(name).main
    cases = [(f"{name}.svg", []), (f"{name}.pdf", []), (f"{name}-dark.svg", ["--theme", "dark"])]
    if script.narrow:
        cases += [(f"{name}-narrow.svg", ["--layout", "narrow"]),
                  (f"{name}-narrow-dark.svg", ["--layout", "narrow", "--theme", "dark"])]
    for site_name, args in cases:
        out = tmp_path / ("cli" + site_name[site_name.index("."):])
        assert main(["--out", str(out), *args]) == 0
        assert out.read_bytes() == (site / site_name).read_bytes(), site_name


@pytest.mark.build
def test_the_build_records_the_seconds_of_each_step_of_each_render(built_site):
    stats = build_stats(built_site)
    steps = stats["format_seconds"]
    assert set(steps) == set(stats["render_seconds"]) and len(steps) == stats["rendered"]
    value_only = 0
    for stem, seconds in steps.items():
        assert all(v >= 0 for v in seconds.values()), stem
        if set(seconds) == {"data", "json"}:  # a variant only a {{ value }} reads: data() and its JSON
            value_only += 1
            continue
        assert {"data", "json", "csv"} <= set(seconds), stem
        if "md" not in seconds:  # a figure: one drawing per theme, every format saved from it
            assert {"draw", "svg", "svg_dark", "pdf"} <= set(seconds) and not {"png", "png_dark"} & set(seconds), stem
    assert value_only >= 1  # the learned-position variants the pages quote with {{ value }}
    assert all("--" in stem for stem, s in steps.items() if set(s) == {"data", "json"})  # never a default render


def test_a_palette_png_keeps_every_colour_close():
    """The PNGs hold 256 colours (export._palette_png): on the annotated heatmaps of the dark
    theme, the hardest case on the site, no pixel moves by more than 16 of 255 in a channel and
    the average by under 3 (median cut moved one by 81)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from figures._kit import style

    module = figures.load("heads_in_action")
    with style.theme("dark"):
        fig = module.draw(module.data())
        bbox = export.lay_out(fig)
        raw = io.BytesIO()
        fig.savefig(raw, format="rgba", dpi=export.PNG_DPI, bbox_inches=bbox, facecolor=style.colors()["bg"])
        plt.close(fig)
    size = export._pixel_size(len(raw.getvalue()), bbox.width * export.PNG_DPI, bbox.height * export.PNG_DPI)
    exact = np.asarray(Image.frombuffer("RGBA", size, raw.getvalue(), "raw", "RGBA", 0, 1).convert("RGB"), float)
    png = Image.open(io.BytesIO(export._palette_png(raw.getvalue(), size)))
    assert png.mode == "P" and len(png.getcolors(256)) <= 256
    error = np.abs(np.asarray(png.convert("RGB"), float) - exact)
    assert error.max() <= 16 and error.mean() < 3, (error.max(), error.mean())
