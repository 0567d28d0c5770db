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
    (lambda: m.split_heads(np.ones((3, 6)), 4), ValueError, ["d_model", "6", "n_heads", "4"]),
    (lambda: m.multi_head_attention(np.ones((3, 6)), np.eye(6), np.eye(6), np.eye(6), n_heads=4), ValueError, ["d_model", "n_heads"]),
    (lambda: m.mha_param_count(10, 3), ValueError, ["d_model", "n_heads"]),
    # n_heads not divisible by n_kv_heads
    (lambda: m.multi_head_attention(np.ones((3, 6)), np.eye(6), np.ones((6, 4)), np.ones((6, 4)), n_heads=3, n_kv_heads=2), ValueError, ["n_heads=3", "n_kv_heads=2"]),
    (lambda: m.mha_param_count(12, 6, n_kv_heads=4), ValueError, ["n_heads", "n_kv_heads"]),
    # odd d_model for sinusoidal PE or RoPE
    (lambda: m.sinusoidal_encoding(4, 5), ValueError, ["d_model", "even", "5"]),
    (lambda: m.sinusoidal_frequencies(7), ValueError, ["d_model", "even"]),
    (lambda: m.apply_rope(np.ones((2, 3))), ValueError, ["d_head", "even", "3"]),
    (lambda: m.rope_frequencies(9), ValueError, ["d_head", "even"]),
    # a mask that does not broadcast
    (lambda: m.scaled_dot_product_attention(X, X, X, mask=np.ones((2, 3), bool)), ValueError, ["mask", "(2, 3)", "(3, 3)"]),
    (lambda: m.scaled_dot_product_attention(X, X, X, mask=np.ones((3, 3))), TypeError, ["mask", "boolean", "float64"]),
    (lambda: m.scaled_dot_product_attention(X, X, X, bias=np.ones((4, 4))), ValueError, ["bias", "(4, 4)"]),
    # non-positive counts
    (lambda: m.causal_mask(0), ValueError, ["T", ">= 1", "0"]),
    (lambda: m.split_heads(X, 0), ValueError, ["n_heads", "0"]),
    (lambda: m.sinusoidal_encoding(-1, 4), ValueError, ["n_positions", "-1"]),
    (lambda: m.alibi_slopes(0), ValueError, ["n_heads", "0"]),
    (lambda: m.attention_scores_bytes(0), ValueError, ["T"]),
    (lambda: m.attention_scores_bytes(8, batch=-2), ValueError, ["batch"]),
    (lambda: m.kv_cache_bytes_per_token(0, 1, 1), ValueError, ["n_layers"]),
    (lambda: m.learned_position_table(0, 4, seed=0), ValueError, ["max_positions"]),
    (lambda: m.multi_head_attention(X, W, W, W, n_heads=0), ValueError, ["n_heads"]),
    (lambda: m.causal_mask(2.5), TypeError, ["T", "integer", "2.5"]),
    (lambda: m.causal_mask(True), TypeError, ["T", "integer"]),
    # an unknown RoPE layout
    (lambda: m.apply_rope(np.ones((2, 4)), layout="rotate_half"), ValueError, ["layout", "interleaved", "half", "rotate_half"]),
    (lambda: m.causal_mask(2, align="middle"), ValueError, ["align", "top_left"]),
    # NaN or inf in q, k or v
    (lambda: m.scaled_dot_product_attention(np.array([[np.nan, 0.0]]), np.ones((1, 2)), np.ones((1, 2))), ValueError, ["q", "NaN"]),
    (lambda: m.scaled_dot_product_attention(np.ones((1, 2)), np.array([[np.inf, 0.0]]), np.ones((1, 2))), ValueError, ["k", "inf"]),
    (lambda: m.scaled_dot_product_attention(np.ones((1, 2)), np.ones((1, 2)), np.array([[0.0, -np.inf]])), ValueError, ["v", "inf"]),
    (lambda: m.multi_head_attention(np.full((2, 4), np.nan), W, W, W, n_heads=2), ValueError, ["x", "NaN"]),
    (lambda: m.softmax(np.array([np.nan, 1.0])), ValueError, ["x", "NaN"]),
    (lambda: m.softmax(np.array([np.inf, 1.0])), ValueError, ["x", "+inf"]),
    # other shape and type errors
    (lambda: m.scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 5)), X), ValueError, ["q", "k", "last dimension"]),
    (lambda: m.scaled_dot_product_attention(X, X, np.ones((2, 4))), ValueError, ["k", "v", "number of keys"]),
    (lambda: m.scaled_dot_product_attention(np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4))), ValueError, ["leading", "do not broadcast"]),
    (lambda: m.scaled_dot_product_attention(np.ones(4), X, X), ValueError, ["q", "at least 2"]),
    (lambda: m.scaled_dot_product_attention(X, X, X, scale=0.0), ValueError, ["scale", "> 0"]),
    (lambda: m.scaled_dot_product_attention(X, X, X, scale="big"), TypeError, ["scale"]),
    (lambda: m.scaled_dot_product_attention(X, X, X, causal=1), TypeError, ["causal", "True or False"]),
    (lambda: m.scaled_dot_product_attention(X, X, X, bias=np.full((3, 3), np.nan)), ValueError, ["bias", "NaN"]),
    (lambda: m.scaled_dot_product_attention(np.array([["a", "b"]]), X, X), TypeError, ["q", "real numbers"]),
    (lambda: m.scaled_dot_product_attention(np.ones((2, 2), bool), X, X), TypeError, ["q", "bool"]),
    (lambda: m.softmax(np.ones(3), axis=2), ValueError, ["axis"]),
    (lambda: m.multi_head_attention(X, np.eye(3), W, W, n_heads=1), ValueError, ["w_q", "4 rows"]),
    (lambda: m.multi_head_attention(X, W, np.ones((4, 3)), W, n_heads=2), ValueError, ["w_k", "columns"]),
    (lambda: m.multi_head_attention(X, W, W, W, np.eye(3), n_heads=2), ValueError, ["w_o", "rows"]),
    (lambda: m.multi_head_attention(X, W, W, W, n_heads=2, b_q=np.ones(3)), ValueError, ["b_q", "(4,)"]),
    (lambda: m.multi_head_attention(X, W, W, W, n_heads=2, b_o=np.ones(4)), ValueError, ["b_o", "w_o"]),
    (lambda: m.multi_head_attention(X, np.ones(4), W, W, n_heads=2), ValueError, ["w_q", "2-D"]),
    (lambda: m.per_head_output(np.ones((2, 3, 2)), np.ones((3, 4))), ValueError, ["w_o"]),
    (lambda: m.combine_heads(np.ones((3, 4))), ValueError, ["x", "at least 3"]),
    (lambda: m.repeat_kv_heads(np.ones((1, 2, 3)), 0), ValueError, ["n_rep"]),
    (lambda: m.apply_rope(np.ones((3, 4)), positions=np.arange(4)), ValueError, ["positions", "(4,)"]),
    (lambda: m.apply_rope(np.ones((3, 4)), positions=np.array([0, np.nan, 1])), ValueError, ["positions", "NaN"]),
    (lambda: m.sinusoidal_encoding(4, 4, base=-1.0), ValueError, ["base", "> 0"]),
    (lambda: m.sinusoidal_encoding(4, 4, start=-1), ValueError, ["start"]),
    (lambda: m.offset_matrix(1.5, 4), TypeError, ["k", "integer"]),
    (lambda: m.alibi_bias(4, 2, form="paper"), ValueError, ["form", "relative"]),
    (lambda: m.alibi_bias(4, 2, causal=False, form="row_constant"), ValueError, ["row_constant", "causal"]),
    (lambda: m.attention_scores_bytes(8, dtype="float8"), ValueError, ["dtype", "float32", "float8"]),
    (lambda: m.attention_scores_bytes(8, dtype=object), ValueError, ["dtype"]),
    (lambda: m.padding_mask([1.5, 2.0], 3), TypeError, ["lengths", "integers"]),
    (lambda: m.padding_mask(np.array([4]), 3), ValueError, ["lengths", "S=3"]),
    (lambda: m.lookup_positions(np.ones(4), 2), ValueError, ["table", "2-D"]),
    (lambda: m.learned_position_table(4, 4, seed=0, std=0), ValueError, ["std"]),
    (lambda: m.learned_position_table(4, 4, seed=-1), ValueError, ["seed"]),
    (lambda: m.exp_overflow_threshold("int32"), ValueError, ["dtype", "int32"]),
    (lambda: m.exp_overflow_threshold(object()), ValueError, ["dtype"]),
    (lambda: m.masked_fill_value("big"), TypeError, ["value"]),
    (lambda: m.rotation_matrix("a"), TypeError, ["angle"]),
    (lambda: m.rotation_matrix(math.inf), ValueError, ["angle", "finite"]),
    (lambda: m.dot_product_variance(0), ValueError, ["d_k"]),
    (lambda: m.max_attention_weight(4, scaled="yes"), TypeError, ["scaled"]),
    (lambda: examples.heads_preset("Mirror"), ValueError, ["name", "Identity", "Mirror"]),
    (lambda: examples.heads_in_action("Identity", tau=0), ValueError, ["tau"]),
    (lambda: examples.six_by_three(seed=-3), ValueError, ["seed"]),
])
def test_bad_input_is_refused_with_a_clear_message(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    for w in words:
        assert w in msg, f"{w!r} missing from: {msg}"
