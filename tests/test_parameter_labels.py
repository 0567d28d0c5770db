"""A figure or table that names a parameter names the value it was drawn with.

Labels once formatted parameters with ``:g``, which keeps six significant digits: a figure drawn
with ``top_p=0.9999999`` said "p = 1". ``figures._kit.style.exact`` keeps the short form where it
reads back as the same float and the exact shortest text where it does not.
"""
from __future__ import annotations

import decimal
import math
import re
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.text import Text

import figures
from helpers import ROOT
from figures._kit import style
from figures._kit.reading import read, reads_one
from figures._kit.style import exact

#: A parameter at its edge draws without numpy's overflow warnings (a score past float16's range
#: is said in its row, not warned about).
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


@pytest.mark.parametrize("value, text", [
    (0.9, "0.9"), (0.5, "0.5"), (10000.0, "10000"), (16.0, "16"), (1e-05, "1e-05"), (2.0, "2"),
    (0.9999999, "0.9999999"),        # g: "1"
    (10000.4, "10000.4"),            # g: "10000.4" (six digits suffice)
    (1234567.5, "1234567.5"),        # g: "1.23457e+06"
    (123456789.0, "123456789"),      # g: "1.23457e+08"
    (0.1 + 0.2, "0.30000000000000004"),
    (-0.0, "0"),
])
def test_exact_reads_back_as_the_same_float(value, text):
    assert exact(value) == text
    assert float(exact(value)) == value


def _texts(name: str, **params) -> str:
    """Every text a script's drawing or table shows, for ``params``."""
    module = figures.load(name)
    data = module.data(**params)
    if hasattr(module, "draw"):
        fig = module.draw(data)
        try:
            return "\n".join(t.get_text() for t in fig.findobj(Text))
        finally:
            plt.close(fig)
    return module.table(data)


@pytest.mark.parametrize("name, param, value, label", [
    ("rope_rotation_2d", "theta", 0.50000001, "ω = 0.50000001 rad"),
    ("rope_frequencies_plot", "base", 10000.45, "base = 10000.45"),
    ("rope_decay", "base", 1234567.5, "base = 1234567.5"),
    ("pe_binary_clock", "base", 16.0000001, "base = 16.0000001"),
    ("cat_sat_mat_weights", "scale", 0.9999999, "0.9999999 · q kᵀ"),
    ("temperature_two_keys", "taus", (0.5, 1.0000001), "| 1.0000001 |"),
    ("temperature_two_keys", "scores", (2.0000001, 0.0), "(score 2.0000001)"),
    ("sampling_filters", "top_p", 0.9999999, "top-p, p = 0.9999999"),
    ("softmax_overflow", "scores", (1234567.5, 1.0), "| 1234567.5 |"),
    ("softmax_overflow", "scores", (1000.0000001,), "| 1000.0000001 |"),
    ("heads_in_action", "tau", 1.005, "τ = 1.005,"),
])
def test_a_parameter_in_a_label_is_the_value_drawn(name, param, value, label):
    """Each value here differs from its ``:g`` text ("0.5", "10000.4" would be the same, so the
    value is chosen where six digits are not enough): the label must show the value itself."""
    shown = _texts(name, **{param: value})
    assert label in shown, (name, param, label)


@pytest.mark.parametrize("value, text", [(1.005, "= 1.005"), (2 ** 0.5, "≈ 1.41"), (0.5, "= 0.5"), (12345.0, "= 12345"),
                                         (1.0000001, "≈ 1"), (0.001234, "= 0.001234")])
def test_equals_says_when_a_label_rounds(value, text):
    from figures._kit.style import equals

    assert equals(value) == text


def test_the_default_temperature_of_the_heads_grid_is_labelled_as_rounded():
    """τ = √2 is irrational: its label says ≈ (it said "τ = 1.41")."""
    assert "τ ≈ 1.41," in _texts("heads_in_action")


