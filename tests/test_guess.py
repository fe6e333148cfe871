"""The guessing game (lab/guess.py, `python -m lab guess`) against outside oracles: the model's side against a plain
transformers forward pass and torch.softmax, a multi-token answer against a hand-written chain of forward passes,
the class's cross-entropy against a hand computation, the counting by property (hypothesis), the CLI's contract."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lab import guess
from lab.cli import main
from lab.models import load

ROOT = Path(__file__).resolve().parents[1]
TEXT = "The cat sat on the mat. Then the dog came in and the cat left the room."


@pytest.fixture(scope="module", params=["gpt2", "openai-gpt"])
def decoder(request, tiny_model_dirs):
    return load(str(tiny_model_dirs[request.param]))


@pytest.fixture(scope="module")
def gpt2(tiny_model_dirs):
    return load(str(tiny_model_dirs["gpt2"]))


def softmax_rows(model, ids: list[int]) -> torch.Tensor:
    """The oracle: one plain forward pass of the whole text, softmax in float64; row t - 1 predicts token t."""
    with torch.no_grad():
        return torch.softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)[:-1]


def next_p(model, ids: list[int]) -> torch.Tensor:
    """The oracle's next-token distribution after `ids` (one forward pass, last row)."""
    with torch.no_grad():
        return torch.softmax(model(torch.tensor([ids])).logits[0, -1].double(), dim=-1)


# ---------------------------------------------------------------- the model's side


def test_the_model_side_is_transformers_own_softmax(decoder):
    passage = guess.read_passage(decoder, TEXT)
    ids = decoder.tokenizer(TEXT)["input_ids"]
    assert passage.ids == ids and passage.vocab == decoder.model.config.vocab_size
    rows = guess.model_positions(passage, decoder.tokenizer)
    probs = softmax_rows(decoder.model, ids)
    assert [r["position"] for r in rows] == list(range(1, len(ids)))
    for r in rows:
        t, own = r["position"], probs[r["position"] - 1]
        assert r["id"] == ids[t]
        assert r["p"] == pytest.approx(float(own[ids[t]]), rel=1e-4, abs=1e-7)
        assert r["bits"] == pytest.approx(-math.log2(float(own[ids[t]])), abs=1e-3)
        assert r["rank"] == int((own > own[ids[t]]).sum()) + 1
        top = torch.topk(own, 5)
        assert [x["id"] for x in r["top"]] == top.indices.tolist()
        assert [x["p"] for x in r["top"]] == pytest.approx(top.values.tolist(), rel=1e-4, abs=1e-7)
        assert [x["token"] for x in r["top"]] == [decoder.tokenizer.decode([i]) for i in top.indices.tolist()]
    assert rows[0]["token"] == decoder.tokenizer.decode([ids[1]])


def test_a_passage_longer_than_one_window_still_matches_while_it_fits(gpt2):
    text = " ".join(["the cat sat on the mat"] * 10)  # 60 tokens of the tiny model's 64
    passage = guess.read_passage(gpt2, text)
    probs = softmax_rows(gpt2.model, passage.ids)
    got = [r["p"] for r in guess.model_positions(passage, gpt2.tokenizer)]
    want = [float(probs[t - 1, passage.ids[t]]) for t in range(1, len(passage.ids))]
    assert got == pytest.approx(want, rel=1e-4, abs=1e-7)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=40), st.integers(1, 8))
def test_the_top_tokens_are_the_most_likely_with_ties_by_id(values, top):
    import numpy as np

    row = np.array(values, dtype=np.float32)
    assert guess.top_ids(row, top).tolist() == sorted(range(len(values)), key=lambda i: (-values[i], i))[:top]


# ---------------------------------------------------------------- a student's answer


def test_a_one_token_answer_is_the_positions_own_probability_and_rank(gpt2):
    passage = guess.read_passage(gpt2, TEXT)
    t = passage.texts.index(" sat")
    own = softmax_rows(gpt2.model, passage.ids)[t - 1]
    s = guess.score(gpt2, passage, t, "  dog ")  # trimmed, then read with the true token's space
    dog = gpt2.tokenizer(" dog")["input_ids"]
    assert len(dog) == 1 and s["read_as"] == " dog" and s["ids"] == dog and not s["right"]
    assert s["p"] == pytest.approx(float(own[dog[0]]), rel=1e-4) and s["rank"] == int((own > own[dog[0]]).sum()) + 1
    assert guess.score(gpt2, passage, t, "sat")["right"]


