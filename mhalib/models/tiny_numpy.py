"""The tiny decoder's configuration and its forward pass in numpy, from mhalib's own functions.

The torch model (``mhalib.models.tiny``) trains; this module runs the *same* network on
stored weights with ``mhalib.mha_trace`` (causal attention, RoPE, ALiBi),
``mhalib.sinusoidal_encoding`` and ``mhalib.lookup_positions``, so the figures can
draw a trained model's attention without torch (pages: Does it extrapolate?; An induction
head grows). A test holds the two forward passes equal within 1e-5.

    x_0    = E[tokens]  (+ PE[0..T-1] for "sinusoidal", + P[0..T-1] for "learned")
    layer: x = x + MHA(LN_1(x))                   causal; bias-free projections
           x = x + relu(LN_2(x) W_1 + b_1) W_2 + b_2     (left out when d_ff = 0)
    logits = LN_f(x) W_U + b_U

Weights are a flat dict of float arrays in mhalib's row-vector convention (``x @ W``):
``tok_emb (V, D)``, ``pos_emb (max_len, D)`` (learned only), per layer ``l``:
``l.ln1.g``, ``l.ln1.b``, ``l.w_q``, ``l.w_k``, ``l.w_v``, ``l.w_o`` (each ``(D, D)``), and
with a feed-forward ``l.ln2.g``, ``l.ln2.b``, ``l.w_1 (D, F)``, ``l.b_1``, ``l.w_2 (F, D)``,
``l.b_2``; then ``ln_f.g``, ``ln_f.b``, ``w_u (D, V)``, ``b_u (V,)``.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .. import _checks
from ..learned import lookup_positions
from ..mha import mha_trace
from ..rope import SCALINGS, rope_frequencies
from ..sinusoidal import DEFAULT_BASE, sinusoidal_encoding
from .norm import layer_norm as _layer_norm

METHODS = ("none", "sinusoidal", "learned", "rope", "alibi")
#: LayerNorm's epsilon (torch's default).
LN_EPS = 1e-5


@dataclass(frozen=True)
class TinyConfig:
    """The shape of a tiny decoder; ``method`` is the positional method.

    ``method``: ``"none"`` (NoPE: position only through the causal mask), ``"sinusoidal"``
    or ``"learned"`` (added to the token embeddings), ``"rope"`` (rotates q and k in every
    layer), ``"alibi"`` (a distance bias on the scores in every layer). ``max_len`` is the
    number of rows of the learned table (positions ``0 .. max_len-1``); ``d_ff = 0`` makes
    the model attention-only.
    """

    vocab: int
    method: str
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 0
    max_len: int = 64
    rope_base: float = DEFAULT_BASE

    def __post_init__(self):
        _checks.positive_int(self.vocab, "vocab")
        _checks.choice(self.method, "method", METHODS)
        D = _checks.even_int(self.d_model, "d_model")
        _checks.positive_int(self.n_layers, "n_layers")
        H = _checks.positive_int(self.n_heads, "n_heads")
        d = _checks.divisible(D, H, "d_model", "n_heads")
        if self.method == "rope" and d % 2:
            raise ValueError(f"method='rope' needs an even d_head = d_model / n_heads, got {d}")
        _checks.nonnegative_int(self.d_ff, "d_ff")
        _checks.positive_int(self.max_len, "max_len")
        _checks.positive_float(self.rope_base, "rope_base")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> TinyConfig:
        return cls(**d)


def layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = LN_EPS) -> np.ndarray:
    """``g * (x - mean) / sqrt(var + eps) + b`` over the last axis (biased variance, as torch;
    mhalib.models.norm), with the tiny models' eps."""
    return _layer_norm(x, g, b, eps)


def parameter_shapes(config: TinyConfig) -> dict[str, tuple[int, ...]]:
    """Every weight's name and shape (the module docstring lists them)."""
    V, D, F = config.vocab, config.d_model, config.d_ff
    shapes = {"tok_emb": (V, D)}
    if config.method == "learned":
        shapes["pos_emb"] = (config.max_len, D)
    for l in range(config.n_layers):
        shapes.update({f"{l}.ln1.g": (D,), f"{l}.ln1.b": (D,), f"{l}.w_q": (D, D), f"{l}.w_k": (D, D),
                       f"{l}.w_v": (D, D), f"{l}.w_o": (D, D)})
        if F:
            shapes.update({f"{l}.ln2.g": (D,), f"{l}.ln2.b": (D,), f"{l}.w_1": (D, F), f"{l}.b_1": (F,),
                           f"{l}.w_2": (F, D), f"{l}.b_2": (D,)})
    shapes.update({"ln_f.g": (D,), "ln_f.b": (D,), "w_u": (D, V), "b_u": (V,)})
    return shapes


