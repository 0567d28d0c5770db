"""Train the tiny character-level language model of the generation pages on this machine's CPU.

    python -m tools.train_lm            # the stored model (minutes, 2 cores)
    python -m tools.train_lm --quick    # a smoke run in seconds (tests use it)

**Corpus.** The course's own lecture pages (``docs/*.md``, text and figures CC BY 4.0), read
as a reader reads their prose: code blocks, tables, figures, directives, HTML and formulas
are left out (a formula becomes ``x``, a number the build inserts becomes ``N``), Markdown
marks are dropped and non-ASCII letters are folded to ASCII (:func:`prose`). Paragraphs
are split into a training text and a held-out text: every ``HELD_OUT_EVERY``-th paragraph
is held out, so both come from every page.

**Model.** A decoder of :mod:`mhalib.models.tiny` with RoPE, causal, pre-norm, trained on
random windows of the training text to predict each next character (cross-entropy on every
position), AdamW with a linear warm-up and a cosine decay, gradients clipped at norm 1, one
seed for the weights and the windows, deterministic kernels on a fixed number of threads.
The held-out loss is measured on fixed windows of the held-out text at every checkpoint.

**Output** (``--out-dir``, default ``figures/data``): ``tiny_lm.json`` (the vocabulary, the
corpus's pages, sizes and SHA-256, the configuration, the loss curves, the final losses of
the stored weights, the machine, the date and the wall time) and ``tiny_lm_weights.npz``
(float16: half the bytes of float32; the losses in the JSON are those of these rounded
weights, computed by ``mhalib.models.tiny_numpy.forward``). The build never trains: the
figures read these files.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import platform
import re
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np

from tools.measure_attention_memory import cpu_name

ROOT = Path(__file__).resolve().parents[1]
JSON_NAME = "tiny_lm.json"
WEIGHTS_NAME = "tiny_lm_weights.npz"
#: The training and held-out text of the stored run, so that a later run can train on exactly
#: that text after the pages have changed (``--corpus``).
CORPUS_NAME = "tiny_lm_corpus.json"
SCHEMA_VERSION = 1
#: Every n-th paragraph of the corpus is held out (never trained on).
HELD_OUT_EVERY = 10
#: Pages that are not lecture prose: galleries, the API reference, the reference list, the errata's tables.
NOT_PROSE = ("gallery", "references.md", "notation.md", "api")

FULL = dict(
    model=dict(d_model=128, n_layers=4, n_heads=4, d_ff=512, rope_base=10000.0),
    context=128,
    train=dict(steps=1000, batch_size=32, lr=3e-3, warmup=100, weight_decay=0.01, seed=0),
    eval=dict(every=100, windows=64, seed=1),
    threads=2,
)
QUICK = dict(
    model=dict(d_model=16, n_layers=1, n_heads=2, d_ff=16, rope_base=10000.0),
    context=16,
    train=dict(steps=6, batch_size=4, lr=3e-3, warmup=2, weight_decay=0.01, seed=0),
    eval=dict(every=3, windows=4, seed=1),
    threads=1,
)


# ---- the corpus -------------------------------------------------------------------------------

def prose(markdown: str) -> str:
    """A page's Markdown as the prose a reader reads (module docstring), ASCII only."""
    t = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)  # front matter
    t = re.sub(r"^([ \t]*)(```|~~~).*?^\1\2[ \t]*$", "", t, flags=re.S | re.M)  # fenced code
    t = re.sub(r"\{\{\s*value\b[^}]*\}\}", "N", t)  # a number the build inserts
    t = re.sub(r"\{\{.*?\}\}", "", t)  # tables, figures, galleries, references
    t = re.sub(r"\\\[.*?\\\]", "", t, flags=re.S)  # display formulas
    t = re.sub(r"\\\(.*?\\\)", "x", t, flags=re.S)  # inline formulas
    t = re.sub(r"!\[[^\]]*\]\([^)]*\)(\{[^}]*\})?", "", t)  # figures
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)  # links: their text
    t = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", t)
    t = re.sub(r"<[^>]+>", "", t)  # HTML
    t = re.sub(r"\{\s*[:#.][^}]*\}", "", t)  # attribute lists, labels
    t = re.sub(r"^[ \t]*\|.*$", "", t, flags=re.M)  # tables
    t = re.sub(r"^[ \t]*[!?]{3}\+?[ \t]*[\w-]+[ \t]*(?:\"([^\"]*)\")?", r"\1", t, flags=re.M)  # admonitions: their title
    t = re.sub(r"^[ \t]*#+[ \t]*", "", t, flags=re.M)  # headings
    t = re.sub(r"^[ \t]*([-*+]|\d+\.)[ \t]+", "", t, flags=re.M)  # list markers
    t = re.sub(r"[*_`]", "", t)  # emphasis and code marks
    t = unicodedata.normalize("NFKD", t).replace("−", "-").replace("–", "-").replace("—", "-")
    t = "".join(c for c in t if c == "\n" or (" " <= c <= "~"))
    t = re.sub(r"[ \t]+", " ", t)
    t = "\n".join(line.strip() for line in t.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", t).strip() + "\n"


def pages(docs: Path) -> list[Path]:
    """The lecture pages, by name (deterministic)."""
    return [p for p in sorted(docs.glob("*.md")) if not p.name.startswith(NOT_PROSE) and p.name not in NOT_PROSE]


def corpus(docs: Path) -> dict:
    """``{"train", "held_out", "pages", "paragraphs", "sha256"}``: the text split by paragraph."""
    paragraphs = []
    used = []
    for page in pages(docs):
        text = prose(page.read_text(encoding="utf-8"))
        # a paragraph as one line (the pages wrap their lines at about 90 characters); headings and stubs aside
        found = [" ".join(p.split()) for p in text.split("\n\n") if len(p.strip()) >= 40]
        if found:
            used.append(page.name)
            paragraphs += found
    train = [p for i, p in enumerate(paragraphs) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1]
    held = [p for i, p in enumerate(paragraphs) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1]
    train_text, held_text = "\n\n".join(train) + "\n", "\n\n".join(held) + "\n"
    return dict(train=train_text, held_out=held_text, pages=used, paragraphs=len(paragraphs),
                sha256=corpus_digest(train_text, held_text))


def corpus_digest(train: str, held_out: str) -> str:
    return hashlib.sha256((train + "\0" + held_out).encode()).hexdigest()


def stored_corpus(path: Path) -> dict:
    """A corpus written by an earlier run (:data:`CORPUS_NAME`), its SHA-256 checked against its text."""
    try:
        text = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"--corpus {path}: not a corpus written by tools/train_lm.py (not UTF-8 JSON: {exc})") from None
    if not isinstance(text, dict):
        raise ValueError(f"--corpus {path}: not a corpus written by tools/train_lm.py (a JSON object), "
                         f"got a {type(text).__name__}")
    missing = {"train", "held_out", "pages", "paragraphs", "sha256"} - set(text)
    if missing:
        raise ValueError(f"--corpus {path}: not a corpus written by tools/train_lm.py (it lacks {sorted(missing)})")
    for key in ("train", "held_out", "sha256"):
        if not isinstance(text[key], str):
            raise ValueError(f"--corpus {path}: {key!r} must be a text, got a {type(text[key]).__name__}")
    if "\0" in text["train"] + text["held_out"]:
        # the digest joins the two texts with a NUL: one inside them could move text from one to the other
        raise ValueError(f"--corpus {path}: its text holds the NUL character, which no page holds and which "
                         "would let the two texts trade characters under the same SHA-256")
    if corpus_digest(text["train"], text["held_out"]) != text["sha256"]:
        raise ValueError(f"--corpus {path}: its text does not match its SHA-256 {text['sha256'][:12]}...: "
                         "the file was changed after the run that wrote it")
    return text


