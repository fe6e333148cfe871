"""A class answering a step's question (issue 52, ui/answers.py) under AppTest, in both languages: a reader alone,
a room's rounds (answer, close, reveal, vote again), the teacher's export and key. The model's side is lab's
(tests/test_questions.py checks it against transformers and tiktoken); here: that the page shows lab's numbers,
hides the views until the reveal, and keeps the rounds apart."""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser

import pytest

from lab import lessons, questions, rooms
from tests.bad_inputs import CASES
from tests.pages import open_page
from tests.test_questions import tiktoken_oracle  # noqa: F401 (a fixture: tiktoken's own encodings, offline)
from tests.test_reliability_inputs_pages import as_received
from tests.test_rooms import redis_url  # noqa: F401 (a fixture: a real redis-server on loopback)
from viz.format import markdown_literal

SAMPLING = "07-sampling"  # step 1: next-token after "The Debian package manager"
TOKENS = "01-tokens-and-embeddings"  # step 3: a number (GPT-2's tokens of a Portuguese sentence); 4: a choice


def step_question(lesson: str, k: int) -> dict:
    return lessons.named(lesson).steps[k - 1].question


def hides_the_views(at, page: str) -> bool:
    """Whether the run withheld the step's page `page` (the page did not run: no title of it drawn), saying so in
    the bar."""
    withheld = not at.title and bool(at.session_state["_answers_veiled"])
    assert withheld == any(i.icon == ":material/visibility_off:" for i in at.info), page
    return withheld


def press(at, label: str):
    labels = [b.label for b in at.button]
    assert label in labels, labels
    return at.button[labels.index(label)].click().run()


def answer(at, value: str, label: str = "Send my answer"):
    if at.radio and any(r.key == "answer_value" for r in at.radio):
        at.radio(key="answer_value").set_value(value)
    else:
        at.text_input(key="answer_value").input(value)
    return press(at, label)


