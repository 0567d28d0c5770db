"""Parameter, memory, KV-cache, FLOP and memory-traffic counts (pages: multi-head attention;
attention cost; Generating text: the KV cache; FlashAttention: exact attention, one tile at a time).

    params(MHA)  = D*(H*d) + 2*D*(H_kv*d) + (H*d)*D  [+ H*d + 2*H_kv*d + D with biases]
                 = 4 D^2 (+ 4 D)  when H_kv = H, whatever H is, since H*d = D
    scores bytes = batch * heads * T * S * bytes_per_element
    KV cache     = 2 (K and V) * layers * H_kv * d * bytes_per_element   per token
                   (times batch * tokens for the whole cache)
    FLOPs        = 4 * T * S * d per head (Q K^T and P V, 2 FLOPs per multiply-add)
    causal tiles = n (n + 1) / 2 of n^2 tiles visited, n blocks a side (causal_tile_counts)
    HBM traffic  = (4 T d + 4 T^2) elements (naive) vs T d (2 + 2 ceil(T / block)) (tiled: query
                   blocks outside) vs 3 T d + 2 T + ceil(T / B_c) (3 T d + 4 T) (flash1: Algorithm 1
                   of the FlashAttention paper, key blocks outside, B_c = ceil(M / 4d))
"""
from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

from . import _checks

#: Bytes per element of the dtypes the pages talk about (bfloat16 is not a numpy dtype).
DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1}


def dtype_bytes(dtype: DTypeLike) -> int:
    """Bytes per element of ``dtype`` (a name from :data:`DTYPE_BYTES` or a numpy float dtype).

    Any other dtype is refused with a ``ValueError``, and so is ``None`` (``np.dtype(None)``
    would be float64, 8 bytes, silently)."""
    return DTYPE_BYTES[_checks.dtype_choice(dtype, "dtype", tuple(DTYPE_BYTES))]


def mha_param_count(d_model: int, n_heads: int, *, bias: bool = True, n_kv_heads: int | None = None,
                    output_projection: bool = True, d_head: int | None = None) -> int:
    """Number of learned parameters in one multi-head attention layer.

        D*(H*d) + 2*D*(H_kv*d) + (H*d)*D      [+ H*d + 2*H_kv*d + D with biases]

    ``d_head`` defaults to ``D / H``; models whose heads are wider or narrower than that
    pass it (Gemma 7B: ``D = 3072``, 16 heads of ``d = 256``, so ``H*d = 4096 != D``).

    Example: ``mha_param_count(512, 8, bias=False) == 4 * 512**2 == 1_048_576`` and a
    single head without ``W_O``, ``mha_param_count(512, 1, bias=False,
    output_projection=False) == 3 * 512**2 == 786_432``; Gemma 7B's
    ``mha_param_count(3072, 16, d_head=256, bias=False) == 4 * 3072 * 4096 == 50_331_648``.
    """
    D = _checks.positive_int(d_model, "d_model")
    H = _checks.positive_int(n_heads, "n_heads")
    H_kv = H if n_kv_heads is None else _checks.positive_int(n_kv_heads, "n_kv_heads")
    if d_head is None:
        d = _checks.divisible(D, H, "d_model", "n_heads")
    else:
        d = _checks.positive_int(d_head, "d_head")
    _checks.divisible(H, H_kv, "n_heads", "n_kv_heads")
    bias = _checks.boolean(bias, "bias")
    output_projection = _checks.boolean(output_projection, "output_projection")
    qo, kv = H * d, H_kv * d  # H*d = D unless d_head says otherwise
    count = D * qo + 2 * D * kv  # W_Q, W_K, W_V
    if bias:
        count += qo + 2 * kv
    if output_projection:
        count += qo * D + (D if bias else 0)
    return count


def attention_scores_bytes(T: int, *, S: int | None = None, batch: int = 1, heads: int = 1,
                           dtype: DTypeLike = "float32") -> int:
    """Bytes needed to hold the full ``(batch, heads, T, S)`` score (or weight) tensor.

    Example: ``attention_scores_bytes(8192) == 8192**2 * 4 == 268_435_456`` bytes, 256 MiB.
    """
    T = _checks.positive_int(T, "T")
    S = T if S is None else _checks.positive_int(S, "S")
    batch = _checks.positive_int(batch, "batch")
    heads = _checks.positive_int(heads, "heads")
    return batch * heads * T * S * dtype_bytes(dtype)


def kv_cache_bytes_per_token(n_layers: int, n_kv_heads: int, d_head: int, *, dtype: DTypeLike = "float16") -> int:
    """Bytes of K and V cached per token during generation: ``2 * L * H_kv * d * bytes``.

    Example: LLaMA-2 70B (80 layers, 8 KV heads, d = 128, fp16) caches
    2 * 80 * 8 * 128 * 2 = 327,680 bytes = 320 KiB per token.
    """
    L = _checks.positive_int(n_layers, "n_layers")
    H_kv = _checks.positive_int(n_kv_heads, "n_kv_heads")
    d = _checks.positive_int(d_head, "d_head")
    return 2 * L * H_kv * d * dtype_bytes(dtype)


