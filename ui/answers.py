"""A step's question, answered by the class (issue 52; lab/questions.py computes the model's side, lab/rooms.py keeps
the rounds). Drawn by the lesson bar (ui/lesson.py) under the step's title:

- In a room, a student answers above the view (one answer per round, changeable until the teacher closes the round);
  the teacher sees how many answered, closes, reveals, opens a second round ("vote again") and downloads each
  round as CSV. On reveal every screen shows the class's answers beside the model's (both rounds side by side).
- Until the reveal, the step's view is hidden on every screen of the room where it would give the answer away (a
  question with a known answer: the model's next token, a computed or stated right option, a true number): the
  teacher's screen too, since the projector shows it.
- A reader alone (no room, or a student exploring on their own) answers for themself and sees the model's side at
  once, as a reveal.

Answers are anonymous: the room's store keeps a random id of each browser session (ui.rooms.who), and counts only
leave it.
"""

from __future__ import annotations

import html
import json

import streamlit as st

from lab import questions
from lab import rooms as store_of
from lab.errors import LabError
from lab.guess import MAX_ANSWER
from lab.models import DEFAULT_OFFLINE
from ui import game, messages, rooms
from ui.cached import questions as cached
from ui.draw import answers as draw
from ui.i18n import lang, num, t

ALONE = "_answers_alone"  # session: {"lesson:k": the reader's own answer} outside a room
NOTICE = "_answers_notice"  # session: a refusal (an answer that cannot be one, a closed round), shown once
VALUE = "answer_value"  # the answer's widget
VEILED = "_answers_veiled"  # session: whether this run withheld the step's page (veil), for the bar's line
TYPED = "_answers_typed"  # session: {"code:k" in a room, "lesson:k" alone: {an answer kept: the text as typed}}


def block(lesson, k: int, student: bool, below) -> None:
    """The step's question; where it is answerable, the answer box, the teacher's controls and, revealed, the
    class's answers beside the model's (in `below`: a container under the bar; on a projector it follows the step's
    view, which keeps the first screen, ui/lesson.py)."""
    step = lesson.steps[k - 1]
    st.html('<p class="lesson-question"><b>' + html.escape(t("Question for the class:", "Pergunta para a turma:"))
            + "</b> " + html.escape(step.question[lang()]) + "</p>")
    if not questions.answerable(step):
        return
    if NOTICE in st.session_state:
        st.warning(st.session_state.pop(NOTICE))
    model = lesson.model or DEFAULT_OFFLINE
    try:
        room = rooms.answering(lesson.name)
        if questions.walks(step.question):  # the guessing game: a passage walked position by position
            game.block(lesson, k, step, model, room, below)
            return
        side = _side(step.question, model)
        if room is None:
            _alone(lesson, k, step, model, side, below)
            return
        _in_room(*room, k, step, model, side, below)
    except LabError as e:  # a question, a guess, a room, a model this demo does not offer: the reader is told
        st.warning(messages.text(e))


def _side(question: dict, model: str, rounds: dict[int, dict[str, int]] | None = None) -> dict:
    """The model's side (cached), with a next-token question's answers of every round scored."""
    answers = sorted({a for counts in (rounds or {}).values() for a in counts}) if question["kind"] == "next-token" \
        else ()
    return cached.side(json.dumps(question, sort_keys=True, ensure_ascii=False), model, tuple(answers))


def known(side: dict) -> bool:
    """Whether the question has an answer the step's view would give away: the model's next token, a true number, a
    right option (stated or computed); not an opinion."""
    return side["kind"] != "choice" or side.get("right") is not None


def _in_room(code: str, secret: str | None, k: int, step, model: str, side: dict, below) -> None:
    """A student's answer box or the teacher's controls, then the reveal (or the view hidden until it)."""
    now = store_of.store().round_of(code, k)
    rounds = _rounds(code, k, now.number) if now.revealed or not now.open else {}
    if rounds:
        side = _side(step.question, model, rounds)
    if secret is None:
        rooms.round_shown(code, k, now)
        rooms.keep_who()
        _student(code, k, step.question, now)
    else:
        _teacher(code, secret, k, step.question, now, side, rounds)
    if now.revealed:
        with below:
            draw.results(step.question, side, rounds)
    elif known(side):
        _hide(step.page)


