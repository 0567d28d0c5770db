"""From logits to the next token: temperature, top-k, top-p, sampling, greedy and beam search
(page: Sampling: from logits to text).

A decoder's last layer gives one logit per vocabulary entry, ``x (..., V)``. Decoding turns
them into a token. The filters run in Hugging Face ``transformers``' order (its
``TemperatureLogitsWarper``, ``TopKLogitsWarper``, ``TopPLogitsWarper``):

    temperature  z_j = x_j / T                                  T < 1 sharpens, T > 1 flattens
    top-k        keep z_j >= z_(k), the k-th largest value,      k = min(max(top_k, min_keep), V)
    top-p        p = softmax(z) sorted ascending, c_j = p_(1) + ... + p_(j);
                 remove the j-th smallest while c_j <= 1 - top_p, never the last min_keep
    sample       y ~ softmax(filtered)         greedy   y = argmax_j x_j

Removed entries become ``-inf``, so their probability is exactly 0. Top-p keeps the
smallest set of most probable tokens whose probabilities add up to at least ``top_p``.

Worked example: ``x = log([0.5, 0.25, 0.15, 0.1])`` with ``top_p=0.7``: the ascending
cumulative sums are ``0.1, 0.25, 0.5, 1``; the first two are ``<= 0.3``, so tokens 3 and 2
go and tokens 0 and 1 (mass 0.75) stay, with probabilities ``2/3`` and ``1/3`` after the
softmax.

Beam search keeps the ``beams`` best prefixes by total log-probability instead of one.
Axes: every leading axis is a batch axis; the last is the vocabulary ``V``.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .prng import Pcg32
from .softmax import softmax


def _checked_logits(logits, name: str = "logits") -> np.ndarray:
    """``logits`` as a float array ``(..., V)`` with ``V >= 1``, no NaN or ``+inf``, and at least
    one finite entry per row (``-inf`` marks a token that may not be chosen)."""
    x = _checks.float_array(logits, name, finite=False)
    if x.ndim == 0:
        raise ValueError(f"{name} must have at least 1 dimension (the last is the vocabulary, V), got shape ()")
    if x.shape[-1] == 0:
        raise ValueError(f"{name} must hold at least one token (V >= 1), got an empty vocabulary: shape {x.shape}")
    n_nan, n_posinf = int(np.isnan(x).sum()), int(np.isposinf(x).sum())
    if n_nan or n_posinf:
        raise ValueError(f"{name} must not hold NaN or +inf (only -inf, meaning 'never this token', is allowed); "
                         f"got {n_nan} NaN and {n_posinf} +inf")
    dead = np.all(np.isneginf(x), axis=-1)  # (...,) rows with no token left
    if dead.any():
        where = "" if x.ndim == 1 else \
            f" in {int(dead.sum())} row(s), the first at batch index {tuple(int(i) for i in np.argwhere(dead)[0])}"
        raise ValueError(f"{name} is -inf in every entry{where}: no token can be chosen; "
                         "at least one entry per row must be finite")
    return x


def _temperature(value) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value == 0:
        raise ValueError("temperature must be a finite number > 0, got 0; the limit T -> 0 is greedy decoding: "
                         "use mhalib.greedy(logits)")
    if isinstance(value, np.floating) and np.finfo(value.dtype).bits > 64:  # longdouble: in its own range, not
        if not (np.isfinite(value) and value > 0):                           # float64's (1e400 read "inf")
            raise ValueError(f"temperature must be a finite number > 0, got {value}")
        return value
    return _checks.positive_float(value, "temperature")


def _top_p(value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"top_p must be a real number in (0, 1], got {value!r} ({type(value).__name__})")
    value = float(value)
    if not 0.0 < value <= 1.0:  # NaN fails too
        raise ValueError(f"top_p must be in (0, 1] (the probability mass to keep), got {value}")
    return value


def _opmath(dtype: np.dtype) -> type:
    """The type torch computes in on a CPU for ``dtype``: float32 for float16, else ``dtype`` itself."""
    return np.float32 if dtype == np.float16 else dtype.type


def _divide_by_temperature(x: np.ndarray, temperature: float) -> np.ndarray:
    """``x / T`` in ``x``'s dtype (float16 divides in float32 and rounds once, as torch does)."""
    op = _opmath(x.dtype)
    with np.errstate(over="ignore"):
        t = op(temperature)
    if t == 0 or not np.isfinite(t):  # 0/0 or -inf/inf: NaN (pass thirty-seven)
        raise ValueError(f"temperature={temperature} is {'0' if t == 0 else 'infinite'} in {np.dtype(op).name}, the "
                         f"type {x.dtype} logits are divided in (as torch does); its range is "
                         f"{np.finfo(op).smallest_subnormal:.3g} to {np.finfo(op).max:.3g}: pass the logits as "
                         "float64, or a temperature in that range")
    with np.errstate(over="ignore"):
        z = (x.astype(op) / op(temperature)).astype(x.dtype)  # (..., V)
    overflowed = np.isfinite(x) & ~np.isfinite(z)
    if overflowed.any():
        raise ValueError(f"overflow: logits / temperature (temperature={temperature}) exceeds the largest finite "
                         f"{x.dtype} ({np.finfo(x.dtype).max:.6g}) in {int(overflowed.sum())} entries; "
                         "raise temperature or pass the logits as float64")
    return z