def test_a_byte_count_that_is_not_zero_never_shows_as_zero():
    """flash_io_table with one-element, one-byte parameters said "0 MiB" beside ratios of 0.7× and
    2.0×: each size is now written in the largest unit it fills (here bytes)."""
    import figures

    module = figures.load("flash_io_table")
    data = module.data(lengths=(1,), head_dims=(1,), n_heads=1, sram_kib=1, query_block=1)
    shown = module.table(data)
    assert "0\u00a0MiB" not in shown and "0 MiB" not in shown
    assert data["rows"][0]["naive"] > 0 and f"{data['rows'][0]['naive']:,}\u00a0B" in shown
    # the default table keeps its units
    assert "GiB" in module.table(module.data())


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1023, "1,023 B"), (1024, "1 KiB"), (40_000, "39.1 KiB"),
                                     (2_621_440, "2.5 MiB"), (1_587_200, "1.51 MiB"), (2**20 - 1, "1.00 MiB"),
                                     (3 * 2**30 // 2, "1.5 GiB"), (2**40, "1 TiB"), (1000 * 2**20, "1,000 MiB")])
def test_a_byte_count_reads_in_its_unit_to_three_digits(n, text):
    """By hand: 40,000 / 1,024 = 39.06; 2,621,440 / 2**20 = 2.5; 1,587,200 / 2**20 = 1.514."""
    from figures._kit.style import binary_size

    assert binary_size(n) == text.replace(" ", "\u00a0")  # a no-break space before the unit


@pytest.mark.parametrize("n, text", [(0, "0 FLOP"), (-0.0, "0 FLOP"), (640, "640 FLOP"), (2_560_000, "2.56 MFLOP"), (999_999, "1.00 MFLOP"),
                                     (4_294_967_296, "4.29 GFLOP"), (12_345, "12.3 kFLOP")])
def test_a_count_reads_with_its_si_prefix_to_three_digits(n, text):
    from figures._kit.style import si

    assert si(n, "FLOP") == text.replace(" ", "\u00a0")


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3", None])
def test_a_byte_count_must_be_a_whole_number_of_bytes(bad):
    from figures._kit.style import binary_size

    with pytest.raises(ValueError, match="n must be a whole number of bytes"):
        binary_size(bad)


_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def _bytes_in(cell: str) -> list[float]:
    """The byte counts a table cell shows ("2.5 MiB (3× less)" -> [2.5 * 2**20])."""
    return [float(v.replace(",", "")) * _UNITS[u] for v, u in re.findall(r"([\d,]+(?:\.\d+)?)\s(B|KiB|MiB|GiB|TiB)\b",
                                                                          cell.replace("\u00a0", " "))]


@pytest.mark.parametrize("name, params, exact", [
    # T = 512, d_head 128, one head (the pass's case): the two counts were both "2 MiB" beside 1.7x
    ("flash_io_table", dict(lengths=(512,), head_dims=(128,), n_heads=1), lambda r: [r["naive"], r["flash1"]]),
    ("flash_io_table", dict(lengths=(1,), head_dims=(64,), n_heads=3), lambda r: [r["naive"], r["flash1"]]),
    ("flash_backward_memory", dict(lengths=(64, 200), head_dims=(128,)), lambda r: [r["naive"], r["tiled"]["128"]]),
    ("heads_cost_table", dict(T=100), lambda r: [r["scores_bytes"]]),
])
def test_every_byte_count_in_a_table_is_within_half_a_percent_of_the_data(name, params, exact):
    """Each size a table shows, read back, is the data's byte count to three digits: no "0 MiB"
    for 40,000 bytes, no "2 MiB" for both 2.5 MiB and 1.51 MiB."""
    import figures

    module = figures.load(name)
    data = module.data(**params)
    lines = [line for line in module.table(data).splitlines()[2:]]
    assert len(lines) == len(data["rows"])
    for line, row in zip(lines, data["rows"]):
        shown = _bytes_in(line)
        want = exact(row)
        assert len(shown) == len(want), (line, want)
        for s, w in zip(shown, want):
            assert abs(s - w) <= 0.005 * w, (line, w)


def test_the_tiled_pass_keeping_more_than_the_naive_one_says_more():
    """T = 64 < d_head + 2: per row the tiled pass keeps 128 fp16 numbers and a float32 lse (260
    bytes), the naive one 64 fp16 weights (128 bytes): 260 / 128 = 2.03 times more, which the
    table said as "(0× less)"."""
    import figures

    module = figures.load("flash_backward_memory")
    shown = module.table(module.data(lengths=(64,), head_dims=(128,), dtypes=("float16",)))
    assert "(2.03× more)" in shown.replace("\u00a0", " ") and "less" not in shown


def test_small_attention_costs_are_not_written_as_zero():
    """heads_cost_table at T = 100: one head of 64 does 2 x 2 x 100² x 64 = 2.56 M FLOPs in its
    two products and holds 100² x 4 = 40,000 bytes of scores (the table said "0.00" and "0 MiB")."""
    import figures

    module = figures.load("heads_cost_table")
    shown = module.table(module.data(T=100)).replace("\u00a0", " ")
    last = shown.splitlines()[-1]
    assert "2.56 MFLOP" in last and "39.1 KiB" in last


def test_a_small_share_is_not_written_as_zero_percent():
    """attention_flops_table at T = 1 and 2: attention's share of the FLOPs is 4 T d / (8 d² + 4 T d)
    = 3,072 / 4,721,664 = 0.065 % and 0.13 % (d = 768), which the table wrote as "0%"."""
    import figures

    module = figures.load("attention_flops_table")
    data = module.data(lengths=(1, 2))
    shown = module.table(data)
    for row, want in zip(data["rows"], ("0.065%", "0.13%")):
        assert want in shown and row["attention_share"] == pytest.approx(4 * row["T"] * 768 / (8 * 768**2 + 4 * row["T"] * 768))
    assert "| 0% |" not in shown.replace("\u00a0", " ")


def test_a_share_that_is_not_all_is_not_written_as_100_percent():
    """attention_flops_table at T = 307,200 and 10,000,000 (d = 768): attention's share is
    T / (T + 2d) = 307,200 / 308,736 = 99.50 % and 10,000,000 / 10,001,536 = 99.985 %, which the
    table wrote as "100%" (whole percents from 0.995 up)."""
    import figures

    module = figures.load("attention_flops_table")
    lengths = (307_200, 10_000_000, 1_000_000_000_000)
    cells = _cells(module.table(module.data(lengths=lengths)), 3)
    for T, cell in zip(lengths, cells):
        share = T / (T + 2 * 768)
        assert cell != "100%" and float(cell.rstrip("%")) != 100, (T, cell)
        places = len(cell.rstrip("%").partition(".")[2])
        assert abs(float(cell.rstrip("%")) - 100 * share) <= 0.5 * 10 ** -places + 1e-12, (T, cell, share)
    from figures._kit import style

    # (0.995 is 0.99499999999999999556 as a float: 99%, as every float below 0.995 exactly)
    assert [style.percent(x) for x in (1.0, 0.995, 0.9951, 0.99999)] == ["100%", "99%", "99.5%", "99.999%"]


def test_a_ratio_that_is_not_one_is_not_written_as_one_in_the_causal_tiles_table():
    """flash_causal_tiles with blocks of 1: T (T + 1) / 2 of the T² scores are computed, which is
    (T + 1) / T times the halved count, 1.00001 at T = 10⁵ (the table wrote "1.000"; at 10⁷,
    "1.0000001×" now, the counting takes most of a minute here)."""
    import figures

    module = figures.load("flash_causal_tiles")
    shown = module.table(module.data(lengths=(100_000, 1024), block=1))
    cells = _cells(shown, 4)
    assert [float(c.rstrip("×")) for c in cells] == [1.00001, pytest.approx(1025 / 1024, abs=5e-4)], cells
    # and the share beside it, (T + 1) / 2T = 50.0005 % at T = 10^5, compared with half on the
    # page: it read "50.0%" (pass twenty)
    for T, cell in zip((100_000, 1024), _cells(shown, 3)):
        share = 100 * (T + 1) / (2 * T)
        places = len(cell.rstrip("%").partition(".")[2])
        assert float(cell.rstrip("%")) != 50 and abs(float(cell.rstrip("%")) - share) <= 0.5 * 10**-places, (T, cell)


def _cells(table: str, column: int) -> list[str]:
    """Column ``column`` of a Markdown table's body rows, no-break spaces read as spaces."""
    return [line.split("|")[1:-1][column].strip().replace("\u00a0", " ") for line in table.splitlines()[2:]]


def test_a_weight_that_is_not_zero_is_not_written_as_zero():
    """temperature_two_keys at tau = 0.2 and 0.15 (scores 2 and 0): by the closed form the second
    key's weight is e^(-2/tau) / (1 + e^(-2/tau)) = 4.54e-05 and 1.62e-06, and the entropy
    -(w1 ln w1 + w2 ln w2) is 4.99e-04 and 2.32e-05; the table wrote "0.0000" and "0.000"."""
    import math

    import figures

    module = figures.load("temperature_two_keys")
    shown = module.table(module.data(taus=(0.2, 0.15, 1.0)))
    for tau, w2_cell, h_cell in zip((0.2, 0.15, 1.0), _cells(shown, 2), _cells(shown, 3)):
        w2 = math.exp(-2 / tau) / (1 + math.exp(-2 / tau))
        h = -((1 - w2) * math.log(1 - w2) + w2 * math.log(w2))
        assert float(w2_cell) == pytest.approx(w2, rel=0.02), (tau, w2_cell, w2)
        assert float(h_cell) == pytest.approx(h, rel=0.02), (tau, h_cell, h)


@pytest.mark.parametrize("params", [dict(head_dims=(1024,)), dict(sram_kib=1, lengths=(4096,), head_dims=(1024,)),
                                    dict()], ids=["d1024", "sram1", "defaults"])
def test_a_ratio_below_one_is_written_to_three_digits_never_as_zero(params):
    """flash_io_table with d_head = 1024 moves more bytes with Algorithm 1 than the naive way
    (naive / Algorithm 1 = 0.047 and 0.038; 0.0016 with 1 KiB of SRAM), which the table wrote
    as "0.0×". Each ratio cell reads the row's own two byte counts' ratio to three digits."""
    import figures

    module = figures.load("flash_io_table")
    data = module.data(**params)
    shown = module.table(data)
    for column, key in ((5, "flash1"), (6, "flash2")):
        for row, cell in zip(data["rows"], _cells(shown, column)):
            want = row["naive"] / row[key]
            assert cell.endswith("×") and float(cell[:-1].replace(",", "")) == pytest.approx(want, rel=0.005), (cell, want)


def test_a_tiled_pass_keeping_as_much_as_the_naive_one_says_the_same():
    """T = 65, d_head = 64, float32: the naive pass keeps 65 x 65 x 4 = 16,900 bytes of weights,
    the tiled one 65 x (64 + 1) x 4 = 16,900 bytes of O and lse: the same, not "1× less"."""
    import figures

    module = figures.load("flash_backward_memory")
    shown = module.table(module.data(lengths=(65,), head_dims=(64,), dtypes=("float32",))).replace("\u00a0", " ")
    assert "(the same)" in shown and "less" not in shown and "more" not in shown


def test_style_fixed_and_times_never_write_a_number_that_is_not_zero_or_one_as_zero_or_one():
    from figures._kit import style

    assert [style.fixed(x, 4) for x in (0.25, 4.54e-05, 0.0, -2e-9)] == ["0.2500", "4.5e-05", "0.0000", "-2e-09"]
    assert [style.times(x) for x in (27.34, 1.0, 0.3123, 0.04707, 1.0004, 0.9996, 1.000000999999, 1 + 2**-52)] == [
        "27.3×", "1×", "0.312×", "0.0471×", "1.0004×", "0.9996×", "1.000001×", "1.0000000000000002×"]
    with pytest.raises(ValueError, match="ratio"):
        style.times(float("nan"))


@pytest.mark.parametrize("tau", [0.04, 0.02, 0.2, 1.0, 100.0])
def test_the_entropy_of_two_keys_keeps_a_weight_below_float64s_resolution(tau):
    """Two keys, scores 2 and 0: H = ln(1 + e^-d) + d e^-d / (1 + e^-d) with d = 2 / tau (the
    entropy of the two weights, by hand). At tau = 0.04 the second weight is 1.9e-22, and
    summing -w ln w with the first weight rounded to 1 gave 9.6e-21 for 9.8e-21."""
    import math

    import figures

    d = 2 / tau
    want = math.log1p(math.exp(-d)) + d * math.exp(-d) / (1 + math.exp(-d))
    got = figures.load("temperature_two_keys").data(taus=(tau,))["rows"][0]["entropy"]
    assert got == pytest.approx(want, rel=1e-12, abs=0)  # (approx alone allows 1e-12 absolute)


def test_a_heatmap_cell_that_is_not_zero_is_not_written_as_zero():
    """The offset matrix on the sinusoidal page: M[6][7] = sin(3 * 0.001) = 0.0029999955 (by hand:
    d_model = 8, plane 3, omega = 10000^(-6/8) = 0.001, k = 3) was drawn "0.00", and its mirror
    "-0.00". A cell that is not zero gets a significant digit; a zero is unsigned."""
    import math

    import figures
    from figures._kit import style

    module = figures.load("pe_offset_rotation")
    data = module.data()
    M = np.asarray(data["M"])
    want = math.sin(data["k_show"] * 10000 ** (-6 / data["d_show"]))
    assert data["d_show"] == 8 and M[6][7] == pytest.approx(want, rel=1e-12) and 0 < want < 0.005
    fig = module.draw(data)
    shown = [t.get_text() for t in fig.axes[0].texts]
    plt.close(fig)
    for value, text in zip(M.flat, shown):
        assert value == 0 or re.search(r"[1-9]", text), (value, text)
        assert text != "-0.00", text
    assert [style.cell_text(v) for v in (0.0029999955, -0.0029999955, -0.0, 9.02e-05, 0.25)] == \
        ["0.003", "-0.003", "0.00", "9e-05", "0.25"]
    assert style.cell_text(-math.inf) == "-inf"  # (its sign was taken as a zero's)


def test_a_zero_is_published_unsigned():
    """-0.0 (ALiBi's diagonal, -m * 0; an entropy whose other weights underflow) was published as
    "-0.0" in the JSON, "-0" in the CSVs and "-0.000" in a table."""
    import figures
    import mhalib
    from figures._kit import export, style

    bias = mhalib.alibi_bias(3, 2)
    assert not np.signbit(np.diagonal(bias, axis1=1, axis2=2)).any()
    assert not np.signbit(np.diagonal(mhalib.alibi_bias(3, 2, causal=False), axis1=1, axis2=2)).any()
    data = {"grid": np.array([[-0.0, 1.0], [-2.5, -0.0]]), "x": -0.0, "rows": [{"y": np.float32(-0.0)}]}
    for text in (export.to_json(data), export.to_csv(data), export.to_wide_csv(data)):
        assert not re.search(r"(?<![\d.])-0(?![.\d]*[1-9])", text), text
    assert style.fixed(-0.0, 3) == "0.000"
    module = figures.load("temperature_two_keys")
    shown = module.table(module.data(scores=(2000.0, 0.0), taus=(0.01, 1.0)))
    assert "-0.000" not in shown and "−0.000" not in shown, shown


def test_a_causal_tiles_row_with_a_skipped_tile_does_not_read_as_all_computed():
    """T = 100,001 in blocks of 100,000: 3 of the 4 tiles, T (T + 1) / 2 + ... by brute force,
    computed_share = 1 - 100,000 / 100,001² = 0.99999; the table wrote "100.0%" and "2×"."""
    import figures

    module = figures.load("flash_causal_tiles")
    T, b = 100_001, 100_000
    sizes = [b, T - b]  # the two blocks a side
    computed = sum(sizes[q] * sizes[k] for q in range(2) for k in range(2) if k <= q)
    share = computed / T**2
    row = module.table(module.data(lengths=(T,), block=b)).splitlines()[2]
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert share == pytest.approx(1 - b / T**2, rel=1e-12)
    assert cells[3] != "100.0%" and float(cells[3].rstrip("%")) == pytest.approx(100 * share, abs=5e-4), cells
    assert cells[4] == f"{share / 0.5:#.4g}×" == "2.000×", cells


def test_the_explorers_write_numbers_as_the_figures_do():
    """explorers.js's fixed() against style.fixed (readouts: two significant digits where the
    decimals would read zero) and style.cell_text (grid cells: one), on edges and on 400 random
    values, exact ties and huge values. The positional-encoding readout showed "PE = 0.0000" for -4.68e-7 (d_model 88,
    position 85, dimension 11), the heads explorer "0.0000" for a weight of 3.19e-6."""
    import json
    import shutil
    import subprocess

    from figures._kit import style
    from helpers import ROOT

    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the explorers' formatting runs in node for this test")
    rng = np.random.default_rng(5)
    # exact binary ties (Python rounds them to even, toFixed up: 0.125 to two places), a negative
    # tie that rounds away from zero (-0.0005 to three places is "-0.001"), and 1e21 on (toFixed
    # writes "1e+21"), found by pass fourteen; then random values and random ties k/2^m
    ties = [k / 2**m for m in range(1, 12) for k in range(1, 2**m, 2)][:200]
    values = [-4.68e-7, 9.7e-6, 0.003, 0.0031, 9.99e-5, -0.0, 0.0, 0.25, 3.19e-6, -1e-300, 0.00499, 0.005, 1.0,
              0.99995, -0.9985659668317713, 0.999, 1 - 1e-9, -1.0, 0.995, 0.9949999,
              0.125, 0.625, 2.5, 0.03125, -0.0005, -0.005, -0.05, 0.5, 1e21, 1.5e22, -3e25, *ties, *(-t for t in ties),
              *(rng.choice([-1, 1], 400) * 10.0 ** rng.uniform(-9, 1, 400)).tolist()]
    cases = [(v, d, 2) for v in values for d in (0, 1, 2, 4)] + [(v, 2, 1) for v in values]
    script = ("const src = require('fs').readFileSync(process.argv[1], 'utf8');"
              "const start = src.indexOf('  const fixed = (v, digits, sig = 2) => {');"
              "const end = src.indexOf('\\n  };', start) + 4;"
              "const helper = src.indexOf('  function absFixed(');"
              "eval(src.slice(helper, src.indexOf('\\n  }', helper) + 4) + '\\nglobalThis.absFixed = absFixed;');"
              "eval(src.slice(start, end).replace('const fixed', 'globalThis.fixed'));"
              "const cell = src.indexOf('  const cellText = (v, digits) => {');"
              "eval(src.slice(cell, src.indexOf('\\n  };', cell) + 4).replace('const cellText', 'globalThis.cellText'));"
              "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(cases.map(([v, d, s]) => s === 1 ? cellText(v, d) : fixed(v, d, s))));")
    run = subprocess.run([node, "-e", script, str(ROOT / "docs" / "javascripts" / "explorers.js")],
                         input=json.dumps(cases), capture_output=True, text=True, check=True)
    got = json.loads(run.stdout)
    want = [style.fixed(v, d) if s == 2 else style.cell_text(v, f"{{:.{d}f}}") for v, d, s in cases]
    assert [(c, g) for c, g, w in zip(cases, got, want) if g != w] == []
    assert "0.0000" not in got[:2] and got[0] == "-4.7e-07"


def test_a_huge_size_is_written_with_its_exact_digits():
    """attention_memory_table at T = 10⁹, batch 10⁶, 10⁶ heads: 4 T² B H = 4e30 bytes, which is
    3,725,290,298,461,914,062,500 GiB exactly (integer division); the float n / 2**30 wrote
    ...914,136,576."""
    import figures

    module = figures.load("attention_memory_table")
    data = module.data(lengths=(10**9,), batch=10**6, heads=10**6)
    fp32, fp16 = _cells(module.table(data), 2)[0], _cells(module.table(data), 3)[0]
    assert fp32 == f"{4 * 10**30 // 2**30:,} GiB" and fp16 == f"{2 * 10**30 // 2**30:,} GiB", (fp32, fp16)


def test_a_label_that_rounds_its_value_says_so():
    """pe_frequencies titled omega = 10^-0.5 "ω = 0.3162", alibi_bias_heads at 12 heads titled the
    slope 2^-0.5 "m = 1/1.41421": an "=" before a rounded number (style.equals writes "≈")."""
    import figures

    module = figures.load("pe_frequencies")
    data = module.data()
    fig = module.draw(data)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    plt.close(fig)
    for c, title in zip(data["curves"], titles):
        sign, text = re.search(r"ω ([=≈]) ([\d.e+-]+) rad", title).groups()
        assert (sign == "=") == (float(text) == c["omega"]), (title, c["omega"])
    module = figures.load("alibi_bias_heads")
    data = module.data(n_heads=12, show=(0, 8, 11))
    fig = module.draw(data)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title().startswith("head")]
    plt.close(fig)
    # the paper's slopes at 12 heads: 2^-1 ... 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (every
    # other slope of 16 heads): heads 1, 9 and 12 are 1/2, 1/1.414... and 1/11.31...
    assert [t.split("\n")[1] for t in titles] == ["m = 1/2", "m ≈ 1/1.41", "m ≈ 1/11.3"], titles