def _rounds(code: str, k: int, upto: int) -> dict[int, dict[str, int]]:
    """Each round's counts so far ({} where the store does not answer now: the next run draws them)."""
    try:
        return {n: store_of.store().answers(code, k, n) for n in range(1, upto + 1)}
    except store_of.RoomError:
        return {}


def _input(question: dict) -> None:
    """The answer's widget: the options as radio buttons, or a text box (a token, a word, a number)."""
    if question["kind"] == "choice":
        labels = [o[lang()] for o in question["options"]]
        st.radio(t("Your answer", "Sua resposta"), [str(i) for i in range(1, len(labels) + 1)], index=None,
                 key=VALUE, format_func=lambda i: labels[int(i) - 1])
        return
    hint = (t("the next word or token", "a próxima palavra ou token") if question["kind"] == "next-token"
            else t("a number", "um número"))
    st.text_input(t(f"Your answer ({hint})", f"Sua resposta ({hint})"), key=VALUE, max_chars=MAX_ANSWER)


def _shown_answer(question: dict, value: str | None, typed: str) -> str | None:
    """An answer as the reader reads it back (plain text; ui.draw.answers.echo escapes it): an option's words, or
    the text as this reader typed it when the answer kept is still that text's ("3,5" stays "3,5"), else the answer
    kept (a number in the reader's decimal mark). None: no answer."""
    if value is None or not value.strip():
        return None
    if question["kind"] == "choice":
        return question["options"][int(value) - 1][lang()]
    raw = st.session_state.get(TYPED, {}).get(typed, {}).get(value)
    if raw is not None:
        return raw
    return value.replace(".", ",") if question["kind"] == "number" and lang() == "pt" else value


def _typed(where: str, question: dict) -> str:
    """The answer box's text cleaned by lab (QuestionError), kept with the text as typed under `where`."""
    raw = st.session_state.get(VALUE) or ""
    value = questions.clean(question, raw)
    st.session_state.setdefault(TYPED, {}).setdefault(where, {})[value] = raw.strip() if isinstance(raw, str) else value
    return value


def _send(code: str, k: int, question: dict) -> None:
    """"Send my answer" (a callback): the answer cleaned by lab, then kept in the room's current round."""
    try:
        store_of.store().answer(code, rooms.who(), k, _typed(f"{code}:{k}", question))
    except (questions.QuestionError, store_of.RoomError) as e:
        st.session_state[NOTICE] = messages.text(e)


def _student(code: str, k: int, question: dict, now) -> None:
    """A student's answer box while the round is open; their answer, kept or final, after."""
    try:
        mine = store_of.store().mine(code, rooms.who(), k)
    except store_of.RoomError:
        mine = None
    if now.open:
        with st.form("answer_form", border=False, enter_to_submit=True):
            _input(question)
            st.form_submit_button(t("Send my answer", "Enviar minha resposta"), on_click=_send,
                                  args=(code, k, question), type="primary")
        draw.echo(t(f"Round {now.number}. Your answer: ", f"Rodada {now.number}. Sua resposta: "),
                  _shown_answer(question, mine, f"{code}:{k}"), t(
                      ". You can change it until the teacher closes the round.",
                      ". Você pode mudá-la até o professor fechar a rodada."), question["kind"] != "choice")
    else:
        draw.echo(t(f"Round {now.number} is closed. Your answer: ", f"A rodada {now.number} está fechada. Sua "
                    "resposta: "), _shown_answer(question, mine, f"{code}:{k}"), "." if now.revealed else t(
                        ". The teacher reveals the answer next.", ". O professor revela a resposta em seguida."),
                  question["kind"] != "choice")


def _answered_words(number: int):
    """The teacher's count of a round's answers, in words."""
    return lambda n: t(f"**{num(n)} answered** · round {number}",
                       f"**{num(n)} {'respondeu' if n == 1 else 'responderam'}** · rodada {number}")


def _control(action: str, code: str, secret: str, k: int) -> None:
    """The teacher's buttons (callbacks): close the round, reveal, vote again."""
    try:
        getattr(store_of.store(), action)(code, secret, k)
    except store_of.RoomError as e:
        st.session_state[NOTICE] = messages.text(e)


