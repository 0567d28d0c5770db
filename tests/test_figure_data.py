"""The numbers behind every figure and table, against closed forms derived here by hand.

Each test recomputes the quantity from its formula (not from the figure script) and
compares with what ``data()`` returns, so a figure cannot drift from the mathematics.
"""
import math

import numpy as np
import pytest

import figures

E = math.e


def d(name, **params):
    return figures.load(name).data(**params)


def test_cat_sat_mat_figures():
    w = np.array(d("cat_sat_mat_weights")["weights"])
    z = E + 1 + math.exp(0.5)
    np.testing.assert_allclose(w[0], [E / z, 1 / z, math.exp(0.5) / z], atol=1e-15)
    causal = np.array(d("cat_sat_mat_weights")["causal_weights"])
    np.testing.assert_allclose(causal[1, :2], [1 / (1 + E), E / (1 + E)], atol=1e-15)
    scores = np.array(d("cat_sat_mat_scores", causal=True)["scores"])
    assert np.isneginf(scores[0, 1]) and scores[2, 2] == 0.5
    out = d("cat_sat_mat_outputs")
    a, b, c = E / z, 1 / z, math.exp(0.5) / z
    np.testing.assert_allclose(out["rows"][0]["exact"], [2 * a + 1.5 * c, 2 * b + 0.5 * c], atol=1e-14)
    np.testing.assert_allclose(out["rows"][0]["rounded"], [0.51 * 2 + 0.31 * 1.5, 0.19 * 2 + 0.31 * 0.5], atol=1e-12)
    assert out["rounded_weight_row_sum"] == pytest.approx(1.01)
    assert 0.005 < out["max_notes_error"] < 0.01
    qkv = d("cat_sat_mat_qkv")
    assert np.array_equal(qkv["v"], [[2, 0], [0, 2], [1.5, 0.5]])


def test_scaling_and_memory():
    s = d("scaling_variance", n_samples=20_000)
    for dk, var in zip(s["d_head"], s["variance"]):
        # relative standard error sqrt((2 + 6/d)/n); 5 of them
        assert abs(var / dk - 1) < 5 * math.sqrt((2 + 6 / dk) / 20_000)
    assert s["max_weight_unscaled"][-1] > 0.9 and max(s["max_weight_scaled"]) < 0.4
    rows = d("attention_memory")["rows"]
    for r in rows:
        assert r["fp32"] == 4 * r["T"] ** 2 and r["fp16"] == 2 * r["T"] ** 2
    assert {r["T"]: r["fp32"] for r in rows}[8192] == 256 * 2**20
    assert d("attention_memory_table") == d("attention_memory")
    assert "| 8,192 | 268,435,456 | 256 MiB | 128 MiB |" in figures.load("attention_memory_table").table(d("attention_memory"))


def test_measured_memory_is_plausible():
    m = d("attention_memory_measured")
    last = m["rows"][-1]
    # the naive path must hold at least one full T x T fp32 matrix; the fused kernel far less
    assert last["naive"] >= 4 * last["T"] ** 2
    assert last["sdpa"] * 10 < last["naive"]
    assert m["machine"]["cores"] >= 1 and m["machine"]["torch"].startswith("2.")


def test_heads_and_temperature():
    h = d("heads_in_action")
    from mhalib import examples
    X = examples.the_cat_sat_down()["X"]
    s = X[:, :2] @ X[:, :2].T / math.sqrt(2)
    np.testing.assert_allclose(h["maps"]["Identity"]["head1"], np.exp(s) / np.exp(s).sum(1, keepdims=True), atol=1e-15)
    t = d("temperature_sweep")
    assert t["uniform"] == pytest.approx(math.log(4))
    for preset, curves in t["entropy"].items():
        for head, ys in curves.items():
            assert np.all(np.diff(ys) > -1e-12), (preset, head)  # entropy grows with tau
            assert ys[-1] < math.log(4) + 1e-12 and ys[-1] > math.log(4) - 0.05


def test_cat_sat_down_x():
    x = d("cat_sat_down_x")
    X = np.array(x["X"])
    assert x["d_head"] == 2 and X.shape == (4, 4)
    The, cat, sat, down = X
    # dims 0-1: cat and sat share a feature the others lack; dims 2-3: The and down
    assert min(cat[:2] @ sat[:2], The[2:] @ down[2:]) > 3 * max(The[:2] @ cat[:2], cat[2:] @ down[2:])


