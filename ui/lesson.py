"""Presenting a lesson (lab/lessons.py): `?lesson=NAME&step=K` opens step K, its page and its inputs; a bar above
every page says where the class is and moves it. app.py calls one thing, around the sidebar and the page:

    with lesson.presenting(nav):
        ...sidebar, nav.run()

On the way in (before the sidebar, which holds the model picker), a step that is not yet shown in this session is
applied: the page's inputs reset to their defaults, the step's inputs and the lesson's model put in the URL, and
the step's page opened (st.switch_page). Every move goes through `?step=`: the bar's buttons and a clicker's keys
(PageDown/PageUp, arrow keys when no input has focus) write it, Back/Forward bring an older one back, and a room
(ui/rooms.py) hands its own. On the way out, with the page drawn, the bar is filled in: title, "step K of N",
previous and next, the question for the class, the teacher's note (in presentation mode only with "presenter
notes" on) and, when the reader changed an input or left the step's page, "back to the step".
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import streamlit as st

from lab import lessons, questions
from lab import rooms as store_of
from lab.models import DEFAULT_OFFLINE
from ui import answers, game, messages, presentation, rooms, url_state
from ui.i18n import lang, t
from ui.model_loader import MODEL_KEY
from viz.format import markdown_literal

KEY = "_lesson"  # session: {"name", "shown": the step applied in this session (None: apply again)}
NOTES = "lesson_notes"  # the "presenter notes" toggle
NOTICE = "_lesson_notice"  # session: a notice about the link, shown once by the bar
KEPT = (url_state.PRESENT.name, url_state.ROOM.name)  # parameters a step keeps from the URL; the rest is the step's
BAR_CSS = """<style>
.st-key-lesson-bar { border-bottom: 1px solid rgba(49, 51, 63, 0.2); padding-bottom: 0.25rem; gap: 0.25rem; }
.st-key-lesson-bar [data-testid="stElementContainer"]:has(> [data-testid="stHtml"]:empty) { display: none; }
.st-key-lesson-bar p.lesson-question { margin: 0; font-size: 1.15rem; }
.st-key-lesson-bar [data-testid="stButton"] button p { white-space: nowrap; }
/* the row: each button as wide as its words (never cut to "Próxi…", "M"), the title takes what is left and wraps
   between words, never inside "step 1 of 5"; a second line for the buttons where one row cannot hold them */
.st-key-lesson-row [data-testid="stHorizontalBlock"] { flex-wrap: wrap; row-gap: 0.25rem; }
.st-key-lesson-row [data-testid="stColumn"] { flex: 0 0 auto !important; width: auto !important;
  min-width: 0 !important; max-width: 100%; }
.st-key-lesson-row [data-testid="stColumn"]:first-child { flex: 1 1 14rem !important; }
.st-key-lesson-row [data-testid="stColumn"]:not(:has(button, p, label)) { display: none; }  /* a student's menu */
.st-key-lesson-row [data-testid="stColumn"]:not(:first-child) :is(p, span, div) { white-space: nowrap; }
.st-key-lesson-row [data-testid="stColumn"]:not(:first-child) .stMarkdownEllipsis { overflow: visible;
  text-overflow: clip; }
