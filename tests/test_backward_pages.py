"""The backward-pass and long-context pages (issue 28): every figure's and table's data() against an
independent derivation (PyTorch's autograd, closed forms, brute-force loops), the sentences that
compare results, and the numbers on the built pages.

Fast tier: the data. Build tier: the pages.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction
from html import unescape

import numpy as np
import pytest

import figures
from helpers import math_as_tex, page_text
from test_long_context import torch_mla

torch = pytest.importorskip("torch")

E = math.e


def d(name: str, **params) -> dict:
    return figures.load(name).data(**params)


def t(x) -> "torch.Tensor":
    return torch.tensor(np.asarray(x, dtype=float), dtype=torch.float64, requires_grad=True)


# ---- the worked example: cat, sat, mat ------------------------------------------------------------

# The lecture's example written out here: q = x[0:2], k = x[2:4], v = x[0:2] + x[2:4], no scaling.
X = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.5, 0.5]])
Q, K, V = X[:, :2], X[:, 2:], X[:, :2] + X[:, 2:]


def torch_example(q, k, v, *, mask_cat=False, fill=None):
    """Forward and backward of 1/2 |softmax(q k^T) v - V|^2 in torch, the scores and weights kept
    for their gradients. ``mask_cat``: cat's row sees no key; with ``fill`` its scores are that
    constant (masked_fill), otherwise its weights are zero (the rows that see keys alone carry
    gradients, cat's output is the constant 0)."""
    q, k, v = t(q), t(k), t(v)
    scores = q @ k.T
    scores.retain_grad()
    if mask_cat and fill is not None:
        keep = torch.ones(3, 3, dtype=torch.bool)
        keep[0] = False
        scores_used = scores.masked_fill(~keep, fill)
        weights = torch.softmax(scores_used, dim=-1)
    elif mask_cat:
        rest = torch.softmax(scores[1:], dim=-1)
        weights = torch.cat([torch.zeros(1, 3, dtype=torch.float64), rest])
    else:
        weights = torch.softmax(scores, dim=-1)
    weights.retain_grad()
    out = weights @ v
    out.retain_grad()
    loss = 0.5 * ((out - torch.tensor(V)) ** 2).sum()
    loss.backward()
    return dict(loss=loss.item(), out=out.detach().numpy(), weights=weights.detach().numpy(),
                d_out=out.grad.numpy(), dA=weights.grad.numpy(), dZ=scores.grad.numpy(),
                dq=q.grad.numpy(), dk=k.grad.numpy(), dv=v.grad.numpy())


def test_worked_example_equals_torch_autograd_step_by_step():
    got = d("backward_example")
    ref = torch_example(Q, K, V)
    np.testing.assert_array_equal(got["q"], Q)
    np.testing.assert_array_equal(got["target"], V)
    assert got["loss"] == pytest.approx(ref["loss"], abs=1e-14)
    for name in ("out", "weights", "d_out", "dA", "dZ", "dq", "dk", "dv"):
        np.testing.assert_allclose(got[name], ref[name], rtol=0, atol=1e-14, err_msg=name)


def test_worked_example_by_hand():
    """cat's weights are (e, 1, e^0.5) / z; its output, dO, dA and dZ row follow by hand."""
    got = d("backward_example")
    z = E + 1 + math.exp(0.5)
    a = np.array([E, 1, math.exp(0.5)]) / z
    o = a @ V
    do = o - V[0]
    da = np.array([do @ V[j] for j in range(3)])
    dz = a * (da - (a * da).sum())
    np.testing.assert_allclose(got["d_out"][0], do, atol=1e-14)
    np.testing.assert_allclose(got["dA"][0], da, atol=1e-14)
    np.testing.assert_allclose(got["dZ"][0], dz, atol=1e-14)
    # dV by the double loop of dv_j = sum_i a_ij do_i
    A, dO = got["weights"], got["d_out"]
    for j in range(3):
        np.testing.assert_allclose(got["dv"][j], sum(A[i, j] * dO[i] for i in range(3)), atol=1e-14)
    # the page's reading of the numbers
    assert got["dA"][0][0] < 0 < got["dA"][0][1]  # more weight on cat helps cat, on sat hurts
    assert got["dZ"][0][0] < 0 < got["dZ"][0][1]  # a step raises cat->cat, lowers cat->sat
    assert np.abs(got["dZ"][2]).max() < 0.1 * np.abs(got["dZ"][:2]).max()  # mat's row is nearly zero
    assert got["max_abs_row_sum"] < 1e-14 and got["steps_vs_library"] < 1e-14
    assert got["n_entries"] == 18 and got["fd_step"] == 1e-6


def test_central_differences_and_one_step_of_gradient_descent():
    got = d("backward_example")
    # central differences computed here, entry by entry, against torch's gradients
    ref = torch_example(Q, K, V)
    h = 1e-6
    worst = 0.0
    for which, grad in enumerate((ref["dq"], ref["dk"], ref["dv"])):
        for idx in np.ndindex(grad.shape):
            arrays = [Q.copy(), K.copy(), V.copy()]
            arrays[which][idx] += h
            up = torch_example(*arrays)["loss"]
            arrays[which][idx] -= 2 * h
            down = torch_example(*arrays)["loss"]
            worst = max(worst, abs((up - down) / (2 * h) - grad[idx]))
    assert worst < 1e-8 and got["finite_difference_error"] < 1e-8
    # one step of 0.1 against the gradient: the loss falls, near its first-order prediction
    eta = got["step"]
    assert eta == 0.1
    after = torch_example(Q - eta * ref["dq"], K - eta * ref["dk"], V - eta * ref["dv"])
    assert got["loss_after_step"] == pytest.approx(after["loss"], abs=1e-12)
    g2 = sum((ref[n] ** 2).sum() for n in ("dq", "dk", "dv"))
    assert got["loss_first_order"] == pytest.approx(ref["loss"] - eta * g2, abs=1e-12)
    assert after["loss"] < ref["loss"]
    assert abs(after["loss"] - got["loss_first_order"]) < 0.05 * (ref["loss"] - after["loss"])
    np.testing.assert_allclose(got["diagonal_after"], np.diag(after["weights"]), atol=1e-12)
    assert got["diagonal_after"][0] > got["diagonal_before"][0] and got["diagonal_after"][1] > got["diagonal_before"][1]


def test_a_fully_masked_query_gets_zero_gradients_and_a_finite_constant_leaks():
    got = d("backward_example")["masked"]
    ref = torch_example(Q, K, V, mask_cat=True)
    np.testing.assert_array_equal(got["weights"][0], [0, 0, 0])
    np.testing.assert_array_equal(got["out"][0], [0, 0])
    np.testing.assert_array_equal(got["d_out"][0], -V[0])  # (-2, 0): far from zero
    assert got["dq_cat_max"] == 0.0 and np.array_equal(got["dq"][0], [0.0, 0.0])
    for name in ("dq", "dk", "dv"):
        np.testing.assert_allclose(got[name], ref[name], rtol=0, atol=1e-14, err_msg=name)
    assert got["rest_difference"] < 1e-15
    # with -1e9 written into cat's scores: uniform weights, and cat's gradient reaches every value
    fill = torch_example(Q, K, V, mask_cat=True, fill=-1e9)
    np.testing.assert_allclose(got["fill_weights"], [1 / 3] * 3, atol=1e-15)
    np.testing.assert_allclose(got["fill_out"], V.mean(axis=0), atol=1e-15)
    assert got["fill_dv_change"] == pytest.approx(np.abs(fill["dv"] - ref["dv"]).max(), abs=1e-14)
    assert got["fill_dv_change"] > 0.1


def test_worked_example_tables():
    ref = torch_example(Q, K, V)
    tables = {part: figures.load("backward_example").table(d("backward_example", part=part))
              for part in ("forward", "scores", "gradients")}
    assert f"**({ref['d_out'][0][0]:.4f}, {ref['d_out'][0][1]:.4f})**" in tables["forward"]
    assert f"**{ref['dZ'][1][1]:.4f}**" in tables["scores"] and f"{ref['dA'][1][0]:.4f}" in tables["scores"]
    assert f"({ref['dk'][2][0]:.4f}, {ref['dk'][2][1]:.4f})" in tables["gradients"]
    with pytest.raises(ValueError, match="part must be one of forward, scores, gradients"):
        d("backward_example", part="weights")


# ---- 1/sqrt(d_head) and the gradients -------------------------------------------------------------

def test_scaling_figure_equals_torch_autograd():
    """The same draws (one generator per width, seeded seed + d_head, in the script's order),
    the gradients of the scores and of the query from torch's autograd, medians here."""
    widths, n, S = (1, 4, 64, 512), 200, 16
    got = d("backward_scaling", d_heads=widths, n_samples=n)
    for i, w in enumerate(widths):
        rng = np.random.default_rng(0 + w)
        q, k, v = (rng.standard_normal(shape) for shape in ((n, 1, w), (n, S, w), (n, S, w)))
        d_out = rng.standard_normal((n, 1, w)) / math.sqrt(w)
        for label, scale in (("scaled", 1 / math.sqrt(w)), ("unscaled", 1.0)):
            tq, tk, tv = t(q), t(k), t(v)
            scores = tq @ tk.transpose(-1, -2) * scale
            scores.retain_grad()
            out = torch.softmax(scores, dim=-1) @ tv
            out.backward(torch.tensor(d_out))
            dz = np.median(np.linalg.norm(scores.grad.numpy()[:, 0], axis=-1))
            dq = np.median(np.linalg.norm(tq.grad.numpy()[:, 0], axis=-1))
            # dZ is the gradient of the scaled scores, as the script defines Z = q k^T * scale
            # (abs=0: approx's default absolute tolerance, 1e-12, would pass any gradient near 1e-20)
            assert got[f"dZ_{label}"][i] == pytest.approx(dz, rel=1e-10, abs=0), (w, label)
            assert got[f"dQ_{label}"][i] == pytest.approx(dq, rel=1e-10, abs=0), (w, label)


def test_scaling_figure_at_the_widest_heads_keeps_the_dominant_entry():
    """Pass forty: at d_head = 2048 over 2 keys the runner-up weight is below 1e-16 in most
    trials; torch's dZ (and the script's, written the same way) lost the dominant entry, and the
    published median was sqrt(2) too small. Against the term-by-term form of dZ on the same draws."""
    n, S, w = 1000, 2, 2048
    got = d("backward_scaling", d_heads=(w,), n_keys=S, n_samples=n)
    rng = np.random.default_rng(0 + w)
    q, k, v = (rng.standard_normal(shape) for shape in ((n, 1, w), (n, S, w), (n, S, w)))
    d_out = rng.standard_normal((n, 1, w)) / math.sqrt(w)
    z = q @ np.swapaxes(k, -1, -2)  # (n, 1, S), unscaled
    P = np.exp(z - z.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    dA = d_out @ np.swapaxes(v, -1, -2)  # (n, 1, S)
    dz = P * (P[..., None, :] * (dA[..., :, None] - dA[..., None, :])).sum(-1)  # (n, 1, S), no 1 - P_m formed
    assert got["dZ_unscaled"][0] == pytest.approx(np.median(np.linalg.norm(dz[:, 0], axis=-1)), rel=1e-12, abs=0)
    assert got["dQ_unscaled"][0] == pytest.approx(np.median(np.linalg.norm((dz @ k)[:, 0], axis=-1)), rel=1e-12,
                                                  abs=0)


def test_scaling_figure_claims():
    got = d("backward_scaling")
    assert got["d_head"] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512] and got["widest"] == 512
    scaled, unscaled = np.array(got["dZ_scaled"]), np.array(got["dZ_unscaled"])
    assert scaled.max() / scaled.min() < 2  # "stays between"
    assert got["dZ_ratio_widest"] == pytest.approx(scaled[-1] / unscaled[-1]) and got["dZ_ratio_widest"] > 1000
    assert unscaled.max() / unscaled[-1] > 1000  # the alt text: orders of magnitude
    assert unscaled[9] < 0.01 * unscaled[4]  # the question: far smaller at 512 than at 16
    dq_u, dq_s = np.array(got["dQ_unscaled"]), np.array(got["dQ_scaled"])
    peak = int(np.argmax(dq_u))
    assert 0 < peak < len(dq_u) - 1 and got["dQ_unscaled_peak_width"] == got["d_head"][peak]  # rises, then falls
    assert dq_u[peak] > 2 * dq_u[0] and dq_u[-1] < 0.05 * dq_u[peak]
    assert got["dQ_unscaled_spread"] > 100 > 5 > got["dQ_scaled_spread"]
    assert got["steps_vs_library"] < 1e-12
    # saturation: the unscaled largest weight approaches 1, the scaled one stays low
    assert got["max_weight_unscaled"][-1] > 0.9 and max(got["max_weight_scaled"]) < 0.3


def test_scaling_figure_refuses_too_much_work():
    with pytest.raises(ValueError, match="lower n_samples"):
        d("backward_scaling", d_heads=(1024, 2048), n_samples=100_000)


# ---- FlashAttention: the backward pass, tile by tile ----------------------------------------------

def test_memory_between_passes_table_by_closed_form_and_by_the_arrays():
    got = d("flash_backward_memory")
    size = {"float16": 2, "float32": 4}
    assert [(r["T"], r["dtype"]) for r in got["rows"]] == [(T, dt) for T in (1024, 4096, 16384, 32768)
                                                           for dt in ("float16", "float32")]
    for r in got["rows"]:
        T, b = r["T"], size[r["dtype"]]
        assert r["naive"] == 32 * T * T * b
        for dh in (64, 128):
            assert r["tiled"][str(dh)] == 32 * T * (dh * b + 4)
            ratio = T / (dh + 2) if b == 2 else T / (dh + 1)  # the page's T / (d_head + 2) and + 1
            assert r["ratio"][str(dh)] == pytest.approx(ratio, rel=1e-12)
    # the bytes of the arrays themselves, at the smallest length
    T = 1024
    A = np.empty((32, T, T), np.float16)
    O, lse = np.empty((32, T, 64), np.float16), np.empty((32, T), np.float32)
    assert got["at"]["1024_float16"]["naive"] == A.nbytes
    assert got["at"]["1024_float16"]["tiled"]["64"] == O.nbytes + lse.nbytes
    assert got["at"]["4096_float16"]["naive"] == 2**30 and got["at"]["4096_float16"]["tiled"]["64"] == 17_301_504
    assert got["min_ratio"] == pytest.approx(1024 / 130) and got["max_ratio"] == pytest.approx(32768 / 65)
    md = figures.load("flash_backward_memory").table(got).replace("\u00a0", " ")  # (a no-break space before a unit)
    # 2**30 B is 1 GiB; 17,301,504 B is 16.5 MiB; 2**30 / 17,301,504 = 62.06
    assert "| 4,096 | float16 | 1 GiB | 16.5 MiB (62.1× less) |" in md


def test_tiled_backward_check_table_against_torch_autograd():
    """The table's inputs drawn again here, the exact gradients from torch's autograd."""
    got = d("flash_backward_check")
    mod = figures.load("flash_backward_check")
    rng = np.random.default_rng(0)
    import mhalib

    for (T, S, dh, bq, bk, masked), row in zip(mod.CASES, got["rows"]):
        q, k, v, d_out = (rng.normal(size=(2, n, dh)) for n in (T, S, S, T))
        allowed = np.ones((T, S), bool)
        if masked == "causal":
            allowed = np.tril(allowed)
        elif masked.startswith("sliding"):
            i, j = np.arange(T)[:, None] + S - T, np.arange(S)[None, :]
            allowed = (j <= i) & (j > i - 24)
        tq, tk, tv = t(q), t(k), t(v)
        s = (tq @ tk.transpose(-1, -2) / math.sqrt(dh)).masked_fill(~torch.tensor(allowed), float("-inf"))
        (torch.softmax(s, dim=-1) @ tv).backward(torch.tensor(d_out))
        causal = masked == "causal"
        mask = None if masked in ("nothing", "causal") else allowed
        out, lse = mhalib.tiled_attention(q, k, v, block_q=bq, block_k=bk, causal=causal, mask=mask, return_lse=True)
        tiled = mhalib.tiled_attention_backward(q, k, v, d_out, out, lse, block_q=bq, block_k=bk, causal=causal,
                                                mask=mask)
        for name, g, ref in zip(("dq", "dk", "dv"), tiled, (tq.grad, tk.grad, tv.grad)):
            assert np.abs(g - ref.numpy()).max() < 1e-12, (T, S, name)
            assert row[name] < 1e-12
        assert (row["T"], row["S"], row["block_q"], row["block_k"]) == (T, S, bq, bk)
    assert any(T % bq or S % bk for T, S, _, bq, bk, _ in mod.CASES)  # blocks that do not divide
    assert got["max_difference"] < 1e-12


# ---- long context ----------------------------------------------------------------------------------

def brute_reach(T: int, window: int, layers: int, last: int) -> list[set[int]]:
    """Positions that reach ``last`` after 1..layers layers, by following the window one step at a time."""
    reach, frontier = [], {last}
    for _ in range(layers):
        frontier = {j for m in frontier for j in range(max(0, m - window + 1), m + 1)}
        reach.append(frontier)
    return reach


def test_sliding_window_reach_by_brute_force():
    got = d("sliding_window_reach")
    T, w, L = got["T"], got["window"], got["layers"]
    assert (T, w, L) == (16, 4, 5)
    mask = np.array([[i - w < j <= i for j in range(T)] for i in range(T)])
    np.testing.assert_array_equal(got["mask"], mask)
    for n, (row, seen) in enumerate(zip(got["reached"], brute_reach(T, w, L, T - 1)), start=1):
        assert set(np.flatnonzero(row)) == seen
        assert got["span"][n - 1] == len(seen) == min(n * (w - 1) + 1, T)
        assert got["first_reached"][n - 1] == min(seen)
    assert got["span"] == [4, 7, 10, 13, 16]
    for g in got["grid"]:
        n_pos = g["layers"] * (g["window"] - 1) + 6
        assert g["composed"] == len(brute_reach(n_pos, g["window"], g["layers"], n_pos - 1)[-1]) == g["formula"]
    assert got["formula_holds"] and got["n_grid"] == 48 == got["grid_max_window"] * got["grid_max_layers"]
    assert got["mistral_reach"] == 32 * 4095 + 1 == 131_041 and got["mistral_product"] == 131_072


def test_sliding_window_composition_can_fail():
    """The composition sees a mask that is not a window: a causal mask reaches everything in one layer."""
    compose = figures.load("sliding_window_reach").compose
    causal = np.tril(np.ones((6, 6), bool))
    assert compose(causal, 1)[0][5].sum() == 6
    assert compose(np.eye(6, dtype=bool), 3)[-1][5].sum() == 1


def test_rolling_cache_bytes_and_ring_buffer():
    got = d("rolling_kv_cache")
    per_token = 2 * 32 * 8 * 128 * 2
    assert got["per_token"] == per_token == 128 * 1024
    for n, full, rolling in zip(got["tokens"], got["full"], got["rolling"]):
        assert full == n * per_token and rolling == min(n, 4096) * per_token
    assert got["tokens"][-1] == 32768 and 4096 in got["tokens"]
    assert got["rolling_max"] == 4096 * per_token == 2**29 and got["ratio_at_max"] == 8.0
    assert (got["full_max_gib"], got["rolling_max_gib"]) == (4.0, 0.5)  # 2**32 and 2**29 bytes, the alt text's GiB
    # the ring buffer against a sliding window written out here: softmax over the last w keys in order
    ring = figures.load("rolling_kv_cache").ring_buffer_decode
    rng = np.random.default_rng(5)
    T, w, dh = 23, 5, 3
    q, k, v = rng.normal(size=(T, dh)), rng.normal(size=(T, dh)), rng.normal(size=(T, 2))
    expected = np.zeros((T, 2))
    for i in range(T):
        lo = max(0, i - w + 1)
        s = k[lo:i + 1] @ q[i] / math.sqrt(dh)
        p = np.exp(s - s.max())
        expected[i] = (p / p.sum()) @ v[lo:i + 1]
    np.testing.assert_allclose(ring(q, k, v, w), expected, rtol=0, atol=1e-13)
    assert got["ring_check"]["max_difference"] < 1e-13 and got["ring_check"]["T"] > 4 * got["ring_check"]["window"]


def test_kv_cache_latent_table_by_closed_form():
    got = d("kv_cache_latent_table")
    rows = got["by_model"]
    expected = {  # bytes per token: 2 (K, V) x layers x KV heads x d_head x 2 bytes; MLA: layers x 576 x 2
        "LLaMA-2 7B": 2 * 32 * 32 * 128 * 2, "Llama 3 8B": 2 * 32 * 8 * 128 * 2, "LLaMA-2 70B": 2 * 80 * 8 * 128 * 2,
        "Falcon-7B": 2 * 32 * 1 * 64 * 2, "Mistral 7B": 2 * 32 * 8 * 128 * 2,
        "DeepSeek-V2 as MHA": 2 * 60 * 128 * 128 * 2, "DeepSeek-V2": 60 * (512 + 64) * 2}
    assert {m: r["per_token"] for m, r in rows.items()} == expected
    for m, r in rows.items():
        tokens = min(32768, 4096) if m == "Mistral 7B" else 32768
        assert r["at_context"] == tokens * expected[m], m
    assert rows["LLaMA-2 70B"]["per_token"] == 320 * 1024 and rows["DeepSeek-V2"]["per_token"] == 69_120
    assert got["mla_saving"] == pytest.approx(32768 / 576) and f"{got['mla_saving']:.0f}" == "57"
    assert got["mla_vs_llama7b"] == pytest.approx(524288 / 69120)
    assert got["mla_over_d_head"] == 4.5 and got["deepseek_mha_numbers"] == 32768 and got["deepseek_mla_numbers"] == 576
    assert got["mqa_per_token"] < got["mla_per_token"] < min(r["per_token"] for m, r in rows.items()
                                                              if m not in ("Falcon-7B", "DeepSeek-V2"))
    md = figures.load("kv_cache_latent_table").table(got).replace("\u00a0", " ")
    assert "67.5 KiB" in md and "3.75 MiB" in md and "512 MiB (last 4,096)" in md  # 4,096 x 128 KiB = 512 MiB


def test_mla_check_table_against_the_paper_in_torch():
    import mhalib

    got = d("mla_check_table")
    mod = figures.load("mla_check_table")
    rng = np.random.default_rng(0)
    for (D, H, dh, dc, dr, T, causal), row in zip(mod.CASES, got["rows"]):
        w = mhalib.mla_random_weights(D, H, dh, dc, dr, seed=0)
        x = rng.normal(size=(T, D))
        paper = torch_mla(x, w, H, causal=causal)
        absorbed, _ = mhalib.mla_attention(x, **w, n_heads=H, causal=causal, absorbed=True)
        np.testing.assert_allclose(absorbed, paper, rtol=0, atol=1e-12)
        assert row["out_difference"] < 1e-12 and row["weight_difference"] < 1e-12
        assert (row["naive_key_width"], row["absorbed_key_width"]) == (dh + dr, dc + dr)
    assert got["max_difference"] < 1e-12


# ---- the built pages -------------------------------------------------------------------------------

def text(site, page: str) -> str:
    return page_text(site, page)


@pytest.mark.build
def test_backward_page_numbers(built_site):
    p = text(built_site, "backward")
    ref = torch_example(Q, K, V)
    assert f"The loss is {ref['loss']:.4f}" in p
    assert f"{ref['dZ'][0][0]:.4f} and its score for sat {ref['dZ'][0][1]:.4f}" in p
    after = torch_example(Q - 0.1 * ref["dq"], K - 0.1 * ref["dk"], V - 0.1 * ref["dv"])
    assert f"lowers the loss from {ref['loss']:.4f} to {after['loss']:.4f}" in p
    assert f"rises from {ref['weights'][0][0]:.4f} to {after['weights'][0][0]:.4f}" in p
    assert r"its \(dq\) is exactly 0," in p and r"its \(do\) is (-2, 0)" in p
    assert "(the largest difference is 0)" in p
    assert f"uniform ({1 / 3:.4f} each)" in p
    html = (built_site / "backward" / "index.html").read_text()
    assert html.count('<details class="question"') == 3
    assert 'href="../references/#vaswani-2017"' in html and 'src="../figures/backward_scaling.svg#only-light"' in html


@pytest.mark.build
def test_flash_attention_backward_section(built_site):
    p = text(built_site, "flash_attention")
    assert f"take {2**30:,} bytes (1 GiB) per sequence" in p
    assert f"take {32 * 4096 * (64 * 2 + 4):,} bytes for heads of 64" in p
    # the range of Table 4's ratios, 1024/130 to 32768/65, rounded outward by hand (to nearest
    # it read "7.88× to 504×", both ends inside the range: pass fifty-one)
    low, high = math.floor(Fraction(1024, 130) * 100) / 100, math.ceil(Fraction(32768, 65))
    assert f"from {low:.2f}× to {high}×" in p and (low, high) == (7.87, 505)
    assert "The backward pass, tile by tile" in p
    assert re.search(r"over every case of Table \d+ , is \d\.\de-1[3-9]: rounding", p)


@pytest.mark.build
def test_long_context_page_numbers(built_site):
    p = text(built_site, "long_context")
    assert f"that is {32 * 4095 + 1:,} positions" in p and f"{32 * 4096:,})" in p
    assert f"stops at {4096 * 131072:,} bytes (512 MiB)" in p
    assert f"MLA caches {32768 / 576:.0f} times less" in p
    assert f"caches {524288 / 69120:.1f} times less than LLaMA-2 7B" in p
    assert f"{2 * 128 * 128:,}" in p and "(last 4,096)" in p
    for anchor in ("beltagy-2020", "jiang-2023", "deepseek-2024", "xiao-2023", "llama-2024", "almazrouei-2023"):
        assert f'href="../references/#{anchor}"' in (built_site / "long_context" / "index.html").read_text(), anchor


def test_the_pages_note_on_the_dominant_weight_states_the_librarys_threshold():
    """The note under Step 3 says which weights the tiled pass computes from the others; the
    number is the library's (mhalib.tiled_backward.DOMINANT), and the two forms it names agree."""
    from fractions import Fraction

    import mhalib
    from mhalib.tiled_backward import DOMINANT

    from helpers import ROOT

    source = (ROOT / "docs" / "backward.md").read_text()
    stated = re.search(r"computes the entry of a\s+weight\s+above\s+(\d+)/(\d+)\s+this\s+way", source)
    assert stated and Fraction(int(stated[1]), int(stated[2])) == Fraction(DOMINANT).limit_denominator(100)
    P, dP = np.array([[0.7, 0.2, 0.1]]), np.array([[1.0, -2.0, 0.5]])  # a weight above 2/3, far from 1
    plain = P * (dP - (dP * P).sum(-1, keepdims=True))
    assert np.allclose(mhalib.softmax_backward(P, dP), plain, rtol=1e-14, atol=0)
