"""Forward passes gathered into one padded batch (lab/serving/gather.py, issue 57): each reader's attention weights
equal lab.attention's for their text alone (itself checked against transformers' own output_attentions in
test_attention.py), rounds really batch, a round stays within its budget, a text that breaks a batch fails its own
reader only, and the shared model is unchanged.

Tolerance: a padded batch is not bit-identical to a lone text. Largest difference measured in any attention weight,
2026-12-06, course-gpt2, the 12 texts below gathered in one round: 1.0e-6 with 1 torch thread and with 2; TOL is five
times more. The lens, the same twelve texts: its probabilities 8.8e-7 (1 thread) and 1.8e-6 (2), its top ids, targets
and ranks identical in both (compared exactly).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from lab import attention
from lab.serving import gather
from tests.test_shared_engine import fingerprint

TOL = 5e-6
TEXTS = ["Hello", "The trophy didn't fit in the suitcase because it was too big.", "O gerenciador de pacotes",
         "apt-get install", "Debian is a free operating system for your computer, made by volunteers",
         "A casa", "Um estudante disse que", "The package manager number seven said that the answer was",
         "x", "Quem tem medo do lobo mau?", "Tokens, tokens everywhere", "Is this the real life?"]


@pytest.fixture(scope="module")
def course():
    from lab import models

    return models.load("course-gpt2")


def at_once(fn, items: list) -> list:
    """fn(item) for every item, each in its own thread, released together (readers' sessions arriving at once)."""
    out: list = [None] * len(items)
    barrier = threading.Barrier(len(items))

    def one(i: int) -> None:
        barrier.wait()
        try:
            out[i] = fn(items[i])
        except Exception as e:  # noqa: BLE001 - the test looks at it
            out[i] = e

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(items))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def test_gathered_attention_equals_each_text_alone(course, monkeypatch):
    monkeypatch.setattr(gather, "WAIT_S", 0.2)  # a generous window: the twelve threads land in few rounds
    ids = [course.tokenizer(t)["input_ids"] for t in TEXTS]
    before, rounds = fingerprint(course.model), len(gather.SIZES)
    got = at_once(lambda x: list(gather.attention_by_layer(course.model, x)), ids)
    assert max(gather.SIZES[rounds:]) >= 4, gather.SIZES[rounds:]  # batched, not one after another
    for x, layers in zip(ids, got, strict=True):
        alone = attention.attention(course.model, x)  # (L, H, T, T)
        assert np.stack(layers).shape == alone.shape
        np.testing.assert_allclose(np.stack(layers), alone, rtol=0, atol=TOL)
        np.testing.assert_allclose(np.stack(layers).sum(-1), 1.0, atol=1e-5)  # padded keys carry no weight
    assert fingerprint(course.model) == before


def test_a_text_over_the_budget_runs_alone_layer_by_layer(course):
    ids = course.tokenizer(TEXTS[1] * 6)["input_ids"]
    rounds = len(gather.SIZES)
    layers = list(gather.attention_by_layer(course.model, ids, budget_bytes=1000))
    assert len(gather.SIZES) == rounds  # never gathered
    np.testing.assert_array_equal(np.stack(layers), attention.attention(course.model, ids))


def test_a_round_stays_within_its_budget(monkeypatch):
    monkeypatch.setattr(gather, "WAIT_S", 0.2)
    seen: list[list] = []

    def run(batch):
        seen.append(list(batch))
        return [x * 10 for x in batch]

    got = at_once(lambda x: gather.gathered("budget-test", x, run, cost=sum, budget=10), [4, 4, 4, 4, 4])
    assert got == [40] * 5
    assert all(sum(batch) <= 10 for batch in seen) and len(seen) >= 3  # at most two 4s a round


def test_a_text_that_breaks_the_batch_fails_its_own_reader_only(monkeypatch):
    monkeypatch.setattr(gather, "WAIT_S", 0.2)
    calls: list[list] = []

    def run(batch):
        calls.append(list(batch))
        if "bad" in batch:
            raise ValueError("this text breaks the model")
        return [f"result of {x}" for x in batch]

    got = at_once(lambda x: gather.gathered("error-test", x, run), ["a", "bad", "c", "d"])
    errors = [g for g in got if isinstance(g, Exception)]
    assert len(errors) == 1 and str(errors[0]) == "this text breaks the model"
    assert sorted(g for g in got if isinstance(g, str)) == ["result of a", "result of c", "result of d"]
    assert len(calls[0]) == 4  # one batch first, then each alone


@pytest.mark.parametrize("target", [None, 13])
def test_gathered_lens_equals_each_text_alone(course, monkeypatch, target):
    """The lens of twelve texts read at once (one padded forward pass, every text's rows through shared unembedding
    passes) equals lab.lens.lens of each alone, itself checked against transformers' own logits in test_lens.py."""
    from lab import lens

    monkeypatch.setattr(gather, "WAIT_S", 0.2)
    monkeypatch.setattr(lens, "ROWS", 64)  # chunks that mix texts and layers
    ids = [course.tokenizer(t)["input_ids"] for t in TEXTS]
    rounds = len(gather.SIZES)
    got = at_once(lambda x: gather.lens(course.model, x, 5, target), ids)
    assert max(gather.SIZES[rounds:]) >= 4, gather.SIZES[rounds:]
    for x, result in zip(ids, got, strict=True):
        alone = lens.lens(course.model, x, 5, target)
        for key in ("top_ids", "targets", "rank"):
            np.testing.assert_array_equal(result[key], alone[key], err_msg=key)
        for key in ("top_p", "p"):
            np.testing.assert_allclose(result[key], alone[key], rtol=0, atol=TOL, err_msg=key)


def test_a_text_the_lens_refuses_never_reaches_a_round(course):
    from lab.lens import LensError

    rounds = len(gather.SIZES)
    with pytest.raises(LensError) as e:
        gather.lens(course.model, [], 5)
    assert e.value.reason == "empty_text" and len(gather.SIZES) == rounds
