"""A rolling KV cache: with a sliding window the cache stops growing at the window's length.

Bytes of the KV cache of Mistral 7B (32 layers, 8 KV heads of 128, window 4,096 tokens,
fp16; Jiang et al. 2023, Table 1) against the number of tokens so far: the full cache keeps
every token, the rolling cache only the last ``window`` (mhalib.kv_cache_bytes with
min(tokens, window) tokens). The data also decode a short random sequence with a ring buffer
of ``window`` slots (token t written to slot t mod window) and compare each step's output
with sliding-window attention over the whole sequence (mhalib.sliding_window_mask).
Page: long context.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range


def ring_buffer_decode(q: np.ndarray, k: np.ndarray, v: np.ndarray, window: int) -> np.ndarray:
    """Decode token by token, keeping only ``window`` keys and values: token t overwrites slot
    t mod window. Attention does not depend on the order of the keys, so the slots need no
    reordering (positions, e.g. RoPE, are applied before a key is stored)."""
    T, d = k.shape
    keys, values = np.zeros((window, d)), np.zeros((window, v.shape[1]))
    out = np.zeros((T, v.shape[1]))
    for t in range(T):
        keys[t % window], values[t % window] = k[t], v[t]
        n = min(t + 1, window)  # slots filled so far
        out[t] = mhalib.scaled_dot_product_attention(q[t:t + 1], keys[:n], values[:n])[0][0]
    return out


def data(max_tokens: Annotated[int, Range(2, 10_000_000)] = 32768, window: Annotated[int, Range(1, 1_000_000)] = 4096,
         n_layers: Annotated[int, Range(1, 1000)] = 32, kv_heads: Annotated[int, Range(1, 1024)] = 8,
         d_head: Annotated[int, Range(1, 1024)] = 128, seed: Annotated[int, Range(0, None)] = 0) -> dict:
    tokens = sorted(set(np.linspace(0, max_tokens, 65).astype(int).tolist()) | {min(window, max_tokens)})
    full = [mhalib.kv_cache_bytes(n_layers, kv_heads, d_head, n, dtype="float16") for n in tokens]
    rolling = [mhalib.kv_cache_bytes(n_layers, kv_heads, d_head, min(n, window), dtype="float16") for n in tokens]
    # the ring buffer gives sliding-window attention exactly
    rng = np.random.default_rng(seed)
    T, W, d = 40, 8, 16
    q, k, v = rng.normal(size=(T, d)), rng.normal(size=(T, d)), rng.normal(size=(T, d))
    exact, _ = mhalib.scaled_dot_product_attention(q, k, v, mhalib.sliding_window_mask(T, W))
    ring = ring_buffer_decode(q, k, v, W)
    return dict(tokens=tokens, full=full, rolling=rolling, window=window, n_layers=n_layers, kv_heads=kv_heads,
                d_head=d_head, per_token=mhalib.kv_cache_bytes_per_token(n_layers, kv_heads, d_head, dtype="float16"),
                rolling_max=max(rolling), full_max=full[-1], rolling_max_gib=max(rolling) / 2**30,
                full_max_gib=full[-1] / 2**30, max_tokens=max_tokens, ratio_at_max=full[-1] / rolling[-1],
                ring_check=dict(T=T, window=W, d_head=d, max_difference=float(np.abs(ring - exact).max())))


def draw(data: dict):
    fig, ax = style.new_figure(5.6, 3.3)
    line = style.palette()
    in_unit, memory = style.binary_unit(max(data["full"]))  # GiB at the page's lengths; KiB for two tokens
    full, rolling = np.asarray(data["full"]) / in_unit, np.asarray(data["rolling"]) / in_unit
    ax.plot(data["tokens"], full, "-", color=line[0], lw=2)
    ax.plot(data["tokens"], rolling, "-", color=line[1], lw=2)
    top = full[-1]
    ax.text(0.55 * data["max_tokens"], 0.55 * top + 0.06 * top, "full cache", rotation=0, ha="right", va="bottom",
            fontsize=11, color=style.ink(line[0]))
    last = f"rolling: last {style.counted(data['window'], 'token')}"
    if data["window"] < data["max_tokens"]:
        ax.axvline(data["window"], color=style.colors()["muted"], ls="--", lw=1)
        right = data["window"] > 0.8 * data["max_tokens"]  # near the right edge the label goes left of its line
        ax.text(data["window"], 0.97 * top, "window " if right else " window", va="top", ha="right" if right else "left",
                fontsize=11, color=style.colors()["muted"])
    else:  # the window is past the axis (it drew the line and its label millions of points to the right): one curve
        last += ": the full cache up to here"
    if rolling[-1] > 0.6 * top:  # above a line near the top it would leave the axes: top left, where no line is
        ax.text(0.03 * data["max_tokens"], 0.97 * top, last, ha="left", va="top", fontsize=11, color=style.ink(line[1]))
    else:
        ax.text(data["max_tokens"], rolling[-1] + 0.03 * top, last, ha="right", va="bottom", fontsize=11,
                color=style.ink(line[1]))
    ax.set(xlabel="tokens so far", ylabel=f"KV cache ({memory})", xlim=(0, data["max_tokens"]), ylim=(0, 1.04 * top))
    # ticks at 1, 2 or 5 times a power of ten, at most seven; "k" is a thousand tokens, "M" a
    # million (ticks at multiples of 1,024 labelled "2,048k" put 2,097,152 tokens where a reader
    # reads 2,048,000)
    step = next(m * 10**e for e in range(20) for m in (1, 2, 5) if m * 10**e * 6 >= data["max_tokens"])
    unit = next((u for u, size in (("M", 10**6), ("k", 10**3)) if step >= size), "")
    per = {"M": 10**6, "k": 10**3, "": 1}[unit]
    ax.set_xticks(np.arange(0, data["max_tokens"] + 1, step))
    ax.xaxis.set_major_formatter(lambda x, _pos: f"{int(round(x)) // per:,}{unit}" if x else "0")
    ax.grid(alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
