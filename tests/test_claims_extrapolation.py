"""Claims as tests for docs/extrapolation.md and docs/compare.md (issue 26).

Each test asserts what a sentence says on the stored runs (``figures/data/tiny_decoders.json``,
read seed by seed through ``test_claims.seeds``) or on a figure's ``data()``, with the expected
value derived here (closed form, by hand, or from the seeds themselves), and finds the
sentence's key phrase in the page's Markdown, so that editing either fails a test until the
claim is checked again. A ranking holds only where the seeds' ranges separate (``above``).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from test_claims import above, d, page, seeds, sentence, stored_runs

FACTORS = (1, 2, 4, 8)
LONGER = (2, 4, 8)
TASKS = ("repeat", "kback")
TRAINED = ("sinusoidal", "learned", "rope")  # the three methods that learned both tasks


@functools.cache
def data(name: str) -> dict:
    return d(name)


def ex() -> str:
    return page("extrapolation")


def cmp() -> str:
    return page("compare")


def rope_omega(d_head: int = 16, base: float = 10000.0) -> np.ndarray:
    """RoPE's plane frequencies, by the formula: omega_i = base^(-2i/d_head), i = 0 .. d_head/2 - 1."""
    return np.array([base ** (-2 * i / d_head) for i in range(d_head // 2)])


def final_losses(task: str, method: str) -> list[float]:
    return [r["final_loss"] for r in stored_runs()["extrapolation"]["training"]
            if r["task"] == task and r["method"] == method]


def spread(task: str, method: str, factor: int, scaling=None) -> float:
    v = seeds(task, method, factor, scaling)
    return max(v) - min(v)


def by_seed(task: str, method: str, factor: int, scaling=None) -> dict:
    """Each seed's accuracy, keyed by seed, for paired comparisons of the same model."""
    runs = stored_runs()
    L = runs["config"]["L_train"] * factor
    return {r["seed"]: r["accuracy"] for r in runs["extrapolation"]["records"]
            if (r["task"], r["method"], r["length"], r["scaling"]) == (task, method, L, scaling)}


# --- the result: who learned, who did not ------------------------------------------------------------

def test_three_methods_learned_both_tasks_and_two_did_not():
    """L102-109: "the sinusoidal, learned and RoPE models learned both tasks ... Two methods did not.
    NoPE failed ... ALiBi under-learned both tasks"."""
    for task in TASKS:
        for m in TRAINED:
            assert min(seeds(task, m, 1)) > 0.95, (task, m)
            assert above(seeds(task, m, 1), seeds(task, "alibi", 1)), (task, m)
        assert max(seeds(task, "none", 1)) < 0.5 < min(seeds(task, "alibi", 1))
    e = data("extrapolation_accuracy")
    for task in TASKS:
        for m in TRAINED:
            assert e["accuracy"][task][m]["mean"][0] == pytest.approx(np.mean(seeds(task, m, 1)))
    text = ex()
    claim = sentence(text, "At the training length the sinusoidal, learned and RoPE models learned both tasks")
    assert "{{ value extrapolation_accuracy accuracy.kback.rope.mean.0 .2f }}" in claim
    assert "Two methods did not. NoPE failed: it reached only" in text
    assert "where the sinusoidal, learned and RoPE models were near zero" in sentence(text, "ALiBi under-learned both tasks")


def test_learned_tables_cannot_run_past_the_training_length():
    """L133 "Learned tables could not run at all", L141-145 "within its range the learned model was as
    good as any", the quiz "Nothing: it cannot run", the summary and the compare page."""
    e = data("extrapolation_accuracy")
    for task in TASKS:
        for f in LONGER:
            assert seeds(task, "learned", f) == [None] * e["n_seeds"]
        assert e["accuracy"][task]["learned"]["mean"][1:] == [None, None, None]
        others = [x for m in ("none", "sinusoidal", "rope", "alibi") for x in seeds(task, m, 1)]
        assert min(seeds(task, "learned", 1)) >= max(others)  # as good as any, seed by seed
    text = ex()
    assert "**Learned tables could not run at all.**" in text
    assert "within its range the learned model was as good as any" in text
    assert "Nothing: it cannot run" in text
    assert "learned tables could not run at all" in sentence(text, "tested at up to")
    assert "learned tables could not run at all" in cmp()


def test_the_widest_bands_are_rope_and_alibi_on_kback():
    """L133-137: past the training length the bands are widest on kback for RoPE and ALiBi; RoPE's
    seeds agree at 1x and part beyond it, ALiBi's are nearly as far apart already at 1x."""
    methods = ("none", "sinusoidal", "rope", "alibi")
    for f in LONGER:
        width = {(t, m): spread(t, m, f) for t in TASKS for m in methods}
        two = sorted(width, key=width.get, reverse=True)[:2]
        assert set(two) == {("kback", "rope"), ("kback", "alibi")}, (f, width)
    assert seeds("kback", "rope", 1) == [1.0, 1.0, 1.0] and all(spread("kback", "rope", f) > 0.1 for f in LONGER)
    alibi = [spread("kback", "alibi", f) for f in FACTORS]
    assert alibi[0] > 0.85 * max(alibi[1:])  # nearly as wide at 1x as at any longer length
    loss = final_losses("kback", "alibi")
    assert max(loss) > 1.5 * min(loss)  # learned to different degrees
    text = ex()
    assert "Past the training length the bands are widest on kback, for RoPE and ALiBi" in text
    rope = sentence(text, "RoPE's seeds all scored")
    assert "{{ value extrapolation_accuracy accuracy.kback.rope.min.0 .2f }} at 1×" in rope
    assert "spread apart beyond it" in rope
    assert "nearly as far apart already at 1×" in text
    assert "The seeds agree closely except" not in text


# --- why each method does what it does ---------------------------------------------------------------

def test_sinusoidal_slow_pairs_never_turned_half_a_cycle_and_block_two_is_already_low():
    """L153-162: "of the 32 (sin, cos) pairs ... 24 never turned through even half a cycle" over
    positions 0 .. L_train - 1, and at 8x the kback models' accuracy in positions 32-63 "was already
    only" a fraction of the trained block's."""
    e = data("extrapolation_accuracy")
    D, L = e["model"]["d_model"], e["L_train"]
    omega = [10000.0 ** (-2 * i / D) for i in range(D // 2)]  # pair i of Vaswani et al.'s table
    slow = sum((L - 1) * w < math.pi for w in omega)
    assert (e["sinusoidal_pairs"], e["sinusoidal_pairs_within_half_turn"]) == (D // 2, slow) == (32, 24)
    p = data("extrapolation_positions")
    sin = p["accuracy"]["kback"]["sinusoidal"]
    assert (p["block1_first"], p["block1_last"]) == (L, 2 * L - 1)
    assert sin["min"][0] == 1.0 and sin["max"][1] < 0.25
    text = ex()
    claim = sentence(text, "never turned through")
    assert "{{ value extrapolation_accuracy sinusoidal_pairs_within_half_turn }} never turned through even half a cycle" in claim
    assert "was already only {{ value extrapolation_positions accuracy.kback.sinusoidal.mean.1 .2f round=nearest }}" in text


def test_rope_slow_planes_never_turned_half_a_turn_in_training():
    """L168-175: d_head / 2 planes; the slowest 6 never turned through half a turn over offsets up
    to L_train - 1; the third plane's wavelength and largest trained angle."""
    r = data("extrapolation_rope_scaling")
    L = data("extrapolation_accuracy")["L_train"]
    omega = rope_omega(r["d_head"])
    assert r["n_planes"] == r["d_head"] // 2 == 8
    half = [(L - 1) * w < math.pi for w in omega]
    assert half == [False, False] + [True] * 6  # the slowest six, and only they
    assert r["planes_within_half_turn"] == sum(half)
    assert r["wavelength"][2] == pytest.approx(2 * math.pi / 10000 ** (-4 / 16))  # 62.8
    assert r["trained_max_angle"][2] == pytest.approx(31 * 0.1) and r["trained_max_angle"][2] < math.pi
    text = ex()
    claim = sentence(text, "planes never turned")
    assert "{{ value extrapolation_rope_scaling planes_within_half_turn }} planes never turned through half a turn" in claim
    assert "{{ value extrapolation_rope_scaling trained_max_angle.2 .1f round=up }} rad" in claim


def test_the_repeat_task_is_hit_hardest_for_rope():
    """L178-182: "The repeat task is hit hardest because its lookup distance itself grows": RoPE's
    seeds on repeat lie below its seeds on kback at every longer length; the 8x segment is 8 times the
    trained one."""
    for f in LONGER:
        assert above(seeds("kback", "rope", f), seeds("repeat", "rope", f)), f
    e = data("extrapolation_accuracy")
    lo, hi = e["repeat_segment_train"]
    assert (lo, hi) == (e["L_train"] // 4, e["L_train"] // 2)
    assert e["repeat_segment_longest"] == [lo * 8, hi * 8] and lo * 8 > e["L_train"]  # every lookup unseen
    assert "The repeat task is hit hardest because its lookup distance itself grows" in ex()


def test_alibi_far_keys_pay_the_whole_penalty_and_its_repeat_accuracy_slips():
    """L189-203: the four heads' biases at the longest repeat lookup, -m_h * 128; a far key gets a near
    key's weight only if its score is higher by the whole penalty; only the flattest pays less than one;
    ALiBi's repeat accuracy slips at every step (ranges apart) and is lowest where lookups are longest."""
    e = data("extrapolation_accuracy")
    H = e["model"]["n_heads"]
    slopes = [2.0 ** (-8 * h / H) for h in range(1, H + 1)]  # Press et al.'s geometric slopes
    far = e["repeat_segment_longest"][1]
    bias = [-m * far for m in slopes]
    assert list(e["alibi_slopes_inverse"]) == [round(1 / m) for m in slopes] == [4, 16, 64, 256]
    np.testing.assert_allclose(e["alibi_bias_at_longest_lookup"], bias, rtol=1e-12)
    assert [abs(b) < 1 for b in bias] == [False, False, False, True]  # only the flattest is cheap
    # a near key (distance 0, score s) and the far key (score s + x, bias b): softmax of the two logits
    for b in bias:
        s = 0.7
        for x, equal in ((0.0, False), (-b, True)):
            logits = np.array([s, s + x + b])
            w = np.exp(logits) / np.exp(logits).sum()
            assert bool(abs(w[1] - w[0]) < 1e-12) is equal, (b, x)
    for f0, f1 in zip(FACTORS, FACTORS[1:]):
        assert above(seeds("repeat", "alibi", f0), seeds("repeat", "alibi", f1)), (f0, f1)
    text = ex()
    claim = sentence(text, "only if its score is higher by the whole")
    assert "only the flattest head reaches that far cheaply" in claim
    assert "ALiBi's accuracy on repeat slips as the lookups grow longer" in claim
    assert "Only the flattest head can still reach it" not in text


def test_nope_is_the_only_method_that_failed_at_the_training_length():
    """L210-211 "NoPE is the only method that failed at the training length", L336 "our NoPE models
    did not learn either task", L376 (summary) "NoPE did not learn these tasks in our budget"."""
    for task in TASKS:
        for m in ("sinusoidal", "learned", "rope", "alibi"):
            assert max(seeds(task, "none", 1)) < 0.5 < min(seeds(task, m, 1)), (task, m)
            assert above(seeds(task, m, 1), seeds(task, "none", 1))
    text = ex()
    assert "NoPE is the only method that failed at the training length" in text
    assert "did not learn either task at the training length" in sentence(text, "We could not test that claim")
    assert "NoPE did not learn these tasks in our budget" in text


def test_nope_was_above_chance_and_still_learning():
    """L338-341: NoPE "clearly above chance ... but slow to learn: its training loss was still falling
    when training stopped"."""
    runs = stored_runs()
    chance = 1 / runs["config"]["tasks"]["kback"]["vocab"]
    assert data("extrapolation_accuracy")["chance"]["kback"] == pytest.approx(chance)
    assert min(seeds("kback", "none", 1)) > 10 * chance
    for r in runs["extrapolation"]["training"]:
        if r["method"] == "none":
            c = r["loss_curve"]
            assert c[3 * len(c) // 4] - c[-1] > 0.05, (r["task"], r["seed"])  # still falling in the last quarter
            assert c[-1] > 1.0  # far from done
    claim = sentence(ex(), "NoPE was clearly above chance")
    assert "{{ value extrapolation_accuracy chance.kback .2f round=nearest }}" in claim
    assert "its training loss was still falling when training stopped" in ex()


# --- where along the sequence it breaks ---------------------------------------------------------------

def test_where_along_the_sequence_each_method_breaks_on_kback():
    """L218-226: RoPE and sinusoidal perfect in the trained block and fall in the next; RoPE falls
    again after it; ALiBi's line nearly flat after the first block."""
    p = data("extrapolation_positions")["accuracy"]["kback"]
    for m in ("rope", "sinusoidal"):
        assert p[m]["min"][0] == 1.0 and p[m]["max"][1] < p[m]["min"][0], m
    assert p["rope"]["max"][2] < p["rope"]["min"][1]  # "and then": ranges apart
    a = p["alibi"]["mean"][1:]
    assert max(a) - min(a) < 0.1
    assert p["rope"]["mean"][1] - p["rope"]["mean"][-1] > 5 * (max(a) - min(a))  # flat beside RoPE's fall
    text = ex()
    assert "RoPE and sinusoidal are perfect in the first block" in text
    assert "fall in the very next one" in text
    assert "ALiBi's line is nearly flat after the first block" in text


def test_alibi_is_weakest_where_the_repeat_lookups_are_longest():
    """L227-229: on repeat at 8x ALiBi is weakest in the earliest scored block, where only the
    sequences with the longest segments have scored positions."""
    from mhalib.models.tiny_tasks import make_batch

    p = data("extrapolation_positions")
    L, T = p["L_train"], p["length"]
    a = p["accuracy"]["repeat"]["alibi"]
    first = next(i for i, v in enumerate(a["mean"]) if v is not None)
    assert first * L == p["repeat_first_scored"] == T // 2  # the repeat starts at T - n >= T - T/2
    assert all(a["max"][first] < a["min"][i] for i in range(first + 1, len(a["mean"])))
    # the repeat occupies the last n positions: a block starting at b is scored only if n > T - b - L
    batch = make_batch("repeat", 64, T, vocab=192, rng=0)
    n = T - batch["scored"].argmax(1)  # where scoring starts, from the end
    lookups = {}
    for blk in (first, len(a["mean"]) - 1):
        rows = batch["scored"][:, blk * L:(blk + 1) * L].any(1)
        lookups[blk] = n[rows]
    assert lookups[first].min() > T - (first + 1) * L  # only the longest segments
    assert lookups[first].mean() > lookups[len(a["mean"]) - 1].mean()
    assert "ALiBi is weakest in the earliest scored block" in ex()
    assert "only the sequences with the longest segments" in ex()


# --- what the heads do at 4x --------------------------------------------------------------------------

def test_three_heads_are_perfect_diagonals_and_nope_and_alibi_have_none():
    """L242-243 "sinusoidal, learned and RoPE heads are perfect diagonals", L260-263 "The NoPE and ALiBi
    models have no sharp 'three back' head at all", each score recomputed from the short map."""
    am = data("extrapolation_attention_maps")
    k = am["k"]
    for p in am["panels"]:
        A = p["short"]
        by_hand = np.mean([A[i, i - k] for i in range(k, A.shape[0])])
        assert p["score_short"] == pytest.approx(by_hand)
        if p["method"] in TRAINED:
            assert by_hand > 0.99, p["method"]
        else:
            assert by_hand < 0.2, p["method"]
    text = ex()
    assert "the sinusoidal, learned and RoPE heads are perfect diagonals" in text
    claim = sentence(text, "The NoPE and ALiBi models have no sharp")
    assert "{{ value extrapolation_attention_maps by_method.none.score_short .2f round=nearest }}" in claim


def test_the_sinusoidal_head_scatters_at_4x():
    """L243-246: at 4x the sinusoidal head's weight three back falls, and its queries look in many
    different places (the most common offset takes under a tenth of them)."""
    s = data("extrapolation_attention_maps")["by_method"]["sinusoidal"]
    assert s["score_short"] > 0.99 and s["score_long"] < 0.1
    offsets = dict(s["long_top_offsets"])
    assert max(offsets.values()) < 0.1 and 3 not in offsets
    claim = sentence(ex(), "the sinusoidal head scatters its attention")
    assert "falls from {{ value extrapolation_attention_maps by_method.sinusoidal.score_short .3f round=nearest }}" in claim


def test_the_rope_head_draws_two_lines_and_only_the_fourth_plane_tells_them_apart():
    """L246-266: the RoPE head looks 3 back or 60 back; 60 - 3 positions are nearly whole turns of the
    three fastest planes; the slowest planes hardly turn over that distance; only the fourth plane is
    further from a whole turn, and no trained offset turned it that far."""
    am, r = data("extrapolation_attention_maps"), data("extrapolation_rope_scaling")
    a, k, L = am["rope_alias"], am["k"], am["L_train"]
    assert a["share_k"] > 0.4 and a["share"] > 0.4 and a["share"] + a["share_k"] > 0.9  # two lines
    omega = rope_omega(r["d_head"])
    turns = (a["offset"] - k) * omega / (2 * math.pi)
    error = np.abs(turns - np.round(turns))
    np.testing.assert_allclose(a["turns"], turns[:3], rtol=1e-12)
    assert a["max_turn_error"] == pytest.approx(error[:3].max()) and a["max_turn_error"] < 0.15
    assert np.all(turns[4:] < 0.1)  # the slowest planes hardly turn
    assert [bool(e > a["max_turn_error"] + 1e-9) for e in error] == [False, False, False, True] + [False] * 4
    assert (a["offset"] * omega[3]) % (2 * math.pi) > (L - 1) * omega[3]  # an angle never seen in training
    assert r["n_planes"] == len(omega)
    text = ex()
    assert "it draws **two** lines" in text
    claim = sentence(text, "That leaves the fourth plane")
    assert ("the only one of the head's {{ value extrapolation_rope_scaling n_planes }} planes more than "
            "{{ value extrapolation_attention_maps rope_alias.max_turn_error .2f round=up }} from a whole turn") in claim
    assert "The slowest planes hardly turn over that distance" in text
    assert "Only the slower planes tell them apart" not in text


# --- fixing RoPE without retraining -------------------------------------------------------------------

def test_interpolation_turns_three_back_into_one_and_a_half_and_looks_in_the_wrong_place():
    """L305-310 and the quiz L386-392: at 2x interpolation turns the fastest plane by 3 * omega_0 / 2 =
    1.5 rad, which in training meant 1.5 positions; accuracy at 2x fell, below plain RoPE, every seed."""
    r = data("extrapolation_rope_scaling")
    omega0 = rope_omega(r["d_head"])[0]
    assert r["omega"][0] == omega0 == 1.0
    assert r["pi_angle_k_2x"] == pytest.approx(r["k"] * omega0 / 2) == 1.5
    assert r["pi_positions_k_2x"] == pytest.approx(r["pi_angle_k_2x"] / omega0)
    plain, interp = by_seed("kback", "rope", 2), by_seed("kback", "rope", 2, "interpolation")
    assert all(interp[s] < plain[s] for s in plain)
    assert max(interp.values()) < 0.1 < min(seeds("kback", "rope", 1))
    text = ex()
    assert "{{ value extrapolation_rope_scaling pi_positions_k_2x }} positions: the model looks in the wrong place" in text
    quiz = sentence(text, "kback head looks in the wrong place")
    assert "accuracy at 2× fell to {{ value extrapolation_rope_scaling accuracy.kback.interpolation.mean.1 .2f round=nearest }}" in quiz


def test_ntk_on_repeat_helped_most_at_2x_and_left_accuracy_low_beyond():
    """L297-300: on repeat NTK-aware scaling "helped most at 2×" (the same models, seed by seed: the gain
    shrinks with the length) and "at 4× and 8× it raised accuracy only to" low values."""
    gain = {f: [by_seed("repeat", "rope", f, "ntk")[s] - by_seed("repeat", "rope", f)[s] for s in (0, 1, 2)]
            for f in LONGER}
    for s in range(3):
        assert gain[2][s] > gain[4][s] > gain[8][s] > 0, s
    assert above(seeds("repeat", "rope", 2, "ntk"), seeds("repeat", "rope", 4, "ntk") + seeds("repeat", "rope", 8, "ntk"))
    assert max(seeds("repeat", "rope", 4, "ntk")) < 0.2 and max(seeds("repeat", "rope", 8, "ntk")) < 0.1
    claim = sentence(ex(), "On repeat it helped most at 2×")
    assert "raised accuracy only to {{ value extrapolation_rope_scaling accuracy.repeat.ntk.mean.2 .2f round=nearest }}" in claim
    assert "and little beyond" not in ex()


def test_summary_ntk_helped_and_interpolation_did_not():
    """L374-375 (summary): "NTK-aware base scaling helped here, position interpolation without
    fine-tuning did not": the same models, seed by seed, at every longer length."""
    for task in TASKS:
        for f in LONGER:
            plain, ntk = by_seed(task, "rope", f), by_seed(task, "rope", f, "ntk")
            interp = by_seed(task, "rope", f, "interpolation")
            assert all(ntk[s] > plain[s] for s in plain), (task, f)
            assert all(interp[s] < max(plain[s], 0.05) for s in plain), (task, f)
    assert "NTK-aware base scaling helped here, position interpolation without fine-tuning did not" in ex()


# --- compared with the published studies, the summary and the quiz ------------------------------------

def alibi_lost_least_of_its_own_accuracy(task: str) -> None:
    """ALiBi keeps the largest share of its own 1x accuracy at every longer length, seed by seed."""
    for f in LONGER:
        kept = {m: [by_seed(task, m, f)[s] / by_seed(task, m, 1)[s] for s in (0, 1, 2)]
                for m in ("none", "sinusoidal", "rope", "alibi")}
        for m in ("none", "sinusoidal", "rope"):
            assert above(kept["alibi"], kept[m]), (task, f, m)


def test_alibi_lost_least_on_repeat_and_rope_and_sinusoidal_fell_at_2x():
    """L321-323, the summary L362-363 and compare.md L145-146: on repeat ALiBi lost least of its own
    accuracy past the training length; sinusoidal and RoPE fell at 2x."""
    alibi_lost_least_of_its_own_accuracy("repeat")
    for m in ("sinusoidal", "rope"):
        assert min(seeds("repeat", m, 1)) - max(seeds("repeat", m, 2)) > 0.4, m
    text = ex()
    claim = sentence(text, "Our run points the same way on repeat")
    assert "ALiBi lost least of its own accuracy past the training length" in claim
    assert "sinusoidal and RoPE fell at 2×" in claim
    summary = sentence(text, "tested at up to")
    assert "ALiBi lost least of its own accuracy on repeat" in summary
    assert "RoPE and sinusoidal fell right past the training length" in summary
    bullet = cmp()[cmp().index("Our own small test"):cmp().index("The honest summary")]
    assert "ALiBi lost least of its own accuracy and RoPE and sinusoidal fell at 2×" in bullet


def test_on_kback_the_run_agrees_only_from_4x_and_ntk_beat_alibi_at_2x():
    """L323-324 "On kback it agrees only from 4× on: at 2× it cannot rank plain RoPE and ALiBi, and
    RoPE with NTK-aware scaling did better than ALiBi"; the summary L363-365; compare.md L146-148."""
    rope2, alibi2, ntk2 = seeds("kback", "rope", 2), seeds("kback", "alibi", 2), seeds("kback", "rope", 2, "ntk")
    assert not above(rope2, alibi2) and not above(alibi2, rope2)
    assert above(ntk2, alibi2)
    assert not above(ntk2, rope2)  # ranges overlap: NTK is above plain RoPE only model by model
    plain, ntk = by_seed("kback", "rope", 2), by_seed("kback", "rope", 2, "ntk")
    assert all(ntk[s] > plain[s] for s in plain)  # "raised every RoPE model's score"
    for f in (4, 8):
        for m in ("none", "sinusoidal", "rope"):
            assert above(seeds("kback", "alibi", f), seeds("kback", m, f)), (f, m)
    for f in LONGER:
        assert all(by_seed("kback", "rope", f, "interpolation")[s] < plain_s
                   for s, plain_s in by_seed("kback", "rope", f).items())  # interpolation did not help
    text = ex()
    claim = sentence(text, "On kback it agrees only from 4× on")
    assert "at 2× it cannot rank plain RoPE and ALiBi" in claim
    assert "RoPE with NTK-aware scaling did better than ALiBi" in claim
    summary = sentence(text, "tested at up to")
    assert "could not be told apart at 2×, where RoPE with NTK-aware scaling beat ALiBi and raised every RoPE model's score" in summary
    assert "did better than both" not in text
    bullet = cmp()[cmp().index("Our own small test"):cmp().index("The honest summary")]
    for phrase in ("plain RoPE and ALiBi could not be told apart at 2×", "ALiBi was ahead of plain RoPE from 4× on",
                   "RoPE with NTK-aware scaling beat ALiBi at 2×", "(position interpolation did not help)"):
        assert phrase in bullet, phrase
    assert "beat both" not in cmp()


def test_alibi_did_not_stay_flat():
    """L324-328: "ALiBi did not stay flat here: it lost ... on repeat between 1× and 8×"."""
    assert above(seeds("repeat", "alibi", 1), seeds("repeat", "alibi", 8))
    assert min(seeds("repeat", "alibi", 1)) - max(seeds("repeat", "alibi", 8)) > 0.1
    claim = sentence(ex(), "ALiBi did not stay flat here")
    assert "{{ value extrapolation_accuracy accuracy.repeat.alibi.mean.0 .2f round=nearest }} −" in claim


def test_summary_alibi_had_not_finished_learning():
    """L366-369 (summary): final kback loss of ALiBi's models, "near zero for the sinusoidal, learned and
    RoPE models"; their losses were still falling when training stopped."""
    alibi = final_losses("kback", "alibi")
    others = [x for m in TRAINED for x in final_losses("kback", m)]
    assert min(alibi) > 0.25 and max(others) < 1e-3
    for r in stored_runs()["extrapolation"]["training"]:
        if r["method"] == "alibi":
            c = r["loss_curve"]
            assert c[3 * len(c) // 4] > c[-1], (r["task"], r["seed"])
    text = ex()
    summary = sentence(text, "models had not finished learning at the training length")
    assert "near zero for the sinusoidal, learned and RoPE models" in summary
    assert "near zero for the others" not in text


def test_quiz_alibi_below_rope_at_1x_and_above_at_8x():
    """L394-403: "Why did ALiBi score lower than RoPE at the training length, yet higher at 8×?" holds on
    both tasks with the seeds' ranges apart; ALiBi's loss ended at 0.40 or more, RoPE's near zero;
    "ALiBi loses little" (it keeps three quarters of its own accuracy), RoPE is exact at 1x."""
    for task in TASKS:
        assert above(seeds(task, "rope", 1), seeds(task, "alibi", 1)), task
        assert above(seeds(task, "alibi", 8), seeds(task, "rope", 8)), task
        kept = [by_seed(task, "alibi", 8)[s] / by_seed(task, "alibi", 1)[s] for s in (0, 1, 2)]
        assert min(kept) > 0.75, (task, kept)  # each model keeps three quarters of its own accuracy
        assert seeds(task, "rope", 1) == [1.0, 1.0, 1.0]
    assert min(final_losses("repeat", "alibi")) > 0.3 > 0.001 > max(final_losses("repeat", "rope"))
    text = ex()
    assert "Why did ALiBi score lower than RoPE at the training length, yet higher at 8×?" in text
    answer = text[text.index("Why did ALiBi score lower than RoPE"):text.index("## Further reading")]
    assert "ALiBi loses little" in answer and "RoPE's near zero" in answer
    assert "{{ value extrapolation_accuracy accuracy.repeat.alibi.mean.3 .2f round=nearest }} at 8×" in answer


# --- compare.md ----------------------------------------------------------------------------------------

def test_compare_honest_summary_separates_the_literature_from_our_run():
    """compare.md L151-156: what the published studies show, and what our run shows: plain RoPE fell past
    the training length, NTK-aware scaling raised every model, learned tables could not run, and about
    ALiBi the run says little because its models had not finished learning."""
    for task in TASKS:
        for f in LONGER:
            assert max(seeds(task, "rope", f)) < min(seeds(task, "rope", 1)), (task, f)
            plain, ntk = by_seed(task, "rope", f), by_seed(task, "rope", f, "ntk")
            assert all(ntk[s] > plain[s] for s in plain), (task, f)
            assert seeds(task, "learned", f) == [None, None, None]
        assert max(seeds(task, "rope", 4)) < min(seeds(task, "rope", 1)) - 0.3
        assert min(final_losses(task, "alibi")) > 5 * max(x for m in TRAINED for x in final_losses(task, m))
    text = cmp()
    summary = text[text.index("The honest summary"):text.index("??? note")]
    assert "in the published studies all of these methods work within the training length" in summary
    assert "Our own run agrees about RoPE and learned tables" in summary
    assert "NTK-aware scaling raised every one of them" in summary
    assert "About ALiBi it says little" in summary and "had not finished learning" in summary
    assert "all of these work within the training length; beyond it" not in text


def test_compare_shaw_pairs_beyond_the_clipping_distance():
    """compare.md L57-60: for T = 12 and k = 4, the pairs with |j - i| > k, counted by hand."""
    s = data("shaw_clipping")
    T, k = s["T"], s["k"]
    beyond = sum(1 for i in range(T) for j in range(T) if abs(j - i) > k)
    assert beyond == 56 and s["n_pairs"] == T * T
    assert s["share_clipped"] == pytest.approx(beyond / (T * T))
    claim = sentence(cmp(), "lie beyond the clipping distance")
    assert "{{ value shaw_clipping share_clipped .0% round=nearest }}" in claim and "{{ value shaw_clipping n_pairs }}" in claim


def test_compare_t5_buckets_widen_geometrically_until_the_cap():
    """compare.md L69 "The buckets widen with the distance", L88 "width grows geometrically until M",
    L100-104 "(the floor reaches the cap before M)" and "bucket 16 is never used"."""
    t = data("t5_buckets")
    M = t["max_distance"]
    for mode, n_half in (("bidirectional", t["num_buckets"] // 2), ("causal", t["num_buckets"])):
        ranges = t["backward_ranges"][mode]
        e = n_half // 2
        widths = [r["hi"] - r["lo"] + 1 for r in ranges[:-1]]  # the last runs on to the plotted span
        # they widen: one position each below e, then wider, up to rounding of the integer starts
        assert widths[:e] == [1] * e and all(w1 >= w0 - 1 for w0, w1 in zip(widths, widths[1:])), mode
        assert all(widths[i + 2] >= widths[i] for i in range(e - 1, len(widths) - 2)), mode
        assert widths[-1] > 10 * widths[0], mode
        # geometric: bucket e + s starts at about e (M/e)^(s/(n'-e)), a constant ratio per bucket
        for s in range(1, n_half - e):
            assert ranges[e + s]["lo"] == math.ceil(e * (M / e) ** (s / (n_half - e))), (mode, s)
    # bidirectional: the last bucket (15) starts where the floor reaches 7, r >= 8 * 16^(7/8), below M
    bi = t["backward_ranges"]["bidirectional"]
    assert bi[-1]["bucket"] == 15 and bi[-1]["lo"] == math.ceil(8 * 16 ** (7 / 8)) == 91 < M
    # a key after the query has r >= 1 and adds 16: bucket 16 would need r = 0, which is "at or before"
    assert t["unused"]["bidirectional"] == [16] and t["first_after"] == 17
    text = cmp()
    assert "The buckets widen with the distance" in text
    assert "buckets whose width grows geometrically until \\(M\\)" in text
    claim = sentence(text, "(the floor reaches the cap")
    assert "{{ value t5_buckets backward_ranges.bidirectional.15.lo }}" in claim
    assert "(the floor reaches the cap before \\(M\\))" in claim
    assert "{{ value t5_buckets unused.bidirectional.0 }} is never used" in text