def test_an_answer_of_several_tokens_is_the_chain_of_its_conditional_probabilities(gpt2):
    passage = guess.read_passage(gpt2, TEXT)
    t = passage.texts.index(" mat")
    s = guess.score(gpt2, passage, t, "pacote")
    pieces = gpt2.tokenizer(" pacote")["input_ids"]
    assert len(pieces) >= 2 and s["ids"] == pieces and s["rank"] is None and s["read_as"] == " pacote"
    want, prefix = 1.0, passage.ids[:t]
    for k, piece in enumerate(pieces):  # by hand: one forward pass per factor
        want *= float(next_p(gpt2.model, prefix + pieces[:k])[piece])
    assert s["p"] == pytest.approx(want, rel=1e-4)
    assert s["bits"] == pytest.approx(-math.log2(want), rel=1e-5)


def test_an_answer_past_the_context_is_read_in_windows(gpt2):
    passage = guess.read_passage(gpt2, " ".join(["the cat sat on the mat"] * 10))  # 60 of the tiny model's 64
    s = guess.score(gpt2, passage, passage.last, "pacote " * 14)  # 98 characters, more tokens than the room left
    assert passage.last + len(s["ids"]) > gpt2.context and s["rank"] is None
    assert 0 < s["p"] < 1 and math.isfinite(s["bits"]) and s["bits"] > 0


def test_no_space_is_added_inside_a_word(gpt2):
    text = "Debian packages install cleanly."
    passage = guess.read_passage(gpt2, text)
    t = next(i for i, x in enumerate(passage.texts) if i > 0 and not x.startswith(" "))
    s = guess.score(gpt2, passage, t, passage.texts[t])
    assert s["read_as"] == passage.texts[t] and s["right"] and s["rank"] >= 1


# ---------------------------------------------------------------- the class's side


def test_the_class_cross_entropy_by_hand():
    """Position 1 (true token 7): votes 7 x3, 9 x1; position 2 (true token 5): votes 8 x2, nobody named 5. V = 10."""
    votes = [(1, 7, 2), (1, 9, 1), (1, 7, 1), (2, 8, 2)]
    got = guess.tally(votes, {1: 7, 2: 5}, vocab=10)
    # position 1: N = 4, k = 2 -> (3 + 1/2) / (4 + 3/2) = 7/11
    # position 2: N = 2, k = 1 -> escape (1/2) / (2 + 2/2) = 1/6, spread over the 9 tokens nobody named: 1/54
    assert got[1]["p"] == pytest.approx(7 / 11) and got[2]["p"] == pytest.approx(1 / 54)
    assert got[1]["bits"] == pytest.approx(0.6520766) and got[2]["bits"] == pytest.approx(5.7548875)
    assert (got[1]["answers"], got[1]["right"], got[1]["most_common"]) == (4, 3, [7])
    assert (got[2]["answers"], got[2]["right"], got[2]["most_common"]) == (2, 0, [8])


def test_the_summary_by_hand():
    model_rows = [{"position": 1, "bits": 2.0}, {"position": 2, "bits": 4.0}, {"position": 3, "bits": 9.0}]
    class_rows = [{"position": 1, "answers": 4, "bits": 1.0, "agrees": 1.0},
                  {"position": 3, "answers": 2, "bits": 6.0, "agrees": 0.5}]
    assert guess.summary(model_rows, class_rows) == {"positions": 2, "answers": 6, "class_bits": 3.5,
                                                     "model_bits": 5.5, "agreement": 0.75, "model_bits_passage": 5.0}
    assert guess.summary(model_rows, [])["class_bits"] is None
    assert guess.agreement([3, 8], 8) == 0.5 and guess.agreement([3], 3) == 1.0 and guess.agreement([3], 4) == 0.0


