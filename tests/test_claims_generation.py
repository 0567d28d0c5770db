"""Claims as tests for the generation chapters (the KV cache, FlashAttention) and their quiz answers.

Each sentence that ranks, compares or explains a measured or computed result is asserted here on
``data()``, against values derived independently (closed forms and hand counts written here), and
its key phrase is found in the page's Markdown (``docs/quiz.md`` for the quiz answers, read only),
so that editing the sentence or the data fails a test until the claim is checked again. The
measurements are single runs without seeds, so rankings are asserted on the stored medians.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from test_claims import DOCS, ROOT, d, page, query_outer_elements, sentence

# LLaMA-2 7B's published configuration (Touvron et al., 2023): vocabulary 32,000, width 4096,
# 32 layers, feed-forward width 11,008 (SwiGLU: three matrices), untied input and output
# embeddings, RMSNorm with one weight vector per norm (two per layer and a final one).
LLAMA2_7B_PARAMS = (2 * 32_000 * 4096 + 32 * (4 * 4096**2 + 3 * 4096 * 11_008 + 2 * 4096) + 4096)
FP16 = 2  # bytes per number


def quiz_answer(n: int) -> str:
    """Question ``n`` of docs/quiz.md and its answer, whitespace folded to single spaces."""
    text = (DOCS / "quiz.md").read_text(encoding="utf-8")
    start = text.index(f'??? question "{n}. ')
    end = text.find("??? question", start + 1)
    return re.sub(r"\s+", " ", text[start: end if end > 0 else None])


def _gpu_steps() -> dict:
    return {(r["context"], r["kv_heads"]): r for r in d("decode_step_time")["rows"]}


def _cpu_steps() -> dict:
    return {(r["context"], r["kv_heads"]): r for r in d("decode_step_time")["cpu"]["rows"]}


# --- kv_cache: the cache against the weights (prose, Check yourself, quiz Q20) ----------------------

def test_the_cache_outgrows_the_weights_for_long_contexts_or_large_batches():
    """"For long contexts or large batches the cache is the larger of the two: with multi-head
    attention, a 7B model's cache for one sequence of 32,768 tokens already outweighs its fp16
    weights", and the Check-yourself answer "more than the model's own weights take in fp16".
    The weights are counted by hand from LLaMA-2 7B's configuration (and, for any "7B" model,
    from 7e9 numbers); the cache is 2 x N x H_kv x d_head x 2 bytes per token."""
    assert LLAMA2_7B_PARAMS == 6_738_415_616
    weights = FP16 * LLAMA2_7B_PARAMS
    kv = d("kv_cache_table")
    row = kv["rows"][0]
    assert (row["model"], row["kind"], row["layers"], row["kv_heads"], row["d_head"]) == ("LLaMA-2 7B", "MHA", 32, 32, 128)
    short, long = kv["contexts"]
    assert (short, long, kv["batch"]) == (4096, 32768, 1)
    per_token = 2 * 32 * 32 * 128 * FP16
    assert row["at"][str(long)] == long * per_token and row["at"][str(short)] == short * per_token
    # long context: one sequence of 32,768 tokens holds more cache than weights; 4,096 does not,
    # but a batch of 8 such sequences does (the cache grows with the batch, the weights do not)
    assert row["at"][str(long)] > weights > row["at"][str(short)]
    assert 8 * row["at"][str(short)] > weights
    # any "7B" model in fp16 (7e9 numbers of 2 bytes) is below the cache too, though of the same size
    assert weights < 2 * 7e9 < row["at"][str(long)] < 2 * weights
    text = page("kv_cache")
    claim = sentence(text, "the cache is the larger of the two")
    assert "For long contexts or large batches" in claim and "with multi-head attention" in claim
    assert "{{ value kv_cache_table contexts.1 , }} tokens already outweighs its fp16 weights" in claim
    answer = sentence(text, "bytes (16 GiB)")
    assert "{{ value kv_cache_table rows.0.at.32768 , }}" in answer
    assert "more than the model's own weights take in fp16" in answer
    assert "a 7B model with multi-head attention (32 layers, 32 heads of 128, fp16)" in text
    assert "one 32,768-token conversation" in text


def test_eight_kv_heads_keep_a_quarter_of_the_cache():
    """Check yourself: "With 8 KV heads (GQA) it is a quarter of that"; quiz Q20: Llama 3 8B's
    cache at 4,096 tokens is "a quarter" of LLaMA-2 7B's (32 / 8 = 4, same layers and width)."""
    kv = d("kv_cache_table")
    mha, gqa = kv["rows"][0], kv["rows"][1]
    assert (gqa["model"], gqa["kind"], gqa["kv_heads"]) == ("Llama 3 8B", "GQA", 8)
    assert (gqa["layers"], gqa["d_head"]) == (mha["layers"], mha["d_head"]) == (32, 128)
    assert gqa["at"]["4096"] == 4096 * 2 * 32 * 8 * 128 * FP16 == 536_870_912
    for c in ("4096", "32768"):
        assert 4 * gqa["at"][c] == mha["at"][c]
    assert kv["gqa_saving"] == 32 / 8
    assert "With 8 KV heads (GQA) it is a quarter of that" in page("kv_cache")
    q20 = quiz_answer(20)
    assert "LLaMA-2 7B's KV cache hold for 4,096 tokens in fp16? And Llama 3 8B's?" in q20
    assert "{{ value kv_cache_table rows.0.at.4096 , }}" in q20
    assert "Llama 3 8B keeps 8 KV heads instead of 32" in q20
    assert "**{{ value kv_cache_table rows.1.at.4096 , }}** bytes, a quarter" in q20


