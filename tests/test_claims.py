"""Claims as tests (issue 26): each sentence that states, ranks or explains a computed or measured
result is checked here against ``data()`` with a value derived independently (closed form, hand
calculation, plain numpy written here), and its key phrase is found in the page's Markdown, so
editing the sentence or the data fails a test until the claim is checked again.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import figures

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
E = math.e


def d(name: str, **params) -> dict:
    return figures.load(name).data(**params)


def page(name: str) -> str:
    """The page's Markdown with its line breaks and indentation folded to single spaces."""
    return re.sub(r"\s+", " ", (DOCS / f"{name}.md").read_text(encoding="utf-8"))


def sentence(text: str, phrase: str) -> str:
    """The sentence (up to the next full stop followed by a space) that contains ``phrase``."""
    i = text.find(phrase)
    assert i >= 0, f"{phrase!r} is not on the page"
    start = max(text.rfind(". ", 0, i), text.rfind("\n", 0, i)) + 1
    end = text.find(". ", i)
    return text[start: end if end > 0 else None]


# --- 1. attention: how far the rounded weights put the outputs ------------------------------------

def test_rounded_weights_error_is_the_tables_own_column():
    """The note's "up to X away" is the rounded-weights column against the exact column, by hand."""
    z = E + 1 + math.exp(0.5)
    a, b, c = E / z, 1 / z, math.exp(0.5) / z  # self, the other noun-like token, mat
    v = np.array([[2, 0], [0, 2], [1.5, 0.5]])
    exact = {"cat": a * v[0] + b * v[1] + c * v[2], "sat": b * v[0] + a * v[1] + c * v[2]}
    w = {"cat": [a, b, c], "sat": [b, a, c]}
    rounded = {t: np.round(w[t], 2) @ v for t in exact}
    gap = {t: float(np.abs(rounded[t] - exact[t]).max()) for t in exact}
    assert gap["sat"] == pytest.approx(0.01156, abs=1e-5) and gap["sat"] > gap["cat"]
    out = d("cat_sat_mat_outputs")
    assert out["max_rounded_error"] == pytest.approx(gap["sat"], abs=1e-12)
    assert out["max_rounded_error_token"] == "sat"
    notes = np.array([0.84, 1.17])  # the values that circulate, for sat
    assert out["max_notes_error"] == pytest.approx(float(np.abs(notes - exact["sat"]).max()), abs=1e-12)
    text = page("attention")
    claim = sentence(text, "the outputs inherit the error")
    assert "{{ value cat_sat_mat_outputs max_rounded_error .4f }}" in claim
    assert "{{ value cat_sat_mat_outputs max_rounded_error_token }}" in claim