def test_the_class_side_from_a_table(gpt2):
    passage = guess.read_passage(gpt2, TEXT)
    t = passage.texts.index(" sat")
    rows = guess.read_answers(f"position,answer,count\n{t},sat,3\n{t},  sat ,1\n{t},dog,2\n{t},pacote,1\n",
                              passage.last)
    (c,) = guess.class_side(gpt2, passage, rows)
    named = {gpt2.tokenizer(" sat")["input_ids"][0]: 4, gpt2.tokenizer(" dog")["input_ids"][0]: 2,
             gpt2.tokenizer(" pacote")["input_ids"][0]: 1}
    assert (c["answers"], c["right"]) == (7, 4) and [g["count"] for g in c["guesses"]] == [4, 2, 1]
    assert c["p"] == pytest.approx((4 + 0.5) / (7 + 0.5 * 4)) and len(named) == 3
    assert [m["token"] for m in c["most_common"]] == [" sat"] and c["guesses"][0]["answer"] == "sat"
    top1 = int(softmax_rows(gpt2.model, passage.ids)[t - 1].argmax())
    assert c["agrees"] == float(top1 == passage.ids[t])  # the class's most common first token is the true one


# ---------------------------------------------------------------- the counting, by property

VOTES = st.lists(st.tuples(st.integers(1, 6), st.integers(0, 19), st.integers(1, 5)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(VOTES, st.integers(1, 6), st.integers(0, 19), st.integers(1, 5))
def test_counts_add_up_and_one_positions_answers_never_move_another(votes, where, token, count):
    truth = {p: p % 20 for p in range(1, 7)}
    before = guess.tally(votes, truth, vocab=20)
    assert sum(r["answers"] for r in before.values()) == sum(c for _, _, c in votes)
    for position, r in before.items():
        assert sum(r["votes"].values()) == r["answers"] == sum(c for p, _, c in votes if p == position)
        assert 0 < r["p"] <= 1 and r["bits"] >= 0
    after = guess.tally(votes + [(where, token, count)], truth, vocab=20)
    assert {p: r for p, r in after.items() if p != where} == {p: r for p, r in before.items() if p != where}
    assert after[where]["answers"] == before.get(where, {"answers": 0})["answers"] + count


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(0, 29), st.integers(1, 9), max_size=30))
def test_the_class_distribution_sums_to_one_over_the_vocabulary(votes):
    total = sum(guess.class_probability(votes, x, vocab=30) for x in range(30))
    assert total == pytest.approx(1.0) if len(votes) < 30 else total <= 1 + 1e-9


@settings(max_examples=100, deadline=None)
@given(VOTES)
def test_the_order_of_the_rows_changes_nothing(votes):
    truth = {p: 0 for p in range(1, 7)}
    assert guess.tally(votes, truth, 20) == guess.tally(list(reversed(votes)), truth, 20)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("table,reason,words", [
    ("", "not_csv", "missing position, answer, count"),
    ("pos,answer,count\n1,a,1\n", "not_csv", "missing position"),
    ("position,answer,count\n1,a,0\n", "count", "line 2: the count must be from 1 to 1,000,000"),
    ("position,answer,count\n1,a," + "9" * 18 + "\n", "count", "line 2: the count must be from 1"),
    ("position,answer,count\n1,a," + "9" * 5000 + "\n", "row", "line 2: the count must be a whole number"),
    ("position,answer,count\n" + "9" * 5000 + ",a,1\n", "row", "line 2: the position must be a whole number"),
    ("position,answer,count\n\u0663,a,1\n", "row", "the position must be a whole number"),
    ("position,answer,count\n1,a,-3\n", "count", "got -3"),
    ("position,answer,count\n1,a,two\n", "row", "line 2: the count must be a whole number"),
    ("position,answer,count\n1.5,a,1\n", "row", "the position must be a whole number"),
    ("position,answer,count\n1,a\n", "row", "line 2: the count must be a whole number (at most 18 digits); got None"),
    ("position,count,answer\n1,2\n", "row", "line 2: the row has no answer"),
    ("position,answer,count\n0,a,1\n", "position", "position 0 is not in the passage"),
    ("position,answer,count\n99,a,1\n", "position", "positions go from 1 to 16"),
    ("position,answer,count\n1,   ,1\n", "empty_answer", "line 2: the answer is empty"),
    ("position,answer,count\n1," + "a" * 101 + ",1\n", "long_answer", "101 characters; an answer is at most 100"),
    ("position,answer,count\n1,\"a\x07b\",1\n", "control", "control character (U+0007)"),
    ("position,answer,count\n1,\"ab\u202e\",1\n", "control", "U+202E"),
])
def test_bad_tables_name_the_line_and_the_reason(table, reason, words):
    with pytest.raises(guess.GuessError) as e:
        guess.read_answers(table, last=16)
    assert e.value.reason == reason and words in str(e.value)


