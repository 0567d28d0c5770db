"""A figure or table that names a parameter names the value it was drawn with.

Labels once formatted parameters with ``:g``, which keeps six significant digits: a figure drawn
with ``top_p=0.9999999`` said "p = 1". ``figures._kit.style.exact`` keeps the short form where it
reads back as the same float and the exact shortest text where it does not.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from matplotlib.text import Text

import figures
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
