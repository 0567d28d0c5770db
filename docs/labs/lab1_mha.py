# %% [markdown]
# # Lab 1: multi-head attention from the pieces
#
# Multi-head attention is single-head attention run $H$ times side by side on narrow
# slices of the same vectors, with a projection before and after. In this lab you assemble
# it from `mhalib`'s pieces (project, split into heads, attend, combine, project again),
# check the result against PyTorch's `nn.MultiheadAttention` loaded with the same weights,
# and then write three of the pieces yourself in the exercises at the end.
#
# To run it on your own machine you need `mhalib` and Jupyter; the site's page *Get the
# code* has the wheel and the exact install line.

# %%
import numpy as np

import mhalib
from mhalib.exercises import check

rng = np.random.default_rng(0)
T, D, H = 5, 8, 2  # tokens, model width d_model, heads
d = D // H  # head width d_head
x = rng.normal(size=(T, D))  # one sequence of five token vectors
w_q, w_k, w_v, w_o = (rng.normal(scale=D**-0.5, size=(D, D)) for _ in range(4))

# %% [markdown]
# ## Step by step
# Project the tokens to queries, keys and values, then split the model width
# $d_{\text{model}}$ into $H$ heads of $d_{\text{head}} = d_{\text{model}} / H$ columns each
# (in code: `D`, `H` and `d`).

# %%
q, k, v = x @ w_q, x @ w_k, x @ w_v  # (T, D) each
q_h = mhalib.split_heads(q, H)  # (T, D) -> (H, T, d)
k_h = mhalib.split_heads(k, H)
v_h = mhalib.split_heads(v, H)
heads, weights = mhalib.scaled_dot_product_attention(q_h, k_h, v_h)  # (H, T, d), (H, T, T)
out = mhalib.combine_heads(heads) @ w_o  # (H, T, d) -> (T, D) -> (T, D)
print("per-head weights:", weights.shape, " output:", out.shape)

# %% [markdown]
# ## The same in one call, and against PyTorch

# %%
from mhalib.torch_ref import torch_mha

ours, _ = mhalib.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=H)
theirs, _ = torch_mha(x[None], w_q, w_k, w_v, w_o, n_heads=H)
print("step by step vs one call:", np.abs(out - ours).max())
print("mhalib vs torch        :", np.abs(ours - theirs[0]).max())
assert np.allclose(ours, theirs[0], atol=1e-10)

# %% [markdown]
# ## Exercises
#
# Each exercise is a function with `...` where your code goes, followed by a check. Run
# the cell: the check prints `not yet:` and what is still missing, or `right:`. On this
# page the cells run unfinished, so you see the `not yet:` messages; the solution
# follows each exercise, folded: open it after you have tried.
#
# ### Exercise 1: split the heads yourself
# Head $h$ owns columns $h\,d_{\text{head}}$ to $(h+1)\,d_{\text{head}} - 1$ of the
# projected queries. Write `split_heads_by_hand(x, n_heads)`, which takes
# $(T, d_{\text{model}})$ to $(H, T, d_{\text{head}})$ with one `reshape` and one
# `transpose`, no loop. Before you run it: why is `x.reshape(n_heads, T, d)` wrong,
# although its shape is right?

# %%
def split_heads_by_hand(x, n_heads):
    T, D = x.shape
    d = D // n_heads
    # TODO: reshape to (T, H, d), then move the head axis to the front
    return ...


for name, projected in [("q", q), ("k", k), ("v", v)]:
    want = mhalib.split_heads(projected, H)  # (H, T, d)
    got = split_heads_by_hand(projected, H)
    check(got, want, f"split_heads_by_hand({name}, H)")

# %% [markdown] tags=["solution"] jupyter={"source_hidden": true}
# A row of `x` is one token, so the reshape must keep rows together: `(T, D)` to
# `(T, H, d)` cuts each token's row into $H$ pieces of $d_{\text{head}}$ numbers. Then
# `transpose(1, 0, 2)` puts the head axis first. `x.reshape(n_heads, T, d)` instead
# reads the numbers row after row and refills them, so its first "head" holds the whole
# first token and a part of the second: every head would mix tokens.