# --8<-- [start:top-k-top-p]
def _keep_top_k(z: np.ndarray, k: int) -> np.ndarray:
    """Set to ``-inf`` every entry below the ``k``-th largest of its row (ties stay)."""
    V = z.shape[-1]
    kth = np.sort(z, axis=-1)[..., V - k, None]  # (..., V) -> (..., 1): the k-th largest
    out = z.copy()
    out[z < kth] = -np.inf
    return out


def _keep_top_p(z: np.ndarray, top_p: float, min_keep: int) -> np.ndarray:
    """Remove the least probable tokens while their summed probability is ``<= 1 - p``."""
    order = np.argsort(z, axis=-1, kind="stable")  # (..., V) ascending; ties by index
    ascending = np.take_along_axis(z, order, axis=-1)  # (..., V)
    # (..., V); probabilities, sums and threshold in z's dtype, as torch's warper
    p = softmax(ascending.astype(_opmath(z.dtype))).astype(z.dtype)
    c = np.cumsum(p, axis=-1, dtype=np.float64).astype(z.dtype)  # summed in float64
    drop_sorted = c <= z.dtype.type(1.0 - top_p)  # (..., V)
    drop_sorted[..., -min_keep:] = False  # the min_keep most probable always stay
    drop = np.empty_like(drop_sorted)
    np.put_along_axis(drop, order, drop_sorted, axis=-1)  # back to vocabulary order
    out = z.copy()
    out[drop] = -np.inf
    return out
# --8<-- [end:top-k-top-p]


def filter_logits(logits: ArrayLike, *, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None, min_keep: int = 1) -> np.ndarray:
    """Temperature, then top-k, then top-p, as ``transformers``' logits warpers apply them
    (page: Sampling: from logits to text).

        z = x / T
        top-k:  z_j -> -inf  where z_j < z_(k),  z_(k) the k-th largest,  k = min(max(top_k, min_keep), V)
        top-p:  p = softmax(z) sorted ascending, c_j = p_(1) + ... + p_(j);
                the j-th smallest -> -inf  where c_j <= 1 - top_p, except the last min_keep

    Args:
        logits: real array ``(..., V)``; every leading axis is a batch axis. ``-inf`` marks a
            token that may not be chosen; NaN, ``+inf``, an empty vocabulary and a row that is
            entirely ``-inf`` are refused.
        temperature: ``T``, a finite number > 0 (``T -> 0`` is ``greedy``).
        top_k: keep the ``top_k`` highest logits per row (more when values tie with the
            ``top_k``-th: all of them stay, as in ``TopKLogitsWarper``); ``top_k >= V`` keeps
            every token; None: no top-k.
        top_p: keep the smallest set of most probable tokens whose probabilities sum to at
            least ``top_p``, in ``(0, 1]``; None: no top-p.
        min_keep: top-k and top-p never keep fewer tokens than this (``min_tokens_to_keep``).

    Returns:
        np.ndarray: the filtered logits, same shape, removed entries ``-inf``, in the float
        dtype of ``logits`` (integers become float64); every row keeps at least one finite entry.

    Like the warpers, top-p decides in the logits' dtype: the probabilities are rounded to it,
    summed in float64 and compared with ``1 - top_p`` rounded to it; float16 divides by ``T``
    in float32 and rounds once, as torch does on a CPU. Where tokens with equal logits
    straddle the top-p boundary, the ones with the higher index stay (a stable ascending sort,
    as torch sorts rows of up to 16 entries on a CPU; longer rows torch may order differently
    among ties, so which tied tokens the warper keeps is arbitrary there, though how many is
    not). ``top_p=1`` removes only tokens whose probability is 0 in the logits' dtype, as the
    warper does (``generate`` skips the warper at 1). Unlike the warpers, ``top_p=0`` and a
    ``temperature`` that overflows the dtype are refused.

    Examples: ``filter_logits([3, 1, 1, 0], top_k=2)`` is ``[3, 1, 1, -inf]`` (the tie with the
    second-largest stays); ``filter_logits([0, 0, 0, 0], top_p=0.5)`` is ``[-inf, -inf, 0, 0]``
    (cumulative sums ``0.25, 0.5, 0.75, 1``: the first two are ``<= 0.5``).
    """
    x = _checked_logits(logits)
    temperature = _temperature(temperature)
    top_k = None if top_k is None else _checks.positive_int(top_k, "top_k")
    top_p = None if top_p is None else _top_p(top_p)
    min_keep = _checks.positive_int(min_keep, "min_keep")
    z = _divide_by_temperature(x, temperature)  # (..., V)
    if top_k is not None:
        z = _keep_top_k(z, min(max(top_k, min_keep), z.shape[-1]))  # (..., V)
    if top_p is not None:
        z = _keep_top_p(z, top_p, min_keep)  # (..., V)
    return z