def test_mha_figures():
    p = d("mha_pipeline")
    assert np.shape(p["q_heads"]) == (3, 4, 2) and np.shape(p["weights"]) == (3, 4, 4) and np.shape(p["out"]) == (4, 6)
    w = d("split_heads_walkthrough")
    s = E / (E + 1)
    np.testing.assert_allclose(w["combined"], [[s, 0.5], [0.5, s]], atol=1e-15)
    pc = d("param_count_table")
    assert pc["three_d2"] == 3 * 512**2 == 786_432 and pc["four_d2"] == 4 * 512**2 == 1_048_576
    assert pc["wo_increase_percent"] == pytest.approx(100 / 3)
    assert all(r["params"] == 4 * 512**2 for r in pc["rows"][1:])
    mt = {r["model"]: r for r in d("models_table")["rows"]}
    assert [mt[k]["d_head"] for k in ("BERT-base", "GPT-2 (small)", "GPT-3 175B", "LLaMA-2 70B")] == [64, 64, 128, 128]
    assert mt["LLaMA-2 70B"]["kv_bytes_per_token"] == 2 * 80 * 8 * 128 * 2
    assert mt["GPT-3 175B"]["kv_bytes_per_token"] == 2 * 96 * 96 * 128 * 2
    assert d("models_table")["llama_gqa_saving"] == 8
    ident = d("mha_identities")
    assert ident["concat_vs_sum"] < 1e-12 and ident["torch_out_diff"] < 1e-12 and ident["torch_weights_diff"] < 1e-12


def test_position_figures():
    assert d("permutation_invariance")["max_difference"] < 1e-15
    rows = d("dog_bites_man")["rows"]
    assert all(r["diff_plain"] < 1e-14 for r in rows)
    assert all(r["diff_pe"] > 0.05 for r in rows if r["pos_a"] != r["pos_b"])
    tea = d("i_like_tea")
    np.testing.assert_allclose(tea["X"], [[1.1, 0], [0, 1.1], [1.1, 1.1]], atol=1e-15)


def test_sinusoidal_figures():
    fr = d("pe_frequencies")
    lam = [c["wavelength"] for c in fr["curves"]]
    np.testing.assert_allclose(lam, [2 * math.pi, 2 * math.pi * math.sqrt(10), 200 * math.pi], rtol=1e-13)
    assert d("pe_offset_rotation")["max_error"] < 1e-12
    dots = d("pe_dot_products")
    assert dots["at_zero"] == 64 and dots["max_deviation"] < 1e-11
    small = d("pe_heatmap", d_model=4, n_positions=4)
    assert small["first_pair_cycles"] == pytest.approx(3 / (2 * math.pi))
    assert 0.45 < small["first_pair_cycles"] < 0.5  # nearly half a cycle, not a quarter
    np.testing.assert_allclose(small["pe"][3], [math.sin(3), math.cos(3), math.sin(0.03), math.cos(0.03)], atol=1e-15)
    for r in d("embedding_scale")["rows"]:
        assert r["pe_norm"] == pytest.approx(math.sqrt(r["d_model"] / 2), rel=1e-12)
        assert r["scaled_norm"] == pytest.approx(math.sqrt(r["d_model"]), rel=0.05)
    eff = d("pe_attention_effect")
    np.testing.assert_allclose(np.sum(eff["weights_pe"], axis=1), 1.0)
    assert eff["max_change"] > 0.1


def test_wavelength_table_and_its_erratum():
    t = d("wavelength_table")
    for r in t["rows"]:
        assert r["wavelength"] == pytest.approx(2 * math.pi * 10000 ** (r["dim"] / 512), rel=1e-13)
        assert r["omega"] == pytest.approx(10000 ** (-r["dim"] / 512), rel=1e-13)
    printed = np.array(t["misprinted"])
    np.testing.assert_allclose(printed, 10 ** (0.6 * np.arange(8)), rtol=1e-3)  # what it really is
    assert printed[-1] > 10000


