"""Scores that describe what an attention head does (pages: what real heads learn; an induction head grows).

For a head's weights ``A`` of shape ``(T, T)`` over tokens ``[CLS] w_1 ... w_n [SEP]``:

    previous token   mean over i >= 1 of A[i, i-1]
    next token       mean over i <= T-2 of A[i, i+1]
    self             mean over i of A[i, i]
    to [CLS]         mean over i of A[i, 0]
    to [SEP]         mean over i of A[i, T-1]
    to punctuation   mean over i of sum over punctuation keys j of A[i, j]
    entropy          mean over i of -sum_j A[i, j] ln A[i, j], divided by ln T (1 = uniform)

Each score is a weight between 0 and 1 (entropy normalised likewise), so 0.9 means "90% of
the attention goes there on average".

For any causal model, on any token sequence (Olsson et al., 2022; used on the tiny decoders):
``previous_token_score`` (``A[i, i-1]``, from a chosen query on; ``offset_score`` for
any distance) and
``induction_score`` (the weight on tokens that followed earlier copies of the current one).
"""
from __future__ import annotations

import math
import reprlib
import string
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks

HEAD_TYPES = ("previous token", "next token", "self", "to [CLS]", "to [SEP]", "to punctuation", "entropy")
PUNCTUATION = set(string.punctuation)


def head_scores(attention: ArrayLike, tokens: Sequence[str]) -> dict:
    """Per-head scores for one sentence: ``attention (..., T, T)`` -> dict of arrays ``(...)``.

    The formulas are in the module docstring. ``attention``'s rows must be attention weights,
    each a probability distribution (entries >= 0 summing to 1, within rounding), and
    ``tokens`` a sequence of ``T`` strings; anything else is refused. One score can be
    undefined: a sentence with no punctuation token has no "to punctuation" weight, and that
    entry is NaN on purpose, as "missing"; ``average_scores`` leaves such sentences out of
    that score.
    """
    A = _checks.float_array(attention, "attention", min_ndim=2)
    tokens = _token_strings(tokens)
    T = A.shape[-1]
    if A.shape[-2] != T or len(tokens) != T:
        raise ValueError(f"attention must be (..., T, T) with T = len(tokens) = {len(tokens)}, got {A.shape}")
    if T < 3:
        raise ValueError(f"need at least one word between [CLS] and [SEP], got {T} tokens")
    _checks.probability_rows(A, "attention")  # every query's weights sum to 1
    i = np.arange(T)
    punct = np.array([t in PUNCTUATION for t in tokens])
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(A > 0, A * np.log(A), 0.0).sum(-1)  # (..., T)
    return {
        "previous token": A[..., i[1:], i[1:] - 1].mean(-1),
        "next token": A[..., i[:-1], i[:-1] + 1].mean(-1),
        "self": A[..., i, i].mean(-1),
        "to [CLS]": A[..., :, 0].mean(-1),
        "to [SEP]": A[..., :, T - 1].mean(-1),
        "to punctuation": A[..., :, punct].sum(-1).mean(-1) if punct.any() else np.full(A.shape[:-2], np.nan),
        "entropy": ent.mean(-1) / math.log(T),  # (a Python float keeps A's float type; np.log(T) made it float64)
    }


def _token_strings(tokens) -> Sequence[str]:
    """``tokens`` if it is a sequence of strings (a list, a tuple or an array of them); a
    single string is refused, since its characters would pass for tokens."""
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, (Sequence, np.ndarray)):
        raise TypeError(f"tokens must be a sequence of token strings, one per row of attention, "
                        f"got {type(tokens).__name__} {reprlib.repr(tokens)}")
    for i, t in enumerate(tokens):
        if not isinstance(t, str):
            raise TypeError(f"tokens must hold strings; got {t!r} ({type(t).__name__}) at position {i}")
    return tokens