# --- kv_cache: the H100 measurements ------------------------------------------------------------

def test_the_gpu_step_reads_its_cache_faster_than_a_copy_runs():
    """"reads its cache at 3,022 GB/s, 90% of the GPU's specified memory bandwidth, more than the
    2,562 GB/s a copy on the same GPU reached, counting the bytes it read and wrote"."""
    dst = d("decode_step_time")
    by = _gpu_steps()
    L = dst["longest"]
    mha = by[L, 32]
    assert mha["kv_cache_bytes"] == 2 * dst["batch"] * 32 * L * dst["d_head"] * 2  # K and V, bf16
    read_rate = mha["kv_cache_bytes"] / (mha["ms_median"] * 1e-3) / 1e9
    assert dst["mha_long_GBps"] == pytest.approx(read_rate)
    copy = dst["machine"]["device_copy_GBps_read_plus_write"]
    assert dst["bandwidth_GBps"] == copy  # the copy's rate counts the bytes read and written
    assert copy < read_rate < dst["spec_GBps"] == 3350.0
    assert dst["mha_long_share_of_spec"] == pytest.approx(read_rate / 3350.0)
    text = page("kv_cache")
    claim = sentence(text, "a copy on the same GPU reached")
    assert "{{ value decode_step_time mha_long_GBps ,.0f round=nearest }} GB/s" in claim
    assert "more than the {{ value decode_step_time bandwidth_GBps ,.0f round=nearest }} GB/s a copy on the same GPU reached" in claim
    assert "counting the bytes it read and wrote" in claim
    assert "because a copy also writes" not in text  # a cause the data do not measure


def test_at_1k_tokens_gqa_and_mqa_sit_at_the_shortest_step_and_mha_is_not_far_above():
    """"At 1k tokens the gain is small: GQA and MQA take about that shortest step time, and MHA
    only 0.076 ms": GQA and MQA within 10% of the shortest step of all, MHA under 1.5 times it, so
    no speed-up at 1k can pass 1.5."""
    dst = d("decode_step_time")
    by = _gpu_steps()
    floor = min(r["ms_median"] for r in by.values())
    assert dst["floor_step_ms"] == floor
    assert all(by[1024, h]["ms_median"] <= 1.1 * floor for h in (8, 1))
    mha = by[1024, 32]
    assert dst["rows"][0] is not None and (dst["rows"][0]["context"], dst["rows"][0]["kv_heads"]) == (1024, 32)
    assert floor < mha["ms_median"] < 1.5 * floor
    for h in (8, 1):
        assert mha["ms_median"] / by[1024, h]["ms_median"] < 1.5
    text = page("kv_cache")
    claim = sentence(text, "At 1k tokens the gain is small")
    assert "GQA and MQA take about that shortest step time" in claim
    assert "MHA only {{ value decode_step_time rows.0.ms_median .3f round=nearest }} ms" in claim
    assert "no step took less than" in sentence(text, "{{ value decode_step_time floor_step_ms .3f round=down }} ms")
    assert "every step sits near that floor" not in text


