"""Self-checks for the labs' exercises (pages: the labs under *Practice*).

``check`` compares an answer with the expected value, prints one line that starts
with ``right:`` or ``not yet:``, and returns ``True`` or ``False``. It never raises: an
unfinished exercise (a ``...`` placeholder, ``None``, a wrong shape, a wrong number)
gets a message saying what is missing, so a notebook run from top to bottom does not
stop at the first exercise (the site executes every lab when it is built).

    >>> check(np.eye(2), np.eye(2), "identity")
    right: identity matches (shape (2, 2), largest difference 0)
    True
    >>> check(..., np.eye(2), "weights")
    not yet: weights is still ...: fill in the TODO
    False
"""
from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

__all__ = ["check"]


def _number(x, other=None) -> str:
    """``1,050,624`` for a whole number (every digit), ``0.25`` or ``1.5e-07`` otherwise: six
    significant digits, or all of them where six would write ``x`` as ``other`` (a wrong answer
    of 1.0000001 is not "1") or a number strictly between -1 and 1 as 1 or -1."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return f"{int(x):,}"
    if isinstance(x, np.complexfloating) and x.dtype.itemsize > 16:  # clongdouble: complex() drops its last digits
        o = None if other is None else np.asarray(other)[()]
        re_, im = _number(x.real, None if o is None else np.real(o)), _number(abs(x.imag), None if o is None else abs(np.imag(o)))
        return f"({re_}{'-' if x.imag < 0 else '+'}{im}j)"  # (pass eighty-two)
    if isinstance(x, (complex, np.complexfloating)):
        text = f"{complex(x):.6g}"
        return repr(complex(x)) if other is not None and text == f"{complex(other):.6g}" else text
    if isinstance(x, np.floating) and np.finfo(x.dtype).bits > 64:  # longdouble: float() drops its last digits
        if x == np.round(x) and abs(x) < 2**63:
            return f"{int(x):,}"
        text = np.format_float_positional(x, precision=6, unique=False, fractional=False, trim="-")
        if other is not None and not _same(x, other):
            return np.format_float_scientific(x, unique=True)  # all its digits: not read as the other
        return text
    x = float(x)
    if x.is_integer() and abs(x) <= 2**53:
        return f"{int(x):,}"
    text = f"{x:.6g}"
    if (other is not None and text == _number(other)) or (-1 < x < 1 and abs(float(text)) == 1):
        return repr(x)
    return text


def _same(x, y) -> bool:
    """Whether ``x`` and ``y`` are the same number exactly, complex ones included (a longdouble
    against a complex value was "could not be compared": pass eighty-two)."""
    return all(_fraction(a) == _fraction(b) for a, b in ((np.real(x), np.real(y)), (np.imag(x), np.imag(y))))


def _fraction(x) -> Fraction:
    """``x`` exactly, whatever its type: Python or numpy integers and floats, longdouble included
    (``Fraction(np.longdouble(1))`` raises; its ``as_integer_ratio`` is exact)."""
    if isinstance(x, np.generic) and (not np.issubdtype(x.dtype, np.floating) or np.finfo(x.dtype).bits <= 64):
        x = x.item()  # Python's int or float: exact
    if hasattr(x, "as_integer_ratio") and not isinstance(x, (int, Fraction)):
        return Fraction(*x.as_integer_ratio())
    return Fraction(x)


def _g(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits, more where that would write a number strictly
    between -1 and 1 as 1 or -1 (a difference of 0.99996 is not "1"); past the float range, says so."""
    if not np.isfinite(x):
        return "more than the largest float (1.8e+308)"
    if isinstance(x, np.floating) and np.finfo(x.dtype).bits > 64 and x != 0 and float(x) in (0.0, np.inf):
        return np.format_float_scientific(x, precision=digits - 1, trim="0")  # past float64: its own digits
    text = f"{x:.{digits}g}"
    while -1 < x < 1 and abs(float(text)) == 1:
        digits += 1
        text = f"{x:.{digits}g}"
    return text


