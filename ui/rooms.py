"""Rooms in the lesson bar (ui/lesson.py): a teacher starts one, students on `?room=CODE` follow the teacher's step.

- The teacher: "Start a room" creates a room (lab/rooms.py) on the current step; the session keeps the code and
  the secret (never a link). The code, the students' link and its QR code (drawn offline by segno, SVG) and the
  expiry show in the bar; every step the teacher's session shows moves the room.
- A student: `?room=CODE` opens the room's lesson on the teacher's step; a fragment polls the room every
  POLL_S seconds and reruns the app when the teacher moved, so the page and the address (`step=K`) follow.
  "Following the teacher" off: the student explores with the bar's own buttons; on again: back with the class.
- An unknown or expired code, a code that is not one, or a room store that does not answer: a notice in the
  reader's language, and the lesson (when the link names one) works on its own.
- One teacher at a time (issue 56): when the teacher key takes the room back in another tab or browser, the store
  ends this session's hold ("taken_back"). The session finds out on its next run (its step is checked against the
  room before it moves it) or at its count's next tick (every COUNT_S seconds), stops teaching and follows the room
  as a viewer (a student's view, not counted among the students), and says so.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import time
from urllib.parse import urlencode, urlsplit

import streamlit as st

from lab import rooms
from ui import messages, url_state
from ui.i18n import lang, num, t

TEACH = "_room_teacher"  # session: {"code", "secret", "lesson", "step"} of the room this session started
JOINED = "_room_joined"  # session: the code this session follows (kept across page switches)
SEEN = "_room_seen"  # session: whether this run follows the joined room (it answered, or did not answer for now)
FOLLOW = "room_follow"  # the "Following the teacher" toggle
FOLLOWING = "_room_following"  # session: its value, kept outside the widget (a page switch drops widget state)
POLL_S = 1.0  # a student's page follows the teacher within this plus one run
COUNT_S = 2.0  # the teacher's count of students following is read this often
# The teacher's count of answers (a question's round, a guessing game's position) is read this often: not COUNT_S,
# whose tick would fire with it, and ui/runtime_fix.py drops a tick that arrives while another fragment runs
# (measured by the answers bench: the count stuck for 26.4 s). Apart, the two timers drift and lose a tick at most.
ANSWERED_S = 1.3
WHO = "_room_who"  # session: a random id of this browser, counted once among a room's students (no name)
WHO_COOKIE = "lab_who"  # the browser's copy of it, for a reload
COUNTED = "_room_counted"  # session: the teacher's last count of students following
ROUND = "_room_round"  # session: (code, step, round, open, revealed) of the answers round a student's page shows
COOKIE = "lab_room"  # the teacher's browser: "CODE:SECRET" of the room it started, so a reload can take it back
VIEWER = "_room_viewer"  # session: the code of the room it taught until the key took it back elsewhere (it follows)
TAKEN = "_room_taken"  # session: {"code", "secret", "at"} of that take-back, for its notice
TAKEN_S = 60.0  # the notice stays this long (a class moving meanwhile reruns the page; it must not flash by)


def _teacher_of(code: str | None) -> bool:
    teach = st.session_state.get(TEACH)
    return bool(code and teach and teach["code"] == code)


def is_student() -> bool:
    """Whether this session joined a room as a student (a teacher's note is never shown to it)."""
    code = st.session_state.get(JOINED)
    return bool(code) and not _teacher_of(code)


def who() -> str:
    """A random id of this browser (no name): counted once among a room's students, one answer per round. Kept in a
    cookie of this app (WHO_COOKIE), so that a student who reloads the page changes their answer instead of adding
    a second one; a new browser, or a private window, is a new id."""
    if WHO not in st.session_state:
        kept = (st.context.cookies or {}).get(WHO_COOKIE, "")
        st.session_state[WHO] = kept if re.fullmatch(r"[0-9a-f]{16}", kept) else secrets.token_hex(8)
    return st.session_state[WHO]


def keep_who() -> None:
    """Write the student's id to its cookie while the browser has not sent it back (a script: the page's one way)."""
    if (st.context.cookies or {}).get(WHO_COOKIE) != who():
        st.html(f"<script>(window.parent || window).document.cookie = '{WHO_COOKIE}={who()}; path=/; "
                f"max-age={int(rooms.TTL_S)}; SameSite=Strict';</script>", unsafe_allow_javascript=True)


def answering(lesson: str) -> tuple[str, str | None] | None:
    """The room a question on `lesson` is answered in: (code, the secret) for its teacher, (code, None) for a student
    following it; None for a reader alone (no room, a student exploring, a room that cannot be read now)."""
    teach = st.session_state.get(TEACH)
    if teach and teach["lesson"] == lesson:
        return teach["code"], teach["secret"]
    code = st.session_state.get(JOINED)
    if code and not _teacher_of(code) and st.session_state.get(SEEN) and st.session_state.get(FOLLOWING, True):
        return code, None
    return None


def round_shown(code: str, k: int, now, key: int | None = None) -> None:
    """What a student's page shows of step k's answers round (kept in the room under step `key`, k itself unless a
    guessing game's position: lab.questions.walk_key); the poll reruns the page when the room's differs."""
    st.session_state[ROUND] = (code, k, k if key is None else key, now.number, now.open, now.revealed)


def _round_moved(code: str, k: int) -> bool:
    """Whether the teacher closed, revealed or reopened the round this student's page shows."""
    shown = st.session_state.get(ROUND)
    if not shown or shown[:2] != (code, k):
        return False
    now = rooms.store().round_of(code, shown[2])
    round_shown(code, k, now, shown[2])  # the full run this asks for draws it (its own poll then finds nothing new)
    return (now.number, now.open, now.revealed) != shown[3:]


def _code() -> str | None:
    """The room this session joined: the link's ?room= (checked), or the one joined before a page switch."""
    raw = url_state.read(url_state.ROOM)
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
    _taken_notice()
    code = _code()
    if code is None or _teacher_of(code):
        return None
    url_state.put(url_state.ROOM, code)
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
    following = st.session_state.get(FOLLOWING, True)
    if following:
        _seen(code)
    return (room.lesson, room.step) if following else None


def _seen(code: str) -> None:
    """Count this student among the room's followers (a store that does not answer: counted at the next poll); a
    teacher's screen that follows its room since the key took it back elsewhere is not a student."""
    if st.session_state.get(VIEWER) == code:
        return
    try:
        rooms.store().seen(code, who())
    except rooms.RoomError:
        pass


def teach(lesson: str, k: int) -> None:
    """The teacher's session: move its room to step k of `lesson` (when it is not there already; when it is, check
    that this session still holds the room). A room the key took back elsewhere: this session follows it instead."""
    teach = st.session_state.get(TEACH)
    if not teach or teach["lesson"] != lesson:
        return
    try:
        if teach["step"] == k:
            rooms.store().claim(teach["code"], teach["secret"])
            return
        rooms.store().move(teach["code"], teach["secret"], k)
        teach["step"] = k
    except rooms.RoomError as e:
        if isinstance(e, rooms.TakenBack):
            _demote(teach["code"], teach["secret"])
            st.rerun()  # again, as the room's viewer: on the room's step
        if teach["step"] != k:
            st.warning(messages.text(e) + t(" The class does not see this step yet.",
                                             " A turma ainda não vê este passo."))


def _demote(code: str, secret: str) -> None:
    """The teacher key took room `code` back in another session: this one stops teaching it and follows it."""
    st.session_state[TEACH] = None
    st.session_state[JOINED], st.session_state[FOLLOWING], st.session_state[VIEWER] = code, True, code
    st.session_state[TAKEN] = {"code": code, "secret": secret, "at": time.time()}


def _taken_notice() -> None:
    """For a minute after the room was taken back elsewhere: say so (and forget this browser's cookie for it, if it
    is still this session's: another tab of the browser may hold the room now)."""
    taken = st.session_state.get(TAKEN)
    if not taken:
        return
    if time.time() - taken["at"] > TAKEN_S or st.session_state.get(VIEWER) != taken["code"]:
        st.session_state.pop(TAKEN, None)
        return
    if (st.context.cookies or {}).get(COOKIE) == f"{taken['code']}:{taken['secret']}":
        _cookie("")
    st.warning(t(f"Room {taken['code']} was taken back in another tab or on another device: this screen now "
                 "follows it, like a student's.",
                 f"A sala {taken['code']} foi retomada em outra aba ou outro aparelho: esta tela agora a acompanha, "
                 "como a de um aluno."), icon=":material/sync_alt:")


@st.fragment(run_every=POLL_S)
def _poll(code: str, lesson: str, k: int) -> None:
    """Every POLL_S seconds: rerun the app when the room moved away from what this page shows."""
    try:
        room = rooms.store().get(code)
    except rooms.RoomError:
        return  # the next full run says so
    _seen(code)
    try:
        moved = (room.lesson, room.step) != (lesson, k) or _round_moved(code, k)
    except rooms.RoomError:
        return
    if moved:
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
                               "expires": room.expires, "cookie": True}


