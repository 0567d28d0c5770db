"""Argument checks shared by every public function.

Each check raises ``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind,
wrong value) with a message that names the argument, says what was given and what is
allowed. Nothing in ``mhalib`` returns NaN quietly: it refuses the input instead.
"""
from __future__ import annotations

import math
import numbers
import os

import numpy as np


def positive_int(value, name: str) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1, got {value!r} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value}")
    return int(value)


def nonnegative_int(value, name: str) -> int:
    """Return ``value`` as an ``int`` if it is an integer >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 0, got {value!r} ({type(value).__name__})")
    if value < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value}")
    return int(value)


def integer(value, name: str) -> int:
    """Return ``value`` as an ``int`` (any sign)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    return int(value)


def even_int(value, name: str) -> int:
    """Return ``value`` if it is an even integer >= 2 (sin/cos and RoPE work on pairs)."""
    value = positive_int(value, name)
    if value % 2:
        raise ValueError(
            f"{name} must be even (dimensions come in (sin, cos) or rotation pairs), got {value}"
        )
    return value


def positive_float(value, name: str) -> float:
    """Return ``value`` as a ``float`` if it is a finite real number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number > 0, got {value!r} ({type(value).__name__})")
    given = value
    try:
        value = float(value)
    except OverflowError:  # an integer past float64's range
        value = float("inf")
    if not np.isfinite(value) or value <= 0:
        # a value float64 cannot hold (a longdouble 1e-4000, an int 10**400) is named as given
        shown = f"{value}" if value == given or np.isnan(value) else f"{given!r} ({value} as a float64)"
        raise ValueError(f"{name} must be a finite number > 0, got {shown}")
    return value


def boolean(value, name: str) -> bool:
    """Return ``value`` if it is a Python or numpy bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
    return bool(value)


def choice(value, name: str, allowed: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of the ``allowed`` strings."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def divisible(value: int, by: int, name: str, by_name: str) -> int:
    """Return ``value // by``, refusing a remainder."""
    if value % by:
        raise ValueError(
            f"{name}={value} is not divisible by {by_name}={by}; "
            f"choose {name} as a multiple of {by_name}"
        )
    return value // by


def finite_real(value, name: str, *, neg_inf: bool = False) -> float:
    """Return ``value`` as a ``float`` if it is a real number (not a bool) that is finite in
    float64: NaN and inf are refused (``-inf`` too unless ``neg_inf``), and so is an integer or
    a wide float (``np.longdouble``) beyond float64's range (``10**400``), with a
    ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    if neg_inf and isinstance(value, (float, np.floating)) and np.isneginf(value):
        return -math.inf
    big = np.finfo(np.float64).max
    if isinstance(value, (numbers.Integral, np.integer)):
        try:
            return float(value)
        except OverflowError:
            digits = len(str(abs(int(value))))
            raise ValueError(f"{name} is beyond float64's range (+-{big:.4g}): got an integer of {digits} digits; "
                             f"{name} must be a finite number within that range") from None
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite{' or -inf' if neg_inf else ''}, got {value!s}")
    with np.errstate(over="ignore"):
        out = float(np.float64(value))
    if not np.isfinite(out):
        raise ValueError(f"{name} is beyond float64's range (+-{big:.4g}): got {value!s}; "
                         f"{name} must be a finite number within that range")
    return out


def float_dtype(dtype, name: str = "dtype") -> np.dtype:
    """Return ``dtype`` as a numpy floating dtype (float16, float32, float64, longdouble);
    refuse anything else, integers, booleans and ``None`` (``np.dtype(None)`` would be
    float64) included, with a ``ValueError``."""
    try:
        dt = None if dtype is None else np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind != "f":
        raise ValueError(f"{name} must be a numpy float dtype such as 'float16' or 'float32', got {dtype!r}")
    return dt


def dtype_choice(dtype, name: str, allowed: tuple[str, ...]) -> str:
    """Return the name of ``dtype`` if it is one of ``allowed`` (a name in ``allowed`` that numpy
    lacks, ``"bfloat16"``, is taken as written); refuse anything else with a ``ValueError``.
    ``None`` is refused too: ``np.dtype(None)`` is float64, which would pass silently."""
    if isinstance(dtype, str) and dtype in allowed:
        return dtype
    try:
        dt = None if dtype is None else np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.name not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {dtype!r}")
    return dt.name


def not_masked(x, name: str):
    """Return ``x`` unless it is a numpy masked array: ``np.asarray`` drops the mask, so the
    masked entries would count as ordinary values. A ``TypeError`` says what to pass instead."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            f"{name} is a numpy masked array, whose mask mhalib would ignore (np.asarray drops it); pass a "
            f"plain array, with a boolean `mask=` (True = may attend) where the function takes one, or "
            f"-inf in the masked entries of scores (x.filled(-np.inf)) for softmax"
        )
    return x


