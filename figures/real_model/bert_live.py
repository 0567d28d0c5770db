"""all-MiniLM-L6-v2 in the reader's browser: how small its weights can be stored, and how far its attention then moves.

Each way of storing the weights the browser needs (every word embedding, the first
MAX_TOKENS positions, the six layers up to the last one's attention weights) is placed by its
size and by the largest change it makes to any attention weight of any head on the
CHECK_SENTENCES, against mhalib's float32 forward pass (mhalib.models.bert). The
chosen one, 8-bit word embeddings and a 10-bit encoder in groups of 32
(mhalib.models.quantize), is the payload that the viewer's live model
(docs/javascripts/bert_live.js, widget "bert_live") fetches when the reader asks for it.
Page: look inside a real model.
"""
from __future__ import annotations

import functools
import json
import re
import struct

import numpy as np

from figures._kit import cli, style
from mhalib.models import bert
from mhalib.models.head_analysis import HEAD_TYPES, head_scores
from mhalib.models.quantize import STEPS, Quantized, quantize, stored_bytes

#: The interactive version of this figure (docs/javascripts/bert_live.js, widget "bert_live"); its
#: payload is binary (the weights), fetched only when the reader asks for the model.
EXPLORER = "bert_live"
EXPLORER_BINARY = True
#: Tokens the browser's model takes, [CLS] and [SEP] included: the positions it is given.
MAX_TOKENS = 64
#: The chosen storage: bits per word embedding, bits per encoder weight, entries per scale.
EMB_BITS, ENC_BITS, GROUP = 8, 10, 32
#: How far the browser's attention weights may lie from mhalib's float32 ones (the tests' bound),
#: and the payload's largest size (DESIGN.md's target).
TOLERANCE = 0.02
PAYLOAD_LIMIT = 25e6
#: A row of weights has a clear strongest key when its two largest weights differ by more than this.
CLEAR_GAP = 0.05
#: Sentences the live model is checked on, none of them the viewer's built-in ones.
CHECK_SENTENCES = (
    "Quantized weights change every attention map a little.",
    "In 1998 the river rose 3.5 metres and flooded the old mill!",
    "Why would a head look at the comma, or at the full stop, instead of a word?",
    "Bob gave Alice the keys because she asked for them twice.",
    "The café on the corner serves crêpes, and the naïve tourists love them.",
    "Unbelievably, the antidisestablishmentarianism debate continued for hours.",
    "Go home.",
    'She said: "Attention is all you need" and then laughed 😀.',
    "The committee, which had met twice, postponed its decision until next spring, when more data would be "
    "available to everyone involved in the long and rather tedious review of the city's transport budget, its bus "
    "routes, its cycle lanes and the ageing bridge over the river that nobody wants to pay for.",  # 64 tokens
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "Multi-head attention splits d_model into h heads of size d_model / h.",
    "I can't believe it's not butter, said the advertisement on the bus.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Tokyo (東京) is the capital of Japan.",
    "Keys, values and queries are three views of the same token.",
    "On 12/05/2023 at 09:45, 1,250 people signed the petition.",
    "The children who lived next door played football until it got dark.",
    "Is the model's attention an explanation? Not on its own.",
    "A small encoder reads a whole sentence at once and writes a vector for every token.",
    "Why?",
)
#: Vocabulary entries no text can become ([unused0] ... [unused993]: placeholders the tokenizer
#: never outputs); the payload leaves their embeddings out.
UNUSED = re.compile(r"^\[unused\d+\]$")
MAGIC = b"MHAB"


def _prefix(layer: int) -> str:
    return f"encoder.layer.{layer}."


