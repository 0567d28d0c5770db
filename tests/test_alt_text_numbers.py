"""The numbers of the figures' alt texts and captions (issue 25: never publish a wrong number).

An alt text or a caption is prose: a number typed there is held by nothing, and a retrained
model or a changed default would publish the old one with exit code 0. So every digit in a
figure's alt text or caption, an explorer's, or a table's caption (its ``caption="..."``, or
the first line of its script's docstring where the page gives none), on every page of
docs/*.md, is either

- inside a ``{{ value SCRIPT PATH FORMAT }}`` (the build fills it in from data()), or
- in a phrase of :data:`ALLOWED`, with its reason: (b) a parameter of the figure, from its
  query or its script's defaults, checked here against data() or the parameters the figure
  is drawn with; (c) a fixed fact (a name, a definition, the design of the figure); (a) a
  measured claim that no single value can say, held by the test the entry names.

A new alt text with a bare measured number fails the first test below. Pages that others are
editing are listed in :data:`PENDING` until they are done. No build: the Markdown is read with
the page grammar (hooks/directives.py), and data() is called only for the entries that need it,
on small and fast scripts.
"""
from __future__ import annotations

import functools
import inspect
import math
import re
import sys

import numpy as np
import pytest

import figures
from helpers import HOOKS, ROOT

sys.path.insert(0, str(HOOKS))
import directives as D  # noqa: E402

DOCS = ROOT / "docs"

#: Pages being edited by others: their alt texts and captions are checked once those edits are in.
PENDING = {
}

#: Names with digits, fixed facts wherever they stand (c).
NAMES = ("all-MiniLM-L6-v2", "GPT-2", "LLaMA-2-7B", "FlashAttention-2", "Mistral 7B")

