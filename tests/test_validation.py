"""Bad input: every case raises TypeError/ValueError naming the argument."""
import math

import numpy as np
import pytest

import mhalib as m
from mhalib import examples

X = np.ones((3, 4))
W = np.eye(4)


@pytest.mark.parametrize("call,exc,words", [
    # d_model not divisible by n_heads
    pytest.param(lambda: m.split_heads(np.ones((3, 6)), 4), ValueError, ["d_model", "6", "n_heads", "4"], id="split_heads-D-not-divisible-by-H"),
    pytest.param(lambda: m.multi_head_attention(np.ones((3, 6)), np.eye(6), np.eye(6), np.eye(6), n_heads=4), ValueError, ["d_model", "n_heads"], id="mha-D-not-divisible-by-H"),
    pytest.param(lambda: m.mha_param_count(10, 3), ValueError, ["d_model", "n_heads"], id="param_count-D-not-divisible-by-H"),
    # n_heads not divisible by n_kv_heads
    pytest.param(lambda: m.multi_head_attention(np.ones((3, 6)), np.eye(6), np.ones((6, 4)), np.ones((6, 4)), n_heads=3, n_kv_heads=2), ValueError, ["n_heads=3", "n_kv_heads=2"], id="mha-H-not-divisible-by-H_kv"),
    pytest.param(lambda: m.mha_param_count(12, 6, n_kv_heads=4), ValueError, ["n_heads", "n_kv_heads"], id="param_count-H-not-divisible-by-H_kv"),
    # odd d_model for sinusoidal PE or RoPE
    pytest.param(lambda: m.sinusoidal_encoding(4, 5), ValueError, ["d_model", "even", "5"], id="sinusoidal_encoding-odd-d_model"),
    pytest.param(lambda: m.sinusoidal_frequencies(7), ValueError, ["d_model", "even"], id="sinusoidal_frequencies-odd-d_model"),
    pytest.param(lambda: m.apply_rope(np.ones((2, 3))), ValueError, ["d_head", "even", "3"], id="apply_rope-odd-d_head"),
    pytest.param(lambda: m.rope_frequencies(9), ValueError, ["d_head", "even"], id="rope_frequencies-odd-d_head"),
    # a mask that does not broadcast
    pytest.param(lambda: m.scaled_dot_product_attention(X, X, X, mask=np.ones((2, 3), bool)), ValueError, ["mask", "(2, 3)", "(3, 3)"], id="sdpa-mask-does-not-broadcast"),
    pytest.param(lambda: m.scaled_dot_product_attention(X, X, X, mask=np.ones((3, 3))), TypeError, ["mask", "boolean", "float64"], id="sdpa-float-mask"),
    pytest.param(lambda: m.scaled_dot_product_attention(X, X, X, bias=np.ones((4, 4))), ValueError, ["bias", "(4, 4)"], id="sdpa-bias-does-not-broadcast"),
    # non-positive counts
    pytest.param(lambda: m.causal_mask(0), ValueError, ["T", ">= 1", "0"], id="causal_mask-T=0"),
    pytest.param(lambda: m.split_heads(X, 0), ValueError, ["n_heads", "0"], id="split_heads-n_heads=0"),
    pytest.param(lambda: m.sinusoidal_encoding(-1, 4), ValueError, ["n_positions", "-1"], id="sinusoidal_encoding-negative-n_positions"),
    pytest.param(lambda: m.alibi_slopes(0), ValueError, ["n_heads", "0"], id="alibi_slopes-n_heads=0"),
    pytest.param(lambda: m.attention_scores_bytes(0), ValueError, ["T"], id="scores_bytes-T=0"),
    pytest.param(lambda: m.attention_scores_bytes(8, batch=-2), ValueError, ["batch"], id="scores_bytes-negative-batch"),
    pytest.param(lambda: m.kv_cache_bytes_per_token(0, 1, 1), ValueError, ["n_layers"], id="kv_cache-n_layers=0"),
    pytest.param(lambda: m.learned_position_table(0, 4, seed=0), ValueError, ["max_positions"], id="learned_table-max_positions=0"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=0), ValueError, ["n_heads"], id="mha-n_heads=0"),
    pytest.param(lambda: m.causal_mask(2.5), TypeError, ["T", "integer", "2.5"], id="causal_mask-float-T"),
    pytest.param(lambda: m.causal_mask(True), TypeError, ["T", "integer"], id="causal_mask-bool-T"),
    # an unknown RoPE layout
    pytest.param(lambda: m.apply_rope(np.ones((2, 4)), layout="rotate_half"), ValueError, ["layout", "interleaved", "half", "rotate_half"], id="apply_rope-unknown-layout"),
    pytest.param(lambda: m.causal_mask(2, align="middle"), ValueError, ["align", "top_left"], id="causal_mask-unknown-align"),
    # NaN or inf in q, k or v
    pytest.param(lambda: m.scaled_dot_product_attention(np.array([[np.nan, 0.0]]), np.ones((1, 2)), np.ones((1, 2))), ValueError, ["q", "NaN"], id="sdpa-NaN-in-q"),
    pytest.param(lambda: m.scaled_dot_product_attention(np.ones((1, 2)), np.array([[np.inf, 0.0]]), np.ones((1, 2))), ValueError, ["k", "inf"], id="sdpa-inf-in-k"),
    pytest.param(lambda: m.scaled_dot_product_attention(np.ones((1, 2)), np.ones((1, 2)), np.array([[0.0, -np.inf]])), ValueError, ["v", "inf"], id="sdpa-inf-in-v"),
    pytest.param(lambda: m.multi_head_attention(np.full((2, 4), np.nan), W, W, W, n_heads=2), ValueError, ["x", "NaN"], id="mha-NaN-in-x"),
    pytest.param(lambda: m.softmax(np.array([np.nan, 1.0])), ValueError, ["x", "NaN"], id="softmax-NaN"),
    pytest.param(lambda: m.softmax(np.array([np.inf, 1.0])), ValueError, ["x", "+inf"], id="softmax-plus-inf"),
    # other shape and type errors
    pytest.param(lambda: m.scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 5)), X), ValueError, ["q", "k", "last dimension"], id="sdpa-q-k-different-d"),
    pytest.param(lambda: m.scaled_dot_product_attention(X, X, np.ones((2, 4))), ValueError, ["k", "v", "number of keys"], id="sdpa-k-v-different-S"),
    pytest.param(lambda: m.scaled_dot_product_attention(np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4))), ValueError, ["leading", "do not broadcast"], id="sdpa-leading-axes-do-not-broadcast"),
    pytest.param(lambda: m.scaled_dot_product_attention(np.ones(4), X, X), ValueError, ["q", "at least 2"], id="sdpa-1d-q"),
    pytest.param(lambda: m.scaled_dot_product_attention(X, X, X, scale=0.0), ValueError, ["scale", "> 0"], id="sdpa-scale=0"),
    pytest.param(lambda: m.scaled_dot_product_attention(X, X, X, scale="big"), TypeError, ["scale"], id="sdpa-scale-string"),
    pytest.param(lambda: m.scaled_dot_product_attention(X, X, X, causal=1), TypeError, ["causal", "True or False"], id="sdpa-causal-int"),
    pytest.param(lambda: m.scaled_dot_product_attention(X, X, X, bias=np.full((3, 3), np.nan)), ValueError, ["bias", "NaN"], id="sdpa-NaN-bias"),
    pytest.param(lambda: m.scaled_dot_product_attention(np.array([["a", "b"]]), X, X), TypeError, ["q", "real numbers"], id="sdpa-string-q"),
    pytest.param(lambda: m.scaled_dot_product_attention(np.ones((2, 2), bool), X, X), TypeError, ["q", "bool"], id="sdpa-bool-q"),
    pytest.param(lambda: m.softmax(np.ones(3), axis=2), ValueError, ["axis"], id="softmax-axis-out-of-range"),
    pytest.param(lambda: m.multi_head_attention(X, np.eye(3), W, W, n_heads=1), ValueError, ["w_q", "4 rows"], id="mha-w_q-rows"),
    pytest.param(lambda: m.multi_head_attention(X, W, np.ones((4, 3)), W, n_heads=2), ValueError, ["w_k", "columns"], id="mha-w_k-columns"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, np.eye(3), n_heads=2), ValueError, ["w_o", "rows"], id="mha-w_o-rows"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, b_q=np.ones(3)), ValueError, ["b_q", "(4,)"], id="mha-b_q-shape"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, b_o=np.ones(4)), ValueError, ["b_o", "w_o"], id="mha-b_o-without-w_o"),
    pytest.param(lambda: m.multi_head_attention(X, np.ones(4), W, W, n_heads=2), ValueError, ["w_q", "2-D"], id="mha-1d-w_q"),
    pytest.param(lambda: m.per_head_output(np.ones((2, 3, 2)), np.ones((3, 4))), ValueError, ["w_o"], id="per_head_output-w_o-rows"),
    pytest.param(lambda: m.combine_heads(np.ones((3, 4))), ValueError, ["x", "at least 3"], id="combine_heads-2d-x"),
    pytest.param(lambda: m.repeat_kv_heads(np.ones((1, 2, 3)), 0), ValueError, ["n_rep"], id="repeat_kv_heads-n_rep=0"),
    pytest.param(lambda: m.apply_rope(np.ones((3, 4)), positions=np.arange(4)), ValueError, ["positions", "(4,)"], id="apply_rope-positions-shape"),
    pytest.param(lambda: m.apply_rope(np.ones((3, 4)), positions=np.array([0, np.nan, 1])), ValueError, ["positions", "NaN"], id="apply_rope-NaN-position"),
    pytest.param(lambda: m.sinusoidal_encoding(4, 4, base=-1.0), ValueError, ["base", "> 0"], id="sinusoidal_encoding-negative-base"),
    pytest.param(lambda: m.sinusoidal_encoding(4, 4, start=-1), ValueError, ["start"], id="sinusoidal_encoding-negative-start"),
    pytest.param(lambda: m.offset_matrix(1.5, 4), TypeError, ["k", "integer"], id="offset_matrix-float-k"),
    pytest.param(lambda: m.alibi_bias(4, 2, form="paper"), ValueError, ["form", "relative"], id="alibi_bias-unknown-form"),
    pytest.param(lambda: m.alibi_bias(4, 2, causal=False, form="row_constant"), ValueError, ["row_constant", "causal"], id="alibi_bias-row_constant-not-causal"),
    pytest.param(lambda: m.attention_scores_bytes(8, dtype="float8"), ValueError, ["dtype", "float32", "float8"], id="scores_bytes-unknown-dtype-name"),
    pytest.param(lambda: m.attention_scores_bytes(8, dtype=object), ValueError, ["dtype"], id="scores_bytes-dtype-object"),
    pytest.param(lambda: m.padding_mask([1.5, 2.0], 3), TypeError, ["lengths", "integers"], id="padding_mask-float-lengths"),
    pytest.param(lambda: m.padding_mask(np.array([4]), 3), ValueError, ["lengths", "S=3"], id="padding_mask-length-past-S"),
    pytest.param(lambda: m.lookup_positions(np.ones(4), 2), ValueError, ["table", "2-D"], id="lookup_positions-1d-table"),
    pytest.param(lambda: m.learned_position_table(4, 4, seed=0, std=0), ValueError, ["std"], id="learned_table-std=0"),
    pytest.param(lambda: m.learned_position_table(4, 4, seed=-1), ValueError, ["seed"], id="learned_table-negative-seed"),
    pytest.param(lambda: m.exp_overflow_threshold("int32"), ValueError, ["dtype", "int32"], id="exp_overflow_threshold-int-dtype"),
    pytest.param(lambda: m.exp_overflow_threshold(object()), ValueError, ["dtype"], id="exp_overflow_threshold-not-a-dtype"),
    pytest.param(lambda: m.masked_fill_value("big"), TypeError, ["value"], id="masked_fill_value-string"),
    pytest.param(lambda: m.rotation_matrix("a"), TypeError, ["angle"], id="rotation_matrix-string"),
    pytest.param(lambda: m.rotation_matrix(math.inf), ValueError, ["angle", "finite"], id="rotation_matrix-inf"),
    pytest.param(lambda: m.dot_product_variance(0), ValueError, ["d_head"], id="dot_product_variance-d_head=0"),
    pytest.param(lambda: m.max_attention_weight(4, scaled="yes"), TypeError, ["scaled"], id="max_attention_weight-scaled-string"),
    pytest.param(lambda: examples.heads_preset("Mirror"), ValueError, ["name", "Identity", "Mirror"], id="heads_preset-unknown-name"),
    pytest.param(lambda: examples.heads_in_action("Identity", tau=0), ValueError, ["tau"], id="heads_in_action-tau=0"),
    pytest.param(lambda: examples.six_by_three(seed=-3), ValueError, ["seed"], id="six_by_three-negative-seed"),
    # positions, RoPE, ALiBi and value_context inside multi-head attention
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, positions=np.arange(3)), ValueError, ["positions", "rope_base", "alibi"], id="mha-positions-without-rope-or-alibi"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, rope_base=1e4, positions=np.arange(4)), ValueError, ["positions", "(3,)", "(4,)"], id="mha-positions-shape"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, alibi=True, key_positions=[0, 1]), ValueError, ["key_positions", "(3,)"], id="mha-key_positions-shape"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, rope_base=1e4, positions=[0, np.nan, 1]), ValueError, ["positions", "NaN"], id="mha-NaN-position"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, rope_base=0.0), ValueError, ["rope_base", "> 0"], id="mha-rope_base=0"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, rope_base="big"), TypeError, ["rope_base"], id="mha-rope_base-string"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=4, rope_base=1e4), ValueError, ["rope_base", "even", "d_head = 1"], id="mha-rope-odd-d_head"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, rope_base=1e4, rope_layout="rotate_half"), ValueError, ["rope_layout", "interleaved", "half", "rotate_half"], id="mha-unknown-rope_layout"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, rope_layout="half"), ValueError, ["rope_layout", "rope_base"], id="mha-rope_layout-without-rope_base"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, alibi=1), TypeError, ["alibi", "True or False"], id="mha-alibi-int"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, alibi=True, bias=np.ones((2, 2))), ValueError, ["bias", "(2, 2)", "(..., 2, 3, 3)"], id="mha-alibi-bias-does-not-broadcast"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, alibi=True, positions=[0, 1, 1e308], key_positions=[-1e308, 0, 1]), ValueError, ["overflow", "ALiBi", "positions"], id="mha-alibi-distance-overflow"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, alibi=True, bias=np.full((3, 3), -1.79e308), positions=[0, 0, 1e308], key_positions=[0, 0, 0]), ValueError, ["overflow", "bias", "ALiBi"], id="mha-alibi-plus-bias-overflow"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, value_context=np.ones((2, 4))), ValueError, ["value_context", "(2, 4)", "x", "(3, 4)"], id="mha-value_context-length"),
    pytest.param(lambda: m.multi_head_attention(X, W, W, W, n_heads=2, value_context=np.ones((3, 5))), ValueError, ["w_v", "5 rows", "value_context"], id="mha-value_context-width"),
    pytest.param(lambda: m.mha_param_count(512, 8, d_head=0), ValueError, ["d_head", ">= 1"], id="param_count-d_head=0"),
    pytest.param(lambda: m.mha_param_count(10, 3, d_head=2.5), TypeError, ["d_head", "integer"], id="param_count-float-d_head"),
    # the KV cache and decoding
    pytest.param(lambda: m.KVCache(n_kv_heads=0, d_head=4), ValueError, ["n_kv_heads", ">= 1", "0"], id="KVCache-n_kv_heads=0"),
    pytest.param(lambda: m.KVCache(0, n_kv_heads=1, d_head=4), ValueError, ["n_layers", "0"], id="KVCache-n_layers=0"),
    pytest.param(lambda: m.KVCache(n_kv_heads=1, d_head=4, batch=1.0), TypeError, ["batch", "integer"], id="KVCache-float-batch"),
    pytest.param(lambda: m.KVCache(n_kv_heads=1, d_head=4, dtype="int32"), ValueError, ["dtype", "float64", "int32"], id="KVCache-int-dtype"),
    pytest.param(lambda: m.KVCache(n_kv_heads=1, d_head=4, dtype="nonsense"), ValueError, ["dtype", "nonsense"], id="KVCache-unknown-dtype"),
    pytest.param(lambda: m.KVCache(2, n_kv_heads=1, d_head=4).length(2), ValueError, ["layer", "[0, 1]", "2"], id="KVCache-layer-out-of-range"),
    pytest.param(lambda: m.KVCache(n_kv_heads=1, d_head=4).keys(-1), ValueError, ["layer", ">= 0"], id="KVCache-negative-layer"),
    pytest.param(lambda: m.KVCache(n_kv_heads=2, d_head=4).append(0, np.ones((1, 1, 3, 4)), np.ones((1, 1, 3, 4))), ValueError, ["k", "(1, 2, t, 4)", "(1, 1, 3, 4)"], id="KVCache-append-wrong-heads"),
    pytest.param(lambda: m.KVCache(n_kv_heads=1, d_head=4).append(0, np.ones((1, 1, 3, 4)), np.ones((1, 1, 3))), ValueError, ["v", "(1, 1, t, 4)"], id="KVCache-append-3d-v"),
    pytest.param(lambda: m.KVCache(n_kv_heads=1, d_head=4).append(0, np.ones((1, 1, 3, 4)), np.ones((1, 1, 2, 4))), ValueError, ["k", "v", "same number of new tokens"], id="KVCache-append-k-v-lengths"),
    pytest.param(lambda: m.KVCache(n_kv_heads=1, d_head=4).append(0, np.full((1, 1, 1, 4), np.nan), np.ones((1, 1, 1, 4))), ValueError, ["k", "NaN"], id="KVCache-append-NaN"),
    pytest.param(lambda: m.KVCache(n_kv_heads=1, d_head=1, dtype=np.float16).append(0, np.full((1, 1, 1, 1), 1e6), np.ones((1, 1, 1, 1))), ValueError, ["overflow", "k", "float16"], id="KVCache-append-overflows-float16"),
    pytest.param(lambda: m.decode_step(np.ones((1, 4)), "cache", W, W, W, n_heads=2), TypeError, ["cache", "KVCache", "str"], id="decode_step-cache-not-a-KVCache"),
    pytest.param(lambda: m.decode_step(np.ones((2, 4)), m.KVCache(n_kv_heads=2, d_head=2), W, W, W, n_heads=2), ValueError, ["x_t", "B=2", "batch=1"], id="decode_step-batch-mismatch"),
    pytest.param(lambda: m.decode_step(np.ones((1, 1, 1, 4)), m.KVCache(n_kv_heads=2, d_head=2), W, W, W, n_heads=2), ValueError, ["x_t", "(B, D)", "(1, 1, 1, 4)"], id="decode_step-4d-x_t"),
    pytest.param(lambda: m.decode_step(np.ones((1, 0, 4)), m.KVCache(n_kv_heads=2, d_head=2), W, W, W, n_heads=2), ValueError, ["x_t", "at least one"], id="decode_step-no-token"),
    pytest.param(lambda: m.decode_step(np.ones((1, 4)), m.KVCache(n_kv_heads=1, d_head=2), W, W, W, n_heads=2), ValueError, ["n_kv_heads=2", "n_kv_heads=1"], id="decode_step-heads-differ-from-cache"),
    pytest.param(lambda: m.decode_step(np.ones((1, 4)), m.KVCache(n_kv_heads=2, d_head=2), np.eye(3), W, W, n_heads=2), ValueError, ["w_q", "4 rows", "x_t"], id="decode_step-w_q-rows"),
    pytest.param(lambda: m.decode_step(np.ones((1, 4)), m.KVCache(n_kv_heads=2, d_head=2), W, W, W, n_heads=2, layer=1), ValueError, ["layer", "1"], id="decode_step-layer-out-of-range"),
    pytest.param(lambda: m.decode_step(np.ones((1, 4)), m.KVCache(n_kv_heads=2, d_head=2), W, W, W, n_heads=2, rope_base=-1.0), ValueError, ["rope_base"], id="decode_step-negative-rope_base"),
    pytest.param(lambda: m.kv_cache_bytes(1, 1, 1, -1), ValueError, ["n_tokens", ">= 0", "-1"], id="kv_cache_bytes-negative-n_tokens"),
    pytest.param(lambda: m.kv_cache_bytes(1, 1, 1, 4, batch=0), ValueError, ["batch", ">= 1"], id="kv_cache_bytes-batch=0"),
    # tiled attention and its counts
    pytest.param(lambda: m.tiled_attention(X, X, X, causal="yes"), TypeError, ["causal", "True or False"], id="tiled-causal-string"),
    pytest.param(lambda: m.tiled_attention(X, X, X, trace=1), TypeError, ["trace", "True or False"], id="tiled-trace-int"),
    pytest.param(lambda: m.tiled_attention(X, X, np.ones((2, 4))), ValueError, ["k", "v", "number of keys"], id="tiled-k-v-different-S"),
    pytest.param(lambda: m.tiled_attention(np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4))), ValueError, ["leading", "do not broadcast"], id="tiled-leading-axes"),
    pytest.param(lambda: m.tiled_attention(X, np.ones((3, 5)), X), ValueError, ["q", "k", "last dimension"], id="tiled-q-k-different-d"),
    pytest.param(lambda: m.tiled_attention(X, X, X, scale=-1.0), ValueError, ["scale", "> 0"], id="tiled-negative-scale"),
    pytest.param(lambda: m.attention_flops(4, 8, 2, causal=True), ValueError, ["causal", "T == S", "T=4", "S=8"], id="flops-causal-T-ne-S"),
    pytest.param(lambda: m.attention_flops(0, 8, 2), ValueError, ["T", ">= 1"], id="flops-T=0"),
    pytest.param(lambda: m.attention_hbm_bytes(8, 4, method="flash"), ValueError, ["method", "naive", "tiled", "flash"], id="hbm-unknown-method"),
    pytest.param(lambda: m.attention_hbm_bytes(8, 4, method="tiled"), ValueError, ["block", "sram_bytes", "exactly one"], id="hbm-tiled-without-block"),
    pytest.param(lambda: m.attention_hbm_bytes(8, 4, method="tiled", block=2, sram_bytes=1024), ValueError, ["block", "sram_bytes", "exactly one"], id="hbm-tiled-block-and-sram"),
    pytest.param(lambda: m.attention_hbm_bytes(8, 4, method="tiled", block=0), ValueError, ["block", ">= 1"], id="hbm-block=0"),
    pytest.param(lambda: m.attention_hbm_bytes(8, 64, method="tiled", sram_bytes=100), ValueError, ["sram_bytes=100", "512"], id="hbm-sram-too-small"),
    pytest.param(lambda: m.attention_hbm_bytes(8, 4, method="naive", block=2), ValueError, ["naive", "block"], id="hbm-naive-with-block"),
])
def test_bad_input_is_refused_with_a_clear_message(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    for w in words:
        assert w in msg, f"{w!r} missing from: {msg}"