def _teacher(code: str, secret: str, k: int, question: dict, now, side: dict, rounds: dict) -> None:
    """The teacher's row: the count, close / reveal / vote again, and each round as CSV once closed."""
    count, close, reveal, again, export = st.columns([2.2, 1.3, 1.3, 1.3, 1.6], vertical_alignment="center")
    with count:
        rooms.answered(code, k, _answered_words(now.number))
    close.button(t("Close the round", "Fechar a rodada"), key="answers_close", disabled=not now.open,
                 on_click=_control, args=("close_round", code, secret, k), width="stretch")
    reveal.button(t("Reveal", "Revelar"), key="answers_reveal", disabled=now.revealed, type="primary",
                  on_click=_control, args=("reveal", code, secret, k), width="stretch")
    again.button(t("Vote again", "Votar de novo"), key="answers_again", disabled=now.open or now.number >= 2,
                 on_click=_control, args=("again", code, secret, k), width="stretch",
                 help=t("A second round: the class discusses, then answers again; both rounds are shown.",
                        "Uma segunda rodada: a turma discute e responde de novo; as duas rodadas aparecem."))
    if not now.open:
        export.download_button(t("Answers (CSV)", "Respostas (CSV)"), key="answers_csv", width="stretch",
                               data=questions.csv_text(question, rounds, side, lang()),
                               file_name=f"{code.lower()}-step-{k}-answers.csv", mime="text/csv")


def _alone(lesson, k: int, step, model: str, side: dict, below) -> None:
    """A reader on their own: answer, then the model's side at once (again: answer anew)."""
    key, mine = f"{lesson.name}:{k}", st.session_state.setdefault(ALONE, {})
    if key not in mine:
        with st.form("answer_form", border=False, enter_to_submit=True):
            _input(step.question)
            st.form_submit_button(t("Check my answer", "Conferir minha resposta"), on_click=_check,
                                  args=(key, step.question), type="primary")
        if known(side):
            _hide(step.page)
            st.button(t("Show the page without answering", "Mostrar a página sem responder"), type="tertiary",
                      key="answers_skip", on_click=mine.__setitem__, args=(key, None))
        return
    said, again = st.columns([4, 1], vertical_alignment="center")  # one row: the bar stays short on a projector
    draw.echo(t("Your answer: ", "Sua resposta: "), _shown_answer(step.question, mine[key], key), "",
              step.question["kind"] != "choice", said)
    again.button(t("Answer again", "Responder de novo"), key="answers_alone_again", on_click=mine.pop, args=(key, None),
                 type="tertiary")
    rounds = {1: {mine[key]: 1}} if mine[key] is not None else {}
    with below:
        draw.results(step.question, _side(step.question, model, rounds), rounds)


def _check(key: str, question: dict) -> None:
    try:
        st.session_state[ALONE][key] = _typed(key, question)
    except questions.QuestionError as e:
        st.session_state[NOTICE] = messages.text(e)


def veil(lesson, k: int) -> bool:
    """Before the page (ui/lesson.py): whether the step's page is withheld, as it is while its question's answer is
    not revealed on this screen (any of its views may give it away: the sampling page's text and its distribution
    both show the next token). Withheld, not hidden: the page does not run, so nothing of it reaches the browser
    (a style hiding it came about a second after the views in a fresh Chromium, and a page's source would show it)."""
    step = lesson.steps[k - 1]
    try:
        hidden = bool(step.question) and questions.answerable(step) and _unrevealed(lesson, k, step)
    except LabError:  # the bar says why
        hidden = False
    st.session_state[VEILED] = hidden
    return hidden


def _unrevealed(lesson, k: int, step) -> bool:
    """Whether the step's question has a known answer that this screen has not been shown yet."""
    if questions.walks(step.question):
        return not game.done(lesson, k, step)
    if not known(_side(step.question, lesson.model or DEFAULT_OFFLINE)):
        return False
    room = rooms.answering(lesson.name)
    if room is None:
        return f"{lesson.name}:{k}" not in st.session_state.get(ALONE, {})
    return not store_of.store().round_of(room[0], k).revealed


def _hide(page: str) -> None:
    """The line saying that the page waits for the reveal (veil() withheld it)."""
    if st.session_state.get(VEILED):
        st.info(t("The page appears when the answer is revealed.", "A página aparece quando a resposta for revelada."),
                icon=":material/visibility_off:")
