"""What the base sets: the wavelengths of the pairs against the context length, and how position p looks from position 0.

Left: the wavelength 2*pi*base^(2i/D) of every pair for several bases, with the context
length as a line: pairs above it never complete a turn inside the context. Right: the
similarity PE(0)·PE(k) / (D/2), the mean of cos(k*omega_i), against the distance k: with a
small base every pair wraps and far distances all look alike (noise around 0); with a
larger one the slow pairs keep the similarity falling across the whole context.
Page: sinusoidal positional encoding.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np
from matplotlib.ticker import MaxNLocator

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range

#: A pair that turns less than this (radians) over the whole context is nearly constant there.
STILL_ANGLE = 0.5
MAX_BASES = 4


#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'rows.*.first_zero': 'never: no similarity falls to zero within the context',
}


def data(d_model: Annotated[int, Range(2, 1024)] = 128, context: Annotated[int, Range(2, 16384)] = 1024,
         bases: Annotated[tuple[float, ...], Range(1.01, 1e12)] = (100.0, 10000.0, 1000000.0)) -> dict:
    """One entry per base: wavelengths, similarity to position 0 for k = 0 .. context-1, and counts.

    ``nearest`` is the smallest distance |PE(p) - PE(q)| between two different positions of the
    context, ``nearest_neighbours`` the smallest between neighbours p, p + 1. ``first_zero`` is the
    first distance k whose similarity is <= 0 (None if there is none in the context).
    """
    if d_model % 2:
        raise ValueError(f"d_model must be even (PE comes in sin/cos pairs), got {d_model}")
    if not 1 <= len(bases) <= MAX_BASES:
        raise ValueError(f"bases must hold 1 to {MAX_BASES} bases (one curve each), got {len(bases)}")
    tail = context // 4
    rows = []
    for base in bases:
        omega = mhalib.sinusoidal_frequencies(d_model, base)
        lam = mhalib.wavelengths(d_model, base)
        pe = mhalib.sinusoidal_encoding(context, d_model, base)  # (context, D)
        similarity = pe @ pe[0] / (d_model / 2)  # (context,) mean of cos(k omega_i)
        gram = pe @ pe.T  # (context, context)
        sq = np.diag(gram)
        dist = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2 * gram, 0.0))  # |PE(p) - PE(q)|
        np.fill_diagonal(dist, np.inf)
        neighbour = float(np.diagonal(dist, 1).min())  # closest pair of neighbours
        below = np.flatnonzero(similarity <= 0)
        rows.append(dict(base=base, wavelengths=lam, longest=float(lam[-1]),
                         longest_over_context=float(lam[-1] / context),
                         n_longer_than_context=int((lam > context).sum()),
                         n_wrapping=int((lam <= context).sum()),
                         n_nearly_still=int(((context - 1) * omega < STILL_ANGLE).sum()),
                         similarity=similarity, nearest=float(dist.min()), nearest_neighbours=neighbour,
                         first_zero=int(below[0]) if below.size else None,
                         tail_mean=float(similarity[tail:].mean()), tail_std=float(similarity[tail:].std())))
    return dict(d_model=d_model, context=context, n_pairs=d_model // 2, still_angle=STILL_ANGLE, tail_from=tail,
                rows=rows)


def _plain(base: float) -> str:
    """1000000.0 as "1,000,000" (not "1e+06"); a fractional base as it is."""
    return f"{style.fixed(base, 0, sep=True)}" if base == int(base) else style.exact(base)


def draw(data: dict):
    fig, (a, b) = style.new_figure(5.8, 3.9, ncols=2)
    c = style.colors()
    lines = style.palette()
    pairs = np.arange(data["n_pairs"])
    for n, r in enumerate(data["rows"]):
        color = lines[n % len(lines)]
        a.plot(pairs, r["wavelengths"], color=color, lw=2, label=f"base {_plain(r['base'])}",
               **(dict(marker="o", ms=5) if len(pairs) == 1 else {}))  # one pair (d_model 2): a dot, not an empty line
        b.plot(np.arange(data["context"]), r["similarity"], color=color, lw=1.2, label=f"base {_plain(r['base'])}")
    # named in the legend: at 11 pt, a label on the line would cross the steep curves
    a.axhline(data["context"], color=c["fg"], ls="--", lw=1, label=f"context = {data['context']}")
    a.set_yscale("log")
    a.set(xlabel="pair i", ylabel="wavelength (positions)", title=f"Wavelengths,\nd_model = {data['d_model']}")
    style.whole_ticks(a, "x")
    a.grid(alpha=0.4)
    b.axhline(0, color=c["muted"], lw=0.8)
    b.set(xlabel="distance k", ylabel="PE(0)·PE(k) / (d_model/2)", title="How alike are\npositions 0 and k?",
          xlim=(0, data["context"] - 1))
    b.xaxis.set_major_locator(MaxNLocator(3, integer=True))  # three ticks, at whole distances
    b.grid(alpha=0.4)
    fig.legend(*a.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
