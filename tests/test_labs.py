"""The labs' exercises: every unfinished template fails its check, every solution passes it,
and the solutions are right by values derived here by hand (not only by mhalib, which the
checks compare with). Also :func:`mhalib.exercises.check` itself.

The labs are run here cell by cell, in order, in one namespace, as Jupyter would run them.
"""
from __future__ import annotations

import contextlib
import io
import re
import math

import numpy as np
import pytest

from helpers import ROOT
from mhalib.exercises import check

LABS = sorted((ROOT / "docs" / "labs").glob("*.py"))


def _tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


@pytest.fixture(scope="module")
def ran():
    """{lab stem: (namespace, [(cell, printed text), ...])} for every lab."""
    import jupytext

    out = {}
    for path in LABS:
        ns: dict = {"__name__": "__lab__"}
        cells = []
        for n, cell in enumerate(jupytext.read(path).cells):
            if cell.cell_type != "code":
                cells.append((cell, ""))
                continue
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                exec(compile(cell.source, f"{path.name}[cell {n}]", "exec"), ns)  # noqa: S102
            cells.append((cell, buf.getvalue()))
        out[path.stem] = (ns, cells)
    return out


def _exercises(cells):
    """(template output, solution output) for each exercise: a code cell with a TODO and
    the next code cell, which must be tagged as a solution."""
    code = [(c, text) for c, text in cells if c.cell_type == "code"]
    pairs = []
    for i, (cell, text) in enumerate(code):
        if "TODO" in cell.source:
            assert "solution" not in _tags(cell), "a TODO template is tagged as a solution"
            solution, solved = code[i + 1]
            assert "solution" in _tags(solution), f"the cell after a TODO is not a solution:\n{cell.source[:200]}"
            pairs.append((cell, text, solution, solved))
    return pairs


@pytest.mark.parametrize("lab", [p.stem for p in LABS])
def test_each_template_fails_its_check_and_each_solution_passes(ran, lab):
    _, cells = ran[lab]
    pairs = _exercises(cells)
    assert 2 <= len(pairs) <= 3, f"{lab} has {len(pairs)} exercises"
    for template, text, solution, solved in pairs:
        n_checks = template.source.count("check(")
        assert n_checks >= 1
        assert "not yet:" in text and "right:" not in text, text
        assert solved.count("right:") == text.count("not yet:") and "not yet:" not in solved, solved
        # the solution runs the same checks as its template
        checks = [line for line in template.source.splitlines() if "check(" in line]
        assert checks == [line for line in solution.source.splitlines() if "check(" in line]


@pytest.mark.parametrize("lab", [p.stem for p in LABS])
def test_solutions_are_tagged_hidden_in_jupyter_and_nothing_else_is(ran, lab):
    _, cells = ran[lab]
    for cell, _ in cells:
        hidden = cell.metadata.get("jupyter", {}).get("source_hidden", False)
        assert hidden == ("solution" in _tags(cell)), cell.source[:120]


def test_labs_write_math_as_notebooks_do(root):
    """Jupyter and nbconvert read math between $ signs; a single-backslash \\( is a Markdown escape
    and would show as a bare parenthesis."""
    import jupytext

    for path in LABS:
        for cell in jupytext.read(path).cells:
            if cell.cell_type == "markdown":
                assert "\\(" not in cell.source and "\\[" not in cell.source, (path.name, cell.source[:80])


# ---- the solutions, against values derived by hand ----------------------------------------

def test_lab1_solutions(ran):
    ns, _ = ran["lab1_mha"]
    # splitting [0 .. 7] into two heads: head 0 gets columns 0-3, head 1 columns 4-7, for every token
    x = np.arange(16.0).reshape(2, 8)
    want = np.array([[[0, 1, 2, 3], [8, 9, 10, 11]], [[4, 5, 6, 7], [12, 13, 14, 15]]])
    np.testing.assert_array_equal(ns["split_heads_by_hand"](x, 2), want)
    # one query (1, 0) against keys (1, 0) and (0, 0), d = 2: scores 1/sqrt(2) and 0
    out, w = ns["attention_by_hand"](np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 0.0]]),
                                     np.array([[1.0, 0.0], [0.0, 1.0]]))
    a = math.exp(1 / math.sqrt(2))
    np.testing.assert_allclose(w, [[a / (a + 1), 1 / (a + 1)]], rtol=1e-14)
    np.testing.assert_allclose(out, w, rtol=1e-14)  # the values are the identity
    # huge scores: no overflow (the row maximum is subtracted)
    _, w = ns["attention_by_hand"](np.array([[1.0, 0.0]]), np.array([[2000.0, 0.0], [1999.0, 0.0]]), np.eye(2))
    np.testing.assert_allclose(w, [[a / (a + 1), 1 / (a + 1)]], rtol=1e-12)  # scores differ by 1/sqrt(2)
    # W_Q, W_K, W_V, W_O of 512 x 512 and four biases of 512: 4 * 262144 + 2048
    assert ns["mha_parameters"](512, 8) == ns["mha_parameters"](512, 1) == 1_050_624