def kv_cache_bytes(n_layers: int, n_kv_heads: int, d_head: int, n_tokens: int, *, batch: int = 1,
                   dtype: DTypeLike = "float16") -> int:
    """Bytes of K and V cached for ``n_tokens`` tokens of ``batch`` sequences (page: Generating
    text: the KV cache).

        batch * n_tokens * 2 * L * H_kv * d * bytes = batch * n_tokens * kv_cache_bytes_per_token(...)

    Example: LLaMA-2 70B (80 layers, 8 KV heads, d = 128, fp16) holding a 4096-token context
    caches ``4096 * 327,680 = 1,342,177,280`` bytes = 1.25 GiB per sequence. An empty cache
    (``n_tokens=0``) holds 0 bytes.
    """
    per_token = kv_cache_bytes_per_token(n_layers, n_kv_heads, d_head, dtype=dtype)
    n_tokens = _checks.nonnegative_int(n_tokens, "n_tokens")
    batch = _checks.positive_int(batch, "batch")
    return batch * n_tokens * per_token


def attention_flops(T: int, S: int, d: int, *, n_heads: int = 1, batch: int = 1, causal: bool = False) -> int:
    """Floating-point operations of attention's two matrix products, ``Q K^T`` and ``P V`` (page:
    FlashAttention: exact attention, one tile at a time).

        FLOPs = batch * heads * (2 T S d  +  2 T S d) = 4 * batch * heads * T * S * d

    Each product has ``T S d`` multiply-adds, counted as 2 FLOPs each (the convention of
    hardware peak figures). The softmax, the scaling and the mask (``O(T S)``) are not
    counted, nor the projections. With ``causal=True`` (only for ``T == S``) the count is
    halved, the convention of the FlashAttention papers; the ``T (T + 1) / 2`` allowed
    pairs are slightly more than half, and only a kernel that skips masked blocks saves
    the other half at all. ``d`` is the width of both queries/keys and values.

    Example: ``attention_flops(1024, 1024, 64) == 4 * 1024 * 1024 * 64 == 268_435_456``
    (0.27 GFLOP), ``134_217_728`` with ``causal=True``.
    """
    T = _checks.positive_int(T, "T")
    S = _checks.positive_int(S, "S")
    d = _checks.positive_int(d, "d")
    heads = _checks.positive_int(n_heads, "n_heads")
    batch = _checks.positive_int(batch, "batch")
    causal = _checks.boolean(causal, "causal")
    flops = 4 * batch * heads * T * S * d
    if causal:
        if T != S:
            raise ValueError(
                f"causal=True halves the count only for a square mask, T == S; got T={T} and S={S} "
                "(count a rectangular mask's pairs yourself, or pass causal=False)"
            )
        flops //= 2
    return flops