def test_the_step_time_follows_the_bytes_so_shared_heads_pay_unless_repeated():
    """Summary: "On a GPU a long-context decode step is memory-bound: its time follows the cache's
    bytes, so GQA and MQA make it faster, unless K and V are repeated before attention" and quiz
    Q22: at 64k tokens GQA is "3.9x faster, because the step's time follows the bytes of the cache
    it reads; after repeating, only 1.02x, since the kernel reads as many bytes as for MHA"."""
    dst = d("decode_step_time")
    by = _gpu_steps()
    B, dh, L = dst["batch"], dst["d_head"], dst["longest"]
    assert L == 65536  # "a 64k-token decode step"
    for (c, h), r in by.items():
        assert r["kv_cache_bytes"] == 2 * B * h * c * dh * 2  # K and V, bf16
    # memory-bound: one multiply-add (2 FLOPs) per cached bf16 number (2 bytes) for MHA, 32 / H_kv
    # times that with shared heads: at most 32 FLOPs per byte, far below the H100's 798 TFLOP/s
    # over 3.35 TB/s (238 FLOPs per byte); and the MHA step reads at 90% of the specified bandwidth
    assert 2 / 2 * 32 / 1 < 798.0 / 3.35 / 5
    assert dst["mha_long_share_of_spec"] > 0.85
    # the time follows the bytes: the same bytes with different head counts take the same time
    same = {}
    for r in by.values():
        same.setdefault(r["kv_cache_bytes"], []).append(r["ms_median"])
    assert sum(len(ms) > 1 for ms in same.values()) >= 3
    assert all(max(ms) / min(ms) < 1.05 for ms in same.values())
    # so at the longest context the speed-up is close to the byte ratio (32 / 8 = 4; MQA's is held
    # back by the shortest-step floor, but still large)
    gqa = by[L, 32]["ms_median"] / by[L, 8]["ms_median"]
    assert dst["gqa_speedup_long"] == pytest.approx(gqa)
    assert 0.9 * 4 < gqa <= 4 and dst["mqa_speedup_long"] > 10
    # repeated K/V to 32 heads: as many bytes as MHA, and MHA's time
    for h in (8, 1):
        assert all(0.95 < x < 1.05 for x in dst["speedup_repeated"][str(h)])
        assert by[L, h]["kv_cache_bytes"] * 32 // h == by[L, 32]["kv_cache_bytes"]
    assert dst["gqa_speedup_repeated_long"] == pytest.approx(by[L, 32]["ms_median"] / by[L, 8]["ms_median_kv_repeated"])
    summary = page("kv_cache")
    claim = sentence(summary, "On a GPU a long-context decode step is memory-bound")
    assert "its time follows the cache's bytes, so GQA and MQA make it faster, unless K and V are repeated before attention" in claim
    q22 = quiz_answer(22)
    assert "{{ value decode_step_time gqa_speedup_long .1f round=nearest }}× faster, because the step's time follows the bytes of the cache it reads" in q22
    assert "after repeating, only {{ value decode_step_time gqa_speedup_repeated_long .2f round=nearest }}×" in q22
    assert "since the kernel reads as many bytes as for MHA" in q22


# --- kv_cache: the CPU measurements --------------------------------------------------------------

def test_the_cpu_step_reads_at_most_of_the_copy_rate_and_is_memory_bound():
    """"MHA reads its cache at 19 GB/s at 32,768 tokens, most of this CPU's measured copy rate of
    26 GB/s, so the step is memory-bound here too". Held by the ratio (between half and all of the
    copy rate) and by the arithmetic: 4 B H L d FLOPs over 2 B H L d fp32 numbers is half a FLOP
    per byte, and MQA did the same arithmetic more than twice as fast, so arithmetic is not what
    limits the MHA step."""
    cpu = d("decode_step_time")["cpu"]
    by = _cpu_steps()
    L = cpu["longest"]
    mha = by[L, 32]
    assert mha["kv_cache_bytes"] == 2 * cpu["batch"] * 32 * L * 128 * 4  # K and V, fp32
    rate = mha["kv_cache_bytes"] / (mha["ms_median"] * 1e-3) / 1e9
    assert cpu["mha_long_GBps"] == pytest.approx(rate)
    assert 0.5 < rate / cpu["bandwidth_GBps"] < 1  # "most of"
    flops = 4 * cpu["batch"] * 32 * L * 128
    for h in ("32", "1"):
        assert cpu["gflops_long"][h] == pytest.approx(flops / (by[L, int(h)]["ms_median"] * 1e-3) / 1e9)
    assert cpu["gflops_long"]["32"] / cpu["mha_long_GBps"] == pytest.approx(0.5)
    assert cpu["gflops_long"]["1"] > 2 * cpu["gflops_long"]["32"]
    claim = sentence(page("kv_cache"), "most of this CPU's measured copy rate")
    assert "{{ value decode_step_time cpu.mha_long_GBps .0f round=nearest }} GB/s" in claim
    assert "{{ value decode_step_time cpu.bandwidth_GBps .0f round=nearest }} GB/s, so the step is memory-bound here too" in claim


