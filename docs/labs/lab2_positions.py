# %% [markdown]
# # Lab 2: sinusoidal encodings and RoPE
#
# The position pages state three properties: shifting a sinusoidal encoding by $k$
# positions is a rotation that does not depend on the position, dot products of two
# encodings depend on their distance only, and RoPE scores depend on the signed offset
# between query and key. In this lab you check each one numerically with `mhalib`, then
# build the sinusoidal table, its shift and RoPE's rotation yourself in the exercises at
# the end.
#
# To run it on your own machine you need `mhalib` and Jupyter; the site's page *Get the
# code* has the wheel and the exact install line.

# %%
import numpy as np

import mhalib
from mhalib.exercises import check

D = 64  # model width d_model
pe = mhalib.sinusoidal_encoding(300, D)  # (positions, D)
print("table shape:", pe.shape, " range:", pe.min(), "to", pe.max())  # every digit: the smallest is not -1

# %% [markdown]
# ## A shift is a rotation
# `offset_matrix(k, D)` is the block rotation $M_k$ with
# $\mathrm{PE}(p+k) = \mathrm{PE}(p)\,M_k^\top$ for every position $p$. Try other shifts
# `k`: the error stays at rounding level, for every position at once.

# %%
k = 7
M = mhalib.offset_matrix(k, D)
error = np.abs(pe[:200] @ M.T - pe[k:200 + k]).max()
print(f"largest error for k = {k}: {error:.2e}")

# %% [markdown]
# ## Dot products depend on distance only
# Pairs at the same distance have the same dot product, whatever their positions.

# %%
for p, p2 in [(0, 10), (50, 60), (200, 210), (60, 50)]:
    print(f"PE({p:3d}) . PE({p2:3d}) = {pe[p] @ pe[p2]:.10f}")

# %% [markdown]
# ## RoPE: the signed offset
# Rotate a query at position $m$ and a key at position $n$; compare with rotating only
# the key, by $n - m$. Then swap the positions: the score changes, because the offset's
# sign did.

# %%
rng = np.random.default_rng(0)
q, k_vec = rng.normal(size=8), rng.normal(size=8)  # one query and one key of head width d_head = 8


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

# %% [markdown]
# ## Exercises
#
# Each exercise is a function with `...` where your code goes, followed by a check. Run
# the cell: the check prints `not yet:` and what is still missing, or `right:`. On this
# page the cells run unfinished, so you see the `not yet:` messages; the solution
# follows each exercise, folded: open it after you have tried.
#
# ### Exercise 1: one row of the table
# Position $p$ gets $\mathrm{PE}(p)_{2i} = \sin(p\,\omega_i)$ and
# $\mathrm{PE}(p)_{2i+1} = \cos(p\,\omega_i)$, with angular frequencies
# $\omega_i = 10000^{-2i/d_{\text{model}}}$ for $i = 0, 1, \dots, d_{\text{model}}/2 - 1$.
# Write the row for one position; the check compares four rows of `pe`.

# %%
def pe_row(p, D, base=10_000.0):
    """Row p of the sinusoidal table, shape (D,)."""
    # TODO: the D/2 angular frequencies omega_i = base ** (-2i / D);
    # sin(p * omega_i) goes to dimension 2i, cos(p * omega_i) to 2i+1
    return ...


for p in (0, 1, 7, 299):
    check(pe_row(p, D), pe[p], f"pe_row({p}, D)")

# %% tags=["solution"] jupyter={"source_hidden": true}
def pe_row(p, D, base=10_000.0):
    """Row p of the sinusoidal table, shape (D,)."""
    omega = base ** (-np.arange(0, D, 2) / D)  # (D/2,)
    row = np.empty(D)
    row[0::2] = np.sin(p * omega)  # even dimensions
    row[1::2] = np.cos(p * omega)  # odd dimensions
    return row


for p in (0, 1, 7, 299):
    check(pe_row(p, D), pe[p], f"pe_row({p}, D)")