def test_an_alibi_slope_that_is_a_power_of_two_is_written_with_equals_at_any_head_count():
    """At 16, 32, 64 and 128 heads the slopes that are whole powers of two were a few ulp off
    (2^-1 came out as 0.5000000000000001), so the table wrote "2^−1 ≈ 0.5" and the heads figure
    "m ≈ 1/4": a slope 2^-k is 1/2^k exactly, by the recipe."""
    import figures

    module = figures.load("alibi_slopes_table")
    shown = module.table(module.data(head_counts=(16, 32, 64, 128)))
    cells = [c.strip() for line in shown.splitlines()[2:] for c in line.strip("|").split("|")[1:] if c.strip()]
    for cell in cells:
        exponent, sign, value = re.fullmatch(r"2\^−([\d.]+) ([=≈]) ([\d.e+-]+)", cell).groups()
        whole = float(exponent).is_integer()
        assert (sign == "=") == whole and (not whole or float(value) == 2.0 ** -float(exponent)), cell
    assert len(cells) == 16 + 32 + 64 + 128
    # every exponent is the recipe's dyadic fraction, written whole: 12 heads read "2^−0.5", not
    # the "2^−0.49999999999999994" of -log2(slope) once the exponent is written exactly
    from fractions import Fraction

    for n, extra in ((12, ["0.5", "1.5", "2.5", "3.5"]), (3, ["2"]), (255, None)):
        shown = module.table(module.data(head_counts=(n,)))
        exps = [re.match(r"2\^−([\d.]+) ", c.strip()).group(1) for line in shown.splitlines()[2:]
                for c in line.strip("|").split("|")[1:] if c.strip()]
        low = 2 ** (n.bit_length() - 1)  # by hand: 8h/L, then 8(2j + 1)/(2L)
        recipe = [Fraction(8 * h, low) for h in range(1, low + 1)] + [Fraction(8 * (2 * j + 1), 2 * low) for j in range(n - low)]
        assert [Fraction(e) for e in exps] == recipe, (n, exps[:12])
        if extra:
            assert exps[low:] == extra
    module = figures.load("alibi_bias_heads")
    fig = module.draw(module.data(n_heads=16, show=(1, 3, 5)))  # slopes 2^-1, 2^-2, 2^-3
    titles = [ax.get_title().split("\n")[1] for ax in fig.axes if ax.get_title().startswith("head")]
    plt.close(fig)
    assert titles == ["m = 1/2", "m = 1/4", "m = 1/8"], titles


