"""The experiment figures' data(), checked against the stored results
(figures/data/tiny_decoders.json) and, for the attention maps, against the torch model run
on the stored weights: each number recomputed here by a separate path."""
from __future__ import annotations

import json
import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from pathlib import Path

import numpy as np
import pytest

import figures
from mhalib.models.tiny_numpy import TinyConfig
from mhalib.models.tiny_tasks import make_batch

ROOT = Path(__file__).resolve().parents[1]
RESULTS = json.loads((ROOT / "figures" / "data" / "tiny_decoders.json").read_text())
NPZ = ROOT / "figures" / "data" / "tiny_decoders_weights.npz"
C = RESULTS["config"]
L0 = C["L_train"]
LENGTHS = [f * L0 for f in C["eval_factors"]]


def _records(task, method, length, scaling=None):
    out = [r for r in RESULTS["extrapolation"]["records"] if r["task"] == task and r["method"] == method
           and r["length"] == length and r["scaling"] == scaling]
    assert len(out) == len(C["seeds"])
    return sorted(out, key=lambda r: r["seed"])


def _torch_model(key):
    torch = pytest.importorskip("torch")
    from mhalib.models.tiny import TinyDecoder

    info = RESULTS["weights"]["models"][key]
    cfg = TinyConfig.from_dict(info["config"])
    with np.load(NPZ) as z:
        w = {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith(key + "/")}
    return torch, TinyDecoder(cfg).double().load_numpy_weights(w)


def test_extrapolation_accuracy():
    d = figures.load("extrapolation_accuracy").data()
    assert d["lengths"] == LENGTHS and d["n_seeds"] == len(C["seeds"]) >= 3
    for task in C["tasks"]:
        for m in C["methods"]:
            for i, L in enumerate(LENGTHS):
                accs = [r["accuracy"] for r in _records(task, m, L)]
                if m == "learned" and L > L0:
                    assert d["accuracy"][task][m]["mean"][i] is None and set(accs) == {None}
                    continue
                assert d["accuracy"][task][m]["mean"][i] == pytest.approx(sum(accs) / len(accs))
                assert d["accuracy"][task][m]["min"][i] == min(accs)
                assert d["accuracy"][task][m]["max"][i] == max(accs)
    assert d["wall_time_min"] == pytest.approx(RESULTS["wall_time_s"] / 60)
    assert d["n_models"] == len(C["tasks"]) * len(C["methods"]) * len(C["seeds"])


