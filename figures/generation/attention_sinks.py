"""Attention sinks: does the tiny language model need its first characters' keys when a window slides?

The course's tiny character model (RoPE, causal, trained on 128-character stretches) reads
held-out text three ways: with every earlier character (the full cache), with a sliding window
of the last W characters only, and with that window plus the first n_sink characters' keys
(StreamingLLM's "attention sinks", Xiao et al. 2023). Each is one masked forward pass
(mhalib.sliding_window_mask(T, W, n_sink=n) in every layer), which gives the same logits as
decoding with a cache that keeps only those keys; every key keeps the RoPE angle of its own
position, so every query meets keys at offsets the model trained on (0 to 127).

Left: the extra loss per character of each window over the full cache, against the position
of the character, averaged over the held-out stretches and over 16 positions at a time. Right:
the mean weight each of the 16 heads gives the first character, for queries far into the
stretch, against what an even spread over the visible keys would give it.
Trained by tools/train_lm.py; data in figures/data/tiny_lm.json. Page: long context.
"""
from __future__ import annotations

import json
from typing import Annotated

import numpy as np
from matplotlib.lines import Line2D

import mhalib
from mhalib.models.tiny_numpy import forward
from figures._kit import cli, style
from figures._kit.contract import Range
from figures.generation.lm_loss_curve import SOURCE, load_model
from figures.generation.sampling_samples import nats

#: A phone gets the two panels one under the other (style.narrow()).
NARROW = True

#: The windows measured, in characters, and the numbers of first characters kept beside them.
WIDTHS = (8, 16, 32, 64)
SINKS = (1, 4)
#: Attention to the first character is averaged over queries at positions FAR .. T - 1.
FAR = 64
#: Positions are averaged in bins of this many for the figure's left panel.
BIN = 16


