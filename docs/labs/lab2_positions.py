# %% [markdown]
# # Lab 2: sinusoidal encodings and RoPE
#
# In this lab you check, numerically, the properties the positional-encoding pages state:
# the shift-as-rotation identity of the sinusoidal encoding, distance-only dot products,
# and RoPE's dependence on the signed offset. Everything comes from `mhalib`.
#
# Download this notebook with the link at the top of the page and run it next to an
# install of this project (`pip install -e ".[test]"`).

# %%
import numpy as np

import mhalib

d = 64
pe = mhalib.sinusoidal_encoding(300, d)  # (positions, d)
print("table shape:", pe.shape, " range:", pe.min().round(3), "to", pe.max().round(3))

# %% [markdown]
# ## A shift is a rotation
# `offset_matrix(k, d_model)` is the block rotation \(M_k\) with \(\mathrm{PE}(p+k) = \mathrm{PE}(p)\,M_k^\top\).
# Try other shifts `k`: the error stays at rounding level, for every position at once.

# %%
k = 7
M = mhalib.offset_matrix(k, d)
error = np.abs(pe[:200] @ M.T - pe[k:200 + k]).max()
print(f"largest error for k = {k}: {error:.2e}")

# %% [markdown]
# ## Dot products depend on distance only
# Pairs at the same distance have the same dot product, whatever their positions.

# %%
for p, q in [(0, 10), (50, 60), (200, 210), (60, 50)]:
    print(f"PE({p:3d}) . PE({q:3d}) = {pe[p] @ pe[q]:.10f}")

# %% [markdown]
# ## RoPE: the signed offset
# Rotate a query at position m and a key at position n; compare with rotating only the
# key by n − m. Then swap the positions: the score changes, because the offset's sign did.

# %%
rng = np.random.default_rng(0)
q, k_vec = rng.normal(size=8), rng.normal(size=8)


def rope_score(m, n, layout_q="interleaved", layout_k="interleaved"):
    rq = mhalib.apply_rope(q[None], np.array([m]), layout=layout_q)[0]
    rk = mhalib.apply_rope(k_vec[None], np.array([n]), layout=layout_k)[0]
    return rq @ rk


for m, n in [(0, 5), (20, 25), (5, 0)]:
    shortcut = q @ mhalib.apply_rope(k_vec[None], np.array([n - m]))[0]
    print(f"m={m:2d} n={n:2d}  score={rope_score(m, n):+.6f}  q.R(n-m)k={shortcut:+.6f}")

# %% [markdown]
# ## Mixing layouts
# With queries in the interleaved layout and keys in the half-split one, equal offsets no
# longer give equal scores.

# %%
same = [rope_score(m, m + 3) for m in range(0, 40, 10)]
mixed = [rope_score(m, m + 3, "interleaved", "half") for m in range(0, 40, 10)]
print("matching layouts:", np.round(same, 6))
print("mixed layouts   :", np.round(mixed, 6))
assert np.ptp(same) < 1e-9 and np.ptp(mixed) > 1e-3
