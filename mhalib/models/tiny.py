"""A tiny decoder-only transformer in torch, to train on this machine's CPU (pages: Does it
extrapolate?; An induction head grows). Needs torch.

    x_0    = E[tokens]  (+ PE[0..T-1] for "sinusoidal", + P[0..T-1] for "learned")
    layer: x = x + MHA(LN_1(x))                          causal, pre-norm
           x = x + relu(LN_2(x) W_1 + b_1) W_2 + b_2     (left out when d_ff = 0)
    logits = LN_f(x) W_U + b_U                           untied from E

The positional method is one argument (``mhalib.models.tiny_numpy.TinyConfig``'s
``method``). Attention is written out with torch's tensor operations, one step per line as
on the pages, and takes its position tables from mhalib itself: the causal mask
(``mhalib.causal_mask``), ALiBi's bias (``mhalib.alibi_bias``), RoPE's frequencies
(``mhalib.rope_frequencies``, with its inference-time scalings) and the sinusoidal table
(``mhalib.sinusoidal_encoding``). Weights are stored in mhalib's row-vector convention
(``x @ W``), so ``TinyDecoder.numpy_weights`` feeds ``mhalib.models.tiny_numpy.forward``
directly.

Shapes: ``B`` batch, ``T`` length, ``D`` d_model, ``H`` heads, ``d`` d_head, ``V`` vocab.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import _checks

torch = _checks.require_torch(__name__)  # a clear ImportError naming the extra
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from ..alibi import alibi_bias
from ..masks import causal_mask
from ..rope import SCALINGS, rope_frequencies
from ..sinusoidal import sinusoidal_encoding
from .tiny_numpy import LN_EPS, TinyConfig, checked_weights, parameter_shapes, token_batch
from .tiny_tasks import make_batch

# ---- attention, as on the pages -------------------------------------------------------------


def split_heads(x: torch.Tensor, H: int) -> torch.Tensor:
    B, T, D = x.shape
    return x.view(B, T, H, D // H).transpose(1, 2)  # (B, T, D) -> (B, T, H, d) -> (B, H, T, d)


def combine_heads(x: torch.Tensor) -> torch.Tensor:
    B, H, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d)  # (B, H, T, d) -> (B, T, H, d) -> (B, T, D)


def apply_rope(x: torch.Tensor, theta: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Rotate planes (2i, 2i+1) of ``x (B, H, T, d)`` by ``positions * theta_i`` (interleaved layout)."""
    angles = positions[:, None] * theta[None, :]  # (T, 1) * (1, d/2) -> (T, d/2)
    cos, sin = torch.cos(angles), torch.sin(angles)
    a, b = x[..., 0::2], x[..., 1::2]  # (B, H, T, d/2) each: the two coordinates of every plane
    rotated = torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1)  # (B, H, T, d/2, 2)
    return rotated.flatten(-2)  # (B, H, T, d/2, 2) -> (B, H, T, d): back to interleaved


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor):
    """``softmax(q k^T / sqrt(d) + bias) v``; ``bias (H or 1, T, T)`` holds ``-inf`` on masked keys.

    Returns ``(out (B, H, T, d), weights (B, H, T, T))``.
    """
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d) + bias  # (B, H, T, d) @ (B, H, d, T) -> (B, H, T, T)
    weights = torch.softmax(scores, dim=-1)  # subtracts each row's maximum
    return weights @ v, weights  # (B, H, T, T) @ (B, H, T, d) -> (B, H, T, d)


@functools.lru_cache(maxsize=32)
def _bias_table(method: str, T: int, H: int) -> np.ndarray:
    """The additive bias of every layer, ``(H or 1, T, T)``: 0 / -inf for the causal mask,
    plus ALiBi's ``-m_h (i - j)`` for ``"alibi"``."""
    if method == "alibi":
        return alibi_bias(T, H, causal=True)  # (H, T, T), -inf above the diagonal
    return np.where(causal_mask(T), 0.0, -np.inf)[None]  # (1, T, T)


# ---- the model ------------------------------------------------------------------------------


