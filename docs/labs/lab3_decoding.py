# %% [markdown]
# # Lab 3: decoding with a KV cache, and attention in tiles
#
# In this lab you generate with a cache one token at a time and check every step against
# the full causal pass (the page *Generating text: the KV cache*), pick the next token by
# greedy decoding and by sampling (*Sampling: from logits to text*), then compute attention
# one block of keys at a time and check it against the exact softmax (the page
# *FlashAttention: exact attention in tiles*).
#
# To run it on your own machine you need `mhalib` and Jupyter; the site's page *Get the
# code* has the wheel and the exact install line.

# %%
import numpy as np

import mhalib
from mhalib.exercises import check

rng = np.random.default_rng(0)
T, D, H, H_kv = 6, 16, 4, 2  # tokens, model width d_model, query heads, key/value heads (GQA)
d = D // H  # head width d_head
x = rng.normal(size=(1, T, D))  # (B, T, D): one sequence of six token vectors
w_q, w_o = (rng.normal(scale=D**-0.5, size=(D, D)) for _ in range(2))
w_k, w_v = (rng.normal(scale=D**-0.5, size=(D, H_kv * d)) for _ in range(2))  # fewer K/V columns

# %% [markdown]
# ## The full pass
# All six tokens at once, causal, with RoPE: what training computes.

# %%
full, _ = mhalib.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=H, n_kv_heads=H_kv, causal=True,
                                      rope_base=mhalib.DEFAULT_BASE)
print(full.shape)  # (B, T, D)

# %% [markdown]
# ## One token at a time
# An empty cache, then one `decode_step` per token. Each step appends the token's key and
# value to the cache and attends its query to everything cached so far. RoPE rotates the
# new token by its position, which is the cache's length before the step.

# %%
cache = mhalib.KVCache(1, batch=1, n_kv_heads=H_kv, d_head=d)
steps = []
for t in range(T):
    out, weights = mhalib.decode_step(x[:, t], cache, w_q, w_k, w_v, w_o, n_heads=H, n_kv_heads=H_kv,
                                      rope_base=mhalib.DEFAULT_BASE)
    steps.append(out[:, 0])  # (B, D)
    print(f"step {t}: cache holds {cache.length()} tokens, weights {weights.shape}")
stepwise = np.stack(steps, axis=1)  # T x (B, D) -> (B, T, D)
print("largest difference from the full pass:", float(np.abs(stepwise - full).max()))

# %% [markdown]
# The cache holds $2 \times H_{\text{kv}} \times d_{\text{head}}$ numbers per token: with two K/V heads
# instead of four, half of what multi-head attention would cache.

