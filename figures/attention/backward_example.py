"""The backward pass on cat/sat/mat: from the output's gradient dO to dV, dA, dZ, dQ and dK.

The lecture's three-token example (mhalib.examples.cat_sat_mat, scale 1 as on the attention
page) with a loss made up for the page: each token's output should equal its own value,
L = 1/2 sum_i |o_i - y_i|^2 with the targets y_i = v_i held fixed, so dO = O - Y. The
gradients dQ, dK, dV come from mhalib.attention_backward; dA = dO V^T and the softmax's
dZ = A o (dA - rowsum(dA o A)) are the intermediate steps the page derives, checked against
the library's dQ = dZ K and dK = dZ^T Q. Also: central differences of L, one gradient
step, and the example with cat's row masked entirely. ``part`` picks the table: "forward"
(outputs, targets, dO), "scores" (dA and dZ) or "gradients" (dV, dQ, dK).
Page: how attention learns.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from mhalib import examples
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table

PARTS = ("forward", "scores", "gradients")
#: The step of the central differences.
FD_STEP = 1e-6


def _loss(q, k, v, target, scale, mask=None) -> float:
    out, _ = mhalib.scaled_dot_product_attention(q, k, v, mask, scale=scale)
    return 0.5 * float(((out - target) ** 2).sum())


def _central_differences(q, k, v, target, scale, h=FD_STEP) -> list[np.ndarray]:
    """dL/dx for every entry of q, k and v by (L(x + h) - L(x - h)) / 2h, one entry at a time."""
    grads = []
    for which in range(3):
        arrays = [q, k, v]
        g = np.zeros_like(arrays[which])
        for idx in np.ndindex(g.shape):
            up, down = [a.copy() for a in arrays], [a.copy() for a in arrays]
            up[which][idx] += h
            down[which][idx] -= h
            g[idx] = (_loss(*up, target, scale) - _loss(*down, target, scale)) / (2 * h)
        grads.append(g)
    return grads


def data(part: str = "gradients", step: Annotated[float, Range(0.0, 10.0)] = 0.1) -> dict:
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}; got {part!r}")
    ex = examples.cat_sat_mat()
    X, scale = ex["X"], ex["scale"]
    q, k, v = X @ ex["W_Q"], X @ ex["W_K"], X @ ex["W_V"]  # (T, D) @ (D, d) -> (T, d)
    target = v.copy()  # y_i = v_i, held fixed while q, k, v move
    out, A = mhalib.scaled_dot_product_attention(q, k, v, scale=scale)  # (T, d), (T, S)
    d_out = out - target  # dL/dO for L = 1/2 |O - Y|^2
    dq, dk, dv = mhalib.attention_backward(q, k, v, d_out, scale=scale)
    dA = d_out @ v.T  # (T, d) @ (d, S) -> (T, S)
    dZ = A * (dA - (dA * A).sum(axis=-1, keepdims=True))  # (T, S): the softmax's Jacobian, row by row
    loss = _loss(q, k, v, target, scale)

    # the steps agree with the library: dQ = dZ K * scale, dK = dZ^T Q * scale, dV = A^T dO
    steps_vs_library = max(float(np.abs(dZ @ k * scale - dq).max()), float(np.abs(dZ.T @ q * scale - dk).max()),
                           float(np.abs(A.T @ d_out - dv).max()))
    fd = _central_differences(q, k, v, target, scale)
    fd_error = max(float(np.abs(f - g).max()) for f, g in zip(fd, (dq, dk, dv)))
    # one step of gradient descent on q, k and v themselves
    loss_after = _loss(q - step * dq, k - step * dk, v - step * dv, target, scale)
    first_order = loss - step * float((dq**2).sum() + (dk**2).sum() + (dv**2).sum())
    _, A_after = mhalib.scaled_dot_product_attention(q - step * dq, k - step * dk, v - step * dv, scale=scale)

    # cat's query may see no key at all (its whole row masked)
    mask = np.ones((3, 3), bool)
    mask[0] = False
    out_m, A_m = mhalib.scaled_dot_product_attention(q, k, v, mask, scale=scale)
    d_out_m = out_m - target
    dq_m, dk_m, dv_m = mhalib.attention_backward(q, k, v, d_out_m, mask=mask, scale=scale)
    # the other two queries alone give the same dK and dV: cat's row passes nothing on
    _, dk_rest, dv_rest = mhalib.attention_backward(q[1:], k, v, d_out_m[1:], scale=scale)
    # a finite constant instead of a boolean mask: cat's scores all become -1e9, its weights uniform
    filled = np.where(mask, q @ k.T * scale, -1e9)  # (T, S)
    A_fill = mhalib.softmax(filled, axis=-1)
    out_fill = A_fill @ v
    dv_fill = A_fill.T @ (out_fill - target)  # the values' gradient with the finite constant

    return dict(part=part, tokens=ex["tokens"], scale=scale, q=q, k=k, v=v, target=target, out=out, weights=A,
                d_out=d_out, dA=dA, dZ=dZ, dZ_row_sums=dZ.sum(axis=-1), dq=dq, dk=dk, dv=dv, loss=loss,
                max_abs_row_sum=float(np.abs(dZ.sum(axis=-1)).max()),
                steps_vs_library=steps_vs_library, finite_difference_error=fd_error, fd_step=FD_STEP,
                n_entries=int(q.size + k.size + v.size),
                step=step, loss_after_step=loss_after, loss_first_order=first_order,
                weights_after_step=A_after, diagonal_before=np.diag(A), diagonal_after=np.diag(A_after),
                masked=dict(weights=A_m, out=out_m, d_out=d_out_m, dq=dq_m, dk=dk_m, dv=dv_m,
                            dq_cat_max=float(np.abs(dq_m[0]).max()),
                            rest_difference=max(float(np.abs(dk_m - dk_rest).max()),
                                                float(np.abs(dv_m - dv_rest).max())),
                            fill_weights=A_fill[0], fill_out=out_fill[0],
                            fill_dv_change=float(np.abs(dv_fill - dv_m).max())))


def _vec(x, places: int = 4) -> str:
    return "(" + ", ".join(style.fixed(a, places) for a in x) + ")"


def table(data: dict) -> str:
    tokens = data["tokens"]
    if data["part"] == "forward":
        rows = [[t, _vec(data["out"][i]), _vec(data["target"][i]), f"**{_vec(data['d_out'][i])}**"]
                for i, t in enumerate(tokens)]
        return markdown_table(["token", "output o", "target y = v", "dO = o - y"], rows, "lrrr")
    if data["part"] == "scores":
        rows = [[t] + [style.fixed(x, 4) for x in data["dA"][i]] + [f"**{style.fixed(x, 4)}**" for x in data["dZ"][i]]
                for i, t in enumerate(tokens)]
        return markdown_table(["query", *(f"dA, {t}" for t in tokens), *(f"dZ, {t}" for t in tokens)],
                              rows, "l" + "r" * 6)
    rows = [[t, _vec(data["dv"][i]), _vec(data["dq"][i]), _vec(data["dk"][i])] for i, t in enumerate(tokens)]
    return markdown_table(["token", "dV (its value)", "dQ (its query)", "dK (its key)"], rows, "lrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