def average_scores(per_sentence: list[dict]) -> dict:
    """Average each score over sentences (sentences without punctuation are left out of that score).

    ``per_sentence`` is a non-empty list of ``head_scores`` dicts over the same heads (every
    score of the same shape); anything else is refused with a message naming the entry.
    """
    if isinstance(per_sentence, (str, bytes, dict)) or not isinstance(per_sentence, Sequence):
        raise TypeError(f"per_sentence must be a list of head_scores' dicts, got {type(per_sentence).__name__}")
    if len(per_sentence) == 0:
        raise ValueError("per_sentence must hold the scores of at least one sentence (head_scores' dicts); "
                         "got an empty list, whose average is undefined")
    shape = None
    for n, s in enumerate(per_sentence):
        if not isinstance(s, Mapping):
            raise TypeError(f"per_sentence[{n}] must be a dict of scores from head_scores, got {type(s).__name__}")
        missing = [k for k in HEAD_TYPES if k not in s]
        if missing:
            raise ValueError(f"per_sentence[{n}] lacks the score(s) {missing}; "
                             f"head_scores gives all of {list(HEAD_TYPES)}")
        for key in HEAD_TYPES:
            got = np.shape(s[key])
            shape = got if shape is None else shape
            if got != shape:
                raise ValueError(f"per_sentence[{n}][{key!r}] has shape {got}, but per_sentence[0]'s scores have "
                                 f"shape {shape}: every sentence must be scored on the same heads")
    out = {}
    for key in HEAD_TYPES:
        stack = np.stack([s[key] for s in per_sentence])  # n_sentences x (...) -> (n_sentences, ...)
        out[key] = np.nanmean(stack, axis=0) if not np.all(np.isnan(stack)) else stack[0]
    return out


def offset_score(attention: ArrayLike, offset: int, *, start: int | None = None) -> np.ndarray:
    """How much of its attention each query gives to the token ``offset`` positions back.

        score = mean over queries i >= start of A[i, i - offset]      (start defaults to offset)

    ``attention (..., T, T)`` -> ``(...)``; 1 means every query looks exactly ``offset`` back.
    ``start`` (>= ``offset``) leaves out early queries, e.g. to score only the positions past
    a training length. Example: uniform causal attention ``A[i, j] = 1/(i+1)`` with
    ``offset=1`` scores the mean of ``1/(i+1)`` over ``i = 1 .. T-1``.
    """
    A = _checks.float_array(attention, "attention", min_ndim=2)
    T = A.shape[-1]
    if A.shape[-2] != T:
        raise ValueError(f"attention must be square, (..., T, T), got {A.shape}")
    offset = _checks.positive_int(offset, "offset")
    start = offset if start is None else _checks.nonnegative_int(start, "start")
    if start < offset:
        raise ValueError(f"start must be >= offset = {offset} (query i needs a key i - offset), got {start}")
    if start >= T:
        raise ValueError(f"start must be < T = {T} (at least one query to score), got {start}")
    i = np.arange(start, T)
    return A[..., i, i - offset].mean(-1)


def previous_token_score(attention: ArrayLike, *, start: int = 1) -> np.ndarray:
    """How much of its attention each query gives to the token just before it:
    ``offset_score`` with ``offset=1``.

        score = mean over queries i >= start of A[i, i-1]

    Olsson et al. (2022) score a head as a previous-token head this way; 1 means every
    query looks only one token back. Example: the shifted identity scores 1.
    """
    return offset_score(attention, 1, start=start)


def induction_score(attention: ArrayLike, tokens: ArrayLike) -> np.ndarray:
    """How much of its attention each query gives to the tokens that *followed* earlier
    copies of its own token: the induction pattern ("... A B ... A -> attend to B").

        targets(i) = { j < i : j >= 1 and tokens[j-1] == tokens[i] }
        score      = mean over queries with a nonempty targets(i) of sum_{j in targets(i)} A[i, j]

    ``attention (..., T, T)`` (any heads or layers over one sequence) with ``tokens (T,)``
    -> ``(...)``. This is Olsson et al.'s (2022) prefix-matching score on a repeated random
    sequence; on ``a b c a b c`` the queries at positions 3 and 4 (tokens ``a``, ``b``)
    have targets {1} and {2}. A sequence in which no token repeats has no such query and is
    refused.
    """
    A = _checks.float_array(attention, "attention", min_ndim=2)
    ids = np.asarray(tokens)
    if ids.dtype.kind not in "iu" or ids.ndim != 1:
        raise TypeError(f"tokens must be a 1-D array of integer token ids, got dtype {ids.dtype} and shape {ids.shape}")
    T = ids.shape[0]
    if A.shape[-2:] != (T, T):
        raise ValueError(f"attention must be (..., T, T) with T = len(tokens) = {T}, got {A.shape}")
    j = np.arange(T)
    # targets[i, j]: key j follows an earlier copy of query i's token, and j < i
    prev = np.concatenate([[-1], ids[:-1]])  # (T,) the token before each key; none before key 0
    targets = (prev[None, :] == ids[:, None]) & (j[None, :] >= 1) & (j[None, :] < j[:, None])  # (T, T)
    queries = targets.any(axis=1)  # (T,)
    if not queries.any():
        raise ValueError("tokens has no query whose token appeared earlier with a successor, so the "
                         "induction score is undefined; pass a sequence with a repeated token")
    per_query = (A * targets).sum(-1)  # (..., T)
    return per_query[..., queries].mean(-1)
