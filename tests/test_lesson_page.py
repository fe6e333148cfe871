"""Presenting a lesson under AppTest (ui/lesson.py): ?lesson=NAME&step=K opens the step's page with its inputs, the
bar in both languages, the note hidden in presentation mode, "back to the step", and garbage in the link."""

from __future__ import annotations

import base64

import pytest

from lab import lessons
from tests.bad_inputs import CASES
from tests.pages import open_page

LESSON = "04-heads-and-mask"  # attention (3 steps), causal_mask, code


def bar_text(at) -> str:
    """The bar's title and step counter, as written (the counter's span, which keeps it on one line, left out)."""
    import re

    found = next(m.value for m in at.markdown if "·" in m.value and ("step" in m.value or "passo" in m.value))
    return re.sub(r'<span class="lesson-step">(.*?)</span>', r"\1", found)


def question(at) -> str | None:
    """The bar's question for the class, as its text (st.html: the file's words escaped, not markdown)."""
    import html
    import re

    found = [h.proto.body for h in at.get("html") if 'class="lesson-question"' in h.proto.body]
    return html.unescape(re.sub(r"<[^>]+>", "", found[0])) if found else None


def labels(at) -> list[str]:
    """The lesson bar's buttons (the sidebar's "Add this view to a lesson" left out)."""
    return [b.label for b in at.button if not (b.key or "").startswith("maker_")]


def test_a_link_opens_the_steps_page_with_its_inputs():
    at = open_page(None, lesson=LESSON, step="2")
    assert at.query_params["view"] == "attention" and at.query_params["step"] == "2"
    assert (at.session_state["attn_layer"], at.session_state["attn_head"]) == (2, 3)
    assert at.session_state["attn_metric"] == "previous" and at.session_state["model"] == "course-gpt2"
    assert bar_text(at) == "**Many heads, and the line that makes a model causal (chapter 04)** · step 2 of 5"
    # no "back to the step"; "Take a room back" is the menu's form (a teacher's key)
    assert labels(at) == ["← Previous", "Next →", "Start a room", "Leave the lesson", "Take a room back"]
    assert any(c.value.startswith("Teacher's note: Layer 2, head 3") for c in at.caption)


def test_the_bar_in_portuguese():
    at = open_page(None, lesson=LESSON, step="4", lang="pt")
    assert at.query_params["view"] == "causal_mask"
    assert bar_text(at) == "**Várias cabeças, e a linha que torna um modelo causal (capítulo 04)** · passo 4 de 5"
    assert labels(at)[:2] == ["← Anterior", "Próximo →"] and "Sair da lição" in labels(at)
    assert question(at).startswith("Pergunta para a turma: Com a máscara desligada")
    assert any(c.value.startswith("Nota para o professor: A mesma cabeça") for c in at.caption)


def test_next_previous_and_back_to_the_step():
    at = open_page(None, lesson=LESSON, step="3")
    at.button(key="lesson_next").click().run()
    assert at.query_params["view"] == "causal_mask" and at.query_params["step"] == "4"
    assert (at.session_state["mask_layer"], at.session_state["mask_head"]) == (2, 3)
    at.session_state["mask_layer"] = 1  # a student changes an input
    at.run()
    assert "↺ Back to the step" in labels(at) and at.query_params["mask_layer"] == "1"
    at.button(key="lesson_back").click().run()
    assert at.session_state["mask_layer"] == 2 and "↺ Back to the step" not in labels(at)
    at.button(key="lesson_prev").click().run()
    assert at.query_params["view"] == "attention" and at.query_params["step"] == "3"
    assert (at.session_state["attn_layer"], at.session_state["attn_head"]) == (0, 0)  # step 3's own inputs
    assert not at.exception


def test_the_first_and_last_steps_disable_their_buttons():
    at = open_page(None, lesson="03-attention-trophy", step="1")
    assert at.button(key="lesson_prev").disabled and not at.button(key="lesson_next").disabled
    at = open_page(None, lesson="03-attention-trophy", step="4")
    assert at.button(key="lesson_next").disabled and not at.button(key="lesson_prev").disabled


