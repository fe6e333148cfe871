"""The guessing game (issue 52): a next-token question with a `passage` walks it position by position, Shannon's
1951 game played beside the lesson's model. lab/questions.py (game, game_play) and lab/guess.py compute every number.

Each position is a whole word of the passage (issue 56: people guess words, so the model is scored on the same
words, the chain of their tokens). Per position the class sees the text so far and types the next word; on the
reveal (the teacher's, or a reader alone's own answer) the true word, the class's guesses and the model's 5 candidate
words are shown (ui/draw/game.py), and the next position opens. After the last: the class's cross-entropy in bits
per word beside the model's (the class's counts read as a probability by lab.guess's add-1/2 rule, stated on the
page) and the share of positions where the class's most common guess was the model's top 1. In a room each position
keeps its answers as its own round, under the room step lab.questions.walk_key(k, j); the teacher's export (in the
reader's spreadsheet format, positions 1..n as on the screen) is the file `python -m lab guess --answers` reads, with
the command shown beside it.
"""

from __future__ import annotations

import json

import streamlit as st

from lab import questions
from lab import rooms as store_of
from lab.guess import MAX_ANSWER
from lab.models import DEFAULT_OFFLINE
from ui import messages, rooms
from ui.cached import questions as cached
from ui.draw import answers as draw
from ui.draw import game as draw_game
from ui.i18n import lang, num, t
from viz.format import markdown_literal

ALONE = "_game_alone"  # session: {"lesson:k": {j: the reader's answer}} outside a room
VALUE = "game_value"  # the answer's widget
NOTICE = "_game_notice"


def _q(question: dict) -> str:
    return json.dumps(question, sort_keys=True, ensure_ascii=False)


def _revealed(lesson, k: int, step, n: int) -> tuple[int, dict[int, dict[str, int]]]:
    """(how many positions are revealed, {j: the answers counted at position j} for those)."""
    room = rooms.answering(lesson.name)
    if room is None:
        mine = st.session_state.get(ALONE, {}).get(f"{lesson.name}:{k}", {})
        return len(mine), {j: ({a: 1} if a else {}) for j, a in mine.items()}
    shown = 0
    while shown < n and store_of.store().round_of(room[0], questions.walk_key(k, shown + 1)).revealed:
        shown += 1
    return shown, {j: store_of.store().answers(room[0], questions.walk_key(k, j)) for j in range(1, shown + 1)}


def done(lesson, k: int, step) -> bool:
    """Whether every position of the walk is revealed on this screen (veil(): the page waits until then)."""
    n = len(cached.game(_q(step.question), lesson.model or DEFAULT_OFFLINE)["positions"])
    return _revealed(lesson, k, step, n)[0] >= n


def block(lesson, k: int, step, model: str, room, below) -> None:
    """The position open now (its text so far, the answer box or the teacher's count and reveal), then in `below`
    the revealed positions and, after the last, the summary."""
    if NOTICE in st.session_state:
        st.warning(st.session_state.pop(NOTICE))
    side = cached.game(_q(step.question), model)
    n = len(side["positions"])
    shown, answers = _revealed(lesson, k, step, n)
    j = shown + 1
    if j <= n:
        st.markdown(t(f"**Position {j} of {n}.** The text so far: ", f"**Posição {j} de {n}.** O texto até aqui: ")
                    + f"“{markdown_literal(side['before'][j - 1])}” …")
        if room is None:
            _form(lesson.name, k, j, None)
            st.button(t("Show the page without playing", "Mostrar a página sem jogar"), type="tertiary",
                      key="game_skip", on_click=_skip, args=(lesson.name, k, n))
        elif room[1] is None:
            _student(room[0], k, j)
        else:
            _teacher(room[0], room[1], k, j)
    if room is not None and room[1] is not None and shown:
        _export(side, answers, step.question, model, f"{room[0].lower()}-step-{k}-guesses.csv")
    if shown:
        played = cached.game_play(_q(step.question), model, json.dumps(answers, sort_keys=True))
        with below:
            draw_game.game(side, played, shown, n)


def _export(side: dict, answers: dict[int, dict[str, int]], question: dict, model: str, name: str) -> None:
    """The teacher's export (the reader's spreadsheet format, positions as on the screen) and the command that
    prints the page's summary from it."""
    st.download_button(t("Answers (CSV, for python -m lab guess)", "Respostas (CSV, para python -m lab guess)"),
                       questions.game_csv(side, answers, lang()), key="game_csv", mime="text/csv", file_name=name)
    with st.expander(t("The same summary from the shell", "O mesmo resumo no terminal")):
        st.code(questions.game_command(question, model, name), language="bash", wrap_lines=True)


def _form(name: str, k: int, j: int, code: str | None) -> None:
    """The answer box for position j: a reader alone checks it at once; a student sends it to the room."""
    with st.form("game_form", border=False, enter_to_submit=True, clear_on_submit=True):
        st.text_input(t("Your guess (the next word)", "Seu palpite (a próxima palavra)"), key=VALUE,
                      max_chars=MAX_ANSWER)
        label = t("Send my guess", "Enviar meu palpite") if code else t("Check my guess", "Conferir meu palpite")
        st.form_submit_button(label, type="primary", on_click=_send, args=(name, k, j, code))


def _skip(name: str, k: int, n: int) -> None:
    """A reader alone leaves the game: every position counts as revealed, with no guess."""
    mine = st.session_state.setdefault(ALONE, {}).setdefault(f"{name}:{k}", {})
    for j in range(1, n + 1):
        mine.setdefault(j, None)


def _send(name: str, k: int, j: int, code: str | None) -> None:
    try:
        from lab.guess import GuessError, clean_answer

        value = clean_answer(st.session_state.get(VALUE) or "")
        if code is None:
            st.session_state.setdefault(ALONE, {}).setdefault(f"{name}:{k}", {})[j] = value
        else:
            store_of.store().answer(code, rooms.who(), questions.walk_key(k, j), value)
    except (GuessError, store_of.RoomError) as e:
        st.session_state[NOTICE] = messages.text(e)


def _student(code: str, k: int, j: int) -> None:
    key = questions.walk_key(k, j)
    now = store_of.store().round_of(code, key)
    rooms.round_shown(code, k, now, key)
    rooms.keep_who()
    mine = store_of.store().mine(code, rooms.who(), key)
    if now.open:
        _form("", k, j, code)
    draw.echo(t("Your guess: ", "Seu palpite: "), mine, t(  # as typed, escaped, never Markdown (issue 56)
        ". You can change it until the teacher reveals.", ". Você pode mudá-lo até o professor revelar.")
        if now.open else ".")


def _reveal(code: str, secret: str, key: int) -> None:
    try:
        store_of.store().reveal(code, secret, key)
    except store_of.RoomError as e:
        st.session_state[NOTICE] = messages.text(e)


def _guessed_words(j: int):
    """The teacher's count of a position's guesses, in words."""
    return lambda n: t(f"**{num(n)} guessed** position {j}",
                       f"**{num(n)} {'palpite' if n == 1 else 'palpites'}** na posição {j}")


def _teacher(code: str, secret: str, k: int, j: int) -> None:
    key = questions.walk_key(k, j)
    count, reveal = st.columns([3, 1.4], vertical_alignment="center")
    with count:
        rooms.answered(code, key, _guessed_words(j))
    reveal.button(t("Reveal", "Revelar"), key="game_reveal", type="primary", on_click=_reveal,
                  args=(code, secret, key), width="stretch")