def test_extrapolation_positions():
    d = figures.load("extrapolation_positions").data()
    longest = LENGTHS[-1]
    assert d["length"] == longest and d["bucket_starts"] == list(range(0, longest, L0))
    for task in C["tasks"]:
        assert "learned" not in d["accuracy"][task]  # not defined at 8x
        for m, s in d["accuracy"][task].items():
            recs = _records(task, m, longest)
            for b in range(longest // L0):
                vals = [r["accuracy_buckets"][b] for r in recs]
                if vals[0] is None:
                    assert s["mean"][b] is None
                else:
                    assert s["mean"][b] == pytest.approx(np.mean(vals))
                    assert s["min"][b] <= s["mean"][b] <= s["max"][b]
    # repeat: the first block of an 8x sequence lies before the segment's repeat, so nothing is scored there
    assert all(s["mean"][0] is None for s in d["accuracy"]["repeat"].values())


def test_extrapolation_rope_scaling():
    d = figures.load("extrapolation_rope_scaling").data()
    d_head = C["model"]["d_model"] // C["model"]["n_heads"]
    assert d["d_head"] == d_head and d["ntk_exponent"] == pytest.approx(d_head / (d_head - 2))
    assert d["ntk_base_8x"] == pytest.approx(10000 * 8 ** (d_head / (d_head - 2)))
    for task in C["tasks"]:
        plain0 = np.mean([r["accuracy"] for r in _records(task, "rope", L0)])
        for name in ("none", "interpolation", "ntk"):
            s = d["accuracy"][task][name]
            assert s["mean"][0] == pytest.approx(plain0)  # at 1x every scaling is the plain model
            for i, L in enumerate(LENGTHS[1:], start=1):
                accs = [r["accuracy"] for r in _records(task, "rope", L, None if name == "none" else name)]
                assert s["mean"][i] == pytest.approx(np.mean(accs))


def test_extrapolation_table():
    mod = figures.load("extrapolation_table")
    for task in C["tasks"]:
        d = mod.data(task=task)
        assert len(d["rows"]) == len(C["methods"]) + 2 and {r["task"] for r in d["rows"]} == {task}
        md = mod.table(d)
        lines = md.splitlines()
        assert len(lines) == 2 + len(d["rows"])
        learned = [l for l in lines if l.startswith("| learned |")]
        assert len(learned) == 1 and learned[0].count("not defined") == len(LENGTHS) - 1
        accs = [r["accuracy"] for r in _records(task, "rope", 2 * L0)]
        # the range rounded outward by hand: the lowest seed down, the highest up
        lo, hi = (f"{Decimal(x).quantize(Decimal('0.01'), rounding=r)}" for x, r in ((min(accs), ROUND_FLOOR),
                                                                                  (max(accs), ROUND_CEILING)))
        lo, hi = (x[1:] if x.startswith("0.") else x for x in (lo, hi))
        assert f"| {np.mean(accs):.2f} [{lo}–{hi}] |" in md
    with pytest.raises(ValueError, match="task"):
        mod.data(task="copy")


def test_extrapolation_attention_maps():
    d = figures.load("extrapolation_attention_maps").data()
    k = C["tasks"]["kback"]["k"]
    assert d["k"] == k and d["T"] == 4 * L0
    tokens = make_batch("kback", 1, d["T"], vocab=C["tasks"]["kback"]["vocab"], rng=7, k=k)["tokens"]
    for p in d["panels"]:
        short = np.asarray(p["short"])
        assert short.shape == (L0, L0)
        assert np.allclose(short.sum(-1), 1.0) and np.all(np.triu(short, 1) == 0)  # causal rows
        assert p["score_short"] == pytest.approx(np.mean([short[i, i - k] for i in range(k, L0)]))
        torch, model = _torch_model(f"kback_{p['method']}")
        if p["method"] == "learned":
            assert not p["defined"] and p["long"] is None
            continue
        with torch.no_grad():
            _, maps = model(torch.as_tensor(tokens), return_attention=True)
        A = maps[p["layer"] - 1][0, p["head"] - 1].numpy()  # (T, T), by torch
        assert np.allclose(np.asarray(p["long"]), A[d["T"] - L0:], atol=1e-6)
        assert p["score_long"] == pytest.approx(np.mean([A[i, i - k] for i in range(L0, d["T"])]), abs=1e-6)


def test_induction_loss_curve():
    d = figures.load("induction_loss_curve").data()
    assert d["n_seeds"] == len(C["induction"]["seeds"])
    assert d["chance_loss"] == pytest.approx(math.log(C["induction"]["vocab"]))
    for run, r in zip(d["runs"], RESULTS["induction"]):
        losses = [cp["loss"] for cp in r["checkpoints"]]
        assert run["loss"] == losses
        i = int(np.argmax(-np.diff(losses)))
        assert run["steepest_from"] == r["checkpoints"][i]["step"]
        # the page's story: the loss falls, and the steepest fall lies between "before" and "after"
        assert run["loss_before"] > run["loss_after"] and run["loss_end"] < 0.25 * run["loss_start"]
        assert run["before"] <= run["steepest_from"] < run["after"]


def test_induction_scores():
    d = figures.load("induction_scores").data()
    run = next(r for r in RESULTS["induction"] if r["seed"] == C["stored_seed"])
    prev = np.array([cp["previous_token"] for cp in run["checkpoints"]])
    ind = np.array([cp["induction"] for cp in run["checkpoints"]])
    assert np.array_equal(d["previous_token"], prev) and np.array_equal(d["induction"], ind)
    assert d["best_prev_head"] == int(np.argmax(prev[-1, 0])) + 1
    assert d["best_ind_head"] == int(np.argmax(ind[-1, 1])) + 1
    # the page's story: both scores jump across the drop
    assert d["prev_after"] > d["prev_before"] + 0.15
    assert d["ind_after"] > d["ind_before"] + 0.3


def test_induction_attention_maps():
    d = figures.load("induction_attention_maps").data()
    tokens = np.asarray(d["tokens"])
    n, s0, r0 = d["segment_length"], d["segment_start"], d["repeat_start"]
    assert r0 == s0 + n and s0 + 2 * n == d["T"]
    assert np.array_equal(tokens[s0:r0], tokens[r0:])
    for p in d["panels"]:
        torch, model = _torch_model(f"induction_{p['when']}")
        with torch.no_grad():
            _, maps = model(torch.as_tensor(tokens[None]), return_attention=True)
        A1 = maps[0][0, d["prev_head"] - 1].numpy()
        A2 = maps[1][0, d["ind_head"] - 1].numpy()
        assert np.allclose(p["layer1"], A1, atol=1e-6) and np.allclose(p["layer2"], A2, atol=1e-6)
        assert p["prev_score"] == pytest.approx(np.mean([A1[i, i - 1] for i in range(1, d["T"])]), abs=1e-6)
        # induction: query i in the repeat attends to key i - n + 1, the token after its earlier copy
        assert p["ind_score"] == pytest.approx(np.mean([A2[i, i - n + 1] for i in range(r0, d["T"])]), abs=1e-6)
    before, after = d["panels"]
    assert after["ind_score"] > before["ind_score"] and after["prev_score"] > before["prev_score"]


def test_the_qualitative_claims_of_the_pages_hold():
    """docs/compare.md and docs/extrapolation.md state these in words; a re-run that broke one
    must fail here rather than leave a wrong sentence on the site."""
    def mean(task, method, L, scaling=None):
        return float(np.mean([r["accuracy"] for r in _records(task, method, L, scaling)]))

    longest = LENGTHS[-1]
    for task in C["tasks"]:
        # ALiBi has the highest mean at 8x (rankings by the seeds' ranges: tests/test_claims.py)
        assert mean(task, "alibi", longest) == max(mean(task, m, longest) for m in C["methods"] if m != "learned")
        # RoPE is fine at 1x and falls off past it; NTK-aware scaling helps at every longer length,
        # position interpolation helps at none (worse, or both near zero)
        assert mean(task, "rope", L0) > 0.95 and mean(task, "rope", longest) < 0.5
        for L in LENGTHS[1:]:
            assert mean(task, "rope", L, "ntk") > mean(task, "rope", L)
            assert mean(task, "rope", L, "interpolation") < max(mean(task, "rope", L), 0.05)
        # NoPE never learnt either task at the training length
        assert mean(task, "none", L0) < 0.5
    # sinusoidal and learned learnt both at the training length; sinusoidal fell off past it
    for task in C["tasks"]:
        for m in ("sinusoidal", "learned"):
            assert mean(task, m, L0) > 0.95
        assert mean(task, "sinusoidal", 2 * L0) < 0.6


def test_the_constants_the_pages_write_in_words():
    """docs/extrapolation.md and docs/induction.md say "1x, 2x, 4x and 8x", "three back",
    "base 10000", "seed 0", two layers, and draw one panel per layer-1/layer-2 head."""
    assert C["eval_factors"] == [1, 2, 4, 8]
    assert C["tasks"]["kback"]["k"] == 3 and C["stored_seed"] == 0
    assert C["model"]["n_layers"] == 2 and C["induction"]["model"]["n_layers"] == 2
    assert C["induction"]["model"]["d_ff"] == 0  # attention-only
    for info in RESULTS["weights"]["models"].values():
        assert info["config"]["rope_base"] == 10000.0
    d = figures.load("induction_loss_curve").data()
    assert d["stored"]["window"] == d["stored"]["after"] - d["stored"]["before"]
