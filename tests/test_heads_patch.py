"""Activation patching (lab.patching) against outside oracles: nnsight 0.8.1's own interventions on the same
transformers model (every number, to 1e-5), transformers' logits for the clean and corrupted differences, the ends
worked out by hand (0 before the first token that differs, 1 where the whole difference is patched), the shared
model untouched under many threads, bad input refused in one line, the CLI and the page's patch view."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
from functools import partial

import numpy as np
import pytest
import torch

from lab import heads, models, patching
from tests import pages
from tests.test_shared_engine import fingerprint


@pytest.fixture(scope="module")
def course():
    return models.load("course-gpt2")


@pytest.fixture(scope="module")
def small():
    """A random model of GPT-2 small's shapes (12 layers x 12 heads x 768) with GPT-2's tokenizer."""
    from lab.testing import random_models

    model, tok = random_models.build("gpt2", "small", seed=1)
    return model.requires_grad_(False), tok


def nnsight_patching(model, tokenizer, clean, corrupt, a, b) -> dict:
    """lab.testing.nnsight_oracle.patching on a copy of the model (nnsight wraps the model it is given)."""
    from lab.testing import nnsight_oracle

    return nnsight_oracle.patching(copy.deepcopy(model), tokenizer, clean, corrupt, a, b)


def assert_equals_nnsight(r, theirs):
    for key in ("clean_diff", "corrupt_diff", "resid_diff", "heads_diff"):
        np.testing.assert_allclose(r[key], theirs[key], atol=1e-5, rtol=0, err_msg=key)
    gap = theirs["clean_diff"] - theirs["corrupt_diff"]
    np.testing.assert_allclose(r["resid"], (theirs["resid_diff"] - theirs["corrupt_diff"]) / gap, atol=1e-5, rtol=0)
    np.testing.assert_allclose(r["heads"], (theirs["heads_diff"] - theirs["corrupt_diff"]) / gap, atol=1e-5, rtol=0)


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_every_number_equals_nnsight_on_course_gpt2(course, lang):
    r = patching.patching(course.model, course.tokenizer, *patching.defaults(lang))
    assert r["resid"].shape == (4, len(r["clean_ids"])) and r["heads"].shape == (4, 8)
    theirs = nnsight_patching(course.model, course.tokenizer, r["clean_ids"], r["corrupt_ids"], *r["answers"])
    assert_equals_nnsight(r, theirs)
    assert np.abs(r["heads"]).max() > 0.1  # some head matters: the comparison is not of unpatched runs


def test_every_number_equals_nnsight_on_a_gpt2_small_shaped_model(small):
    model, tok = small
    # Three tokens differ (1, 5, 8); the answers are the last tokens, which a random model's residual stream
    # favours: a gap of 2.3 logits (the score divides by it: with a 0.2 gap, float32's rounding reached 1e-5)
    r = patching.patching(model, tok, "The cat sat on the mat. The cat", "The dog sat on the box. The dog",
                          " cat", " dog")
    assert r["resid"].shape == (12, 9) and r["heads"].shape == (12, 12)
    theirs = nnsight_patching(model, tok, r["clean_ids"], r["corrupt_ids"], *r["answers"])
    assert_equals_nnsight(r, theirs)


def test_the_clean_and_corrupted_differences_are_transformers_own(course):
    clean, corrupt, *_ = patching.defaults("en")
    r = patching.patching(course.model, course.tokenizer, clean, corrupt, "mat", "box")  # a space is put before
    a, b = (course.tokenizer(w)["input_ids"][0] for w in (" mat", " box"))
    assert r["answers"] == [a, b] and r["answer_texts"] == [" mat", " box"]
    with torch.inference_mode():
        for ids, key in ((r["clean_ids"], "clean_diff"), (r["corrupt_ids"], "corrupt_diff")):
            logits = course.model(torch.tensor([ids])).logits[0, -1]
            assert r[key] == pytest.approx(float(logits[a] - logits[b]), abs=1e-5)
    assert r["clean_diff"] > 3 and r["corrupt_diff"] < -3  # the model copies the word it read


def test_a_blank_answer_is_that_prompts_top_next_token(course):
    clean, corrupt, *_ = patching.defaults("en")
    r = patching.patching(course.model, course.tokenizer, clean, corrupt, "", None)
    with torch.inference_mode():
        tops = [int(course.model(torch.tensor([ids])).logits[0, -1].argmax()) for ids in (r["clean_ids"],
                                                                                       r["corrupt_ids"])]
    assert r["answers"] == tops and r["given"] == [False, False]


def test_the_ends_by_hand(course):
    """Only the last token differs: every run that patches the last position of any block's input is the clean run
    (1), every other patched run is the corrupted run (0): the positions before it are the same in both runs, and
    the causal mask keeps the last one from changing them. Exact in exact arithmetic; in float32 the
    batched patched runs and the single corrupted run round differently (measured up to 1.7e-5 of the gap)."""
    r = patching.patching(course.model, course.tokenizer, "The cat sat on the mat", "The cat sat on the box",
                          ".", ",")
    resid = r["resid"]
    np.testing.assert_allclose(resid[:, -1], 1, atol=5e-5)
    np.testing.assert_allclose(resid[:, :-1], 0, atol=5e-5)
    # The default pair differs at one position (5): block 0's input patched there is the whole clean run.
    d = patching.patching(course.model, course.tokenizer, *patching.defaults("en"))
    differs = [i for i, (x, y) in enumerate(zip(d["clean_ids"], d["corrupt_ids"], strict=True)) if x != y]
    assert differs == [5] and d["resid"][0, 5] == pytest.approx(1, abs=5e-5)
    np.testing.assert_allclose(d["resid"][:, :5], 0, atol=5e-5)


@pytest.mark.parametrize("clean, corrupt, reason", [
    ("", "The cat", "empty_text"), ("The cat", "  ", "empty_text"), ("The cat", "The cat", "same_prompts"),
    ("The cat sat", "The big cat sat", "lengths_differ"), ("cat " * 50, "dog " + "cat " * 49, "pair_too_long")])
def test_bad_pairs_are_refused_with_a_reason(course, clean, corrupt, reason):
    with pytest.raises(heads.HeadsError) as e:
        patching.patching(course.model, course.tokenizer, clean, corrupt, " a", " b")
    assert e.value.reason == reason
    if reason == "lengths_differ":
        assert e.value.details == {"clean": 3, "corrupt": 4} and "3" in str(e.value) and "4" in str(e.value)


def test_the_same_answer_twice_is_refused(course):
    clean, corrupt, *_ = patching.defaults("en")
    with pytest.raises(heads.HeadsError) as e:
        patching.patching(course.model, course.tokenizer, clean, corrupt, " mat", "mat")
    assert e.value.reason == "same_answer"


def test_a_text_past_the_context_and_an_encoder_are_refused():
    small = models.load("course-gpt2-1x64")
    long = " ".join(["cat"] * (small.context + 5))
    with pytest.raises(heads.HeadsError) as e:
        patching.patching(small.model, small.tokenizer, long, long.replace("cat", "dog", 1), " a", " b")
    assert e.value.reason == "too_long"
    roberta = models.load("course-roberta")
    with pytest.raises(heads.HeadsError) as e:
        patching.patching(roberta.model, roberta.tokenizer, "a b", "a c")
    assert e.value.reason == "encoder"


def hooks(model) -> dict:
    """Every forward hook and pre-hook of every module, by module name."""
    return {n: (list(m._forward_hooks.values()), list(m._forward_pre_hooks.values())) for n, m in model.named_modules()}


def test_many_threads_leave_the_shared_model_as_it_was(course):
    """Patching in six threads while six others run the plain model: every plain run gives the corrupted prompt's
    own logits, every patching run the same grids, and nothing of the model or its config is written."""
    clean, corrupt, a, b = patching.defaults("en")
    first = patching.patching(course.model, course.tokenizer, clean, corrupt, a, b)
    ids = torch.tensor([first["corrupt_ids"]])
    with torch.inference_mode():
        plain_logits = course.model(ids).logits
    before, config, hooks_before = fingerprint(course.model), course.model.config.to_dict(), hooks(course.model)
    seen, grids, barrier = [], [], threading.Barrier(12)

    def patch():
        barrier.wait()
        for _ in range(4):
            r = patching.patching(course.model, course.tokenizer, clean, corrupt, a, b)
            grids.append(max(np.abs(r["resid"] - first["resid"]).max(), np.abs(r["heads"] - first["heads"]).max()))

    def plain():
        barrier.wait()
        for _ in range(8):
            with torch.inference_mode():
                seen.append(float((course.model(ids).logits - plain_logits).abs().max()))

    threads = [threading.Thread(target=patch) for _ in range(6)] + [threading.Thread(target=plain) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert len(seen) == 48 and max(seen) < 1e-4
    assert len(grids) == 24 and max(grids) < 1e-6
    assert fingerprint(course.model) == before and course.model.config.to_dict() == config
    assert hooks(course.model) == hooks_before


def lab_cli(*args):
    return subprocess.run([sys.executable, "-m", "lab", "heads", "patch", "--model", "course-gpt2", *args],
                          capture_output=True, text=True, timeout=120)


def test_the_cli_prints_what_the_lab_computes(course):
    p = lab_cli("--json", "--lang", "pt")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    r = patching.patching(course.model, course.tokenizer, *patching.defaults("pt"))
    assert doc["clean"] == patching.PAIRS["pt"][0] and doc["clean_ids"] == r["clean_ids"]
    assert doc["answers"] == r["answers"] and doc["where"] == "block input"
    np.testing.assert_allclose(doc["resid"], r["resid"], atol=1e-6)
    np.testing.assert_allclose(doc["heads"], r["heads"], atol=1e-6)
    assert doc["clean_diff"] == pytest.approx(r["clean_diff"], abs=1e-6)


@pytest.mark.parametrize("args, words", [
    (["--clean", "The cat sat", "--corrupt", "The big cat sat"], "the clean one has 3, the corrupted one 4"),
    (["--clean", "The cat sat"], "give both --clean and --corrupt"),
    (["--clean-answer", " mat", "--corrupt-answer", "mat"], "the same token"),
    (["--clean", "", "--corrupt", "x"], "empty")])
def test_the_cli_refuses_bad_input_in_one_line(args, words):
    p = lab_cli("--json", *args)
    assert p.returncode != 0 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lab: error: ") and words in lines[0], p.stderr


def test_the_chart_takes_token_text_as_data_only():
    from viz import heads as viz

    labels = ["0 <b>x</b>", '1 "); alert(1); ("', "2 a"]
    spec = viz.patched(viz.patch_frame(np.array([[0.0, 0.5, 1.0]]), labels)).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert [r["token"] for r in rows] == labels
    for layer in spec["layer"]:
        assert layer["encoding"]["x"]["sort"] == labels  # the order: a list of values, never an expression
        layer["encoding"]["x"].pop("sort")
    text = json.dumps({k: v for k, v in spec.items() if k != "datasets"})
    assert "alert" not in text and "<b>" not in text  # nowhere else: no label expression, no HTML


PAGE = "app_pages/heads.py"
open_page = partial(pages.open_page, PAGE)


def chart_rows(at, field: str) -> list:
    """The rows of the page's first chart whose data has `field`."""
    import pyarrow as pa

    for chart in at.get("vega_lite_chart"):
        frame = pa.ipc.open_stream(chart.proto.datasets[0].data.data).read_all().to_pandas()
        if field in frame:
            return frame.to_dict("records")
    raise AssertionError(f"no chart with {field}")


