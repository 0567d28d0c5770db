"""A figure drawn at the edges of its parameters still shows every number it draws.

Pass forty-seven ran the figures of the later chapters through their command lines at the ends
of their ranges: a heatmap's position labels ran together ("6063" at T = 64), a plot of one step
showed no line at all (a single point drawn as a line) with its labels out of the frame, and a
table's header read "1 tokens". Each case is drawn here at the edge that broke it.
"""
from __future__ import annotations

import re
from fractions import Fraction
from itertools import combinations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

import figures
from figures._kit import style
from helpers import ROOT

#: Each test draws a figure (a second or so of matplotlib): the full tier, so `make check` stays
#: under its minute.
pytestmark = pytest.mark.slow


def _drawn(name: str, layout: str = "wide", **params):
    module = figures.load(name)
    with style.theme("light"), style.layout_of(layout):
        fig = module.draw(module.data(**params))
        fig.canvas.draw()
    return fig


def _apart(labels) -> list[tuple[str, str]]:
    """The pairs of shown tick labels whose boxes overlap."""
    shown = [(t.get_text(), t.get_window_extent()) for t in labels if t.get_visible() and t.get_text()]
    return [(a, b) for (a, ba), (b, bb) in combinations(shown, 2) if ba.overlaps(bb)]


@pytest.mark.parametrize("layout", ["wide", "narrow"])
@pytest.mark.parametrize("T", [2, 16, 40, 64])
def test_position_labels_of_the_sliding_window_figure_stay_apart(T, layout):
    fig = _drawn("sliding_window_reach", layout, T=T, window=3, layers=12)
    try:
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                labels = axis.get_ticklabels()
                assert not _apart(labels), (T, layout, _apart(labels))
                texts = [t.get_text() for t in labels if t.get_text()]
                if axis.get_label_text().endswith("position"):  # every position axis names the last
                    assert str(T - 1) in texts and "0" in texts, texts
    finally:
        plt.close(fig)


def test_position_labels_are_steps_and_the_last_by_hand():
    shown = lambda n: [t for t in style.position_labels(n) if t]  # noqa: E731
    assert shown(16) == ["0", "5", "10", "15"]         # the default figure, as before
    assert shown(40) == ["0", "10", "20", "30", "39"]
    assert shown(64) == ["0", "20", "40", "63"]         # 60 would touch 63
    assert shown(3) == ["0", "1", "2"]
    assert len(style.position_labels(64)) == 64


def test_one_decoding_step_shows_both_caches_inside_the_frame():
    fig = _drawn("cross_attention_cache", source_len=1, max_steps=1, n_heads=1, d_head=1, n_layers=1)
    try:
        (ax,) = fig.axes
        lines = ax.get_lines()
        assert len(lines) == 2 and all(ln.get_marker() == "o" for ln in lines)  # a step is a dot, not an empty line
        assert ax.get_xlim()[1] > 1  # the dot is inside the frame, not cut in half by its edge
        assert ax.get_ylabel().endswith("(bytes)")  # 4 bytes, not 0.004 KiB
        assert all(float(t).is_integer() for t in ax.get_yticks())  # no quarter of a byte
        frame = ax.get_window_extent()
        legend = ax.get_legend().get_window_extent()
        assert frame.x0 <= legend.x0 and legend.x1 <= frame.x1 and legend.y1 <= frame.y1, (frame, legend)
    finally:
        plt.close(fig)


def test_the_base_model_cache_reads_in_kib_with_plain_lines():
    fig = _drawn("cross_attention_cache")
    try:
        (ax,) = fig.axes
        assert ax.get_ylabel().endswith("(KiB)")
        assert all(ln.get_marker() in ("None", None, "") for ln in ax.get_lines())  # 48 steps: a line
    finally:
        plt.close(fig)


def test_a_context_of_one_token_is_one_token():
    module = figures.load("kv_cache_table")
    header = module.table(module.data(contexts=[1, 3], batch=4096)).splitlines()[0]
    assert "| 1 token, batch 4096 |" in header and "| 3 tokens, batch 4096 |" in header, header


#: A count followed by a plural noun in a figure's text ("{n} tokens") reads "1 tokens" at one:
#: style.counted writes the noun for the count. Error messages are not figure text.
_PLURAL_AFTER_A_COUNT = re.compile(r"\}[ \u00a0](tokens|heads|layers|keys|queries|positions|steps|pairs|samples|"
                                   r"seeds|blocks|tiles|dimensions|rows|sequences|vectors|characters|planes)\b")


