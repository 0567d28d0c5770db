"""Why the Transformer multiplies embeddings by √d_model before adding PE: the two parts' norms.

The comparison assumes an initialisation: embedding entries drawn from N(0, 1/d), that is
with standard deviation d^(-1/2), as in the original Transformer's reference code
(tensor2tensor's symbol embeddings); the paper itself does not state one. A PE row has
norm sqrt(d/2) exactly (each sin/cos pair contributes sin^2 + cos^2 = 1). An embedding row
with N(0, 1/d) entries has norm near 1, so without the scale the position would drown the
token; times sqrt(d) it has norm near sqrt(d). Under another initialisation the argument
changes: with N(0, 1) entries (PyTorch's ``nn.Embedding`` default) the norm is already
near sqrt(d) without the factor (the same numbers as the third column), and with it near
d (``unit_init_scaled_norm``): the token would then outweigh the position by about
sqrt(2d). Page: sinusoidal positional encoding.
"""
from __future__ import annotations

from typing import Annotated

import numpy as np

import mhalib
from figures._kit import cli, style
from figures._kit.contract import Range
from figures._kit.export import markdown_table


def data(d_models: Annotated[tuple[int, ...], Range(2, 8192)] = (64, 512, 4096),
         n_tokens: Annotated[int, Range(1, 5000)] = 1000, seed: Annotated[int, Range(0, None)] = 0) -> dict:
    odd = [D for D in d_models if D % 2]
    if odd:
        raise ValueError(f"d_models must be even (PE comes in sin/cos pairs); got {', '.join(map(str, odd))}")

    rng = np.random.default_rng(seed)
    rows = []
    for D in d_models:
        unit = rng.normal(size=(n_tokens, D))  # entries N(0, 1)
        emb = unit / np.sqrt(D)                # entries N(0, 1/d): the assumed initialisation
        pe = mhalib.sinusoidal_encoding(n_tokens, D)
        rows.append(dict(d_model=D, emb_norm=float(np.linalg.norm(emb, axis=1).mean()),
                         scaled_norm=float(np.linalg.norm(emb * np.sqrt(D), axis=1).mean()),
                         unit_init_scaled_norm=float(np.linalg.norm(unit * np.sqrt(D), axis=1).mean()),
                         pe_norm=float(np.linalg.norm(pe, axis=1).mean()), pe_norm_closed=float(np.sqrt(D / 2))))
    return dict(rows=rows, n_tokens=n_tokens, seed=seed, init="N(0, 1/d_model)", init_std="d_model^(-1/2)")


def table(data: dict) -> str:
    rows = [[f"{r['d_model']:,}", style.fixed(r['emb_norm'], 3), style.fixed(r['scaled_norm'], 1), style.fixed(r['pe_norm'], 2),
             style.fixed(r['pe_norm_closed'], 2)] for r in data["rows"]]
    return markdown_table(["d_model", "norm of an embedding, entries drawn from N(0, 1/d_model)",
                           "norm of √d_model · embedding", "norm of PE(p)", "√(d_model/2)"], rows, "rrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