@pytest.mark.parametrize("lang, clean_label, corrupt_label", [
    ("en", "Logit difference, clean run", "Logit difference, corrupted run"),
    ("pt", "Diferença de logits, execução limpa", "Diferença de logits, execução corrompida")])
def test_the_patch_view_shows_what_the_lab_computes(fresh_caches, lang, clean_label, corrupt_label):
    at = open_page(lang=lang)
    loaded = models.load("course-gpt2")
    r = patching.patching(loaded.model, loaded.tokenizer, *patching.defaults(lang))
    sep = "," if lang == "pt" else "."
    shown = {m.label: m.value for m in at.metric}
    assert shown[clean_label] == f"{r['clean_diff']:.2f}".replace(".", sep)
    assert shown[corrupt_label] == f"{r['corrupt_diff']:.2f}".replace(".", sep)
    rows = chart_rows(at, "token")
    assert [x["token"] for x in rows[:len(r["labels"])]] == r["labels"]
    np.testing.assert_allclose([x["value"] for x in rows], r["resid"].ravel(), atol=1e-9)
    assert "heads patch" in at.code[-1].value and f"--lang {lang}" in at.code[-1].value


def test_a_pair_of_two_lengths_is_refused_on_the_page_in_both_languages(fresh_caches):
    for lang, words in (("en", "the clean one has 3, the corrupted one 4"), ("pt", "o limpo tem 3, o corrompido 4")):
        at = open_page(lang=lang, heads_pair="own", heads_clean="The cat sat", heads_corrupt="The big cat sat")
        assert any(words in w.value for w in at.warning), [w.value for w in at.warning]