def test_figure_text_writes_each_count_with_its_own_noun():
    found = []
    for path in sorted((ROOT / "figures").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _PLURAL_AFTER_A_COUNT.search(line) and "raise " not in line and "Error(" not in line:
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "write these counts with style.counted:\n" + "\n".join(found)


def test_the_count_rule_finds_a_plural_after_a_count():
    assert _PLURAL_AFTER_A_COUNT.search('f"{n} tokens"') and not _PLURAL_AFTER_A_COUNT.search('f"{n} tokenizer"')


@pytest.mark.parametrize("task", ["repeat", "kback"])
def test_each_seed_range_of_the_extrapolation_table_holds_every_seed(task):
    """The brackets are the lowest and the highest seed: rounded to nearest they read
    "[.92–.92]" for seeds from 0.9155 to 0.9211 (pass forty-eight), inside the range."""
    module = figures.load("extrapolation_table")
    d = module.data(task=task)
    lines = module.table(d).splitlines()[2:]
    checked = 0
    for row, line in zip(d["rows"], lines):
        cells = [c.strip() for c in line.strip("|").split("|")][1:]
        for i, cell in enumerate(cells):
            found = re.fullmatch(r"(\S+) \[(\S+)–(\S+)\]", cell)
            if not found:
                assert cell in ("(as plain)", "not defined"), cell
                continue
            lo, hi = (float(t if t.startswith("1") else "0" + t) for t in found.group(2, 3))
            assert lo <= row["min"][i] and row["max"][i] <= hi, (row["method"], row["scaling"], i, cell, row["min"][i], row["max"][i])
            assert (hi == 1) == (row["max"][i] == 1) and (lo == 0) == (row["min"][i] == 0), cell
            checked += 1
    assert checked >= 20


@pytest.mark.parametrize("layout", ["wide", "narrow"])
@pytest.mark.parametrize("k", [1, 22, -1000])
def test_each_entry_of_the_offset_rotation_fits_its_cell(k, layout):
    """At d_show = 10 and 16 the entries ran into each other ("0.990.03"); at 8 and k = 1
    "0.99995" ran over its neighbour. d_show stops at 8, and a near-1 entry keeps one more
    digit, then reads "≈1.00"."""
    fig = _drawn("pe_offset_rotation", layout, k_show=k, d_show=8, d_model=8, ks=(1, 2))
    try:
        a = fig.axes[0]
        cell = a.get_window_extent().width / 8
        wide = [(t.get_text(), round(t.get_window_extent().width, 1)) for t in a.texts
                if t.get_window_extent().width > 0.98 * cell]
        assert not wide, (k, layout, round(cell, 1), wide)
    finally:
        plt.close(fig)


def test_the_offset_rotation_refuses_a_repeated_shift_and_shows_an_exact_zero():
    module = figures.load("pe_offset_rotation")
    with pytest.raises(ValueError, match="ks must be distinct shifts, got 1, 1"):
        module.data(ks=(1, 1))
    fig = _drawn("pe_offset_rotation", ks=(0, 1))  # k = 0 is exact: no bar on the log axis
    try:
        assert "0" in [t.get_text() for t in fig.axes[1].texts]
    finally:
        plt.close(fig)


@pytest.mark.parametrize("T, k", [(1, 1), (2, 1), (12, 10), (64, 63)])
def test_shaw_clipping_counts_pairs_in_whole_ticks_and_labels_its_bars_apart(T, k):
    fig = _drawn("shaw_clipping", T=T, k=k)
    try:
        b = fig.axes[1]
        assert all(float(t).is_integer() for t in b.get_yticks()), b.get_yticks()
        assert not _apart(b.xaxis.get_ticklabels()), _apart(b.xaxis.get_ticklabels())
    finally:
        plt.close(fig)


def test_one_width_still_shows_the_theory_line_and_no_labels_run_together():
    fig = _drawn("scaling_variance", d_heads=(64,), n_samples=100)
    try:
        a = fig.axes[0]
        theory = a.get_lines()[0]
        x = theory.get_xdata()
        assert len(x) == 2 and x[0] < 64 < x[-1]  # a segment through the width drawn, not one point
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                labels = axis.get_ticklabels() + axis.get_ticklabels(minor=True)
                assert not _apart(labels), _apart(labels)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name, params", [("backward_scaling", dict(d_heads=(512, 1), n_samples=10)),
                                          ("backward_scaling", dict(d_heads=(2, 2), n_samples=10)),
                                          ("scaling_variance", dict(d_heads=(64, 8)))])
def test_widths_out_of_order_are_refused(name, params):
    # backward_scaling --d-heads 512 1 exported "widest": 1 with the ratio of width 1
    with pytest.raises(ValueError, match="d_heads must be distinct widths in increasing order"):
        figures.load(name).data(**params)


# ---- pass fifty ---------------------------------------------------------------------------------

