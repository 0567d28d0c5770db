"""Bug: calling a frequency a wavelength. Angular frequency, cycles per position, 1/omega and the wavelength 2*pi/omega.

For d_model = 512 at a few dimensions. 1/omega = base^(2i/d) is neither: it is the
wavelength divided by 2*pi. Page: numerics and pitfalls.
"""
from __future__ import annotations

import numpy as np

import mhalib
from figures._kit import cli
from figures._kit.export import markdown_table


def data(d_model: int = 512, dims: tuple[int, ...] = (0, 64, 128, 256, 448)) -> dict:
    omega = mhalib.sinusoidal_frequencies(d_model)
    lam = mhalib.wavelengths(d_model)
    rows = [dict(dim=int(i), omega=float(omega[i // 2]), cycles=float(omega[i // 2] / (2 * np.pi)),
                 inverse=float(1 / omega[i // 2]), wavelength=float(lam[i // 2])) for i in dims]
    return dict(d_model=d_model, rows=rows)


def table(d: dict) -> str:
    rows = [[r["dim"], f"{r['omega']:.4g}", f"{r['cycles']:.4g}", f"{r['inverse']:,.4g}", f"**{r['wavelength']:,.2f}**"]
            for r in d["rows"]]
    return markdown_table(["dimension", "ω, rad / position", "f = ω/2π, cycles / position", "1/ω",
                           "wavelength 2π/ω = 1/f"], rows, "rrrrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