# ---- training ---------------------------------------------------------------------------------------

def windows(ids: np.ndarray, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random windows of ``length + 1`` ids (inputs and their next ids), shape ``(n, length + 1)``."""
    if len(ids) < length + 1:
        raise ValueError(f"the text has {len(ids)} characters, fewer than a window of {length + 1}")
    starts = rng.integers(0, len(ids) - length, size=n)
    return np.stack([ids[s:s + length + 1] for s in starts])  # (n, length + 1)


def rounded(weights: dict) -> dict:
    """The weights as stored: float16, read back as float32 (the model the pages use)."""
    return {k: np.asarray(v, dtype=np.float16).astype(np.float32) for k, v in weights.items()}


def numpy_loss(weights: dict, config, batch: np.ndarray) -> float:
    """Mean next-character cross-entropy (nats) of ``batch`` ``(n, T + 1)`` under mhalib's numpy forward pass."""
    from mhalib.models.tiny_numpy import forward

    logits = forward(weights, config, batch[:, :-1])["logits"]  # (n, T, V), float64
    logits -= logits.max(axis=-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    target = batch[:, 1:]
    return float(-np.take_along_axis(logp, target[..., None], axis=-1).mean())


def run(cfg: dict, docs: Path | dict, *, progress: bool = True) -> tuple[dict, dict]:
    """Train on the pages in ``docs`` (a folder) or on a corpus dict (:func:`corpus`,
    :func:`stored_corpus`); returns the JSON record and the weights."""
    import torch
    import torch.nn.functional as F

    from mhalib.models.chars import CharTokenizer
    from mhalib.models.tiny import TinyDecoder, set_deterministic
    from mhalib.models.tiny_numpy import TinyConfig

    t0, c0 = time.perf_counter(), time.process_time()
    load_start = os.getloadavg() if hasattr(os, "getloadavg") else None
    text = docs if isinstance(docs, dict) else corpus(docs)
    vocab = "".join(sorted(set(text["train"]) | set(text["held_out"])))
    tok = CharTokenizer(vocab)
    train_ids, held_ids = tok.encode(text["train"]), tok.encode(text["held_out"])
    T, tr, ev = cfg["context"], cfg["train"], cfg["eval"]
    config = TinyConfig(vocab=len(vocab), method="rope", max_len=T, **cfg["model"])
    held_batch = windows(held_ids, ev["windows"], T, np.random.default_rng(ev["seed"]))
    train_probe = windows(train_ids, ev["windows"], T, np.random.default_rng(ev["seed"] + 1))

    set_deterministic(cfg["threads"])
    torch.manual_seed(tr["seed"])
    model = TinyDecoder(config)
    rng = np.random.default_rng(tr["seed"])
    opt = torch.optim.AdamW(model.parameters(), lr=tr["lr"], weight_decay=tr["weight_decay"])
    steps, warmup = tr["steps"], tr["warmup"]

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)

    @torch.no_grad()
    def loss_of(batch: np.ndarray) -> float:
        b = torch.as_tensor(batch)
        logits = model(b[:, :-1])
        return float(F.cross_entropy(logits.flatten(0, 1), b[:, 1:].flatten()))

    curve = []
    for step in range(steps + 1):
        if step % ev["every"] == 0 or step == steps:
            curve.append(dict(step=step, train=round(loss_of(train_probe), 5), held_out=round(loss_of(held_batch), 5),
                              seconds=round(time.perf_counter() - t0, 1)))
            if progress:
                print(f"step {step:5d}  train {curve[-1]['train']:.3f}  held-out {curve[-1]['held_out']:.3f}  "
                      f"{curve[-1]['seconds']:.0f} s", file=sys.stderr, flush=True)
        if step == steps:
            break
        batch = torch.as_tensor(windows(train_ids, tr["batch_size"], T, rng))
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()

    weights = rounded(model.numpy_weights())
    final = dict(train=round(numpy_loss(weights, config, train_probe), 5),
                 held_out=round(numpy_loss(weights, config, held_batch), 5))
    out = dict(
        schema=SCHEMA_VERSION,
        made_by="tools/train_lm.py" + (" --quick" if cfg is QUICK else ""),
        date=datetime.date.today().isoformat(),
        wall_time_s=round(time.perf_counter() - t0, 1),
        cpu_time_s=round(time.process_time() - c0, 1),
        machine=dict(cpu=cpu_name(), cores=os.cpu_count(), platform=platform.platform(),
                     python=platform.python_version(), torch=torch.__version__, numpy=np.__version__,
                     threads=cfg["threads"],
                     load_average_at_start=None if load_start is None else [round(x, 2) for x in load_start]),
        corpus=dict(pages=text["pages"], paragraphs=text["paragraphs"], held_out_every=HELD_OUT_EVERY,
                    train_chars=len(train_ids), held_out_chars=len(held_ids), sha256=text["sha256"],
                    licence="CC BY 4.0 (the course's own text)",
                    # kept, so that the held-out loss can be measured again when the pages have changed
                    held_out_text=text["held_out"]),
        vocab=vocab,
        config=dict(cfg, model=config.to_dict()),
        parameters=int(sum(v.size for v in weights.values())),
        curve=curve,
        final=final,
        weights=dict(file=WEIGHTS_NAME, dtype="float16"),
    )
    return out, weights, text


def write(out: dict, weights: dict, text: dict, out_dir: Path) -> tuple[Path, Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    jpath, wpath, cpath = out_dir / JSON_NAME, out_dir / WEIGHTS_NAME, out_dir / CORPUS_NAME
    jpath.write_text(json.dumps(out, indent=1) + "\n")
    np.savez_compressed(wpath, **{k: np.asarray(v, dtype=np.float16) for k, v in sorted(weights.items())})
    keep = ("pages", "paragraphs", "sha256", "train", "held_out")
    cpath.write_text(json.dumps({k: text[k] for k in keep}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return jpath, wpath, cpath


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke configuration that runs in seconds")
    p.add_argument("--out-dir", type=Path, default=None,
                   help="where to write the JSON and npz (default figures/data; with --quick test-output/tiny_lm_quick)")
    p.add_argument("--docs", type=Path, default=ROOT / "docs", help="the pages to read (default docs/)")
    p.add_argument("--corpus", type=Path, default=None,
                   help=f"train on a stored corpus instead of the pages (figures/data/{CORPUS_NAME} "
                        "reproduces the stored model)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines")
    a = p.parse_args(argv)
    cfg = QUICK if a.quick else FULL
    out_dir = a.out_dir or (ROOT / ("test-output/tiny_lm_quick" if a.quick else "figures/data"))
    source = a.docs if a.corpus is None else stored_corpus(a.corpus)
    out, weights, text = run(cfg, source, progress=not a.no_progress)
    for path in write(out, weights, text, out_dir):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
