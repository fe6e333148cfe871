"""The guessing game as a lesson step (issue 52, item 3): a next-token question with a `passage` (lab/questions.py
game, game_play, game_csv, walk_key; ui/game.py). Oracles: transformers' own forward pass for the model's
probability at each walked position, and `python -m lab guess` (tests/test_guess.py checks it against
transformers and hand counts) reading the teacher's export; the page under AppTest in both languages."""

from __future__ import annotations

import csv
import io
import json
import math
import shlex
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


WORDS = [" install", " followed", " by", " the", " name", " of", " the", " package"]  # the passage's, by eye


def test_the_walk_is_the_passages_words_and_each_probability_is_transformers_chain(question, side):
    """Issue 56: the walk is the passage's words (the final "." is punctuation, not walked), numbered 1..n; each
    word's probability is the product of transformers' softmax over its tokens, one token at a time."""
    from lab.models import load

    loaded = load("course-gpt2")
    ids = loaded.tokenizer(question["text"] + question["passage"])["input_ids"]
    start = len(loaded.tokenizer(question["text"])["input_ids"])
    assert side["unit"] == "word" and side["positions"] == list(range(1, len(WORDS) + 1))
    assert [r["token"] for r in side["rows"]] == WORDS
    assert side["model"] == loaded.name
    assert side["before"][0] == loaded.tokenizer.decode(ids[:start]) == question["text"]
    assert side["before"][1] == question["text"] + " install"
    with torch.no_grad():
        p = torch.softmax(loaded.model(torch.tensor([ids])).logits[0].double(), dim=-1)
    for a, row in zip(side["starts"], side["rows"], strict=True):
        chain = loaded.tokenizer(row["token"])["input_ids"]
        assert ids[a:a + len(chain)] == chain == row["ids"]
        want = math.prod(float(p[a + k - 1, t]) for k, t in enumerate(chain))
        assert row["p"] == pytest.approx(want, rel=1e-4, abs=1e-9)
        assert row["top"][0]["p"] >= max(c["p"] for c in row["top"])  # the likeliest candidate word first


def close(a, b) -> bool:
    """JSON values equal, their floats to 1e-9 relative."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and not isinstance(b, bool):
        return b == pytest.approx(a, rel=1e-9)
    return a == b


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_export_is_what_lab_guess_reads_and_its_summary_is_the_pages(question, side, tmp_path, lang):
    """The export numbers positions 1..n as the screen does, in the reader's spreadsheet format; the command the page
    shows beside it (the step's text as --context, its passage as --text) prints the page's summary from it."""
    answers = {1: {"get": 1, "install": 3}, 2: {"the": 1, "followed": 1}, 3: {"=by": 1}}
    text = questions.game_csv(side, answers, lang)
    assert "\r" not in text and text.startswith("\ufeff")
    sep = ";" if lang == "pt" else ","
    rows = list(csv.reader(io.StringIO(text[1:]), delimiter=sep))
    assert rows[0] == (["position", "true_word", "answer", "count"] if lang == "en" else
                       ["posição", "palavra_verdadeira", "resposta", "contagem"])
    assert rows[1:] == [  # positions as on the screen (1, 2, 3), most common first, then by answer
        ["1", "install", "install", "3"], ["1", "install", "get", "1"], ["2", "followed", "followed", "1"],
        ["2", "followed", "the", "1"], ["3", "by", "'=by", "1"]]
    answers_file = tmp_path / "answers.csv"
    answers_file.write_text(text, encoding="utf-8")
    command = questions.game_command(question, "course-gpt2", str(answers_file))
    done = subprocess.run(["bash", "-c", command.replace("python", shlex.quote(sys.executable), 1)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)
    played = questions.game_play(question, "course-gpt2", answers)
    assert cli["unit"] == played["unit"] == "word"
    for key in ("class_bits", "model_bits", "agreement", "answers", "positions"):
        assert played["summary"][key] == pytest.approx(cli["summary"][key], rel=1e-9), key
    assert close(json.loads(json.dumps(played["class"])), cli["class"])  # the class's rows, position by position
    assert [r["position"] for r in cli["positions"]] == side["positions"]
    assert close(json.loads(json.dumps(side["rows"])), cli["positions"])  # the model's words and candidates too


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
    assert walked["before"][0] == "The"  # the 20th word (the "," is not a word) is " went", by counting
    assert walked["before"][-1] == "The cat sat on the mat and the dog sat on the rug, and then the cat and the dog"
    assert walked["rows"][-1]["token"] == " went"


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
    assert metrics["The class, bits per word" if lang == "en" else "A turma, bits por palavra"] == shown
    model = f"{played['summary']['model_bits']:.2f}".replace(".", "," if lang == "pt" else ".")
    assert metrics["The model, bits per word" if lang == "en" else "O modelo, bits por palavra"] == model
    unit = "Each position is a whole word" if lang == "en" else "Cada posição é uma palavra inteira"
    assert any(c.value.startswith(unit) for c in at.caption)  # the page says which unit is counted
    (table,) = [d.value for d in at.dataframe if ("model p" if lang == "en" else "p do modelo") in d.value.columns]
    assert list(table.iloc[:, 0]) == list(range(1, len(side["positions"]) + 1))  # numbered as on the screen
    column = table["model p" if lang == "en" else "p do modelo"]
    by_hand = [f"{r['p']:.{max(0, 2 - math.floor(math.log10(r['p'])))}f}".rstrip("0") for r in side["rows"]]
    assert list(column) == [v.replace(".", "," if lang == "pt" else ".") for v in by_hand]  # the reader's format


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


def chart_rows(at) -> list[dict]:
    """Every row of data the page's charts carry (AppTest: each chart's datasets, as Arrow streams)."""
    import pyarrow as pa

    out = []
    for c in at.get("arrow_vega_lite_chart") + at.get("vega_lite_chart"):
        for ds in c.proto.datasets:
            out.extend(pa.ipc.open_stream(ds.data.data).read_pandas().to_dict("records"))
    return out


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_right_guess_of_several_tokens_is_drawn_right(lang):
    """Lesson 07 step 5 (issue 56): the passage's first word is " apt", two course tokens (" a" + "pt"); "apt" is
    right, scored and drawn: the class's chart marks it as the true word, never as another answer."""
    lesson = "07-sampling"
    q = lessons.named(lesson).steps[4].question
    first = questions.game(q, "course-gpt2")["rows"][0]
    assert first["token"] == " apt" and len(first["ids"]) == 2
    at = open_page(None, lesson=lesson, step="5", lang=lang)
    at = guess(at, "apt", "Check my guess" if lang == "en" else "Conferir meu palpite")
    assert not at.exception
    right = "the true word" if lang == "en" else "a palavra verdadeira"
    drawn = [r for r in chart_rows(at) if r.get("answer") == "apt"]
    assert drawn and all(r["mark"] == "right" and r["mark_name"] == right for r in drawn), drawn
    played = questions.game_play(q, "course-gpt2", {1: {"apt": 1}})
    assert played["class"][0]["right"] == 1 and played["class"][0]["guesses"][0]["right"] is True