def test_a_table_or_tick_that_rounds_its_value_says_so():
    """alibi_slopes_table wrote "2^−0.5 = 0.707107" (on the ALiBi page), pe_binary_clock at base
    10 ticked "ω = 0.316" for 10^-0.5; alibi_equivalence wrote a weight difference of 5.4e-06
    as "0.000" (T = 2, one head of width 1, seed 140)."""
    import figures

    module = figures.load("alibi_slopes_table")
    shown = module.table(module.data())
    assert "2^−0.5 ≈ 0.707107" in shown and "2^−3.5 ≈ 0.0883883" in shown and "2^−8 = 0.00390625" in shown
    module = figures.load("pe_binary_clock")
    fig = module.draw(module.data(base=10.0))
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels() if "ω" in t.get_text()]
    plt.close(fig)
    for tick in ticks:
        sign, text = re.search(r"ω ([=≈]) ([\d.e+-]+)", tick).groups()
        i = int(re.search(r"dims (\d+)", tick).group(1)) // 2
        omega = 10.0 ** (-2 * i / module.data(base=10.0)["d_model"])  # by hand: base^(-2i/D)
        assert (sign == "=") == (float(text) == omega), (tick, omega)
    assert any("≈" in t for t in ticks), ticks
    module = figures.load("alibi_equivalence")
    data = module.data(T=2, n_heads=1, d_head=1, seed=140)
    cell = _cells(module.table(data), 1)[1]
    assert data["alibi_vs_plain"] > 0 and re.search(r"[1-9]", cell), (data["alibi_vs_plain"], cell)


# ---- every decimal through one rule ----------------------------------------------------------------

#: A spec that rounds: fixed decimals, significant digits, an exponent or a percent, with a
#: precision or without one (":g" is six significant digits: 0.9999999 read "1"; pass twenty-eight).
BARE = re.compile(r"(?:\.\d+)?[efgEFG%]$")


def _bare_formats(source: str) -> list[tuple[int, str]]:
    """(line, spec) of every fixed-decimal, significant-digit, exponent or percent format in a
    script's source: an f-string's ``{x:.2f}``, a ``"{:.3f}"`` template, ``"%.1f" % x`` and ``format(x, ".0%")``; except a
    heatmap's ``annotate=`` template (style.heatmap writes each cell through style.cell_text) and
    a line that says why its text is exact (``# bare format: ...``)."""
    import ast

    tree = ast.parse(source)
    lines = source.splitlines()
    skip = {id(n) for call in ast.walk(tree) if isinstance(call, ast.Call)
                for kw in call.keywords if kw.arg == "annotate" for n in ast.walk(kw.value)}
    skip |= {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings
    skip |= {id(c) for n in ast.walk(tree) if isinstance(n, ast.FormattedValue) and n.format_spec
                 for c in ast.walk(n.format_spec)}  # an f-string's own spec, read below
    found = []
    for node in ast.walk(tree):
        spec = None
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            spec = "".join(v.value for v in node.format_spec.values if isinstance(v, ast.Constant))
            spec = spec if BARE.search(spec) else None
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            m = re.search(r"\{[^{}]*:([^{}]*)\}|%[-+ #0,]*\d*((?:\.\d+)?[efg%])", node.value)
            if m and (m.group(2) or BARE.search(m.group(1) or "")):
                spec = m.group(0)
            elif node.value and BARE.search(node.value) and re.fullmatch(r"[-+ #0,\d]*(?:\.\d+)?[efg%]", node.value):
                spec = node.value  # format(x, ".2f")
        if spec and "# bare format:" not in lines[node.lineno - 1]:
            found.append((node.lineno, spec))
    return sorted(found)


def test_the_scan_finds_every_form_of_a_bare_format():
    src = ('a = f"{x:.2f} and {y:,.1f} and {z:.0%} and {w:.3g} and {v:d} and {u:.1e} and {t:g} and {n:,}"\n'
           'b = "{:.3f}".format(x)\nc = "%.1f" % x\nd = format(x, ".2f")\n'
           'style.heatmap(m, annotate="{:.2f}")\ne = f"{x:.4f}"  # bare format: an exact half\n')
    assert _bare_formats(src) == [(1, ",.1f"), (1, ".0%"), (1, ".1e"), (1, ".2f"), (1, ".3g"), (1, "g"), (2, "{:.3f}"),
                                  (3, "%.1f"), (4, ".2f")]


def test_every_decimal_a_figure_script_writes_goes_through_style():
    """extrapolation_table wrote RoPE's accuracy at 8x, 0.0037 (every seed above zero), as "0.00"
    on the extrapolation page, and the best sinusoidal seed's 0.9986 as a perfect "1.00";
    one_head_combine at strength 20 wrote 1.5e-123 as "0.000", so its sum read the target's
    digits exactly. Each had its own f"{x:.2f}". A script writes a decimal with style.fixed,
    a weight or accuracy with style.share and a share in percent with style.percent."""
    scripts = sorted(p for p in (ROOT / "figures").rglob("*.py") if "_kit" not in p.parts)
    assert len(scripts) > 100
    bare = {str(p.relative_to(ROOT)): found for p in scripts if (found := _bare_formats(p.read_text()))}
    assert not bare, f"write these with style.fixed / share / percent (or say why with '# bare format:'): {bare}"


def _states(text: str, value: float, *, share: bool = False) -> None:
    """``text`` writes ``value``: within half a unit of its last digit, zero only for zero (and
    for a share, one only for one)."""
    shown = float(text.replace(",", ""))
    mantissa = re.split(r"[eE]", text)[0]
    places = len(mantissa.split(".")[1]) if "." in mantissa else 0
    unit = 10.0 ** (int(re.split(r"[eE]", text)[1]) - places) if re.search(r"[eE]", text) else 10.0 ** -places
    assert abs(shown - value) <= 0.5 * unit * (1 + 1e-9), (text, value)
    assert (shown == 0) == (value == 0), (text, value)
    if share:
        assert (shown == 1) == (value == 1), (text, value)


def test_the_extrapolation_table_writes_no_accuracy_as_zero_or_perfect_that_is_not():
    module = figures.load("extrapolation_table")
    data = module.data()
    shown = module.table(data)
    rows = [line.split("|")[2:-1] for line in shown.splitlines()[2:]]
    checked = 0
    for r, cells in zip(data["rows"], rows, strict=True):
        for i, cell in enumerate(cells):
            m = re.fullmatch(r"\s*([\d.]+) \[([\d.]+)–([\d.]+)\]\s*", cell)
            if not m:
                continue
            full = ["0" + t if t.startswith(".") else t for t in m.groups()]
            _states(full[0], r["mean"][i], share=True)
            # the seeds' range rounded outward: the lowest down, the highest up, by less than a unit
            for text, value, side in ((full[1], r["min"][i], -1), (full[2], r["max"][i], 1)):
                shown, unit = float(text), 10.0 ** -len(text.split(".")[1])
                assert 0 <= side * (shown - value) < unit * (1 + 1e-9), (text, value)
                assert (shown == 0) == (value == 0) and (shown == 1) == (value == 1), (text, value)
            checked += 3
    assert checked >= 60, checked
    lows = [v for r in data["rows"] for v in r["mean"] if v is not None and 0 < v < 0.005]
    assert lows, "the repeat task has an accuracy below 0.005 that must not read 0.00"


def test_one_head_combine_writes_no_output_as_zero_that_is_not():
    from mhalib import examples

    module = figures.load("one_head_combine")
    shown = module.table(module.data(strength=20.0))
    true = examples.one_head_vs_two(20.0)
    numbers = [re.findall(r"-?[\d.]+(?:e[-+]\d+)?", cell) for cell in _cells(shown, 2)]
    want = [*true["per_head"], true["out_two"], true["target"]]
    assert len(numbers) == len(want)
    for texts, values in zip(numbers, want, strict=True):
        for text, value in zip(texts, np.ravel(values), strict=True):
            _states(text, float(value))
    assert any(0 < abs(float(v)) < 1e-100 for v in np.ravel(true["out_two"]))


def test_a_percent_is_rounded_once_from_the_exact_value():
    """f"{x:.0%}" multiplies by 100 in floats, then rounds: 0.015 (1.4999999999999999 % exactly)
    was "2%", 0.465 (46.500000000000002 %) "46%". Expected digits from the float's exact value in
    fractions, rounded half to even by hand."""
    from fractions import Fraction

    from figures._kit import style

    def by_hand(x: float, places: int) -> str:
        scaled = Fraction(x) * 100 * 10 ** places
        whole, rest = divmod(scaled, 1)
        whole += rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1)
        text = str(whole).rjust(places + 1, "0")
        return (text[:-places] + "." + text[-places:] if places else text) + "%"

    for x in (0.015, 0.465, 0.3145, 0.715, 0.0125, 0.125, 0.5625, 0.665, 0.3735, 1.885):
        for places in (0, 1, 2):
            assert style.percent(x, places) == by_hand(x, places), (x, places)