def student_link(code: str) -> str:
    """The address students open: this app's own origin with ?room=CODE and the teacher's language."""
    url = st.context.url or ""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""
    return f"{origin}/?{urlencode({'room': code, 'lang': lang()})}"


def qr_svg(link: str) -> str:
    """The link as a QR code, an inline SVG drawn offline (segno)."""
    import segno

    return segno.make(link, error="m").svg_inline(scale=5, border=2, dark="#000", light="#fff", title=link)


def _kept() -> tuple[str, str] | None:
    """(code, secret) of a room this browser started before a reload (its cookie), or None."""
    raw = (st.context.cookies or {}).get(COOKIE, "")
    code, _, secret = raw.partition(":")
    return (code, secret) if code and secret and _teacher_of(code) is False and TEACH not in st.session_state else None


def _reclaim(close: bool) -> None:
    """"Take the room back" / "Close it" (callbacks): the cookie's room, checked against the store's hash (a room
    the key took back elsewhere since: this session follows it)."""
    code, secret = _kept() or ("", "")
    try:
        if close:
            st.session_state["_room_forget"] = True
            st.session_state[TEACH] = None
            rooms.store().close(code, secret)
            return
        room = rooms.store().claim(code, secret)
    except rooms.RoomError as e:
        if isinstance(e, rooms.TakenBack):
            _demote(rooms.normalise(code), secret)
            return
        st.session_state["_room_problem"] = messages.text(e)
        st.session_state[TEACH], st.session_state["_room_forget"] = None, True  # over, or not this browser's
        return
    st.session_state[TEACH] = {"code": room.code, "secret": secret, "lesson": room.lesson, "step": room.step,
                               "expires": room.expires}