class _Shown(HTMLParser):
    """An HTML element as a browser shows it (Python's own HTML parser: the oracle): its tags and its text."""

    def __init__(self, body: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.parts = [], []
        self.feed(body)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.parts.append(data)


def echoes(at) -> list[_Shown]:
    """The sentences that give a reader's answer back (st.html elements of class lab-echo), parsed."""
    return [_Shown(h.proto.body) for h in at.get("html") if 'class="lab-echo"' in h.proto.body]


def echoed(at) -> list[str]:
    """The text of each echo as the reader reads it, after checking that it is the echo's own markup only (a
    paragraph and a code span: nothing a reader typed became a tag)."""
    shown = echoes(at)
    assert all(set(e.tags) <= {"p", "code"} and e.tags[:1] == ["p"] for e in shown), [e.tags for e in shown]
    return ["".join(e.parts) for e in shown]


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_reader_alone_answers_then_sees_the_models_next_token(lang):
    at = open_page(None, lesson=SAMPLING, step="1", lang=lang)
    assert hides_the_views(at, "sampling")
    side = questions.model_side(step_question(SAMPLING, 1), "course-gpt2", [" is"])
    answer(at, "is", "Check my answer" if lang == "en" else "Conferir minha resposta")
    assert not at.exception and not hides_the_views(at, "sampling")
    top = side["top"][0]
    shown = f"{top['p']:.3f}".replace(".", "," if lang == "pt" else ".")
    lead = "The model's most likely next token" if lang == "en" else "O próximo token mais provável para o modelo"
    said = [m.value for m in at.markdown if m.value.startswith(lead)]
    assert said and f"`{top['token']}`" in said[0] and said[0].endswith(f"{shown}.")
    charts = at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    assert len(charts) >= 2  # the class (one answer) and the model's top 5


def test_a_bad_number_is_refused_in_the_readers_language_and_nothing_is_kept():
    for lang, words in [("en", "not a number"), ("pt", "não é um número")]:
        at = open_page(None, lesson=TOKENS, step="3", lang=lang)
        answer(at, "twenty-four", "Check my answer" if lang == "en" else "Conferir minha resposta")
        assert not at.exception and any(words in w for w in warnings(at)), warnings(at)
        assert hides_the_views(at, "tokens")  # still unanswered


def start(lesson: str, k: int, lang: str = "en"):
    teacher = open_page(None, lesson=lesson, step=str(k), lang=lang)
    teacher.button(key="room_start").click().run()
    return teacher, teacher.session_state["_room_teacher"]["code"]


def test_a_room_answers_two_rounds_and_the_reveal_reaches_every_student(tiktoken_oracle):  # noqa: F811
    teacher, code = start(TOKENS, 3)
    students = [open_page(None, room=code) for _ in range(3)]
    assert all(hides_the_views(s, "tokens") for s in students) and hides_the_views(teacher, "tokens")
    for s, value in zip(students, ["20", "24", "24,0"], strict=True):
        answer(s, value)
    answer(students[0], "30")  # changed: one answer per student per round
    assert rooms.store().answered(code, 3) == 3
    assert rooms.store().answers(code, 3) == {"30": 1, "24": 2}  # "24,0" read as 24 by lab.questions.clean
    press(teacher, "Close the round")
    late = answer(students[1], "25")
    assert any("closed" in w for w in warnings(late)) and rooms.store().answers(code, 3) == {"30": 1, "24": 2}
    press(teacher, "Reveal")
    truth = questions.model_side(step_question(TOKENS, 3), None)["value"]
    assert truth == len(tiktoken_oracle["gpt2"].encode(step_question(TOKENS, 3)["text"]))  # tiktoken's own count
    for at in [teacher, *students]:
        at.run()
        assert not hides_the_views(at, "tokens")
        assert any(m.value == f"The true value: {truth:,}." for m in at.markdown)
    press(teacher, "Vote again")
    assert rooms.store().round_of(code, 3).number == 2
    for s in students:
        s.run()
        answer(s, "24")
    press(teacher, "Reveal")
    assert rooms.store().answers(code, 3, 1) == {"30": 1, "24": 2} and rooms.store().answers(code, 3, 2) == {"24": 3}
    students[2].run()
    assert any(c.value == "6 answers in 2 rounds." for c in students[2].caption)


def test_the_teachers_export_has_each_round_and_no_student_id():
    teacher, code = start(TOKENS, 4, lang="pt")  # the cheapest tokenizer: a choice lab marks right
    students = [open_page(None, room=code, lang="pt") for _ in range(2)]
    answer(students[0], "1", "Enviar minha resposta")
    answer(students[1], "2", "Enviar minha resposta")
    press(teacher, "Revelar")
    question = step_question(TOKENS, 4)
    side = questions.model_side(question, None)
    right = question["options"][side["right"] - 1]["pt"]
    assert any(m.value == f"A opção certa: {markdown_literal(right)}." for m in teacher.markdown)
    files = {b.proto.label: b.proto.url for b in teacher.get("download_button")}
    assert files["Respostas (CSV)"].endswith(".csv")
    assert files["Chave do professor (um arquivo, guarde)"].endswith(".txt")
    text = questions.csv_text(question, {1: rooms.store().answers(code, 4, 1)}, side, "pt")
    rows = list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff")), delimiter=";"))  # a Brazilian spreadsheet's
    assert sorted((r["resposta"], r["contagem"]) for r in rows) == [("1", "1"), ("2", "1")]
    assert sorted(r["opção"] for r in rows) == sorted(o["pt"] for o in question["options"][:2])
    who = [s.session_state["_room_who"] for s in students]
    assert not any(w in text for w in who)


def test_a_teacher_takes_the_room_back_with_the_key_and_a_wrong_key_is_refused():
    teacher, code = start(SAMPLING, 1)
    secret = teacher.session_state["_room_teacher"]["secret"]
    key = rooms.teacher_key(secret)
    assert key not in str([m.value for m in teacher.markdown])  # never drawn: a file
    student = open_page(None, room=code)
    answer(student, "is")
    stranger = open_page(None, lesson=SAMPLING, step="2")
    stranger.text_input(key="room_back_code").input(code)
    stranger.text_input(key="room_back_key").input("ABCD-EFGH-JKLM")
    press(stranger, "Take a room back")
    assert "_room_teacher" not in stranger.session_state or not stranger.session_state["_room_teacher"]
    back = open_page(None, lesson=SAMPLING, step="2")
    back.text_input(key="room_back_code").input(code.lower())
    back.text_input(key="room_back_key").input(key.lower().replace("-", " "))
    press(back, "Take a room back")
    assert back.session_state["_room_teacher"]["code"] == code and back.query_params["step"] == "1"
    press(back, "Reveal")  # the answer given before is kept
    assert rooms.store().round_of(code, 1).revealed and rooms.store().answers(code, 1) == {"is": 1}
    assert re.search(r"\b1 answer in 1 round\.", " ".join(c.value for c in back.caption))


def test_a_room_on_redis_answers_and_reveals_as_on_memory(redis_url, monkeypatch):  # noqa: F811
    """LAB_ROOMS_URL set (a real redis-server): the same round, read back by a second client as another replica
    would, and the reveal reaching the student."""
    monkeypatch.setenv(rooms.ENV, redis_url)
    teacher, code = start(TOKENS, 3, lang="pt")
    student = open_page(None, room=code, lang="pt")
    answer(student, "24,0", "Enviar minha resposta")
    other = rooms.RedisStore(redis_url)  # a second client: what another replica reads
    assert other.answers(code, 3) == {"24": 1} and other.answered(code, 3) == 1
    with pytest.raises(rooms.RoomError):
        rooms.store("").round_of(code, 3)  # not in this process's memory store: the room lives in Redis
    press(teacher, "Revelar")
    assert other.round_of(code, 3).revealed
    student.run()
    assert not hides_the_views(student, "tokens") and any(m.value.startswith("O valor verdadeiro: ")
                                                          for m in student.markdown)


@pytest.mark.parametrize(("case", "text"), CASES, ids=[c for c, _ in CASES])
def test_every_bad_input_as_an_answer_is_a_notice_or_an_answer_shown_as_text(case, text):
    """Issue 52, item 7: each case of the bad-input matrix typed as a reader's next-token answer: one notice in the
    reader's words, or the answer shown back as text (never markup, never an exception), and the page intact."""
    text = as_received(text)  # a lone surrogate cannot cross the websocket: the browser sends U+FFFD
    at = open_page(None, lesson=SAMPLING, step="1")
    at = answer(at, text, "Check my answer")
    assert not at.exception, case
    said = [e for e in echoed(at) if e.startswith("Your answer: ")]  # echoed() checks no typed text became a tag
    assert bool(warnings(at)) != bool(said), (case, warnings(at), said)  # refused, or kept: one of the two
    if said:  # kept: shown back as typed (trimmed), HTML-escaped text, no Markdown backslashes, and the reveal drawn
        assert said[0] == "Your answer: " + text.strip()
        assert any(m.value.startswith("The model's most likely next token") for m in at.markdown)
    others = [h.proto.body for h in at.get("html") if 'class="lab-echo"' not in h.proto.body]
    assert not any("__pwned" in body for body in others), case  # the script and img cases: never HTML


def test_a_room_store_that_stops_answering_tells_the_student_their_answer_was_not_counted(monkeypatch):
    teacher, code = start(TOKENS, 3)
    student = open_page(None, room=code)
    answer(student, "24")

    def down(*args, **kwargs):
        raise rooms.RoomError("the room store at redis://127.0.0.1:9/0 cannot be reached (ConnectionError)",
                              "unreachable", where="redis://127.0.0.1:9/0")

    monkeypatch.setattr(rooms.MemoryStore, "answer", down)
    changed = answer(student, "30")
    assert not changed.exception and any("cannot be reached" in w for w in warnings(changed))
    monkeypatch.undo()
    assert rooms.store().answers(code, 3) == {"24": 1}  # the acknowledged answer is kept; the refused one is not
    assert any(e.startswith("Round 1. Your answer: 24.") for e in echoed(changed))


ECHO = {"en": ("Your answer: ", "Check my answer"), "pt": ("Sua resposta: ", "Conferir minha resposta")}


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_an_answer_is_echoed_exactly_as_typed(lang):
    """Issue 56: `<script>alert(1)</script>` came back as `\\<script\\>` (Markdown escapes inside a code span) and
    "3,5" as "3.5"; now both read back as the reader typed them, and the script is text, not a tag."""
    said, check = ECHO[lang]
    at = answer(open_page(None, lesson=SAMPLING, step="1", lang=lang), "  <script>alert(1)</script> ", check)
    assert not at.exception and echoed(at) == [said + "<script>alert(1)</script>"]
    body = [h.proto.body for h in at.get("html") if 'class="lab-echo"' in h.proto.body][0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "\\" not in echoed(at)[0]
    number = answer(open_page(None, lesson=TOKENS, step="3", lang=lang), "3,5", check)
    assert not number.exception and echoed(number) == [said + "3,5"]
    assert number.session_state["_answers_alone"][f"{TOKENS}:3"] == "3.5"  # kept and compared in its one form


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_students_answer_in_a_room_is_echoed_as_typed(lang):
    teacher, code = start(TOKENS, 3, lang=lang)
    student = open_page(None, room=code, lang=lang)
    answer(student, "24,50", "Send my answer" if lang == "en" else "Enviar minha resposta")
    assert rooms.store().answers(code, 3) == {"24.5": 1}  # the room counts the one form
    lead = "Round 1. Your answer: " if lang == "en" else "Rodada 1. Sua resposta: "
    assert [e for e in echoed(student) if e.startswith(lead)][0].startswith(lead + "24,50.")
    del student.session_state["_answers_typed"]  # what a new session of this student has: the room's form only
    student.run()
    kept = "24.5" if lang == "en" else "24,5"  # then in the reader's decimal mark
    assert [e for e in echoed(student) if e.startswith(lead)][0].startswith(lead + kept + ".")
    press(teacher, "Close the round" if lang == "en" else "Fechar a rodada")
    student.run()
    closed = "Round 1 is closed. Your answer: " if lang == "en" else "A rodada 1 está fechada. Sua resposta: "
    assert any(e.startswith(closed + kept + ".") for e in echoed(student))