@pytest.mark.parametrize("tau", [0.01, 2**0.5])
def test_heads_in_action_states_its_colour_scale_as_a_bound_and_every_cell_fits(tau):
    """The title rounded the scale's top to nearest ("0 to 0.37" for 0.3722, "0 to 0.25" at
    τ = 100 for 0.2518, with every cell reading "0.25"); at τ = 0.01 "3e-53" and "0.99999" ran
    over their cells."""
    module = figures.load("heads_in_action")
    d = module.data(tau=tau)
    top = max(max(max(row) for row in d["maps"][p][k]) for p in d["presets"] for k, _ in module.MAPS)
    fig = _drawn("heads_in_action", tau=tau)
    try:
        stated = float(re.search(r"from 0 to ([\d.]+)", fig.texts[0].get_text() if fig.texts else fig._suptitle.get_text())[1])
        assert top <= stated and stated < 1 or top == 1, (top, stated)
        for ax in fig.axes:
            cell = ax.get_window_extent().width / 4
            wide = [t.get_text() for t in ax.texts if t.get_window_extent().width > 0.95 * cell]
            assert not wide, (tau, round(cell, 1), wide)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name, params", [
    ("flash_online_softmax", dict(n_keys=256, block=1)),           # 256 block numbers on each panel
    ("attention_memory", dict(lengths=(1, 3, 1_000_000), batch=7)),  # "32768262144"
    ("pe_binary_clock", dict(n_positions=16, n_pairs=6, base=1.01))])  # the largest it draws
def test_tick_labels_stay_apart_at_the_ends_of_the_parameters(name, params):
    fig = _drawn(name, **params)
    try:
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                labels = axis.get_ticklabels() + axis.get_ticklabels(minor=True)
                assert not _apart(labels), (name, _apart(labels)[:5])
    finally:
        plt.close(fig)


def test_the_binary_clock_stops_at_the_positions_it_can_label():
    from figures._kit import contract

    param = figures.scripts()["pe_binary_clock"].params["n_positions"]
    with pytest.raises(contract.ContractError, match="between 2 and 16, got '24'"):
        param.convert("24", "--n-positions")


def test_one_pair_of_wavelengths_is_a_dot_and_a_zero_bias_one_colour():
    fig = _drawn("pe_base_context", d_model=2, context=2, bases=(1.01, 1e12))
    try:
        assert all(ln.get_marker() == "o" for ln in fig.axes[0].get_lines() if ln.get_label().startswith("base"))
    finally:
        plt.close(fig)
    fig = _drawn("alibi_bias_heads", T=1, n_heads=1, show=(0,))
    try:
        norms = {(im.norm.vmin, im.norm.vmax) for ax in fig.axes for im in ax.get_images()}
        assert len(norms) == 1 and all(lo < hi for lo, hi in norms), norms  # one scale, not 0 to 0
        colours = {tuple(im.to_rgba(im.get_array())[0, 0]) for ax in fig.axes for im in ax.get_images()}
        assert len(colours) == 1, colours  # the same 0, the same colour
    finally:
        plt.close(fig)


def test_weights_that_differ_never_read_alike():
    module = figures.load("temperature_two_keys")
    d = module.data(scores=(0.001, 0.0), taus=(100.0,))
    row = module.table(d).splitlines()[2]
    a, b = (c.strip() for c in row.strip("|").split("|")[1:3])
    assert a != b and float(a) > 0.5 > float(b), row  # 0.5000025 and 0.4999975 both read "0.5000"
    # pass seventy-four: 0.5 ± 2.5e-13 read "0.500000000000" twice (the places stopped at 12)
    d = module.data(scores=(1e-10, 0.0), taus=(100.0,))
    row = module.table(d).splitlines()[2]
    a, b = (c.strip() for c in row.strip("|").split("|")[1:3])
    assert a != b and float(a) > 0.5 > float(b), row


def test_labels_say_what_was_counted():
    fig = _drawn("decode_cost")
    try:
        assert "Q, K, V" in fig.axes[0].get_ylabel()  # the counts include the projections
    finally:
        plt.close(fig)
    module = figures.load("extrapolation_accuracy")
    d = module.data()
    fig = _drawn("extrapolation_accuracy")
    try:
        labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
        assert any(f"not defined past length {d['L_train']}" in t for t in labels), labels  # "past 31" on a length axis
    finally:
        plt.close(fig)


# ---- pass fifty-two -----------------------------------------------------------------------------

def test_a_size_beside_another_gets_the_digits_that_tell_them_apart():
    """flash_backward_memory wrote "8 GiB" and "8 GiB (1.0005× more)" for 8 GiB and
    8.0039 GiB: the cell that says "more" must read more."""
    module = figures.load("flash_backward_memory")
    d = module.data(lengths=(1024,), head_dims=(1024,), dtypes=("float64",), n_heads=1024)
    row = module.table(d).splitlines()[2]
    naive, tiled = (c.strip().replace(style.NBSP, " ") for c in row.strip("|").split("|")[2:4])
    assert naive == "8 GiB" and tiled.startswith("8.004 GiB (") and "more" in tiled, row
    r = d["rows"][0]
    assert r["naive"] == 1024 * 1024**2 * 8 and r["tiled"]["1024"] == 1024 * 1024 * (1024 * 8 + 4)  # by hand