.st-key-lesson-row .lesson-step { white-space: nowrap; }
</style>"""
KEYS_JS = """<script>
(() => {
  const root = window.parent && window.parent.document ? window.parent : window;
  if (root.__lessonKeys) return;
  root.__lessonKeys = true;
  root.document.addEventListener("keydown", (e) => {
    // arrows belong to whatever has the focus and uses them: a text box, a slider, a list, radio buttons, tabs
    const typing = e.target.closest && e.target.closest(
      "input, textarea, select, [contenteditable=true], [role=slider], [role=listbox], [role=combobox], " +
      "[role=radiogroup], [role=radio], [role=tab], [role=grid]");
    let which = null;
    if (e.key === "PageDown" || (e.key === "ArrowRight" && !typing)) which = "next";
    if (e.key === "PageUp" || (e.key === "ArrowLeft" && !typing)) which = "prev";
    if (!which || e.altKey || e.ctrlKey || e.metaKey || !root.document.querySelector(".st-key-lesson-bar")) return;
    e.preventDefault();
    // wait (10 s at most) while the bar is redrawn by a run (no button) or the app reconnects (Streamlit disables
    // every widget then: a press must not be lost); a step's end (only this button disabled) is not waited on
    let tries = 100;
    const press = () => {
      const button = root.document.querySelector(`.st-key-lesson_${which} button`);
      if (button && !button.disabled) return button.click();
      const all = [...root.document.querySelectorAll(".st-key-lesson-bar button")];
      if ((!button || all.every((b) => b.disabled)) && tries-- > 0) root.__lessonPress = setTimeout(press, 100);
    };
    clearTimeout(root.__lessonPress);  // a newer press replaces one still waiting
    press();
  }, true);
})();
</script>"""


def _problem(lead: str, detail: str) -> None:
    """A warning naming what could not be used (a link's value quoted as url_state quotes it)."""
    st.warning(f"{lead} `{url_state.shown(detail)}`")


def _load(name: str) -> lessons.Lesson | None:
    """The shipped lesson `name`, or a notice (and None)."""
    try:
        return lessons.named(name)
    except lessons.LessonError as e:
        _problem(t("This lesson cannot be opened, so the page shows on its own:",
                   "Esta lição não pode ser aberta; a página aparece sozinha:"), messages.text(e))
        return None


def _step_from_url(lesson: lessons.Lesson, fallback: int) -> int:
    """?step= as a step number (1..N); garbage: the link's notice (naming the step shown) and `fallback`."""
    codec = url_state.step_codec(len(lesson.steps))
    notice = url_state.refusal(url_state.STEP, codec, instead=fallback)
    if notice is not None:  # kept for the bar, which draws it after the step's page is opened (a page switch loses
        st.session_state[NOTICE] = notice  # what this run drew)
    return url_state.read(url_state.STEP, codec, default=fallback)


def step_params(lesson: lessons.Lesson, k: int) -> dict[str, str]:
    """The URL of step k, as the page will write it when its run ends (so that a step is one history entry, and
    Back walks the steps): its inputs, the lesson and step, the model, the language, the mode, the room."""
    kept = {p: v for p, v in url_state.address().items() if p in KEPT}
    return kept | lessons.step_link(lesson, k, lang(), DEFAULT_OFFLINE) | {url_state.MARKER: lesson.steps[k - 1].page}


def _apply(lesson: lessons.Lesson, k: int, here: str) -> None:
    """Show step k: the page's inputs back to their defaults, the step's in the URL, its page opened."""
    step = lesson.steps[k - 1]
    for key in lessons.catalogue().get(step.page, {}):
        url_state.forget(key)
    url_state.arrive_again()  # the page is arrived at again: the URL's values win
    st.session_state[MODEL_KEY] = lesson.model or DEFAULT_OFFLINE
    st.session_state[KEY] = {"name": lesson.name, "shown": k}
    params = step_params(lesson, k)
    if here != step.page:
        st.switch_page(f"app_pages/{step.page}.py", query_params=params)
    url_state.replace(params)  # unless a link of the bar already carries them: writing again is an entry more


def _current(here: str) -> tuple[lessons.Lesson, int] | None:
    """The lesson and step this run shows (applying a step not yet shown), or None outside a lesson."""
    state = st.session_state.get(KEY) or {}
    followed = rooms.followed()  # (lesson, step) of the room this student follows, or None
    name = (followed or (None,))[0] or url_state.read(url_state.LESSON) or state.get("name")
    if name is None:
        return None
    lesson = _load(name)
    if lesson is None:
        st.session_state.pop(KEY, None)
        url_state.put(url_state.LESSON, None)
        url_state.put(url_state.STEP, None)
        return None
    same = state.get("name") == lesson.name
    pending = state.pop("pending", None) if same else None
    k = followed[1] if followed and 1 <= followed[1] <= len(lesson.steps) else None
    if k is None:
        k = pending or _step_from_url(lesson, (state.get("shown") or 1) if same else 1)
        if not pending:
            _skip_the_way(lesson, k, here, state.get("shown") if same else None)
    if not same or state.get("shown") != k:
        _apply(lesson, k, here)
    url_state.put(url_state.LESSON, lesson.name)
    url_state.put(url_state.STEP, k)
    rooms.teach(lesson.name, k)  # the teacher's session moves its room to this step
    return lesson, k


def _skip_the_way(lesson: lessons.Lesson, k: int, here: str, shown: int | None) -> None:
    """Back/Forward onto the entry Streamlit leaves on the way of a page switch (the old page's path with the new
    step's address, which no step is): the browser goes on one more entry, the way it was going (back when it
    leaves step k, forward when it comes to it), and this run stops before it writes anything."""
    if not url_state.history_entry() or lesson.steps[k - 1].page == here:
        return
    way = "back" if shown == k else "forward"
    st.html(f"<script>(window.parent || window).history.{way}();</script>", unsafe_allow_javascript=True)
    st.stop()


@contextlib.contextmanager
def presenting(nav) -> Iterator[bool]:
    """Around the sidebar and the page (app.py): the step applied before, the bar filled in after; gives whether
    the page is withheld (a question whose answer is not revealed yet: app.py then does not run it)."""
    here = nav.url_path or "home"
    shown = _current(here)
    if shown is None:
        yield False
        return
    withheld = answers.veil(*shown)  # a question's answer not revealed yet: the page waits (ui/answers.py)
    box = st.container(key="lesson-bar")
    below = st.container(key="lesson-answers")  # a question's reveal: under the bar (on a projector, see _first)
    try:
        yield withheld
    finally:
        with box:
            bar(*shown, here, below)


def _move(k: int) -> None:
    """Previous/next (a button's callback, or a clicker's key pressing it): step k is applied on this run. Kept in
    the session, not written to the URL here: the step's own address is then the one history entry a move leaves
    on one page (a move to another page leaves two: Streamlit writes the address before it switches)."""
    st.session_state.setdefault(KEY, {})["pending"] = k


def _back(lesson: lessons.Lesson) -> None:
    """"Back to the step": applied again on this run."""
    st.session_state[KEY] = {"name": lesson.name, "shown": None}


def _leave() -> None:
    """Leave the lesson: the bar goes, the page stays as it is."""
    st.session_state.pop(KEY, None)
    for p in (url_state.LESSON, url_state.STEP):
        url_state.put(p, None)


def _changed(lesson: lessons.Lesson, k: int, here: str) -> bool:
    """Whether the reader left the step's page or changed one of its inputs."""
    step = lesson.steps[k - 1]
    return here != step.page or url_state.differs_from(lessons.link_params(step))


def bar(lesson: lessons.Lesson, k: int, here: str, below) -> None:
    """The lesson bar, one row (title and step K of N, previous/next, the room, a menu) and the question: about
    100 px, so that on a projector the step's view starts on the first screen. A student in a room never sees the
    teacher's note; a teacher sees it with "presenter notes" on (on by default outside presentation mode)."""
    n, step = len(lesson.steps), lesson.steps[k - 1]
    if NOTICE in st.session_state:
        st.warning(st.session_state.pop(NOTICE))
    student = rooms.is_student()
    with st.container(key="lesson-row"):  # its columns sized by BAR_CSS: each button as wide as its words
        title, prev, nxt, room, more = st.columns([6, 1.3, 1.3, 2.2, 0.9], vertical_alignment="center")
    title.markdown(f"**{markdown_literal(lesson.title[lang()])}** · <span class=\"lesson-step\">"
                   + t(f"step {k} of {n}", f"passo {k} de {n}") + "</span>", unsafe_allow_html=True)
    with room:
        following = rooms.follower_bar(lesson, k) if student else rooms.room_button(lesson, k)
    if not student:
        with more:
            _menu()
    prev.button(t("← Previous", "← Anterior"), key="lesson_prev", disabled=k == 1 or following,
                on_click=_move, args=(k - 1,), width="stretch")
    nxt.button(t("Next →", "Próximo →"), key="lesson_next", disabled=k == n or following,
               on_click=_move, args=(k + 1,), width="stretch")
    if _changed(lesson, k, here):
        st.button(t("↺ Back to the step", "↺ Voltar ao passo"), key="lesson_back", on_click=_back, args=(lesson,))
    if step.question:
        answers.block(lesson, k, student, below)  # the question, answers under the bar in `below` (ui/answers.py)
    if not student and st.session_state.get(NOTES, not presentation.on()):
        st.caption(t("Teacher's note: ", "Nota para o professor: ") + step.note[lang()])
    if not student:
        rooms.teacher_panel(lesson, k)
    first = _first(step.shows, _revealed(lesson, k, step)) if presentation.on() else ""
    st.html(KEYS_JS + BAR_CSS + first, unsafe_allow_javascript=True)


def _menu() -> None:
    """The teacher's (or a lone reader's) menu in the bar: presenter notes, leaving the lesson."""
    with st.popover(t("More", "Mais"), width="stretch"):
        st.session_state.setdefault(NOTES, not presentation.on())
        st.toggle(t("Presenter notes", "Notas do apresentador"), key=NOTES,
                  help=t("The step's note for the teacher, under the bar. Students in a room never see it.",
                         "A nota do passo para o professor, sob a barra. Os alunos numa sala nunca a veem."))
        st.button(t("Leave the lesson", "Sair da lição"), key="lesson_leave", on_click=_leave, type="tertiary")
        rooms.key_form()  # a teacher taking a room back with its key (ui/rooms.py)


def _revealed(lesson: lessons.Lesson, k: int, step) -> bool:
    """Whether this screen shows the class's reveal of the step's question: the teacher revealed the round (or the
    game's first position), or a reader alone answered (or guessed). Not when a reader alone chose to see the page
    without answering: the page is what they asked for."""
    if not (step.question and questions.answerable(step)):
        return False
    walks = questions.walks(step.question)
    room = rooms.answering(lesson.name)
    if room is not None:
        try:
            return store_of.store().round_of(room[0], questions.walk_key(k, 1) if walks else k).revealed
        except store_of.RoomError:  # the store does not answer now: the bar says so; the view keeps its place
            return False
    mine = st.session_state.get(game.ALONE if walks else answers.ALONE, {}).get(f"{lesson.name}:{k}")
    if walks:
        return any(a is not None for a in (mine or {}).values())
    return mine is not None


def _first(view: str, revealed: bool = False) -> str:
    """On a projector: the bar, the page's title, then the step's view (each of its containers ordered first in its
    own block), then the rest of the page (its inputs and prose) below it; once the class's answer is revealed
    (`revealed`), the reveal (the answer, the class's chart; at the game's end the class's bits beside the model's
    first) between the bar and the title, so that the room sees the result on its first screen as the students'
    laptops do. Before the reveal, and for a reader who skipped the question, the view keeps the first screen. The
    reading order in the page stays the same for a screen reader and the keyboard; only where it is drawn changes."""
    target = f".st-key-{presentation.VIEW_PREFIX}-{view}"
    main = '[data-testid="stMain"]'
    end = '.st-key-lesson-answers [data-testid="stLayoutWrapper"]:has([data-testid="stMetric"])'  # the game's end
    answers_first = f"""{main} [data-testid="stLayoutWrapper"]:has(> .st-key-lesson-answers) {{ order: -3; }}
{end}, {end} + [data-testid="stElementContainer"] {{ order: -1; }}""" if revealed else ""
    return f"""<style>
{main} [data-testid="stLayoutWrapper"]:has(> .st-key-lesson-bar) {{ order: -4; }}
{answers_first}
{main} [data-testid="stMainBlockContainer"] > div > [data-testid="stElementContainer"]:has(h1) {{ order: -2; }}
{main} *:has({target}), {main} {target} {{ order: -1; }}
.stApp h1 {{ font-size: 2.2rem; padding-top: 0; }}
.stApp [data-testid="stMainBlockContainer"] {{ padding-top: 3rem; }}
</style>"""


def shipped() -> list[tuple[str, str]]:
    """(name, title in the UI language) of every shipped lesson that loads (a broken file is left out: `python -m
    lab lesson check` names its problem)."""
    found = []
    for name in lessons.shipped():
        with contextlib.suppress(lessons.LessonError):
            found.append((name, lessons.named(name).title[lang()]))
    return found
