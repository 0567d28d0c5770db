"""Scores that describe what an attention head does (page: what real heads learn).

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
"""
from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks

HEAD_TYPES = ("previous token", "next token", "self", "to [CLS]", "to [SEP]", "to punctuation", "entropy")
PUNCTUATION = set(string.punctuation)


def head_scores(attention: ArrayLike, tokens: Sequence[str]) -> dict:
    """Per-head scores for one sentence: ``attention (..., T, T)`` -> dict of arrays ``(...)``.

    The formulas are in the module docstring. One score can be undefined: a sentence with no
    punctuation token has no "to punctuation" weight, and that entry is NaN on purpose, as
    "missing"; :func:`average_scores` leaves such sentences out of that score.
    """
    A = _checks.float_array(attention, "attention", min_ndim=2)
    T = A.shape[-1]
    if A.shape[-2] != T or len(tokens) != T:
        raise ValueError(f"attention must be (..., T, T) with T = len(tokens) = {len(tokens)}, got {A.shape}")
    if T < 3:
        raise ValueError(f"need at least one word between [CLS] and [SEP], got {T} tokens")
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
        "entropy": ent.mean(-1) / np.log(T),
    }


def average_scores(per_sentence: list[dict]) -> dict:
    """Average each score over sentences (sentences without punctuation are left out of that score)."""
    out = {}
    for key in HEAD_TYPES:
        stack = np.stack([s[key] for s in per_sentence])  # n_sentences x (...) -> (n_sentences, ...)
        out[key] = np.nanmean(stack, axis=0) if not np.all(np.isnan(stack)) else stack[0]
    return out