def test_learned_and_rope_figures():
    lp = d("learned_positions")
    assert "max_positions=64" in lp["error_past_max"] and lp["param_count"] == 64 * 32
    sizes = d("learned_table_sizes")  # the models' configurations: n_positions x n_embd (hidden_size)
    assert (sizes["bert"]["params"], sizes["gpt2"]["params"], sizes["gpt2_medium"]["params"]) == (393_216, 786_432, 1_048_576)
    assert sizes["bert_stretched"]["params"] == (1024 - 512) * 768
    assert d("learned_table_sizes", stretch_to=2048)["bert_stretched"]["params"] == 1536 * 768
    so = d("rope_signed_offset")
    for r in so["rows"]:
        assert r["score"] == pytest.approx(r["identity"], abs=1e-12)
    assert abs(so["plus"] - so["minus"]) > 0.1
    rc = d("rope_relative_curves")
    assert rc["rope_spread"] < 1e-9 and rc["additive_spread"] > 1
    lay = d("rope_layouts")
    spreads = [c["spread"] for c in lay["curves"]]
    assert spreads[0] < 1e-10 and spreads[1] < 1e-10 and spreads[2] > 0.1
    assert lay["permuted_agreement"] < 1e-13
    dec = d("rope_decay")
    # at distance 0 every phase is 1, so |S_j| = j and the mean over j = 1..d/2 is (d/2 + 1)/2
    assert dec["at_zero"] == pytest.approx((64 + 1) / 2)
    assert dec["at_max"] < dec["at_zero"] / 2
    fq = d("rope_frequencies_plot")
    assert fq["last_wavelength"] == pytest.approx(2 * math.pi * 10000 ** (126 / 128), rel=1e-12)
    rot = d("rope_rotation_2d")
    for m, vec in zip(rot["positions"], rot["rotated"]):
        a = 0.5 * m
        np.testing.assert_allclose(vec, [math.cos(a) - 0.3 * math.sin(a), math.sin(a) + 0.3 * math.cos(a)], atol=1e-15)


def test_rope_rotation_scores_follow_the_offset_up_to_its_largest_theta_and_refuse_past_it():
    """Pass seventy-six: theta = 1e14 rad formed position x theta in float64 (0.5 rad off) and
    drew one offset's pairs scattered under the title "same offset, same score"."""
    import mpmath

    module = figures.load("rope_rotation_2d")
    rot = module.data(theta=100.0, n_positions=64)
    q2 = float(np.dot(rot["q"], rot["q"]))
    with mpmath.workdps(40):  # |q|^2 cos(k theta), theta exactly 100
        want = {k: float(q2 * mpmath.cos(k * mpmath.mpf(100))) for k in range(-63, 64)}
    np.testing.assert_allclose(rot["scores"], [want[int(k)] for k in rot["offsets"]], rtol=0, atol=1e-9)
    np.testing.assert_allclose(rot["closed_form"], [want[int(k)] for k in rot["closed_form_offsets"]], rtol=0, atol=1e-9)
    for theta in (100.5, -1e14):
        with pytest.raises(ValueError, match=r"theta must be from -100 to 100 rad per position.*got"):
            module.data(theta=theta)


def test_alibi_figures():
    sl = d("alibi_slopes_table")
    np.testing.assert_allclose(sl["slopes"]["8"], [2.0**-h for h in range(1, 9)], rtol=1e-15)
    np.testing.assert_allclose(sl["slopes"]["12"][8:], [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5], rtol=1e-15)
    eq = d("alibi_equivalence")
    assert eq["max_weight_difference"] < 1e-14 and eq["gap_is_row_constant"] and eq["alibi_vs_plain"] > 0.1
    bh = d("alibi_bias_heads")
    assert bh["causal"][0][3][1] == pytest.approx(-0.5 * 2)  # head 1 slope 1/2, distance 2


