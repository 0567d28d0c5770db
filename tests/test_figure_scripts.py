"""Every figure script: its CLI writes each format, deterministically, and bad use is refused."""
import json
import subprocess
import sys

import pytest

import figures
from figures import _export

FIGURES = [n for n in figures.names() if not hasattr(figures.load(n), "table")]
TABLES = [n for n in figures.names() if hasattr(figures.load(n), "table")]
MAGIC = {"svg": b"<?xml", "png": b"\x89PNG", "pdf": b"%PDF"}


def _check(path, fmt):
    raw = path.read_bytes()
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
    assert FIGURES and TABLES


@pytest.mark.parametrize("name", FIGURES)
@pytest.mark.parametrize("fmt", _export.ALL_FORMATS)
def test_figure_cli_writes_each_format(name, fmt, tmp_path):
    out = tmp_path / f"{name}.{fmt}"
    assert figures.load(name).main(["--out", str(out)]) == 0
    _check(out, fmt)


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("fmt", ["md", "csv", "json"])
def test_table_cli_writes_each_format(name, fmt, tmp_path):
    out = tmp_path / f"{name}.{fmt}"
    assert figures.load(name).main(["--out", str(out)]) == 0
    _check(out, fmt)


@pytest.mark.parametrize("name", TABLES)
def test_table_refuses_image_formats(name, tmp_path):
    with pytest.raises(ValueError, match="is a table"):
        figures.load(name).main(["--out", str(tmp_path / "x.svg")])


def test_unknown_format_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"--out must end in one of"):
        figures.load(FIGURES[0]).main(["--out", str(tmp_path / "x.gif")])


@pytest.mark.parametrize("name", FIGURES)
def test_svg_is_deterministic_and_dark_differs(name, tmp_path):
    mod = figures.load(name)
    d = mod.data()
    a, b, c = tmp_path / "a.svg", tmp_path / "b.svg", tmp_path / "c.svg"
    _export.write(mod, d, a, salt=name)
    _export.write(mod, d, b, salt=name)
    _export.write(mod, d, c, theme="dark", salt=name)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    assert b"<dc:date>" not in a.read_bytes()


def test_script_runs_as_a_file_and_as_a_module(root, tmp_path):
    name = FIGURES[0]
    out = tmp_path / "direct.svg"
    subprocess.run([sys.executable, str(root / "figures" / f"{name}.py"), "--out", str(out)], check=True, cwd=tmp_path)
    _check(out, "svg")
    listing = subprocess.run([sys.executable, "-m", "figures", "list"], check=True, capture_output=True, text=True, cwd=root)
    for n in figures.names():
        assert n in listing.stdout
    bad = subprocess.run([sys.executable, "-m", "figures", "no_such_figure"], capture_output=True, text=True, cwd=root)
    assert bad.returncode == 2 and "unknown figure 'no_such_figure'" in bad.stderr


def test_cli_parameters_reach_data(tmp_path):
    out = tmp_path / "pe.json"
    figures.load("pe_heatmap").main(["--out", str(out), "--d-model", "6", "--n-positions", "3"])
    d = json.loads(out.read_text())
    assert len(d["pe"]) == 3 and len(d["pe"][0]) == 6


def test_markdown_table_helper():
    md = _export.markdown_table(["a", "b"], [[1, "x"]], "lr")
    assert md == "| a | b |\n|---|---:|\n| 1 | x |\n"
    with pytest.raises(ValueError, match="align must give l or r"):
        _export.markdown_table(["a", "b"], [], "l")
    with pytest.raises(ValueError, match="row has 1 cells, the header 2"):
        _export.markdown_table(["a", "b"], [["only"]], "ll")