def test_presentation_mode_hides_the_note_until_presenter_notes_are_on():
    at = open_page(None, lesson=LESSON, step="2", present="1")
    assert not any("Teacher's note" in c.value for c in at.caption)
    assert question(at) is None  # step 2 has no question
    at.toggle(key="lesson_notes").set_value(True).run()
    assert any(c.value.startswith("Teacher's note: Layer 2") for c in at.caption)


def test_leaving_the_lesson_keeps_the_page():
    at = open_page(None, lesson=LESSON, step="2")
    at.button(key="lesson_leave").click().run()
    assert "lesson" not in at.query_params and "step" not in at.query_params
    assert not any("Leave the lesson" == b.label for b in at.button) and at.query_params["view"] == "attention"


def test_the_home_page_lists_the_shipped_lessons():
    at = open_page(None, lang="pt")
    links = [link for link in at.get("page_link") if "lesson" in str(link.proto.query_string)]
    assert len(links) == len(lessons.shipped())
    assert links[0].proto.label == lessons.named(lessons.shipped()[0]).title["pt"]


@pytest.mark.parametrize(("params", "warning"), [
    ({"lesson": "nope"}, "This lesson cannot be opened"),
    ({"lesson": "../../etc/passwd"}, "This lesson cannot be opened"),
    ({"lesson": LESSON, "step": "9"}, "Ignored from the link: `step=9` (out of range 1–5), showing `1` instead"),
    ({"lesson": LESSON, "step": "-1"}, "Ignored from the link: `step=-1` (out of range 1–5), showing `1`"),
    ({"lesson": LESSON, "step": "²"}, "Ignored from the link: `step=²` (not a whole number), showing `1`"),
])
def test_garbage_in_the_link_gives_a_notice(params, warning):
    at = open_page(None, **params)
    assert any(w.value.startswith(warning) for w in at.warning), [w.value for w in at.warning]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "text"), CASES, ids=[c for c, _ in CASES])
def test_the_bad_input_matrix_as_lesson_step_and_room(case, text):
    """Every case as ?lesson=, ?step= and ?room=: a notice or nothing, never an exception."""
    # what a URL can carry to the server: no NUL, no lone surrogate (the browser sends those as U+FFFD)
    text = text[:3000].replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    open_page(None, lesson=text)
    open_page(None, lesson="03-attention-trophy", step=text)
    open_page(None, room=text)


def test_a_room_started_by_the_teacher_is_followed_by_a_student():
    from lab import rooms

    teacher = open_page(None, lesson="03-attention-trophy", step="1", lang="pt")
    teacher.button(key="room_start").click().run()
    assert "Abrir uma sala" in [b.label for b in open_page(None, lesson=LESSON, lang="pt").button]
    code = teacher.session_state["_room_teacher"]["code"]
    secret = teacher.session_state["_room_teacher"]["secret"]
    assert rooms.CODE.fullmatch(code) and all(secret not in str(v) for v in teacher.query_params.values())
    assert any(f"/?room={code}" in m.value for m in teacher.markdown)
    assert any(m.value.startswith(f"Sala **`{code}`**, aberta por mais 2 h 59 min") for m in teacher.markdown)
    qr = [i.proto.imgs[0] for i in teacher.get("image") if i.proto.imgs[0].caption == "QR code do link dos alunos"]
    assert len(qr) == 1 and qr[0].url.startswith("data:image/svg+xml;base64,")
    assert f"/?room={code}".encode() in base64.b64decode(qr[0].url.split(",", 1)[1])  # segno's <title>
    student = open_page(None, room=code)
    assert student.query_params["step"] == "1" and student.query_params["room"] == code
    assert "room_start" not in [b.key for b in student.button]  # a student cannot start or move the room
    assert student.button(key="lesson_next").disabled  # following: the bar's own moves are off
    teacher.button(key="lesson_next").click().run()
    teacher.button(key="lesson_next").click().run()
    assert rooms.store().get(code).step == 3
    student.run()
    assert student.query_params["step"] == "3" and student.query_params["view"] == "causal_mask"
    student.toggle(key="room_follow").set_value(False).run()  # exploring
    student.button(key="lesson_prev").click().run()
    assert student.query_params["step"] == "2" and rooms.store().get(code).step == 3
    student.toggle(key="room_follow").set_value(True).run()  # one click to rejoin
    assert student.query_params["step"] == "3"