def _share_off(off: Fraction) -> str:
    """A relative error (exact) in percent: one decimal; two significant digits where one decimal
    would read an error that is not 0 as "0.0%", and the decimals that tell one that is not 100 %
    from "100.0%" (an answer of 0.0004 for 1 is 99.96 % off, not as far off as 0)."""
    with decimal.localcontext(decimal.Context(prec=80)):
        pct = decimal.Decimal(off.numerator) * 100 / decimal.Decimal(off.denominator)
        text, places = f"{pct:.1f}%", 1
        if off != 0 and decimal.Decimal(text[:-1]) == 0:
            return f"{float(pct):.2g}%"
        while off != 1 and decimal.Decimal(text[:-1]) == 100 and places < 60:
            places += 1
            text = f"{pct:.{places}f}%"
    return text


def _off(got, want) -> str:
    """How far off an answer is: relative to the expected value, or by the difference where that
    is 0; from the exact values (fractions), so neither a float overflow (1.5e308 against
    -1.5e308 is 200 % off) nor an integer past the float range stops it."""
    got, want = (x.item() if isinstance(x, np.generic) else x for x in (got, want))  # (Fraction takes no float32)
    diff = abs(_fraction(got) - _fraction(want))
    if want == 0:
        if diff.denominator == 1:
            return f"off by {int(diff):,}"
        if float(diff) == 0:  # below float64 (a longdouble 1e-4940 read "off by 0", pass forty-three)
            with decimal.localcontext(decimal.Context(prec=3, Emin=-10**9)):
                return f"off by {decimal.Decimal(diff.numerator) / decimal.Decimal(diff.denominator):g}"
        return f"off by {_g(float(diff), 3)}"
    rel = diff / abs(_fraction(want))
    if rel > 10**300:
        return f"off by a factor of about 10^{len(str(int(rel))) - 1}"
    return f"{_share_off(rel)} off"


def _whole(x) -> bool:
    """Whether ``x`` is an integer scalar (Python's or numpy's), not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _exact_integers(got: np.ndarray, want: np.ndarray) -> bool:
    """Whether both sides are integers, compared as integers (float64 holds each only to 2**53)."""
    return np.issubdtype(got.dtype, np.integer) and np.issubdtype(want.dtype, np.integer)


def _integer_beside_float(got: np.ndarray, want: np.ndarray) -> bool:
    """Whether one side holds integers and the other real floats (of any width): then a difference in float64 can round a wrong integer past 2**53 to the right one
    (2.0**53 against 2**53 + 1 was "right", pass thirty-four)."""
    kinds = {got.dtype.kind, want.dtype.kind}
    return bool(kinds & {"i", "u"}) and bool(kinds & {"f", "c"})  # (complex too: pass eighty-two)


def _exact_differences(got: np.ndarray, want: np.ndarray, odd: np.ndarray) -> np.ndarray:
    """``|got - want|`` entry by entry in exact arithmetic (``Fraction``), rounded once to float64;
    0 where ``odd`` (an infinity or NaN, compared apart)."""
    pairs = np.broadcast_arrays(got, want, odd)
    wide = np.result_type(got, want, np.float64)  # (longdouble keeps what float64 would round to 0)
    wide = np.empty(0, wide).real.dtype  # (a complex pair's distance is real)
    out = [0 if o else _distance(g[()], w[()], wide)
           for g, w, o in zip(pairs[0].ravel(), pairs[1].ravel(), pairs[2].ravel())]
    return np.array(out, dtype=wide).reshape(pairs[0].shape)


def _distance(g, w, dtype) -> np.floating:
    """``|g - w|`` from the exact differences of the real and the imaginary parts, each rounded
    once (a real pair's distance is rounded once)."""
    re_, im = (_fraction(np.real(g)) - _fraction(np.real(w)), _fraction(np.imag(g)) - _fraction(np.imag(w)))
    if im == 0:
        return _as_float(abs(re_), dtype)
    return dtype.type(math.hypot(float(_as_float(re_, dtype)), float(_as_float(im, dtype))))


def _as_float(x: Fraction, dtype) -> np.floating:
    """``x`` rounded once to ``dtype``; past its range, an infinity (not an OverflowError)."""
    try:
        return dtype.type(x.numerator) / dtype.type(x.denominator) if dtype.itemsize > 8 else dtype.type(float(x))
    except OverflowError:
        return dtype.type(np.inf)


def _digits(n: int) -> str:
    """An integer of any size as a reader can read it: every digit up to 30 of them, else its
    first digits and its power of ten (a number of 400 digits is not a message)."""
    text = str(abs(n))
    if len(text) <= 30:
        return f"{n:,}"
    with decimal.localcontext(decimal.Context(prec=6, Emax=10**9)):  # rounded to nearest, as _number rounds
        return f"{+decimal.Decimal(n):.5e} (an integer of {len(text)} digits)"


def _beside_a_big_integer(answer, expected: int, name: str, rtol: float, atol: float) -> tuple[bool, str]:
    """``answer`` against an integer past numpy's 64 bits (``check(np.inf, 10**400)`` said "could
    not be compared", pass forty-two): a real number, compared exactly as a fraction."""
    if isinstance(answer, np.ndarray) and answer.ndim == 0:
        answer = answer[()]
    if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, (float, np.floating)):
        return False, f"{name} is {answer!r} ({type(answer).__name__}), expected the integer {_digits(expected)}"
    if not np.isfinite(answer):
        return False, f"{name} is {_number(answer)}, expected the integer {_digits(expected)}"
    diff = abs(_fraction(answer) - expected)
    if diff <= atol + rtol * abs(expected):
        return True, f"{name} is {_number(answer)}, the expected value {_digits(expected)} within the tolerance"
    return False, f"{name} is {_number(answer)}, not the expected value {_digits(expected)} ({_off(answer, expected)})"