def needed(model: dict) -> list[tuple[str, str]]:
    """``(payload name, safetensors name)`` of every matrix and vector the browser computes with, in
    payload order: the embeddings, then each layer's; the last layer only up to its attention weights
    (its queries and keys)."""
    L = model["config"]["num_hidden_layers"]
    out = [("word", "embeddings.word_embeddings.weight"), ("pos", "embeddings.position_embeddings.weight"),
           ("type", "embeddings.token_type_embeddings.weight"), ("ln.g", "embeddings.LayerNorm.weight"),
           ("ln.b", "embeddings.LayerNorm.bias")]
    for layer in range(L):
        p, a = _prefix(layer), _prefix(layer) + "attention."
        out += [(f"{layer}.q.w", a + "self.query.weight"), (f"{layer}.q.b", a + "self.query.bias"),
                (f"{layer}.k.w", a + "self.key.weight"), (f"{layer}.k.b", a + "self.key.bias")]
        if layer == L - 1:
            break
        out += [(f"{layer}.v.w", a + "self.value.weight"), (f"{layer}.v.b", a + "self.value.bias"),
                (f"{layer}.o.w", a + "output.dense.weight"), (f"{layer}.o.b", a + "output.dense.bias"),
                (f"{layer}.ln1.g", a + "output.LayerNorm.weight"), (f"{layer}.ln1.b", a + "output.LayerNorm.bias"),
                (f"{layer}.f1.w", p + "intermediate.dense.weight"), (f"{layer}.f1.b", p + "intermediate.dense.bias"),
                (f"{layer}.f2.w", p + "output.dense.weight"), (f"{layer}.f2.b", p + "output.dense.bias"),
                (f"{layer}.ln2.g", p + "output.LayerNorm.weight"), (f"{layer}.ln2.b", p + "output.LayerNorm.bias")]
    return out


vocabulary = bert.vocabulary  # the tokens by id (the figure contract keeps file reading out of scripts)


#: What the packaged normalizer does to a character, beyond leaving it as it is (tokenizer_tables).
DROP, SPACE, CJK, HANGUL, MAPPED = range(5)


def _hangul(cp: int) -> str:
    """A Hangul syllable's canonical decomposition (NFD) into its leading, vowel and trailing jamo."""
    s = cp - 0xAC00
    lead, vowel, trail = 0x1100 + s // 588, 0x1161 + (s % 588) // 28, 0x11A7 + s % 28
    return chr(lead) + chr(vowel) + (chr(trail) if trail != 0x11A7 else "")


def tokenizer_tables(model: dict | None = None) -> dict:
    """The packaged tokenizer's character rules, read from it by asking it about every code point,
    so that the browser's tokenizer follows them whatever Unicode version the browser knows.

    ``runs``: ``[first, end, kind]`` ranges of code points the normalizer does not leave alone:
    DROP (control and format characters, NUL, U+FFFD: removed), SPACE (whitespace: one space),
    CJK (an ideograph: spaces around it), HANGUL (a syllable: its jamo, by the fixed formula of
    Unicode's canonical decomposition), MAPPED (``map`` gives the result: accents stripped after
    canonical decomposition, lower case). ``punct``: ``[first, end]`` ranges of the characters the
    pre-tokenizer makes words of their own. Each character is normalized on its own (its result
    does not depend on its neighbours: decomposition, mark stripping and lower-casing act per
    character) and ``|``, which stays ``|``, separates them in one call."""
    tk = (model or _model())["tokenizer"]
    chars = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and cp != ord("|")]  # ascending
    results = tk.normalizer.normalize_str("|".join(chars)).split("|")
    if len(results) != len(chars):
        raise ValueError(f"normalizing {len(chars)} characters separated by | gave {len(results)} results")
    runs, mapped = [], []
    for ch, out in [(c, r) for c, r in zip(chars, results) if c != r]:  # "|" stays "|"
        cp = ord(ch)
        kind = (DROP if out == "" else SPACE if out == " " else CJK if out == f" {ch} " else
                HANGUL if 0xAC00 <= cp <= 0xD7A3 and out == _hangul(cp) else MAPPED)
        if kind == MAPPED:
            mapped.append([cp, out])
        if runs and runs[-1][1] == cp and runs[-1][2] == kind:
            runs[-1][1] = cp + 1
        else:
            runs.append([cp, cp + 1, kind])
    # a punctuation character becomes a word of its own; the others join the "a"s around them
    text = "a".join((set("".join(results)) | {"|"}) - {" ", "a"})
    words = tk.pre_tokenizer.pre_tokenize_str(text)
    if sum(len(w) for w, _ in words) != len(text):
        raise ValueError("the pre-tokenizer dropped a character the normalizer outputs: a whitespace other than ' '")
    punct = []
    for cp in sorted(ord(w) for w, _ in words if len(w) == 1 and w != "a"):
        if punct and punct[-1][1] == cp:
            punct[-1][1] = cp + 1
        else:
            punct.append([cp, cp + 1])
    return dict(runs=runs, map=mapped, punct=punct)


