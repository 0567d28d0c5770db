"""The tiny kback decoders run past their training length: accuracy by length, one seed per method.

The five stored kback models (seed 0, trained at L_train = 32; tools/train_tiny.py) are run by
mhalib's numpy forward pass (mhalib.models.tiny_numpy.forward) on the prefixes of a fixed set of
evaluation sequences (mhalib.models.tiny_tasks.make_batch, seed EVAL_SEED, N_SEQS sequences of
MAX_LENGTH tokens). A kback prefix of length L is itself a kback sequence of length L, so the
accuracy at L is the accuracy on the first L tokens of each sequence, scored from position k on.
RoPE is run plain and with the two inference-time scalings at factor max(1, L / L_train).

The weights are those the page's live widget runs (docs/javascripts/tiny_decoder.js, widget
"extrapolation"): each stored float32 tensor rounded to float16, which halves the payload. The
accuracy of the float32 originals is kept beside it (``accuracy_float32``) with the largest
difference between the two. Page: Does it extrapolate?
"""
from __future__ import annotations

import base64

import numpy as np

from mhalib.models.tiny_numpy import TinyConfig, forward, load_weights, masked_loss_accuracy
from mhalib.models.tiny_tasks import make_batch
from figures._kit import cli, style
from figures._kit.contract import data_file
from figures.experiments.extrapolation_accuracy import METHOD_LABELS, METHOD_MARKERS, load, method_colors

WEIGHTS = data_file("tiny_decoders_weights.npz")
#: The evaluation sequences: how many, how long, from which seed.
N_SEQS, MAX_LENGTH, EVAL_SEED = 16, 256, 4242
#: The lengths of the static figure and of the widget's accuracy curve (a multiple of 8 each).
LENGTHS = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)
#: What the figure and the widget run: (name, stored model, RoPE scaling or None).
VARIANTS = (("none", "kback_none", None), ("sinusoidal", "kback_sinusoidal", None),
            ("learned", "kback_learned", None), ("rope", "kback_rope", None),
            ("rope_interpolation", "kback_rope", "interpolation"), ("rope_ntk", "kback_rope", "ntk"),
            ("alibi", "kback_alibi", None))
VARIANT_LABELS = {**METHOD_LABELS, "rope_interpolation": "RoPE, interpolation", "rope_ntk": "RoPE, NTK-aware"}

#: Where data() holds NaN, an infinity or None on purpose, and what it means there (the build
#: refuses any other: figures/_kit/contract.not_finite).
NON_FINITE = {
    'accuracy.learned.*': 'not defined: a learned table has no rows past the training length',
    'accuracy_float32.learned.*': 'not defined: a learned table has no rows past the training length',
}


def as_float16(weights: dict) -> dict:
    """Each tensor rounded to float16 (what the widget's payload stores), then held as float64."""
    return {name: np.asarray(a, dtype=np.float16).astype(np.float64) for name, a in weights.items()}


def rope_options(config: TinyConfig, scaling: str | None, length: int, L_train: int) -> dict:
    """``forward``'s RoPE keywords at ``length``: factor ``s = max(1, L / L_train)`` with a scaling."""
    if scaling is None:
        return {}
    return dict(rope_scaling=scaling, rope_factor=max(1.0, length / L_train))


def accuracy_at(weights: dict, config: TinyConfig, batch: dict, lengths, scaling: str | None,
                L_train: int) -> list[float | None]:
    """Accuracy on the first ``L`` tokens of every sequence, for each ``L`` of ``lengths``; None
    where the model is not defined (a learned table shorter than ``L``).

    The model is causal, so its logits at positions ``0 .. L-1`` do not depend on later tokens:
    without a scaling one forward pass over the longest defined prefix gives every shorter one
    (a test holds this equal to a pass per length). A scaling's factor depends on ``L``, so then
    each length gets its own pass.
    """
    defined = [L for L in lengths if not (config.method == "learned" and L > config.max_len)]
    logits = {}
    if scaling is None and defined:
        longest = forward(weights, config, batch["tokens"][:, :max(defined)])["logits"]  # (B, L_max, V)
        logits = {L: longest[:, :L] for L in defined}  # (B, L, V) each
    else:
        for L in defined:
            logits[L] = forward(weights, config, batch["tokens"][:, :L],
                                **rope_options(config, scaling, L, L_train))["logits"]  # (B, L, V)
    out = []
    for L in lengths:
        if L not in logits:
            out.append(None)
            continue
        _, acc = masked_loss_accuracy(logits[L], batch["targets"][:, :L], batch["scored"][:, :L])
        out.append(acc)
    return out


def evaluation_batch(vocab: int, k: int) -> dict:
    """The fixed evaluation sequences: ``tokens``, ``targets``, ``scored``, each ``(N_SEQS, MAX_LENGTH)``."""
    return make_batch("kback", N_SEQS, MAX_LENGTH, vocab=vocab, rng=EVAL_SEED, k=k)