def test_a_student_never_sees_the_teachers_note_and_opens_in_the_teachers_language():
    """Issue 48, items 2 and 3: the students' link carries the teacher's language; a student's bar has the question
    but no note and no "presenter notes" switch, while the teacher's shows the note (outside presentation mode)."""
    teacher = open_page(None, lesson=LESSON, step="4", lang="pt")
    teacher.button(key="room_start").click().run()
    code = teacher.session_state["_room_teacher"]["code"]
    assert any(m.value == f"[/?room={code}&lang=pt](/?room={code}&lang=pt)" for m in teacher.markdown)
    assert any(c.value.startswith("Nota para o professor: A mesma cabeça") for c in teacher.caption)
    student = open_page(None, room=code, lang="pt")  # the link as the teacher's panel gives it
    assert student.query_params["step"] == "4" and bar_text(student).endswith("· passo 4 de 5")
    assert question(student).startswith("Pergunta para a turma: Com a máscara desligada")
    assert not any("Nota para o professor" in c.value or "Teacher's note" in c.value for c in student.caption)
    assert "lesson_notes" not in [w.key for w in student.toggle]
    student.session_state["lesson_notes"] = True  # even with the switch's state forced on
    student.run()
    assert not any("Nota para o professor" in c.value for c in student.caption)


def test_a_teacher_who_opens_their_own_students_link_stays_the_teacher():
    """Issue 51: the teacher's own session on `?room=CODE` (the link it shows) keeps the room's controls and its
    notes, and its moves still move the room."""
    from lab import rooms

    teacher = open_page(None, lesson=LESSON, step="1")
    teacher.button(key="room_start").click().run()
    code = teacher.session_state["_room_teacher"]["code"]
    teacher.query_params["room"] = code
    teacher.run()
    assert "room_follow" not in [w.key for w in teacher.toggle]  # no "Following the teacher"
    assert not teacher.button(key="lesson_next").disabled
    assert any(c.value.startswith("Teacher's note") for c in teacher.caption)
    teacher.button(key="lesson_next").click().run()
    assert rooms.store().get(code).step == 2


def test_a_student_keeps_following_through_a_read_the_room_store_missed(monkeypatch):
    """A store that does not answer once (a loaded Redis past its timeout): a notice, and the student still follows
    (the switch and the poll stay), so the next move reaches them; before, one missed read ended following."""
    from lab import rooms

    teacher = open_page(None, lesson=LESSON, step="1")
    teacher.button(key="room_start").click().run()
    code = teacher.session_state["_room_teacher"]["code"]
    student = open_page(None, room=code)
    real = rooms.store()

    class Silent:
        def get(self, code):
            raise rooms.RoomError("the room store cannot be reached (TimeoutError)", "unreachable", where="redis")

    monkeypatch.setattr(rooms, "store", lambda: Silent())
    student.run()
    assert any(w.value.startswith("The room server cannot be reached right now") for w in student.warning)
    assert student.toggle(key="room_follow").value and student.button(key="lesson_next").disabled
    monkeypatch.setattr(rooms, "store", lambda: real)
    teacher.button(key="lesson_next").click().run()
    student.run()  # what the poll's rerun does
    assert student.query_params["step"] == "2" and not student.warning


@pytest.mark.parametrize(("room", "warning"), [
    ("ZZZZZZ", "There is no room ZZZZZZ"), ("<b>x</b>", "That is not a room code"), ("", "That is not a room code"),
])
def test_a_bad_room_code_gives_a_notice_and_the_lesson_works_alone(room, warning):
    at = open_page(None, room=room, lesson="03-attention-trophy", step="2")
    assert any(w.value.startswith(warning) for w in at.warning), [w.value for w in at.warning]
    assert at.query_params["step"] == "2" and at.query_params["view"] == "attention"


def test_an_unreachable_room_store_gives_a_notice(monkeypatch):
    from lab.testing.browser import free_port

    monkeypatch.setenv("LAB_ROOMS_URL", f"redis://127.0.0.1:{free_port()}/0")
    at = open_page(None, room="ABCDEF", lesson="03-attention-trophy", step="2", lang="pt")
    assert any(w.value.startswith("O servidor das salas não responde agora") for w in at.warning)
    assert at.query_params["view"] == "attention"