def stored_rows(vocab: list[str]) -> np.ndarray:
    """Ids whose embedding the payload holds (all but the unused placeholders), ascending."""
    return np.flatnonzero([not UNUSED.match(w) for w in vocab])


@functools.lru_cache(maxsize=1)
def _browser_tensors() -> dict:
    return browser_tensors(_model())


def browser_tensors(model: dict) -> dict:
    """What the browser needs, float32, by payload name: the word embeddings of the stored rows,
    the first MAX_TOKENS positions, segment 0's embedding (every token is in segment 0)."""
    w = model["weights"]
    rows = stored_rows(vocabulary(model))
    out = {}
    for name, key in needed(model):
        a = w[key]
        if name == "word":
            a = a[rows]  # (V, D) -> (V_stored, D)
        elif name == "pos":
            a = a[:MAX_TOKENS]  # (512, D) -> (MAX_TOKENS, D)
        elif name == "type":
            a = a[0]  # (2, D) -> (D,)
        out[name] = np.ascontiguousarray(a, dtype=np.float32)
    return out


def _is_matrix(name: str) -> bool:
    return name == "word" or name.endswith(".w")


#: Ways to store the matrices: key -> (label, word embeddings, encoder), each stored as ("f32" |
#: "f16", None) or (bits, group); a group of None means one scale per row (per output channel).
SCHEMES = {
    "float32": ("float32", ("f32", None), ("f32", None)),
    "float16": ("float16", ("f16", None), ("f16", None)),
    "int8_channel": ("int8 per output channel", (8, None), (8, None)),
    "int8_group": ("int8 in groups of 32", (8, 32), (8, 32)),
    "f16_encoder": ("int8 embeddings, float16 encoder", (8, 32), ("f16", None)),
    "chosen": ("8-bit embeddings, 10-bit encoder", (EMB_BITS, GROUP), (ENC_BITS, GROUP)),
}
CHOSEN = "chosen"


@functools.lru_cache(maxsize=2)
def _stored_embeddings(how) -> tuple[np.ndarray, int, Quantized | None]:
    """The word embeddings stored ``how``: three schemes share one way, and it is the costliest."""
    return _store(_browser_tensors()["word"], how)


def _store(a: np.ndarray, how) -> tuple[np.ndarray, int, Quantized | None]:
    """One matrix stored one way: what the model then computes with, its bytes, its Quantized."""
    kind, group = how
    if kind == "f32":
        return a, a.size * 4, None
    if kind == "f16":
        return a.astype(np.float16).astype(np.float32), a.size * 2, None
    group = group or a.shape[1]
    qt = quantize(a, kind, group)
    return qt.dequantize(), stored_bytes(a.shape, kind, group), qt


@functools.lru_cache(maxsize=1)
def _model() -> dict:
    return bert.load_model()