def test_on_this_cpu_shared_heads_shrink_the_cache_far_more_than_the_step_at_long_contexts():
    """"At long contexts on this CPU, then, sharing K/V heads shrinks the cache far more than it
    speeds up the step": at 16k and 32k tokens the byte ratio (32 / H_kv, by hand) is more than
    three times the measured speed-up, for GQA and MQA."""
    cpu = d("decode_step_time")["cpu"]
    by = _cpu_steps()
    long = [c for c in cpu["contexts"] if c >= 16384]
    assert long == [16384, 32768]
    for c in cpu["contexts"]:
        for h in (8, 1):
            shrink = by[c, 32]["kv_cache_bytes"] / by[c, h]["kv_cache_bytes"]
            assert shrink == 32 / h
            speedup = by[c, 32]["ms_median"] / by[c, h]["ms_median"]
            assert speedup == pytest.approx(cpu["speedup"][str(h)][cpu["contexts"].index(c)])
            assert speedup < shrink
            if c in long:
                assert shrink > 3 * speedup, (c, h, speedup)
    text = page("kv_cache")
    claim = sentence(text, "sharing K/V heads shrinks the cache far more than it speeds up the step")
    assert "At long contexts on this CPU" in claim
    assert "Sharing K/V heads pays only when the kernel reads each shared head once" not in text


def test_the_cpu_sees_much_less_of_the_gain_at_long_contexts():
    """Summary: "How much of that a CPU sees depends on its kernel: here, much less". At the
    longest context each measured (32k on the CPU, 64k on the H100) and at 16k, which both
    measured, the CPU's speed-ups from GQA and MQA are less than half the H100's."""
    dst = d("decode_step_time")
    cpu = dst["cpu"]
    gpu_by, cpu_by = _gpu_steps(), _cpu_steps()

    def speedup(by, c, h):
        return by[c, 32]["ms_median"] / by[c, h]["ms_median"]

    for h in (8, 1):
        assert speedup(cpu_by, 16384, h) < speedup(gpu_by, 16384, h) / 2
        assert speedup(cpu_by, cpu["longest"], h) < speedup(gpu_by, dst["longest"], h) / 2
    assert "How much of that a CPU sees depends on its kernel: here, much less" in page("kv_cache")


def test_a_cached_step_costs_one_projection_and_one_row_of_attention():
    """Summary: "A cached step costs one projection and one row of attention instead of the whole
    prefix; the price is 2 N H_kv d_head numbers of memory per token". Closed forms: the Q, K, V
    projections of one token are 3 x 2 D^2 FLOPs, one query against t keys and values 4 D t;
    without a cache all t tokens are projected and the causal t x t scores formed (2 D t^2)."""
    dc = d("decode_cost")
    D = dc["d_model"]
    t = np.asarray(dc["steps"], dtype=float)
    assert dc["projection_flops"] == 6 * D * D
    np.testing.assert_allclose(dc["with_cache"], 6 * D * D + 4 * D * t, rtol=1e-12)
    # without: every token of the prefix projected, and the causal t x t scores (one score at t = 1)
    np.testing.assert_allclose(dc["without"], t * 6 * D * D + np.where(t > 1, 2 * D * t**2, 4 * D), rtol=1e-12)
    assert dc["without"][0] == dc["with_cache"][0] and np.all(dc["without"][1:] > dc["with_cache"][1:])
    kv = d("kv_cache_table")
    for r in kv["rows"]:
        assert r["per_token"] == 2 * r["layers"] * r["kv_heads"] * r["d_head"] * FP16
    text = page("kv_cache")
    claim = sentence(text, "A cached step costs")
    assert "one projection and one row of attention instead of the whole prefix" in claim
    assert "\\(2 N H_{\\text{kv}} d_{\\text{head}}\\) numbers of memory per token" in claim