def test_a_difference_in_scientific_notation_is_within_half_its_last_digit_and_never_reads_as_one():
    """Nine table cells wrote a difference as f"{x:.1e}": 0.99996 would read "1.0e+00" and an
    exact zero "0.0e+00" (alibi_equivalence at T = 1; pass twenty-one). style.sci writes them."""
    for x in (1.1102230246251565e-16, 0.99996, -0.999999, 1 - 2**-52, 2500.0, 1.0, -1.0, 7.25e-300):
        text = style.sci(x, 1)
        assert re.fullmatch(r"-?\d\.\d+e[-+]\d+", text), (x, text)
        _states(text, x)
        assert reads_one(text) == (abs(x) == 1), (x, text)
    assert style.sci(0.0, 1) == style.sci(-0.0, 1) == "0"


def test_three_digits_drop_trailing_zeros_only_where_the_text_is_the_value():
    """Pass fifty-nine: flash_io_table wrote "1 TiB" for 1,100,585,369,600 bytes (1.000977 TiB, by
    hand: 1,100,585,369,600 / 2**40) beside 1.001953 TiB, also "1 TiB". A text without its
    trailing zeros reads as exact; a rounded one keeps them (three significant digits)."""
    from figures._kit import style

    assert style.binary_size(1_100_585_369_600).replace(style.NBSP, " ") == "1.00 TiB"
    assert style.binary_size(2**40).replace(style.NBSP, " ") == "1 TiB"
    assert style.times(3.996) == "4.00×" and style.times(4.0) == "4×" and style.si(2.5e9, "B").startswith("2.5")
    rng = np.random.default_rng(59)
    for x in np.concatenate([10.0 ** rng.uniform(0, 6, 3000), rng.integers(1, 10**6, 300) / 8.0]):
        text = style.three_digits(x).replace(",", "")
        exact = decimal.Decimal(text) == decimal.Decimal(float(x))
        significant = len(text.replace(".", "").lstrip("0"))
        assert exact or significant >= 3, (x, text)  # exact, or every digit of three shown
        assert abs(decimal.Decimal(text) - decimal.Decimal(float(x))) <= decimal.Decimal(float(x)) * decimal.Decimal("0.005")


def test_the_number_writers_round_the_written_text_not_the_float_and_keep_no_stray_sign():
    """three_digits(9.995) was "10" (9.995 is 9.99499..., three digits "9.99"); times(5, digits=4)
    was "5.×" and times(12345.6, 4) "12346.×"; stated(-1e-4, ".3f") was "≈ -0.000", stated(nan)
    "≈ nan"."""
    from figures._kit import style

    assert [style.three_digits(x) for x in (9.995, 9.996, 99.95, 99.94, 1.005)] == ["9.99", "10.0", "100", "99.9", "1.00"]
    assert [style.times(x, digits=4) for x in (5.0, 12.0, 12345.6, 100.0)] == ["5.000×", "12.00×", "12,346×", "100.0×"]
    assert [style.times(x, digits=2) for x in (5.0, 9.96)] == ["5.0×", "10×"]
    assert style.stated(-1e-4, ".3f") == "≈ 0.000" and style.stated(-0.0, ".3f") == "= 0.000"
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="value must be a finite number"):
            style.stated(bad)


def test_a_csv_writes_no_value_just_short_of_one_as_one():
    """cat_sat_mat_weights at scale 50: the weight 0.999999999986 was "1" in the CSV beside its
    row's 1.9e-22 and 1.4e-11 (seven significant digits); the JSON kept every digit. The long
    CSV, the wide CSV and a single number, each against the exact values."""
    import csv
    import io

    from figures._kit import export

    w = np.array([[0.999999999986112, 1.388794e-11], [-0.99999999, 0.25], [1.0, 0.0]])
    long_rows = list(csv.reader(io.StringIO(export.to_csv({"w": w, "one": 0.999999999986112}))))
    texts = {(r[0], r[1]): r[2] for r in long_rows[1:]}
    wide_cells = [c for line in export.to_wide_csv({"w": w}).splitlines()[1:] for c in line.split(",")[1:]]
    assert len(wide_cells) == w.size
    for (i, j), v in np.ndenumerate(w):
        for text in (texts[("w", f"{i};{j}")], wide_cells[i * 2 + j]):
            assert (float(text) == 1) == (v == 1) and (float(text) == -1) == (v == -1), (v, text)
            assert abs(float(text) - v) <= 5e-7 * max(abs(v), 1e-300), (v, text)
    assert float(texts[("one", "")]) != 1


def test_a_heatmap_cell_just_short_of_one_does_not_read_as_one():
    """cat_sat_mat_weights at --scale 20 wrote six weights of 0.99995 as "1.00" beside "5e-05" (the
    row read as more than 1); one_head_weights at --strength 4 wrote 0.99996 as "1.000". A cell
    that reads as 1 holds exactly 1 (the causal map's first row)."""
    module = figures.load("cat_sat_mat_weights")
    data = module.data(scale=20.0)
    fig = module.draw(data)
    texts = [[t.get_text() for t in ax.texts] for ax in fig.axes[:2]]
    plt.close(fig)
    for key, cells in zip(("weights", "causal_weights"), texts, strict=True):
        values = np.ravel(data[key])
        assert len(cells) == len(values)
        for text, v in zip(cells, values):
            if text.startswith("≈"):
                continue
            assert (float(text) == 1) == (v == 1), (key, v, text)
            places = len(text.split(".")[1]) if "." in text and "e" not in text else None
            if places is not None:
                assert abs(float(text) - v) <= 0.5 * 10.0 ** -places + 1e-12, (key, v, text)
    assert any(0.9999 < v < 1 for v in np.ravel(data["weights"]))