@functools.lru_cache(maxsize=1)  # data() asks for the chosen scheme last, then payload() again
def stored(scheme: str = CHOSEN) -> tuple[dict, int, dict]:
    """The browser's tensors stored by ``scheme`` (a SCHEMES key): the weights the model computes
    with, the matrices' bytes, and the Quantized matrices by name (none for float schemes)."""
    _, emb_how, enc_how = SCHEMES[scheme]
    weights, size, quantized = {}, 0, {}
    for name, a in _browser_tensors().items():
        if not _is_matrix(name):
            weights[name] = a
            continue
        weights[name], n, qt = _stored_embeddings(emb_how) if name == "word" else _store(a, enc_how)
        size += n
        if qt is not None:
            quantized[name] = qt
    return weights, size, quantized


def as_model(weights: dict) -> dict:
    """A model dict for ``bert.bert_forward`` whose weights are ``weights`` (payload names): the
    stored embedding rows go back to their ids (the unused ones stay zero, no text reaches them),
    the positions past MAX_TOKENS are left out (inputs are that short)."""
    model = _model()
    cfg = dict(model["config"], max_position_embeddings=MAX_TOKENS)
    vocab = vocabulary(model)
    word = np.zeros((len(vocab), cfg["hidden_size"]), dtype=np.float32)
    word[stored_rows(vocab)] = weights["word"]
    w = {"embeddings.word_embeddings.weight": word, "embeddings.position_embeddings.weight": weights["pos"],
         "embeddings.token_type_embeddings.weight": weights["type"][None, :]}  # (D,) -> (1, D)
    for name, key in needed(model):
        if name not in ("word", "pos", "type"):
            w[key] = weights[name]
    L = cfg["num_hidden_layers"]
    last = _prefix(L - 1)
    for key, value in model["weights"].items():  # the last layer's unused half: never reaches an attention weight
        if key.startswith(last) and key not in w:
            w[key] = np.zeros_like(value)
    return dict(model, config=cfg, weights=w)


def attentions(model: dict, texts=CHECK_SENTENCES) -> list[np.ndarray]:
    """Every head's weights ``(L, H, T, T)`` of each text."""
    out = []
    for text in texts:
        ids, _ = bert.tokenize(_model(), text)
        if len(ids) > MAX_TOKENS:
            raise ValueError(f"check sentence {text!r} has {len(ids)} tokens, more than MAX_TOKENS = {MAX_TOKENS}")
        out.append(bert.bert_forward(model, ids)["attentions"])
    return out


def _max_error(got: list, want: list) -> float:
    return float(max(np.abs(g.astype(np.float64) - w).max() for g, w in zip(got, want)))