# --- flash_attention --------------------------------------------------------------------------------

def test_the_online_softmax_differs_from_the_exact_one_by_rounding_only():
    """"After the last block the tiled output differs from the exact one by 4.4e-16: rounding, not
    approximation" and quiz Q24 "the measured difference was 4.4e-16, rounding only". The running
    maximum and sum after each block are recomputed here from the stored scores; the final
    difference is at most 8 float64 machine epsilons, far from any approximation's error."""
    fos = d("flash_online_softmax")
    s = np.asarray(fos["scores"], dtype=float)
    assert s.shape == (fos["n_keys"],) == (16,) and fos["block"] == 4
    for b in range(fos["n_blocks"]):
        seen = s[: 4 * (b + 1)]
        assert fos["m"][b] == pytest.approx(seen.max(), rel=1e-15)
        assert fos["l"][b] == pytest.approx(np.exp(seen - seen.max()).sum(), rel=1e-13)
    assert fos["exact_max"] == pytest.approx(s.max(), rel=1e-15)
    assert fos["exact_sum"] == pytest.approx(np.exp(s - s.max()).sum(), rel=1e-13)
    # final_error is the largest difference over the output's coordinates; the first one is stored
    err = abs(float(fos["o"][-1]) - fos["exact_o"])
    assert err <= fos["final_error"] <= 8 * np.finfo(float).eps  # a few units in the last place of float64
    claim = sentence(page("flash_attention"), "After the last block the tiled output differs")
    assert "{{ value flash_online_softmax final_error .1e round=nearest }}: rounding, not approximation" in claim
    q24 = quiz_answer(24)
    assert "the measured difference was {{ value flash_online_softmax final_error .1e round=nearest }}, rounding only" in q24


def test_flashattention_2_order_moves_its_range_fewer_bytes_than_naive():
    """"With blocks of 128 query rows, the last column of Table, that is 2.0 to 4.0 times less
    than the naive count": the column is naive / (Q read and O written once, K and V once per
    query block), counted here; the page's two numbers are its smallest and largest."""
    io = d("flash_io_table")
    H = io["n_heads"]
    assert io["query_block"] == 128
    ratios = []
    for r in io["rows"]:
        T, dh = r["T"], r["d"]
        naive = (4 * T * dh + 4 * T * T) * 2 * H
        ratios.append(naive / (query_outer_elements(T, dh, 128) * 2 * H))
        assert r["ratio2"] == pytest.approx(ratios[-1])
    assert io["min_ratio2"] == pytest.approx(min(ratios)) and io["max_ratio2"] == pytest.approx(max(ratios))
    assert 1 < min(ratios) < max(ratios)  # less traffic than naive, by a range, not one number
    import figures

    header = figures.load("flash_io_table").table(io).splitlines()[0]
    assert "FlashAttention-2 order, 128 query rows" in header.rstrip(" |").rsplit("|", 1)[-1]
    claim = sentence(page("flash_attention"), "With blocks of 128 query rows")
    assert "the last column of {{ ref table:flash_io_table }}" in claim
    assert ("{{ value flash_io_table min_ratio2 .2f round=down }} to {{ value flash_io_table max_ratio2 .2f round=up }} times less "
            "than the naive count") in claim


def _naive_source() -> str:
    text = (ROOT / "tools" / "measure_attention_gpu.py").read_text(encoding="utf-8")
    start = text.index("def _naive(")
    return text[start: text.index("\ndef ", start + 1)]


def _layer_times() -> dict:
    mem = d("flash_memory_time")
    return {m: dict(zip(s["T"], s["ms"])) for m, s in mem["time"].items()}


