"""mhalib: an exact reference library for multi-head attention and positional encoding.

Shape legend, used in every docstring and shape comment:

    B  batch            H  heads (H_kv: key/value heads in grouped-query attention)
    T  query length     S  key length
    D  d_model          d  d_head = D // H
    V  vocabulary size  (logits are (..., V))

Conventions: batch-first arrays; row vectors (``Q = X @ W_Q`` with ``W_Q`` of shape
``(D, H*d)``); boolean masks with True = "may attend"; float64 unless the caller passes
float32/float16; randomness only through an explicit ``seed`` (or, for sampling, an explicit
``numpy.random.Generator``). Every public function checks its arguments and raises
``TypeError``/``ValueError`` naming the argument; numpy masked arrays are refused (their mask
would be dropped silently): pass a boolean ``mask=`` instead.

Cached decoding (``KVCache``, ``decode_step``) and exact attention in tiles
(``tiled_attention``) build on the same functions, and so do the gradients of attention
(``attention_backward`` in closed form, ``tiled_attention_backward`` tile by tile);
``filter_logits``, ``sample_next``, ``greedy`` and ``beam_search`` turn a decoder's logits
``(..., V)`` into tokens.

Torch counterparts for cross-checks live in ``mhalib.torch_ref`` (needs torch).
"""
from . import examples
from .alibi import alibi_bias, alibi_slopes
from .attention import attention_scores, scaled_dot_product_attention
from .backward import attention_backward, attention_memory_between_passes, softmax_backward
from .costs import (attention_flops, attention_hbm_bytes, attention_scores_bytes, dtype_bytes, flash_block_sizes,
                    kv_cache_bytes, causal_tile_counts,
                    kv_cache_bytes_per_token, mha_param_count, transformer_block_param_count)
from .decoding import KVCache, decode_step
from .heads import combine_heads, repeat_kv_heads, split_heads
from .learned import learned_position_table, lookup_positions
from .masks import causal_mask, padding_mask
from .mla import mla_attention, mla_cache_bytes, mla_random_weights
from .mha import mha_trace, multi_head_attention, per_head_output
from .numerics import exp_overflow_threshold, masked_fill_value, naive_softmax
from .prng import Pcg32
from .relative import relative_positions, shaw_relative_index, t5_relative_position_bucket
from .rope import apply_rope, layout_permutation, rope_frequencies, rotation_matrix
from .sampling import beam_search, filter_logits, greedy, sample_next
from .scaling import dot_product_variance, dot_products, max_attention_weight, max_attention_weights
from .sinusoidal import DEFAULT_BASE, offset_matrix, sinusoidal_encoding, sinusoidal_frequencies, wavelengths
from .softmax import softmax
from .tiled import tiled_attention
from .tiled_backward import tiled_attention_backward
from .windows import sliding_window_mask

__all__ = [
    "softmax", "naive_softmax", "exp_overflow_threshold", "masked_fill_value",
    "attention_scores", "scaled_dot_product_attention", "causal_mask", "padding_mask", "sliding_window_mask",
    "split_heads", "combine_heads", "repeat_kv_heads",
    "multi_head_attention", "mha_trace", "per_head_output",
    "mha_param_count", "transformer_block_param_count", "attention_scores_bytes", "kv_cache_bytes_per_token", "kv_cache_bytes", "dtype_bytes",
    "KVCache", "decode_step",
    "mla_attention", "mla_random_weights", "mla_cache_bytes",
    "filter_logits", "sample_next", "greedy", "beam_search", "Pcg32",
    "tiled_attention", "attention_flops", "attention_hbm_bytes", "flash_block_sizes", "causal_tile_counts",
    "attention_backward", "tiled_attention_backward", "attention_memory_between_passes", "softmax_backward",
    "DEFAULT_BASE", "sinusoidal_frequencies", "wavelengths", "sinusoidal_encoding", "offset_matrix",
    "rope_frequencies", "apply_rope", "layout_permutation", "rotation_matrix",
    "alibi_slopes", "alibi_bias",
    "relative_positions", "shaw_relative_index", "t5_relative_position_bucket",
    "learned_position_table", "lookup_positions",
    "dot_products", "dot_product_variance", "max_attention_weight", "max_attention_weights",
    "examples",
]