def data() -> dict:
    """Each scheme's size and largest attention change; for the chosen one, its largest change by
    layer and head, the rows whose strongest key moves, the head-type scores' largest change, and
    the payload's size."""
    model = _model()
    reference = attentions(model)
    tokens = [bert.tokenize(model, t)[1] for t in CHECK_SENTENCES]
    # every scheme stores the vectors as float32 and the vocabulary as text
    extra = sum(a.nbytes for n, a in browser_tensors(model).items() if not _is_matrix(n)) \
        + len("\n".join(vocabulary(model)).encode("utf-8"))
    schemes, got = {}, None
    for key, (label, *_) in SCHEMES.items():
        weights, size, _ = stored(key)
        run = reference if key == "float32" else attentions(as_model(weights))
        schemes[key] = dict(label=label, bytes=size + extra, mb=(size + extra) / 1e6,
                            max_error=_max_error(run, reference))
        if key == CHOSEN:
            got = run
    weights, _, quantized = stored(CHOSEN)
    L, H = reference[0].shape[:2]
    per_head = np.max([np.abs(g - r).reshape(L, H, -1).max(-1) for g, r in zip(got, reference)], axis=0)  # (L, H)
    rows = flips = 0
    for g, r in zip(got, reference):
        top2 = np.sort(r, axis=-1)[..., -2:]  # (L, H, T, 2)
        clear = top2[..., 1] - top2[..., 0] > CLEAR_GAP
        rows += int(clear.sum())
        flips += int((clear & (g.argmax(-1) != r.argmax(-1))).sum())
    score_error = 0.0
    for g, r, t in zip(got, reference, tokens):
        sg, sr = head_scores(g, t), head_scores(r, t)
        for k in HEAD_TYPES:
            if not np.isnan(sr[k]).all():
                score_error = max(score_error, float(np.abs(sg[k] - sr[k]).max()))
    body = payload()
    vocab = vocabulary(model)
    n_params = sum(a.size for a in weights.values())
    return dict(
        schemes=schemes, chosen=CHOSEN, tolerance=TOLERANCE, payload_limit_mb=PAYLOAD_LIMIT / 1e6,
        max_tokens=MAX_TOKENS,
        emb_bits=EMB_BITS, enc_bits=ENC_BITS, group=GROUP, scale_steps=STEPS, clear_gap=CLEAR_GAP,
        emb_levels=2 ** (EMB_BITS - 1) - 1, enc_levels=2 ** (ENC_BITS - 1) - 1,
        n_sentences=len(CHECK_SENTENCES), longest=max(len(t) for t in tokens),
        max_error=float(per_head.max()), per_head=per_head, per_layer=per_head.max(axis=1),
        clear_rows=rows, argmax_flips=flips, score_error=score_error,
        payload_bytes=len(body), payload_mb=len(body) / 1e6,
        parameters=int(n_params), quantized_parameters=int(sum(q.q.size for q in quantized.values())),
        stored_rows=int(len(stored_rows(vocab))), vocab_size=len(vocab),
        unused_rows=int(len(vocab) - len(stored_rows(vocab))),
    )


# ---- the payload ---------------------------------------------------------------------------

def pack(qt: Quantized) -> bytes:
    """A quantized matrix's integers as the browser reads them: 8 bits as int8, one byte each;
    10 bits as u = q + 512 split in two planes, the n low bytes, then the n / 4 bytes that hold
    the high two bits of 4 weights each (weight i at bits 2 (i mod 4) and up)."""
    q = qt.q.reshape(-1).astype(np.int32)  # (N, K) -> (n,)
    if qt.bits == 8:
        return q.astype(np.int8).tobytes()
    if qt.bits == 10:
        if q.size % 4:
            raise ValueError(f"a 10-bit matrix is packed 4 weights to a byte of high bits; {q.size} weights "
                             "are not a multiple of 4")
        u = (q + 512).astype(np.uint16)
        high = (u >> 8).astype(np.uint8).reshape(-1, 4)  # (n,) -> (n / 4, 4)
        packed = high[:, 0] | (high[:, 1] << 2) | (high[:, 2] << 4) | (high[:, 3] << 6)
        return (u & 0xFF).astype(np.uint8).tobytes() + packed.astype(np.uint8).tobytes()
    raise ValueError(f"the payload packs 8- or 10-bit integers, got {qt.bits} bits")