def sample_next(logits: ArrayLike, rng: np.random.Generator | Pcg32, *, temperature: float = 1.0,
                top_k: int | None = None, top_p: float | None = None, min_keep: int = 1) -> int | np.ndarray:
    """Draw the next token from ``softmax(filter_logits(logits, ...))``
    (page: Sampling: from logits to text).

        p = softmax(filter_logits(x, temperature, top_k, top_p, min_keep))     in float64
        C_j = (p_0 + ... + p_j) / (p_0 + ... + p_{V-1}),   u ~ Uniform[0, 1)
        y = the number of j with C_j <= u      (the first j with C_j > u)

    Args:
        logits: real array ``(..., V)``, as in ``filter_logits``; each row is one draw.
        rng: a ``numpy.random.Generator`` (``np.random.default_rng(seed)``) or an
            ``mhalib.Pcg32`` (the generator the site's browser code repeats draw for draw),
            the only source of randomness; one uniform number is drawn per row, in row order.
        temperature: as in ``filter_logits``.
        top_k: as in ``filter_logits``.
        top_p: as in ``filter_logits``.
        min_keep: as in ``filter_logits``.

    Returns:
        int | np.ndarray: the token id, an ``int`` for logits ``(V,)``; for ``(..., V)`` an
        int64 array of shape ``(...)``. A token with probability 0 is never drawn.

    For one row this is the draw that ``rng.choice(V, p=p)`` makes from the same generator
    state, and a batch of rows draws what as many single calls would, in turn.

    Example: with ``logits = log([0.5, 0.25, 0.15, 0.1])`` and ``top_p=0.7`` only tokens 0
    and 1 can come out, token 0 twice as often as token 1.
    """
    if not isinstance(rng, (np.random.Generator, Pcg32)):
        raise TypeError(f"rng must be a numpy.random.Generator, e.g. np.random.default_rng(seed), or an "
                        f"mhalib.Pcg32(seed); got {rng!r} ({type(rng).__name__})")
    z = filter_logits(logits, temperature=temperature, top_k=top_k, top_p=top_p, min_keep=min_keep)
    p = softmax(z.astype(np.float64))  # (..., V)
    cdf = np.cumsum(p, axis=-1)  # (..., V)
    cdf /= cdf[..., -1:]  # ends at exactly 1, so u < 1 always lands on a token
    u = rng.random(z.shape[:-1])  # (...,)
    ids = np.sum(cdf <= u[..., None], axis=-1)  # (..., V) -> (...,)
    return int(ids) if z.ndim == 1 else ids.astype(np.int64)


def greedy(logits: ArrayLike) -> int | np.ndarray:
    """The most probable token, ``argmax_j x_j`` (page: Sampling: from logits to text).

    Args:
        logits: real array ``(..., V)``, checked as in ``filter_logits``.

    Returns:
        int | np.ndarray: an ``int`` for logits ``(V,)``; for ``(..., V)`` an int64 array of
        shape ``(...)``. Ties go to the lowest token id (as ``np.argmax`` and ``torch.argmax``).

    Example: ``greedy([1.0, 3.0, 3.0])`` is 1.
    """
    x = _checked_logits(logits)
    ids = np.argmax(x, axis=-1)  # (..., V) -> (...,)
    return int(ids) if x.ndim == 1 else ids.astype(np.int64)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    """``x_j - max - log(sum_k exp(x_k - max))`` along the last axis, in float64."""
    x = x.astype(np.float64)
    m = np.max(x, axis=-1, keepdims=True)  # finite: every row has a finite entry
    with np.errstate(over="ignore"):  # a gap past float64's range is -inf here, refused by beam_search
        return x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