def test_lab2_solutions(ran):
    ns, _ = ran["lab2_positions"]
    # D = 4: omega = (1, 1/100)
    np.testing.assert_allclose(ns["pe_row"](3, 4), [math.sin(3), math.cos(3), math.sin(0.03), math.cos(0.03)],
                               rtol=1e-14)
    np.testing.assert_allclose(ns["pe_row"](0, 6), [0, 1, 0, 1, 0, 1])
    # a quarter turn: (sin p, cos p) -> (sin(p + pi/2), cos(p + pi/2)) = (cos p, -sin p)
    b = ns["shift_block"](1, math.pi / 2)
    np.testing.assert_allclose(b, [[0, 1], [-1, 0]], atol=1e-15)
    p = 0.3
    np.testing.assert_allclose(np.array([math.sin(p), math.cos(p)]) @ b.T, [math.cos(p), -math.sin(p)], atol=1e-15)
    # d = 4: theta = (1, 1/100); (1, 0) turned by m rad, (0, 1) by m/100 rad, counter-clockwise
    m = 2
    np.testing.assert_allclose(ns["rope_by_hand"](np.array([1.0, 0.0, 0.0, 1.0]), m),
                               [math.cos(2), math.sin(2), -math.sin(0.02), math.cos(0.02)], rtol=1e-14)
    x = np.array([0.3, -1.2, 2.0, 0.5])
    np.testing.assert_array_equal(ns["rope_by_hand"](x, 0), x)  # position 0 is the identity


def test_lab2_prints_the_tables_range_as_it_is(ran):
    """It printed "range: -1.0 to 1.0" (rounded to 3 places): the smallest entry of the
    (300, 64) table is -0.9999999986761288, not -1; the largest, cos 0, is exactly 1."""
    ns, cells = ran["lab2_positions"]
    line = next(text for _, text in cells if "range:" in text)
    low, high = (float(v) for v in re.search(r"range: (\S+) to (\S+)", line).groups())
    assert (low, high) == (float(ns["pe"].min()), float(ns["pe"].max())) and low != -1 and high == 1, line


def test_lab3_solutions(ran):
    ns, _ = ran["lab3_decoding"]
    # LLaMA-2 70B: 80 layers, 8 K/V heads of 128, fp16: 2 * 80 * 8 * 128 * 2 bytes = 320 KiB
    assert ns["cache_bytes_per_token"](80, 8, 128, 2) == 327_680 == 320 * 1024
    mask = ns["chunk_mask"](2, 4)
    np.testing.assert_array_equal(mask, [[True, True, True, False], [True, True, True, True]])
    assert mask.dtype == bool
    np.testing.assert_array_equal(ns["chunk_mask"](3, 3), np.tril(np.ones((3, 3), bool)))
    # two keys in two blocks of one: scores 0 and ln 3, values 1 and 5 (d = 1)
    # -> weights 1/4 and 3/4, output 1/4 + 15/4 = 4
    step = ns["online_step"]
    m, l, o = step(-np.inf, 0.0, np.zeros(1), np.array([0.0]), np.array([[1.0]]))
    assert (m, l) == (0.0, 1.0) and o.tolist() == [1.0]
    m, l, o = step(m, l, o, np.array([math.log(3)]), np.array([[5.0]]))
    assert m == pytest.approx(math.log(3)) and l == pytest.approx(4 / 3)
    assert (o / l)[0] == pytest.approx(4.0, rel=1e-14)
    # a block below the running maximum rescales nothing
    m2, l2, o2 = step(m, l, o, np.array([m - 50.0]), np.array([[0.0]]))
    assert m2 == m and l2 == pytest.approx(l + math.exp(-50.0), rel=1e-15) and np.array_equal(o2, o)
    # picking the token: top-p 0.7 of (0.5, 0.25, 0.15, 0.1) keeps tokens 0 and 1, drawn 2 : 1
    counts = np.bincount(ns["draws"], minlength=4)
    n = counts.sum()
    assert counts[2] == counts[3] == 0 and n == 3000
    assert abs(counts[0] / n - 2 / 3) < 4 * math.sqrt(2 / 9 / n)  # within 4 standard deviations