# %%
print("cached numbers per token:", cache.nbytes // 8 // cache.length(), "= 2 * H_kv * d =", 2 * H_kv * d)

# %% [markdown]
# ## A prompt in one pass
# Real models process the prompt in one pass and then decode. The prompt's queries are the
# first positions and the cache is empty, so nothing changes; but when several *new*
# tokens are processed together after a prompt, the causal mask must be aligned
# bottom-right.

# %%
print(mhalib.causal_mask(2, 6, align="bottom_right").astype(int))  # the last two of six positions
print(mhalib.causal_mask(2, 6).astype(int))  # top-left: wrong for new tokens after a prompt

# %%
cache = mhalib.KVCache(1, batch=1, n_kv_heads=H_kv, d_head=d)
prompt, _ = mhalib.decode_step(x[:, :4], cache, w_q, w_k, w_v, w_o, n_heads=H, n_kv_heads=H_kv,
                               rope_base=mhalib.DEFAULT_BASE)  # four tokens at once
rest, _ = mhalib.decode_step(x[:, 4:], cache, w_q, w_k, w_v, w_o, n_heads=H, n_kv_heads=H_kv,
                             rope_base=mhalib.DEFAULT_BASE)  # the last two together
both = np.concatenate([prompt, rest], axis=1)  # (B, 4, D) + (B, 2, D) -> (B, T, D)
print("prompt + chunk vs full pass:", float(np.abs(both - full).max()))

# %% [markdown]
# ## Picking the next token
# A decoder's last layer gives one logit per vocabulary entry; the decoding rule picks the
# token. Greedy takes the largest; sampling draws from the softmax, after temperature and
# top-k or top-p (the page *Sampling: from logits to text* runs them on a real model). Four
# tokens with probabilities 0.5, 0.25, 0.15 and 0.1: top-p = 0.7 keeps the first two, and
# sampling then draws them in the ratio 2 : 1.

# %%
logits = np.log([0.5, 0.25, 0.15, 0.1])  # (V,) with V = 4
print("greedy:", mhalib.greedy(logits))
print("top-p 0.7 keeps:", mhalib.filter_logits(logits, top_p=0.7))  # -inf: removed
sampler = np.random.default_rng(1)  # its own generator: the cells below keep their numbers
draws = [mhalib.sample_next(logits, sampler, top_p=0.7) for _ in range(3000)]
print("share of each token in 3000 draws:", np.round(np.bincount(draws, minlength=4) / 3000, 3))
print("temperature 0.5 sharpens:", np.round(mhalib.softmax(mhalib.filter_logits(logits, temperature=0.5)), 3))

# %% [markdown]
# ## Attention in tiles
# `tiled_attention` never holds more than `block_q x block_k` scores. With `trace=True`
# it returns the running maximum, running sum and output after each key block.

# %%
q, k, v = rng.normal(size=(3, 64, 8))  # 64 queries and keys of width 8
exact, _ = mhalib.scaled_dot_product_attention(q, k, v)
tiled, trace = mhalib.tiled_attention(q, k, v, block_q=16, block_k=16, trace=True)
print("tiled vs exact:", float(np.abs(tiled - exact).max()))
print("running max of query 0 after each key block:", np.round([m[0] for m in trace["m"]], 3))
print("largest array allocated:", trace["largest_array_elements"], "elements; the score matrix has", 64 * 64)

# %% [markdown]
# ## Exercises
#
# Each exercise is a function with `...` where your code goes, followed by a check. Run
# the cell: the check prints `not yet:` and what is still missing, or `right:`. On this
# page the cells run unfinished, so you see the `not yet:` messages; the solution
# follows each exercise, folded: open it after you have tried.
#
# ### Exercise 1: the size of the cache
# Every layer caches, for every token, one key and one value vector of $d_{\text{head}}$
# numbers per key/value head. Write the bytes per token for $L$ layers and $H_{\text{kv}}$
# key/value heads, each number taking `n_bytes` bytes. The check measures this lab's
# cache (one layer, float64: 8 bytes a number), then compares three published model
# shapes in fp16 with `mhalib.kv_cache_bytes_per_token`. Which of the three caches least
# per token, and why?

# %%
def cache_bytes_per_token(n_layers, n_kv_heads, d_head, n_bytes):
    # TODO: a formula in the four arguments
    return ...


measured = cache.nbytes // cache.length()  # per token
got = cache_bytes_per_token(1, H_kv, d, 8)
check(got, measured, "this lab's cache")
for model, L, H_kv_, d_ in [("LLaMA-2 7B (MHA)", 32, 32, 128),
                            ("Mistral 7B (GQA)", 32, 8, 128),
                            ("LLaMA-2 70B (GQA)", 80, 8, 128)]:
    want = mhalib.kv_cache_bytes_per_token(L, H_kv_, d_)  # fp16
    check(cache_bytes_per_token(L, H_kv_, d_, 2), want, model)

# %% [markdown] tags=["solution"] jupyter={"source_hidden": true}
# Keys and values (the factor 2), for every layer, every key/value head and every one of
# its $d_{\text{head}}$ numbers: $2 \cdot L \cdot H_{\text{kv}} \cdot d_{\text{head}}$ numbers
# per token. Mistral 7B caches a quarter of what LLaMA-2 7B does with the same layers and
# head width, because its 32 query heads share 8 key/value heads; the number of query
# heads does not enter the formula at all.

# %% tags=["solution"] jupyter={"source_hidden": true}
def cache_bytes_per_token(n_layers, n_kv_heads, d_head, n_bytes):
    # K and V, in every layer, for every K/V head, d_head numbers
    return 2 * n_layers * n_kv_heads * d_head * n_bytes


measured = cache.nbytes // cache.length()  # per token
got = cache_bytes_per_token(1, H_kv, d, 8)
check(got, measured, "this lab's cache")
for model, L, H_kv_, d_ in [("LLaMA-2 7B (MHA)", 32, 32, 128),
                            ("Mistral 7B (GQA)", 32, 8, 128),
                            ("LLaMA-2 70B (GQA)", 80, 8, 128)]:
    want = mhalib.kv_cache_bytes_per_token(L, H_kv_, d_)  # fp16
    check(cache_bytes_per_token(L, H_kv_, d_, 2), want, model)

# %% [markdown]
# ### Exercise 2: the mask for new tokens after a prompt
# When the last `n_new` of `n_total` positions are processed together, new token $i$
# sits at position $n_{\text{total}} - n_{\text{new}} + i$ and may attend to every key up
# to and including that position. Build the boolean mask of shape
# `(n_new, n_total)` (True means "may attend"), without a loop.

# %%
def chunk_mask(n_new, n_total):
    """(n_new, n_total) mask: the last n_new of n_total positions."""
    # TODO: compare key positions (a row) with query positions
    # (a column); broadcasting does the rest
    return ...


for n_new, n_total in [(2, 6), (1, 5), (4, 4), (3, 8)]:
    want = mhalib.causal_mask(n_new, n_total, align="bottom_right")
    got = chunk_mask(n_new, n_total)
    check(got, want, f"chunk_mask({n_new}, {n_total})")

# %% tags=["solution"] jupyter={"source_hidden": true}
def chunk_mask(n_new, n_total):
    """(n_new, n_total) mask: the last n_new of n_total positions."""
    # (n_new, 1): the positions of the new tokens
    query_pos = np.arange(n_new)[:, None] + (n_total - n_new)
    key_pos = np.arange(n_total)[None, :]  # (1, n_total)
    return key_pos <= query_pos  # (n_new, n_total)


for n_new, n_total in [(2, 6), (1, 5), (4, 4), (3, 8)]:
    want = mhalib.causal_mask(n_new, n_total, align="bottom_right")
    got = chunk_mask(n_new, n_total)
    check(got, want, f"chunk_mask({n_new}, {n_total})")

# %% [markdown]
# ### Exercise 3: one step of the online softmax
# Tiled attention sees the keys one block at a time and keeps, for each query, three
# things: the largest score so far $m$, the sum $\ell$ of $e^{s - m}$ over the scores so
# far, and the output so far $o$, not yet divided by $\ell$. When a block with scores
# $s_j$ and values $v_j$ arrives, the maximum may grow to $m'$, and everything kept so
# far was computed relative to the old $m$: it must be multiplied by $e^{m - m'}$ before
# the block's own terms $e^{s_j - m'}$ (and $e^{s_j - m'} v_j$) are added. Write that
# step; `attend_in_blocks` runs it over the 64 keys of the tiled section, 16 at a time,
# and returns $o / \ell$, which must equal exact attention.

# %%
def attend_in_blocks(step, q_row, k, v, block=16):
    """Run `step` over the keys one block at a time (one query)."""
    m, l, o = -np.inf, 0.0, np.zeros(v.shape[-1])  # nothing seen yet
    for start in range(0, len(k), block):
        k_j, v_j = k[start:start + block], v[start:start + block]
        scores = k_j @ q_row / np.sqrt(q_row.size)  # (block,)
        m, l, o = step(m, l, o, scores, v_j)
        if any(part is ... for part in (m, l, o)):
            return ...  # the step is not written yet
    return o / l


def online_step(m, l, o, scores, v_block):
    """m, l numbers, o (d,); a block's scores (b,), values (b, d)."""
    # TODO: the larger of m and the block's largest score
    m_new = ...
    # TODO: the old sum times exp(m - m_new),
    # plus the sum of exp(scores - m_new)
    l_new = ...
    # TODO: the old output rescaled alike,
    # plus the block's values weighted by exp(scores - m_new)
    o_new = ...
    return m_new, l_new, o_new


for i in (0, 17, 63):
    got = attend_in_blocks(online_step, q[i], k, v)
    check(got, exact[i], f"query {i}, keys in blocks of 16")

# %% [markdown] tags=["solution"] jupyter={"source_hidden": true}
# On the first block $m = -\infty$, so the rescaling factor $e^{m - m'}$ is 0 and only the
# block's own terms remain. When a later block holds no score above the current maximum,
# $m' = m$ and the factor is 1: nothing is rescaled.

# %% tags=["solution"] jupyter={"source_hidden": true}
def online_step(m, l, o, scores, v_block):
    """m, l numbers, o (d,); a block's scores (b,), values (b, d)."""
    m_new = max(m, scores.max())
    # 0 on the first block (m = -inf), 1 when the maximum did not grow
    rescale = np.exp(m - m_new)
    p = np.exp(scores - m_new)  # (b,): this block's terms
    l_new = l * rescale + p.sum()
    o_new = o * rescale + p @ v_block  # (b,) @ (b, d) -> (d,)
    return m_new, l_new, o_new


for i in (0, 17, 63):
    got = attend_in_blocks(online_step, q[i], k, v)
    check(got, exact[i], f"query {i}, keys in blocks of 16")