def _real_entries(x) -> np.ndarray | None:
    """``x`` as an object array of Python ints and floats (numpy scalars read with ``.item()``),
    or None where an entry is anything else (a bool, a text, a complex number, a ragged list)."""
    try:
        arr = np.asarray(x, dtype=object)
    except ValueError:
        return None
    def plain(v):  # a numpy scalar as Python's own number (longdouble kept: .item() would round it)
        if isinstance(v, np.floating) and np.finfo(v.dtype).bits > 64:
            return v
        return v.item() if isinstance(v, np.generic) else v

    flat = [plain(v) for v in arr.ravel()]
    if not all(isinstance(v, (int, float, np.floating)) and not isinstance(v, bool) for v in flat):
        return None
    return np.array(flat + [None], dtype=object)[:-1].reshape(arr.shape)


def _exact_entries(answer, expected, name: str, rtol: float, atol: float) -> tuple[bool, str] | None:
    """``answer`` against ``expected`` where either holds an integer past 64 bits (numpy keeps
    them as objects: ``check([[2**64]], [[2**64]])`` read "of type list", pass forty-five): each
    entry exactly, as a fraction; None where they are not both real numbers."""
    got, want = _real_entries(answer), _real_entries(expected)
    if got is None or want is None:
        return None
    if got.shape != want.shape:
        return False, f"{name} has shape {got.shape}, expected {want.shape}"
    pairs = list(zip(got.ravel(), want.ravel()))
    if any(not np.isfinite(float(g)) if isinstance(g, float) else False for g, _ in pairs) or any(
            not np.isfinite(float(w)) if isinstance(w, float) else False for _, w in pairs):
        return None  # an infinity or NaN: the float comparison says where
    far = [g != w if type(g) is int and type(w) is int else  # integers as integers: exactly, as above
           abs(_fraction(g) - _fraction(w)) > atol + rtol * abs(_fraction(w)) for g, w in pairs]
    if not any(far):
        same = all(_fraction(g) == _fraction(w) for g, w in pairs)
        return True, (f"{name} matches (shape {want.shape}" + (", every entry exactly)" if same else
                                                                ", within the tolerance)"))
    i = far.index(True)
    at = tuple(int(j) for j in np.unravel_index(i, want.shape)) if want.shape else ()
    show = lambda v: _digits(v) if isinstance(v, int) else _number(v)  # noqa: E731
    return False, (f"{name}: {sum(far)} of {len(far)} entries differ, the first at index {at}: got "
                   f"{show(pairs[i][0])}, expected {show(pairs[i][1])}")