# %% [markdown]
# ### Exercise 2: the rotation that shifts a pair
# Pair $i$ of $\mathrm{PE}(p)$ is the row $(\sin p\omega_i,\ \cos p\omega_i)$. Expand
# $\sin(a + b)$ and $\cos(a + b)$ to find the $2 \times 2$ block $B$ with
# $(\sin (p+k)\omega_i,\ \cos (p+k)\omega_i) = (\sin p\omega_i,\ \cos p\omega_i)\,B^\top$.
# Write it as a function of $k$ and $\omega_i$; the check compares it with the blocks on
# the diagonal of `offset_matrix(k, D)`. Notice what $B$ does not depend on.

# %%
def shift_block(k, omega):
    """Block of M_k for the pair with angular frequency omega."""
    # TODO: a 2x2 array built from cos(k * omega) and sin(k * omega)
    return ...


omega = mhalib.sinusoidal_frequencies(D)  # (D/2,)
for i in (0, 1, D // 2 - 1):
    want = M[2 * i:2 * i + 2, 2 * i:2 * i + 2]  # block i of M_k
    got = shift_block(k, omega[i])
    check(got, want, f"shift_block(k, omega[{i}])")

# %% [markdown] tags=["solution"] jupyter={"source_hidden": true}
# $\sin(p\omega + k\omega) = \sin p\omega \cos k\omega + \cos p\omega \sin k\omega$ and
# $\cos(p\omega + k\omega) = \cos p\omega \cos k\omega - \sin p\omega \sin k\omega$.
# Reading the coefficients off as rows gives $B$. It holds $k$ and $\omega_i$ but no
# $p$: one matrix shifts every position by $k$. That is why the original paper expected
# the encoding to make relative positions easy to learn.

# %% tags=["solution"] jupyter={"source_hidden": true}
def shift_block(k, omega):
    """Block of M_k for the pair with angular frequency omega."""
    c, s = np.cos(k * omega), np.sin(k * omega)
    return np.array([[c, s],  # new sine   = sin * c + cos * s
                     [-s, c]])  # new cosine = -sin * s + cos * c


for i in (0, 1, D // 2 - 1):
    want = M[2 * i:2 * i + 2, 2 * i:2 * i + 2]  # block i of M_k
    got = shift_block(k, omega[i])
    check(got, want, f"shift_block(k, omega[{i}])")

# %% [markdown]
# ### Exercise 3: RoPE by hand
# RoPE cuts a query or key of head width $d_{\text{head}}$ into the planes
# $(x_{2i}, x_{2i+1})$ and turns plane $i$ counter-clockwise by the angle $m\,\omega_i$,
# with $\omega_i = 10000^{-2i/d_{\text{head}}}$ (the sinusoidal table's frequencies, for
# the head width), for a token at position $m$. A plane
# $(a, b)$ turned by $\alpha$ becomes $(a\cos\alpha - b\sin\alpha,\ a\sin\alpha + b\cos\alpha)$.
# Write it for one vector; the check compares it with `mhalib.apply_rope`.

# %%
def rope_by_hand(x, m, base=10_000.0):
    """x (d,) with even d, rotated to position m."""
    # TODO: the d/2 frequencies omega_i, then turn each plane
    # (x[2i], x[2i+1]) by the angle m * omega_i
    return ...


for m in (0, 1, 5, 100):
    want = mhalib.apply_rope(q[None], np.array([m]))[0]  # (d,)
    check(rope_by_hand(q, m), want, f"rope_by_hand(q, {m})")

# %% tags=["solution"] jupyter={"source_hidden": true}
def rope_by_hand(x, m, base=10_000.0):
    """x (d,) with even d, rotated to position m."""
    d = x.size
    omega = base ** (-np.arange(0, d, 2) / d)  # (d/2,)
    c, s = np.cos(m * omega), np.sin(m * omega)
    a, b = x[0::2], x[1::2]  # the planes (x[2i], x[2i+1])
    out = np.empty(d)
    out[0::2] = a * c - b * s
    out[1::2] = a * s + b * c
    return out


for m in (0, 1, 5, 100):
    want = mhalib.apply_rope(q[None], np.array([m]))[0]  # (d,)
    check(rope_by_hand(q, m), want, f"rope_by_hand(q, {m})")
