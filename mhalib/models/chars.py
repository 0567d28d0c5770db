"""Characters as tokens: the tokenizer of the tiny language model (page: Sampling: from logits to text).

A vocabulary is a string of distinct characters; a character's id is its index in it. Text
with a character the vocabulary lacks is refused, naming the characters, never mapped to a
wrong id.

    >>> tok = CharTokenizer("\\n abc")
    >>> tok.encode("cab a")
    array([4, 2, 3, 1, 2])
    >>> tok.decode([4, 2, 3])
    'cab'
"""
from __future__ import annotations

import numpy as np

from .. import _checks


class CharTokenizer:
    """``vocab``: the characters, each once; ``encode`` and ``decode`` map text to ids and back."""

    def __init__(self, vocab: str):
        if not isinstance(vocab, str):
            raise TypeError(f"vocab must be a str of distinct characters, got {type(vocab).__name__}")
        if not vocab:
            raise ValueError("vocab must hold at least one character, got ''")
        twice = sorted({c for c in vocab if vocab.count(c) > 1})
        if twice:
            raise ValueError(f"vocab must hold each character once; {''.join(twice)!r} appear more than once")
        self.vocab = vocab
        self._ids = {c: i for i, c in enumerate(vocab)}

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> np.ndarray:
        """The ids of ``text``'s characters, shape ``(len(text),)``, int64."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        missing = sorted({c for c in text if c not in self._ids})
        if missing:
            raise ValueError(f"text holds characters the vocabulary lacks: {''.join(missing)!r} "
                             f"(the vocabulary: {self.vocab!r})")
        return np.fromiter((self._ids[c] for c in text), dtype=np.int64, count=len(text))

    def decode(self, ids) -> str:
        """The text of ``ids``, one sequence (1-D, or a single id) of integers in ``[0, len(vocab))``."""
        arr = np.asarray(ids)
        if arr.size == 0 and not isinstance(ids, np.ndarray):
            arr = arr.astype(np.int64)  # [] reads as float64: an empty list of ids is no text
        ids = _checks.token_ids(arr, "ids", len(self.vocab), "len(vocab)")
        if ids.ndim > 1:  # a batch (B, T) read in C order would glue its texts into one
            raise ValueError(f"ids must be one sequence of token ids (1-D, or one id), got shape {ids.shape}; "
                             "decode a batch row by row")
        return "".join(self.vocab[int(i)] for i in ids.reshape(-1))