def room_button(lesson, k: int) -> bool:
    """In the bar's row, for the teacher: start a room, take back the one a reload left, or the room's code and the
    count of students following (its link and QR code folded into it once one has joined)."""
    teach = st.session_state.get(TEACH)
    if (kept := _kept()) is not None:
        st.button(t(f"Take back room {kept[0]}", f"Retomar a sala {kept[0]}"), key="room_reclaim", type="primary",
                  on_click=_reclaim, args=(False,), width="stretch")
    elif not teach or teach["lesson"] != lesson.name:
        st.button(t("Start a room", "Abrir uma sala"), key="room_start", on_click=_start, args=(lesson.name, k),
                  width="stretch", help=t("Students open the link (or the QR code) and follow your steps on their "
                                          "own laptops.", "Os alunos abrem o link (ou o QR code) e seguem os seus "
                                          "passos nos próprios notebooks."))
    else:
        _count(teach["code"])
    return False  # the teacher's own moves stay on


@st.fragment(run_every=COUNT_S)
def _count(code: str) -> None:
    """The room's code and how many students follow; the whole page again when the first joins or the last leaves
    (the panel folds into this popover, or opens again)."""
    teach = st.session_state.get(TEACH)
    try:
        if teach and teach["code"] == code:
            rooms.store().claim(code, teach["secret"])  # still this session's room?
        n = rooms.store().following(code)
    except rooms.RoomError as e:
        if isinstance(e, rooms.TakenBack) and teach:
            _demote(code, teach["secret"])
            st.rerun(scope="app")
        n = st.session_state.get(COUNTED, 0)
    if (n > 0) != (st.session_state.get(COUNTED, 0) > 0):
        st.session_state[COUNTED] = n
        st.rerun(scope="app")
    st.session_state[COUNTED] = n
    label = t(f"Room {code} · {num(n)} following", f"Sala {code} · {num(n)} seguindo")
    if n == 0:
        st.markdown(f"**{label}**")
        return
    with st.popover(label, width="stretch"):
        _panel(st.session_state[TEACH])


def teacher_panel(lesson, k: int) -> None:
    """Under the bar, for the teacher: a reload's notice, a problem; the room's code, link and QR code while no
    student has joined yet (then they fold into the bar's count)."""
    if "_room_problem" in st.session_state:
        st.warning(st.session_state.pop("_room_problem"))
    if (kept := _kept()) is not None:
        st.warning(t(f"This browser started room {kept[0]}, which may still be running: the class may still be "
                     "following it. Take it back (the button above) or close it.",
                     f"Este navegador abriu a sala {kept[0]}, que pode ainda estar aberta: a turma pode ainda estar "
                     "seguindo. Retome-a (o botão acima) ou feche-a."))
        st.button(t(f"Close room {kept[0]}", f"Fechar a sala {kept[0]}"), key="room_close", on_click=_reclaim,
                  args=(True,))
        return
    if st.session_state.pop("_room_forget", False):
        _cookie("")
    teach = st.session_state.get(TEACH)
    if teach and teach.pop("cookie", False):  # the way back after a reload: this browser keeps the room's secret
        _cookie(f"{teach['code']}:{teach['secret']}")
    if teach and teach["lesson"] == lesson.name and st.session_state.get(COUNTED, 0) == 0:
        _panel(teach)