class TinyDecoder(nn.Module):
    """The decoder of the module docstring; ``forward(tokens)`` gives logits ``(B, T, V)``."""

    def __init__(self, config: TinyConfig):
        super().__init__()
        if not isinstance(config, TinyConfig):
            raise TypeError(f"config must be a TinyConfig, got {type(config).__name__}")
        self.config = config
        # Every weight is a plain parameter named as in tiny_numpy (dots become "__").
        self.params = nn.ParameterDict({
            name.replace(".", "__"): nn.Parameter(torch.empty(shape))
            for name, shape in parameter_shapes(config).items()
        })
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Token embeddings N(0, 1) (as large as a sinusoidal table's entries, so neither drowns the
        other), learned positions N(0, 1) likewise; matrices N(0, 0.02) as in GPT-2, the output
        projections of each block ``0.02 / sqrt(2 n_layers)``; LayerNorm gains 1, biases 0."""
        std_out = 0.02 / math.sqrt(2 * self.config.n_layers)
        with torch.no_grad():
            for key, p in self.params.items():
                name = key.split("__")[-1]
                if name == "g":
                    p.fill_(1.0)
                elif name.startswith("b"):
                    p.zero_()
                elif name in ("tok_emb", "pos_emb"):
                    p.normal_(0.0, 1.0)
                elif name in ("w_o", "w_2"):
                    p.normal_(0.0, std_out)
                else:
                    p.normal_(0.0, 0.02)

    def w(self, name: str) -> torch.Tensor:
        return self.params[name.replace(".", "__")]

    def numpy_weights(self) -> dict[str, np.ndarray]:
        """The weights as float32 numpy arrays under tiny_numpy's names."""
        return {k.replace("__", "."): p.detach().cpu().numpy().astype(np.float32).copy()
                for k, p in self.params.items()}

    def load_numpy_weights(self, weights: dict) -> TinyDecoder:
        """Copy ``weights`` (tiny_numpy's names and shapes) into the model; returns it.

        Every weight is checked first (``tiny_numpy.checked_weights``: exact shapes, real
        finite values), so a refused dict leaves the model as it was."""
        checked = checked_weights(weights, self.config)
        with torch.no_grad():
            for name, a in checked.items():
                self.w(name).copy_(torch.as_tensor(a, dtype=self.w(name).dtype))
        return self

    def forward(self, tokens: torch.Tensor, *, rope_scaling: str | None = None, rope_factor: float = 1.0,
                return_attention: bool = False):
        """Logits ``(B, T, V)`` for ``tokens (B, T)``; with ``return_attention`` also the list
        of per-layer weights ``(B, H, T, T)``. ``rope_scaling``/``rope_factor`` as in
        ``mhalib.rope_frequencies`` (method ``"rope"`` only).

        ``tokens`` is a torch tensor of integer ids in ``[0, vocab)`` (any integer dtype;
        uint8 is read as ids, not as a mask); a ``(T,)`` tensor is one sequence, a batch of
        one, as in ``mhalib.models.tiny_numpy.forward``, which refuses bad ids alike."""
        c = self.config
        if not isinstance(tokens, torch.Tensor):
            raise TypeError(f"tokens must be a torch tensor of integer token ids, got {type(tokens).__name__}")
        ids = token_batch(tokens.detach().cpu().numpy(), c.vocab)  # checks dtype, range and shape
        tokens = tokens.reshape(ids.shape).long()  # (T,) -> (1, T); (B, T) stays
        B, T = tokens.shape
        H, D = c.n_heads, c.d_model
        if rope_scaling not in SCALINGS:
            raise ValueError(f"rope_scaling must be None, 'interpolation' or 'ntk'; got {rope_scaling!r}")
        if (rope_scaling is not None or rope_factor != 1.0) and c.method != "rope":
            raise ValueError(f"rope_scaling and rope_factor apply to method='rope' only; this model's method "
                             f"is {c.method!r}")
        if c.method == "learned" and T > c.max_len:
            raise ValueError(f"tokens has T={T} positions, but the learned table has rows for 0..{c.max_len - 1} "
                             f"only (max_len={c.max_len}): positions past it have no vector")
        dtype = self.w("tok_emb").dtype

        x = self.w("tok_emb")[tokens]  # (B, T) -> (B, T, D)
        if c.method == "sinusoidal":
            x = x + torch.as_tensor(sinusoidal_encoding(T, D), dtype=dtype)  # + (T, D)
        elif c.method == "learned":
            x = x + self.w("pos_emb")[:T]  # + (T, D): rows 0 .. T-1 of the table
        bias = torch.as_tensor(_bias_table("alibi" if c.method == "alibi" else "causal", T, H), dtype=dtype)
        if c.method == "rope":
            theta = torch.as_tensor(rope_frequencies(c.d_head, c.rope_base, scaling=rope_scaling,
                                                     factor=rope_factor), dtype=dtype)  # (d/2,)
            positions = torch.arange(T, dtype=dtype)  # (T,)
        maps = []
        for l in range(c.n_layers):
            h = F.layer_norm(x, (D,), self.w(f"{l}.ln1.g"), self.w(f"{l}.ln1.b"), LN_EPS)
            q = split_heads(h @ self.w(f"{l}.w_q"), H)  # (B, T, D) -> (B, H, T, d)
            k = split_heads(h @ self.w(f"{l}.w_k"), H)  # (B, T, D) -> (B, H, T, d)
            v = split_heads(h @ self.w(f"{l}.w_v"), H)  # (B, T, D) -> (B, H, T, d)
            if c.method == "rope":
                q, k = apply_rope(q, theta, positions), apply_rope(k, theta, positions)
            out, weights = attention(q, k, v, bias)  # (B, H, T, d), (B, H, T, T)
            maps.append(weights)
            x = x + combine_heads(out) @ self.w(f"{l}.w_o")  # (B, H, T, d) -> (B, T, D)
            if c.d_ff:
                h = F.layer_norm(x, (D,), self.w(f"{l}.ln2.g"), self.w(f"{l}.ln2.b"), LN_EPS)
                hidden = torch.relu(h @ self.w(f"{l}.w_1") + self.w(f"{l}.b_1"))  # (B, T, D) -> (B, T, F)
                x = x + hidden @ self.w(f"{l}.w_2") + self.w(f"{l}.b_2")  # (B, T, F) -> (B, T, D)
        x = F.layer_norm(x, (D,), self.w("ln_f.g"), self.w("ln_f.b"), LN_EPS)
        logits = x @ self.w("w_u") + self.w("b_u")  # (B, T, D) -> (B, T, V)
        return (logits, maps) if return_attention else logits


