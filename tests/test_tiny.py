"""The tiny decoders of the experiment pages: RoPE's inference-time scalings, the synthetic
tasks, the head scores, the torch model against mhalib's numpy forward pass, deterministic
training, and the stored results (figures/data/tiny_decoders.json and its weights)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import mhalib
from mhalib.models import head_analysis as ha
from mhalib.models import tiny_numpy
from mhalib.models.tiny_numpy import METHODS, TinyConfig
from mhalib.models.tiny_tasks import make_batch, repeat_segment_range

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "figures" / "data"
JSON_PATH = DATA / "tiny_decoders.json"
NPZ_PATH = DATA / "tiny_decoders_weights.npz"


def _tool():
    from tools import train_tiny

    return train_tiny


# ---- RoPE scalings, against values derived by hand ---------------------------------------------

def test_position_interpolation_divides_every_frequency_by_the_factor():
    # d = 8: theta_i = 10000^(-2i/8) = 1, 0.1, 0.01, 0.001; interpolation with s = 4 divides by 4
    assert np.allclose(mhalib.rope_frequencies(8, scaling="interpolation", factor=4.0),
                       [0.25, 0.025, 0.0025, 0.00025], rtol=1e-12)


def test_ntk_scaling_raises_the_base_by_s_to_the_d_over_d_minus_2():
    # d = 8, s = 4: base' = 10000 * 4^(8/6); theta'_i = base'^(-i/4) = 10^(-i) * 4^(-i/3)
    expected = [1.0, 0.1 * 4 ** (-1 / 3), 0.01 * 4 ** (-2 / 3), 0.001 / 4]
    assert np.allclose(mhalib.rope_frequencies(8, scaling="ntk", factor=4.0), expected, rtol=1e-12)
    # the slowest plane is interpolated exactly, the fastest untouched
    plain = mhalib.rope_frequencies(64)
    ntk = mhalib.rope_frequencies(64, scaling="ntk", factor=8.0)
    assert ntk[0] == plain[0] and ntk[-1] == pytest.approx(plain[-1] / 8, rel=1e-12)
    assert np.allclose(ntk, mhalib.rope_frequencies(64, base=10000.0 * 8.0 ** (64 / 62)), rtol=1e-12)


def test_scaled_apply_rope_equals_plain_rope_at_divided_positions_or_a_larger_base():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 40, 8))  # (B, H, T, d)
    pos = np.arange(40.0)
    s = 40 / 16
    assert np.allclose(mhalib.apply_rope(x, pos, scaling="interpolation", factor=s), mhalib.apply_rope(x, pos / s))
    assert np.allclose(mhalib.apply_rope(x, pos, scaling="ntk", factor=s),
                       mhalib.apply_rope(x, pos, base=10000.0 * s ** (8 / 6)))
    # interpolation keeps every angle within what 16 training positions saw
    assert (pos.max() / s) * mhalib.rope_frequencies(8)[0] < 16
    # factor 1 changes nothing
    assert np.array_equal(mhalib.apply_rope(x, pos, scaling="ntk", factor=1.0), mhalib.apply_rope(x, pos))


@pytest.mark.parametrize("kwargs, name", [
    (dict(factor=2.0), "factor"),
    (dict(scaling="yarn", factor=2.0), "scaling"),
    (dict(scaling="interpolation", factor=0.5), "factor"),
    (dict(scaling="ntk", factor=-1.0), "factor"),
    (dict(scaling="ntk", factor=float("nan")), "factor"),
])
def test_bad_scaling_arguments_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        mhalib.rope_frequencies(8, **kwargs)
    with pytest.raises(ValueError, match=name):
        mhalib.apply_rope(np.ones((3, 8)), **kwargs)


def test_ntk_needs_more_than_one_plane_and_scaling_must_be_text():
    with pytest.raises(ValueError, match="d_head"):
        mhalib.rope_frequencies(2, scaling="ntk", factor=2.0)
    with pytest.raises(TypeError, match="scaling"):
        mhalib.rope_frequencies(8, scaling=1, factor=2.0)


# ---- tasks --------------------------------------------------------------------------------------

def test_repeat_task_repeats_a_segment_of_distinct_tokens():
    b = make_batch("repeat", 20, 32, vocab=40, rng=3)
    n_min, n_max = repeat_segment_range(32)
    assert (n_min, n_max) == (8, 16)
    seen_n = set()
    for toks, tgt, sc in zip(b["tokens"], b["targets"], b["scored"]):
        pos = np.flatnonzero(sc)
        n = len(pos) + 1  # the repeat has n tokens; its last is unscored
        seen_n.add(n)
        r = 32 - 2 * n
        assert n_min <= n <= n_max and pos[0] == r + n and pos[-1] == 30
        assert np.array_equal(toks[r:r + n], toks[r + n:])  # the segment, twice
        assert len(set(toks[: r + n].tolist())) == r + n  # prefix and segment distinct
        for i in pos:  # the target is the token after the earlier copy of the current token
            j = int(np.flatnonzero(toks[:i] == toks[i])[0])
            assert tgt[i] == toks[j + 1] == toks[i + 1]
    assert len(seen_n) > 1  # the segment length varies


def test_kback_targets_are_the_tokens_k_back():
    b = make_batch("kback", 3, 10, vocab=5, rng=1, k=3)
    assert np.array_equal(b["targets"][:, 3:], b["tokens"][:, :7])
    assert not b["scored"][:, :3].any() and b["scored"][:, 3:].all()


def test_tasks_are_seeded():
    a, b, c = (make_batch("repeat", 4, 16, vocab=16, rng=s) for s in (7, 7, 8))
    assert np.array_equal(a["tokens"], b["tokens"]) and not np.array_equal(a["tokens"], c["tokens"])


@pytest.mark.parametrize("kwargs, name", [
    (dict(task="copy", n_seqs=1, length=8, vocab=8), "task"),
    (dict(task="repeat", n_seqs=1, length=32, vocab=16), "vocab"),
    (dict(task="repeat", n_seqs=1, length=3, vocab=16), "length"),
    (dict(task="kback", n_seqs=1, length=3, vocab=4, k=3), "length"),
    (dict(task="kback", n_seqs=0, length=8, vocab=4), "n_seqs"),
])
def test_bad_task_arguments_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        make_batch(rng=0, **kwargs)


# ---- head scores ----------------------------------------------------------------------------------

def test_previous_token_score_by_hand():
    T = 5
    shift = np.eye(T, k=-1)
    shift[0, 0] = 1.0
    uniform = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]  # A[i, j] = 1/(i+1)
    s = ha.previous_token_score(np.stack([shift, uniform]))
    assert s[0] == 1.0
    assert s[1] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 4)
    assert ha.previous_token_score(uniform, start=3) == pytest.approx((1 / 4 + 1 / 5) / 2)
    with pytest.raises(ValueError, match="start"):
        ha.previous_token_score(uniform, start=5)


def test_induction_score_by_hand():
    tokens = np.array([7, 1, 2, 3, 1, 2, 3])
    # query 4 (token 1): key 2 follows the earlier 1; query 5 (token 2): key 3; query 6 (token 3): key 4;
    # queries 0-3 hold first occurrences and are not scored
    T = len(tokens)
    perfect = np.zeros((T, T))
    perfect[np.arange(T), np.maximum(np.arange(T) - 1, 0)] = 1.0
    for i, j in ((4, 2), (5, 3), (6, 4)):
        perfect[i] = 0.0
        perfect[i, j] = 1.0
    uniform = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    s = ha.induction_score(np.stack([perfect, uniform]), tokens)
    assert s[0] == 1.0
    assert s[1] == pytest.approx((1 / 5 + 1 / 6 + 1 / 7) / 3)
    with pytest.raises(ValueError, match="tokens"):
        ha.induction_score(np.eye(3), np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="len"):
        ha.induction_score(np.eye(3), tokens)


def test_average_scores_is_the_mean_over_sentences_leaving_out_a_missing_score():
    """Two sentences' scores on two heads: each score's mean by hand; the second sentence has no
    punctuation (NaN, "missing"), so that score is the first sentence's alone, and a score no
    sentence has stays missing."""
    one = {k: np.array([0.2, 0.4]) for k in ha.HEAD_TYPES}
    two = {k: np.array([0.6, 0.0]) for k in ha.HEAD_TYPES}
    two["to punctuation"] = np.array([np.nan, np.nan])
    avg = ha.average_scores([one, two])
    assert set(avg) == set(ha.HEAD_TYPES)
    for key in ha.HEAD_TYPES:
        expected = [0.2, 0.4] if key == "to punctuation" else [(0.2 + 0.6) / 2, (0.4 + 0.0) / 2]
        assert avg[key].tolist() == pytest.approx(expected, abs=1e-15), key
    one["to punctuation"] = np.array([np.nan, np.nan])
    assert np.isnan(ha.average_scores([one, two])["to punctuation"]).all()
    with pytest.raises(ValueError, match=r"need at least one word between \[CLS\] and \[SEP\], got 2 tokens"):
        ha.head_scores(np.eye(2), ["[CLS]", "[SEP]"])


# ---- the model: numpy forward == torch forward --------------------------------------------------

torch = pytest.importorskip("torch")
from mhalib.models import tiny  # noqa: E402  (needs torch)


def _random_model(method, d_ff=16, seed=0):
    torch.manual_seed(seed)
    cfg = TinyConfig(vocab=24, method=method, d_model=16, n_layers=2, n_heads=2, d_ff=d_ff, max_len=20)
    model = tiny.TinyDecoder(cfg)
    with torch.no_grad():  # move every weight off its initial value, so LN gains and biases matter too
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("d_ff", [0, 16])
def test_numpy_forward_equals_torch(method, d_ff):
    model = _random_model(method, d_ff)
    w = model.numpy_weights()
    tokens = make_batch("kback", 3, 20, vocab=24, rng=5)["tokens"]
    ref = tiny.TinyDecoder(model.config).double().load_numpy_weights(w)
    with torch.no_grad():
        logits, maps = ref(torch.as_tensor(tokens), return_attention=True)
        logits32 = model(torch.as_tensor(tokens))
    out = tiny_numpy.forward(w, model.config, tokens)
    assert np.abs(out["logits"] - logits.numpy()).max() < 1e-5
    assert np.abs(out["logits"] - logits32.numpy()).max() < 1e-4  # float32 rounding only
    for a, b in zip(out["attention"], maps):
        assert np.abs(a - b.numpy()).max() < 1e-5


@pytest.mark.parametrize("scaling", ["interpolation", "ntk"])
def test_numpy_forward_equals_torch_with_rope_scaling(scaling):
    model = _random_model("rope")
    w = model.numpy_weights()
    tokens = make_batch("kback", 2, 20, vocab=24, rng=6)["tokens"]
    ref = tiny.TinyDecoder(model.config).double().load_numpy_weights(w)
    with torch.no_grad():
        logits = ref(torch.as_tensor(tokens), rope_scaling=scaling, rope_factor=2.5)
        plain = ref(torch.as_tensor(tokens))
    out = tiny_numpy.forward(w, model.config, tokens, rope_scaling=scaling, rope_factor=2.5)
    assert np.abs(out["logits"] - logits.numpy()).max() < 1e-5
    assert float((logits - plain).abs().max()) > 1e-3  # the scaling does change the model


def test_learned_positions_past_the_table_are_refused_not_padded():
    model = _random_model("learned")
    tokens = np.zeros((1, 21), dtype=np.int64)
    with pytest.raises(ValueError, match="max_len"):
        model(torch.as_tensor(tokens))
    with pytest.raises(ValueError, match="max_positions|learned table"):
        tiny_numpy.forward(model.numpy_weights(), model.config, tokens)


@pytest.mark.parametrize("kwargs, name", [
    (dict(vocab=16, method="relative"), "method"),
    (dict(vocab=16, method="rope", d_model=6, n_heads=2), "d_head"),
    (dict(vocab=16, method="none", d_model=16, n_heads=3), "n_heads"),
    (dict(vocab=0, method="none"), "vocab"),
])
def test_bad_config_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        TinyConfig(**kwargs)


def test_rope_scaling_is_refused_for_other_methods():
    model = _random_model("alibi")
    tokens = np.zeros((1, 4), dtype=np.int64)
    with pytest.raises(ValueError, match="rope_scaling"):
        model(torch.as_tensor(tokens), rope_scaling="ntk", rope_factor=2.0)
    with pytest.raises(ValueError, match="rope_scaling"):
        tiny_numpy.forward(model.numpy_weights(), model.config, tokens, rope_scaling="ntk", rope_factor=2.0)


# ---- training ---------------------------------------------------------------------------------------

def _quick_train(seed, method="rope"):
    tiny.set_deterministic(1)
    cfg = TinyConfig(vocab=16, method=method, d_model=16, n_layers=1, n_heads=2, d_ff=16, max_len=16)
    return tiny.train(cfg, "repeat", length=16, steps=5, batch_size=4, lr=3e-3, seed=seed, warmup=1)


def test_training_is_deterministic_given_the_seed():
    m1, l1 = _quick_train(0)
    m2, l2 = _quick_train(0)
    _, l3 = _quick_train(1)
    assert l1 == l2 and l1 != l3
    assert all(np.array_equal(a, b) for a, b in zip(m1.numpy_weights().values(), m2.numpy_weights().values()))
    fresh = tiny.TinyDecoder(m1.config)  # same seed, no training: every weight has moved since
    torch.manual_seed(0)
    fresh.reset_parameters()
    assert all(not np.array_equal(a, b) for a, b in zip(m1.numpy_weights().values(), fresh.numpy_weights().values())
               if a.std() > 0)


def test_bad_training_arguments_name_the_argument():
    cfg = TinyConfig(vocab=16, method="none", d_model=16, n_layers=1, n_heads=2)
    for kwargs, name in ((dict(steps=0), "steps"), (dict(lr=-1.0), "lr"), (dict(batch_size=0), "batch_size")):
        args = dict(length=16, steps=2, batch_size=2, lr=1e-3, seed=0) | kwargs
        with pytest.raises(ValueError, match=name):
            tiny.train(cfg, "repeat", **args)


def test_evaluate_buckets_by_position():
    model, _ = _quick_train(0, "none")
    batch = make_batch("kback", 4, 24, vocab=16, rng=2, k=3)
    r = tiny.evaluate(model, batch, bucket=8)
    assert len(r["accuracy_buckets"]) == 3 and 0.0 <= r["accuracy"] <= 1.0
    # the overall accuracy is the buckets' average weighted by their scored positions (5, 8, 8)
    assert r["accuracy"] == pytest.approx(np.average(r["accuracy_buckets"], weights=[5, 8, 8]))


def test_drop_checkpoints_find_the_plateau_and_the_floor():
    tool = _tool()
    losses = [4.0, 4.0, 3.98, 3.9, 2.0, 0.5, 0.3, 0.2, 0.2]
    before, after = tool.drop_checkpoints(losses)
    # a tenth of the way down from 4.0 to 0.2 is 3.62; nine tenths is 0.58
    assert (before, after) == (3, 5)


TIMING = ("train_seconds", "eval_seconds", "cpu_seconds")


def _without_timing(x):
    """Results with the (machine-dependent) timings left out, for comparing two runs."""
    if isinstance(x, dict):
        return {k: _without_timing(v) for k, v in x.items() if k not in TIMING}
    if isinstance(x, list):
        return [_without_timing(v) for v in x]
    return x


def test_quick_experiment_runs_and_is_reproducible(tmp_path):
    tool = _tool()
    out1, w1 = tool.run_experiment(tool.QUICK, jobs=1, progress=False)
    out2, _ = tool.run_experiment(tool.QUICK, jobs=1, progress=False)
    assert _without_timing(out1["extrapolation"]) == _without_timing(out2["extrapolation"])
    assert _without_timing(out1["induction"]) == _without_timing(out2["induction"])
    _check_results(out1, quick=True)
    jpath, wpath = tool.write(out1, w1, tmp_path)
    assert json.loads(jpath.read_text())["schema"] == tool.SCHEMA_VERSION
    with np.load(wpath) as z:
        assert set(z.files) == set(w1)


# ---- the stored results -----------------------------------------------------------------------------

def _check_results(d: dict, quick: bool = False):
    """Schema and consistency of a results file (the stored one, or a quick run's)."""
    for key in ("schema", "made_by", "date", "wall_time_s", "machine", "config", "extrapolation", "induction",
                "weights"):
        assert key in d, key
    m = d["machine"]
    assert m["torch"].startswith("2.") and m["cores"] >= 1 and m["threads_per_job"] == 1
    c = d["config"]
    assert c["methods"] == list(METHODS)
    if not quick:
        assert len(c["seeds"]) >= 3 and c["eval_factors"] == [1, 2, 4, 8]
        # the budget: 15 minutes on this 2-core machine. The wall time depends on what else runs
        # (other jobs share the cores); the CPU time spread over the worker processes does not.
        assert d["cpu_time_s"] / min(m["jobs"], m["cores"]) <= 15 * 60
    L0 = c["L_train"]
    lengths = [f * L0 for f in c["eval_factors"]]
    recs = d["extrapolation"]["records"]
    keys = {(r["task"], r["method"], r["seed"], r["length"], r["scaling"]) for r in recs}
    assert len(keys) == len(recs), "duplicate records"
    for task in c["tasks"]:
        for method in METHODS:
            for seed in c["seeds"]:
                for L in lengths:
                    scalings = [None, "interpolation", "ntk"] if method == "rope" and L > L0 else [None]
                    for s in scalings:
                        assert (task, method, seed, L, s) in keys
    assert len(recs) == len(c["tasks"]) * len(c["seeds"]) * (len(METHODS) * len(lengths) + 2 * (len(lengths) - 1))
    for r in recs:
        beyond = r["method"] == "learned" and r["length"] > L0
        if beyond:  # "not defined", never a zero
            assert r["defined"] is False and r["accuracy"] is None and r["loss"] is None
            assert r["accuracy_buckets"] is None
            continue
        assert r["defined"] is True
        assert 0.0 <= r["accuracy"] <= 1.0 and r["loss"] >= 0.0
        assert len(r["accuracy_buckets"]) == r["length"] // L0
        assert all(a is None or 0.0 <= a <= 1.0 for a in r["accuracy_buckets"])
        assert r["factor"] * L0 == r["length"]
    train = d["extrapolation"]["training"]
    assert len(train) == len(c["tasks"]) * len(METHODS) * len(c["seeds"])
    ind = d["induction"]
    assert [r["seed"] for r in ind] == c["induction"]["seeds"]
    for r in ind:
        steps = [cp["step"] for cp in r["checkpoints"]]
        every = c["induction"]["checkpoint_every"]
        assert steps == list(range(0, c["induction"]["train"]["steps"] + 1, every))
        assert r["before"] in steps and r["after"] in steps and r["before"] < r["after"]
        for cp in r["checkpoints"]:
            for key in ("previous_token", "induction"):
                arr = np.asarray(cp[key])
                assert arr.shape == (c["induction"]["model"]["n_layers"], c["induction"]["model"]["n_heads"])
                assert ((arr >= 0) & (arr <= 1)).all()
    models = d["weights"]["models"]
    assert {f"kback_{m}" for m in METHODS} | {"induction_before", "induction_after"} == set(models)


@pytest.fixture(scope="module")
def stored():
    if not JSON_PATH.is_file():
        pytest.fail(f"{JSON_PATH} is missing: run python -m tools.train_tiny")
    return json.loads(JSON_PATH.read_text())


def test_stored_results_pass_the_schema_and_consistency_check(stored):
    _check_results(stored)
    assert stored["made_by"] == "tools/train_tiny.py"
    assert NPZ_PATH.stat().st_size <= 2_000_000


def test_stored_weights_match_their_configs(stored):
    with np.load(NPZ_PATH) as z:
        names = set(z.files)
        for key, info in stored["weights"]["models"].items():
            cfg = TinyConfig.from_dict(info["config"])
            for name, shape in tiny_numpy.parameter_shapes(cfg).items():
                assert z[f"{key}/{name}"].shape == shape and z[f"{key}/{name}"].dtype == np.float32
                names.discard(f"{key}/{name}")
    assert not names, f"weights nobody uses: {sorted(names)[:5]}"


def _stored_model(stored, key):
    info = stored["weights"]["models"][key]
    cfg = TinyConfig.from_dict(info["config"])
    with np.load(NPZ_PATH) as z:
        w = {name: z[f"{key}/{name}"] for name in tiny_numpy.parameter_shapes(cfg)}
    return cfg, w


@pytest.mark.parametrize("method", METHODS)
def test_numpy_forward_equals_torch_on_the_stored_weights(stored, method):
    cfg, w = _stored_model(stored, f"kback_{method}")
    L = stored["config"]["L_train"]
    tokens = make_batch("kback", 4, L, vocab=cfg.vocab, rng=11, k=3)["tokens"]
    ref = tiny.TinyDecoder(cfg).double().load_numpy_weights(w)
    with torch.no_grad():
        logits = ref(torch.as_tensor(tokens)).numpy()
    assert np.abs(tiny_numpy.forward(w, cfg, tokens)["logits"] - logits).max() < 1e-5


@pytest.mark.parametrize("method", METHODS)
def test_stored_weights_reproduce_the_stored_accuracy_at_train_length(stored, method):
    """The numpy forward pass on the stored model, on the recorded evaluation set, gives the
    accuracy the training run recorded with torch."""
    c = stored["config"]
    cfg, w = _stored_model(stored, f"kback_{method}")
    L = c["L_train"]
    spec = c["tasks"]["kback"]
    batch = make_batch("kback", c["eval"]["n_seqs"], L, vocab=spec["vocab"], k=spec["k"], rng=c["eval"]["seed"] + L)
    pred = tiny_numpy.forward(w, cfg, batch["tokens"])["logits"].argmax(-1)
    acc = float((pred == batch["targets"])[batch["scored"]].mean())
    rec = next(r for r in stored["extrapolation"]["records"] if r["task"] == "kback" and r["method"] == method
               and r["seed"] == stored["weights"]["models"][f"kback_{method}"]["seed"] and r["length"] == L
               and r["scaling"] is None)
    assert acc == pytest.approx(rec["accuracy"], abs=1.5 / batch["scored"].sum())  # at most one argmax tie


def test_stored_induction_scores_are_reproduced_from_the_stored_weights(stored):
    c = stored["config"]["induction"]
    L = stored["config"]["L_train"]
    batch = make_batch(c["task"], c["eval_seqs"], L, vocab=c["vocab"], rng=c["eval_seed"])
    run = next(r for r in stored["induction"] if r["seed"] == stored["config"]["stored_seed"])
    for when in ("before", "after"):
        cfg, w = _stored_model(stored, f"induction_{when}")
        maps = tiny_numpy.forward(w, cfg, batch["tokens"])["attention"]
        cp = next(x for x in run["checkpoints"] if x["step"] == run[when])
        for layer, A in enumerate(maps):  # (B, H, T, T)
            prev = ha.previous_token_score(A).mean(0)
            ind = np.mean([ha.induction_score(A[b], batch["tokens"][b]) for b in range(len(A))], axis=0)
            assert np.allclose(prev, cp["previous_token"][layer], atol=1e-5)
            assert np.allclose(ind, cp["induction"][layer], atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_head_scores_keep_the_attentions_float_type(dtype):
    """Six scores kept a float16 or float32 attention's type, the entropy came back float64 (a
    numpy float64 divisor promotes the array: pass twenty-nine). Its value: by hand, a uniform
    row of T = 5 has entropy ln 5, so 1 in units of ln T."""
    A = np.full((5, 5), 0.2, dtype)
    scores = ha.head_scores(A, ["[CLS]", "a", ",", "b", "[SEP]"])
    assert {str(v.dtype) for v in scores.values()} == {np.dtype(dtype).name}
    assert float(scores["entropy"]) == pytest.approx(1.0, rel=2e-3 if dtype == np.float16 else 1e-6)