def test_numerics_figures():
    so = d("softmax_overflow")
    assert so["threshold_float32"] == pytest.approx(math.log(np.finfo(np.float32).max.astype(float)))
    assert so["threshold_float16"] == pytest.approx(math.log(65504))
    by_score = {r["score"]: r for r in so["rows"]}
    assert "NaN" not in by_score[88.0]["naive_float32"] and "NaN" in by_score[89.0]["naive_float32"]
    assert "NaN" in by_score[12.0]["naive_float16"] and "NaN" not in by_score[11.0]["naive_float16"]
    assert all("NaN" not in r["stable_float32"] for r in so["rows"])
    # the page's reason a float16 row reads [1, ...]: by the closed forms 1/(1 + e^-s) and 1 - 2^-11
    first = so["rows"][0]
    assert first["top_float64"] == pytest.approx(1 / (1 + math.exp(-first["score"])), rel=1e-15)
    assert so["float16_below_one"] == 1 - 2**-11 < first["top_float64"] < 1
    assert first["stable_float16"].startswith("[1, ")
    mc = {r["constant"]: r for r in d("mask_constants")["rows"]}
    assert mc["-1e9"]["stored"] == -math.inf and mc["-1e4"]["stored"] == -10000
    assert "NaN" in mc["-inf"]["full_naive"] and mc["-inf"]["full_ours"] == "[0, 0, 0]"
    ex = d("pitfall_exponent")["longest"]
    assert ex["correct"] == pytest.approx(2 * math.pi * 10000 ** (510 / 512))
    assert ex["forgot_two"] == pytest.approx(2 * math.pi * 10000 ** (255 / 512))
    sc = d("pitfall_sincos_layout")
    assert sc["max_gram_difference"] < 1e-12 and sc["max_vector_difference"] > 1
    sh = d("pitfall_split_heads")
    assert sh["correct_vs_reference"] < 1e-14 and sh["wrong_vs_reference"] > 0.1
    assert sh["correct"][0][1] == ["t1d0", "t1d1"] and sh["wrong"][0][1] == ["t0d2", "t0d3"]
    fw = d("pitfall_frequency_wavelength")["rows"]
    for r in fw:
        assert r["wavelength"] == pytest.approx(2 * math.pi * r["inverse"]) == pytest.approx(1 / r["cycles"])


def test_every_script_has_a_data_test():
    """A new figure script must get its numbers checked: here or in another test module that names it."""
    from pathlib import Path

    source = "\n".join(p.read_text(encoding="utf-8") for p in sorted(Path(__file__).parent.glob("test_*.py")))
    missing = [n for n in figures.names() if f'"{n}"' not in source]
    assert not missing, f"figure scripts without a data test: {missing}"


def test_head_analysis_on_synthetic_patterns():
    from mhalib.models import head_analysis as ha

    T = 6
    tokens = ["[CLS]", "a", "b", ",", "c", "[SEP]"]
    shift = np.eye(T, k=-1)
    shift[0, 0] = 1.0  # [CLS] has no previous token: it looks at itself
    s = ha.head_scores(np.stack([shift, np.eye(T), np.full((T, T), 1 / T)]), tokens)
    assert s["previous token"][0] == 1.0 and s["self"][1] == 1.0
    assert s["entropy"][2] == pytest.approx(1.0) and s["entropy"][1] == 0.0
    assert s["to punctuation"][2] == pytest.approx(1 / T)
    with pytest.raises(ValueError, match="len\\(tokens\\)"):
        ha.head_scores(np.eye(3), tokens)


@pytest.fixture(scope="module")
def bert_scores():
    return d("bert_head_scores")


@pytest.mark.slow
def test_bert_head_scores_match_the_attentions(bert_scores):
    from mhalib import examples
    from mhalib.models import bert

    # recompute the previous-token score of the top head straight from the attentions
    b = bert_scores["best"]["previous token"]
    direct = np.mean([np.mean(np.diag(bert.encode(s)["attentions"][b["layer"] - 1, b["head"] - 1], -1))
                      for s in examples.REAL_SENTENCES])
    assert b["value"] == pytest.approx(direct, abs=1e-6)
    assert bert_scores["n_sentences"] == len(examples.REAL_SENTENCES)


@pytest.mark.slow
def test_bert_gallery_and_top_heads():
    gal = d("bert_attention_gallery")
    assert np.shape(gal["attentions"])[:2] == (6, 12)
    np.testing.assert_allclose(np.sum(gal["zoom"], axis=-1), 1.0, atol=1e-5)
    top = d("bert_top_heads")
    assert [p["type"] for p in top["panels"]][:2] == ["previous token", "next token"]


