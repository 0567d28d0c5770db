"""Every figure script's command line: each format, parameters checked before any work,
and the listing. (The build renders every figure's SVG, dark SVG, PDF, CSV and JSON:
those files are read from the shared build; the command line is run for every table and
for one figure in every format.)"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import figures
from helpers import data_file

SCRIPTS = figures.scripts()
FIGURES = sorted(n for n, s in SCRIPTS.items() if s.kind == "figure")
TABLES = sorted(n for n, s in SCRIPTS.items() if s.kind == "table")
# The real-model scripts run all-MiniLM-L6-v2 hundreds of times; the build renders them
# (SVG, PNG, CSV) and test_figure_data checks their numbers, so the CLI tests skip them.
LIGHT_TABLES = [n for n in TABLES if SCRIPTS[n].chapter != "real_model"]
MAGIC = {"svg": b"<?xml", "png": b"\x89PNG", "pdf": b"%PDF"}


def _check(path, fmt, raw: bytes | None = None):
    raw = path.read_bytes() if raw is None else raw
    assert raw, f"{path} is empty"
    if fmt in MAGIC:
        assert raw.startswith(MAGIC[fmt])
    elif fmt == "json":
        assert isinstance(json.loads(raw), dict)
    elif fmt == "csv":
        assert raw.startswith(b"name,index,value\n") and raw.count(b"\n") > 1
    elif fmt == "md":
        assert b"|" in raw or b"![" in raw


def test_there_are_figures_and_tables():
    assert len(FIGURES) > 20 and len(TABLES) > 10


@pytest.mark.build
@pytest.mark.parametrize("name", FIGURES)
def test_the_build_publishes_every_figure_as_pdf_and_json(built_site, name):
    """The build writes every format of every figure (real-model ones included) from one data()
    call; the command line's own formats are checked on one figure below."""
    _check(built_site / "figures" / f"{name}.pdf", "pdf")
    for fmt in ("json", "csv"):  # (a large one is served compressed)
        _check(built_site / "figures" / f"{name}.{fmt}", fmt, data_file(built_site, f"{name}.{fmt}"))


@pytest.mark.parametrize("fmt", ["svg", "png", "csv", "json", "md"])
def test_one_figure_writes_every_format(fmt, tmp_path):
    out = tmp_path / f"x.{fmt}"
    assert figures.load("pe_heatmap").main(["--out", str(out), "--d-model", "8", "--n-positions", "6"]) == 0
    _check(out, fmt)


@pytest.mark.build
@pytest.mark.parametrize("name", LIGHT_TABLES)
def test_a_tables_command_line_writes_the_files_the_site_serves(built_site, name, tmp_path, monkeypatch):
    """``python -m figures NAME --out NAME.md`` (and ``.json``, ``.csv``) writes, byte for byte,
    the file the site serves. What is tested is the command line's writing of each format, so
    the numbers are computed once for the three, as a build's worker computes them (the kit's
    memo of ``data()``; a fresh copy for each format): the sampling tables' data() is most of
    a minute of this machine's time."""
    from figures._kit import build

    module = figures.load(name)
    monkeypatch.setattr(module, "data", build._memoized(module.data))
    for fmt in ("md", "json", "csv"):
        out = tmp_path / f"{name}.{fmt}"
        assert module.main(["--out", str(out)]) == 0
        _check(out, fmt)
        assert out.read_bytes() == data_file(built_site, f"{name}.{fmt}"), (name, fmt)


@pytest.mark.parametrize("argv, message", [
    pytest.param(["wavelength_table", "--out", "x.svg"], "wavelength_table is a table: the file must end in one of .csv, .json, .md",
                 id="table-as-image"),
    pytest.param(["pe_heatmap", "--out", "x.gif"], "must end in one of .svg, .png, .pdf", id="unknown-format"),
    pytest.param(["pe_heatmap", "--d-model", "abc"], "--d-model: .*must be an integer", id="text-for-int"),
    pytest.param(["pe_heatmap", "--dmodel", "4"], "unrecognized arguments: --dmodel", id="unknown-option"),
    pytest.param(["rope_rotation_2d", "--theta", "nan"], "--theta: .*a finite number", id="nan-for-float"),
    # k = 0 leaves no relative position to clip: its data held NaN, refused with a developer's message
    pytest.param(["shaw_clipping", "--k", "0"], "parameter 'k' must be an integer between 1 and 63", id="k-below-range"),
])
def test_bad_command_lines_are_refused_before_any_work(argv, message, tmp_path, monkeypatch, capsys):
    """``python -m figures ...``'s own main(), called in this process (a new interpreter per case
    cost seconds of imports each; the command run as a process is tested once, below)."""
    import re

    from figures.__main__ import main

    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals exit
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert re.search(message, err), err
    assert not list(tmp_path.iterdir()), "nothing may be written"


