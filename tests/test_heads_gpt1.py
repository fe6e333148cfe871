"""The heads experiments on GPT-1 (openai-gpt: layer norms after each sub-block, no ln_f, lab.gpt1) against outside
oracles: transformers' own forward for the losses, nnsight 0.8.1's own interventions for the knock-out and the
patching (to 1e-5), a hand computation from transformers' output_attentions for the scores, the shared model
untouched under many threads, and the heads page serving a tiny GPT-1 as "openai-gpt".

The models are random (no GPT-1 download here), with every weight drawn wider than the default init and layer norms
that are not the identity (weights around 1, biases around 0): a forward that put a norm in the wrong place, or one
too many or too few, would not agree with transformers'."""

from __future__ import annotations

import copy
import math
import threading

import numpy as np
import pytest
import torch

from lab import heads, patching
from tests.test_heads import hf_attentions, hooks, nnsight_loss
from tests.test_heads_patch import assert_equals_nnsight, nnsight_patching
from tests.test_shared_engine import fingerprint


def spiced(model, seed: int, spread: float):
    """`model` with every matrix drawn N(0, spread) and every layer norm's weight N(1, 0.3), bias N(0, 0.3)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            for name, p in module.named_parameters(recurse=False):
                if isinstance(module, torch.nn.LayerNorm):
                    p.copy_((1.0 if name == "weight" else 0.0) + 0.3 * torch.randn(p.shape, generator=g))
                elif p.dim() == 2:
                    p.copy_(spread * torch.randn(p.shape, generator=g))
    return model.requires_grad_(False)


@pytest.fixture(scope="module")
def tiny():
    from lab.testing import random_models

    model, tok = random_models.build("openai-gpt", "tiny", seed=0)
    return spiced(model, 1, 0.2), tok


@pytest.fixture(scope="module")
def small():
    """GPT-1 small's layers (12 x 12 heads x 768) with GPT-2's tokenizer and positions; default init, spiced norms."""
    from lab.testing import random_models

    model, tok = random_models.build("openai-gpt", "small", seed=2)
    return spiced(model, 3, 0.02), tok


def hf_bits(model, ids) -> np.ndarray:
    """The loss in bits per position from transformers' own logits, by hand (log-softmax, the next id's entry)."""
    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits[0].double()
    nats = -torch.log_softmax(logits[:-1], -1)[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]
    return (nats / math.log(2)).numpy()


@pytest.mark.parametrize("which", ["tiny", "small"])
def test_the_losses_equal_transformers_own_forward(which, request):
    model, tok = request.getfixturevalue(which)
    assert model.config.model_type == "openai-gpt"
    ids = heads.repeated(model, tok, 12, seed=4)
    ours, theirs = heads.forward_losses(model, ids), hf_bits(model, ids)
    assert np.abs(theirs - theirs.mean()).max() > 0.05  # not a flat loss: the positions disagree
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=1e-6)
    r = heads.copying(model, tok, length=12, seed=4)
    np.testing.assert_allclose(r["loss"], theirs, atol=1e-5, rtol=1e-6)


def test_the_scores_equal_a_hand_computation_from_output_attentions(tiny):
    model, tok = tiny
    n = 10
    r = heads.copying(model, tok, length=n, seed=5)
    ids = r["ids"]
    start = len(ids) - 2 * n  # the end-of-text token, when the tokenizer has one (GPT-2's here)
    for layer, a in enumerate(hf_attentions(model, ids)):
        for head in range(a.shape[0]):
            ind = [a[head, q, ids.index(ids[q]) + 1] for q in range(start + n, len(ids))]
            prev = [a[head, q, q - 1] for q in range(1, len(ids))]
            assert r["induction"][layer, head] == pytest.approx(sum(ind) / n, abs=1e-6)
            assert r["previous"][layer, head] == pytest.approx(sum(prev) / len(prev), abs=1e-6)


@pytest.mark.parametrize("mode", ["zero", "mean"])
@pytest.mark.parametrize("knocked", [[(1, 2)], [(0, 0), (1, 1), (1, 3)]])
def test_the_knockout_equals_nnsight(tiny, mode, knocked):
    model, tok = tiny
    ids = heads.repeated(model, tok, 12, seed=0)
    ours = heads.knockout(model, ids, knocked, mode)
    oracle = copy.deepcopy(model)  # nnsight wraps its own copy
    theirs, clean = nnsight_loss(oracle, tok, ids, knocked, mode), nnsight_loss(oracle, tok, ids, [], mode)
    np.testing.assert_allclose(ours["knocked"], theirs, atol=1e-5, rtol=1e-6)
    np.testing.assert_allclose(ours["clean"], clean, atol=1e-5, rtol=1e-6)
    assert ours["mean_delta"] == pytest.approx(float((theirs - clean).mean()), abs=1e-5)
    assert np.abs(ours["delta"]).max() > 1e-2  # the heads mattered: not a comparison of two clean runs


def test_the_knockout_grid_equals_nnsight_on_a_gpt1_small_shaped_model(small):
    model, tok = small
    ids = heads.repeated(model, tok, 8, seed=1)
    grid = heads.knockout_grid(model, ids, "mean")
    assert grid.shape == (12, 12)
    oracle = copy.deepcopy(model)
    clean = nnsight_loss(oracle, tok, ids, [], "mean").mean()
    for layer, head in [(0, 0), (5, 7), (11, 11)]:
        assert grid[layer, head] == pytest.approx(nnsight_loss(oracle, tok, ids, [(layer, head)], "mean").mean()
                                                  - clean, abs=1e-5)


@pytest.mark.parametrize("answers", [(None, None), (" sat", " dog")])
def test_patching_equals_nnsight(tiny, answers):
    model, tok = tiny
    r = patching.patching(model, tok, "The cat sat on the mat. The cat", "The dog sat on the box. The cat", *answers)
    assert r["resid"].shape == (2, len(r["clean_ids"])) and r["heads"].shape == (2, 4)
    theirs = nnsight_patching(model, tok, r["clean_ids"], r["corrupt_ids"], *r["answers"])
    assert_equals_nnsight(r, theirs)
    assert abs(r["clean_diff"] - r["corrupt_diff"]) > 0.3 and np.abs(r["heads"]).max() > 0.05


def test_patching_ends_by_hand(tiny):
    """Only the last token differs: patching the last position of any block's input gives the clean run (1), any
    other position the corrupted run (0), as in tests/test_heads_patch.py for GPT-2."""
    model, tok = tiny
    r = patching.patching(model, tok, "The cat sat on the mat", "The cat sat on the box")
    np.testing.assert_allclose(r["resid"][:, -1], 1, atol=5e-5)
    np.testing.assert_allclose(r["resid"][:, :-1], 0, atol=5e-5)


def test_patching_equals_nnsight_on_a_gpt1_small_shaped_model(small):
    model, tok = small
    r = patching.patching(model, tok, "The cat sat on the mat", "The dog sat on the box", " sat", " mat")
    assert r["resid"].shape == (12, 6) and r["heads"].shape == (12, 12)
    assert abs(r["clean_diff"] - r["corrupt_diff"]) > 0.5  # the scores divide by it (float32 rounding grows)
    assert_equals_nnsight(r, nnsight_patching(model, tok, r["clean_ids"], r["corrupt_ids"], *r["answers"]))


def test_many_threads_leave_the_shared_gpt1_as_it_was(tiny):
    """Knock-outs and patching in six threads while six others run the plain model: every plain run gives the same
    losses, and nothing of the model, its config or its hooks is written."""
    model, tok = tiny
    ids = heads.repeated(model, tok, 12, seed=0)
    heads.copying(model, tok, ids)  # transformers installs its output-capture hooks once
    before, config, hooks_before = fingerprint(model), model.config.to_dict(), hooks(model)
    clean, plain_bits = heads.forward_losses(model, ids), hf_bits(model, ids)
    pair = ("The cat sat on the mat. The cat", "The dog sat on the box. The cat")
    first = patching.patching(model, tok, *pair)
    seen, barrier = [], threading.Barrier(12)

    def work(i):
        barrier.wait()
        for _ in range(4):
            heads.knockout(model, ids, [(1, i % 4), (0, 2)], "zero" if i % 2 else "mean")
            seen.append(float(np.abs(patching.patching(model, tok, *pair)["resid"] - first["resid"]).max()))

    def plain():
        barrier.wait()
        for _ in range(8):
            seen.append(float(np.abs(heads.forward_losses(model, ids) - clean).max()))
            seen.append(float(np.abs(hf_bits(model, ids) - plain_bits).max()))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)] + [
        threading.Thread(target=plain) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert len(seen) == 6 * 4 + 6 * 16 and max(seen) < 1e-4
    assert fingerprint(model) == before and model.config.to_dict() == config and hooks(model) == hooks_before


def test_only_gpt2_and_gpt1_forwards_are_written(tiny):
    from lab import gpt1

    heads.check_model(tiny[0])  # GPT-1 is accepted now
    other = copy.deepcopy(tiny[0].config)
    other.model_type = "gpt-neo"
    with pytest.raises(ValueError):
        gpt1.family(type("M", (), {"config": other})())


def test_the_heads_page_on_gpt1(course_standins, tiny_model_dirs):
    """The page serves a tiny random GPT-1 under its registry name and shows the lab's numbers, the model not
    refused."""
    from lab import models
    from tests.pages import open_page
    from tests.test_models import fake_hub_cache

    fake_hub_cache(course_standins, "openai-community/openai-gpt", tiny_model_dirs["openai-gpt"])
    at = open_page("app_pages/heads.py", model="openai-gpt", heads_knock="1.2", heads_length="8", heads_seed="2")
    # No refusal of the model; the default-init tiny model's two answers tie, so the patch view may say so.
    assert all("nothing to bring back" in w.value for w in at.warning), [w.value for w in at.warning]
    loaded = models.load("openai-gpt")
    assert loaded.model.config.model_type == "openai-gpt"
    r = heads.copying(loaded.model, loaded.tokenizer, length=8, seed=2)
    k = heads.knockout(loaded.model, r["ids"], [(1, 2)])
    shown = {m.label: m.value for m in at.metric}
    assert shown["First copy"] == f"{r['first_half']:.2f} bits"
    assert shown["Loss with these heads out"] == f"{k['knocked'].mean():.2f} bits"
    assert "--model openai-gpt" in at.code[-1].value