def test_sizes_told_apart_keep_their_order_in_plain_decimals():
    """Pass fifty-four: the first version wrote 12,345.6 TiB as "1.235e+04 TiB" beside
    "12,346 TiB" (reading larger), and 2**53 + 1 bytes as "8192 TiB" beside "8,192 TiB"."""
    def shown(n, other):
        return style.binary_size(n, apart_from=other).replace(style.NBSP, " ")

    assert shown(13574130751871386, 13574570556522496) == "12,345.6 TiB"
    assert shown(2**53 + 1, 2**53) == "8,192.000000000001 TiB"  # 8192 + 2**-40, to its first digit
    assert shown(2**33, 2**33 + 2**22) == "8 GiB"  # exactly what it reads: as it is
    assert shown(2**33 + 2**22, 2**33) == "8.004 GiB"


def test_two_sizes_given_each_other_read_apart_and_keep_their_digits():
    """Pass sixty-one: flash_backward_memory --lengths 129 wrote "1.0 MiB" and "1.0 MiB (1.01×
    more)" for 1,065,024 and 1,073,280 bytes: each took the fewest decimals that differ from
    the other's plain "1.02". By hand: 32 * 129**2 * 2 = 1,065,024 B = 1.015686 MiB (naive,
    float16) and 32 * 129 * (2 * 128 + 4) = 1,073,280 B = 1.023560 MiB (tiled, d_head 128)."""
    module = figures.load("flash_backward_memory")
    d = module.data(lengths=(129,), head_dims=(128,), dtypes=("float16",), n_heads=32)
    r = d["rows"][0]
    assert (r["naive"], r["tiled"]["128"]) == (32 * 129**2 * 2, 32 * 129 * (2 * 128 + 4))
    row = module.table(d).splitlines()[2]
    naive, tiled = (c.strip().replace(style.NBSP, " ") for c in row.strip("|").split("|")[2:4])
    assert naive == "1.016 MiB" and tiled.startswith("1.024 MiB (") and "more" in tiled, row
    rng = np.random.default_rng(61)
    for a, b in rng.integers(2**20, 2**22, (2000, 2)):
        a, b = int(a), int(b)
        if a == b:
            continue
        ta, tb = style.binary_size(a, apart_from=b), style.binary_size(b, apart_from=a)
        na, nb = (Fraction(t.split(style.NBSP)[0].replace(",", "")) for t in (ta, tb))
        assert na != nb and (na < nb) == (a < b), (a, b, ta, tb)  # apart, in their order
        for n, t in ((a, ta), (b, tb)):  # never fewer digits than the plain text
            assert len(t) >= len(style.binary_size(n)), (n, t)


@pytest.mark.parametrize("value, text", [(0.7, "<1"), (-0.7, ">-1"), (0.3, "<1"), (0.999, "<1"), (2.0, "2")])
def test_a_compact_cell_at_no_decimals_still_writes_a_number(value, text):
    # ".0f": the bound "<.01" became "<" with the leading zero stripped (pass fifty-four)
    assert style.cell_text(value, "{:.0f}", compact=True) == text


@pytest.mark.parametrize("params", [dict(d_head=2), dict(n_positions=1)])
def test_rope_layouts_refuses_what_makes_its_verdict_false_or_its_curves_empty(params):
    from figures._kit import contract

    script = figures.scripts()["rope_layouts"]
    (name, value), = params.items()
    with pytest.raises(contract.ContractError, match=f"parameter '{name}' must be an integer between"):
        script.params[name].convert(str(value), f"--{name}")


def test_a_small_pe_table_keeps_every_cell_inside_its_cell_and_its_sign():
    for base in (10000.0, 1e9):
        fig = _drawn("pe_heatmap", n_positions=12, d_model=8, base=base)
        try:
            a = fig.axes[0]
            cell = a.get_window_extent().width / 8
            wide = [t.get_text() for t in a.texts if t.get_window_extent().width > 0.95 * cell]
            assert not wide, (base, round(cell, 1), wide)
            assert a.texts[11 * 8].get_text().startswith(("-", "<-")), a.texts[11 * 8].get_text()  # sin(11) = -0.99999
        finally:
            plt.close(fig)


def test_offsets_are_ticked_at_whole_positions_and_the_head_count_is_named():
    fig = _drawn("rope_rotation_2d", n_positions=2)
    try:
        assert all(float(t).is_integer() for t in fig.axes[1].get_xticks()), fig.axes[1].get_xticks()
    finally:
        plt.close(fig)
    module = figures.load("flash_backward_check")
    assert "(16 heads)" in module.table(module.data(heads=16)).splitlines()[0]
