"""Synthetic tasks for the tiny decoders (pages: Does it extrapolate?; An induction head grows).

Every task gives, for a batch of ``B`` sequences of length ``L``, three ``(B, L)`` arrays:
``tokens`` (the input), ``targets`` (what the model should output at each position) and
``scored`` (True where the output is scored; elsewhere the answer is not determined).

``"repeat"``: a segment of ``n`` random tokens and then the same segment again, after a
random prefix that fills the sequence; ``n`` is drawn for each sequence between ``L/4``
and ``L/2``, and no token occurs twice except in the repeat::

    tokens   p q a b c d a b c d          prefix p q, segment a b c d (n = 4)
    targets  the next token
    scored   . . . . . . 1 1 1 .          (the repeat, but its last token, which has no next)

In the repeat the current token appeared once before, ``n`` positions back, and the next
token is the one that followed it there. A model can solve this without knowing ``n``:
find the earlier copy of the current token (content) and read the token *after* it
(relative position +1). That is the induction mechanism (Olsson et al., 2022). Because
``n`` and the prefix vary, no fixed position or distance gives the answer, and because the
tokens are distinct the earlier copy is unique; that needs ``vocab >= L - n_min``. The
prefix and the first copy are random and not scored: nothing can predict them. At longer
``L`` the segment is longer too, so the lookup reaches further back than in training.

``"kback"``: ``L`` random tokens (repeats allowed); the target at position ``i >= k`` is
the token ``k`` positions back, ``tokens[i - k]``::

    tokens   a b c d e f      k = 3
    targets  . . . a b c

The answer depends only on a distance, never on content: the model must attend to exactly
``i - k``, which tests how precisely each positional method encodes relative position.
"""
from __future__ import annotations

import numpy as np

from .. import _checks

TASKS = ("repeat", "kback")


def repeat_segment_range(length: int) -> tuple[int, int]:
    """The smallest and largest segment length ``n`` of the repeat task at ``length``:
    ``max(2, ceil(L/4))`` and ``L // 2``. Example: 32 gives (8, 16)."""
    L = _checks.positive_int(length, "length")
    return max(2, -(-L // 4)), L // 2


def make_batch(task: str, n_seqs: int, length: int, *, vocab: int, rng: np.random.Generator | int,
               k: int = 3) -> dict:
    """One batch of a task: ``tokens``, ``targets`` (int64) and ``scored`` (bool), each ``(B, L)``.

    Args:
        task: ``"repeat"`` or ``"kback"`` (module docstring).
        n_seqs: batch size ``B``.
        length: sequence length ``L`` (``>= 4`` for repeat, ``> k`` for kback).
        vocab: number of token ids, ``0 .. vocab-1``; repeat needs ``vocab >= L - n_min``
            (``repeat_segment_range``).
        rng: a ``np.random.Generator`` (consumed) or an integer seed for
            ``np.random.default_rng``.
        k: the distance of the kback task.

    Example: ``make_batch("kback", 1, 5, vocab=4, rng=0, k=2)`` scores positions 2, 3, 4
    with targets ``tokens[0], tokens[1], tokens[2]``.
    """
    task = _checks.choice(task, "task", TASKS)
    B = _checks.positive_int(n_seqs, "n_seqs")
    L = _checks.positive_int(length, "length")
    V = _checks.positive_int(vocab, "vocab")
    k = _checks.positive_int(k, "k")
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(_checks.nonnegative_int(rng, "rng"))
    targets = np.zeros((B, L), dtype=np.int64)
    scored = np.zeros((B, L), dtype=bool)
    if task == "repeat":
        if L < 4:
            raise ValueError(f"length must be >= 4 for the repeat task (a segment of >= 2 tokens, twice), got {L}")
        n_min, n_max = repeat_segment_range(L)
        if V < L - n_min:
            raise ValueError(f"vocab must be >= length - n_min = {L} - {n_min} = {L - n_min} for the repeat task "
                             f"(a sequence holds up to {L - n_min} distinct tokens), got vocab={V}")
        n = rng.integers(n_min, n_max + 1, size=B)  # (B,) segment lengths
        ids = np.argsort(rng.random((B, V)), axis=1)  # (B, V): a random order of the vocabulary per row
        tokens = np.empty((B, L), dtype=np.int64)
        for b in range(B):
            r = L - 2 * n[b]  # prefix length
            first = ids[b, : r + n[b]]  # distinct tokens: the prefix, then the segment
            tokens[b] = np.concatenate([first, first[r:]])  # prefix, segment, segment
            scored[b, r + n[b]: L - 1] = True  # the repeat, but its last token
        targets[:, :-1] = tokens[:, 1:]  # the next token
    else:
        if L <= k:
            raise ValueError(f"length must be > k = {k} for the kback task, got {L}")
        tokens = rng.integers(0, V, size=(B, L))  # (B, L)
        targets[:, k:] = tokens[:, :-k]  # the token k back
        scored[:, k:] = True
    return dict(tokens=tokens.astype(np.int64), targets=targets, scored=scored)