# ---- the check itself ------------------------------------------------------------------------

def _said(answer, expected, **kw) -> tuple[bool, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ok = check(answer, expected, "x", **kw)
    return ok, buf.getvalue()


@pytest.mark.parametrize("answer, expected, words", [
    (..., np.eye(2), "is still ...: fill in the TODO"),
    (None, 3, "is still None: fill in the TODO"),
    (np.ones(3), np.zeros(2), "has shape (3,), expected (2,)"),
    ("abc", np.zeros(2), "is of type str"),
    ([[1.0], [1.0, 2.0]], np.zeros(2), "cannot be read as an array"),
    (np.array([1.0, np.nan]), np.zeros(2), "holds nan at index (1,)"),
    (np.array([1.0, 2.0]), np.array([1.0, 2.5]), "first wrong entry is at index (1,): got 2, expected 2.5"),
    (np.array([[True, True], [True, True]]), np.tril(np.ones((2, 2), bool)),
     "1 of 4 entries differ, the first at index (0, 1)"),
    # numbers for a mask: a 0/1 float array indexes rows instead of masking (pass forty-two)
    (np.array([[1, 1], [1, 1]]), np.tril(np.ones((2, 2), bool)), "holds numbers (int64), expected True/False values"),
    (np.tril(np.ones((3, 3))), np.tril(np.ones((3, 3), bool)), "holds numbers (float64), expected True/False"),
    (3, 4, "is 3, not the expected value (25.0% off)"),
    (0.5, 0, "off by 0.5"),
    # a wrong answer never reads as the expected value, nor its error as 0.0 % (pass seventeen:
    # "x is 1, not the expected value (0.0% off)"; "got 1, expected 1")
    (1.0000001, 1.0, "is 1.0000001, not the expected value (1e-05% off)"),
    (0.9999999, 1, "is 0.9999999, not the expected value (1e-05% off)"),
    (np.array([1.0000001, 2.0]), np.array([1.0, 2.0]), "at index (0,): got 1.0000001, expected 1"),
    # integers compare as integers: float64 made 2**53 + 1 equal to 2**53 ("right")
    (2**53 + 1, 2**53, "is 9,007,199,254,740,993, not the expected value (1.1e-14% off)"),
    (np.array([2**60 + 1]), np.array([2**60]), "got 1,152,921,504,606,846,977, expected 1,152,921,504,606,846,976"),
    (np.int64(2**53 + 1), np.int64(2**53), "is 9,007,199,254,740,993, not the expected value (1.1e-14% off)"),
    (np.int64(1), 0, "is 1, not the expected value (off by 1)"),
    # pass eighteen: a difference below 1 read "off by 1", 99.96 % read "100.0% off", a finite
    # 200 % "inf% off", a complex answer "got 0.5, expected 0.5"
    (0.99996, 0.0, "is 0.99996, not the expected value (off by 0.99996)"),
    (np.array([0.9996, 0.0]), np.zeros(2), "differs by up to 0.9996;"),
    (0.0004, 1.0, "(99.96% off)"),
    (1, 10000, "(99.99% off)"),
    (1.5e308, -1.5e308, "(200.0% off)"),
    (np.array([0.5 + 0.3j]), np.array([0.5]), "holds complex numbers, expected real ones"),
    (np.array([0.5 + 1e-20j]), np.array([0.5]), "holds complex numbers, expected real ones"),
    (10**400, 1, "off by a factor of about 10^399"),
    # pass nineteen: a complex array's parts were dropped ("got 0, expected 0"); 5 for 2**70 read
    # "100.0% off" (the exact error went through a float); an infinity where a finite value is due
    (np.array([1 + 2j, 4j]), np.array([1 + 2j, 3j]), "got 0+4j, expected 0+3j"),
    (np.int64(5), 2**70, "(99.9999999999999999996% off)"),
    (2**70, np.int64(5), "is 1,180,591,620,717,411,303,424, not the expected value"),
    (np.array([0.0, -np.inf]), np.zeros(2), "holds -inf at index (1,), expected 0"),
    (np.array([0.0, 1.0]), np.array([0.0, -np.inf]), "holds 1 at index (1,), expected -inf"),
])
def test_check_says_not_yet_and_why(answer, expected, words):
    ok, text = _said(answer, expected)
    assert not ok and text.startswith("not yet: x") and words in text, text
    assert text.count("\n") == 1


@pytest.mark.parametrize("answer, expected", [
    (np.eye(2), np.eye(2)),
    (np.eye(2) + 1e-13, np.eye(2)),  # rounding
    (4, 4),
    (np.float32(0.25), 0.25),
    (np.tril(np.ones((3, 3), bool)), np.tril(np.ones((3, 3), bool))),
    ([1.0, 2.0], np.array([1.0, 2.0])),
    (2**64, 2**64),  # beyond int64: a Python integer, compared exactly
    (np.array([0.0, -np.inf]), np.array([0.0, -np.inf])),  # a mask's -inf, where it is due (was "not yet")
    (1 + 2j, 1 + 2j),  # (was "could not be compared")
    (np.int64(5), 5),
    (3, 3.0),
])
def test_check_says_right(answer, expected):
    ok, text = _said(answer, expected)
    assert ok and text.startswith("right: x"), text


def test_check_names_the_expected_value_as_it_is_and_wants_the_kind_it_asks_for():
    """Pass forty-two: a float answer within the tolerance of an integer past 2**53 printed the
    expected value cast to float64 ("the expected value 9,007,199,254,740,992" for ...993); a
    0/1 float array passed for a boolean mask (it indexes rows instead of masking), True for 1;
    an integer past numpy's 64 bits "could not be compared"."""
    import mhalib

    assert _said(np.float64(2**53), np.int64(2**53 + 1)) == (
        True, "right: x is 9,007,199,254,740,992, the expected value 9,007,199,254,740,993 within the tolerance\n")
    ok, text = _said(np.tril(np.ones((2, 6)), 4), mhalib.causal_mask(2, 6, align="bottom_right"))
    assert not ok and "holds numbers (float64), expected True/False values" in text, text
    assert _said(True, 1) == (False, "not yet: x holds True/False values, expected numbers (int64, shape ())\n")
    assert _said(np.inf, 10**400) == (False, "not yet: x is inf, expected the integer 1.00000e+400 (an integer of "
                                             "401 digits)\n")
    assert _said(1.5e300, 10**300)[1].endswith("(an integer of 301 digits) (50.0% off)\n")
    assert _said(1e300, 10**300)[0] is True and _said(2.0**70, 2**70 + 1, rtol=0, atol=0)[0] is False


def test_check_says_equal_only_when_it_is():
    """ "your answer = -1e-13 is the expected value" for an expected 0, "= 9.0072e+15" for
    2**53 + 1 against 2**53: accepted within the tolerance, and said so."""
    assert _said(-1e-13, 0.0) == (True, "right: x is -1e-13, the expected value 0 within the tolerance\n")
    assert _said(2**53 + 1, np.float64(2**53))[1] == ("right: x is 9,007,199,254,740,993, the expected value "
                                                       "9,007,199,254,740,992 within the tolerance\n")
    assert _said(0.25, 0.25)[1] == "right: x = 0.25 is the expected value\n"
    # a float answer against an integer past 2**53 was compared in float64, so 2.0**53 against
    # 2**53 + 1 was "right" even with rtol = atol = 0 (pass thirty-four); exactly now
    assert _said(2.0**53, 2**53 + 1, rtol=0, atol=0) == (
        False, "not yet: x is 9,007,199,254,740,992, not the expected value (1.1e-14% off)\n")
    assert _said(np.array([2.0**53]), np.array([2**53 + 1]), rtol=0, atol=0) == (
        False, "not yet: x differs by up to 1; the first wrong entry is at index (0,): got 9,007,199,254,740,992, "
               "expected 9,007,199,254,740,993\n")
    assert _said(np.array([2**53 + 1]), np.array([2.0**53]), rtol=0, atol=0)[0] is False
    # longdouble (pass thirty-five): "could not be compared" for a right answer, "got 1, expected 1"
    # for a wrong one, "right" for 2**53 + 1 against a longdouble 2**53 with no tolerance
    ld = np.longdouble
    assert _said(ld(1), 1.0) == (True, "right: x = 1 is the expected value\n")
    if np.finfo(ld).nmant >= 63:  # x86's 80-bit longdouble (elsewhere it may be float64)
        ok, text = _said(np.array([ld(1) + ld(2) ** -60, 2]), np.array([ld(1), 2]), rtol=0, atol=0)
        assert not ok and text.endswith("got 1.0000000000000000009e+00, expected 1\n"), text
        assert _said(2**53 + 1, ld(2**53), rtol=0, atol=0)[0] is False
    for bad in (dict(rtol=float("nan")), dict(atol=-1.0), dict(rtol=float("inf"))):  # the lab's own arguments
        with pytest.raises(ValueError, match=r"(rtol|atol) must be a finite number, 0 or more"):
            check(1.0, 1.0, **bad)


def test_check_says_how_close_a_right_answer_is_without_reading_below_1_as_1():
    ok, text = _said(np.array([1e9 + 0.99996]), np.array([1e9]))
    assert ok and text.endswith("largest difference 0.99996)\n"), text


def test_check_tolerances_and_unreadable_expectations():
    assert not _said(np.array([1.0 + 1e-6]), np.array([1.0]))[0]
    assert _said(np.array([1.0 + 1e-6]), np.array([1.0]), rtol=1e-5)[0]
    ok, text = _said(np.zeros(2), np.array(["a", "b"]))  # nothing a reader can get right
    assert not ok and text.startswith("not yet: x could not be compared")


def test_no_cell_ends_in_a_bare_value():
    """Jupyter shows a cell's last expression as Out[n] (a prompt axe finds too pale on the
    site); checks and results are printed instead."""
    import ast

    import jupytext

    for path in LABS:
        for cell in jupytext.read(path).cells:
            if cell.cell_type == "code" and cell.source.strip():
                last = ast.parse(cell.source).body[-1]
                printed = (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
                           and getattr(last.value.func, "id", "") == "print")
                assert not isinstance(last, ast.Expr) or printed, (path.name, ast.unparse(last))


def test_check_past_float64_and_64_bits_says_what_it_compared():
    """Pass forty-three: a complex answer within the tolerance read "=" the expected value; a
    longdouble difference of 1e-4940 read "off by 0"; a right integer past 64 bits was "of type
    int"; 1.5 against np.array(2.0), and 1e4000 against 1, "could not be compared"."""
    import math

    assert _said(1.0000000001 + 0j, 1 + 0j)[1] == ("right: x is (1.0000000001+0j), the expected value (1+0j) "
                                                     "within the tolerance\n")
    ld = np.longdouble
    tiny = ld(2) ** -16000  # 3.3e-4817: a longdouble far below float64's range
    said = _said(tiny, 0.0, atol=0)[1]
    assert said.startswith("not yet: x is 3.3118") and said.endswith("e-4817, not the expected value (off by 3.31e-4817)\n")
    assert _said(np.array([tiny]), np.array([0.0]))[1] == "right: x matches (shape (1,), largest difference 3.3e-4817)\n"
    assert _said(2**64, 2.0**64) == (True, "right: x = 18,446,744,073,709,551,616 is the expected value\n")
    assert _said(math.factorial(170), float(math.factorial(170)))[0] is True
    assert _said([2**70], [2**70]) == (True, "right: x matches (shape (1,), every entry exactly)\n")
    assert _said([2**70], [2**70 + 1])[0] is False
    # nested, mixed and numpy-scalar lists beside them (pass forty-five: "of type list")
    for same in ([[2**64]], (1, 2**64), [2**64, 0.5], [np.int64(1), 2**64]):
        assert _said(same, same)[0] is True, same
    assert _said(np.array([1.8446744073709552e19]), [2**64]) == (True, "right: x matches (shape (1,), every entry "
                                                                         "exactly)\n")
    assert _said([[2**64]], [[2**64 + 1]], rtol=0, atol=0) == (
        False, "not yet: x: 1 of 1 entries differ, the first at index (0, 0): got 18,446,744,073,709,551,616, "
               "expected 18,446,744,073,709,551,617\n")
    assert _said(1.5, np.array(2.0))[1] == "not yet: x is 1.5, not the expected value (25.0% off)\n"
    assert _said(np.array([ld("1e4000")]), np.array([1]))[1].startswith("not yet: x differs by up to 1.0e+4000")
