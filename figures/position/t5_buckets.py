"""T5's relative-position buckets: the bucket of each signed distance j - i, bidirectional (encoder) and causal (decoder).

One bucket per distance near the query, then buckets that widen logarithmically up to
max_distance; every distance beyond it shares the last bucket. Bidirectional: half the
buckets for keys before the query (and the query itself), half for keys after it.
Causal: all buckets for keys at or before the query. Computed by
``mhalib.t5_relative_position_bucket``. Page: comparing the methods.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def _ranges(distance: np.ndarray, bucket: np.ndarray) -> list[dict]:
    """Consecutive runs of one bucket along ``distance``: ``[{bucket, lo, hi}, ...]``."""
    runs = []
    for dist, b in zip(distance.tolist(), bucket.tolist()):
        if runs and runs[-1]["bucket"] == b:
            runs[-1]["hi"] = dist
        else:
            runs.append(dict(bucket=b, lo=dist, hi=dist))
    return runs


def data(num_buckets: Annotated[int, Range(4, 256)] = 32, max_distance: Annotated[int, Range(2, 4096)] = 128,
         span: Annotated[int, Range(1, 8192)] = 160) -> dict:
    """Buckets for relative positions -span .. span (key minus query), both modes.

    ``backward_ranges`` lists, for keys at distance 0, 1, ... before the query, which distances
    share each bucket (``lo`` .. ``hi``); the last range is cut at ``span``.
    """
    rel = np.arange(-span, span + 1)  # key position - query position
    bi = mhalib.t5_relative_position_bucket(rel, bidirectional=True, num_buckets=num_buckets,
                                            max_distance=max_distance)
    causal = mhalib.t5_relative_position_bucket(rel, bidirectional=False, num_buckets=num_buckets,
                                                max_distance=max_distance)
    back = np.arange(0, span + 1)  # distance back to a key at or before the query
    bi_back = mhalib.t5_relative_position_bucket(-back, num_buckets=num_buckets, max_distance=max_distance)
    causal_back = mhalib.t5_relative_position_bucket(-back, bidirectional=False, num_buckets=num_buckets,
                                                     max_distance=max_distance)
    return dict(num_buckets=num_buckets, max_distance=max_distance, span=span, relative_position=rel,
                bidirectional=bi, causal=causal,
                max_exact=dict(bidirectional=num_buckets // 4, causal=num_buckets // 2),
                backward_ranges=dict(bidirectional=_ranges(back, bi_back), causal=_ranges(back, causal_back)),
                n_used=dict(bidirectional=int(np.unique(bi).size), causal=int(np.unique(causal).size)),
                unused=dict(bidirectional=sorted(set(range(num_buckets)) - set(bi.tolist())),
                            causal=sorted(set(range(num_buckets)) - set(causal.tolist()))),
                first_after=int(mhalib.t5_relative_position_bucket(1, num_buckets=num_buckets,
                                                                   max_distance=max_distance)))


def draw(data: dict):
    fig, axes = style.new_figure(5.8, 5.4, nrows=2, sharex=True)
    lines = style.palette()
    c = style.colors()
    rel = np.asarray(data["relative_position"])
    for ax, mode, title in ((axes[0], "bidirectional", "bidirectional (encoder)"),
                            (axes[1], "causal", "causal (decoder)")):
        ax.step(rel, data[mode], where="mid", color=lines[0], lw=1.8, label="bucket")
        exact = data["max_exact"][mode]
        ax.axvspan(-exact + 0.5, (exact - 0.5) if mode == "bidirectional" else 0.5, color=lines[2],
                   alpha=0.3, lw=0, label="one bucket per distance")
        for x in (-data["max_distance"], data["max_distance"]):
            ax.axvline(x, color=c["muted"], ls=":", lw=1.2)
        ax.text(data["max_distance"], 0.5 * data["num_buckets"], f"max_distance \n= {data['max_distance']} ",
                color=c["muted"], fontsize=11, ha="right", va="center")  # inside the line: no wider than the axes
        ax.set(title=title, ylabel="bucket", ylim=(-0.5, data["num_buckets"] - 0.5))  # buckets 0 .. n - 1
        style.whole_ticks(ax, "y")  # (a tick at -1 named a bucket that does not exist: pass twenty-nine)
        ax.grid(alpha=0.4)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=11)
    axes[1].set_xlabel("relative position j − i (key − query)")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