def float_array(x, name: str, *, min_ndim: int = 0, finite: bool = True) -> np.ndarray:
    """Return ``x`` as a floating numpy array.

    Integers become float64 (those beyond +-2**53, which float64 does not hold exactly, are
    refused); float16/32/64 keep their precision. Booleans, complex
    numbers, objects and numpy masked arrays (whose mask would be dropped) are refused.
    With ``finite=True`` any NaN or inf is refused.
    """
    not_masked(x, name)
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - numpy raises many kinds
        raise TypeError(f"{name} must be array-like of real numbers, got {type(x).__name__}") from exc
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold real numbers (int or float), got dtype {arr.dtype}"
        )
    if arr.dtype.kind in "iu":
        if arr.size and max(int(arr.max()), -int(arr.min())) > 2**53:
            far = int(arr.max()) if int(arr.max()) > -int(arr.min()) else int(arr.min())
            raise ValueError(f"{name} holds the integer {far}, beyond 2**53 = {2**53}: float64, which it is "
                             "computed in, does not hold every integer past it (2**53 + 1 reads as 2**53), so "
                             f"neighbouring values would give one result; {name} must stay within +-2**53")
        arr = arr.astype(np.float64)
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise ValueError(
            f"{name} must be finite; it holds {n_nan} NaN and {n_inf} inf value(s)"
        )
    return arr


def token_ids(ids: np.ndarray, name: str, limit: int, limit_name: str) -> np.ndarray:
    """Return ``ids`` if it holds integers in ``[0, limit)``, the rows of an embedding table.

    A negative id would silently index the table from its end (``-1`` is the last row), one
    at or past ``limit`` would fail with a bare ``IndexError``, and a float or boolean array
    is not a list of ids at all. The message shows up to five bad ids and where they are.
    """
    if ids.dtype == np.bool_ or ids.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer token ids, got dtype {ids.dtype}")
    bad = np.argwhere((ids < 0) | (ids >= limit))  # (n_bad, ndim) indices
    if len(bad):
        where = bad[:5, 0].tolist() if ids.ndim == 1 else [tuple(b) for b in bad[:5].tolist()]
        raise ValueError(
            f"{name} must lie in [0, {limit_name}) = [0, {limit}); got {ids[tuple(bad[:5].T)].tolist()} at "
            f"position(s) {where}{' ...' if len(bad) > 5 else ''}"
        )
    return ids


def as_int64(ids: np.ndarray, name: str, what: str = "integers") -> np.ndarray:
    """Return the integer array ``ids`` as int64, refusing values beyond int64 (a uint64 value
    at or past ``2**63`` would wrap to a negative number) with a ``ValueError`` naming ``name``."""
    info = np.iinfo(np.int64)
    if ids.size and ids.dtype.kind in "iu" and (ids.max() > info.max or ids.min() < info.min):
        bad = ids.max() if ids.max() > info.max else ids.min()
        raise ValueError(f"{name} must hold {what} within int64's range [-2**63, 2**63), the type of the "
                         f"result; got {bad}")
    return ids.astype(np.int64)


def probability_rows(arr: np.ndarray, name: str) -> np.ndarray:
    """Return ``arr`` if every row (last axis) is a probability distribution: entries >= 0 that
    sum to 1 within ``1e-5 + n * eps`` (``n`` entries in ``arr``'s float type: a float32
    softmax row of 20 weights is off by a few 1e-7). An all-zero row is refused too."""
    n = arr.shape[-1]
    tol = 1e-5 + n * float(np.finfo(arr.dtype).eps)
    what = f"{name}'s rows must be probability distributions (non-negative, each summing to 1 within {tol:.1g})"
    if (arr < 0).any():
        raise ValueError(f"{what}; it holds a negative weight, {float(arr.min()):.6g}")
    sums = arr.sum(axis=-1, dtype=np.float64)  # (...,)
    bad = np.argwhere(np.abs(sums - 1.0) > tol)
    if len(bad):
        where = tuple(bad[0].tolist())
        raise ValueError(f"{what}; row {where} sums to {float(sums[where]):.6g}")
    return arr