def test_a_hundred_characters_is_an_answer_and_a_padded_one_too():
    rows = guess.read_answers("Position , Answer,COUNT,extra\n1," + "a" * 100 + ",2,x\n2,  ã  ,1,\n", last=3)
    assert rows == [(1, "a" * 100, 2), (2, "ã", 1)]
    assert guess.clean_answer("a\u0303") == "ã"  # a Mac's decomposed ã reads as a PC's


def test_bad_passages_and_positions(gpt2, tiny_model_dirs):
    for text, reason in (("", "empty"), ("   \n", "empty"), ("cat", "one_token"), ("cat " * 80, "too_long")):
        with pytest.raises(guess.GuessError) as e:
            guess.read_passage(gpt2, text)
        assert e.value.reason == reason, text
    with pytest.raises(guess.GuessError) as e:
        guess.read_passage(load(str(tiny_model_dirs["roberta"])), TEXT)
    assert e.value.reason == "encoder"
    passage = guess.read_passage(gpt2, TEXT)
    for position in (0, -1, passage.last + 1):
        with pytest.raises(guess.GuessError) as e:
            guess.score(gpt2, passage, position, "cat")
        assert e.value.reason == "position" and e.value.details["last"] == passage.last


def test_every_reason_is_worded_in_english_and_portuguese():
    from ui import messages

    reasons = ("empty", "one_token", "encoder", "too_long", "position", "not_csv", "row", "count", "too_many",
               "empty_answer", "long_answer", "control")
    assert all(f'"{r}"' in guess.GuessError.__doc__ for r in reasons)
    details = {"model": "m", "tokens": 9, "context": 8, "new": 0, "position": 0, "last": 5, "line": 3,
               "missing": ["count"], "found": ["a"], "field": "count", "value": "x", "count": 0, "rows": 10_001,
               "most": 100, "chars": 101, "char": "U+0007", "message": "m"}
    for r in reasons:
        key = next(k for k in (("GuessError", r), ("LabError", r)) if k in messages.TABLE)
        en, pt = messages.TABLE[key](details)
        assert pt and (en is None or en) and pt != en, r
    e = guess.GuessError("line 4: the row has no answer", "row", line=4, field="answer", value=None)
    assert messages.TABLE[("GuessError", "row")]({**e.details, "message": str(e)}) == (
        "Line 4: the row has no answer.", "Linha 4: a linha não tem resposta.")


# ---------------------------------------------------------------- the command