#: (page, figure as the page writes it: NAME or NAME?QUERY, phrase, why, held). Each digit outside a
#: {{ value }} must stand in a phrase listed for its figure on its page. ``held`` maps a data path
#: (dotted, list indices from 0) or a parameter of data() to what the phrase says it is (a value, or a
#: predicate); it is checked against the figure's data() with the page's parameters.
ALLOWED = [
    ("alibi.md", "alibi_bias_heads", "an 8-head model", "b: n_heads", {"n_heads": 8}),
    ("alibi.md", "alibi_bias_heads", "heads 1, 4 and 8 of 8 (T = 8)", "b: show, counted from 1; n_heads; T",
     {"show": [0, 3, 7], "n_heads": 8, "T": 8}),
    ("alibi.md", "alibi_slopes_table", "8 heads (a power of two) and 12 heads (not one)", "b: head_counts",
     {"counts": [8, 12]}),
    ("attention.md", "cat_sat_mat_weights", "Two 3-by-3 heatmaps", "b: three tokens", {"tokens": ["cat", "sat", "mat"]}),
    ("attention.md", "attention_memory_table", "(one head, batch 1): bytes in fp32, and the size in fp32 and fp16",
     "b: heads, batch; c: the number formats of its columns", {"heads": 1, "batch": 1}),
    ("attention.md", "attention_memory", "fp32 and fp16: straight lines of slope 2",
     "c: the formats drawn; memory grows as T squared, a slope of 2 on log-log axes", None),
    ("attention.md", "attention_memory", "(one head, batch 1)", "b: heads, batch", {"heads": 1, "batch": 1}),
    ("attention.md", "attention_memory_measured", "fp32)", "a: the stored measurement's dtype", {"dtype": "float32"}),
    ("backward.md", "backward_scaling", "(entries N(0, 1)) and dO (N(0, 1/d_head))",
     "c: the distributions the script draws from (its docstring)", None),
    ("backward.md", "backward_scaling", "16 keys, 1,000 trials per width", "b: n_keys, n_samples",
     {"n_keys": 16, "n_samples": 1000}),
    ("compare.md", "shaw_clipping", "A 12 by 12 grid of clipped distances from -4 to 4", "b: T, k", {"T": 12, "k": 4}),
    ("compare.md", "shaw_clipping", "0 on the diagonal, rising by 1 per column", "c: clip(j - i) is j - i near the diagonal",
     None),
    ("compare.md", "shaw_clipping", "up to 4 and falling to -4 to the left, with the two corners filled by 4 and -4",
     "b: k", {"k": 4}),
    ("compare.md", "shaw_clipping", "for T = 12, k = 4", "b: T, k", {"T": 12, "k": 4}),
    ("compare.md", "t5_buckets", "from -160 to 160", "b: span", {"span": 160}),
    ("compare.md", "t5_buckets", "buckets 0 to 15 for keys at or before the query, rising steeply near 0",
     "b: half of num_buckets, from distance 0", {"num_buckets": 32, "backward_ranges.bidirectional.15.bucket": 15}),
    ("compare.md", "t5_buckets", "buckets 17 to 31 for keys after it", "b: the other half, bucket 16 unused",
     {"first_after": 17, "unused.bidirectional": [16], "n_used.bidirectional": 31}),
    ("compare.md", "t5_buckets", "buckets 0 to 31 for keys at or before the query, and bucket 0 for every key after it",
     "b: all of num_buckets", {"n_used.causal": 32, "causal.320": 0}),
    ("compare.md", "t5_buckets", "T5's bucket", "c: the model's name", None),
    ("compare.md", "t5_buckets", "with 32 buckets and max_distance = 128", "b: num_buckets, max_distance",
     {"num_buckets": 32, "max_distance": 128}),
    ("cross_attention.md", "cross_attention_weights", "head 1's", "c: the figure draws the first head, counted from 1",
     None),
    ("cross_attention.md", "cross_attention_weights", "Head 1 of", "c: the figure draws the first head, counted from 1",
     None),
    ("cross_attention.md", "cross_attention_weights", "both padding columns exactly 0",
     "a: the largest masked weight of data()", {"pad_weight_masked": 0.0}),
    ("cross_attention.md", "cross_attention_cache", "fp16", "b: two bytes a number in the cache of K and V",
     {"per_token": lambda b: b == 2 * 8 * 64 * 2}),
    ("extrapolation.md", "extrapolation_attention_maps", "back at 1×", "c: the training length itself", None),
    ("extrapolation.md", "extrapolation_live", "five seed-0 kback models", "c: the stored weights are the seed-0 runs",
     None),
    ("extrapolation.md", "extrapolation_live", "learned and RoPE are at 1,",
     "a: held by tests/test_extrapolation_live.py::test_the_live_figures_alt_text_says_what_its_data_say", None),
    ("extrapolation.md", "extrapolation_live", "plain RoPE holds to 64 and then falls",
     "a: held by tests/test_extrapolation_live.py::test_the_live_figures_alt_text_says_what_its_data_say", None),
    ("extrapolation.md", "extrapolation_live", "float16 weights", "c: the number format the live version runs", None),
    ("flash_attention.md", "flash_online_softmax", "key block 1 to", "c: the figure counts the key blocks from 1",
     None),
    ("flash_attention.md", "flash_io_table", "in bf16", "c: the number format the script counts bytes in (its DTYPE)",
     None),
    ("flash_attention.md", "flash_io_table", "Algorithm 1", "c: the FlashAttention paper's name for its algorithm",
     None),
    ("flash_attention.md", "flash_memory_time", "an NVIDIA H100", "a: the stored measurement's GPU",
     {"machine.gpu": lambda g: g.startswith("NVIDIA H100")}),
    ("flash_attention.md", "flash_throughput", "the H100's limit", "a: the stored measurement's GPU",
     {"machine.gpu": lambda g: g.startswith("NVIDIA H100")}),
    ("heads.md", "heads_in_action", "A grid of 12 heatmaps", "b: presets, three maps each",
     {"presets": lambda p: 3 * len(p) == 12}),
    ("heads.md", "heads_in_action", "(single head, head 1, head 2)", "c: the heads' names", None),
    ("heads.md", "heads_in_action", "τ = √2", "b: tau", {"tau": math.sqrt(2)}),
    ("heads.md", "heads_in_action?presets=Identity", "head 1 and head 2", "c: the heads' names", None),
    ("heads.md", "heads_in_action?presets=Identity", "τ = √2", "b: tau", {"tau": math.sqrt(2)}),
    ("heads.md", "temperature_sweep", "(single head, head 1, head 2)", "c: the heads' names", None),
    ("heads.md", "temperature_sweep", "ln 4 at large tau", "b: uniform over the four tokens",
     {"uniform": math.log(4)}),
    ("heads.md", "temperature_sweep", "τ = √2", "c: the dashed line marks the grid's temperature (data: at_sqrt2)",
     None),
    ("induction.md", "induction_scores", "layer-1", "c: the layers' names, counted from 1", None),
    ("induction.md", "induction_scores", "layer-2", "c: the layers' names, counted from 1", None),
    ("induction.md", "induction_attention_maps", "layer 1", "c: the layers' names, counted from 1", None),
    ("induction.md", "induction_attention_maps", "layer 2", "c: the layers' names, counted from 1", None),
    ("induction.md", "induction_circuit_composition", "layer-1", "c: the layers' names, counted from 1", None),
    ("induction.md", "induction_circuit_composition", "layer-2", "c: the layers' names, counted from 1", None),
    ("induction.md", "induction_circuit_matrices", "layer-1", "c: the layers' names, counted from 1", None),
    ("induction.md", "induction_circuit_matrices", "layer-2", "c: the layers' names, counted from 1", None),
    ("kv_cache.md", "decode_cost", "(d_model = 4096, 32 heads of 128)", "b: d_model, n_heads, d_head",
     {"d_model": 4096, "n_heads": 32, "d_head": 128}),
    ("kv_cache.md", "lm_generator", "seed 1", "b: seed", {"seed": 1}),
    ("kv_cache.md", "lm_generator", "(temperature 0.8, top-k 20, top-p 0.95)", "b: the generator's filters",
     {"temperature": 0.8, "top_k": 20, "top_p": 0.95}),
    ("kv_cache.md", "decode_alignment", "Two 3 by 6 masks", "b: new, S", {"new": 3, "S": 6}),
    ("kv_cache.md", "decode_alignment", "sees only key 0", "c: the first key", None),
    ("kv_cache.md", "decode_alignment", "sees keys 0 to 3", "b: the first new token's position, prompt",
     {"query_positions.0": 3}),
    ("kv_cache.md", "decode_alignment", "Queries at positions 3, 4, 5; keys 0–5. mhalib.causal_mask(3, 6",
     "b: query_positions, S, new", {"query_positions": [3, 4, 5], "S": 6, "new": 3}),
    ("kv_cache.md", "kv_cache_table", "7-8B decoders", "c: the published models' sizes", None),
    ("kv_cache.md", "decode_step_time", "H100", "a: the stored measurement's GPU",
     {"machine.gpu": lambda g: g.startswith("NVIDIA H100")}),
    ("kv_cache.md", "decode_step_time", "bf16", "a: the stored measurement's dtype", {"dtype": "bfloat16"}),
    ("kv_cache.md", "decode_step_time", "fp32", "a: the stored CPU measurement's dtype", {"cpu.dtype": "float32"}),
    ("learned.md", "learned_positions", "a 64 by 32 heatmap", "b: max_positions, d_model",
     {"max_positions": 64, "d_model": 32}),
    ("learned.md", "learned_positions", "the 64 by 64 cosine similarity", "b: max_positions", {"max_positions": 64}),
    ("learned.md", "learned_positions", "1 on the diagonal and near 0 elsewhere",
     "c: a row's cosine with itself; a: the mean |cosine| off the diagonal", {"mean_abs_offdiag": lambda c: c < 0.25}),
    ("long_context.md", "sliding_window_reach", "the 16 by 16 sliding-window mask", "b: T", {"T": 16}),
    ("long_context.md", "sliding_window_reach", "with a window of 4", "b: window", {"window": 4}),
    ("long_context.md", "sliding_window_reach", "for 1 to 5 layers", "b: layers, counted from 1", {"layers": 5}),
    ("long_context.md", "sliding_window_reach", "reach position 15", "b: the last of T positions",
     {"T": lambda T: T - 1 == 15}),
    ("long_context.md", "sliding_window_reach", "widens by 3 positions per layer",
     "b: window - 1, the step between the spans of data()",
     {"window": lambda w: w - 1 == 3, "span": lambda s: all(b - a == 3 for a, b in zip(s, s[1:]))}),
    ("long_context.md", "rolling_kv_cache", "up to 32,768", "b: max_tokens", {"max_tokens": 32_768}),
    ("long_context.md", "rolling_kv_cache", "fp16", "b: two bytes a number in the cache of K and V",
     {"per_token": lambda b: b == 2 * 32 * 8 * 128 * 2}),
    ("mha.md", "mha_pipeline", "from dark (0) to yellow (1)", "c: the weights' colour scale, 0 to 1", None),
    ("mha.md", "split_heads_walkthrough", r"\(Q = K = V = I_2\) and 2 heads", "b: the example's Q and head count",
     {"Q": [[1.0, 0.0], [0.0, 1.0]], "q_heads": lambda q: len(q) == 2}),
    ("mha.md", "mha_identities", r"\(d_{\text{model}} = 6\), \(H = 3\) example", "b: the example's d_model and H",
     {"per_head": lambda a: np.shape(a)[0] == 3 and np.shape(a)[2] == 6}),
    ("numerics.md", "softmax_overflow", r"\([s, 0]\) in float32 and float16",
     "c: the table's second score and number formats", None),
    ("numerics.md", "mask_constants", "float16: what −1e9, −1e4, the float16 minimum",
     "b: the constants of its rows", {"rows.0.constant": "-1e9", "rows.1.constant": "-1e4"}),
    ("numerics.md", "pitfall_exponent", "d_model = 512", "b: d_model", {"d_model": 512}),
    ("numerics.md", "pitfall_frequency_wavelength", r"\(1/\omega\) and the wavelength \(2\pi/\omega\)",
     "c: definitions", None),
    ("one_head.md", "one_head_weights", "(one head, head 1, head 2)", "c: the heads' names", None),
    ("one_head.md", "one_head_weights", "head 1 scores only cat, head 2 only quietly", "c: the heads' names", None),
    ("one_head.md", "one_head_weights", "head 1 puts almost all of its weight on cat, head 2 on quietly",
     "c: the heads' names", None),
    ("one_head.md", "one_head_weights", "one head of width 4, or two heads of width 2", "b: d_head of each row",
     {"d_head": [4, 2, 2]}),
    ("position.md", "permutation_invariance", "Two 4 by 4 heatmaps", "b: four tokens",
     {"tokens": lambda t: len(t) == 4}),
    ("real_heads.md", "bert_head_scores", "1 means all of the weight", "c: the scores' scale", None),
    ("real_heads.md", "bert_positions", "cosines near 1", "c: the diagonal, a position with itself", None),
    ("rope.md", "rope_rotation_2d", "for positions 0 to 3", "b: positions", {"positions": [0, 1, 2, 3]}),
    ("rope.md", "rope_rotation_2d", "for m = 0..3", "b: positions", {"positions": [0, 1, 2, 3]}),
    ("rope.md", "rope_rotation_2d", "of positions 0–7", "b: n_positions", {"n_positions": lambda n: n - 1 == 7}),
    ("rope.md", "rope_rotation_2d", "rotated to positions 0 to 3", "b: positions", {"positions": [0, 1, 2, 3]}),
    ("rope.md", "rope_rotation_2d", "rotated to positions 0–3", "b: positions", {"positions": [0, 1, 2, 3]}),
    ("rope.md", "rope_signed_offset", "offsets +3 and −3", "b: the rows' offsets",
     {"rows.0.offset": 3, "rows.3.offset": -3}),
    ("rope.md", "rope_relative_curves", "query positions 0, 20, 200 and 2000", "b: starts", {"starts": (0, 20, 200, 2000)}),
    ("rope.md", "rope_relative_curves", "d_head = 64", "b: d_head", {"d_head": 64}),
    ("rope.md", "rope_frequencies_plot", "the 64 planes of a 128-dimensional head", "b: d_head, d_head / 2 planes",
     {"d_head": 128}),
    ("rope.md", "rope_frequencies_plot", r"\(2\pi/\omega_i\) for \(d_{\text{head}} = 128\)", "c: the definition; b: d_head",
     {"d_head": 128}),
    ("rope.md", "rope_decay", "from 0 to 256", "b: max_distance", {"max_distance": 256}),
    ("rope.md", "rope_decay", "d_head = 128, base 10000", "b: d_head, base", {"d_head": 128, "base": 10000.0}),
    ("rope.md", "rope_layouts", "a fixed offset of 4 as the query position moves from 0 to 59",
     "b: offset; the last of n_positions positions", {"offset": 4, "n_positions": lambda n: n - 1 == 59}),
    ("sampling.md", "sampling_filters", "sharper at T = 0.5, flatter at T = 2", "b: temperature_low, temperature_high",
     {"temperature_low": 0.5, "temperature_high": 2.0}),
    ("sampling.md", "sampling_filters", "(T = 1)", "c: the model's own probabilities are its T = 1", None),
    ("sampling.md", "sampling_temperature", "from near 0", "c: entropy's lower end, one sure character", None),
    ("sampling.md", "sampling_temperature", "minimum just above T = 1",
     "a: held by tests/test_sampling_page.py::test_the_figures_alt_texts_say_what_their_data_say", None),
    ("sampling.md", "sampling_temperature", "a tall bar at 1 and a second bump around 12 to 16",
     "a: held by tests/test_sampling_page.py::test_the_figures_alt_texts_say_what_their_data_say", None),
    ("sampling.md", "sampling_temperature", "top-k's 5", "b: top_k", {"top_k": 5}),
    ("sinusoidal.md", "pe_heatmap?d_model=4&n_positions=4", "The 4 by 4 table of PE for positions 0 to 3 and d_model 4",
     "b: n_positions, d_model", {"n_positions": 4, "d_model": 4}),
    ("sinusoidal.md", "pe_heatmap?d_model=4&n_positions=4", "d_model = 4, positions 0–3", "b: d_model, n_positions",
     {"n_positions": 4, "d_model": 4}),
    ("sinusoidal.md", "pe_heatmap", "for 64 positions and 128 dimensions", "b: n_positions, d_model",
     {"n_positions": 64, "d_model": 128}),
    ("sinusoidal.md", "pe_heatmap", "PE for 64 positions at d_model = 128", "b: n_positions, d_model",
     {"n_positions": 64, "d_model": 128}),
    ("sinusoidal.md", "pe_heatmap", "from −1 (purple) to +1 (orange)", "c: the colour scale, sin and cos's range", None),
    ("sinusoidal.md", "pe_heatmap?d_model=16&n_positions=32", "for 32 positions and 16 dimensions",
     "b: n_positions, d_model", {"n_positions": 32, "d_model": 16}),
    ("sinusoidal.md", "pe_heatmap?d_model=16&n_positions=32", "32 positions, d_model = 16", "b: n_positions, d_model",
     {"n_positions": 32, "d_model": 16}),
    ("sinusoidal.md", "pe_frequencies", "over 100 positions: fast at dims 0 and 1, medium at dims 64 and 65, nearly "
     "flat at dims 256 and 257", "b: n_positions, pairs", {"n_positions": 100, "pairs": (0, 64, 256)}),
    ("sinusoidal.md", "pe_frequencies", "Dims (0, 1), (64, 65) and (256, 257) at d_model = 512", "b: pairs, d_model",
     {"pairs": (0, 64, 256), "d_model": 512}),
    ("sinusoidal.md", "wavelength_table", r"\(2\pi/\omega_i\) at every 64th dimension of a \(d_{\text{model}} = 512\)",
     "c: the definition; b: step, d_model", {"step": 64, "d_model": 512}),
    ("sinusoidal.md", "pe_binary_clock", "a grid of 0s and 1s, the binary digits of positions 0 to 15, bit 0 "
     "alternating every column and bit 3 switching once", "b: n_positions, whose binary digits are bits 0 to 3",
     {"n_positions": lambda n: n - 1 == 15 and (n - 1).bit_length() == 4}),
    ("sinusoidal.md", "pe_base_context", "bases 100, 10000 and 1,000,000, with a dashed line at the context length 1024",
     "b: bases, context", {"bases": (100.0, 10000.0, 1000000.0), "context": 1024}),
    ("sinusoidal.md", "pe_base_context", "position 0 and position k", "c: the first position", None),
    ("sinusoidal.md", "pe_base_context", "for base 100", "b: bases.0", {"rows.0.base": 100.0}),
    ("sinusoidal.md", "pe_base_context", "for base 10000", "b: bases.1", {"rows.1.base": 10000.0}),
    ("sinusoidal.md", "pe_base_context", "for base 1,000,000", "b: bases.2", {"rows.2.base": 1000000.0}),
    ("sinusoidal.md", "pe_base_context", "PE(0)·PE(k)/(d_model/2)", "c: the definition", None),
    ("sinusoidal.md", "pe_offset_rotation", "The 8 by 8 matrix M_3 with 2 by 2 rotation blocks",
     "b: d_show, k_show; c: rotations in a plane", {"d_show": 8, "k_show": 3}),
    ("sinusoidal.md", "pe_sin_only_shift", r"\(\sin((p+1)\,\omega_0)\) against \(\sin(p\,\omega_0)\)",
     "b: k, pair_show", {"k": 1, "pair_show": 0}),
    ("sinusoidal.md", "pe_sin_only_shift", "at p + 1", "b: k", {"k": 1}),
    ("sinusoidal.md", "pe_dot_products", "peaking at offset 0", "c: a position with itself", None),
    ("sinusoidal.md", "pe_four_terms", "Five heatmaps of 8 by 8 scores", "b: T", {"T": 8}),
]