@pytest.mark.parametrize("name, argv, says, never", [
    ("rope_frequencies_plot", ["--d-head", "8"], "rope_frequencies_plot, drawn with d_head = 8", "128"),
    ("pe_frequencies", ["--n-positions", "10", "--pairs", "2", "4"], "drawn with n_positions = 10, pairs = 2,4", "100"),
    ("decode_alignment", ["--prompt", "5", "--new", "1"], "drawn with new = 1, prompt = 5", "3-token"),
    ("rope_frequencies_plot", ["--d-head", "128"], "for d_head = 128", "drawn with"),
    ("rope_frequencies_plot", [], "for d_head = 128", "drawn with"),
])
def test_a_figures_markdown_line_describes_the_figure_it_was_drawn_as(tmp_path, name, argv, says, never):
    """Pass thirty-seven: ``--out x.md`` wrote the docstring's title, which names the default
    parameters ("... for d_head = 128"), whatever the command drew, and linked NAME.svg, not
    the SVG named as the line was; the title now stands only for the defaults."""
    out = tmp_path / "slide.md"
    assert figures.load(name).main(["--out", str(out), *argv]) == 0
    line = out.read_text()
    assert says in line and never not in line and line.rstrip().endswith("](slide.svg)"), line


def test_an_optional_float_parameter_is_a_number(tmp_path):
    out = tmp_path / "r.json"
    assert figures.load("rope_rotation_2d").main(["--out", str(out), "--theta", "1.0"]) == 0
    assert json.loads(out.read_text())["theta"] == 1.0


def test_script_runs_as_a_file_and_as_a_module(root, tmp_path):
    script = SCRIPTS["pe_heatmap"]
    out = tmp_path / "direct.svg"
    subprocess.run([sys.executable, str(script.path), "--out", str(out), "--d-model", "8"], check=True, cwd=tmp_path)
    _check(out, "svg")
    listing = subprocess.run([sys.executable, "-m", "figures", "list"], check=True, capture_output=True, text=True,
                             cwd=root)
    for n, s in SCRIPTS.items():
        assert n in listing.stdout and s.title in listing.stdout
    bad = subprocess.run([sys.executable, "-m", "figures", "no_such_figure"], capture_output=True, text=True, cwd=root)
    assert bad.returncode == 2 and "unknown figure or table 'no_such_figure'" in bad.stderr


def test_cli_parameters_reach_data(tmp_path):
    out = tmp_path / "pe.json"
    figures.load("pe_heatmap").main(["--out", str(out), "--d-model", "6", "--n-positions", "3"])
    d = json.loads(out.read_text())
    assert len(d["pe"]) == 3 and len(d["pe"][0]) == 6


def test_sequence_parameters_from_the_command_line(tmp_path):
    out = tmp_path / "h.json"
    figures.load("heads_in_action").main(["--out", str(out), "--presets", "Identity", "Swap K blocks"])
    assert json.loads(out.read_text())["presets"] == ["Identity", "Swap K blocks"]


def test_negative_numbers_in_any_form_are_values_on_the_command_line(tmp_path):
    """argparse took "-1e3" and "-1e-05" (Python's own text for -0.00001, as a published line
    writes it) for unknown options: "unrecognized arguments: -1e3"."""
    out = tmp_path / "t.json"
    scores = ["5", "-1e3", "-1e-05", "-.5", "-2.", "-3E+2"]
    figures.load("temperature_two_keys").main(["--out", str(out), "--scores", *scores, "--taus", "1"])
    assert json.loads(out.read_text())["scores"] == [5.0, -1000.0, -1e-05, -0.5, -2.0, -300.0]
    with pytest.raises(SystemExit) as refused:  # an option that is no number is still refused
        figures.load("temperature_two_keys").main(["--out", str(out), "--scores", "5", "-e3"])
    assert refused.value.code == 2


