"""lab.ceiling's edges and windows, for the mutants `make mutants` left alive (docs/testing.md): the one-token and
bad-position errors word for word, a curve longer than the text, a half-life on the exact half, and the
forced-error experiment away from the text's start (where its window no longer starts at 0), against
transformers' own logits for the same window."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from lab import ceiling
from lab.ceiling import CeilingError
from lab.models import load
from lab.text import encode


@pytest.fixture(scope="module")
def course():
    return load("course-gpt2")


@pytest.fixture(scope="module")
def ids(course):
    return encode(course.tokenizer, ceiling.unseen_texts()["en"])[:400]


def test_one_token_is_refused_in_words_and_two_tokens_are_measured(course, ids):
    for call in (lambda: ceiling.measure(course, ids[:1]), lambda: ceiling.forced_summary(course, ids[:2])):
        with pytest.raises(CeilingError) as e:
            call()
        assert (str(e.value), e.value.reason) == ("the text is a single token: there is nothing to predict",
                                                  "one_token")
    r = ceiling.measure(course, ids[:2], max_n=3)
    assert r["tokens"] == 1 and [c["observed"] for c in r["curve"]][1:] == [None, None]  # past the text: None
    assert r["curve"][0]["observed"] in (0.0, 1.0)
    assert ceiling.forced_summary(course, ids[:3], k=2)["positions"] == [1]  # one place to force: room for one
    with pytest.raises(CeilingError) as e:
        ceiling.measure(course, ids[:10], max_n=0)
    assert e.value.reason == "max_n"


def test_a_forced_position_outside_the_text_is_refused_with_its_details(course, ids):
    for position in (0, 9, 10, 11):  # 10 tokens: positions 1..8 leave a token after the forced one
        with pytest.raises(CeilingError) as e:
            ceiling.forced(course, ids[:10], position)
        assert str(e.value) == f"the forced position must be between 1 and 8, not {position}"
        assert (e.value.reason, e.value.details) == ("position", {"position": position, "tokens": 10})
    assert len(ceiling.forced(course, ids[:10], 8)["with"]) == 1


def test_half_life_on_the_exact_half_and_no_error_after_an_error():
    assert ceiling.half_life(np.array([1.0, 0.5, 0.25])) == 3  # 0.5 is not below one half
    assert ceiling.half_life(np.array([0.9, 0.6])) is None
    assert ceiling.conditional(np.array([True, True, True])) == (None, 0.0)  # no error: nothing after one
    assert ceiling.conditional(np.array([False, False])) == (1.0, None)


def direct(model, piece: list[int]) -> torch.Tensor:
    """transformers' logits for one window, one forward pass."""
    with torch.inference_mode():
        return model(input_ids=torch.tensor([piece])).logits[0]


@pytest.mark.parametrize(("context", "position"), [(64, 150), (256, 200)])
def test_the_forced_experiment_away_from_the_start_equals_a_direct_forward_pass(course, ids, context, position):
    """The window starts where the context (64: end − 64) or FORCED_CONTEXT (256: position − 128) puts it, not at
    0; the forced token is the lowest-ranked after the text before it; both lists equal a direct forward pass over
    the same window, with and without the swap; 16 tokens followed by default."""
    loaded = dataclasses.replace(course, context=context)
    r = ceiling.forced(loaded, ids, position)
    end = position + 1 + ceiling.K
    start = max(0, end - context, position - ceiling.FORCED_CONTEXT)
    assert start > 0
    piece = ids[start:end]
    logits = direct(course.model, piece)
    bad = int(logits[position - start - 1].argmin())
    swapped = piece.copy()
    swapped[position - start] = bad
    truth = np.asarray(ids[position + 1:end])
    after = slice(position - start, end - start - 1)
    assert r == {"position": position, "forced": bad, "original": ids[position],
                 "without": (logits[after].argmax(-1).numpy() == truth).tolist(),
                 "with": (direct(course.model, swapped)[after].argmax(-1).numpy() == truth).tolist()}
    assert len(r["with"]) == ceiling.K == 16


def test_wrong_token_reads_only_its_window(course, ids):
    """The last `context` tokens before the position: past the model's 256 positions the whole prefix could not
    even be read (course-gpt2's lowest-ranked token barely depends on the context, so a window of 64 alone does
    not show a wrong window)."""
    assert ceiling.wrong_token(course.model, ids, 100, 64) == int(direct(course.model, ids[36:100])[-1].argmin())
    assert ceiling.wrong_token(course.model, ids, 300, 256) == int(direct(course.model, ids[44:300])[-1].argmin())


def test_forced_summary_spreads_its_sixteen_positions_from_the_first(course, ids):
    text = ids[:40]  # room 38: positions 1..38, sixteen evenly spread
    r = ceiling.forced_summary(course, text, k=2)
    assert r["positions"] == sorted({int(x) for x in np.linspace(1, 38, 16)}) and r["positions"][0] == 1
    assert r["k"] == 2 and len(r["by_distance"]["with"]) == 2
    assert ceiling.forced_summary(course, ids[:60], k=1)["positions"][-1] == 58
    assert len(ceiling.forced_summary(course, ids[:60], k=1)["positions"]) == 16
    assert ceiling.forced_summary(course, ids[:60])["k"] == 16
