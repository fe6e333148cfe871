"""The guessing game as a lesson step (issue 52, item 3): a next-token question with a `passage` (lab/questions.py
game, game_play, game_csv, walk_key; ui/game.py). Oracles: transformers' own forward pass for the model's
probability at each walked position, and `python -m lab guess` (tests/test_guess.py checks it against
transformers and hand counts) reading the teacher's export; the page under AppTest in both languages."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
import torch

from lab import lessons, questions, rooms
from lab.lessons import ROOT
from tests.pages import open_page

LESSON = "06-scale-and-perplexity"
STEP = 5


@pytest.fixture(scope="module")
def question():
    return lessons.named(LESSON).steps[STEP - 1].question


@pytest.fixture(scope="module")
def side(question):
    return questions.game(question, "course-gpt2")


def test_the_walk_starts_after_the_text_and_each_probability_is_transformers(question, side):
    from lab.models import load

    loaded = load("course-gpt2")
    ids = loaded.tokenizer(question["text"] + question["passage"])["input_ids"]
    start = len(loaded.tokenizer(question["text"])["input_ids"])
    assert side["positions"] == list(range(start, len(ids)))  # every token of the passage, none of the text
    assert side["model"] == loaded.name
    assert "".join(side["before"][0]) == loaded.tokenizer.decode(ids[:start])
    with torch.no_grad():
        logits = loaded.model(torch.tensor([ids])).logits[0].double()
    for position, row in zip(side["positions"], side["rows"], strict=True):
        p = torch.softmax(logits[position - 1], dim=-1)
        assert row["p"] == pytest.approx(float(p[ids[position]]), rel=1e-4, abs=1e-7)
        assert row["top"][0]["id"] == int(p.argmax())


def close(a, b) -> bool:
    """JSON values equal, their floats to 1e-9 relative."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and not isinstance(b, bool):
        return b == pytest.approx(a, rel=1e-9)
    return a == b


def test_the_export_is_what_lab_guess_reads_and_its_summary_is_the_pages(question, side, tmp_path):
    answers = {1: {"get": 1, "install": 3}, 2: {"the": 1, "followed": 1}, 3: {"=by": 1}}
    text = questions.game_csv(side["positions"], answers)
    assert "\r" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    p = [str(n) for n in side["positions"]]
    assert [(r["position"], r["answer"], r["count"]) for r in rows] == [  # most common first, then by answer
        (p[0], "install", "3"), (p[0], "get", "1"), (p[1], "followed", "1"), (p[1], "the", "1"), (p[2], "'=by", "1")]
    passage, answers_file = tmp_path / "passage.txt", tmp_path / "answers.csv"
    passage.write_text(question["text"] + question["passage"], encoding="utf-8")
    answers_file.write_text(text.replace("'=by", "=by"), encoding="utf-8")  # the formula guard, undone by hand
    done = subprocess.run([sys.executable, "-m", "lab", "guess", "--json", "--model", "course-gpt2", "--file",
                           str(passage), "--answers", str(answers_file)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    played = questions.game_play(question, "course-gpt2", answers)
    for key in ("class_bits", "model_bits", "agreement", "answers", "positions"):
        assert played["summary"][key] == pytest.approx(cli["summary"][key], rel=1e-9), key
    assert close(json.loads(json.dumps(played["class"])), cli["class"])  # the class's rows, position by position


def test_a_position_keeps_its_answers_apart_from_the_steps_and_every_other():
    keys = {questions.walk_key(k, j) for k in range(1, lessons.MAX_STEPS + 1) for j in range(1, questions.WALK + 1)}
    assert len(keys) == lessons.MAX_STEPS * questions.WALK  # no two positions share a room step
    assert min(keys) > lessons.MAX_STEPS and max(keys) <= rooms.MAX_STEP  # never a lesson step; always a room's
    for j in (0, questions.WALK + 1):
        with pytest.raises(ValueError, match=rf"^position {j} is not 1\.\.20$"):
            questions.walk_key(1, j)


def test_a_one_token_text_walks_from_its_first_position_and_at_most_walk_positions():
    """The tokenizer as transformers reads it: a one-token text, and a passage far longer than WALK."""
    from lab.models import load

    loaded = load("course-gpt2")
    q = {"en": "?", "pt": "?", "kind": "next-token", "text": "The",
         "passage": " cat sat on the mat and the dog sat on the rug, and then the cat and the dog went out to play "
                    "in the garden until the sun went down."}
    ids = loaded.tokenizer(q["text"] + q["passage"])["input_ids"]
    assert len(loaded.tokenizer(q["text"])["input_ids"]) == 1 and len(ids) > questions.WALK + 2
    walked = questions.game(q, loaded)
    assert walked["positions"] == list(range(1, questions.WALK + 1))
    assert walked["before"][0] == "The" and walked["before"][-1] == loaded.tokenizer.decode(ids[:questions.WALK])


def guess(at, value: str, label: str):
    at.text_input(key="game_value").input(value)
    labels = [b.label for b in at.button]
    return at.button[labels.index(label)].click().run()


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_reader_alone_walks_the_passage_and_gets_the_summary(lang, side):
    at = open_page(None, lesson=LESSON, step=str(STEP), lang=lang)
    assert not at.title  # the page waits for the end of the walk
    label = "Check my guess" if lang == "en" else "Conferir meu palpite"
    for j in range(1, len(side["positions"]) + 1):
        lead = f"**Position {j} of" if lang == "en" else f"**Posição {j} de"
        assert any(m.value.startswith(lead) for m in at.markdown), j
        at = guess(at, "the", label)
        assert not at.exception
    assert at.title  # the walk is over: the page is drawn
    metrics = {m.label: m.value for m in at.metric}
    played = questions.game_play(lessons.named(LESSON).steps[STEP - 1].question, "course-gpt2",
                                 {j: {"the": 1} for j in range(1, len(side["positions"]) + 1)})
    shown = f"{played['summary']['class_bits']:.2f}".replace(".", "," if lang == "pt" else ".")
    assert metrics["The class, bits per token" if lang == "en" else "A turma, bits por token"] == shown


def test_a_room_plays_a_position_and_the_reveal_moves_every_student_on(side):
    teacher = open_page(None, lesson=LESSON, step=str(STEP))
    teacher.button(key="room_start").click().run()
    code = teacher.session_state["_room_teacher"]["code"]
    students = [open_page(None, room=code) for _ in range(3)]
    for s, value in zip(students, ["install", "install", "get"], strict=True):
        guess(s, value, "Send my guess")
    key = questions.walk_key(STEP, 1)
    assert rooms.store().answers(code, key) == {"install": 2, "get": 1}
    labels = [b.label for b in teacher.button]
    teacher.button[labels.index("Reveal")].click().run()
    for s in students:
        s.run()
        assert any(m.value.startswith("**Position 2 of") for m in s.markdown)
        assert any(m.value.startswith("Position 1: the text went on with") for m in s.markdown)
    assert rooms.store().answers(code, questions.walk_key(STEP, 2)) == {}  # position 2's answers start empty