def test_the_widgets_measured_texts_read_no_ratio_as_one_and_no_count_as_zero():
    """The generator said "The cache was 1.0 times as fast" for a measured 0.96 or 1.04, and the
    live model's progress "0.0 MB" after 40 kB had arrived (pass seventeen). Their own functions,
    in node."""
    import json
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the widgets' formatting runs in node for this test")
    script = ("const fs = require('fs'), js = (f) => fs.readFileSync(process.argv[1] + f, 'utf8');"
              "const g = js('generator.js'), i = g.indexOf('  function ratioText');"
              "eval(g.slice(i, g.indexOf('\\n  }\\n', i) + 4) + ';globalThis.ratioText = ratioText;');"
              "const b = js('bert_live.js'), j = b.indexOf('  const megabytes');"
              "eval(b.slice(j, b.indexOf('\\n', j)).replace('const megabytes', 'globalThis.megabytes'));"
              "console.log(JSON.stringify([[0.96, 1.04, 1, 2.345, 0.999, 1.0004].map(ratioText),"
              " [0, 40000, 1234, 50000, 23400000].map(megabytes)]));")
    run = subprocess.run([node, "-e", script, str(ROOT / "docs" / "javascripts") + "/"], capture_output=True,
                         text=True, check=True)
    ratios, sizes = json.loads(run.stdout)
    assert ratios == ["0.96", "1.04", "1.0", "2.3", "0.999", "1.0004"]
    assert sizes == ["0.0 MB", "0.04 MB", "0.001 MB", "0.1 MB", "23.4 MB"]


def test_the_explorers_bounds_round_outward_and_the_progress_never_reads_zero():
    """Pass fifty-three: the heads explorer's caption "colour 0 to 0.37" for a top of 0.3722
    (the static figure says 0.38), the sinusoidal explorer's "wavelengths 6.28 to 13536.71" for
    a largest of 13536.712, and the live model's "0.0 MB of 23.9 MB" after 64 KiB had arrived.
    Expected bounds from the floats' exact decimals (Decimal), rounded up or down by hand."""
    import json
    import random
    import shutil
    import subprocess
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the widgets' formatting runs in node for this test")
    rng = random.Random(53)
    values = [0.3721644051, 13536.71238968, 2 * math.pi, 0.37, 0.5, 19869.176531592202, 1234.5] + \
        [rng.uniform(0.02, 0.97) for _ in range(200)] + [rng.uniform(1, 1e5) for _ in range(200)]
    script = ("const fs = require('fs'), js = (f) => fs.readFileSync(process.argv[1] + f, 'utf8');"
              "const e = js('explorers.js'), a = e.indexOf('  function bounded('), z = e.indexOf('  // \"Nice\" tick');"
              "eval(e.slice(a, z) + ';globalThis.bounded = bounded;');"
              "const b = js('bert_live.js'), j = b.indexOf('  const megabytes');"
              "eval(b.slice(j, b.indexOf('\\n', j)).replace('const megabytes', 'globalThis.megabytes'));"
              "const k = b.indexOf('  function loadedText');"
              "eval(b.slice(k, b.indexOf('\\n  }', k) + 4) + ';globalThis.loadedText = loadedText;');"
              "const v = JSON.parse(process.argv[2]);"
              "console.log(JSON.stringify([v.map((x) => [bounded(x, 2, 'up'), bounded(x, 2, 'down')]),"
              " [1, 4096, 65536, 99999, 100000, 23900000].map((n) => loadedText(n, 23923796)),"
              " [0.99995, 3e-5, -0.004].map((x) => bounded(x, 2, 'up'))]));")
    run = subprocess.run([node, "-e", script, str(ROOT / "docs" / "javascripts") + "/", json.dumps(values)],
                         capture_output=True, text=True, check=True)
    bounds, progress, edges = json.loads(run.stdout)
    for x, (up, down) in zip(values, bounds, strict=True):
        cent = Decimal("0.01")
        assert up == str(Decimal(x).quantize(cent, rounding=ROUND_CEILING)), (x, up)
        assert down == str(Decimal(x).quantize(cent, rounding=ROUND_FLOOR)), (x, down)
    assert bounds[0] == ["0.38", "0.37"] and bounds[1] == ["13536.72", "13536.71"]
    assert edges == ["0.99996", "0.01", "-0.004"]  # not 1, a bound above 3e-5, and -0.00 would read 0
    for n, text in zip([1, 4096, 65536, 99999, 100000, 23900000], progress):
        part, whole = re.fullmatch(r"([\d.]+) MB of ([\d.]+) MB", text).groups()
        assert 0 < float(part) * 1e6 <= n and float(part) < float(whole), (n, text)  # arrived: never 0, never above


def test_a_negative_zero_reads_as_zero_and_bad_label_counts_are_refused():
    # pass fifty-six: percent(-0.0) was "-0%", times(-0.0) "-0×"; position_labels(10, most=0)
    # raised a bare StopIteration and position_labels(5.7) labelled 5 positions
    from figures._kit import style

    assert (style.percent(-0.0), style.percent(-0.0, 2), style.times(-0.0)) == ("0%", "0.00%", "0×")
    for n, most in ((10, 0), (5.7, 4), (0, 4), (True, 4)):
        with pytest.raises(ValueError, match="must be a whole number"):
            style.position_labels(n, most)


def test_a_bound_below_the_decimals_stays_on_its_side_in_the_explorers():
    """bounded(1.1e-18, 2, "down") wrote "1.1e-18", the shortest decimal, above the float
    1.0999...e-18 (pass fifty-six). Each side checked against the float's exact value."""
    import json
    import shutil
    import subprocess
    from fractions import Fraction

    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the explorers' formatting runs in node for this test")
    values = [1.1e-18, 6e-18, 8.5e-18, 9e-18, 1e-310, 3e-320, 5e-324, -3e-20, -1.1e-18]
    script = ("const fs = require('fs'); const e = fs.readFileSync(process.argv[1], 'utf8');"
              "const a = e.indexOf('  function bounded('), z = e.indexOf('  // \"Nice\" tick');"
              "eval(e.slice(a, z) + ';globalThis.bounded = bounded;');"
              "console.log(JSON.stringify(JSON.parse(process.argv[2]).map((x) => [bounded(x, 2, 'down'), bounded(x, 2, 'up')])));")
    run = subprocess.run([node, "-e", script, str(ROOT / "docs" / "javascripts" / "explorers.js"), json.dumps(values)],
                         capture_output=True, text=True, check=True)
    for x, (down, up) in zip(values, json.loads(run.stdout), strict=True):
        assert Fraction(down) <= Fraction(x) <= Fraction(up), (x, down, up)
        assert Fraction(down) != 0 or x <= 0, (x, down)


def test_a_tick_in_thousands_is_a_thousand_tokens():
    """rolling_kv_cache put its ticks at multiples of 1,024 tokens and labelled them "2,048k":
    2,097,152 tokens where a reader reads 2,048,000 (at --max-tokens 10000 --window 6000 the
    window's line stood left of the "6k" tick). Every tick's text, read with k = 1,000 and
    M = 1,000,000, is where it stands."""
    module = figures.load("rolling_kv_cache")
    for params in (dict(), dict(max_tokens=10_000_000), dict(max_tokens=10_000, window=6000), dict(max_tokens=2, window=1)):
        fig = module.draw(module.data(**params))
        fig.canvas.draw()
        ticks = [(t.get_position()[0], t.get_text()) for t in fig.axes[0].get_xticklabels()]
        plt.close(fig)
        assert len(ticks) >= 3, (params, ticks)
        for at, text in ticks:
            number, unit = re.fullmatch(r"([\d,]+)([kM]?)", text).groups()
            assert int(number.replace(",", "")) * {"": 1, "k": 1000, "M": 10**6}[unit] == at, (params, at, text)


def test_the_window_and_its_label_stay_on_the_rolling_cache_figure():
    """rolling_kv_cache --max-tokens 3 --window 1000000 (both in the CLI's ranges) wrote an SVG
    104,160,092 pt wide: the window's label stood at x = 1e6 on a 3-token axis; as a PNG it
    crashed ("Image size ... is too large"); near the right edge the label ran off the axes
    (pass thirty). Every text now lies inside the axes, and a window at or past the horizon
    says that the rolling cache is the full one there."""
    module = figures.load("rolling_kv_cache")
    for params in (dict(max_tokens=3, window=1_000_000), dict(max_tokens=32_768, window=40_000),
                   dict(max_tokens=32_768, window=32_768), dict(max_tokens=32_768, window=32_000), dict()):
        fig = module.draw(module.data(**params))
        fig.canvas.draw()
        ax = fig.axes[0]
        box = ax.get_window_extent()
        texts = {t.get_text(): t.get_window_extent() for t in ax.texts}
        plt.close(fig)
        for text, at in texts.items():
            assert box.x0 <= at.x0 and at.x1 <= box.x1 and box.y0 <= at.y0 and at.y1 <= box.y1, (params, text)
        past = params.get("window", 4096) >= params.get("max_tokens", 32_768)
        assert any(t.endswith("the full cache up to here") for t in texts) == past, (params, list(texts))
        assert any(t.strip() == "window" for t in texts) == (not past), (params, list(texts))