def _cookie(value: str) -> None:
    """Keep `value` (CODE:SECRET; empty: forget it) in this browser for the room's lifetime, for this app only."""
    age = int(rooms.TTL_S) if value else 0
    st.html(f"<script>(window.parent || window).document.cookie = '{COOKIE}={value}; path=/; max-age={age}; "
            "SameSite=Strict';</script>", unsafe_allow_javascript=True)


def _panel(teach: dict) -> None:
    """The room's code, the students' link and its QR code, and how long it stays open."""
    link, minutes = student_link(teach["code"]), max(0, int((teach["expires"] - time.time()) // 60))
    with st.container(key="room-panel"):
        code_col, qr_col = st.columns([3, 1])
        code_col.markdown(t(f"Room **`{teach['code']}`**, open for {num(minutes // 60)} h {num(minutes % 60)} min "
                            "more. Students open:", f"Sala **`{teach['code']}`**, aberta por mais {num(minutes // 60)}"
                            f" h {num(minutes % 60)} min. Os alunos abrem:"))
        code_col.markdown(f"[{link}]({link})")
        with contextlib.suppress(rooms.RoomError):  # a room of the old kind (a long secret) has no typed key
            code_col.download_button(t("Teacher key (a file, keep it)", "Chave do professor (um arquivo, guarde)"),
                                     key_file(teach["code"], teach["secret"]), key="room_key_file",
                                     file_name=f"room-{teach['code'].lower()}-teacher-key.txt", mime="text/plain",
                                     help=t("With it you take the room back from any browser, after a reload or "
                                            "a sleep. It is never shown on screen.",
                                            "Com ela você retoma a sala de qualquer navegador, depois de recarregar "
                                            "ou dormir. Ela nunca aparece na tela."), icon=":material/key:")
        qr_col.image(qr_svg(link), caption=t("QR code of the students' link", "QR code do link dos alunos"),
                     width=180)  # an SVG image (st.html would strip the <svg>)


def key_form() -> None:
    """In the bar's menu: a teacher whose tab, laptop or replica is gone types the room's code and the teacher key
    (the file the panel gave) and takes the room back; answers already given stay."""
    if st.session_state.get(TEACH):
        return
    with st.form("room_take_back", border=False):
        st.text_input(t("Room code", "Código da sala"), key="room_back_code", max_chars=12)
        st.text_input(t("Teacher key", "Chave do professor"), key="room_back_key", max_chars=24, type="password")
        st.form_submit_button(t("Take a room back", "Retomar uma sala"), on_click=_by_key)


def _by_key() -> None:
    """"Take a room back" (a callback): the room, if the key is its teacher's; then its lesson on its step."""
    try:
        room, secret = rooms.store().claim_by_key(st.session_state.get("room_back_code") or "",
                                                  st.session_state.get("room_back_key") or "")
    except rooms.RoomError as e:
        st.session_state["_room_problem"] = messages.text(e)
        return
    st.session_state[TEACH] = {"code": room.code, "secret": secret, "lesson": room.lesson, "step": room.step,
                               "expires": room.expires, "cookie": True}
    st.session_state.pop(VIEWER, None)
    url_state.put(url_state.LESSON, room.lesson)  # a callback: written at once
    url_state.put(url_state.STEP, room.step)


def key_file(code: str, secret: str) -> str:
    """The teacher key as a small text file (downloaded, never drawn: the projector shows the teacher's screen)."""
    key = rooms.teacher_key(secret)
    return (f"Room {code}\nTeacher key: {key}\n\nLost the tab? Open a lesson, then More > Take a room back.\n"
            f"Perdeu a aba? Abra uma lição, depois Mais > Retomar uma sala.\n")


@st.fragment(run_every=ANSWERED_S)
def answered(code: str, step: int, say) -> None:
    """How many students answered the current round of the room's `step` (a lesson step, or a guessing game's
    position: lab.questions.walk_key), in the words `say(n)` gives; read every ANSWERED_S seconds."""
    try:
        n = rooms.store().answered(code, step)
    except rooms.RoomError:
        return
    st.markdown(say(n))
