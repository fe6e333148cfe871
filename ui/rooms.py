"""Rooms in the lesson bar (ui/lesson.py): a teacher starts one, students on `?room=CODE` follow the teacher's step.

- The teacher: "Start a room" creates a room (lab/rooms.py) on the current step; the session keeps the code and
  the secret (never a link). The code, the students' link and its QR code (drawn offline by segno, SVG) and the
  expiry show in the bar; every step the teacher's session shows moves the room.
- A student: `?room=CODE` opens the room's lesson on the teacher's step; a fragment polls the room every
  POLL_S seconds and reruns the app when the teacher moved, so the page and the address (`step=K`) follow.
  "Following the teacher" off: the student explores with the bar's own buttons; on again: back with the class.
- An unknown or expired code, a code that is not one, or a room store that does not answer: a notice in the
  reader's language, and the lesson (when the link names one) works on its own.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import streamlit as st

from lab import rooms
from ui import messages, url_state
from ui.i18n import num, t

TEACH = "_room_teacher"  # session: {"code", "secret", "lesson", "step"} of the room this session started
JOINED = "_room_joined"  # session: the code this session follows (kept across page switches)
SEEN = "_room_seen"  # session: whether this run follows the joined room (it answered, or did not answer for now)
FOLLOW = "room_follow"  # the "Following the teacher" toggle
FOLLOWING = "_room_following"  # session: its value, kept outside the widget (a page switch drops widget state)
POLL_S = 1.0  # a student's page follows the teacher within this plus one run


def _teacher_of(code: str | None) -> bool:
    teach = st.session_state.get(TEACH)
    return bool(code and teach and teach["code"] == code)


def _code() -> str | None:
    """The room this session joined: the link's ?room= (checked), or the one joined before a page switch."""
    raw = st.query_params.get("room")
    if raw is None:
        return st.session_state.get(JOINED)
    try:
        code = rooms.normalise(raw)
    except rooms.RoomError as e:
        st.warning(f"{messages.text(e)} `{url_state.shown('room=' + raw)}`")
        st.session_state.pop(JOINED, None)
        return None
    if st.session_state.get(JOINED) != code:
        st.session_state[JOINED], st.session_state[FOLLOWING] = code, True
    return code


def followed() -> tuple[str, int] | None:
    """(lesson, step) of the room this student follows; None for a teacher, outside a room, while exploring, or
    when the room cannot be read (a notice says why)."""
    st.session_state[SEEN] = False
    code = _code()
    if code is None or _teacher_of(code):
        return None
    url_state.put("room", code)
    try:
        room = rooms.store().get(code)
    except rooms.RoomError as e:
        st.warning(messages.text(e) + t(" The lesson, if the link names one, works on its own.",
                                         " A lição, se o link indicar uma, funciona sozinha."))
        # A store that did not answer this time (a loaded Redis past its timeout) may answer at the next poll: the
        # student keeps following. An unknown or expired room is over.
        st.session_state[SEEN] = rooms.passing(e)
        return None
    st.session_state[SEEN] = True
    return (room.lesson, room.step) if st.session_state.get(FOLLOWING, True) else None


def teach(lesson: str, k: int) -> None:
    """The teacher's session: move its room to step k of `lesson` (when it is not there already)."""
    teach = st.session_state.get(TEACH)
    if not teach or teach["lesson"] != lesson or teach["step"] == k:
        return
    try:
        rooms.store().move(teach["code"], teach["secret"], k)
        teach["step"] = k
    except rooms.RoomError as e:
        st.warning(messages.text(e) + t(" The class does not see this step yet.",
                                         " A turma ainda não vê este passo."))


@st.fragment(run_every=POLL_S)
def _poll(code: str, lesson: str, k: int) -> None:
    """Every POLL_S seconds: rerun the app when the room moved away from what this page shows."""
    try:
        room = rooms.store().get(code)
    except rooms.RoomError:
        return  # the next full run says so
    if (room.lesson, room.step) != (lesson, k):
        st.rerun(scope="app")


def follower_bar(lesson, k: int) -> bool:
    """For a student in a room: the following switch (and the poll while it is on); whether the bar's own moves
    are off (they are while following)."""
    code = st.session_state.get(JOINED)
    if code is None or _teacher_of(code) or not st.session_state.get(SEEN):
        return False
    st.session_state[FOLLOW] = st.session_state.get(FOLLOWING, True)
    on = st.toggle(t(f"Following the teacher (room {code})", f"Seguindo o professor (sala {code})"), key=FOLLOW,
                   on_change=_following_changed, help=t("Off: explore on your own. On again: back to the class's step.",
                          "Desligado: explore sozinho. Ligado de novo: volta ao passo da turma."))
    if on:
        _poll(code, lesson.name, k)
    return on


def _following_changed() -> None:
    st.session_state[FOLLOWING] = st.session_state[FOLLOW]


def _start(lesson: str, k: int) -> None:
    """"Start a room" (a callback): a new room on step k; its code and secret kept in this session only."""
    try:
        room, secret = rooms.store().create(lesson, k)
    except rooms.RoomError as e:
        st.session_state["_room_problem"] = messages.text(e)
        return
    st.session_state[TEACH] = {"code": room.code, "secret": secret, "lesson": lesson, "step": k,
                               "expires": room.expires}


def student_link(code: str) -> str:
    """The address students open: this app's own origin with ?room=CODE."""
    url = st.context.url or ""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""
    return f"{origin}/?room={code}"


def qr_svg(link: str) -> str:
    """The link as a QR code, an inline SVG drawn offline (segno)."""
    import segno

    return segno.make(link, error="m").svg_inline(scale=5, border=2, dark="#000", light="#fff", title=link)


def teacher_panel(lesson, k: int) -> None:
    """"Start a room" for the teacher; once started, its code, link, QR code and expiry. Students see nothing."""
    if st.session_state.get(JOINED) and not _teacher_of(st.session_state.get(JOINED)):
        return
    if "_room_problem" in st.session_state:
        st.warning(st.session_state.pop("_room_problem"))
    teach = st.session_state.get(TEACH)
    if not teach or teach["lesson"] != lesson.name:
        st.button(t("Start a room", "Abrir uma sala"), key="room_start", on_click=_start, args=(lesson.name, k),
                  help=t("Students open the link (or the QR code) and follow your steps on their own laptops.",
                         "Os alunos abrem o link (ou o QR code) e seguem os seus passos nos próprios notebooks."))
        return
    link, minutes = student_link(teach["code"]), max(0, int((teach["expires"] - time.time()) // 60))
    with st.container(key="room-panel"):
        code_col, qr_col = st.columns([3, 1])
        code_col.markdown(t(f"Room **`{teach['code']}`**, open for {num(minutes // 60)} h {num(minutes % 60)} min "
                            "more. Students open:", f"Sala **`{teach['code']}`**, aberta por mais {num(minutes // 60)}"
                            f" h {num(minutes % 60)} min. Os alunos abrem:"))
        code_col.markdown(f"[{link}]({link})")
        qr_col.image(qr_svg(link), caption=t("QR code of the students' link", "QR code do link dos alunos"),
                     width=180)  # an SVG image (st.html would strip the <svg>)