def test_the_naive_path_executes_twice_the_flops_shown():
    """"(The naive column uses the same halved, causal count; the naive path computes the full
    products, so it executes twice the FLOPs shown.)": the table's count is 4 B H T^2 d / 2, and
    the measured naive path forms the whole q k^T and masks it afterwards."""
    tp = d("flash_throughput")
    lay = tp["layer"]
    assert lay["causal"] and (lay["B"], lay["H"], lay["d"]) == (1, 32, 128)
    times = _layer_times()
    for r in tp["rows"]:
        full = 4 * lay["B"] * lay["H"] * r["T"] ** 2 * lay["d"]
        assert 2 * r["flops"] == full
        if "naive" in r:
            assert r["naive"] == pytest.approx(r["flops"] / (times["naive"][r["T"]] * 1e-3) / 1e12)
    src = _naive_source()
    assert "q @ k.transpose(-2, -1)" in src and "masked_fill" in src  # all T x T products, then the mask
    assert "is_causal" not in src
    claim = sentence(page("flash_attention"), "The naive column uses the same halved, causal count")
    assert "the naive path computes the full products, so it executes twice the FLOPs shown" in claim


def test_the_matrices_not_the_flops_make_naive_attention_slow_and_large():
    """Summary "The T x T matrices, not the FLOPs, make naive attention slow and large for long
    sequences" and the opening "The arithmetic grows like T^2 too, but GPUs are built for
    arithmetic; what they cannot do quickly is move a matrix of that size to main memory and back,
    twice".

    Large: the naive one-head memory is the fp32 scores and weights, 2 x 4 T^2 bytes, and the layer
    at 16k holds 2 x 32 x T^2 bf16 numbers, 32 GiB. Slow, and not from the FLOPs: per query-key
    pair the naive path moves 4 bf16 numbers (scores and weights, each written and read) and does
    4 d FLOPs (the full products): 64 FLOPs per byte, far below the H100's 798 TFLOP/s over
    3.35 TB/s; measured, even counting the full products it ran at under a tenth of the matrix
    product rate and far below the FlashAttention kernel, which did the same counted FLOPs."""
    mem, tp, io = d("flash_memory_time"), d("flash_throughput"), d("flash_io_table")
    # large
    naive = dict(zip(mem["memory"]["naive"]["T"], mem["memory"]["naive"]["bytes"]))
    for T, b in naive.items():
        if T >= 2048:
            assert 2 * 4 * T * T <= b < 1.05 * 2 * 4 * T * T, T
    assert 2 * 32 * 16384**2 * 2 / 2**30 == 32 <= mem["naive_gib_layer_16384"] < 32 * 1.05
    for r in io["rows"]:  # "and back, twice": scores and weights, each written and read back
        assert r["naive"] - 4 * r["T"] * r["d"] * 2 * io["n_heads"] == 4 * r["T"] ** 2 * 2 * io["n_heads"]
    # the arithmetic grows like T^2 too
    flops = {r["T"]: r["flops"] for r in tp["rows"]}
    assert all(flops[2 * T] == 4 * flops[T] for T in flops if 2 * T in flops)
    # slow, not from the FLOPs: closed-form bytes against FLOPs, then the measured rates
    d_head = tp["layer"]["d"]
    assert (4 * d_head) / (4 * 2) == 64 < tp["matmul_tflops"] / 3.35 / 3
    for r in tp["rows"]:
        if "naive" in r:
            assert 2 * r["naive"] < 0.1 * tp["matmul_tflops"], r["T"]
            assert r["naive"] < r["flash"] / 3, r["T"]
            if r["T"] >= 4096:
                assert r["naive"] < r["flash"] / 8, r["T"]
    text = page("flash_attention")
    assert "The \\(T \\times T\\) matrices, not the FLOPs, make naive attention slow and large for long sequences" in text
    claim = sentence(text, "The arithmetic grows like \\(T^2\\) too")
    assert "GPUs are built for arithmetic; what they cannot do quickly is move a matrix of that size to main memory and back, twice" in claim


def test_the_flashattention_kernel_is_fastest_at_every_length():
    """The figure's description: "forward time of a 32-head causal layer against T, the
    FlashAttention kernel fastest": at every measured length its median time is the smallest
    (the head count is the measured layer's, a {{ value }})."""
    times = _layer_times()
    assert set(times) == {"naive", "math", "efficient", "flash"}
    for T, ms in times["flash"].items():
        others = [times[m][T] for m in ("naive", "math", "efficient") if T in times[m]]
        assert others and ms < min(others), T
    assert d("flash_memory_time")["layer"]["H"] == 32
    assert ("forward time of a {{ value flash_memory_time layer.H }}-head causal layer against T, the FlashAttention "
            "kernel fastest") in page("flash_attention")