@functools.lru_cache(maxsize=1)
def payload() -> bytes:
    """The live model's payload: ``MHAB``, the header's length (uint32, little-endian), the header
    (JSON: config, the tensors' places and kinds, the vocabulary's place), zero bytes up to a
    multiple of 4, then every section, each starting at a multiple of 4: float32 vectors and
    matrices as they are, quantized matrices as :func:`pack` writes them and their scale codes,
    and the vocabulary as UTF-8 text, one token per line. Offsets count from the first section."""
    model = _model()
    cfg = model["config"]
    vocab = vocabulary(model)
    weights, _, quantized = stored(CHOSEN)
    sections, offset = [], 0

    def add(data: bytes) -> dict:
        nonlocal offset
        place = dict(offset=offset, bytes=len(data))
        pad = -len(data) % 4
        sections.append(data + b"\0" * pad)
        offset += len(data) + pad
        return place

    tensors = []
    for name in weights:
        shape = list(weights[name].shape)
        if name in quantized:
            qt = quantized[name]
            tensors.append(dict(name=name, shape=shape, kind="q", bits=qt.bits, group=qt.group, base=qt.base,
                                data=add(pack(qt)), codes=add(qt.codes.tobytes())))
        else:
            tensors.append(dict(name=name, shape=shape, kind="f32", data=add(weights[name].astype("<f4").tobytes())))
    words = add("\n".join(vocab).encode("utf-8"))
    kept = np.zeros(len(vocab), dtype=bool)
    kept[stored_rows(vocab)] = True
    skipped, start = [], None  # [first, end) runs of ids without a stored row
    for i in range(len(vocab) + 1):
        missing = i < len(vocab) and not kept[i]
        if missing and start is None:
            start = i
        elif not missing and start is not None:
            skipped.append([start, i])
            start = None
    header = dict(
        format="mha-bert-live/1", model="all-MiniLM-L6-v2",
        config=dict(layers=cfg["num_hidden_layers"], heads=cfg["num_attention_heads"], d_model=cfg["hidden_size"],
                    d_ff=cfg["intermediate_size"], vocab_size=cfg["vocab_size"], eps=cfg["layer_norm_eps"],
                    max_tokens=MAX_TOKENS, max_chars_per_word=100),
        special=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], tokenizer=tokenizer_tables(model),
        scale_steps=STEPS, skipped_rows=skipped, vocab=words, tensors=tensors,
    )
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    head += b" " * (-(len(head) + 8) % 4)
    return MAGIC + struct.pack("<I", len(head)) + head + b"".join(sections)


def explorer(data: dict) -> bytes:
    """The payload (see :func:`payload`): about 24 MB, fetched when the reader asks."""
    return payload()


# ---- the figure -------------------------------------------------------------------------------

def draw(data: dict):
    """Size against the largest attention change, one point per scheme, with the payload's
    limit (25 MB) and the tests' bound; the chosen scheme in the page's accent colour."""
    c, palette = style.colors(), style.palette()
    fig, ax = style.new_figure(5.8, 4.0)
    # each label beside its point, clear of its neighbours: (dx, dy) in points, alignment
    place = {"float32": (-8, 8, "right", "bottom"), "chosen": (8, 6, "left", "bottom"),
             "f16_encoder": (8, -4, "left", "top"), "float16": (10, 0, "left", "center")}
    for key, s in data["schemes"].items():
        chosen = key == data["chosen"]
        colour = palette[1] if chosen else palette[0]
        ax.plot([s["mb"]], [s["max_error"]], "o", ms=9 if chosen else 7, color=colour, zorder=3)
        dx, dy, ha, va = place.get(key, (8, 4, "left", "bottom"))
        ax.annotate(s["label"], (s["mb"], s["max_error"]), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                    fontsize=11, color=style.ink(colour) if chosen else c["fg"],
                    fontweight="bold" if chosen else "normal")
    top = max(s["max_error"] for s in data["schemes"].values())
    ax.set_ylim(-0.04 * top, 1.15 * top)
    limit = data["payload_limit_mb"]
    ax.axvline(limit, color=c["muted"], ls="--", lw=1)
    ax.axhline(data["tolerance"], color=c["muted"], ls=":", lw=1)
    ax.text(limit + 0.8, 0.55 * top, f"payload limit\n{style.exact(limit)} MB", fontsize=11, color=c["muted"], va="center")
    ax.text(ax.get_xlim()[1], data["tolerance"], f"bound {style.exact(data['tolerance'])} ", fontsize=11, color=c["muted"],
            ha="right", va="bottom")
    ax.set(xlabel="bytes the browser fetches (MB)", ylabel="largest change of an attention weight",
           title=f"storing the model: size against change ({data['n_sentences']} sentences)")
    ax.grid(alpha=0.3)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