@functools.lru_cache(maxsize=1)
def _scripts() -> dict:
    return figures.scripts()


def _fields(page: str):
    """(figure as written, what, text) for each alt text and caption of ``page``'s figures,
    explorers and tables (a table without a caption option shows its script's title)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    scripts = _scripts()
    for d in D.parse(text, where=page):
        label = d.name + (f"?{d.query}" if d.query else "")
        if d.keyword == "figure":
            m = D.FIGURE_RE.match(text, d.start)
            yield label, "alt text", m["alt"]
            if m["caption"]:
                yield label, "caption", m["caption"]
        elif d.keyword == "explorer":
            for option in ("alt", "caption"):
                if option in d.options:
                    yield label, f"explorer {option}", d.options[option]
        elif d.keyword == "table":
            yield label, "caption", d.options.get("caption") or scripts[d.name].title


def _pages() -> list[str]:
    return sorted(p.name for p in DOCS.glob("*.md"))


def _without_values(text: str, where: str) -> str:
    values = [x for x in D.parse(text, where=where) if x.keyword == "value"]
    return D.substitute(text, values, lambda x: " ")


def test_every_number_in_an_alt_text_or_caption_is_a_value_or_allowed():
    bare, unused = [], {(e[0], e[1], e[2]) for e in ALLOWED}
    alt_texts = figures_written = 0
    for page in _pages():
        if page in PENDING:
            continue
        figures_written += (DOCS / page).read_text(encoding="utf-8").count("](figures/")
        for label, what, text in _fields(page):
            alt_texts += what == "alt text"
            rest = _without_values(text, f"{page} ({label}, {what})")
            for name in NAMES:
                rest = rest.replace(name, " ")
            for entry in sorted(ALLOWED, key=lambda e: -len(e[2])):  # "base 10000" before "base 100"
                if entry[:2] == (page, label) and entry[2] in rest:
                    rest = rest.replace(entry[2], " ")
                    unused.discard(entry[:3])
            if re.search(r"\d", rest):
                bare.append(f"{page}: {label}'s {what}: {' '.join(rest.split())!r}")
    assert not bare, ("numbers typed into alt texts or captions, held by nothing: write {{ value SCRIPT PATH FMT }}, "
                      "or list the phrase in ALLOWED with its reason:\n" + "\n".join(bare))
    assert not unused, f"ALLOWED lists phrases no page has any more (remove them): {sorted(unused)}"
    assert alt_texts == figures_written > 40  # every figure of the pages was read


def test_each_claim_held_elsewhere_names_a_test_that_exists():
    for page, label, phrase, why, _ in ALLOWED:
        for path, name in re.findall(r"(tests/\w+\.py)::(\w+)", why):
            assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), f"{page}: {phrase!r}: no {path}::{name}"
        assert re.match(r"[abc]: ", why), f"{page}: {phrase!r}: a reason starts with its class, a, b or c: {why!r}"
        assert not why.startswith("a: held by") or re.search(r"tests/\w+\.py::\w+", why), why


# ---- (b) and (a) entries against the figure they describe ----------------------------------------------

def _request(label: str):
    name, _, query = label.partition("?")
    return _scripts()[name].parse_query(query, where=label)


@functools.lru_cache(maxsize=None)
def _parameters(label: str) -> dict:
    """The parameters the figure ``label`` (NAME or NAME?QUERY) is drawn with: its defaults and its query."""
    request = _request(label)
    defaults = {k: p.default for k, p in inspect.signature(figures.load(request.name).data).parameters.items()}
    return {**defaults, **request.kwargs}


@functools.lru_cache(maxsize=None)
def _data(label: str) -> dict:
    request = _request(label)
    return figures.load(request.name).data(**request.kwargs)


def _at(data, path: str):
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, (list, tuple, np.ndarray)) else data[part]
    return data


def _same(got, want) -> bool:
    got = got.tolist() if isinstance(got, (np.ndarray, np.generic)) else got
    if isinstance(want, float) or isinstance(got, float):
        return math.isclose(got, want, rel_tol=1e-12)
    if isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want))
    return got == want


HELD = [pytest.param(page, label, phrase, held, id=f"{page[:-3]}-{label}-{i}")
        for i, (page, label, phrase, _, held) in enumerate(ALLOWED) if held]


@pytest.mark.parametrize("page, label, phrase, held", HELD)
def test_each_parameter_an_alt_text_or_caption_states_is_the_figures(page, label, phrase, held):
    """A phrase's numbers are what the figure is drawn with: a parameter (its query or its script's
    default) where ``held`` names one, else the item of data() at the path."""
    for key, want in held.items():
        params = _parameters(label)
        got = params[key] if key in params else _at(_data(label), key)
        ok = want(got) if callable(want) else _same(got, want)
        assert ok, f"docs/{page}: {label}: {phrase!r} says {key} is {want!r}, the figure has {got!r}"