def test_the_quiz_naive_byte_count_is_a_best_case():
    """Check yourself: "The byte count of Table is a best case for the naive algorithm: a real naive
    implementation passes over the T x T matrix several times (scale, mask, softmax, product), and
    launches a kernel for each." The measured naive path is four separate eager PyTorch operations
    on the T x T matrix (no compilation), 8 passes (the product writes it; scale, mask and softmax
    each read and write it; the last product reads it) against the count's 4; and at every length
    it took more than three times as long as moving the counted bytes at the specified bandwidth."""
    src = _naive_source()
    ops = ["q @ k.transpose(-2, -1)", "* q.shape[-1] ** -0.5", "masked_fill", "torch.softmax(s, dim=-1) @ v"]
    assert all(op in src for op in ops)
    tool = (ROOT / "tools" / "measure_attention_gpu.py").read_text(encoding="utf-8")
    assert "torch.compile" not in tool
    passes = 1 + 2 + 2 + 2 + 1
    assert passes == 2 * 4
    spec = d("decode_step_time")["spec_GBps"]
    assert spec == 3350.0
    lay = d("flash_throughput")["layer"]
    B, H, dh = lay["B"], lay["H"], lay["d"]
    naive_ms = _layer_times()["naive"]
    assert len(naive_ms) >= 4
    for T, ms in naive_ms.items():
        counted = (4 * T * dh + 4 * T * T) * 2 * H * B  # the table's naive count, bf16
        assert ms > 3 * counted / (spec * 1e9) * 1e3, T
    text = page("flash_attention")
    answer = text[text.index("yet the measured FlashAttention kernel was more than ten times faster"):]
    answer = answer[: answer.index("## Further reading")]
    assert "is a best case for the naive algorithm" in answer
    assert "passes over the \\(T \\times T\\) matrix several times (scale, mask, softmax, product)" in answer