@pytest.mark.slow
@pytest.mark.build
def test_bert_head_ablation_equals_weight_surgery_and_feeds_the_claims(bert_scores, built_site):
    """The published ablation (the site's JSON: 72 forward passes over the 8 sentences, computed
    once, by the build) against one head cut out by weight surgery, computed here."""
    import json

    from helpers import data_file
    from mhalib import examples
    from mhalib.models import bert

    abl = json.loads(data_file(built_site, "bert_head_ablation.json"))
    imp = np.asarray(abl["importance"])
    assert imp.shape == (6, 12) and np.all(imp >= -1e-6)
    # one head's importance by weight surgery instead of head_mask: zero its block of W_O
    layer, head, dh = 5, 0, 32
    model = bert.load_model()
    w = dict(model["weights"])
    name = f"encoder.layer.{layer}.attention.output.dense.weight"
    w[name] = w[name].copy()
    w[name][:, head * dh:(head + 1) * dh] = 0.0
    cut = dict(model, weights=w)
    cut_states = [bert.bert_forward(cut, bert.encode(s)["ids"])["hidden_states"][-1] for s in examples.REAL_SENTENCES]
    drift = np.mean([1 - bert.sentence_embedding(h.astype(np.float64)) @ bert.encode(s)["embedding"]
                     for h, s in zip(cut_states, examples.REAL_SENTENCES)])
    assert imp[layer, head] == pytest.approx(drift, abs=1e-5)
    assert abl["cumulative"][0]["drift"] == pytest.approx(0.0, abs=1e-6)
    claims = json.loads(data_file(built_site, "bert_claims_table.json"))
    b = bert_scores["best"]["previous token"]
    assert {r["verdict"] for r in claims["rows"]} <= {"confirmed", "partly", "not seen", "not measured"}
    assert claims["rows"][0]["verdict"] == ("confirmed" if b["value"] >= 0.5 else claims["rows"][0]["verdict"])


@pytest.mark.slow
def test_bert_positions_against_the_weights():
    from mhalib.models import bert

    pos = d("bert_positions")
    P = bert.load_model()["weights"]["embeddings.position_embeddings.weight"].astype(float)
    i, j = 3, 10  # shown positions 12 and 40 at step 4
    assert pos["learned"][i][j] == pytest.approx(P[12] @ P[40] / np.linalg.norm(P[12]) / np.linalg.norm(P[40]), abs=1e-9)
    assert pos["sinusoidal_neighbour_cos"] > 0.9 and 0 <= pos["learned_adjacent_share"] <= 1


# ---- generation and speed: the KV cache and FlashAttention ----------------------------------------

def _gpu_json(name):
    import json

    return json.loads((figures.FIGURES_DIR / "data" / name).read_text())


def test_decode_step_time_against_the_stored_measurements():
    raw = _gpu_json("decode_gqa_h100.json")
    dst = d("decode_step_time")
    by = {(r["context"], r["kv_heads"]): r for r in raw["rows"]}
    longest = max(c for c, _ in by)
    assert dst["longest"] == longest
    assert dst["gqa_speedup_long"] == pytest.approx(by[longest, 32]["ms_median"] / by[longest, 8]["ms_median"])
    assert dst["mqa_speedup_long"] == pytest.approx(by[longest, 32]["ms_median"] / by[longest, 1]["ms_median"])
    assert dst["gqa_speedup_repeated_long"] == pytest.approx(
        by[longest, 32]["ms_median"] / by[longest, 8]["ms_median_kv_repeated"])
    # the stored rows are consistent: bytes = 2 (K, V) x batch x KV heads x context x d x 2 (bf16)
    for (c, h), r in by.items():
        assert r["kv_cache_bytes"] == 2 * raw["batch"] * h * c * raw["d_head"] * 2
        assert r["achieved_GBps"] == pytest.approx(r["kv_cache_bytes"] / (r["ms_median"] * 1e-3) / 1e9, rel=1e-6)
    assert dst["mha_long_share_of_spec"] == pytest.approx(by[longest, 32]["achieved_GBps"] / 3350.0)
    assert dst["floor_step_ms"] == min(r["ms_median"] for r in raw["rows"])
    # what the page claims: at long context the step is memory-bound and repeating K/V undoes GQA
    assert dst["gqa_speedup_long"] > 3 and dst["mqa_speedup_long"] > 10 and dst["gqa_speedup_repeated_long"] < 1.1


def test_decode_alignment_masks_by_hand():
    da = d("decode_alignment")
    br, tl = np.array(da["masks"]["bottom_right"]), np.array(da["masks"]["top_left"])
    # query at absolute position 3 + i sees keys 0..3+i; top-left: keys 0..i
    assert br.tolist() == [[j <= 3 + i for j in range(6)] for i in range(3)]
    assert tl.tolist() == [[j <= i for j in range(6)] for i in range(3)]
    assert da["bottom_right_is_right"] and not da["top_left_is_right"]