def test_a_memory_axis_ticks_its_exact_values_in_a_unit_the_data_fits():
    """attention_memory --lengths 1,2,3 ticked its "MiB" axis 9.53674e-07 (one byte, rounded by
    ``g``) and 1.90735e-06 (pass twenty-one). Its unit now fits the smallest point, and every
    tick of every log axis reads exactly where it stands (style.plain_log_ticks)."""
    module = figures.load("attention_memory")
    for lengths, name, size in (((1, 2, 3), "bytes", 1), ((64, 128, 256), "KiB", 2**10),
                                ((512, 1024, 8192), "MiB", 2**20), ((1, 100_000), "bytes", 1)):
        fig = module.draw(module.data(lengths=lengths))
        fig.canvas.draw()
        ax = fig.axes[0]
        fp32 = ax.get_lines()[0].get_ydata()
        ticks = [(t.get_position()[1], t.get_text()) for t in ax.get_yticklabels()]
        ticks += [(t.get_position()[0], t.get_text()) for t in ax.get_xticklabels()]
        plt.close(fig)
        assert ax.get_ylabel().startswith(f"{name} for "), (lengths, ax.get_ylabel())
        assert [v * size for v in fp32] == [4 * T * T for T in lengths]  # by hand: T^2 fp32 scores
        for at, text in ticks:  # plain numbers, or powers of two over a wide span ("$2^{-3}$")
            power = re.fullmatch(r"\$2\^\{(-?\d+)\}\$", text)
            assert text and (2.0 ** int(power[1]) if power else float(text)) == at, (lengths, at, text)
    # rolling_kv_cache --max-tokens 2 drew 256 KiB on a GiB axis ticked 0.00000 ... 0.00025
    module = figures.load("rolling_kv_cache")
    for params, name, size in ((dict(max_tokens=2, window=1), "KiB", 2**10), (dict(), "GiB", 2**30)):
        data = module.data(**params)
        fig = module.draw(data)
        ax = fig.axes[0]
        plt.close(fig)
        assert ax.get_ylabel() == f"KV cache ({name})", (params, ax.get_ylabel())
        assert [v * size for v in ax.get_lines()[0].get_ydata()] == list(data["full"])