def test_the_last_positions_guesses_stay_in_the_table_and_the_summary_once_revealed(side):
    """Issue 58, item 5: a room plays every position, the last one included; once the last is revealed, its guesses
    are in the teacher's table (the class's top guess, its probability) and in the class's bits per word, counted by
    hand (the add-1/2 rule of lab/guess.py's docstring: a word nobody named gets the escape's 1/2 / (N + (k + 1)/2)
    times (1 / 2V) per token, V the course tokenizer's 8,192; WORDS above, by eye, are the true words)."""
    from lab.models import load

    teacher = open_page(None, lesson=LESSON, step=str(STEP))
    teacher.button(key="room_start").click().run()
    room = teacher.session_state["_room_teacher"]
    n, store = len(WORDS), rooms.store()
    assert side["positions"] == list(range(1, n + 1))
    for j in range(1, n + 1):
        key = questions.walk_key(STEP, j)
        for who, value in (("s1", "the"), ("s2", "the"), ("s3", "box")) if j < n else \
                (("s1", "package"), ("s2", "package"), ("s3", "box")):
            store.answer(room["code"], who, key, value)
        store.reveal(room["code"], room["secret"], key)
    teacher.run()
    assert not teacher.exception
    (table,) = [d.value for d in teacher.dataframe if "model p" in d.value.columns]
    assert list(table["position"]) == list(range(1, n + 1))
    last = table.iloc[-1]
    assert (last["word"], last["class's top guess"], last["class p"]) == ("␣package", "␣package", "0.556")  # 2.5/4.5
    tokenizer, vocab = load("course-gpt2").tokenizer, 8192
    bits = []
    for j, word in enumerate(WORDS, 1):
        if j == n:
            p = (2 + 0.5) / (3 + 0.5 * 3)  # N = 3 answers, k = 2 words named, the true one twice
        elif word == " the":
            p = (2 + 0.5) / (3 + 0.5 * 3)
        else:  # nobody named it: the escape, (1 / 2V) for each of its tokens
            p = 0.5 / (3 + 0.5 * 3) * (1 / (2 * vocab)) ** len(tokenizer(word)["input_ids"])
        bits.append(-math.log2(p))
    metrics = {m.label: m.value for m in teacher.metric}
    assert metrics["The class, bits per word"] == f"{sum(bits) / n:.2f}"