def run_json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_the_json_holds_both_sides(capsys, tmp_path, gpt2, tiny_model_dirs):
    passage = guess.read_passage(gpt2, TEXT)
    t, u = passage.texts.index(" sat"), passage.texts.index(" dog")
    answers = tmp_path / "answers.csv"
    answers.write_text(f"position,answer,count\n{t},sat,3\n{t},dog,2\n{u},cat,1\n", encoding="utf-8")
    doc = run_json(capsys, "guess", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--text", TEXT,
                   "--answers", str(answers))
    assert set(doc) == {"model", "vocab", "tokens", "unit", "positions", "class", "summary", "smoothing"}
    assert doc["unit"] == "token"  # the default, as before issue 56
    assert doc["positions"] == json.loads(json.dumps(guess.model_positions(passage, gpt2.tokenizer)))
    assert [c["position"] for c in doc["class"]] == [t, u] and doc["summary"]["answers"] == 6
    want = sum(c["bits"] for c in doc["class"]) / 2
    assert doc["summary"]["class_bits"] == pytest.approx(want)
    assert doc["summary"]["model_bits"] == pytest.approx((doc["positions"][t - 1]["bits"]
                                                          + doc["positions"][u - 1]["bits"]) / 2)
    plain = run_json(capsys, "guess", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--text", TEXT, "--top", "3")
    assert set(plain) == {"model", "vocab", "tokens", "unit", "positions"} and len(plain["positions"][0]["top"]) == 3


def test_the_table(capsys, tmp_path, tiny_model_dirs):
    answers = tmp_path / "a.csv"
    answers.write_text("position,answer,count\n1,cat,2\n", encoding="utf-8")
    assert main(["guess", "--model", str(tiny_model_dirs["gpt2"]), "--text", TEXT, "--answers", str(answers)]) == 0
    out = capsys.readouterr().out
    assert "positions to guess" in out and "over 1 positions, 2 answers: the class" in out


@pytest.mark.parametrize("argv,table,message", [
    (["--text", " "], None, "the text is empty"),
    (["--text", "cat"], None, "a single token"),
    (["--text", "cat " * 80], None, "takes at most 64"),
    (["--text", TEXT, "--top", "0"], None, "--top must be between 1 and 50"),
    (["--text", TEXT], "answer,count\nx,1\n", "missing position"),
    (["--text", TEXT], "position,answer,count\n1,x,0\n", "line 2: the count must be from 1 to 1,000,000"),
    (["--text", TEXT], "position,answer,count\n1,x,1\n400,y,1\n", "line 3: position 400 is not in the passage"),
    (["--text", TEXT], "position,answer,count\n1,,1\n", "the answer is empty"),
    (["--text", TEXT], "position,answer,count\n1,\"a\x00\",1\n", "control character (U+0000)"),
    (["--text", TEXT], "position,answer,count\n1," + "é" * 101 + ",1\n", "at most 100"),
])
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, tiny_model_dirs, argv, table, message):
    extra = []
    if table is not None:
        (tmp_path / "a.csv").write_text(table, encoding="utf-8")
        extra = ["--answers", str(tmp_path / "a.csv")]
    assert main(["guess", "--json", "--model", str(tiny_model_dirs["gpt2"]), *argv, *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith("lab: error: ") and message in captured.err, captured.err


def test_an_encoder_and_a_missing_file_exit_2(capsys, tiny_model_dirs, tmp_path):
    assert main(["guess", "--json", "--text", TEXT, "--model", str(tiny_model_dirs["roberta"])]) == 2
    assert "is an encoder" in capsys.readouterr().err
    assert main(["guess", "--text", TEXT, "--model", str(tiny_model_dirs["gpt2"]),
                 "--answers", str(tmp_path / "none.csv")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_the_real_entry_point(tiny_model_dirs, tmp_path):
    """Through `python -m lab` itself: a bad table is one line on stderr, exit 2; a good one is JSON."""
    (tmp_path / "bad.csv").write_text("position,answer,count\n1,x,many\n", encoding="utf-8")
    (tmp_path / "good.csv").write_text("position,answer,count\n1,x,2\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "lab", "guess", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--text", TEXT]
    bad = subprocess.run([*cmd, "--answers", str(tmp_path / "bad.csv")], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("lab: error: line 2: the count must be a whole number")
    good = subprocess.run([*cmd, "--answers", str(tmp_path / "good.csv")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert good.returncode == 0 and json.loads(good.stdout)["summary"]["answers"] == 2


# ---------------------------------------------------------------- docs/teaching.md's worked example

PASSAGE = "O pacote foi instalado sem erros. Depois, o sistema pediu para reiniciar."
ANSWERS = """position,answer,count
2,rograma,4
2,acote,3
2,ovo,2
2,ac,1
10,com,4
10,sem,3
10,no,2
10,e,1
11,erros,6
11,problemas,3
11,falhas,1
18,o,5
18,a,3
18,reinicie,2
26,para,7
26,um,2
26,que,1
"""


def test_the_worked_example_in_the_docs(capsys, tmp_path):
    """The figures docs/teaching.md quotes, printed by the command on the shipped course model."""
    (tmp_path / "passagem.txt").write_text(PASSAGE, encoding="utf-8")
    (tmp_path / "respostas.csv").write_text(ANSWERS, encoding="utf-8")
    doc = run_json(capsys, "guess", "--json", "--model", "course-gpt2", "--file", str(tmp_path / "passagem.txt"),
                   "--answers", str(tmp_path / "respostas.csv"))
    assert (doc["vocab"], len(doc["tokens"])) == (8192, 33)
    s = doc["summary"]
    assert (s["positions"], s["answers"], s["agreement"]) == (5, 50, pytest.approx(0.3))
    assert [round(s[k], 3) for k in ("class_bits", "model_bits", "model_bits_passage")] == [1.188, 5.178, 3.057]
    rows = {c["position"]: c for c in doc["class"]}
    assert [round(rows[p]["p"], 3) for p in (2, 10, 11, 18, 26)] == [0.375, 0.28, 0.542, 0.458, 0.625]
    model = [doc["positions"][p - 1] for p in (2, 10, 11, 18, 26)]
    assert [m["rank"] for m in model] == [1, 15, 96, 1, 15]
    assert [round(m["bits"], 3) for m in model] == [1.801, 6.316, 9.437, 2.157, 6.179]
    assert [m["token"] for m in rows[2]["most_common"]] == ["ac", "rog"] and rows[2]["agrees"] == 0.5
    erros = next(g for g in rows[11]["guesses"] if g["answer"] == "erros")
    assert erros["read_as"] == " erros" and round(erros["p"], 5) == 0.00031 and round(erros["bits"], 2) == 11.66


# ---------------------------------------------------------------- every hostile text, as a passage and as an answer


def test_every_bad_input_case_as_a_passage_and_as_an_answer(tmp_path, tiny_model_dirs, gpt2, monkeypatch):
    """tests/bad_inputs.py's cases (controls, bidi, a lone surrogate, HTML, 200,000 characters, ...): JSON and exit
    0, or one readable line and exit 2; never a traceback. An answer that is refused is refused for its reason."""
    import csv

    import lab.models
    from tests.bad_inputs import CASES
    from tests.test_reliability_inputs_cli import problem, run_cli

    model, failures, refused, real = str(tiny_model_dirs["gpt2"]), [], {}, lab.models.load
    monkeypatch.setattr(lab.models, "load", lambda name: gpt2 if name == model else real(name))  # read only
    for k, (name, text) in enumerate(CASES):
        table = tmp_path / f"a{k}.csv"
        with open(table, "w", encoding="utf-8", errors="surrogatepass", newline="") as f:
            csv.writer(f).writerows([["position", "answer", "count"], [1, text, 2], [2, "cat", 1]])
        for label, argv in (("passage", ["--text", text]), ("answer", ["--text", TEXT, "--answers", str(table)])):
            rc, out, err = run_cli(["guess", "--json", "--model", model, *argv])
            why = problem(rc, out, err, True)
            if why:
                failures.append(f"{label} / {name}: {why}")
            if label == "answer" and rc == 2:
                refused[name] = err
    assert not failures, failures
    assert "control character (U+0001)" in refused["control chars"] and "U+202E" in refused["bidi override"]
    assert "5,000 characters; an answer is at most 100" in refused["one long word"]
    assert "not CSV: field larger than field limit" in refused["long 200k"]  # csv's own limit, 131,072 characters
    assert "the answer is empty" in refused["whitespace"]
    assert "not UTF-8" in refused["lone surrogate"] and "script tag" not in refused


# ---------------------------------------------------------------- word units (issue 56): whole words, like with like

CONTEXT = "O Debian é um sistema operacional livre. Para instalar um programa, abra o terminal e digite"
TWO_WORDS = " apt install"


@pytest.fixture(scope="module")
def course():
    return load("course-gpt2")


def hand_chain(model, context: list[int], chain: list[int]) -> float:
    """By hand: the product over the chain of softmax(transformers' logits)[token], one token at a time, each
    given the context and the chain's tokens before it (one forward pass per token, float64)."""
    p, ids = 1.0, list(context)
    for token in chain:
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0, -1].double()
        p *= float(torch.softmax(logits, dim=-1)[token])
        ids.append(token)
    return p


def test_a_two_word_passage_by_hand(course):
    """Two words after a context on the course model: " apt" is two tokens (" a" + "pt"), " install" one."""
    tok = course.tokenizer
    context = tok(CONTEXT)["input_ids"]
    ids = tok(CONTEXT + TWO_WORDS)["input_ids"]
    apt, install = tok(" apt")["input_ids"], tok(" install")["input_ids"]
    assert ids == context + apt + install and len(apt) == 2 and len(install) == 1
    passage = guess.read_passage(course, CONTEXT + TWO_WORDS)
    walk = guess.word_walk(passage, tok, len(context))
    n = len(context)
    assert walk == [(n, n + 2), (n + 2, n + 3)]  # two positions: the words, not three tokens
    rows = guess.walk_rows(course, passage, walk, "word")
    p_apt, p_install = hand_chain(course.model, context, apt), hand_chain(course.model, context + apt, install)
    assert [r["token"] for r in rows] == [" apt", " install"] and [r["ids"] for r in rows] == [apt, install]
    assert rows[0]["p"] == pytest.approx(p_apt, rel=1e-4) and rows[1]["p"] == pytest.approx(p_install, rel=1e-4)
    assert rows[0]["bits"] == pytest.approx(-math.log2(p_apt), abs=1e-3)
    # the class: "apt" twice and "install" once at word 1, "the" once at word 2 (V = 8,192)
    table = "position,answer,count\n1,apt,2\n1,install,1\n2,the,1\n"
    doc = guess.play(course, passage, guess.read_answers(table, 2), unit="word", start=n)
    one, two = doc["class"]
    assert one["p"] == pytest.approx(2.5 / (3 + 1.5))  # N = 3, k = 2, c = 2: (2 + 1/2) / (3 + 3/2)
    the = len(tok(" the")["input_ids"])
    escape = 0.5 / (1 + 1.0)  # N = 1, k = 1, nobody named " install" (one token): the escape's share ...
    assert two["p"] == pytest.approx(escape * (1 / (2 * 8192)))  # ... times (1 / 2V)^1
    assert the == 1 and two["right"] == 0
    apt_guess = next(g for g in one["guesses"] if g["answer"] == "apt")
    assert apt_guess["right"] is True and apt_guess["tokens"] == [" a", "pt"]  # right: all its tokens are the word's
    assert apt_guess["p"] == pytest.approx(p_apt, rel=1e-4)  # its probability is the word's, as the score chains it
    assert next(g for g in one["guesses"] if g["answer"] == "install")["right"] is False
    (a,) = guess.class_side(course, passage, [(1, "a", 1)], walk, "word")  # " a" alone: the first token only
    assert a["right"] == 0 and a["guesses"][0]["right"] is False and a["guesses"][0]["ids"] == apt[:1]
    s = doc["summary"]  # bits per word, both sides
    assert s["class_bits"] == pytest.approx((-math.log2(5 / 9) - math.log2(escape / (2 * 8192))) / 2)
    assert s["model_bits"] == pytest.approx((-math.log2(p_apt) - math.log2(p_install)) / 2, abs=1e-3)
    assert doc["unit"] == "word" and [r["position"] for r in doc["positions"]] == [1, 2]


def test_the_model_candidates_are_whole_words_completed_greedily(course):
    """Each candidate word against transformers: its chain's probability is the product of softmaxes; every token
    after the first is the argmax there; the argmax after it no longer goes on with the word; its first token is among
    the likeliest first tokens that start a word."""
    tok = course.tokenizer
    context = tok(CONTEXT)["input_ids"]
    passage = guess.read_passage(course, CONTEXT + TWO_WORDS)
    cands = guess.candidates(course, passage, len(context), 5)
    assert len(cands) == 5 and len({c["token"] for c in cands}) == 5
    assert [c["p"] for c in cands] == sorted((c["p"] for c in cands), reverse=True)
    first = torch.softmax(course.model(torch.tensor([context])).logits[0, -1].double(), dim=-1)
    starts = [int(i) for i in first.argsort(descending=True)[:40]
              if tok.decode([int(i)]).startswith(" ") and tok.decode([int(i)])[1:2].isalpha()]
    for c in cands:
        chain = c["ids"]
        assert c["p"] == pytest.approx(hand_chain(course.model, context, chain), rel=1e-4)
        assert c["token"] == tok.decode(chain) and c["token"].startswith(" ") and c["token"][1:].isalpha()
        assert chain[0] in starts[:10]
        for k in range(1, len(chain) + 1):
            with torch.no_grad():
                best = int(course.model(torch.tensor([context + chain[:k]])).logits[0, -1].argmax())
            if k < len(chain):
                assert best == chain[k]  # greedy
            else:
                nxt = tok.decode([best])
                assert nxt[:1].isspace() or not nxt[:1].isalnum()  # the word ends: a new word or punctuation


def test_the_json_in_word_units_from_the_command(capsys, tmp_path, course):
    """--unit word --context: positions 1..n are the passage's words; a table in Portuguese, as the game exports it."""
    table = tmp_path / "respostas.csv"
    table.write_text("\ufeffposição;palavra_verdadeira;resposta;contagem\n1;apt;apt;2\n1;apt;'=apt;1\n2;install;the;1\n",
                     encoding="utf-8")
    doc = run_json(capsys, "guess", "--json", "--model", "course-gpt2", "--context", CONTEXT, "--text", TWO_WORDS,
                   "--answers", str(table))  # no --unit: the true_word column makes it a word walk
    assert doc["unit"] == "word" and [r["token"] for r in doc["positions"]] == [" apt", " install"]
    assert doc["class"][0]["answers"] == 3 and doc["class"][0]["right"] == 2  # "'=apt" read back as "=apt"
    assert set(doc["positions"][0]) >= {"position", "id", "token", "p", "bits", "rank", "top", "ids", "start"}
    table.write_text("position,true_word,answer,count\n1,install,apt,2\n", encoding="utf-8")
    assert main(["guess", "--json", "--model", "course-gpt2", "--context", CONTEXT, "--text", TWO_WORDS,
                 "--answers", str(table)]) == 2
    assert "true word is 'install' but the passage's is 'apt'" in capsys.readouterr().err
    table.write_text("position,true_word,answer,count\n1,apt,apt,2\n", encoding="utf-8")
    assert main(["guess", "--json", "--model", "course-gpt2", "--context", CONTEXT, "--text", TWO_WORDS,
                 "--unit", "token", "--answers", str(table)]) == 2
    assert "use --unit word" in capsys.readouterr().err


def test_a_word_is_letters_and_digits_and_punctuation_is_not_walked(gpt2):
    text = "Hello, world! Don't stop: guarda-chuva 42x."
    passage = guess.read_passage(gpt2, text)
    words = [guess.word_text(passage, gpt2.tokenizer, a, b) for a, b in guess.word_walk(passage, gpt2.tokenizer)]
    assert words == [" world", " Don't", " stop", " guarda-chuva", " 42x"]  # "Hello" is token 0: nothing before it


def test_the_last_token_and_the_last_word_are_guessed_from_a_table(capsys, tmp_path, tiny_model_dirs, gpt2):
    """Issue 58, item 5: `python -m lab guess --answers` takes a row at the walk's last position, in token units (the
    passage's last token, "." here) and in word units (its last word, " room": the "." is not walked), and refuses the
    one after it. Counted by hand: transformers' tokenizer numbers the tokens; TEXT's words split at spaces are 17, the
    first ("The", token 0) not walked; 2 answers, 1 word named, right twice: (2 + 1/2) / (2 + 1)."""
    ids = gpt2.tokenizer(TEXT)["input_ids"]
    words = TEXT.replace(".", "").split()
    assert len(words) == 17 and words[-1] == "room" and gpt2.tokenizer.decode(ids[-1:]) == "."
    model, table = str(tiny_model_dirs["gpt2"]), tmp_path / "answers.csv"
    for unit, last, answer in (("token", len(ids) - 1, "."), ("word", len(words) - 1, "room")):
        table.write_text(f"position,answer,count\n1,x,1\n{last},{answer},2\n", encoding="utf-8")
        doc = run_json(capsys, "guess", "--json", "--model", model, "--text", TEXT, "--unit", unit,
                       "--answers", str(table))
        assert len(doc["positions"]) == last and doc["positions"][-1]["token"].strip() == answer, unit
        end = doc["class"][-1]
        assert (end["position"], end["answers"], end["right"]) == (last, 2, 2), unit
        assert end["p"] == pytest.approx(2.5 / 3) and doc["summary"]["positions"] == 2, unit
        table.write_text(f"position,answer,count\n{last + 1},{answer},2\n", encoding="utf-8")
        assert main(["guess", "--json", "--model", model, "--text", TEXT, "--unit", unit,
                     "--answers", str(table)]) == 2
        assert f"line 2: position {last + 1} is not in the passage: positions go from 1 to {last}" \
            in capsys.readouterr().err, unit