def checked_weights(weights, config: TinyConfig) -> dict[str, np.ndarray]:
    """Every weight ``config`` needs, checked: exactly the shape of ``parameter_shapes`` (no
    broadcasting: a ``(1, D)`` gain, a scalar bias or an embedding with extra rows is refused),
    real numbers (not strings or booleans) and finite (a NaN weight would give NaN logits).

    Returns the arrays (float16/32/64 kept, integers as float64) by name. A name the config
    does not use is refused with a ``ValueError`` naming it: feed-forward weights given to a
    ``d_ff = 0`` config would silently go unused, and a misspelt name (``'0.w_qq'``) hides a
    missing or wrong weight. Used by ``forward``, ``load_weights`` and the torch model's
    ``load_numpy_weights``.
    """
    if not isinstance(config, TinyConfig):
        raise TypeError(f"config must be a TinyConfig, got {type(config).__name__}")
    if not isinstance(weights, Mapping):
        raise TypeError(f"weights must be a dict of arrays by name, got {type(weights).__name__}")
    shapes = parameter_shapes(config)
    missing = sorted(set(shapes) - set(weights))
    if missing:
        raise ValueError(f"weights lacks {missing} for this config")
    c = config
    sizes = f"vocab={c.vocab}, d_model={c.d_model}, d_ff={c.d_ff}, max_len={c.max_len}"
    _unused_names(sorted(set(weights) - set(shapes), key=str), "weights holds", c)
    out = {}
    for name, shape in shapes.items():
        a = _checks.float_array(weights[name], f"weights[{name!r}]")  # real numbers, finite
        if a.shape != shape:
            raise ValueError(f"weights[{name!r}] must have shape {shape} for this config ({sizes}), got {a.shape}")
        out[name] = a
    return out


def _unused_names(extra: list, where: str, config: TinyConfig) -> None:
    """Refuse weight names ``config`` does not use, naming them (and the config's method,
    ``d_ff`` and ``n_layers``, which decide the names: ``parameter_shapes``)."""
    if extra:
        c = config
        raise ValueError(f"{where} {extra}, which this config (method={c.method!r}, n_layers={c.n_layers}, "
                         f"d_ff={c.d_ff}) does not use; they would be left out silently. The names it "
                         "uses are those of parameter_shapes(config)")


def _rope_arguments(config: TinyConfig, T: int, rope_scaling: str | None, rope_factor: float):
    """Positions and base that give RoPE with ``rope_scaling`` through ``mha_trace``.

    Interpolation is plain RoPE at positions ``p / s``; NTK-aware scaling is plain RoPE with
    base ``base * s^(d/(d-2))``: both identities are checked against
    ``mhalib.apply_rope``'s own options in the tests.
    """
    rope_frequencies(config.d_head, config.rope_base, scaling=rope_scaling, factor=rope_factor)  # checks them
    positions = np.arange(T, dtype=np.float64)
    base = config.rope_base
    if rope_scaling == "interpolation":
        positions = positions / rope_factor
    elif rope_scaling == "ntk":
        d = config.d_head
        base = config.rope_base * rope_factor ** (d / (d - 2))
    return positions, base


def token_batch(ids: np.ndarray, vocab: int) -> np.ndarray:
    """``ids`` as a ``(B, T)`` batch of token ids in ``[0, vocab)``: a ``(T,)`` array is one
    sequence, a batch of one. Shared by the numpy and the torch model, which refuse alike."""
    _checks.token_ids(ids, "tokens", vocab, "vocab")
    if ids.ndim == 1:
        ids = ids[None, :]  # (T,) -> (1, T)
    if ids.ndim != 2 or 0 in ids.shape:
        raise ValueError(f"tokens must have shape (B, T) or (T,) with B, T >= 1, got {ids.shape}")
    return ids


