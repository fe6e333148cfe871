"""The ceiling (chapter 16) against transformers' own logits: e, observed(n), the conditional error rates and
the forced-error experiment computed directly; predicted(n) = (1 - e)^n exactly; the CLI contract."""

import json
import math

import numpy as np
import pytest
import torch

from lab import ceiling
from lab.cli import main
from lab.models import load
from lab.text import encode


@pytest.fixture(scope="module")
def gpt2(tiny_model_dirs):
    return load(str(tiny_model_dirs["gpt2"]))


def hf_right(loaded, ids):
    """Top-1 right or wrong for ids[1:], from transformers' logits, the text in one pass (it fits)."""
    with torch.no_grad():
        best = loaded.model(torch.tensor([ids])).logits[0, :-1].argmax(-1).numpy()
    return best == np.array(ids[1:])


def direct_observed(right, n):
    starts = [t for t in range(len(right) - n + 1)]
    return sum(all(right[t:t + n]) for t in starts) / len(starts)


def direct_conditional(right):
    after_err = [not right[t + 1] for t in range(len(right) - 1) if not right[t]]
    after_ok = [not right[t + 1] for t in range(len(right) - 1) if right[t]]
    return (sum(after_err) / len(after_err) if after_err else None, sum(after_ok) / len(after_ok) if after_ok else None)


def test_equals_a_direct_computation_on_the_course_model():
    course = load("course-gpt2")
    text = ("The package manager keeps a list of the packages installed on the system, and it can tell which "
            "files belong to which package. O gerenciador de pacotes guarda a lista dos pacotes instalados.")
    ids = course.tokenizer(text)["input_ids"]
    right = hf_right(course, ids)
    r = ceiling.measure(course, ids, max_n=8)
    assert r["tokens"] == len(ids) - 1
    assert r["e"] == pytest.approx(1 - right.mean())
    for c in r["curve"]:
        assert c["observed"] == pytest.approx(direct_observed(right.tolist(), c["n"]))
        assert c["predicted"] == (1 - r["e"]) ** c["n"]  # exactly
    assert (r["after_error"], r["after_correct"]) == pytest.approx(direct_conditional(right.tolist()))
    assert 0 < r["e"] < 1 and r["curve"][0]["observed"] == pytest.approx(1 - r["e"])