def data() -> dict:
    """Accuracy of each variant at each of ``LENGTHS`` on the fixed sequences, float16 weights
    (the widget's) and float32 ones (as stored)."""
    d = load()
    c = d["config"]
    L_train, kb = c["L_train"], c["tasks"]["kback"]
    batch = evaluation_batch(kb["vocab"], kb["k"])
    stored = d["weights"]["models"]
    configs, weights = {}, {}
    for _, key, _ in VARIANTS:
        if key not in configs:
            configs[key] = TinyConfig.from_dict(stored[key]["config"])
            weights[key] = load_weights(WEIGHTS, key, configs[key])
    accuracy, accuracy32 = {}, {}
    for name, key, scaling in VARIANTS:
        cfg = configs[key]
        w16 = as_float16(weights[key])
        accuracy[name] = accuracy_at(w16, cfg, batch, LENGTHS, scaling, L_train)
        accuracy32[name] = accuracy_at(weights[key], cfg, batch, LENGTHS, scaling, L_train)
    gaps = [abs(a - b) for name in accuracy for a, b in zip(accuracy[name], accuracy32[name]) if a is not None]
    # max_float16_gap holds at LENGTHS only: with a RoPE scaling each length is a pass of its
    # own, and over every length from 8 to 256 the gap reaches 0.0012 (RoPE, NTK-aware, L = 106)
    return dict(L_train=L_train, k=kb["k"], vocab=kb["vocab"], lengths=list(LENGTHS), n_lengths=len(LENGTHS), n_seqs=N_SEQS,
                max_length=MAX_LENGTH, eval_seed=EVAL_SEED, variants=[v[0] for v in VARIANTS],
                models={name: key for name, key, _ in VARIANTS}, scalings={name: s or "none" for name, _, s in VARIANTS},
                scored=[N_SEQS * (L - kb["k"]) for L in LENGTHS], accuracy=accuracy, accuracy_float32=accuracy32,
                max_float16_gap=float(max(gaps)), tokens=batch["tokens"], configs={k: v.to_dict() for k, v in configs.items()})


#: The interactive version (docs/javascripts/tiny_decoder.js).
EXPLORER = "extrapolation"


def encode_tensor(a) -> dict:
    """``a`` as float16, little-endian, in base64, with its shape: ``{"shape": [...], "f16": "..."}``."""
    a = np.asarray(a)
    raw = np.ascontiguousarray(a, dtype="<f2").tobytes()
    return dict(shape=list(a.shape), f16=base64.b64encode(raw).decode("ascii"))


def decode_tensor(t: dict) -> np.ndarray:
    """The inverse of :func:`encode_tensor`, as float64."""
    flat = np.frombuffer(base64.b64decode(t["f16"]), dtype="<f2").astype(np.float64)
    return flat.reshape(t["shape"])  # (n,) -> shape


def explorer(data: dict) -> dict:
    """The widget's payload: each stored model's config and float16 weights, the evaluation
    sequences (the widget scores their prefixes), the lengths of its curve and L_train."""
    models = {}
    for key in dict.fromkeys(data["models"].values()):  # the stored weights, read again: data() holds none
        weights = load_weights(WEIGHTS, key, TinyConfig.from_dict(data["configs"][key]))
        models[key] = dict(config=data["configs"][key], weights={n: encode_tensor(a) for n, a in sorted(weights.items())})
    methods = [dict(method=data["configs"][key]["method"], model=key,
                    label=METHOD_LABELS[data["configs"][key]["method"]])
               for name, key in data["models"].items() if data["scalings"][name] == "none"]
    return dict(L_train=data["L_train"], k=data["k"], vocab=data["vocab"], lengths=data["lengths"],
                min_length=8, max_length=data["max_length"], sequences=data["tokens"].tolist(),
                methods=methods, models=models)


def draw(data: dict):
    fig, ax = style.new_figure(5.6, 3.4)
    c = style.colors()
    colors = method_colors()
    extra = {"rope_interpolation": ("--", colors["rope"]), "rope_ntk": (":", colors["rope"])}
    x = np.array(data["lengths"])
    for name in data["variants"]:
        ls, color = extra.get(name, ("-", colors.get(name)))
        marker, size, face = METHOD_MARKERS["rope" if name.startswith("rope") else name]
        y = np.array([np.nan if v is None else v for v in data["accuracy"][name]], dtype=float)
        ax.plot(x, y, ls, color=color, marker=marker, ms=size * 0.8, mfc=face or color, lw=1.6,
                label=VARIANT_LABELS[name])
    ax.axvline(data["L_train"], color=c["muted"], lw=1, ls="--")
    ax.text(data["L_train"] * 0.94, 0.7, f"L_train = {data['L_train']}", fontsize=11, color=c["muted"], ha="right")
    ax.set_xscale("log", base=2)
    ticks = [L for L in (8, 16, 32, 64, 128, 256) if x[0] <= L <= x[-1]]
    ax.set_xticks(ticks, [str(v) for v in ticks])
    ax.minorticks_off()
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("sequence length L (tokens)", fontsize=11)
    ax.set_ylabel("accuracy (kback, k = 3)", fontsize=11)
    ax.tick_params(labelsize=11)
    ax.legend(fontsize=11, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.set_title(f"One seed per method, {data['n_seqs']} fixed sequences", fontsize=11)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
