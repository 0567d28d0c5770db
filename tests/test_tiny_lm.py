"""The tiny character-level language model: its tokenizer, its corpus, and its training tool
(tools/train_lm.py) in a smoke run; the stored model's losses measured again with torch."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mhalib.models.chars import CharTokenizer

ROOT = Path(__file__).resolve().parents[1]


def test_characters_round_trip_and_unknown_ones_are_named():
    tok = CharTokenizer("\n abc")
    assert tok.encode("cab a").tolist() == [4, 2, 3, 1, 2]
    assert tok.decode([4, 2, 3]) == "cab" and tok.decode([]) == "" and len(tok) == 5
    assert tok.decode(tok.encode("a\nb c")) == "a\nb c"
    with pytest.raises(ValueError, match=r"characters the vocabulary lacks: 'xé'"):
        tok.encode("axé")
    with pytest.raises(ValueError, match=r"each character once; 'a' appear"):
        CharTokenizer("aba")
    with pytest.raises(ValueError, match=r"ids must lie in \[0, len\(vocab\)\) = \[0, 5\)"):
        tok.decode([5])
    with pytest.raises(TypeError, match="integer token ids"):
        tok.decode([1.0])
    with pytest.raises(TypeError, match="vocab must be a str"):
        CharTokenizer(["a"])
    # Before, a batch of two sequences came back as one text, 'ab c', its rows glued together.
    with pytest.raises(ValueError, match=r"ids must be one sequence .* got shape \(2, 2\); decode a batch row by row"):
        tok.decode([[1, 2], [3, 4]])
    assert tok.decode(3) == "b" and tok.decode(np.int64(4)) == "c"


def test_prose_keeps_what_a_reader_reads():
    from tools.train_lm import prose

    page = ("---\ntitle: T\n---\n# The title\n\nA *bold* claim with [a link](x.md){ .c } and "
            "\\(q \\cdot k\\) and {{ value s p .2f }} tokens.\n\n```python\ncode()\n```\n\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n![alt](figures/f.svg \"c\")\n\n{{ table t }}\n\n"
            "!!! note \"Why\"\n    Because <b>it</b> works — mostly.\n\n\\[\nx = 1\n\\]\n- item one\n")
    assert prose(page) == ("The title\n\nA bold claim with a link and x and N tokens.\n\nWhy\n"
                           "Because it works - mostly.\n\nitem one\n")


def test_the_corpus_holds_out_every_tenth_paragraph_of_every_page(tmp_path):
    from tools.train_lm import corpus

    for name in ("a.md", "b.md"):
        paras = [f"Paragraph {i} of page {name}, long enough to count as prose here." for i in range(10)]
        (tmp_path / name).write_text("\n\n".join(paras) + "\n")
    (tmp_path / "gallery.md").write_text("Gallery text that is long enough to count as prose.\n")
    c = corpus(tmp_path)
    assert c["pages"] == ["a.md", "b.md"] and c["paragraphs"] == 20
    held = c["held_out"].strip().split("\n\n")
    assert held == ["Paragraph 9 of page a.md, long enough to count as prose here.",
                    "Paragraph 9 of page b.md, long enough to count as prose here."]
    assert not set(held) & set(c["train"].strip().split("\n\n"))


def _torch_loss(weights: dict, config: dict, text: str, vocab: str, windows: int, length: int, seed: int) -> float:
    """The mean next-character cross-entropy of the stored weights on the held-out windows, with torch."""
    import torch
    import torch.nn.functional as F

    from mhalib.models.tiny import TinyDecoder
    from mhalib.models.tiny_numpy import TinyConfig

    ids = CharTokenizer(vocab).encode(text)
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(ids) - length, size=windows)
    batch = torch.as_tensor(np.stack([ids[s:s + length + 1] for s in starts]))
    model = TinyDecoder(TinyConfig.from_dict(config)).double()
    model.load_numpy_weights({k: v.astype(np.float64) for k, v in weights.items()})
    with torch.no_grad():
        logits = model(batch[:, :-1])
    return float(F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten()))


def _check_stored(out: dict, weights: dict) -> None:
    c = out["config"]
    got = _torch_loss(weights, c["model"], out["corpus"]["held_out_text"], out["vocab"], c["eval"]["windows"],
                      c["context"], c["eval"]["seed"])
    assert got == pytest.approx(out["final"]["held_out"], abs=2e-4)
    assert all(w.dtype == np.float16 for w in weights.values())
    assert out["parameters"] == sum(w.size for w in weights.values())


def test_a_smoke_run_writes_what_its_losses_say(tmp_path):
    from tools import train_lm

    assert train_lm.main(["--quick", "--out-dir", str(tmp_path), "--no-progress"]) == 0
    out = json.loads((tmp_path / "tiny_lm.json").read_text())
    weights = dict(np.load(tmp_path / "tiny_lm_weights.npz"))
    assert out["made_by"] == "tools/train_lm.py --quick" and out["corpus"]["pages"]
    steps = [p["step"] for p in out["curve"]]
    assert steps[0] == 0 and steps[-1] == out["config"]["train"]["steps"]
    _check_stored(out, weights)
    # its corpus, stored beside it, trains the same model again after the pages have changed
    text = json.loads((tmp_path / "tiny_lm_corpus.json").read_text())
    assert text["sha256"] == out["corpus"]["sha256"] and text["held_out"] == out["corpus"]["held_out_text"]
    again = tmp_path / "again"
    assert train_lm.main(["--quick", "--corpus", str(tmp_path / "tiny_lm_corpus.json"), "--out-dir", str(again),
                          "--no-progress", "--docs", str(tmp_path / "no-such-folder")]) == 0
    second = json.loads((again / "tiny_lm.json").read_text())
    losses = [[(p["step"], p["train"], p["held_out"]) for p in run["curve"]] for run in (out, second)]
    assert second["final"] == out["final"] and losses[0] == losses[1]  # the same run but for its clock
    assert all(np.array_equal(a, weights[k]) for k, a in np.load(again / "tiny_lm_weights.npz").items())


def test_a_stored_corpus_that_was_edited_is_refused(tmp_path):
    from tools import train_lm

    path = tmp_path / "c.json"
    good = dict(pages=["a.md"], paragraphs=2, train="one\n", held_out="two\n",
                sha256=train_lm.corpus_digest("one\n", "two\n"))
    path.write_text(json.dumps(good))
    assert train_lm.stored_corpus(path)["train"] == "one\n"
    path.write_text(json.dumps(dict(good, train="one!\n")))
    with pytest.raises(ValueError, match="does not match its SHA-256"):
        train_lm.stored_corpus(path)
    path.write_text(json.dumps({"train": "x"}))
    with pytest.raises(ValueError, match="not a corpus written by tools/train_lm.py"):
        train_lm.stored_corpus(path)
    # Before: the same SHA-256 for another split of the text (train "one\0two" and held out
    # "three" hash as train "one" and held out "two\0three"); a bare TypeError or
    # UnicodeDecodeError that named no file.
    moved = dict(good, train="one", held_out="two\0three", sha256=train_lm.corpus_digest("one\0two", "three"))
    assert moved["sha256"] == train_lm.corpus_digest(moved["train"], moved["held_out"])
    path.write_text(json.dumps(moved))
    with pytest.raises(ValueError, match=f"--corpus {path}: its text holds the NUL character"):
        train_lm.stored_corpus(path)
    path.write_text(json.dumps(dict(good, train=["one"])))
    with pytest.raises(ValueError, match=f"--corpus {path}: 'train' must be a text, got a list"):
        train_lm.stored_corpus(path)
    path.write_bytes(b'{"train": "caf\xe9"}')
    with pytest.raises(ValueError, match=f"--corpus {path}: not a corpus .*not UTF-8 JSON"):
        train_lm.stored_corpus(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match=f"--corpus {path}: not a corpus .* got a list"):
        train_lm.stored_corpus(path)


STORED = ROOT / "figures" / "data" / "tiny_lm.json"


@pytest.mark.skipif(not STORED.exists(), reason="the stored model is made by tools/train_lm.py")
def test_the_stored_model_is_small_and_its_held_out_loss_is_what_it_says():
    out = json.loads(STORED.read_text())
    from tools.train_lm import CORPUS_NAME, stored_corpus
    text = stored_corpus(STORED.with_name(CORPUS_NAME))  # the text it was trained on, to train it again
    assert text["sha256"] == out["corpus"]["sha256"] and text["held_out"] == out["corpus"]["held_out_text"]
    assert len(text["train"]) == out["corpus"]["train_chars"]
    path = STORED.with_name(out["weights"]["file"])
    assert path.stat().st_size <= 2_000_000
    _check_stored(out, dict(np.load(path)))
    assert out["final"]["held_out"] < out["curve"][0]["held_out"] - 1.0  # it learnt something


@pytest.mark.skipif(not STORED.exists(), reason="the stored model is made by tools/train_lm.py")
def test_the_loss_curve_figure_reads_the_stored_run():
    import math

    import figures

    out = json.loads(STORED.read_text())
    d = figures.load("lm_loss_curve").data()
    held = [p["held_out"] for p in out["curve"]]
    assert d["held_out"] == held and d["steps"] == [p["step"] for p in out["curve"]]
    assert d["best_held_out"] == min(held) and d["best_step"] == out["curve"][held.index(min(held))]["step"]
    assert d["chance_loss"] == pytest.approx(math.log(len(out["vocab"])))
    c = out["config"]
    assert d["epochs"] == pytest.approx(c["train"]["steps"] * c["train"]["batch_size"] * c["context"]
                                        / out["corpus"]["train_chars"])
    assert d["final_held_out"] > d["final_train"]  # held-out text is harder than text seen in training