def test_scores_past_the_float_range_over_tau_are_refused_by_their_name(tmp_path, capsys):
    """temperature_two_keys --scores 1e308 -1e308 --taus 0.5 failed with "x must not hold NaN
    or +inf", naming an argument the reader never gave (pass thirty): 1e308 / 0.5 is past
    float64's largest, 1.8e308. Scores up to 0.5 x 1.8e308 in size pass at tau = 0.5."""
    module = figures.load("temperature_two_keys")
    with pytest.raises(SystemExit) as refused:
        module.main(["--out", str(tmp_path / "t.json"), "--scores", "1e308", "-1e308", "--taus", "0.5"])
    assert refused.value.code == 2
    said = capsys.readouterr().err
    assert "scores / tau" in said and "tau = 0.5" in said and "raise taus" in said, said
    got = module.data(scores=(8.9e307, -8.9e307), taus=(0.5,))["rows"][0]["weights"]
    assert list(got) == [1.0, 0.0]  # by hand: the gap 2 x 8.9e307 / 0.5 leaves exp(-gap) = 0


def test_importing_a_script_changes_no_global_state():
    """Importing a figure script (and the style module) must not switch the caller's
    matplotlib backend or theme."""
    code = ("import matplotlib; b = matplotlib.get_backend(); import figures; figures.load('pe_heatmap'); "
            "figures.load('wavelength_table'); from figures._kit import style; "
            "assert matplotlib.get_backend() == b, (b, matplotlib.get_backend()); "
            "assert style.colors() == style.THEMES['light']; print('ok')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"MPLBACKEND": "svg", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


def test_theme_colours_follow_the_context():
    from figures._kit import style

    assert style.colors()["bg"] == "#ffffff"
    with style.theme("dark"):
        assert style.colors()["bg"] == style.THEMES["dark"]["bg"]
        with style.theme("light"):
            assert style.colors()["bg"] == "#ffffff"
        assert style.colors()["bg"] == style.THEMES["dark"]["bg"]
    assert style.colors()["bg"] == "#ffffff"


def test_markdown_table_helper():
    from figures._kit import export

    md = export.markdown_table(["a", "b"], [[1, "x"]], "lr")
    assert md == "| a | b |\n|---|---:|\n| 1 | x |\n"
    with pytest.raises(ValueError, match="align must give l or r"):
        export.markdown_table(["a", "b"], [], "l")
    with pytest.raises(ValueError, match="row has 1 cells, the header 2"):
        export.markdown_table(["a", "b"], [["only"]], "ll")


def test_an_svg_clipped_to_a_path_is_the_same_bytes_every_time(tmp_path):
    """matplotlib hashes a clip *path*'s memory address into its SVG id; the kit renames the
    ids by order of use, so the same drawing saved from two different figure objects agrees."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle

    from figures._kit import export

    def draw(path):
        fig, ax = plt.subplots(figsize=(2, 2))
        img = ax.imshow(np.arange(16.0).reshape(4, 4))
        img.set_clip_path(Circle((1.5, 1.5), 1.5, transform=ax.transData))  # a path, not a rectangle
        junk = [Circle((0, 0), 1) for _ in range(50)]  # move the allocator so ids differ
        export.save_figure(fig, path, salt="same")
        plt.close(fig)
        return junk

    draw(tmp_path / "a.svg")
    draw(tmp_path / "b.svg")
    a, b = (tmp_path / "a.svg").read_bytes(), (tmp_path / "b.svg").read_bytes()
    assert b'clip-path="url(#clip1)"' in a and b'<clipPath id="clip1"' in a
    assert a == b


def test_compacting_an_svg_keeps_every_element_attribute_and_text():
    """export.compact_svg drops indentation, the spaces in style attributes and no-op rotations
    (the site's SVGs render pixel for pixel the same; checked in Chromium when it was written).
    Here, on a figure with text, ticks, a heatmap image and rotated labels: the same elements in
    the same order, the same text, the same attributes (styles compared as declarations)."""
    import io
    import xml.etree.ElementTree as ET

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from figures._kit import export, style

    module = figures.load("cat_sat_mat_weights")
    with style.theme("light"):
        fig = module.draw(module.data())
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg")
        plt.close(fig)
    raw = buffer.getvalue()
    small = export.compact_svg(raw)
    assert len(small) < 0.97 * len(raw)

    def rules(value):
        return sorted(tuple(p.strip() for p in d.split(":", 1)) for d in value.split(";") if d.strip())

    def described(svg):
        out = []
        for el in ET.fromstring(svg).iter():
            attrs = dict(el.attrib)
            if attrs.get("transform", "").startswith(("rotate(-0 ", "rotate(0 ")):
                del attrs["transform"]
            if "style" in attrs:
                attrs["style"] = rules(attrs["style"])
            for k, v in attrs.items():
                if isinstance(v, str) and v.startswith("data:"):
                    attrs[k] = "".join(v.split())  # base64: white space is not data
            out.append((el.tag, (el.text or "").strip(), attrs))
        return out

    before, after = described(raw), described(small)
    assert len(before) > 50 and before == after
    assert any(a.get("transform", "").startswith("rotate(-90") for _, _, a in after)  # a real rotation stays


def test_every_script_title_draws_in_a_font_readers_have():
    """A script's title is text on the pages (credit lines a teacher pastes into slides, table
    captions, gallery headings, the scripts' pages), drawn in the reader's fonts, not ours.
    Liberation Sans stands in for a machine without DejaVu (Arial's metrics and character set):
    every character of every title is in it. Subscript letters (qᵢ, Mₖᵀ) were not: they showed
    as empty boxes; math belongs in a caption's \\( \\), which KaTeX draws with its own fonts."""
    from fontTools.ttLib import TTFont

    font = Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf")
    if not font.is_file():
        pytest.skip(f"{font} is missing (apt-get install fonts-liberation)")
    cmap = TTFont(font).getBestCmap()
    missing = {name: sorted({ch for ch in s.title if ord(ch) not in cmap}) for name, s in figures.scripts().items()}
    assert {n: m for n, m in missing.items() if m} == {}


def _lowest(param):
    """A parameter's lowest allowed value, as data() takes it (a one-item tuple for a list)."""
    value = int(param.range.low) if param.type == "int" else float(param.range.low)
    return (value,) if param.sequence else value


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, s in SCRIPTS.items() if not s.data_from and any(
    p.range and p.range.low is not None and p.type in ("int", "float") for p in s.params.values())))
def test_each_parameter_at_the_lowest_value_its_range_allows_computes_or_says_why_not(name):
    """A reader may type the lowest value an option allows (its --help says so): data() then
    computes, or raises ValueError/TypeError saying which combination it refuses; never an
    IndexError from inside (``pe_binary_clock --real-d-model 2`` took ``omega[1]`` of one pair)."""
    import inspect

    module = figures.load(name)
    defaults = {k: p.default for k, p in inspect.signature(module.data).parameters.items()}
    for param in SCRIPTS[name].params.values():
        if not (param.range and param.range.low is not None and param.type in ("int", "float")):
            continue
        value = _lowest(param)
        if value == defaults.get(param.name):  # the default: every build computes it
            continue
        try:
            module.data(**{param.name: value})
        except (ValueError, TypeError) as exc:
            assert param.name in str(exc) or str(value) in str(exc), (name, param.name, value, str(exc))


def test_scaling_variance_without_512_says_what_its_missing_value_means(tmp_path):
    """``--d-heads 1`` (any list without 512) stopped with a message for the script's author
    ("declare NON_FINITE"); 512 not last gave no spread at 512 either. Now the value is missing
    where 512 was not asked for, declared, and read at 512 wherever it stands."""
    module = figures.load("scaling_variance")
    out = tmp_path / "s.json"
    assert module.main(["--out", str(out), "--d-heads", "1", "2", "--n-samples", "1000"]) == 0
    assert json.loads(out.read_text())["std_at_512"] is None
    data = module.data(d_heads=(512, 1024), n_samples=1000)
    assert data["std_at_512"] == data["variance"][0] ** 0.5


def test_a_machines_matplotlibrc_changes_no_figure(tmp_path):
    """Pass thirty-nine: a matplotlibrc in the working folder or the user's settings
    (axes.autolimit_mode, axes.formatter.limits, axes.unicode_minus) changed the ticks a figure
    prints, under the same cache key. A figure is drawn from matplotlib's own defaults and the
    kit's style, whatever the machine's settings."""
    import matplotlib

    module = figures.load("temperature_sweep")
    plain = tmp_path / "plain.svg"
    assert module.main(["--out", str(plain)]) == 0
    with matplotlib.rc_context({"axes.autolimit_mode": "round_numbers", "axes.formatter.limits": (-1, 1),
                                "axes.unicode_minus": False, "lines.linewidth": 4.0}):
        tuned = tmp_path / "tuned.svg"
        assert module.main(["--out", str(tuned)]) == 0
    assert tuned.read_bytes() == plain.read_bytes()