# ---- training and evaluation ----------------------------------------------------------------


def set_deterministic(threads: int = 2) -> None:
    """Fixed thread count and deterministic kernels, so a seed gives the same run."""
    torch.set_num_threads(_checks.positive_int(threads, "threads"))
    torch.use_deterministic_algorithms(True)


def _tensors(batch: dict):
    return (torch.as_tensor(batch["tokens"]), torch.as_tensor(batch["targets"]),
            torch.as_tensor(batch["scored"]))


def _check_targets(targets: torch.Tensor, vocab: int) -> None:
    """Target ids must be integers in [0, vocab), as input ids must (torch's own error for -1 is
    "Target -1 is out of bounds", naming neither the argument nor the position)."""
    _checks.token_ids(targets.detach().cpu().numpy(), "targets", vocab, "vocab")


def _check_scored(scored: torch.Tensor, shape) -> np.ndarray:
    """``scored`` as a numpy boolean ``(B, T)`` mask with at least one True, refused as in
    ``tiny_numpy.masked_loss_accuracy`` (``mhalib._checks.scored_positions``)."""
    if isinstance(scored, torch.Tensor):
        scored = scored.detach().cpu().numpy()
    return _checks.scored_positions(scored, "scored", tuple(shape))


def masked_loss(logits: torch.Tensor, targets: torch.Tensor, scored: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the scored positions only.

    ``scored`` must be a boolean ``(B, T)`` tensor, the shape of ``targets``, with at least
    one True: a float mask (NaN would count), an integer one, or one that scores nothing
    (the mean would be NaN) is refused, as in ``tiny_numpy.masked_loss_accuracy``."""
    _check_targets(targets, logits.shape[-1])
    _check_scored(scored, targets.shape)
    per_token = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")  # (B*T,)
    mask = scored.flatten().to(per_token.dtype)
    return (per_token * mask).sum() / mask.sum()


def train(config: TinyConfig, task: str, *, length: int, steps: int, batch_size: int, lr: float, seed: int,
          k: int = 3, warmup: int = 50, weight_decay: float = 0.0, checkpoint_every: int | None = None,
          on_checkpoint=None, progress=None) -> tuple[TinyDecoder, list[float]]:
    """Train a fresh model on ``task`` at ``length`` and return ``(model, losses per step)``.

    Adam with a linear warm-up over ``warmup`` steps, then a cosine decay to 10% of ``lr``;
    gradients clipped at norm 1. ``seed`` fixes both the initial weights
    (``torch.manual_seed``) and the batches (``np.random.default_rng(seed)``). Every
    ``checkpoint_every`` steps (and at step 0, before any update) ``on_checkpoint(step,
    model)`` is called; ``progress(n)`` is called after each step.
    """
    steps = _checks.positive_int(steps, "steps")
    batch_size = _checks.positive_int(batch_size, "batch_size")
    lr = _checks.positive_float(lr, "lr")
    seed = _checks.nonnegative_int(seed, "seed")
    warmup = _checks.nonnegative_int(warmup, "warmup")
    if checkpoint_every is not None:
        checkpoint_every = _checks.positive_int(checkpoint_every, "checkpoint_every")
    torch.manual_seed(seed)
    model = TinyDecoder(config)
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        frac = (step - warmup) / max(1, steps - warmup)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * frac))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
    losses = []
    for step in range(steps):
        if checkpoint_every and on_checkpoint and step % checkpoint_every == 0:
            on_checkpoint(step, model)
        tokens, targets, scored = _tensors(make_batch(task, batch_size, length, vocab=config.vocab, rng=rng, k=k))
        loss = masked_loss(model(tokens), targets, scored)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if progress:
            progress(1)
    if checkpoint_every and on_checkpoint:
        on_checkpoint(steps, model)
    return model, losses


@torch.no_grad()
def evaluate(model: TinyDecoder, batch: dict, *, bucket: int, rope_scaling: str | None = None,
             rope_factor: float = 1.0) -> dict:
    """Accuracy and loss on the scored positions of ``batch``, overall and per bucket of
    ``bucket`` positions (bucket ``b`` = positions ``b*bucket .. (b+1)*bucket - 1``; None
    where a bucket has no scored position).

    ``batch["scored"]`` must be a boolean ``(B, T)`` mask, the shape of the targets, with at
    least one True, and ``bucket`` an integer >= 1; anything else is refused with a
    ``TypeError``/``ValueError`` naming it (an integer 0/1 mask would index rows, an empty
    one give NaN)."""
    bucket = _checks.positive_int(bucket, "bucket")
    tokens, targets, scored = _tensors(batch)
    _check_scored(scored, targets.shape)
    logits = model(tokens, rope_scaling=rope_scaling, rope_factor=rope_factor)  # (B, T, V)
    _check_targets(targets, logits.shape[-1])
    per_token = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none").view(targets.shape)
    correct = (logits.argmax(-1) == targets)  # (B, T)
    s = scored.numpy()
    T = s.shape[1]
    acc_b, loss_b = [], []
    for start in range(0, T, bucket):
        m = s[:, start:start + bucket]
        n = int(m.sum())
        acc_b.append(None if n == 0 else float(correct[:, start:start + bucket].numpy()[m].mean()))
        loss_b.append(None if n == 0 else float(per_token[:, start:start + bucket].numpy()[m].mean()))
    return dict(accuracy=float(correct.numpy()[s].mean()), loss=float(per_token.numpy()[s].mean()),
                accuracy_buckets=acc_b, loss_buckets=loss_b)