def _verdict(answer, expected, name: str, rtol: float, atol: float) -> tuple[bool, str]:
    if answer is ... or answer is None:
        what = "..." if answer is ... else "None"
        return False, f"{name} is still {what}: fill in the TODO"
    if _whole(answer) and _whole(expected) and (type(answer) is int or type(expected) is int):
        answer, expected = int(answer), int(expected)  # Python integers, of any size: exactly
        if answer == expected:
            return True, f"{name} = {answer:,} is the expected value"
        return False, f"{name} is {answer:,}, not the expected value ({_off(answer, expected)})"
    if type(expected) is int and not -2**63 <= expected < 2**63:  # past numpy's integers: exactly, as fractions
        return _beside_a_big_integer(answer, expected, name, rtol, atol)
    if type(answer) is int and not -2**63 <= answer < 2**63 and isinstance(expected, (float, np.floating)):
        ok, text = _beside_a_big_integer(expected, answer, name, rtol, atol)  # the same comparison, read back
        return ok, (f"{name} = {_digits(answer)} is the expected value" if ok and _fraction(expected) == answer
                    else f"{name} is {_digits(answer)}, " + ("within the tolerance of" if ok else "not")
                    + f" the expected value {_number(expected, answer)} ({_off(answer, expected)})")
    want = np.asarray(expected)
    try:
        got = np.asarray(answer)
    except Exception as exc:  # noqa: BLE001 - anything a reader may return
        return False, f"{name} cannot be read as an array ({type(exc).__name__}: {exc})"
    if got.dtype == object or want.dtype == object:  # integers past 64 bits among them: entry by entry, exactly
        exact = _exact_entries(answer, expected, name, rtol, atol)
        if exact is not None:
            return exact
    if got.dtype == object or not (np.issubdtype(got.dtype, np.number) or got.dtype == bool):
        return False, f"{name} is of type {type(answer).__name__}, expected numbers of shape {want.shape}"
    if np.iscomplexobj(got) and not np.iscomplexobj(want):  # float() would drop the imaginary part
        return False, f"{name} holds complex numbers, expected real ones (of shape {want.shape})"
    if got.shape != want.shape:
        return False, f"{name} has shape {got.shape}, expected {want.shape}"
    if (want.dtype == bool) != (got.dtype == bool):  # a 0/1 float mask indexes, a True counts as 1: neither works
        if want.dtype == bool:
            return False, (f"{name} holds numbers ({got.dtype}), expected True/False values (a boolean mask: "
                           "compare, e.g. x > 0, or use .astype(bool))")
        return False, f"{name} holds True/False values, expected numbers ({want.dtype}, shape {want.shape})"
    if want.dtype == bool:
        wrong = got != want
        if wrong.any():
            first = tuple(int(i) for i in np.argwhere(wrong)[0])
            return False, (f"{name}: {int(wrong.sum())} of {want.size} entries differ, the first at index "
                           f"{first}: got {got[first]}, expected {want[first]}")
        return True, f"{name} matches (shape {want.shape})"
    if _exact_integers(got, want):
        wrong = got != want
        if want.ndim == 0:
            return (True, f"{name} = {_number(got[()])} is the expected value") if not wrong else (
                False, f"{name} is {_number(got[()])}, not the expected value "
                       f"({_off(int(got), int(want))})")
        if wrong.any():
            first = tuple(int(i) for i in np.argwhere(wrong)[0])
            return False, (f"{name}: {int(wrong.sum())} of {want.size} entries differ, the first at index "
                           f"{first}: got {_number(got[first])}, expected {_number(want[first])}")
        return True, f"{name} matches (shape {want.shape}, largest difference 0)"
    given, expected_array = got, want
    got, want = got.astype(np.result_type(got, np.float64)), want.astype(np.result_type(want, np.float64))
    # an infinity or NaN must stand where the expected value has the same (a mask's -inf)
    odd = ~np.isfinite(got) | ~np.isfinite(want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if (odd & ~same).any():
        first = tuple(int(i) for i in np.argwhere(odd & ~same)[0])
        return False, (f"{name} holds {_number(got[first])} at index {first}, expected {_number(want[first])}"
                       if want.ndim else f"{name} is {_number(got[()])}, expected {_number(want[()])}")
    with np.errstate(over="ignore", invalid="ignore"):  # past the float range: inf, not close
        diff = np.where(odd, 0.0, np.abs(got - want))
    if _integer_beside_float(given, expected_array):  # float64 holds an integer exactly only to 2**53
        diff = _exact_differences(given, expected_array, odd)
    close = diff <= atol + rtol * np.where(odd, 0.0, np.abs(want))
    if not np.iscomplexobj(got) and not np.iscomplexobj(want):
        # a difference rounded onto the tolerance (|-1e-17 - 1| read 1 <= atol = 1: pass eighty-two)
        # is decided exactly: the difference and the tolerance as fractions
        tol = atol + rtol * np.abs(want)
        edge = ~odd & (np.abs(diff - tol) <= 4 * np.finfo(np.float64).eps * np.maximum(np.abs(tol), np.abs(diff)))
        close, diff = np.array(close), np.array(diff)  # (0-d arrays too: entries are set below)
        edge = np.broadcast_to(edge, close.shape)
        for i in (i for i in np.ndindex(close.shape) if edge[i]):
            g, w = np.broadcast_to(given, close.shape)[i], np.broadcast_to(expected_array, close.shape)[i]
            close[i] = abs(_fraction(g) - _fraction(w)) <= _fraction(atol) + _fraction(rtol) * abs(_fraction(w))
            diff[i] = _as_float(abs(_fraction(g) - _fraction(w)), diff.dtype)
    largest = diff.max(initial=0) if diff.dtype.itemsize > 8 else float(diff.max(initial=0.0))
    if want.ndim == 0 and not close.all():  # say how far off, not the answer itself
        off = _off(given[()], expected_array[()]) if not np.iscomplexobj(want) else f"off by {_g(largest, 3)}"
        return False, f"{name} is {_number(given[()], want[()])}, not the expected value ({off})"
    if want.ndim == 0:
        exact = odd.all() if not np.iscomplexobj(want) and odd.all() else _same(given[()], expected_array[()])
        return True, (f"{name} = {_number(given[()])} is the expected value" if exact else
                      f"{name} is {_number(given[()], expected_array[()])}, the expected value "
                      f"{_number(expected_array[()], given[()])} within the tolerance")
    if not close.all():
        first = tuple(int(i) for i in np.argwhere(~close)[0])
        return False, (f"{name} differs by up to {_g(largest, 3)}; the first wrong entry is at index {first}: "
                       f"got {_number(given[first], expected_array[first])}, "
                       f"expected {_number(expected_array[first], given[first])}")
    return True, f"{name} matches (shape {want.shape}, largest difference {_g(largest, 2)})"


def check(answer, expected, name: str = "your answer", *, rtol: float = 1e-9, atol: float = 1e-12) -> bool:
    """Print whether ``answer`` equals ``expected`` and return ``True`` if it does.

    Arrays (or numbers) must have the expected shape; boolean ``expected`` values (masks)
    must match exactly, numbers within ``atol + rtol * |expected|`` entry by entry. The
    printed line starts with ``right:`` or ``not yet:`` and says what differs: a
    placeholder left in (``...`` or ``None``), the shape, a NaN, or the first wrong entry.
    Never raises for any ``answer``.
    """
    for tol, tol_name in ((rtol, "rtol"), (atol, "atol")):  # the lab's own arguments: refused, not reported
        if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)) or not 0 <= tol < np.inf:
            raise ValueError(f"{tol_name} must be a finite number, 0 or more, got {tol!r} (a NaN called an "
                             "identical answer wrong, an infinity any answer right)")
    try:
        ok, message = _verdict(answer, expected, str(name), rtol, atol)
    except Exception as exc:  # noqa: BLE001 - a check must report, not stop the notebook
        ok, message = False, f"{name} could not be compared ({type(exc).__name__}: {exc})"
    print(("right: " if ok else "not yet: ") + message)
    return ok