def forward(weights: dict, config: TinyConfig, tokens: ArrayLike, *, rope_scaling: str | None = None,
            rope_factor: float = 1.0, mask: ArrayLike | None = None) -> dict:
    """Run the tiny decoder on ``tokens (B, T)`` (or ``(T,)``, a batch of one) with numpy, in float64.

    ``tokens`` must be integer ids in ``[0, vocab)`` with ``B, T >= 1``; anything else is
    refused with a ``TypeError``/``ValueError`` naming it (``token_batch``).

    Returns ``logits (B, T, V)`` and ``attention``, a list with one ``(B, H, T, T)`` array
    of weights per layer. A learned table has no row past ``max_len - 1``: a longer input is
    refused with a ``ValueError`` (``mhalib.lookup_positions``). ``rope_scaling`` and
    ``rope_factor`` apply RoPE's inference-time scalings (``mhalib.rope_frequencies``);
    they are refused for other methods. ``weights`` must fit ``config`` exactly, with finite
    values (``checked_weights``).

    ``mask``, a boolean ``(T, T)`` array (True = may attend), narrows every layer's causal
    attention further: query ``i`` sees key ``j`` when ``j <= i`` and ``mask[i, j]``, e.g.
    ``mhalib.sliding_window_mask(T, W, n_sink=n)`` for a window with attention sinks (page:
    long context). Every position keeps its own RoPE angle; only the keys a query sees change.
    A mask of another shape or dtype is refused, naming it.
    """
    if not isinstance(config, TinyConfig):
        raise TypeError(f"config must be a TinyConfig, got {type(config).__name__}")
    ids = token_batch(np.asarray(_checks.not_masked(tokens, "tokens")), config.vocab)  # (B, T)
    if rope_scaling not in SCALINGS:
        raise ValueError(f"rope_scaling must be None, 'interpolation' or 'ntk'; got {rope_scaling!r}")
    if (rope_scaling is not None or rope_factor != 1.0) and config.method != "rope":
        raise ValueError(f"rope_scaling and rope_factor apply to method='rope' only; this model's method "
                         f"is {config.method!r}")
    w = {name: a.astype(np.float64) for name, a in checked_weights(weights, config).items()}
    B, T = ids.shape
    H = config.n_heads
    if mask is not None:
        mask = _checks.bool_array(mask, "mask")
        if mask.shape != (T, T):
            raise ValueError(f"mask must have shape (T, T) = ({T}, {T}), one row per query and one column per "
                             f"key of tokens, got {mask.shape}")

    x = w["tok_emb"][ids]  # (B, T) -> (B, T, D)
    if config.method == "sinusoidal":
        x = x + sinusoidal_encoding(T, config.d_model)  # (B, T, D) + (T, D)
    elif config.method == "learned":
        x = x + lookup_positions(w["pos_emb"], T)  # (B, T, D) + (T, D); refuses T > max_len
    rope = {}
    if config.method == "rope":
        positions, base = _rope_arguments(config, T, rope_scaling, rope_factor)
        rope = dict(rope_base=base, positions=positions)
    attention = []
    for l in range(config.n_layers):
        h = layer_norm(x, w[f"{l}.ln1.g"], w[f"{l}.ln1.b"])  # (B, T, D)
        trace = mha_trace(h, w[f"{l}.w_q"], w[f"{l}.w_k"], w[f"{l}.w_v"], w[f"{l}.w_o"], n_heads=H,
                          causal=True, mask=mask, alibi=config.method == "alibi", **rope)
        attention.append(trace["weights"])  # (B, H, T, T)
        x = x + trace["out"]  # (B, T, D)
        if config.d_ff:
            h = layer_norm(x, w[f"{l}.ln2.g"], w[f"{l}.ln2.b"])
            hidden = np.maximum(h @ w[f"{l}.w_1"] + w[f"{l}.b_1"], 0.0)  # (B, T, D) -> (B, T, F)
            x = x + hidden @ w[f"{l}.w_2"] + w[f"{l}.b_2"]  # (B, T, F) -> (B, T, D)
    logits = layer_norm(x, w["ln_f.g"], w["ln_f.b"]) @ w["w_u"] + w["b_u"]  # (B, T, D) -> (B, T, V)
    return dict(logits=logits, attention=attention)


