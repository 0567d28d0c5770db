"""PCG32: a small random number generator that the site's browser code repeats draw for draw
(page: Generating text: the KV cache).

numpy's generators cannot run in a reader's browser, so the live generator
(``docs/javascripts/generator.js``) and ``mhalib.sample_next`` share this one: M. E. O'Neill's
PCG32 (``pcg32_srandom_r`` / ``pcg32_random_r`` of the reference C code), 64-bit state,
32-bit output. With the same seed both draw the same numbers, hence the same text.

    seeding:  inc = (stream << 1) | 1;  state = 0;  step;  state += seed;  step
    step:     state' = state * 6364136223846793005 + inc          (mod 2^64)
    output:   x = ((state >> 18) ^ state) >> 27   (low 32 bits),  r = state >> 59
              out = rotate_right_32(x, r)         (computed from the state *before* the step)
    uniform:  u = out / 2^32,  a float64 in [0, 1) with 32 random bits

Worked value: ``Pcg32(42, 54)`` gives ``0xa15c02b7, 0x7b47f409, 0xba1d3330, ...``, the output
of the reference demo ``pcg32-demo``.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import _checks

MASK64 = (1 << 64) - 1
MULTIPLIER = 6364136223846793005
#: The demo's default stream (``pcg32_srandom(42, 54)``).
DEFAULT_STREAM = 54


def _u64(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer in [0, 2**64), got {value!r} ({type(value).__name__})")
    if not 0 <= value <= MASK64:
        raise ValueError(f"{name} must be an integer in [0, 2**64) (an unsigned 64-bit number), got {value}")
    return int(value)


class Pcg32:
    """PCG32 with a 64-bit ``seed`` and a ``stream`` (which of 2^63 sequences), both in ``[0, 2**64)``.

    ``next_u32()`` is the next 32-bit output; ``random(shape)`` is ``next_u32() / 2**32`` per
    element, in C order, as a float64 array of ``shape``: so it can stand in for a numpy
    ``Generator`` as ``rng`` of ``mhalib.sample_next``. Only the low 63 bits of ``stream``
    matter (the reference code shifts it left by one).
    """

    def __init__(self, seed: int, stream: int = DEFAULT_STREAM):
        seed, stream = _u64(seed, "seed"), _u64(stream, "stream")
        self.seed, self.stream = seed, stream
        self._inc = ((stream << 1) | 1) & MASK64
        self._state = 0
        self.next_u32()
        self._state = (self._state + seed) & MASK64
        self.next_u32()

    def next_u32(self) -> int:
        """The next output, an ``int`` in ``[0, 2**32)`` (module docstring: step, output)."""
        old = self._state
        self._state = (old * MULTIPLIER + self._inc) & MASK64
        x = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        r = old >> 59
        return ((x >> r) | (x << ((32 - r) & 31))) & 0xFFFFFFFF

    def random(self, shape=()) -> np.ndarray:
        """Uniform float64 numbers in ``[0, 1)``, ``next_u32() / 2**32`` each, of ``shape``
        (an int or a tuple of ints >= 0; ``()`` gives a 0-d array, as numpy's ``random(())``)."""
        dims = (shape,) if isinstance(shape, numbers.Integral) and not isinstance(shape, bool) else shape
        if not isinstance(dims, tuple) or any(isinstance(n, bool) or not isinstance(n, numbers.Integral)
                                              or n < 0 for n in dims):
            raise TypeError(f"shape must be an int >= 0 or a tuple of them, got {shape!r}")
        n = math.prod(int(d) for d in dims)  # exact: numpy's int64 product wraps past 2**63
        _checks.fits_in_memory(12 * n, f"Pcg32.random's {n:,} numbers of shape {shape!r}",
                               "draw fewer numbers (each is one step of a pure-Python generator)")
        out = np.fromiter((self.next_u32() for _ in range(n)), dtype=np.uint32, count=n) / 2.0**32  # (n,) float64
        return out.reshape(dims)  # (n,) -> shape, C order

    def __repr__(self) -> str:
        return f"Pcg32(seed={self.seed}, stream={self.stream})"
