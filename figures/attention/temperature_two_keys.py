"""Temperature on the smallest example: two keys with scores 2 and 0, weights softmax(s / τ).

The first key's weight is 1 / (1 + e^(-2 / tau)): almost 1 at small tau, one half at large
tau. The row entropy goes from 0 (all weight on one key) to ln 2 (uniform over two keys).
Page: heads in action.
"""
from __future__ import annotations

import math
from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def _entropy(z: np.ndarray) -> float:
    """H = -sum_i w_i ln w_i of w = softmax(z), from ln w_i = (z_i - m) - ln(1 + r), where m is
    the largest score and r the sum of exp(z_j - m) over the other keys (log1p keeps r when it
    is below float64's 1e-16: the largest weight's term -w ln w is then about r, and 1 - r
    rounded to 1 lost it, making the entropy at tau = 0.04 about 2 % too small)."""
    top = int(np.argmax(z))
    with np.errstate(over="ignore"):  # a gap past the float range is -inf: a weight of exactly 0
        gap = z - z[top]  # (S,), <= 0
    e = np.exp(gap)  # (S,), e[top] == 1
    log_w = gap - np.log1p(np.delete(e, top).sum())  # (S,): ln w_i, -inf for a weight of 0
    w = np.exp(log_w)
    return float(-np.sum(np.where(w > 0, w * np.where(w > 0, log_w, 0.0), 0.0)))


def data(scores: tuple[float, ...] = (2.0, 0.0),
         taus: Annotated[tuple[float, ...], Range(0.01, 100)] = (0.5, 1.0, 2.0, 4.0)) -> dict:
    if len(scores) < 2:
        raise ValueError(f"scores must hold at least two keys' scores, got {len(scores)}: {scores!r}")
    s = np.asarray(scores, dtype=float)
    biggest = float(np.abs(s).max())
    for tau in taus:  # s / tau past the float range returned "x must not hold NaN or +inf" (pass thirty)
        if biggest / tau > np.finfo(float).max:
            raise ValueError(f"scores / tau must stay within the float range: at tau = {style.exact(tau)} the "
                             f"largest |score|, {style.exact(biggest)}, over tau passes the largest float, "
                             f"{style.exact(np.finfo(float).max)}; lower the scores or raise taus")
    rows = []
    for tau in taus:
        w = mhalib.softmax(s / tau)  # (S,)
        rows.append(dict(tau=tau, weights=w, entropy=_entropy(s / tau)))
    return dict(scores=list(scores), rows=rows, uniform=math.log(len(scores)))


def _weights(weights) -> list[str]:
    """A row's weights to 4 places, or more where two that differ would read the same
    (0.5000025 and 0.4999975 both read "0.5000", the uniform weight, at τ = 100), up to the 17
    that tell any two float64 weights apart (0.5 ± 2.5e-13: pass seventy-four)."""
    places = 4
    while places < 17 and len({style.share(w, places) for w in weights}) < len(set(weights)):
        places += 1
    return [style.share(w, places) for w in weights]


def table(data: dict) -> str:
    keys = [f"weight on key {j + 1} (score {style.exact(s)})" for j, s in enumerate(data["scores"])]
    rows = [[style.exact(r['tau'])] + _weights(r["weights"]) + [style.fixed(r["entropy"], 3)] for r in data["rows"]]
    return markdown_table(["τ", *keys, "entropy"], rows, "r" * (len(keys) + 2))


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
