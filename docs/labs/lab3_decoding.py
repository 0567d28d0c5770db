# %% [markdown]
# # Lab 3: decoding with a KV cache, and attention in tiles
#
# In this lab you generate with a cache one token at a time and check every step against
# the full causal pass (the page *Generating text: the KV cache*), then compute attention
# one block of keys at a time and check it against the exact softmax (the page
# *FlashAttention: exact attention in tiles*).
#
# Download this notebook with the link at the top of the page and run it next to an
# install of this project (`pip install -e ".[test]"`).

# %%
import numpy as np

import mhalib

rng = np.random.default_rng(0)
T, D, H, H_kv = 6, 16, 4, 2  # tokens, model width, query heads, key/value heads (GQA)
d = D // H
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
# The cache holds \(2 \times H_{\text{kv}} \times d_{\text{head}}\) numbers per token: with two K/V heads
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
# 1. Decode with `n_kv_heads=1` (multi-query attention): change `H_kv` in the first cell
#    and run everything again. Does the stepwise output still equal the full pass? How many
#    numbers per token does the cache hold now?
# 2. Replace `align="bottom_right"` by the default in your head: for the chunk of the last
#    two tokens, which keys would the first of them wrongly be denied?
# 3. Run `tiled_attention` with `block_k=1`: every key is its own block. Print the running
#    maximum of query 0 after each key. When does the output get rescaled?
#
# <details><summary>Answers (open after trying)</summary>
#
# 1. Yes, within rounding (about 1e-15); the cache holds 2 × 1 × 4 = 8 numbers per token.
# 2. With the top-left mask the first of the two, at position 4, would see key 0 only,
#    instead of keys 0 to 4.
# 3. Whenever a key's score exceeds every score before it: the running maximum grows and
#    everything accumulated so far is multiplied by \(e^{m - m'}\), a number below 1.
#
# </details>