def test_a_text_longer_than_the_context_on_a_tiny_model(gpt2):
    ids = torch.randint(0, 500, (150,), generator=torch.Generator().manual_seed(1)).tolist()
    right = ceiling.correct(gpt2.model, ids, gpt2.context)
    from lab.perplexity import windows

    want = np.zeros(len(ids) - 1, dtype=bool)
    for w in windows(len(ids), gpt2.context, gpt2.context // 2):
        piece = hf_right(gpt2, ids[w.begin:w.end])
        want[w.first - 1:w.end - 1] = piece[w.first - 1 - w.begin:]
    assert right.tolist() == want.tolist()


def test_observed_and_half_life_on_known_runs():
    right = np.array([True, True, False, True, True, True, False, True])
    obs = ceiling.observed(right, 10)
    assert obs[0] == pytest.approx(6 / 8) and obs[1] == pytest.approx(3 / 7) and obs[2] == pytest.approx(1 / 6)
    assert obs[3] == 0 and math.isnan(obs[8]) and math.isnan(obs[9])
    assert ceiling.half_life(obs) == 2 and ceiling.half_life([0.9, 0.8]) is None
    assert ceiling.conditional(right) == pytest.approx((0.0, 2 / 5))


def test_the_forced_token_is_the_least_likely_and_the_rest_is_teacher_forced(gpt2):
    ids = torch.randint(0, 500, (40,), generator=torch.Generator().manual_seed(2)).tolist()
    r = ceiling.forced(gpt2, ids, 10, k=8)
    with torch.no_grad():
        logits = gpt2.model(torch.tensor([ids[:10]])).logits[0, -1]
    assert r["forced"] == int(logits.argmin()) and r["original"] == ids[10]
    swapped = ids[:10] + [r["forced"]] + ids[11:19]
    assert r["without"] == hf_right(gpt2, ids[:19])[10:].tolist()
    assert r["with"] == hf_right(gpt2, swapped)[10:].tolist()
    summary = ceiling.forced_summary(gpt2, ids, k=4, positions=5)
    assert len(summary["positions"]) == 5 and 0 <= summary["error_with"] <= 1
    runs = [ceiling.forced(gpt2, ids, p, 4) for p in summary["positions"]]  # each checked against transformers above
    for name in ("without", "with"):
        wrong = [[not x for x in r[name]] for r in runs]
        assert summary[f"error_{name}"] == pytest.approx(sum(map(sum, wrong)) / sum(map(len, wrong)))
        assert summary["by_distance"][name] == pytest.approx([np.mean([w[d] for w in wrong if len(w) > d])
                                                              for d in range(4)])
    # with and without kept apart on a text where they differ: tests/test_mistakes_ceiling.py (course-gpt2-1x64)


@pytest.mark.parametrize("kwargs,reason", [({"max_n": 0}, "max_n"), ({"max_n": True}, "max_n")])
def test_bad_input_has_a_reason(gpt2, kwargs, reason):
    with pytest.raises(ceiling.CeilingError) as e:
        ceiling.ceiling(gpt2, "some words here", **kwargs)
    assert e.value.reason == reason


def test_refuses_an_encoder_and_empty_text(tiny_model_dirs, gpt2):
    with pytest.raises(ceiling.CeilingError) as e:
        ceiling.ceiling(load(str(tiny_model_dirs["roberta"])), "a text")
    assert e.value.reason == "encoder"
    with pytest.raises(ceiling.CeilingError) as e:
        ceiling.ceiling(gpt2, " \n")
    assert e.value.reason == "empty"


def test_cli_contract(tmp_path, capsys):
    f = tmp_path / "t.txt"
    f.write_text("The system keeps a list of the packages that are installed on it.", encoding="utf-8")
    assert main(["ceiling", "--json", "--model", "course-gpt2", "--file", str(f), "--max-n", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"model", "tokens", "e", "curve", "after_error", "after_correct", "half_observed",
                        "half_predicted"}
    assert out["half_predicted"] == next((c["n"] for c in out["curve"] if c["predicted"] < 0.5), None)
    assert [c["n"] for c in out["curve"]] == [1, 2, 3, 4, 5] and set(out["curve"][0]) == {"n", "observed", "predicted"}
    assert main(["ceiling", "--json", "--model", "course-roberta", "--file", str(f)]) == 2
    assert main(["ceiling", "--json", "--file", str(f), "--max-n", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("lab: error:") for line in err)


def test_logits_in_chunks_give_the_same_predictions(gpt2, monkeypatch):
    ids = torch.randint(0, 500, (150,), generator=torch.Generator().manual_seed(5)).tolist()
    whole = ceiling.predictions(gpt2.model, ids, gpt2.context)
    monkeypatch.setattr(ceiling, "LOGIT_ROWS", 7)  # several chunks per window, a short last one
    assert ceiling.predictions(gpt2.model, ids, gpt2.context).tolist() == whole.tolist()


def row(model, lang, e, after_error, after_correct, observed_4, forced=(0.5, 0.6), first=(0.4, 0.9)):
    return {"model": model, "lang": lang, "e": e, "half_observed": 2, "after_error": after_error,
            "after_correct": after_correct, "observed_4": observed_4, "predicted_4": (1 - e) ** 4,
            "forced_without": forced[0], "forced_with": forced[1], "forced_first_without": first[0],
            "forced_first_with": first[1]}


def test_the_verdict_worked_by_hand():
    small, mid, big = ceiling.COURSE_DECODERS
    rows = [row(small, "en", 0.7, 0.8, 0.6, 0.01), row(mid, "en", 0.6, 0.7, 0.5, 0.03),
            row(big, "en", 0.5, 0.6, 0.4, 0.05, forced=(0.4, 0.45), first=(0.3, 0.5)),
            row(small, "pt", 0.75, 0.8, 0.7, 0.0), row(mid, "pt", 0.65, 0.7, 0.6, 0.02),
            row(big, "pt", 0.55, 0.6, 0.5, 0.05)]
    v = ceiling.verdict(rows)
    assert v["falls_with_size"] and v["best"] == {"model": big, "lang": "en", "e": 0.5, "half_observed": 2}
    # after an error / after a right token: 0.8/0.6, 0.7/0.5, 0.6/0.4, 0.8/0.7, 0.7/0.6, 0.6/0.5: all above 1
    assert v["dependence"] == "clusters" and v["error_ratio"] == pytest.approx({"min": 0.8 / 0.7, "max": 1.5})
    # (1 - e)^4: 0.0081, 0.0256, 0.0625, 0.0039, 0.0150, 0.0410: observed above it in 4 of 6
    assert (v["runs_of_4_above"], v["pairs"]) == (4, 6)
    assert v["forced_points"] == pytest.approx({"min": 5, "max": 10})
    assert v["forced_first_points"] == pytest.approx({"min": 20, "max": 50})
    rows[4]["e"] = 0.8  # the middle model worse than the small one in Portuguese
    assert not ceiling.verdict(rows)["falls_with_size"]
    for r in rows:
        r["after_error"], r["after_correct"] = 0.3, 0.6
    assert ceiling.verdict(rows)["dependence"] == "recovers"
    rows[0]["after_error"] = 0.7  # one pair clusters (ratio 1.17), the others recover (0.5)
    assert ceiling.verdict(rows)["dependence"] == "none"


def test_cli_course_prints_the_pages_table_and_verdict(capsys, monkeypatch):
    texts = {"en": "The package manager keeps a list of the packages installed on the system. " * 3,
             "pt": "O gerenciador de pacotes guarda uma lista dos pacotes instalados no sistema. " * 3}
    monkeypatch.setattr(ceiling, "unseen_texts", lambda: texts)
    assert main(["ceiling", "--json", "--course", "--max-n", "8"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(r["model"], r["lang"]) for r in out["rows"]] == [(n, code) for n in ceiling.COURSE_DECODERS
                                                               for code in ("en", "pt")]
    m = load("course-gpt2")
    assert out["rows"][4]["e"] == pytest.approx(ceiling.measure(m, encode(m.tokenizer, texts["en"]), 8)["e"])
    assert out["verdict"] == ceiling.verdict(out["rows"])
    assert main(["ceiling", "--json", "--course", "--file", "x.txt"]) == 2
    assert main(["ceiling", "--json"]) == 2
    assert main(["ceiling", "--json", "--course", "--max-n", "3"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 3
