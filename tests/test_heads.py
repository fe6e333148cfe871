"""lab.heads against outside oracles: scores by hand from transformers' own output_attentions, the knock-out's
loss against nnsight's own intervention (nnsight 0.8.1, requirements-dev.txt), the shared model untouched
under many threads, and the bad inputs refused in one line."""

from __future__ import annotations

import copy
import math
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

from lab import heads, models
from tests.test_shared_engine import fingerprint


@pytest.fixture(scope="module")
def course():
    return models.load("course-gpt2")




def hooks(model) -> dict:
    """Every forward hook and pre-hook of every module, by module name."""
    return {n: (list(m._forward_hooks.values()), list(m._forward_pre_hooks.values())) for n, m in model.named_modules()}


def hf_attentions(model, ids):
    with torch.inference_mode():
        return [a[0].numpy() for a in model(torch.tensor([ids]), output_attentions=True).attentions]  # L x (H, T, T)


def test_scores_equal_a_hand_computation_from_output_attentions(course):
    n = 12
    r = heads.copying(course.model, course.tokenizer, length=n, seed=3)
    ids = r["ids"]
    assert len(ids) == 2 * n + 1 and ids[1:n + 1] == ids[n + 1:] and len(set(ids[1:n + 1])) == n
    att = hf_attentions(course.model, ids)
    for layer, a in enumerate(att):
        for head in range(a.shape[0]):
            # induction: each query of the second copy, to the key after its token's first occurrence
            ind = []
            for q in range(n + 1, 2 * n + 1):
                first = ids.index(ids[q])  # the first occurrence of the token at q
                ind.append(a[head, q, first + 1])
            prev = [a[head, q, q - 1] for q in range(1, len(ids))]
            assert r["induction"][layer, head] == pytest.approx(sum(ind) / len(ind), abs=1e-6)
            assert r["previous"][layer, head] == pytest.approx(sum(prev) / len(prev), abs=1e-6)


def test_the_loss_per_position_equals_transformers_own(course):
    r = heads.copying(course.model, course.tokenizer, length=10, seed=1)
    with torch.inference_mode():
        logits = course.model(torch.tensor([r["ids"]])).logits[0]
    for p in range(len(r["ids"]) - 1):
        nats = -torch.log_softmax(logits[p].double(), -1)[r["ids"][p + 1]].item()
        assert r["loss"][p] == pytest.approx(nats / math.log(2), abs=1e-4)
    assert r["first_half"] == pytest.approx(float(np.mean(r["loss"][:10])))


def test_the_repeated_sequence_is_seeded_and_leaves_rare_rows_out(course):
    from lab import learned

    a = heads.repeated(course.model, course.tokenizer, 30, seed=7)
    assert a == heads.repeated(course.model, course.tokenizer, 30, seed=7)
    assert a != heads.repeated(course.model, course.tokenizer, 30, seed=8)
    counts = learned.token_counts(course.model)
    assert counts is not None and min(counts[i] for i in a[1:]) >= learned.MIN_COUNT
    state = torch.random.get_rng_state()
    heads.repeated(course.model, course.tokenizer, 30, seed=9)
    assert torch.equal(state, torch.random.get_rng_state())  # the process-wide RNG untouched


def nnsight_loss(model, tokenizer, ids, knocked, mode):
    """The loss in bits per position as nnsight computes it, its own intervention on c_proj's input."""
    from nnsight import LanguageModel

    lm = LanguageModel(model, tokenizer=tokenizer)
    d = model.config.n_embd // model.config.n_head
    with lm.trace(torch.tensor([ids])):
        for layer, head in knocked:
            x = lm.transformer.h[layer].attn.c_proj.input
            sl = slice(head * d, (head + 1) * d)
            if mode == "zero":
                x[:, :, sl] = 0
            else:
                x[:, :, sl] = x[:, :, sl].mean(dim=1, keepdim=True)
        out = lm.output.save()
    logits = out.logits[0].detach().double()
    nats = torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]), reduction="none")
    return (nats / math.log(2)).numpy()


@pytest.mark.parametrize("mode", ["zero", "mean"])
@pytest.mark.parametrize("knocked", [[(3, 3)], [(2, 3), (3, 2), (3, 3)], [(0, 0)]])
def test_the_knockout_equals_nnsight(course, mode, knocked):
    ids = heads.repeated(course.model, course.tokenizer, 16, seed=0)
    ours = heads.knockout(course.model, ids, knocked, mode)
    oracle_model = copy.deepcopy(course.model)  # nnsight wraps its own copy: the shared model never sees it
    theirs = nnsight_loss(oracle_model, course.tokenizer, ids, knocked, mode)
    clean = nnsight_loss(oracle_model, course.tokenizer, ids, [], mode)
    # Per position: 1e-5 bits plus float32's relative rounding on a 15-25-bit loss (lab.gpt2's x @ w + b and
    # transformers' addmm round differently: measured up to 1.3e-5 bits); the mean over positions to 1e-5.
    np.testing.assert_allclose(ours["knocked"], theirs, atol=1e-5, rtol=1e-6)
    np.testing.assert_allclose(ours["clean"], clean, atol=1e-5, rtol=1e-6)
    assert ours["mean_delta"] == pytest.approx(float((theirs - clean).mean()), abs=1e-5)
    assert np.abs(ours["delta"]).max() > 1e-3  # the head mattered: the comparison is not of two clean runs