def test_a_causal_mask_skips_the_tiles_above_the_diagonal():
    """"For T = 10 tokens in blocks of 4, the 9 tiles split into 6 computed (the 3 on the diagonal
    partly masked) and 3 skipped", counted here by hand: query block [0, 4) reaches key block 0,
    [4, 8) key blocks 0-1, [8, 10) key blocks 0-2. "n (n + 1) / 2 of the n^2 tiles ... When the
    block size divides T ... the share of the scores computed is (n + 1) / 2n, a little more than
    half, and closer to half the more blocks there are": each row of the table is that share for
    n = T / 128, above 1/2 and falling with T; its lengths are the throughput table's, and its last
    column is the share over 1/2. "When it does not ... n = 3 gives 66.7%, but the tiles computed
    hold 68% of the scores": the example's scores counted here tile by tile, 4 x 4 + 4 x 8 + 2 x 10
    of 100."""
    ct = d("flash_causal_tiles")
    s = ct["small"]
    assert (s["T"], s["block"]) == (10, 4)
    assert (s["total"], s["visited"], s["partial"], s["skipped"]) == (9, 1 + 2 + 3, 3, 9 - 6)
    assert ct["block"] == 128
    assert [r["T"] for r in ct["rows"]] == [r["T"] for r in d("flash_throughput")["rows"]]
    shares = []
    for r in ct["rows"]:
        n = r["T"] // 128
        assert (r["total"], r["visited"], r["skipped"], r["partial"]) == (n * n, n * (n + 1) // 2, n * (n - 1) // 2, n)
        assert r["computed_share"] == pytest.approx((n + 1) / (2 * n))
        assert r["over_half"] == pytest.approx((n + 1) / n)
        shares.append(r["computed_share"])
    assert all(a > b > 0.5 for a, b in zip(shares, shares[1:]))  # above half, and closer to it as T grows
    assert all(r["divides"] and r["formula_share"] == r["computed_share"] for r in ct["rows"]) and ct["rows_divide"]
    # the example's block does not divide T: its last tiles are short, and the formula is off
    assert not s["divides"] and s["n_blocks"] == 3 and s["formula_share"] == 4 / 6
    assert s["computed_share"] == (4 * 4 + 4 * 8 + 2 * 10) / 100 == 0.68 != s["formula_share"]
    assert f"{s['formula_share']:.1%}" == "66.7%" and f"{s['computed_share']:.0%}" == "68%"
    text = page("flash_attention")
    split = sentence(text, "tiles split into")
    for key in ("small.T", "small.block", "small.total", "small.visited", "small.partial", "small.skipped"):
        assert f"{{{{ value flash_causal_tiles {key} }}}}" in split, key
    assert "a little more than half, and closer to half the more blocks there are" in text
    assert ('{{ table flash_causal_tiles caption="Tiles of {{ value flash_causal_tiles block }} queries by '
            '{{ value flash_causal_tiles block }} keys') in text
    assert ("When the block size divides \\(T\\), every tile has the same size, and the share of the scores "
            "computed is \\[ \\frac{n(n+1)/2}{n^2} = \\frac{n+1}{2n}, \\]") in text
    off = sentence(text, "the last row and column of tiles are short and the share differs")
    for key in ("small.n_blocks }}", "small.formula_share .1% round=nearest }}", "small.computed_share .0% }}"):
        assert f"{{{{ value flash_causal_tiles {key}" in off, key
    assert "Every length below is a multiple of {{ value flash_causal_tiles block }}, so there the formula is exact" in text
    assert "(n+1)/2n" not in text  # inline, it broke after the "+" on a phone: a display formula now
    assert "earns that half" not in text


def test_halving_the_causal_flops_is_the_long_sequence_limit():
    """"At T = 1,024 a kernel with blocks of 128 computes 56.2% of the scores, 1.125 times the
    halved count; at 32,768, 1.004 times": rows 0 and 5 are the shortest and longest lengths,
    and the factor is largest at the shortest. tiled_attention, which the page says skips the
    same tiles, computes exactly causal_tile_counts' tiles (its trace's count) at a small size."""
    import mhalib

    ct = d("flash_causal_tiles")
    Ts = [r["T"] for r in ct["rows"]]
    assert ct["rows"][0]["T"] == min(Ts) and ct["rows"][5]["T"] == max(Ts) and len(Ts) == 6
    assert ct["rows"][0]["over_half"] == ct["max_over_half"] > ct["rows"][5]["over_half"] == ct["min_over_half"] > 1
    text = page("flash_attention")
    limit = text[text.index("So halving the FLOPs is the long-sequence limit"):]
    limit = limit[: limit.index("times.") + len("times.")]
    for key in ("rows.0.T ,", "rows.0.computed_share .1% round=nearest", "rows.0.over_half .3f", "rows.5.T ,",
                "rows.5.over_half .3f round=nearest"):
        assert f"{{{{ value flash_causal_tiles {key} }}}}" in limit, key
    # "the rate at which it actually computes is higher than the table's by the same factors: at T = 1,024,
    # 93 TFLOP/s executed against the table's 82": the halved count over the measured time, times the
    # tiles' share over one half, both from their own sources
    tp = d("flash_throughput")
    assert tp["tile"] == ct["block"] and tp["rows"][0]["T"] == ct["rows"][0]["T"]
    for r, c in zip(tp["rows"], ct["rows"]):
        assert r["tiled_over_half"] == c["over_half"]
        assert r["flash_executed"] == pytest.approx(r["flash"] * (r["T"] // 128 + 1) / (r["T"] // 128), rel=1e-12)
    assert tp["rows"][0]["flash_executed"] > tp["rows"][0]["flash"] + 5  # the two differ as shown (93 against 82)
    executed = sentence(text, "the rate at which it actually computes is")
    for key in ("rows.0.T ,", "rows.0.flash_executed ,.0f round=nearest", "rows.0.flash ,.0f round=nearest"):
        assert f"{{{{ value flash_throughput {key} }}}}" in executed, key
    assert "its real rate is higher" not in text
    q = np.random.default_rng(0).normal(size=(40, 4))
    _, tr = mhalib.tiled_attention(q, q, q, block_q=8, block_k=8, causal=True, trace=True)
    c = mhalib.causal_tile_counts(40, 8, 8)
    assert (tr["tiles_visited"], tr["tiles_masked"]) == (c["visited"], c["partial"]) == (15, 5)
    assert "`mhalib.tiled_attention(..., causal=True)` skips the same tiles" in text
