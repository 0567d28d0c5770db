"""One script per figure or table of the course; each has ``data()``, ``draw()`` or ``table()``, and ``main()``.

``python -m figures list`` lists them; ``python -m figures NAME --out x.svg`` or
``python figures/NAME.py --out x.svg`` regenerates one with other parameters.
"""
from __future__ import annotations

import importlib
from pathlib import Path

FIGURES_DIR = Path(__file__).resolve().parent


def names(directory: Path = FIGURES_DIR) -> list[str]:
    """Names of the figure and table scripts in ``directory`` (files not starting with ``_``)."""
    return sorted(p.stem for p in Path(directory).glob("*.py") if not p.name.startswith("_"))


def load(name: str):
    """Import ``figures.<name>``; unknown names raise ``ValueError`` listing the known ones."""
    if name not in names():
        raise ValueError(f"unknown figure {name!r}; known: {', '.join(names())}")
    return importlib.import_module(f"figures.{name}")


def summary(module) -> str:
    """The first line of a script's docstring."""
    return (module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else ""