def load_weights(path, key: str, config: TinyConfig) -> dict:
    """The weights of model ``key`` from an ``.npz`` written by ``tools/train_tiny.py``
    (arrays named ``KEY/NAME``), checked against ``config``'s shapes and for finite values.
    An array ``KEY/NAME`` whose name ``config`` does not use is refused, as in
    ``checked_weights`` (a model stored with a feed-forward, loaded with ``d_ff = 0``)."""
    if not isinstance(config, TinyConfig):
        raise TypeError(f"config must be a TinyConfig, got {type(config).__name__}")
    out = {}
    shapes = parameter_shapes(config)
    with np.load(path) as z:
        prefix = f"{key}/"
        _unused_names(sorted(f for f in z.files if f.startswith(prefix) and f[len(prefix):] not in shapes),
                      f"{path} holds", config)
        for name, shape in shapes.items():
            full = f"{key}/{name}"
            if full not in z.files:
                raise ValueError(f"{path} has no array {full!r}: key={key!r} is not a stored model of this config")
            a = z[full]
            if a.shape != shape:
                raise ValueError(f"{path}: {full} has shape {a.shape}, the config needs {shape}")
            out[name] = a
    checked_weights(out, config)  # real and finite
    return out


def without_heads(weights: dict, config: TinyConfig, heads) -> dict:
    """A copy of ``weights`` with the given heads removed (page: An induction head grows).

    ``heads`` is an iterable of ``(layer, head)`` pairs counted from 0. Removing head ``h``
    of layer ``l`` zeroes rows ``h d .. (h+1) d - 1`` of ``l.w_o``: the rows that the head's
    output meets in ``concat @ W_O``, so the head adds nothing to the residual stream while
    every other head, and the head's own attention weights, stay as they were.
    """
    w = dict(checked_weights(weights, config))
    d = config.d_head
    for pair in heads:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"heads must hold (layer, head) pairs, got {pair!r}")
        layer, head = pair
        if not (isinstance(layer, int) and 0 <= layer < config.n_layers):
            raise ValueError(f"layer must be an int in 0..{config.n_layers - 1}, got {layer!r}")
        if not (isinstance(head, int) and 0 <= head < config.n_heads):
            raise ValueError(f"head must be an int in 0..{config.n_heads - 1}, got {head!r}")
        w_o = w[f"{layer}.w_o"].copy()
        w_o[head * d:(head + 1) * d] = 0.0  # (D, D): the head's d rows of W_O
        w[f"{layer}.w_o"] = w_o
    return w


def masked_loss_accuracy(logits: ArrayLike, targets: ArrayLike, scored: ArrayLike) -> tuple[float, float]:
    """Mean cross-entropy (nats) and argmax accuracy over the ``scored`` positions.

    ``logits (B, T, V)``, ``targets (B, T)`` integer ids, ``scored (B, T)`` boolean: the same
    quantities ``mhalib.models.tiny.evaluate`` reports, computed with a log-softmax that
    subtracts each row's maximum.

    Refused: a ``scored`` that is not boolean (``TypeError``: a float NaN would count as
    True, a 0/1 integer array would index rows) or marks no position (``ValueError``: the
    mean would be NaN), as in the torch model's ``masked_loss`` and ``evaluate``.
    """
    logits = _checks.float_array(logits, "logits", min_ndim=3)
    targets, scored = np.asarray(targets), np.asarray(_checks.not_masked(scored, "scored"))
    if targets.shape != logits.shape[:-1] or scored.shape != targets.shape:
        raise ValueError(f"targets and scored must have shape {logits.shape[:-1]}, one entry per position; "
                         f"got {targets.shape} and {scored.shape}")
    _checks.scored_positions(scored, "scored")  # boolean, at least one True
    # an id of -1 would silently score the last class, one past the vocabulary fail with a bare IndexError
    _checks.token_ids(targets, "targets", logits.shape[-1], "vocab")
    z = logits - logits.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))  # (B, T, V)
    nll = -np.take_along_axis(log_p, targets[..., None], axis=-1)[..., 0]  # (B, T)
    correct = logits.argmax(axis=-1) == targets
    return float(nll[scored].mean()), float(correct[scored].mean())
