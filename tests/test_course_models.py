"""The shipped course models: load offline, id-compatible with GPT-2, and beat the documented bound.

The bound (docs/course-models.md): on held-out text the decoder's perplexity is at most one third of
an add-one unigram model fitted on the same training tokens. The held-out documents come from the
corpus's test split (never trained on); the unigram counts are the training split's.
"""

import json
import math
from pathlib import Path

import pytest
import torch

from lab import models
from lab.encodings import encoding

DATA = Path(__file__).parent / "data"
BOUND = 1 / 3


@pytest.fixture(scope="module")
def decoder():
    return models.load("course-gpt2")


def unigram_perplexity(ids: list[int]) -> float:
    """Add-one unigram perplexity of ids[1:] under the training split's token counts."""
    data = json.loads((Path(__file__).parents[1] / "lab" / "data" / "course_unigram_counts.json").read_text())
    counts, total = data["counts"], data["total"]
    nll = -sum(math.log((counts[i] + 1) / (total + len(counts))) for i in ids[1:])
    return math.exp(nll / (len(ids) - 1))


def test_both_course_models_load_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    dec, enc = models.load("course-gpt2"), models.load("course-roberta")
    assert (dec.kind, enc.kind) == ("decoder", "encoder")
    for m in (dec, enc):
        assert (m.n_layer, m.n_head, m.n_embd, m.context) == (4, 8, 256, 256)
        assert next(m.model.parameters()).dtype == torch.float32
        out = m.model(torch.tensor([m.tokenizer("O troféu não coube.")["input_ids"]]),
                      output_attentions=True)
        assert len(out.attentions) == 4 and out.attentions[0].shape[1] == 8


def test_course_models_load_through_the_apps_cached_loader(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from ui import model_loader

    first = model_loader.get_model("course-gpt2")
    assert model_loader.get_model("course-gpt2") is first  # cached, not reloaded
    assert model_loader.get_model("course-roberta").kind == "encoder"


def test_decoder_ids_mean_what_they_mean_in_gpt2(decoder):
    gpt2 = encoding("gpt2")
    text = "O troféu não coube na mala porque era grande demais. The trophy didn't fit."
    ids = decoder.tokenizer(text)["input_ids"]
    assert max(ids) < 8191
    assert b"".join(gpt2.decode_single_token_bytes(i) for i in ids) == text.encode("utf-8")


@pytest.mark.parametrize("doc", json.loads((DATA / "course_heldout.json").read_text())["documents"],
                         ids=lambda d: d["source"])
def test_heldout_perplexity_beats_the_documented_bound(decoder, doc):
    ids = decoder.tokenizer(doc["text"])["input_ids"][: decoder.context]
    x = torch.tensor([ids])
    with torch.no_grad():
        ppl = math.exp(decoder.model(x, labels=x).loss.item())
    assert ppl <= BOUND * unigram_perplexity(ids), (ppl, unigram_perplexity(ids))


SIBLINGS = ("course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2")  # smallest first


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_three_course_decoders_are_ordered_by_size_on_unseen_text(monkeypatch, lang):
    """Held-out perplexity (Debian documentation no course model saw) falls as the model grows, and
    every one of them beats the unigram baseline of the training counts."""
    from lab import perplexity
    from lab.text import encode

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    text = perplexity.unseen_texts()[lang][:6000]
    ppl, sizes = [], []
    for name in SIBLINGS:
        m = models.load(name)
        assert (m.kind, m.context) == ("decoder", 256)
        r = perplexity.evaluate(m, text, stride=128)
        ids = encode(m.tokenizer, text)
        unigram = math.exp(perplexity.unigram_nll(ids, [s["position"] for s in r["surprisal"]]) / r["tokens"])
        assert r["ppl"] < unigram
        ppl.append(r["ppl"])
        sizes.append(perplexity.non_embedding_params(m.model))
    assert sizes == sorted(sizes) and sizes[-1] / sizes[0] > 50
    assert ppl == sorted(ppl, reverse=True), dict(zip(SIBLINGS, ppl, strict=True))


def test_the_held_out_unigram_baseline_is_add_one_over_the_whole_vocabulary():
    """lab.course.evaluate's baseline, by hand: training ids 0, 0, 0, 2 over a vocabulary of 4 (ids 1 and 3 never
    seen): counts 3, 0, 1, 0, N = 4, V = 4, so p = 4/8, 1/8, 2/8, 1/8."""
    import numpy as np

    from lab.course.evaluate import unigram_logprobs

    logp = unigram_logprobs(np.array([0, 0, 2, 0]), 4)
    np.testing.assert_allclose(logp, np.log([4 / 8, 1 / 8, 2 / 8, 1 / 8]), rtol=1e-12)
    rng = np.random.default_rng(0)
    train, vocab = rng.integers(0, 50, 1000), 64  # ids 50..63 never occur
    expected = [math.log((int((train == i).sum()) + 1) / (1000 + vocab)) for i in range(vocab)]
    np.testing.assert_allclose(unigram_logprobs(train, vocab), expected, rtol=1e-12)


def test_the_shipped_counts_reproduce_the_unigram_perplexity_here(decoder):
    """lab.perplexity.unigram_nll against this file's own add-one sum (unigram_perplexity) on a held-out document."""
    from lab import perplexity

    ids = decoder.tokenizer(json.loads((DATA / "course_heldout.json").read_text())["documents"][0]["text"])["input_ids"]
    nll = perplexity.unigram_nll(ids, range(1, len(ids)))
    assert math.exp(nll / (len(ids) - 1)) == pytest.approx(unigram_perplexity(ids), rel=1e-9)
