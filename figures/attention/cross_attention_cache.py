"""The KV cache of one decoder layer of an encoder-decoder: the self-attention cache grows, the cross-attention cache does not.

Bytes per decoder layer against the decoding step t, for the base Transformer's attention
(8 heads of d_head = 64; Vaswani et al. 2017, Table 3) in fp16 and a source of 32 tokens:
the self-attention cache holds the keys and values of the t target tokens so far
(mhalib.kv_cache_bytes with t tokens), the cross-attention cache those of the S source
tokens, computed from the encoder's output once, before the first step (S tokens, at every
step). The data also decode the worked example of mhalib.examples.translation_pair one
token at a time, with a mhalib.KVCache for each attention, and compare the outputs with
the full pass of mhalib.examples.encoder_decoder_attention. Page: cross-attention.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range


def cached_decode(ex: dict) -> dict:
    """Decode ``ex`` (a ``translation_pair``) one target token at a time, as a translation
    model generates: the encoder and the cross-attention's keys and values run once, before
    the first step; each step appends one token to the self-attention cache and reads the
    cross-attention cache as it is. Returns the outputs ``(1, T, D)`` and each cache's
    length after every step."""
    H = ex["n_heads"]
    x_src, x_tgt = ex["X_src"], ex["X_tgt"]
    S, T, D = x_src.shape[1], x_tgt.shape[1], x_tgt.shape[2]
    d = D // H
    pad = mhalib.padding_mask(ex["src_lengths"], S)  # (1, 1, 1, S)
    memory, _ = mhalib.multi_head_attention(x_src, *ex["enc"], n_heads=H, mask=pad)  # (1, S, D)
    w_q, w_k, w_v, w_o = ex["cross"]
    cross = mhalib.KVCache(n_kv_heads=H, d_head=d)
    cross.append(0, mhalib.split_heads(memory @ w_k, H),  # (1, S, D) -> (1, H, S, d)
                 mhalib.split_heads(memory @ w_v, H))  # once per source
    own = mhalib.KVCache(n_kv_heads=H, d_head=d)
    outs, own_lengths, cross_lengths = [], [], []
    for t in range(T):
        x_t = x_tgt[:, t:t + 1]  # (1, 1, D): the newest target token
        self_out, _ = mhalib.decode_step(x_t, own, *ex["dec"], n_heads=H)  # appends 1 token
        h_t = x_t + self_out  # (1, 1, D)
        q = mhalib.split_heads(h_t @ w_q, H)  # (1, 1, D) -> (1, H, 1, d)
        o, _ = mhalib.scaled_dot_product_attention(q, cross.keys(), cross.values(), pad)  # (1, H, 1, d)
        outs.append(mhalib.combine_heads(o) @ w_o)  # (1, H, 1, d) -> (1, 1, D)
        own_lengths.append(own.length())
        cross_lengths.append(cross.length())
    return dict(out=np.concatenate(outs, axis=1), self_lengths=own_lengths, cross_lengths=cross_lengths)


def data(source_len: Annotated[int, Range(1, 100_000)] = 32, max_steps: Annotated[int, Range(1, 100_000)] = 48,
         n_heads: Annotated[int, Range(1, 1024)] = 8, d_head: Annotated[int, Range(1, 1024)] = 64,
         n_layers: Annotated[int, Range(1, 1000)] = 6, seed: Annotated[int, Range(0, None)] = 0) -> dict:
    S = source_len
    steps = list(range(1, max_steps + 1))
    per_token = mhalib.kv_cache_bytes(1, n_heads, d_head, 1, dtype="float16")  # K and V, one layer
    own = [mhalib.kv_cache_bytes(1, n_heads, d_head, t, dtype="float16") for t in steps]
    cross = [mhalib.kv_cache_bytes(1, n_heads, d_head, S, dtype="float16") for _ in steps]
    # the worked example, decoded with both caches, against the full pass
    ex = examples.translation_pair(seed)
    full = examples.encoder_decoder_attention(ex)["out"]
    dec = cached_decode(ex)
    cross_total = mhalib.kv_cache_bytes(n_layers, n_heads, d_head, S, dtype="float16")  # every decoder layer
    decoder_total = mhalib.kv_cache_bytes(n_layers, n_heads, d_head, S + max_steps, dtype="float16")
    kib = 1024
    return dict(source_len=S, max_steps=max_steps, n_heads=n_heads, d_head=d_head, d_model=n_heads * d_head,
                n_layers=n_layers, steps=steps, self_bytes=own, cross_bytes=cross, per_token=per_token,
                cross_per_layer=cross[0], self_at_max=own[-1], total_at_max=own[-1] + cross[-1],
                decoder_only_at_max=mhalib.kv_cache_bytes(1, n_heads, d_head, S + max_steps, dtype="float16"),
                cross_total=cross_total, decoder_total_at_max=decoder_total,
                kib=dict(per_token=per_token / kib, cross_per_layer=cross[0] / kib, self_at_max=own[-1] / kib,
                         total_at_max=(own[-1] + cross[-1]) / kib, cross_total=cross_total / kib,
                         decoder_total_at_max=decoder_total / kib),
                # the self-attention cache equals the cross-attention cache at step S, and is larger after it
                equal_at_step=S, self_larger_from=S + 1, kv_rows_once=S, kv_rows_every_step=S * max_steps,
                example=dict(T=len(ex["target"]), S=len(ex["source"]),
                             self_lengths=", ".join(map(str, dec["self_lengths"])),
                             cross_lengths=", ".join(map(str, dec["cross_lengths"])),
                             max_difference=float(np.abs(dec["out"] - full).max())))


def draw(data: dict):
    fig, ax = style.new_figure(5.6, 3.3)
    line = style.palette()
    steps = np.asarray(data["steps"])
    top_bytes = max(data["self_bytes"][-1], data["cross_bytes"][-1])
    size, unit = style.binary_unit(top_bytes)  # KiB for the base model; bytes for a cache of a few
    own, cross = np.asarray(data["self_bytes"]) / size, np.asarray(data["cross_bytes"]) / size
    few = len(steps) <= 20  # a step or a few: each a visible point, the cross cache's larger
    ax.plot(steps, cross, "-", color=line[1], lw=2, label=f"cross-attention: the "  # (under the other)
            f"{style.counted(data['source_len'], 'source token')},\ncomputed once, before step 1",
            **(dict(marker="o", ms=8) if few else {}))
    ax.plot(steps, own, "-", color=line[0], lw=2, label="self-attention: one more token per step",
            **(dict(marker="o", ms=4) if few else {}))
    # the labels in a legend above the lines (drawn to 1.45 x the largest): direct labels at
    # the lines' ends ran out of the frame and over each other where the lines meet there
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], loc="upper left", fontsize=11, frameon=False, handlelength=1.6)
    ax.set(xlabel="decoding step t (target tokens so far)", ylabel=f"KV cache per layer ({unit})",
           xlim=(0, steps[-1] + (0.5 if few else 0)), ylim=(0, 1.45 * top_bytes / size))
    style.whole_ticks(ax, "x")  # a step is a whole token: no tick at step 0.25
    if unit == "bytes":
        style.whole_ticks(ax, "y")  # nor a quarter of a byte
    ax.grid(alpha=0.4)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