def test_flash_memory_time_against_the_stored_measurements():
    raw = _gpu_json("attention_gpu_h100.json")
    fm = d("flash_memory_time")
    one = next(s for s in raw["suites"] if s["H"] == 1)
    at8192 = next(r for r in one["rows"] if r["T"] == 8192)
    assert fm["naive_mib_8192"] == at8192["naive"]["peak_extra_bytes"] / 2**20 == 514.0
    assert fm["efficient_mib_8192"] == 2.0 and fm["scores_bytes_8192"] == 256 * 2**20
    layer = next(s for s in raw["suites"] if s["H"] == 32 and not s["backward"])
    r16 = next(r for r in layer["rows"] if r["T"] == 16384)
    assert fm["flash_speedup_16384"] == pytest.approx(r16["naive"]["ms_median"] / r16["flash"]["ms_median"])
    assert round(fm["flash_speedup_16384"], 1) == 12.8 and round(fm["naive_gib_layer_16384"]) == 32
    assert fm["slopes"]["naive"] == pytest.approx(2, abs=0.01) and fm["slopes"]["efficient"] == pytest.approx(1, abs=0.01)


def test_flash_throughput_from_flops_and_time():
    raw = _gpu_json("attention_gpu_h100.json")
    layer = next(s for s in raw["suites"] if s["H"] == 32 and not s["backward"])
    ft = d("flash_throughput")
    for r, row in zip(layer["rows"], ft["rows"]):
        flops = 4 * 32 * r["T"] ** 2 * 128 // 2  # two products, 2 FLOPs a multiply-add, halved for causal
        assert row["flops"] == flops
        assert row["flash"] == pytest.approx(flops / (r["flash"]["ms_median"] / 1e3) / 1e12)
    assert 0 < ft["best_share"] < 1


def test_kv_cache_table_by_hand():
    kv = d("kv_cache_table", contexts=(4096,), batch=2)
    llama2, llama3, falcon = kv["rows"]
    assert llama2["per_token"] == 2 * 32 * 32 * 128 * 2 == 524_288  # 512 KiB
    assert llama3["per_token"] == 2 * 32 * 8 * 128 * 2 and falcon["per_token"] == 2 * 32 * 1 * 64 * 2
    assert llama2["at"]["4096"] == 2 * 4096 * 524_288  # batch 2: 4 GiB
    assert kv["gqa_saving"] == 4 and kv["mqa_saving"] == 64


def test_decode_cost_by_hand():
    dc = d("decode_cost", d_model=64, n_heads=4, max_tokens=16, points=16)
    D, d_head = 64, 16
    for t, w, wo in zip(dc["steps"], dc["with_cache"], dc["without"]):
        proj = 2 * D * 3 * D
        assert w == proj + 4 * 4 * 1 * t * d_head
        full = 4 * 4 * t * t * d_head // 2 if t > 1 else 4 * 4 * d_head
        assert wo == t * proj + full
    # attention (2 H d t^2) outgrows t projections (t * 6 D^2) beyond t = 6 D^2 / (2 H d) = 3 D
    assert dc["attention_dominates_after"] == 3 * D


def test_flash_online_softmax_by_hand():
    fo = d("flash_online_softmax")
    s = np.asarray(fo["scores"])
    blocks = [s[a:b] for a, b in fo["key_blocks"]]
    # running max and sum after each block, from the scores directly
    for j in range(len(blocks)):
        seen = np.concatenate(blocks[: j + 1])
        assert fo["m"][j] == pytest.approx(seen.max(), abs=1e-12)
        assert fo["l"][j] == pytest.approx(np.exp(seen - seen.max()).sum(), rel=1e-12)
    assert fo["o"][-1] == pytest.approx(fo["exact_o"], abs=1e-12) and fo["final_error"] < 1e-12
    assert fo["n_blocks"] == 4
    assert fo["rescale_example"] == pytest.approx(math.exp(-3))


def test_flash_io_table_by_hand():
    io = d("flash_io_table", lengths=(1024,), head_dims=(64,), n_heads=2, sram_kib=64, query_block=128)
    (row,) = io["rows"]
    T, dh, H = 1024, 64, 2
    assert io["sram_elements"] == 32768  # 64 KiB of bf16
    assert (row["B_c"], row["B_r"]) == (128, 64)  # ceil(32768 / 256) = 128 key rows; min(128, 64) query rows
    assert row["naive"] == (4 * T * dh + 4 * T * T) * 2 * H
    # Algorithm 1: O, l, m initialised; K, V read once; 8 key blocks, each passing over Q, O, l, m
    assert row["flash1"] == (T * dh + 2 * T + 2 * T * dh + 8 * (3 * T * dh + 4 * T)) * 2 * H
    assert row["flash2"] == T * dh * (2 + 2 * (T // 128)) * 2 * H  # query blocks outside: K, V once per block