def test_the_writers_refuse_what_they_cannot_write_truly():
    """style.counted(1.5, "token") wrote "1.5 tokens" and counted(1.0, "head") "1.0 head";
    binary_unit(-5) and binary_unit(nan) answered "bytes", binary_unit(inf) "TiB"; exact wrote the
    integer 2**53 + 2 as "9007199254740994.0" (pass thirty)."""
    assert style.counted(1.0, "head") == "1 head" and style.counted(np.int64(3), "head") == "3 heads"
    for bad in (1.5, True, "3", -1):
        with pytest.raises(ValueError, match="n must be a whole number, 0 or more, to count tokens"):
            style.counted(bad, "token")
    for bad in (-5, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="n must be a finite number of bytes, 0 or more"):
            style.binary_unit(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # np.uint64(2**64 - 1) < inf warned of an overflowing cast
        assert style.binary_unit(np.uint64(2**64 - 1)) == (2**40, "TiB")
    assert style.exact(2.0**53 + 2) == "9007199254740994" and style.exact(9999999999999998.0) == "9999999999999998"
    assert float(style.exact(2.0**60)) == 2.0**60  # past 1e16 Python's own exponent form, which reads back


def test_counts_read_as_counts_at_one_and_at_a_hundred_thousand():
    """cross_attention_cache --max_steps 1 ticked its decoding steps 0.00, 0.25, 0.50 and wrote
    "the 100000 source tokens"; flash_io_table --query-block 1 headed a column "1 query rows"
    (pass twenty-one)."""
    module = figures.load("cross_attention_cache")
    for params in (dict(max_steps=1), dict(max_steps=3), dict(source_len=100_000)):
        fig = module.draw(module.data(**params))
        fig.canvas.draw()
        steps = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        words = " ".join(t.get_text() for t in fig.axes[0].texts + fig.axes[0].get_legend().get_texts())
        plt.close(fig)
        assert steps and all(re.fullmatch(r"\d+", t) for t in steps), (params, steps)
        n = params.get("source_len", 32)
        assert f"the {n:,} source tokens" in words, (params, words)
    module = figures.load("flash_io_table")
    assert "1 query row |" in module.table(module.data(query_block=1)).splitlines()[0]
    head = figures.load("alibi_slopes_table")  # "| head | 1 heads | 3 heads |" (pass thirty-one)
    assert "| 1 head | 3 heads |" in head.table(head.data(head_counts=(1, 3))).splitlines()[0]
    assert "1,024 query rows |" in module.table(module.data(query_block=1024)).splitlines()[0]
    # one of a count is singular everywhere a table or title writes it (pass twenty-three)
    for name, params, where, text in (("decode_cost", dict(n_heads=1, d_model=128), "title", "1 head of 128"),
                                      ("attention_flops_table", dict(n_heads=1), "table", "(1 head)"),
                                      ("heads_cost_table", dict(n_heads=1), "table", "1 head of width"),
                                      ("kv_cache_latent_table", dict(context=1), "table", "| 1 token |"),
                                      ("sampling_beams", dict(max_new=1), "table", "(1 character)")):
        module = figures.load(name)
        if where == "table":
            shown = module.table(module.data(**params))
        else:
            fig = module.draw(module.data(**params))
            shown = " ".join(ax.get_title() for ax in fig.axes)
            plt.close(fig)
        assert text in shown, (name, text, shown[:300])
    # a page may ask attention_memory_table for a batch and heads: its bytes then count every
    # matrix, and its header says so (it read as one T x T matrix: pass twenty-three)
    module = figures.load("attention_memory_table")
    lines = module.table(module.data(batch=2, heads=4, lengths=(1, 3))).splitlines()
    assert "8 T×T matrices (batch × heads)" in lines[0]
    assert lines[2].split("|")[2].strip() == f"{2 * 4 * 1 * 1 * 4:,}"  # by hand: B H T^2 x 4 bytes


@pytest.mark.parametrize("name, params", [
    ("pe_heatmap", dict(n_positions=2)), ("pe_heatmap", dict(d_model=2)), ("learned_positions", dict(d_model=1)),
    ("pe_frequencies", dict(n_positions=2)), ("pe_dot_products", dict(max_offset=1)),
    ("pe_base_context", dict(context=2)), ("pe_base_context", dict(d_model=2)), ("rope_decay", dict(max_distance=1)),
    ("rope_layouts", dict(n_positions=1)), ("rope_frequencies_plot", dict(d_head=2)),
    ("pitfall_exponent", dict(d_model=2)), ("cross_attention_cache", dict(max_steps=2)),
    ("t5_buckets", dict(num_buckets=4)),
    ("sampling_temperature", dict(top_p=0.01, top_k=1)),  # "characters top-p keeps" read 0.6 ... 1.4 (pass 37)
])
def test_an_axis_that_counts_is_ticked_at_whole_numbers_however_few(name, params):
    """Over a few points matplotlib ticked "position 0.25", "pair i −0.025" and "decoding step
    1.50" (pass twenty-three). Every drawn tick of an axis that counts (positions, dimensions,
    offsets, distances, pairs, planes, steps) is a whole number."""
    counting = re.compile(r"(query |relative |decoding )?(position|dimension|offset|distance|pair|plane|step|bucket"
                          r"|characters .* keeps)")
    module = figures.load(name)
    fig = module.draw(module.data(**params))
    fig.canvas.draw()
    checked = 0
    for ax in fig.axes:
        for at, label, ticks, (lo, hi) in ((0, ax.get_xlabel(), ax.get_xticklabels(), sorted(ax.get_xlim())),
                                           (1, ax.get_ylabel(), ax.get_yticklabels(), sorted(ax.get_ylim()))):
            if not counting.match(label):  # (a "wavelength (positions)" axis is a length, not a count)
                continue
            drawn = [t.get_text() for t in ticks if lo <= t.get_position()[at] <= hi and t.get_text()]
            assert drawn and all(re.fullmatch(r"[−-]?\d+", t) for t in drawn), (name, params, label, drawn)
            if label == "bucket":  # buckets run 0 .. n - 1: no tick names another (t5_buckets ticked -1)
                assert all(0 <= int(t.replace("−", "-")) < params["num_buckets"] for t in drawn), drawn
            checked += 1
    plt.close(fig)
    assert checked, (name, "no counting axis found")


def test_the_widgets_say_a_coarse_clock_and_an_unfinished_load_as_they_are():
    """On a browser whose clock moves in 16.7 ms steps (privacy settings) a one-character run
    measured 0 ms: the generator wrote "first after 0.0 ms · Infinity characters/s" and "The cache
    was NaN times as fast"; the live model's status read "23.9 MB of 23.9 MB" at 23,880,000 of
    23,923,796 bytes; the tiny viewer would write one miss in 1,088 as "100%" (pass nineteen).
    Their own functions, in node."""
    import json
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the widgets' formatting runs in node for this test")

    def grab(file: str, name: str) -> str:  # the JS that defines `name` as a global
        return (f"{{ const src = js('{file}'), i = src.indexOf('  function {name}(');"
                f"eval(src.slice(i, src.indexOf('\\n  }}\\n', i) + 4).replace('function {name}', 'globalThis.{name} = function')); }}")

    script = ("const fs = require('fs'), js = (f) => fs.readFileSync(process.argv[1] + f, 'utf8');"
              "{ const b = js('bert_live.js'), j = b.indexOf('  const megabytes');"
              "eval(b.slice(j, b.indexOf('\\n', j)).replace('const megabytes', 'globalThis.megabytes')); }"
              + grab("generator.js", "ratioText") + grab("generator.js", "msText") + grab("generator.js", "rateText")
              + grab("bert_live.js", "loadedText") + grab("bert_viewer.js", "percentText") +
              "console.log(JSON.stringify([[0, 0.04, 16.7].map(msText), [rateText(1, 0), rateText(40, 16.7)],"
              " [0.04, 0.001].map(ratioText), [23880000, 23904999, 23905000, 23923795, 23923796, 0]"
              ".map((n) => loadedText(n, 23923796)).concat([loadedText(39500, 40000)]),"
              " [1, 0.99908, 0.004, 0, 4e-18, 1e-300, 5e-324].map(percentText),"
              " [23950000, 150000].map((n) => [megabytes(n), loadedText(n - 50000, n), loadedText(n, n)])]));")
    run = subprocess.run([node, "-e", script, str(ROOT / "docs" / "javascripts") + "/"], capture_output=True,
                         text=True, check=True)
    ms, rates, ratios, loaded, percents, ties = json.loads(run.stdout)
    # a size at a tie of tenths names one whole everywhere: the button "23.9 MB" beside progress
    # "of 24.0 MB" (toFixed on the binary 23.95 against Math.round on the bytes: pass forty-two)
    for button, during, done in ties:
        assert during.endswith(" of " + button) and done == f"{button} of {button}", (button, during, done)
    assert ms == ["under the clock's step", "0.04 ms", "16.7 ms"] and rates == ["–", "2395"]
    assert ratios == ["0.04", "0.001"]
    # what has arrived reads below the whole until it is the whole: "23.90 MB of 23.9 MB" with 28.8 kB
    # to come, "23.92 MB of 23.9 MB" above it (pass thirty-six); every part a lower bound of n
    assert loaded[4] == "23.9 MB of 23.9 MB" and loaded[5] == "0.0 MB of 23.9 MB"
    for n, text in zip((23880000, 23904999, 23905000, 23923795, 39500), loaded[:4] + loaded[6:]):
        part, whole = (float(t.split()[0]) for t in text.split(" of "))
        assert part < whole and part <= n / 1e6, (n, text)
    assert loaded[3] == "23.923 MB of 23.924 MB"  # by hand: 23,923,795 bytes down, 23,923,796 to nearest, in kB
    assert percents[:4] == ["100%", "99.9%", "0.4%", "0%"]
    # a share past toFixed's last digit (pass twenty-two: "0.000000000000000%" for each of these)
    for share, text in zip((4e-18, 1e-300, 5e-324), percents[4:]):
        assert text.endswith("%") and float(text[:-1]) == pytest.approx(100 * share, rel=0.05, abs=0), (share, text)


def test_a_bound_a_script_writes_is_on_its_side_and_never_reads_as_0_or_1():
    """style.bounded: "up to" a value rounded up, never below it; 1e-20 rounded down read
    "0.00000000000000000" (pass thirty): past 17 decimals it is written in powers of ten; a
    direction other than up or down, and a NaN or infinite value, are refused by name."""
    from fractions import Fraction

    from figures._kit import reading

    for x, places, direction in ((0.8649, 2, "up"), (0.8649, 2, "down"), (1e-20, 2, "down"), (1e-20, 2, "up"),
                                 (0.99997, 2, "up"), (-0.35245, 2, "down"), (1e-300, 3, "down"),
                                 (5e-324, 2, "down"), (-5e-324, 2, "up"), (1e-310, 3, "down")):
        text = style.bounded(x, places, direction)
        shown, value = Fraction(text), Fraction(repr(x))  # the text, and the value as Python writes it (reading.bound)
        assert (shown >= value) if direction == "up" else (shown <= value), (x, direction, text)
        assert read(text) != 0 and not reads_one(text), (x, direction, text)
    # a subnormal holds fewer digits than Python writes: 5e-324 is the float 4.94e-324, which
    # ".1e" writes "4.9e-324"; it was refused as "more digits than a float holds" (pass thirty)
    assert [format(reading.bound(5e-324, ".1e", d), ".1e") for d in ("down", "up")] == ["4.9e-324", "9.9e-324"]
    with pytest.raises(ValueError, match=r"more digits at '\.20f' than a float holds"):
        reading.bound(0.1, ".20f", "up")  # a normal float's binary digits are still refused
    with pytest.raises(ValueError, match=r"more digits at '\.100f' than a float holds"):
        style.bounded(1e308, 100, "up")  # it raised decimal's bare InvalidOperation (409 digits > 400)
    with pytest.raises(ValueError, match=r"direction must be 'up' or 'down', got 'UP'"):
        reading.bound(0.8649, ".2f", "UP")
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"value must be a finite number to round as a bound"):
            reading.bound(bad, ".2f", "up")


def test_a_bound_within_a_float_of_one_is_the_value_itself():
    """Pass forty-four: style.bounded(0.9999999999999992, 0, "up", percent=True) raised (its
    "never reads 1" loop reached a format no float can write on the bound's side); the value's
    own digits are its bound, both ways."""
    from fractions import Fraction

    from figures._kit import style

    for x in (0.9999999999999992, 0.9999999999999998, -0.9999999999999998):
        for percent in (True, False):
            text = style.bounded(x, 0, "up" if x > 0 else "down", percent=percent)
            shown = Fraction(text.rstrip("%")) / (100 if percent else 1)
            assert shown == Fraction(repr(x)) and abs(shown) < 1, (x, text)


@pytest.mark.parametrize("fmt, up, down", [("*>8.2f", "****0.14", "****0.13"), ("#<9.3e", "1.313e-01", "1.312e-01"),
                                           ("^+9.1%", " +13.2%  ", " +13.1%  "), ("08.2f", "00000.14", "00000.13")])
def test_a_bound_with_a_fill_and_a_width_is_rounded_on_its_side(fmt, up, down):
    """Pass thirty-eight: round=up with a fill ("*>8.2f") crashed with a bare decimal error (the
    padded text was read as the number); the bound is the digits', the padding only pads."""
    from figures._kit import reading

    assert [format(reading.bound(0.13125, fmt, d), fmt) for d in ("up", "down")] == [up, down]


def test_the_one_head_setup_writes_its_strength_exactly():
    """one_head_setup --strength 0.9999999 wrote the query of *sat* as "(1, 0 ∥ 1, 0)": ":g"
    keeps six significant digits (pass twenty-eight). The strength is written as given."""
    module = figures.load("one_head_setup")
    for strength, text in ((0.9999999, "0.9999999"), (3.1234567, "3.1234567"), (3.0, "3")):
        shown = module.table(module.data(strength=strength))
        assert f"({text}, 0" in shown, (strength, shown[:400])


def test_the_writers_docstring_examples_are_what_they_write():
    """The examples in figures/_kit/style.py's and reading.py's docstrings run as written."""
    import doctest

    from figures._kit import reading

    for module, least in ((style, 16), (reading, 0)):
        result = doctest.testmod(module, verbose=False)
        assert result.failed == 0 and result.attempted >= least, (module.__name__, result)