def held_out_stretches(stretches: int) -> tuple[np.ndarray, np.ndarray]:
    """``stretches`` stretches of the held-out text, each as long as the model's context: the
    text is cut into its ``total`` consecutive stretches and every k-th is taken from the first,
    ``k = total // stretches`` (so up to half of them are spread over the whole text; more than
    half take k = 1, the first ``stretches`` in a row): ``inputs (stretches, T)`` and
    ``targets (stretches, T)``, the character after each input, as on the sampling page."""
    config, _, tok = load_model()
    T = config.max_len
    ids = tok.encode(json.loads(SOURCE.read_text())["corpus"]["held_out_text"])
    total = (len(ids) - 1) // T  # consecutive stretches the text holds, each with its next character
    if not 1 <= stretches <= total:
        raise ValueError(f"stretches must be 1 .. {total} (the held-out text holds {total} stretches of {T} "
                         f"characters), got {stretches}")
    starts = (np.arange(stretches) * (total // stretches)) * T  # (stretches,): every k-th stretch
    take = starts[:, None] + np.arange(T + 1)  # (stretches, T + 1)
    rows = ids[take]
    return rows[:, :-1], rows[:, 1:]  # (stretches, T) each


def loss_with(inputs: np.ndarray, targets: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, list]:
    """Nats paid on every character ``(N, T)`` with attention limited by ``mask`` (None: the
    full causal cache), and the attention weights, one ``(N, H, T, T)`` array per layer."""
    config, weights, _ = load_model()
    out = forward(weights, config, inputs, mask=mask)
    return nats(out["logits"], targets), out["attention"]  # (N, T, V) -> (N, T)


def data(stretches: Annotated[int, Range(4, 131)] = 16) -> dict:
    config, _, _ = load_model()
    T = config.max_len
    inputs, targets = held_out_stretches(stretches)
    full, attention = loss_with(inputs, targets, None)  # (N, T)
    positions = np.arange(T)
    runs = []
    for W in WIDTHS:
        for n_sink in (0,) + SINKS:
            cost, _ = loss_with(inputs, targets, mhalib.sliding_window_mask(T, W, n_sink=n_sink))
            extra = cost - full  # (N, T); zero before position W, where the window holds every key
            per_stretch = extra[:, W:].mean(axis=1)  # (N,): the extra nats of each stretch past the window
            runs.append(dict(window=W, n_sink=n_sink, extra_by_position=extra.mean(axis=0).tolist(),
                             extra=float(per_stretch.mean()), extra_min=float(per_stretch.min()),
                             extra_max=float(per_stretch.max()), worse=int((per_stretch > 0).sum()),
                             loss=float(cost[:, W:].mean()), full=float(full[:, W:].mean()),
                             identical_before_window=bool(np.array_equal(cost[:, :W], full[:, :W]))))
    by = {(r["window"], r["n_sink"]): r for r in runs}
    for r in runs:  # what keeping the sinks wins back beside the same window (> 0: a lower loss)
        if r["n_sink"]:
            plain = by[(r["window"], 0)]
            r["sink_gain"] = plain["extra"] - r["extra"]
            # the same, bin by bin as the figure draws it: dashed minus solid, in bins of BIN positions
            gap = np.asarray(r["extra_by_position"]) - np.asarray(plain["extra_by_position"])  # (T,)
            gap = gap.reshape(T // BIN, BIN).mean(axis=1)  # (T,) -> (T/BIN, BIN) -> (T/BIN,)
            r["bin_gap_max"] = float(np.abs(gap).max())
            r["bins_lower"], r["bins_higher"] = int((gap < 0).sum()), int((gap > 0).sum())
    # where the heads put their weight: on the first character, queries at FAR .. T-1
    first = np.stack([a[..., FAR:, 0] for a in attention], axis=1)  # L x (N, H, T-FAR) -> (N, L, H, T-FAR)
    first4 = np.stack([a[..., FAR:, :4].sum(axis=-1) for a in attention], axis=1)  # (N, L, H, T-FAR)
    even = 1.0 / (positions[FAR:] + 1)  # (T-FAR,): an even spread over the p + 1 visible keys
    on_first = first.mean(axis=(0, 3))  # (L, H)
    # how much of that weight a window of W would keep: keys p - W < j <= p, queries at FAR .. T-1
    kept = []
    for W in WIDTHS:
        inside = mhalib.sliding_window_mask(T, W)[FAR:]  # (T-FAR, T)
        share = np.stack([(a[..., FAR:, :] * inside).sum(axis=-1).mean(axis=(0, 2)) for a in attention])  # (L, H)
        kept.append(dict(window=W, mean=float(share.mean()), min=float(share.min())))
    gains = [r["sink_gain"] for r in runs if r["n_sink"]]
    return dict(
        T=T, last=T - 1, stretches=stretches, characters=int(inputs.size), widths=list(WIDTHS), sinks=list(SINKS),
        far=FAR, bin=BIN, full_by_position=full.mean(axis=0).tolist(), full=float(full.mean()),
        runs=runs, n_layers=config.n_layers, n_heads=config.n_heads, heads_total=config.n_layers * config.n_heads,
        on_first=on_first.tolist(), on_first_max=float(on_first.max()),
        on_first_max_stretch=float(first.mean(axis=3).max()),  # the largest in any one stretch and head
        on_first4_max=float(first4.mean(axis=(0, 3)).max()),
        even_first=float(even.mean()), even_first4=float((4 * even).mean()),  # 4 of p + 1 >= 65 keys
        sink_gain_max=float(max(abs(g) for g in gains)), kept=kept,
        sink_bin_gap_max=max(r["bin_gap_max"] for r in runs if r["n_sink"]),
        w8=by[(8, 0)], w16=by[(16, 0)], w32=by[(32, 0)], w64=by[(64, 0)],
    )


def draw(data: dict):
    if style.narrow():
        fig, (a, b) = style.new_figure(4.6, 7.6, nrows=2, height_ratios=[1.25, 1])
    else:
        fig, (a, b) = style.new_figure(7.0, 3.7, ncols=2, width_ratios=[1.35, 1])
    line, col = style.palette(), style.colors()
    T, n = data["T"], data["bin"]
    centers = np.arange(T // n) * n + (n - 1) / 2  # the middle position of each bin
    sinks = max(data["sinks"])
    for k, W in enumerate(data["widths"]):
        for r in data["runs"]:
            if r["window"] == W and r["n_sink"] in (0, sinks):
                binned = np.asarray(r["extra_by_position"]).reshape(T // n, n).mean(axis=1)  # (T,) -> (T/n,)
                a.plot(centers, binned, "--" if r["n_sink"] else "-", color=line[k], lw=1.5 if r["n_sink"] else 2)
    a.axhline(0, color=col["muted"], lw=1)
    a.set(xlabel="position of the character", ylabel="extra nats per character", xlim=(0, T),
          title="window − full cache")
    a.set_xticks(np.arange(0, T + 1, 32))
    a.grid(alpha=0.4)
    handles = [Line2D([], [], color=line[k], lw=2, label=f"window {W}") for k, W in enumerate(data["widths"])]
    handles += [Line2D([], [], color=col["muted"], lw=2, label="window only"),
                Line2D([], [], color=col["muted"], lw=1.5, ls="--", label=f"+ first {sinks} kept")]
    a.legend(handles=handles, fontsize=10, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.2),
             handlelength=1.6, columnspacing=0.9, frameon=False)
    # right: weight on the first character, one dot per head, layer by layer
    on_first = np.asarray(data["on_first"])  # (L, H)
    L, H = on_first.shape
    for l in range(L):
        x = l * (H + 1) + np.arange(H)
        b.plot(x, 100 * on_first[l], "o", color=line[0], ms=6)
    b.axhline(100 * data["even_first"], color=line[1], ls="--", lw=1.5)
    b.text(L * (H + 1) - 1.5, 100 * data["even_first"] * 1.25, "even spread", ha="right", va="bottom", fontsize=11,
           color=style.ink(line[1]))
    b.set_yscale("log")
    b.set_xticks([l * (H + 1) + (H - 1) / 2 for l in range(L)], labels=[str(l + 1) for l in range(L)])
    b.tick_params(axis="x", length=0)
    b.set(xlabel=f"layer ({style.counted(H, 'head')} each)", ylabel="% of weight on the first character", ylim=(None, 100 * data["even_first"] * 3),
          title=f"queries at {data['far']}–{T - 1}, each dot a head")
    b.yaxis.set_major_formatter(lambda v, _pos: style.exact(v))
    b.grid(alpha=0.4, axis="y")
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
