# %% [markdown]
# # Lab 1: multi-head attention from the pieces
#
# In this lab you assemble multi-head attention from `mhalib`'s pieces (project, split,
# attend, combine, project again) and check the result against PyTorch's
# `nn.MultiheadAttention` loaded with the same weights.
#
# Download this notebook with the link at the top of the page and run it next to an
# install of this project (`pip install -e ".[test]"`).

# %%
import numpy as np

import mhalib

rng = np.random.default_rng(0)
T, D, H = 5, 8, 2  # tokens, model width, heads
x = rng.normal(size=(T, D))
w_q, w_k, w_v, w_o = (rng.normal(scale=D**-0.5, size=(D, D)) for _ in range(4))

# %% [markdown]
# ## Step by step
# Project, then split the width \(d_{\text{model}}\) (`D` in the code) into \(H\) heads of \(d_{\text{head}} = d_{\text{model}}/H\) columns (`d`) each.

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