def _start_tokens(start) -> np.ndarray:
    arr = np.asarray(_checks.not_masked(start, "start"))
    if arr.size == 0 and arr.ndim == 1:
        return arr.astype(np.int64)  # an empty prompt: np.asarray([]) is float64
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iu":
        raise TypeError(f"start must be a 1-D sequence of integer token ids, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"start must be a 1-D sequence of token ids (one prompt), got shape {arr.shape}")
    if (arr < 0).any():
        raise ValueError(f"start must hold token ids >= 0, got {arr.min()}")
    return _checks.as_int64(arr, "start", "token ids")  # a uint64 id past int64 would wrap to a negative one


def beam_search(step_fn: Callable[[np.ndarray], ArrayLike], start: ArrayLike, *, beams: int,
                max_new: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``beams`` most probable continuations found by beam search, best first
    (page: Sampling: from logits to text).

        log p(y_t | prefix) = log_softmax(step_fn(prefix))_{y_t}
        score(y_1 .. y_n)   = sum_t log p(y_t | start, y_1 .. y_{t-1})
        each step: every kept prefix x every token -> candidates; keep the ``beams`` best

    Args:
        step_fn: called with one prefix, a 1-D int64 array (``start`` and the tokens chosen
            so far, a fresh copy each call), it returns the next token's **logits** ``(V,)``
            (the same ``V`` every call; ``-inf`` forbids a token). They are normalised here
            with a log-softmax, so log-probabilities work unchanged (log-softmax leaves them
            as they are).
        start: the prompt's token ids, 1-D (may be empty), each in ``[0, V)``; a negative id,
            or a uint64 one at or past ``2**63`` (beyond the int64 results), is refused.
        beams: prefixes kept after each step (the beam width); 1 is greedy decoding.
        max_new: tokens to add; every result has exactly this many (no end-of-sequence token,
            so no length penalty is needed).

    Returns:
        tuple[np.ndarray, np.ndarray]: the pair ``(sequences, scores)``: ``sequences (n,
        len(start) + max_new)`` int64, each ``start`` followed by its new tokens, and
        ``scores (n,)`` float64, the summed log-probabilities of the new tokens, highest
        first. ``n = beams`` unless fewer sequences have a finite score. Equal scores keep
        the order of the prefix they extend, then of token id.

    Beam search is exact (it returns the ``beams`` best of all ``V ** max_new`` sequences)
    once ``beams >= V ** (max_new - 1)``: no prefix is ever dropped before the last step.

    Example: if the first token is ``a`` with probability 0.5 or ``b`` with 0.4, and the best
    continuation after ``a`` has 0.4 but after ``b`` has 0.9, greedy (``beams=1``) returns
    ``a a`` (probability 0.2) and ``beams=2`` finds ``b a`` (probability 0.36).
    """
    if not callable(step_fn):
        raise TypeError(f"step_fn must be callable (prefix token ids -> next-token logits), "
                        f"got {type(step_fn).__name__}")
    prompt = _start_tokens(start)
    beams = _checks.positive_int(beams, "beams")
    max_new = _checks.positive_int(max_new, "max_new")
    prefixes, scores, V = [prompt], np.zeros(1), None
    for _ in range(max_new):
        rows, allowed = [], []
        for prefix in prefixes:
            x = _checked_logits(step_fn(prefix.copy()), "step_fn's output")
            if x.ndim != 1 or (V is not None and x.shape[0] != V):
                want = "(V,)" if V is None else f"({V},) as on its first call"
                raise ValueError(f"step_fn's output must be 1-D logits of shape {want}, got shape {x.shape}")
            V = x.shape[0]
            rows.append(_log_softmax(x))
            allowed.append(np.isfinite(x))  # only a -inf logit forbids its token
        if prompt.size and prompt.max() >= V:
            raise ValueError(f"start must hold token ids in [0, {V}) for step_fn's vocabulary of V={V}, "
                             f"got {prompt.max()}")
        with np.errstate(over="ignore"):
            candidates = (scores[:, None] + np.stack(rows)).ravel()  # (n, 1) + (n, V) -> (n * V,)
        lost = np.stack(allowed).ravel() & ~np.isfinite(candidates)  # allowed, but its score left float64
        if lost.any():
            raise ValueError(f"the log-probability of {int(lost.sum())} allowed sequence(s) passes float64's range "
                             "(logits spread by more than 1.8e308, or scores summed past it), so beam search "
                             "cannot rank them; scale step_fn's logits down")
        order = np.argsort(-candidates, kind="stable")  # best first; ties: earlier prefix, then token id
        order = order[np.isfinite(candidates[order])][:beams]  # never an impossible sequence
        parent, token = np.divmod(order, V)  # which prefix each kept candidate extends, and with what
        prefixes = [np.append(prefixes[b], t) for b, t in zip(parent, token)]
        scores = candidates[order]
    return np.stack(prefixes).astype(np.int64), scores