def flash_block_sizes(sram_elements: int, d: int) -> tuple[int, int]:
    """Block sizes ``(B_c, B_r)`` of Algorithm 1 of the FlashAttention paper (Dao et al., 2022) (page:
    FlashAttention: exact attention, one tile at a time).

    For on-chip memory of ``M = sram_elements`` numbers and heads of width ``d``:

        B_c = ceil(M / 4d)            rows of K and V per block (the outer loop)
        B_r = min(ceil(M / 4d), d)    rows of Q per block (the inner loop)

    The paper's sizing rule: a K and a V block take about half of ``M``. It is not an exact
    fit (the ``B_r x B_c`` scores, Q and O blocks come on top) and tuned kernels choose other sizes.

    Example: an H100's 228 KiB per streaming multiprocessor holds 116,736 bf16 numbers; heads
    of 64 give ``(456, 64)``, heads of 128 give ``(228, 128)``.
    """
    M = _checks.positive_int(sram_elements, "sram_elements")
    d = _checks.positive_int(d, "d")
    B_c = -(-M // (4 * d))  # ceil(M / 4d)
    return B_c, min(B_c, d)


#: The most query blocks :func:`causal_tile_counts` counts (a Python loop, about a second per 10**6).
MAX_QUERY_BLOCKS = 10**8


def causal_tile_counts(T: int, block_q: int, block_k: int, *, S: int | None = None, causal: bool = True) -> dict:
    """How many ``block_q x block_k`` tiles of the ``T x S`` score matrix a tiled kernel visits
    (page: FlashAttention: exact attention, one tile at a time).

    The queries fall into ``ceil(T / block_q)`` blocks and the keys into ``ceil(S / block_k)``
    (the last block of each may be short). With ``causal``, query ``i`` sees keys ``j <= i``
    (top-left aligned, as ``tiled_attention``), and the tile of queries ``[i0, i1)`` and keys
    ``[j0, j1)`` is

        skipped   if  j0 > i1 - 1         every key lies after every query: nothing to compute
        partial   if  visited and j1 - 1 > i0   some entries are masked (the diagonal's tiles)
        full      otherwise               every entry is allowed

    Returns ``total``, ``visited``, ``skipped``, ``partial``, ``full`` (tile counts), and
    ``computed_share``, the share of the ``T S`` scores inside visited tiles, beside
    ``allowed_share``, the share that the mask allows. Without ``causal`` every tile is
    visited and full. Example: ``T = 10`` with blocks of 4 has 3 x 3 tiles; the query blocks
    visit 1, 2 and 3 key blocks, so 6 are visited (the 3 on the diagonal partial) and 3 skipped.
    With ``n`` square blocks along a side, ``n (n + 1) / 2`` of ``n^2`` are visited, just over half.
    """
    T = _checks.positive_int(T, "T")
    S = T if S is None else _checks.positive_int(S, "S")
    block_q = _checks.positive_int(block_q, "block_q")
    block_k = _checks.positive_int(block_k, "block_k")
    causal = _checks.boolean(causal, "causal")
    n_q, n_k = -(-T // block_q), -(-S // block_k)  # ceil: blocks of queries and of keys
    if n_q > MAX_QUERY_BLOCKS:  # counted block by block below: 2**40 of them never returned
        raise ValueError(f"T / block_q makes {n_q:,} query blocks, more than the {MAX_QUERY_BLOCKS:,} this counts "
                         f"one by one in reasonable time (T = {T:,}, block_q = {block_q:,}); use a larger block_q")
    visited = partial = computed = 0
    for i0 in range(0, T, block_q):
        i1 = min(i0 + block_q, T)
        if not causal:
            seen, clear, keys = n_k, n_k, S
        else:
            seen = min(n_k, (i1 - 1) // block_k + 1)  # key blocks starting at or before the block's last query
            # fully allowed: the block's last key j1 - 1 <= i0 (the last key block ends at S, not at a multiple)
            clear = n_k if S - 1 <= i0 else min(n_k - 1, (i0 + 1) // block_k)
            keys = min(S, seen * block_k)  # keys inside the visited tiles
        visited += seen
        partial += seen - clear
        computed += (i1 - i0) * keys
    allowed = T * S
    if causal:
        # row i allows min(i + 1, S) keys: T (T + 1) / 2 when T <= S
        allowed = T * (T + 1) // 2 if T <= S else S * (S + 1) // 2 + (T - S) * S
    total = n_q * n_k
    return dict(total=total, visited=visited, skipped=total - visited, partial=partial, full=visited - partial,
                computed_share=computed / (T * S), allowed_share=allowed / (T * S))


def attention_hbm_bytes(T: int, d: int, *, method: str, block: int | None = None, sram_bytes: int | None = None,
                        dtype: DTypeLike = "float16", n_heads: int = 1, batch: int = 1) -> int:
    """Bytes that self-attention's forward pass reads from and writes to main memory (HBM) (page:
    FlashAttention: exact attention, one tile at a time).

    For ``T`` queries and ``T`` keys of width ``d`` (values too), per head, in elements:

    * ``method="naive"`` (the FlashAttention paper's standard attention): read Q, K, V
      (``3 T d``); write the scores S and read them back for the softmax (``2 T^2``); write
      the probabilities P and read them back for ``P V`` (``2 T^2``); write O (``T d``):

          naive = 4 T d + 4 T^2

    * ``method="tiled"`` (exact attention one tile at a time with query blocks in the outer
      loop, as ``mhalib.tiled_attention`` and FlashAttention-2 run it): read Q once and write
      O once (``2 T d``); read all of K and V once per block of ``block`` queries:

          tiled = 2 T d + 2 T d * ceil(T / block) = T d (2 + 2 ceil(T / block))

      Give ``block`` (query rows per block), or ``sram_bytes``, the on-chip memory ``M``:
      then ``block = floor(M / (4 d * bytes))``, the rows of a Q, K, V and O tile of width
      ``d`` that fit in ``M`` together (an upper bound: it leaves no room for the scores).

    * ``method="flash1"`` (Algorithm 1 of the FlashAttention paper, key blocks in the outer
      loop): initialise O and the two statistics per row (``T d + 2 T``); read K and V once
      (``2 T d``); for each of the ``T_c = ceil(T / B_c)`` blocks of keys, read all of Q, O
      and the statistics and write O and the statistics back (``3 T d + 4 T``):

          flash1 = 3 T d + 2 T + ceil(T / B_c) (3 T d + 4 T)

      Give ``block`` (``B_c``, key rows per block), or ``sram_bytes``, from which
      ``B_c = ceil(M / 4d)`` with ``M`` in elements (``flash_block_sizes``).

    Counted: only the arrays above, each element once per pass over it. Not counted: the
    per-row softmax statistics of ``naive`` and ``tiled`` (``2 T`` elements, which the tiled
    forward also writes for the backward pass), masks, the projections, caches and any rounding of reads to
    cache lines. Multiply by ``n_heads * batch`` and the bytes per element of ``dtype``.

    Example: ``T = 4096``, ``d = 64``, fp16: naive ``(4 * 4096 * 64 + 4 * 4096^2) * 2 =
    136,314,880`` bytes (130 MiB); tiled with blocks of 128 rows ``4096 * 64 * (2 + 2 * 32)
    * 2 = 34,603,008`` bytes (33 MiB), 3.9 x less; Algorithm 1 with ``B_c = 456`` (an H100,
    bf16) ``(3 * 4096 * 64 + 2 * 4096 + 9 * (3 * 4096 * 64 + 4 * 4096)) * 2 = 16,039,936`` bytes, 8.5 x less.
    """
    T = _checks.positive_int(T, "T")
    d = _checks.positive_int(d, "d")
    method = _checks.choice(method, "method", ("naive", "tiled", "flash1"))
    heads = _checks.positive_int(n_heads, "n_heads")
    batch = _checks.positive_int(batch, "batch")
    size = dtype_bytes(dtype)
    if method == "naive":
        if block is not None or sram_bytes is not None:
            raise ValueError(f"method='naive' uses no blocks; drop block={block!r} and sram_bytes={sram_bytes!r}")
        elements = 4 * T * d + 4 * T * T
    else:
        if (block is None) == (sram_bytes is None):
            raise ValueError(
                f"method={method!r} needs exactly one of block (rows per block) or sram_bytes "
                f"(on-chip memory to size blocks from); got block={block!r} and sram_bytes={sram_bytes!r}"
            )
        if block is None and method == "flash1":
            sram = _checks.positive_int(sram_bytes, "sram_bytes")
            if sram < size:
                raise ValueError(f"sram_bytes={sram} cannot hold one element of {dtype} ({size} bytes); "
                                 f"give sram_bytes >= {size}")
            block = flash_block_sizes(sram // size, d)[0]
        elif block is None:
            sram = _checks.positive_int(sram_bytes, "sram_bytes")
            block = sram // (4 * d * size)
            if block < 1:
                raise ValueError(
                    f"sram_bytes={sram} cannot hold one row each of Q, K, V and O tiles of width d={d} "
                    f"({4 * d * size} bytes of {dtype}); give sram_bytes >= {4 * d * size}"
                )
        else:
            block = _checks.positive_int(block, "block")
        n_blocks = -(-T // block)  # ceil(T / block)
        if method == "flash1":  # key blocks outside: Q, O and the statistics pass once per key block
            elements = 3 * T * d + 2 * T + n_blocks * (3 * T * d + 4 * T)
        else:  # query blocks outside: K and V pass once per query block
            elements = T * d * (2 + 2 * n_blocks)
    return batch * heads * elements * size


def transformer_block_param_count(d_model: int, n_heads: int, d_ff: int, *, bias: bool = True) -> dict:
    """Learned parameters of one transformer block of the BERT / GPT-2 kind (page: where attention lives).

        attention     = mha_param_count(D, H, bias=bias)       = 4 D^2 (+ 4 D)
        feed-forward  = D*d_ff + d_ff*D  (+ d_ff + D)           two matrices, GELU between
        layer norms   = 2 * 2D                                  two LayerNorms, a gain and a bias each
        total         = attention + feed-forward + layer norms

    Pre-norm (GPT-2) and post-norm (BERT) blocks hold the same tensors; only the order in
    which they are applied differs. Blocks with RMSNorm (a gain only) or a gated
    feed-forward of three matrices (Llama's SwiGLU) are not of this kind.

    Example: BERT-base and GPT-2 small (``D = 768``, 12 heads, ``d_ff = 3072``) both have
    ``2,362,368 + 4,722,432 + 3,072 = 7,087,872`` parameters per block.

    Returns a dict with keys ``attention``, ``feed_forward``, ``layer_norms`` and ``total``.
    """
    D = _checks.positive_int(d_model, "d_model")
    F = _checks.positive_int(d_ff, "d_ff")
    bias = _checks.boolean(bias, "bias")
    attention = mha_param_count(D, n_heads, bias=bias)
    feed_forward = 2 * D * F + ((F + D) if bias else 0)
    layer_norms = 2 * 2 * D
    return dict(attention=attention, feed_forward=feed_forward, layer_norms=layer_norms,
                total=attention + feed_forward + layer_norms)