def bool_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a boolean array (True = may attend); refuse any other dtype and a
    numpy masked array."""
    arr = np.asarray(not_masked(x, name))
    if arr.dtype != np.bool_:
        raise TypeError(
            f"{name} must be a boolean array (True = may attend), got dtype {arr.dtype}; "
            f"convert an additive 0/-inf mask with `{name} == 0`"
        )
    return arr


def scored_positions(scored: np.ndarray, name: str = "scored", shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return ``scored`` if it is a boolean array (True = this position counts in a loss or an
    accuracy) of ``shape`` (when given) with at least one True.

    An integer 0/1 array would index rows instead of masking positions, and a float one
    would read NaN as True: both are refused with a ``TypeError``. A mask without a True
    leaves nothing to average (the mean would be NaN): ``ValueError``.
    """
    arr = np.asarray(not_masked(scored, name))
    if arr.dtype != np.bool_:
        raise TypeError(f"{name} must be a boolean array (True = score this position), got dtype {arr.dtype}; "
                        f"an integer array would pick rows by index and a float one read NaN as True: "
                        f"pass `{name} == 1` or `{name}.astype(bool)` if that is what you mean")
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, one entry per target position; got {arr.shape}")
    if not arr.any():
        raise ValueError(f"{name} marks no position: there is nothing to average")
    return arr


#: The first integer float64 cannot tell from its successor: 2**53 + 1 rounds to 2**53.
EXACT_POSITIONS = 2**53


def exact_positions(pos, what: str):
    """Return ``pos`` (a number or an array) if every ``|position|`` is below ``2**53``.

    float64 holds every integer only up to ``2**53``: beyond it ``p`` and ``p + 1`` round to
    the same number, so two positions (or a position and its neighbour's offset) would get the
    same encoding, and a rotation angle ``p * omega`` has lost its every digit below 1 rad.
    ``what`` names the argument (``"positions"``, ``"the offset |k|"``).
    """
    if isinstance(pos, numbers.Integral):  # a Python int may lie beyond any numpy type
        largest = abs(int(pos))
    else:
        largest = np.abs(np.asarray(pos)).max(initial=0)
        largest = float(largest)  # (a float16 compared with 2**64 overflows in the cast)
        largest = int(largest) if largest.is_integer() and largest < 2**64 else largest
    if largest >= EXACT_POSITIONS:
        raise ValueError(
            f"{what} must stay below 2**53 = {EXACT_POSITIONS} in magnitude, got {largest}: float64 cannot "
            f"tell positions that far out apart (2**53 + 1 rounds to 2**53), so their encodings would coincide"
        )
    return pos


#: The largest error a rotation angle may carry, in radians: beyond it the sines and cosines an
#: encoding or a rotation is built from would be off by as much, with no sign of it.
ANGLE_ERROR = 1e-6


def exact_angles(angles: np.ndarray, what: str, blame: str, omega=None) -> np.ndarray:
    """Return ``angles`` (radians, ``(..., n)``, one column per frequency ``omega (n,)``) if
    float64 holds each of them to within :data:`ANGLE_ERROR`.

    From ``2**53`` on, float64 holds no digit below 1 rad (neighbouring floats lie 2 rad apart),
    so the sine and cosine of such an angle are arbitrary numbers in [-1, 1]: a frequency above
    1 (a base below 1) takes ordinary positions there. Below it, an angle ``p * omega`` whose
    frequency is not exactly 1 carries the frequency's error and the product's: ``omega =
    base ** (-2i/D)`` with the exponent rounded is off by ``|ln omega|`` units in the last place,
    pow and a scaled base add a few, so an angle is held to ``|p omega| (|ln omega| + 8) 2**-53``
    rad (0.22 rad at ``p omega = 2.5e14`` where omega is near 1; refused from about ``1.1e9`` rad on a plane of
    frequency near 1, earlier on one whose ``|ln omega|`` is large). A frequency of exactly 1
    (the first plane) turns an exact position by an exact angle. ``blame`` names the arguments
    responsible.
    """
    largest = float(np.abs(angles).max(initial=0))
    if largest >= EXACT_POSITIONS:
        raise ValueError(f"{what} reach {largest:.4g} rad, past 2**53, where float64 holds no digit below "
                         f"1 rad: their sines and cosines would be arbitrary; {blame}")
    if omega is not None and np.size(angles):
        w = np.asarray(omega, dtype=np.float64)
        # relative error of omega_i = base ** e with e = -2i/D rounded: |ln omega_i| ulp from
        # the exponent, a few from pow and from a scaled base; then the product: one more
        # (n,): 0 on the first plane only when its frequency is 1 (base ** 0 is exactly 1); on a
        # later plane a 1.0 is a rounded frequency (a base within a few float steps of 1)
        ulps = np.abs(np.log(w)) + 8.0
        ulps[0] = 0.0 if w.reshape(-1)[0] == 1.0 else ulps[0]
        bound = np.abs(angles) * ulps * 2.0**-53  # (..., n) radians
        worst = np.unravel_index(int(np.argmax(bound)), np.shape(bound))
        if float(bound[worst]) > ANGLE_ERROR:
            reach = float(np.abs(angles)[worst])
            raise ValueError(f"{what} reach {reach:.4g} rad, where float64 holds an angle only to about "
                             f"{float(bound[worst]):.2g} rad (the frequency and the product each round), more "
                             f"than {ANGLE_ERROR:g}: their sines and cosines would be off by as much; use angles "
                             f"below {ANGLE_ERROR / (float(ulps[worst[-1]]) * 2.0**-53):.3g} rad on that plane "
                             "(nearer positions" + (f"; {blame})" if float(np.max(w)) > 1 else ")"))
    return angles


