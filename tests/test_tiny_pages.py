"""The experiment pages as built: their structure, and key numbers recomputed here from the
stored results (figures/data/tiny_decoders.json), not taken from the figure scripts."""
from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import numpy as np
import pytest

from helpers import page_text

pytestmark = pytest.mark.build

RESULTS = json.loads((Path(__file__).resolve().parents[1] / "figures" / "data" / "tiny_decoders.json").read_text())
C = RESULTS["config"]


def text(site, page: str) -> str:
    return page_text(site, page, tex=False)


def _mean(task, method, factor, scaling=None):
    vals = [r["accuracy"] for r in RESULTS["extrapolation"]["records"] if r["task"] == task
            and r["method"] == method and r["factor"] == factor and r["scaling"] == scaling]
    assert len(vals) == len(C["seeds"])
    return float(np.mean(vals))


@pytest.mark.parametrize("page", ["extrapolation", "induction"])
def test_experiment_pages_have_goals_summary_and_questions_after_it(built_site, page):
    t = text(built_site, page)
    assert "What you will learn" in t and t.rfind("Summary") > t.find("What you will learn") > 0
    html = (built_site / page / "index.html").read_text()
    questions = html.find('id="check-yourself"')
    assert questions > html.find('class="admonition success"') > 0
    assert html.count("<details class=\"question\"") >= 3


def test_extrapolation_page_numbers(built_site):
    t = text(built_site, "extrapolation")
    assert f"at 8× it still got {_mean('repeat', 'alibi', 8):.2f} on repeat and {_mean('kback', 'alibi', 8):.2f}" in t
    assert f"RoPE fell to {_mean('repeat', 'rope', 2):.2f} at 2×" in t
    assert f"accuracy at 2× went from {_mean('kback', 'rope', 2):.2f} to {_mean('kback', 'rope', 2, 'ntk'):.2f}" in t
    assert f"(it left {_mean('kback', 'rope', 2, 'interpolation'):.2f} on kback" in t
    assert f"{RESULTS['wall_time_s'] / 60:.1f} minutes" in t
    d_head = C["model"]["d_model"] // C["model"]["n_heads"]
    assert f"the base becomes {10000 * 8 ** (d_head / (d_head - 2)):,.0f}" in t
    assert "not defined" in t


def test_induction_page_numbers(built_site):
    t = text(built_site, "induction")
    run = next(r for r in RESULTS["induction"] if r["seed"] == C["stored_seed"])
    cps = {cp["step"]: cp for cp in run["checkpoints"]}
    prev = np.array(cps[run["after"]]["previous_token"])[0]
    ind = np.array(cps[run["after"]]["induction"])[1]
    end_prev = np.array(run["checkpoints"][-1]["previous_token"])[0]
    end_ind = np.array(run["checkpoints"][-1]["induction"])[1]
    h_prev, h_ind = int(np.argmax(end_prev)), int(np.argmax(end_ind))
    assert f"head {h_prev + 1}'s previous-token score" in t and f"to {prev[h_prev]:.2f} just after it" in t
    assert f"to {ind[h_ind]:.2f} ({end_ind[h_ind]:.2f} at the end)" in t
    assert f"within {run['after'] - run['before']} steps" in t


def test_quiz_and_cross_links(built_site):
    q = text(built_site, "quiz")
    assert f"{_mean('kback', 'rope', 8):.2f} here" in q
    assert "extrapolation/" in (built_site / "compare" / "index.html").read_text()
    assert "extrapolation/" in (built_site / "errata" / "index.html").read_text()
    assert "real_heads/" in (built_site / "induction" / "index.html").read_text()
