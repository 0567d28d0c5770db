"""One script per figure or table of the course, in one folder per chapter (as the nav).

Each script has ``data()``, ``draw()`` or ``table()``, and ``main()``; what a script is
(kind, title, typed parameters, output names) is read by :mod:`figures._kit.contract`.

``python -m figures list`` lists them; ``python -m figures NAME --out x.svg`` or
``python figures/<chapter>/NAME.py --out x.svg`` regenerates one with other parameters;
``figures.load("pe_heatmap")`` imports one.
"""
from __future__ import annotations

import importlib

from ._kit import contract

FIGURES_DIR = contract.FIGURES_ROOT


def scripts() -> dict[str, contract.Script]:
    """Every script of the course by name, read from its source (nothing is imported)."""
    return contract.discover(FIGURES_DIR)


def names() -> list[str]:
    """Names of the figure and table scripts, sorted."""
    return sorted(scripts())


def load(name: str):
    """Import the script called ``name``; unknown names raise ``ValueError`` naming the known ones."""
    script = contract.find(name, scripts())
    return importlib.import_module(script.module_name)