# %% tags=["solution"] jupyter={"source_hidden": true}
def split_heads_by_hand(x, n_heads):
    T, D = x.shape
    d = D // n_heads
    x = x.reshape(T, n_heads, d)  # (T, D) -> (T, H, d)
    return x.transpose(1, 0, 2)  # (T, H, d) -> (H, T, d)


for name, projected in [("q", q), ("k", k), ("v", v)]:
    want = mhalib.split_heads(projected, H)  # (H, T, d)
    got = split_heads_by_hand(projected, H)
    check(got, want, f"split_heads_by_hand({name}, H)")

# %% [markdown]
# ### Exercise 2: one head, by hand
# For one head with queries $Q$ $(T, d_{\text{head}})$, keys $K$ and values $V$
# $(S, d_{\text{head}})$, the weights are
# $\mathrm{softmax}\big(QK^\top / \sqrt{d_{\text{head}}}\big)$, row by row, and the output
# is the weights times $V$. Write it with numpy only; subtract each row's maximum before
# `np.exp` so that large scores cannot overflow. The check compares every head with
# `mhalib`.

# %%
def attention_by_hand(q, k, v):
    """q (T, d), k and v (S, d) -> output (T, d), weights (T, S)."""
    # TODO: every query against every key, divided by sqrt(d)
    scores = ...
    # TODO: softmax along each row (subtract the row's maximum first)
    weights = ...
    # TODO: each output row is a weighted average of the value rows
    output = ...
    return output, weights


for h in range(H):
    out_h, weights_h = attention_by_hand(q_h[h], k_h[h], v_h[h])
    check(weights_h, weights[h], f"the weights of head {h}")
    check(out_h, heads[h], f"the output of head {h}")

# %% tags=["solution"] jupyter={"source_hidden": true}
def attention_by_hand(q, k, v):
    """q (T, d), k and v (S, d) -> output (T, d), weights (T, S)."""
    scores = q @ k.T / np.sqrt(q.shape[-1])  # (T, S)
    # each row's largest entry becomes exp(0) = 1: no overflow
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)  # each row sums to 1
    output = weights @ v  # (T, S) @ (S, d) -> (T, d)
    return output, weights


for h in range(H):
    out_h, weights_h = attention_by_hand(q_h[h], k_h[h], v_h[h])
    check(weights_h, weights[h], f"the weights of head {h}")
    check(out_h, heads[h], f"the output of head {h}")

# %% [markdown]
# ### Exercise 3: count the parameters, then predict
# One layer learns $W_Q, W_K, W_V, W_O$, each $d_{\text{model}} \times d_{\text{model}}$,
# and a bias vector of $d_{\text{model}}$ numbers after each of the four projections.
# Write the number of parameters as a formula in `D` and `H`. Predict first: with
# $d_{\text{model}}$ fixed, do more heads mean more parameters?

# %%
def mha_parameters(D, H):
    # TODO: a formula in D (and in H, if the number of heads matters)
    return ...


for D_, H_ in [(8, 2), (512, 8), (512, 16), (768, 12)]:
    want = mhalib.mha_param_count(D_, H_)
    check(mha_parameters(D_, H_), want, f"mha_parameters({D_}, {H_})")

# %% [markdown] tags=["solution"] jupyter={"source_hidden": true}
# $H$ does not appear. Splitting into heads cuts the same four matrices into column
# blocks: more heads means narrower heads, not more weights. The count is
# $4\,d_{\text{model}}^2 + 4\,d_{\text{model}}$ for every $H$ that divides
# $d_{\text{model}}$.

# %% tags=["solution"] jupyter={"source_hidden": true}
def mha_parameters(D, H):
    # four D x D matrices, four biases of D numbers; no H
    return 4 * D * D + 4 * D


for D_, H_ in [(8, 2), (512, 8), (512, 16), (768, 12)]:
    want = mhalib.mha_param_count(D_, H_)
    check(mha_parameters(D_, H_), want, f"mha_parameters({D_}, {H_})")