def scores_like(arr: np.ndarray, scores_shape: tuple[int, ...], name: str) -> tuple[int, ...]:
    """Refuse ``arr`` unless it broadcasts against scores of shape ``(..., T, S)``.

    Leading axes may broadcast either way (a mask may add a batch axis); the last two
    must fit ``(T, S)``. Returns the broadcast shape.
    """
    try:
        out = np.broadcast_shapes(arr.shape, scores_shape)
    except ValueError:
        out = None
    if out is None or out[-2:] != tuple(scores_shape[-2:]):
        raise ValueError(
            f"{name} of shape {arr.shape} does not broadcast to the scores' shape "
            f"{tuple(scores_shape)} (..., T, S)"
        )
    return out


def no_overflow(arr: np.ndarray, what: str, blame: str) -> np.ndarray:
    """Return ``arr`` if every entry is finite; otherwise refuse it.

    For results computed from finite inputs: a non-finite entry means ``what`` overflowed
    its float type. The message says so and names the arguments responsible (``blame``).
    """
    if not np.isfinite(arr).all():
        raise ValueError(
            f"overflow in {what}: it exceeds the largest finite {arr.dtype} ({np.finfo(arr.dtype).max:.4g}) "
            f"in {int(np.isinf(arr).sum())} inf and {int(np.isnan(arr).sum())} NaN value(s); {blame}"
        )
    return arr


def in_normal_range(arr: np.ndarray, why: str, fix: str) -> np.ndarray:
    """Return ``arr`` if no entry lies below float64's normal range (``2.2e-308``), where a
    draw keeps fewer digits or reads 0; otherwise refuse it, saying ``why`` and ``fix``."""
    tiny = np.finfo(np.float64).tiny
    below = int((np.abs(arr) < tiny).sum())
    if below:
        raise ValueError(f"{why}: {below} of the {arr.size} draws fall below float64's normal range "
                         f"({tiny:.3g}), where they lose digits or read 0; {fix}")
    return arr


def require_torch(module: str):
    """``torch``, imported for ``module``; without it an ``ImportError`` that names the extra
    to install (mhalib itself needs only numpy)."""
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"{module} needs torch, which mhalib does not install by default: "
                          "pip install 'mhalib[torch]' (it pins torch==2.13.0; an unpinned torch "
                          "pulls several GB of CUDA packages)") from exc
    return torch


class MemoryRefused(ValueError, MemoryError):
    """An input whose result cannot fit in this machine's memory, refused before anything is
    allocated. It is a ``ValueError`` (bad input, as every refusal in mhalib) and a
    ``MemoryError`` (what numpy raises when an allocation fails)."""


_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def human_bytes(n: int) -> str:
    """``n`` bytes in binary units, to three significant digits past 1 KiB: ``1000`` is
    ``"1000 B"``, ``1536`` is ``"1.50 KiB"``, ``10**12`` is ``"931 GiB"``."""
    if n < 1024:
        return f"{n} B"
    value, unit = float(n), 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value, unit = value / 1024, unit + 1
    decimals = max(0, 2 - int(np.floor(np.log10(value))))  # 1.50, 76.3, 931
    return f"{value:.{decimals}f} {_UNITS[unit]}"


def memory_limit() -> int | None:
    """Bytes of memory this process may use: the machine's physical memory, or its cgroup's
    limit where that is lower (a container); None where neither can be read."""
    limits = []
    try:
        limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - a platform without sysconf
        pass
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():  # "max" means no limit
            limits.append(int(text))
    return min(limits) if limits else None


def fits_in_memory(nbytes: int, what: str, advice: str) -> int:
    """Return ``nbytes`` if it fits in this machine's memory (``memory_limit``); otherwise
    refuse with a ``MemoryRefused`` that names the size. ``what`` says what needs ``nbytes``
    (``"causal_mask's (1000000, 1000000) boolean array"``), ``advice`` how to need less.

    Called before allocating, so that a request far beyond the machine fails at once with
    its size, not after minutes of allocation or with the size of the last small array.
    """
    limit = memory_limit()
    if limit is not None and nbytes > limit:
        raise MemoryRefused(
            f"{what} needs {human_bytes(nbytes)} ({nbytes:,} bytes), more than this machine's memory, "
            f"{human_bytes(limit)}; {advice}"
        )
    return nbytes