def test_the_grid_equals_one_knockout_per_head(course):
    ids = heads.repeated(course.model, course.tokenizer, 8, seed=2)
    grid = heads.knockout_grid(course.model, ids)
    assert grid.shape == (4, 8)
    for layer, head in [(0, 0), (3, 3), (2, 5)]:
        assert grid[layer, head] == pytest.approx(heads.knockout(course.model, ids, [(layer, head)])["mean_delta"])


def test_many_threads_leave_the_shared_model_as_it_was(course):
    """Knock-outs in eight threads while eight others run the plain model: no plain run ever sees a knocked head,
    and nothing of the model or its config is written."""
    ids = heads.repeated(course.model, course.tokenizer, 16, seed=0)
    heads.copying(course.model, course.tokenizer, ids)  # transformers installs its output-capture hooks once
    before, config, hooks_before = fingerprint(course.model), course.model.config.to_dict(), hooks(course.model)
    clean = heads.forward_losses(course.model, ids)
    seen, barrier = [], threading.Barrier(16)

    def knock(i):
        barrier.wait()
        for _ in range(6):
            heads.knockout(course.model, ids, [(3, i % 8), (2, 3)], "zero" if i % 2 else "mean")

    def plain():
        barrier.wait()
        for _ in range(12):
            seen.append(np.abs(heads.forward_losses(course.model, ids) - clean).max())
            with torch.inference_mode():
                course.model(torch.tensor([ids]))

    threads = [threading.Thread(target=knock, args=(i,)) for i in range(8)] + [
        threading.Thread(target=plain) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert len(seen) == 96 and max(seen) < 1e-4
    assert fingerprint(course.model) == before and course.model.config.to_dict() == config
    assert hooks(course.model) == hooks_before  # nothing hooked in and left behind (transformers' own stay)


@pytest.mark.parametrize("text, knocked, reason", [
    ("", [], "empty_text"), ("  \n", [], "empty_text"), ("a", [], "one_token"),
    (None, [(4, 0)], "bad_head"), (None, [(0, 8)], "bad_head"), (None, [(-1, 0)], "bad_head")])
def test_bad_inputs_are_refused_with_a_reason(course, text, knocked, reason):
    ids = heads.repeated(course.model, course.tokenizer, 8) if text is None else heads.ids_of(course.tokenizer, text)
    with pytest.raises(heads.HeadsError) as e:
        heads.knockout(course.model, ids, knocked)
    assert e.value.reason == reason
    if text is not None:
        with pytest.raises(heads.HeadsError):
            heads.copying(course.model, course.tokenizer, ids)


def test_heads_are_read_as_layer_dot_head():
    assert heads.parse_heads("2.3, 1.0;0.7") == [(2, 3), (1, 0), (0, 7)]
    with pytest.raises(heads.HeadsError) as e:
        heads.parse_heads("2-3")
    assert e.value.reason == "bad_head_text"


def test_a_reader_text_gives_the_loss_and_previous_token_scores_only(course):
    r = heads.copying(course.model, course.tokenizer, heads.ids_of(course.tokenizer, "The cat sat on the mat. The cat"))
    assert r["own"] and "induction" not in r and r["previous"].shape == (4, 8)


@pytest.mark.parametrize("args", [["copy", "--text", ""], ["copy", "--text", "a"],
                                  ["knockout", "--heads", "4.0"], ["knockout", "--heads", "0.9"],
                                  ["knockout", "--heads", "2.3", "--mode", "half"]])
def test_the_cli_refuses_bad_input_in_one_line(args):
    p = subprocess.run([sys.executable, "-m", "lab", "heads", *args, "--json", "--model", "course-gpt2"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lab: error: "), p.stderr


def test_the_cli_prints_what_the_lab_computes(course):
    import json

    p = subprocess.run([sys.executable, "-m", "lab", "heads", "copy", "--json", "--model", "course-gpt2",
                        "--length", "12", "--seed", "3"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    r = heads.copying(course.model, course.tokenizer, length=12, seed=3)
    assert doc["ids"] == r["ids"]
    assert np.allclose(doc["induction"], r["induction"], atol=1e-6)
    assert doc["second_half"] == pytest.approx(r["second_half"], abs=1e-6)
    p = subprocess.run([sys.executable, "-m", "lab", "heads", "knockout", "--json", "--model", "course-gpt2",
                        "--heads", "3.3", "--grid"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["mean_delta"] == pytest.approx(doc["grid"][3][3], abs=1e-6)
