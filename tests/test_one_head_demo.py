"""The one-head page's demonstration, held with numbers (page: why one head is not enough).

"The cat quietly sat": sat needs "who" from cat and "how" from quietly. The claim is that
one head cannot deliver both (every single distribution stays at least 1 away from the
target) while two heads made from the same matrices deliver each nearly intact, and W_O
adds them into the target. Every expected value is derived here by hand from the
example's stated matrices (one-hot X, strength s = 3):

* one head (d_head = 4): sat's query (s, 0, s, 0) meets cat's key (s, 0, 0, 0) and
  quietly's (0, 0, s, 0), so both score s^2 / sqrt(4) = 4.5 and The and sat score 0:
  weights e^4.5 / (2 e^4.5 + 2) on cat and quietly, 1 / (2 e^4.5 + 2) on the others;
* head h (d_head = 2): its token scores s^2 / sqrt(2), the three others 0: weight
  e^(9/sqrt 2) / (e^(9/sqrt 2) + 3) on it, 1 / (e^(9/sqrt 2) + 3) on each other;
* values: cat (1, 0 | 1, 0), quietly (0, 1 | 0, 1), The and sat zero; target (1, 0 | 0, 1).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import figures
import mhalib
from mhalib import examples

S = 3.0
THE, CAT, QUIETLY, SAT = range(4)
TARGET = np.array([1.0, 0.0, 0.0, 1.0])
VALUES = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]])


def one_head_weights(s: float = S) -> tuple[float, float]:
    """(weight on cat = weight on quietly, weight on The = weight on sat) of the single head."""
    e = math.exp(s * s / 2)
    return e / (2 * e + 2), 1 / (2 * e + 2)


def head_weights(s: float = S) -> tuple[float, float]:
    """(weight on its own token, weight on each of the three others) of head 1 or head 2."""
    e = math.exp(s * s / math.sqrt(2))
    return e / (e + 3), 1 / (e + 3)


def head_distance(s: float = S) -> float:
    """One head's distance from its target, |(1 - w, o)| with 1 - w = 3 o exactly: sqrt(10) o
    (1 - w in floats is 0 once w rounds to 1, from strength 8 on)."""
    _, o = head_weights(s)
    return math.sqrt(10) * o


@pytest.fixture(scope="module")
def demo():
    return examples.one_head_vs_two()


def test_the_example_is_the_one_the_page_states():
    ex = examples.cat_quietly_sat()
    assert ex["tokens"] == ["The", "cat", "quietly", "sat"] and ex["n_heads"] == 2
    assert np.array_equal(ex["X"], np.eye(4)) and np.array_equal(ex["W_O"], np.eye(4))
    Q, K, V = ex["X"] @ ex["W_Q"], ex["X"] @ ex["W_K"], ex["X"] @ ex["W_V"]
    assert np.array_equal(Q, [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [S, 0, S, 0]])
    assert np.array_equal(K, [[0, 0, 0, 0], [S, 0, 0, 0], [0, 0, S, 0], [0, 0, 0, 0]])
    assert np.array_equal(V, VALUES)
    assert np.array_equal(ex["target"], TARGET)
    with pytest.raises(ValueError, match="strength"):
        examples.cat_quietly_sat(0.0)


def test_scores_and_weights_match_the_closed_forms(demo):
    np.testing.assert_allclose(demo["scores"]["single"], [0, S * S / 2, S * S / 2, 0], atol=1e-15)
    np.testing.assert_allclose(demo["scores"]["head1"], [0, S * S / math.sqrt(2), 0, 0], atol=1e-15)
    np.testing.assert_allclose(demo["scores"]["head2"], [0, 0, S * S / math.sqrt(2), 0], atol=1e-15)
    w, o = one_head_weights()
    np.testing.assert_allclose(demo["weights"]["single"], [o, w, w, o], rtol=1e-13)
    w, o = head_weights()
    np.testing.assert_allclose(demo["weights"]["head1"], [o, w, o, o], rtol=1e-13)
    np.testing.assert_allclose(demo["weights"]["head2"], [o, o, w, o], rtol=1e-13)
    assert w > 0.99  # near one-hot: each head picks its token
    assert abs(demo["weights"]["single"][CAT] - 0.5) < 0.01  # the single head splits evenly


def test_one_head_returns_a_blend_far_from_both_answers(demo):
    w, _ = one_head_weights()
    np.testing.assert_allclose(demo["out_single"], [w, w, w, w], rtol=1e-13)
    slot = math.hypot(1 - w, w)  # each slot (w, w) against (1, 0) or (0, 1)
    assert demo["distance"]["single_who"] == pytest.approx(slot, rel=1e-12)
    assert demo["distance"]["single_how"] == pytest.approx(slot, rel=1e-12)
    assert demo["distance"]["single"] == pytest.approx(math.sqrt(2) * slot, rel=1e-12)
    assert slot >= math.sqrt(0.5) and demo["distance"]["single"] >= 1.0


def test_no_single_distribution_gets_closer_than_one(demo):
    # (1 - a)^2 + a^2 >= 1/2 for each of cat's and quietly's weights: the best is 1, at (0, 1/2, 1/2, 0)
    assert demo["best_single"]["distance"] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(demo["best_single"]["weights"], [0, 0.5, 0.5, 0], atol=1e-12)
    np.testing.assert_allclose(demo["values"], VALUES, atol=0)
    a = np.random.default_rng(0).dirichlet(np.full(4, 0.3), size=20_000)  # (N, 4) distributions
    assert np.linalg.norm(a @ VALUES - TARGET, axis=1).min() >= 1.0 - 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_no_query_or_key_matrices_rescue_one_head(seed):
    """Whatever W_Q and W_K a single head has, with these values it stays at least 1 away."""
    ex = examples.cat_quietly_sat()
    rng = np.random.default_rng(seed)
    w_q, w_k = rng.normal(scale=3.0, size=(2, 4, 4))
    out, _ = mhalib.multi_head_attention(ex["X"], w_q, w_k, ex["W_V"], ex["W_O"], n_heads=1)
    assert np.linalg.norm(out[SAT] - TARGET) >= 1.0 - 1e-12


def test_two_heads_return_their_answers_nearly_intact(demo):
    w, o = head_weights()
    np.testing.assert_allclose(demo["heads_out"], [[w, o], [o, w]], rtol=1e-13)
    expected = math.hypot(1 - w, o)
    assert demo["distance"]["head1"] == pytest.approx(expected, rel=1e-12)
    assert demo["distance"]["head2"] == pytest.approx(expected, rel=1e-12)
    assert expected < 0.01


def test_w_o_adds_the_heads_into_the_target(demo):
    w, o = head_weights()
    np.testing.assert_allclose(demo["per_head"], [[w, o, 0, 0], [0, 0, o, w]], rtol=1e-13, atol=0)
    np.testing.assert_allclose(demo["per_head"].sum(axis=0), demo["out_two"], atol=1e-15)
    np.testing.assert_allclose(demo["out_two"], demo["concat_two"], atol=0)  # W_O = I
    assert demo["distance"]["two"] == pytest.approx(math.sqrt(2) * head_distance(), rel=1e-12, abs=0)
    assert demo["distance"]["two"] < 0.01 < 1.0 <= demo["distance"]["single"]


@pytest.mark.parametrize("strength", [0.5, 1.0, 3.0, 8.0, 10.0, 20.0, 23.0])
def test_the_bound_holds_at_every_strength(strength):
    """From strength 8 on, head 1's output entry 1 - 3e-20 rounds to 1: the distances read
    sqrt(10) times too small from out - target, and 0 from 23 on, where the sum of squares of
    1e-163 underflows (pass forty-nine); they are taken from the weights now."""
    r = examples.one_head_vs_two(strength)
    assert r["distance"]["single"] >= 1.0 - 1e-12
    assert r["best_single"]["distance"] == pytest.approx(1.0, abs=1e-12)
    rel = 1e-9 + 2e-16 * strength**2  # e^(s^2/sqrt 2): the exponent's rounding, relative
    for head in ("head1", "head2"):
        assert r["distance"][head] == pytest.approx(head_distance(strength), rel=rel, abs=0), head
    assert r["distance"]["two"] == pytest.approx(math.sqrt(2) * head_distance(strength), rel=rel, abs=0)


# --- closest_weighted_average: the exact nearest point of the values' convex hull ---

def test_closest_weighted_average_docstring_example():
    w, dist = examples.closest_weighted_average([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])
    np.testing.assert_allclose(w, [0.5, 0.5], atol=1e-15)
    assert dist == pytest.approx(math.sqrt(0.5), abs=1e-15)
    w, dist = examples.closest_weighted_average([[0.0, 0.0], [2.0, 0.0]], [0.5, 0.0])  # inside: distance 0
    np.testing.assert_allclose(w, [0.75, 0.25], atol=1e-15)
    assert dist == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_closest_weighted_average_is_optimal(seed):
    """The returned point p is a weighted average, at the stated distance, and no hull point is
    closer: (target - p) . (v_j - p) <= 0 for every row, which holds exactly at the projection."""
    rng = np.random.default_rng(seed)
    S, n = rng.integers(2, 7), rng.integers(2, 5)
    values, target = rng.normal(size=(S, n)), rng.normal(scale=2.0, size=n)
    w, dist = examples.closest_weighted_average(values, target)
    assert w.shape == (S,) and (w >= 0).all() and w.sum() == pytest.approx(1.0, abs=1e-12)
    p = w @ values
    assert np.linalg.norm(p - target) == pytest.approx(dist, abs=1e-12)
    assert ((values - p) @ (target - p)).max() <= 1e-9
    a = rng.dirichlet(np.full(S, 0.5), size=5_000)
    assert np.linalg.norm(a @ values - target, axis=1).min() >= dist - 1e-12


@pytest.mark.parametrize("values,target,error,match", [
    ([1.0, 2.0], [0.0], ValueError, "values"),
    (np.zeros((13, 2)), [0.0, 0.0], ValueError, "values"),
    ([[1.0, 0.0]], [0.0, 0.0, 0.0], ValueError, "target"),
    ([[1.0, float("nan")]], [0.0, 0.0], ValueError, "values"),
    ([[True, False]], [0.0, 0.0], TypeError, "values"),
    ([[1.0, 0.0]], ["a", "b"], TypeError, "target"),
])
def test_closest_weighted_average_refuses_bad_input(values, target, error, match):
    with pytest.raises(error, match=match):
        examples.closest_weighted_average(values, target)


# --- the figure scripts and the page ---

def test_figure_data_for_the_page():
    setup = figures.load("one_head_setup").data()
    np.testing.assert_allclose(setup["v"], VALUES, atol=0)
    assert setup["q"][SAT].tolist() == [S, 0, S, 0] and setup["k"][CAT].tolist() == [S, 0, 0, 0]
    assert r"| *sat* | verb (0, 0, 0, 1) | \((3, 0 \,\Vert\, 3, 0)\) | \((0, 0 \,\Vert\, 0, 0)\) | \((0, 0 \,\Vert\, 0, 0)\) |" in \
        figures.load("one_head_setup").table(setup)

    weights = figures.load("one_head_weights").data()
    w1, o1 = one_head_weights()
    w2, o2 = head_weights()
    np.testing.assert_allclose(weights["weights"], [[o1, w1, w1, o1], [o2, w2, o2, o2], [o2, o2, w2, o2]], rtol=1e-13)
    assert weights["d_head"] == [4, 2, 2]

    out = figures.load("one_head_outputs").data(n_splits=11)
    share = np.linspace(0, 1, 11)  # (share, 1 - share) on (cat, quietly): squared distance 2((1-a)^2 + a^2)
    np.testing.assert_allclose(out["split_distance"], np.sqrt(2 * ((1 - share) ** 2 + share**2)), atol=1e-15)
    assert min(out["split_distance"]) == pytest.approx(1.0) and out["single_share"] == pytest.approx(0.5)
    assert out["best_single"]["distance"] == pytest.approx(1.0, abs=1e-12)

    combine = figures.load("one_head_combine")
    md = combine.table(combine.data())
    assert rf"| head 1 | \(({w2:.3f}, {o2:.3f})\) | \(({w2:.3f}, {o2:.3f} \,\Vert\, 0.000, 0.000)\) |" in md
    assert rf"\(\mathbf{{({w2:.3f}, {o2:.3f} \,\Vert\, {o2:.3f}, {w2:.3f})}}\)" in md


PAGE = Path(__file__).resolve().parents[1] / "docs" / "one_head.md"


def test_the_page_shows_the_demonstration():
    """The page draws its numbers from the demonstration's scripts, not from the old toy maps."""
    page = PAGE.read_text(encoding="utf-8")
    for ref in ("figures/one_head_weights.svg", "figures/one_head_outputs.svg",
                "{{ table one_head_setup }}", "{{ table one_head_combine }}",
                "{{ value one_head_outputs distance.single ", "{{ value one_head_outputs distance.two ",
                "{{ value one_head_outputs best_single.distance ", "{{ value one_head_combine distance.head1 "):
        assert ref in page, ref
    assert "heads_in_action" not in page


@pytest.mark.build
def test_built_page_holds_the_numbers(built_site):
    html = (built_site / "one_head" / "index.html").read_text()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    w1, _ = one_head_weights()
    w2, o2 = head_weights()
    two = math.sqrt(2) * math.hypot(1 - w2, o2)
    for shown in (f"{w1:.3f}", f"{w2:.3f}", f"{o2:.3f}", f"{two:.3f}", f"{math.hypot(1 - w2, o2):.3f}",
                  f"{S * S / 2:.2f}", f"{S * S / math.sqrt(2):.2f}", "best distance 1.00"):
        assert shown in text, shown
