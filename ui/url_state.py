"""Shareable links: every page input lives in the URL's query string (?attn_layer=3&samp_seed=7).

A page calls `bind(key, default, codec)` just before drawing the widget `key`; the parameter's name
is the widget key, so pages never collide. A link carries the page's own inputs (Streamlit drops the
query string on a page switch; ?lang= and ?model= belong to the sidebar). Which value the widget gets:

- the page was just arrived at (another page before, or a teacher's link): a value in the URL wins;
  without one, the value this session last had on the page (inputs survive page switches), else the
  default;
- browser back/forward (Streamlit marks that run) to an entry this page wrote, or the URL changed
  while the widget did not: the URL wins, and a missing parameter means the default (but a text too
  long to travel in a link stays as it is: Back never throws away what the reader pasted);
- otherwise the widget's own value (what the reader just did).

Every URL a page writes says so (?view=attention). A page switch leaves history entries on the way
that carry none of the page's inputs (the sidebar writes ?lang= and ?model= again, and Streamlit
moves the path); Back onto one of those keeps the view as it was instead of resetting it to defaults.
A link the app draws to one of its pages (`link(path)` for `st.page_link`) carries what that page's
arrival will write, so it leaves no such entry: one click, one Back.

A URL value that cannot be used (garbage, unknown option, out of the range this model or text
allows) gives the default and a notice naming what was ignored; a session value that went out of
range (another model) quietly gives the default. Nothing a URL says can raise.

The URL is written once per run, at its end (`publishing()` around the page, in app.py): one browser
history entry per change, so Back walks through views one at a time (Streamlit pushes a history entry
whenever a run changes the query string). Values equal to their default are left out (short links),
and so is a text longer than MAX_LINK_TEXT (a caption says so). Without `publishing()` (a page run on
its own) each bind writes its parameter at once.
The app's own parameters (not page inputs) are declared here too, once each, as a `Param` (name, codec, default):
?lang=, ?model=, ?present=, ?lesson=, ?step=, ?room= and ?view=. No other module touches `st.query_params`
(tests/test_structure.py): they `read(param)` (the default when the address has none or one that cannot be used),
`check(param)` or `refusal(param)` for the notice a page input's bad value gets, and `put(param, value)` (written
by the codec with the page's inputs). `address()` and `replace(params)` are the whole query string, for a lesson's
step and the lesson maker.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import streamlit as st

from lab.lessons import MAX_STEPS
from lab.link_codec import MAX_LINK_TEXT, Codec, LinkValueError, choice, integer, read_boolean, text
from lab.models import DEFAULT_OFFLINE
from ui import messages
from ui.i18n import LANGUAGES, lang, num, t
from ui.streamlit_internals import Rerun, run_context

DEFAULTS = "_url_defaults"  # session key: {widget key: its default at the last bind}, for _following
STATE = "_url_state"  # session key: {"page": script hash, "wrote": {key: URL text or None}}
INPUTS = "_url_inputs"  # session key: {page url path: {widget key: (codec, default)}}, every input a page has bound
SHOWN_CHARS = 40  # characters of an ignored value the notice quotes
EMBED = ("embed", "embed_options")  # Streamlit's own parameters: never rewritten here


@dataclass(frozen=True)
class Param:
    """A query parameter the app's own code reads and writes (a page input is declared by `bind` instead): its name,
    how its link text reads and writes (a lab/link_codec.py codec), and what stands when the address has none or
    one that cannot be used (None: the parameter is simply absent)."""

    name: str
    codec: Codec
    default: Any = None


def _switch() -> Codec:
    """An on/off parameter read by the codec's boolean rule (true/false, 1/0, yes/no, on/off) and written 1 (the
    presentation links teachers already share say ?present=1; off is left out of the address)."""
    return Codec(read_boolean, lambda v: "1" if v else "0", lambda v: isinstance(v, bool), kind="boolean")


ANY_TEXT = text(10**9)  # a name whose own module judges it and words the refusal (a model, a lesson, a room's code)
LANG = Param("lang", choice(LANGUAGES))  # absent or unusable: the browser's language (ui.i18n.lang)
MODEL = Param("model", ANY_TEXT, DEFAULT_OFFLINE)  # the registry's names; the sidebar refuses the others out loud
PRESENT = Param("present", _switch(), False)
LESSON = Param("lesson", ANY_TEXT)  # a shipped lesson's name (lab.lessons.named refuses the others)
STEP = Param("step", integer(1, MAX_STEPS), 1)  # within one lesson: step_codec(its number of steps)
ROOM = Param("room", ANY_TEXT)  # a room's code (lab.rooms.normalise refuses the others)
VIEW = Param("view", ANY_TEXT)  # the page that wrote this URL (its url path, e.g. "attention")
MARKER = VIEW.name
CARRIED = (LANG.name, MODEL.name, PRESENT.name)  # the sidebar's parameters: a link to another page carries them


class _Run:
    """What one script run has bound (written at its end) and the notice it shows."""

    def __init__(self):
        self.bound: dict[str, tuple[Any, Codec]] = {}
        self.extra: dict[str, str | None] = {}  # the sidebar's parameters (lang, model, present): value or None
        self.ignored: list[str] = []
        self.box = None


_run: contextvars.ContextVar[_Run | None] = contextvars.ContextVar("url_state_run", default=None)


@contextlib.contextmanager
def publishing() -> Iterator[None]:
    """Around the page's run (app.py): write every bound input to the URL once, when the run ends
    (st.stop() included); a run cut short by a rerun writes nothing, the next one will."""
    token = _run.set(_Run())
    _state()  # notes the page, even one that binds nothing (home): the next page is then an arrival
    try:
        yield
    except Rerun:
        raise
    except BaseException:
        publish()
        raise
    else:
        publish()
    finally:
        _run.reset(token)


def bind(key: str, default, codec: Codec):
    """Call just before drawing the widget `key`: give it the value the URL or the session asks for
    (see the module docstring and decide()), keep it across page switches, and have it written to the URL."""
    state = _state()
    wrote = state["wrote"]
    raw = st.query_params.get(key)
    current = _following(key, default, _current(key, default, codec))
    history = _history_navigation()
    ours = history and st.query_params.get(MARKER) == _page_name()  # Back/Forward to an entry this page wrote
    _source, value, error = decide(raw, key not in wrote, wrote.get(key), history, ours, current, default, codec)
    if error is not None:
        _ignore(key, raw, error, codec.format(default) if codec.kind != "text" else None)
    # Written only when needed: a write sends the value back to the browser, over whatever the visitor typed or
    # pressed while this run was going (a key press lost). Needed when the widget is new to this run, when the
    # value changes, and when its range or options changed (the sampling page's "New tokens" after a longer
    # prompt): Streamlit then draws a new widget, which would start at its minimum. A language switch relabels
    # every widget, a new widget too (the stride's select_slider jumped to its first stop): written then as well.
    shapes, shape = state.setdefault("shapes", {}), (codec.shape, lang())
    if key not in st.session_state or not _same(st.session_state[key], value) or shapes.get(key) != shape:
        st.session_state[key] = value
    shapes[key] = shape
    st.session_state[_saved(key)] = value
    st.session_state.setdefault(INPUTS, {}).setdefault(_page_name(), {})[key] = (codec, default)  # for lessons
    _too_long_note(value, codec)
    run = _run.get()
    if run is None:
        _write({key: (default, codec)})
    else:
        run.bound[key] = (default, codec)
    return value


def decide(raw: str | None, arrived: bool, wrote: str | None, history: bool, ours: bool, current, default,
           codec: Codec) -> tuple[str, Any, LinkValueError | None]:
    """Which value an input gets, and from where (pure: bind() gathers the facts):
    ("address", the link's value, None), ("default", default, the link value's error or None) or ("session",
    `current`, None). `raw`: the address's text for it (None: absent); `arrived`: the page was just arrived at
    (nothing written for it since); `wrote`: what the page last wrote for it; `history`: Back/Forward started
    the run, `ours`: to an entry this page wrote; `current`: the session's value (the widget's, else the one kept
    when its page was left, else the default).

    Arrival: a link that carries the value wins (on an entry this page wrote, a missing value is the default).
    Later: Back/Forward to an entry of this page, or an address that moved while the widget stayed where this
    page left it, wins; otherwise the session does. A text too long for any link is never reset by an entry
    that lacks it (no entry ever carried it)."""
    if arrived:
        from_address = raw is not None or ours
    else:
        from_address = ours or (not history and raw != wrote and _url_text(current, default, codec) == wrote)
    if not from_address or (raw is None and isinstance(current, str) and codec.format(current) is None):
        return "session", current, None
    if raw is None:
        return "default", default, None
    try:
        return "address", codec.parse(raw), None
    except LinkValueError as e:
        return "default", default, e


def forget(key: str) -> None:
    """Forget what this session holds for the input `key` (the widget's value and the one kept for its page's
    next visit): it starts again from the link, else its default (a lesson's step; a new text for the lens)."""
    st.session_state.pop(key, None)
    st.session_state.pop(_saved(key), None)


def cap(key: str, most) -> None:
    """Lower what this session holds for the input `key` (shown now, or kept for its page's next visit) to
    `most` where it is above it (the sampling page's length, when a longer prompt leaves less room)."""
    for name in (key, _saved(key)):
        if st.session_state.get(name, most) > most:
            st.session_state[name] = most


def arrive_again() -> None:
    """Have the running page's next bind treat it as just arrived at: the address's values win (a lesson's step
    applied on the page it already shows)."""
    if STATE in st.session_state:
        st.session_state[STATE]["page"] = None


def _saved(key: str) -> str:
    """The session key under which the value of the input `key` is kept while its page is not shown."""
    return f"{key}_saved"


def link(path: str) -> dict[str, str]:
    """The query string a link to the page `path` ("app_pages/attention.py") carries for `st.page_link`: what
    that page's arrival run would write (the sidebar's parameters, ?view=, this session's inputs of that page
    that are not their defaults). The arrival then leaves the URL as it is, so a click is one browser history
    entry and one Back returns. A bare link is two: Streamlit pushes one for the new path, then another when
    the run writes its query string, and Back onto the bare entry changes nothing (measured in Chromium)."""
    run = _run.get()
    params = {k: v for k, v in (run.extra if run is not None else {}).items() if k in CARRIED and v is not None}
    name = _name_of(path)
    params[MARKER] = name
    for key, (codec, default) in st.session_state.get(INPUTS, {}).get(name, {}).items():
        written = _url_text(_current(key, default, codec), default, codec)
        if written is not None:
            params[key] = written
    return params


def _name_of(path: str) -> str:
    """The url path (as ?view= writes it) of the page whose script is `path`."""
    ctx = run_context()
    for info in (ctx.pages_manager.get_pages().values() if ctx is not None else ()):
        if str(info.get("script_path", "")).endswith(path):
            return _url_name(info, "")
    return path.rsplit("/", 1)[-1].removesuffix(".py")


def _url_name(info: dict, fallback: str) -> str:
    """A page's name in ?view=: its url path, else its name (the default page has no path), else `fallback`."""
    return info.get("url_pathname") or info.get("page_name") or fallback


def publish() -> None:
    """Write this run's bound inputs to the URL in one change (their values as the run left them)."""
    run = _run.get()
    if run is not None and (run.bound or run.extra):
        _write(run.bound, run.extra)
        run.bound, run.extra = {}, {}


def differs_from(params: dict[str, str]) -> bool:
    """Whether an input this run bound holds another value than `params` (link texts) give it, an input they
    leave out counting as its default: the lesson bar's "back to the step"."""
    run = _run.get()
    for key, (default, codec) in (run.bound if run is not None else {}).items():
        try:
            wanted = codec.parse(params[key]) if key in params else default
        except LinkValueError:
            wanted = default
        if not _same(st.session_state.get(key, default), wanted):
            return True
    return False


def put(param: Param, value) -> None:
    """Set (or, with None, remove) one of the app's own parameters (?lang=, ?model=, ?present=, ?lesson=, ?step=,
    ?room=), its value written by the parameter's codec. Written with the page's inputs at the end of the run, so one
    change is one history entry; at once outside a run (a button's callback)."""
    value = None if value is None else param.codec.format(value)
    run = _run.get()
    if run is None:
        if value is None:
            st.query_params.pop(param.name, None)
        elif st.query_params.get(param.name) != value:
            st.query_params[param.name] = value
    else:
        run.extra[param.name] = value


def _parsed(param: Param, codec: Codec | None) -> tuple[Any, LinkValueError | None, str | None]:
    """(value, error, text) of the address's `param`: text None when absent, error when its codec refuses it."""
    raw = st.query_params.get(param.name)
    if raw is None:
        return None, None, None
    try:
        return (codec or param.codec).parse(raw), None, raw
    except LinkValueError as e:
        return None, e, raw


_DECLARED = object()  # read's and refusal's "the parameter's declared default"


def read(param: Param, codec: Codec | None = None, default=_DECLARED):
    """The address's value for `param`, read by its codec (or a narrower `codec`: one lesson's steps); `default`
    (the declared one unless given) when the address has none or one that cannot be used (`refusal` says why)."""
    value, error, raw = _parsed(param, codec)
    if raw is None or error is not None:
        return param.default if default is _DECLARED else default
    return value


def refusal(param: Param, codec: Codec | None = None, instead=_DECLARED) -> str | None:
    """The notice a page input's unusable link value gets, for `param`'s (None when the address's value is usable
    or absent), naming what is shown `instead` (the declared default unless given; None names nothing)."""
    _value, error, raw = _parsed(param, codec)
    if error is None:
        return None
    shown_instead = param.default if instead is _DECLARED else instead
    written = None if shown_instead is None else (codec or param.codec).format(shown_instead)
    return notice_text([_item(param.name, raw, error, written)])


def check(param: Param, codec: Codec | None = None, instead=_DECLARED) -> None:
    """For a parameter its own code reads (the sidebar's ?lang=, ?present=): the notice, where this is called, when
    the address's value is unusable (that code then reads the default, and the next URL drops the value)."""
    notice = refusal(param, codec, instead)
    if notice is not None:
        st.warning(notice)


def step_codec(steps: int) -> Codec:
    """?step= within a lesson of `steps` steps: 1..steps."""
    return integer(1, steps)


def address() -> dict[str, str]:
    """The query string as it stands, one text per parameter (the last, where one is repeated; Streamlit's embed
    parameters left out): what a view's link carries (the lesson maker's "Add this view")."""
    return st.query_params.to_dict()


def replace(params: dict[str, str]) -> None:
    """Make the query string `params` at once (a lesson's step), leaving it as it is when it already says that (a
    link of the lesson bar already carries them: writing again would be one history entry more)."""
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)


def _state() -> dict:
    """This session's link bookkeeping; what it wrote is forgotten when the page changes."""
    state = st.session_state.setdefault(STATE, {"page": None, "wrote": {}})
    page = _page()
    if state["page"] != page:
        state["page"], state["wrote"] = page, {}
    return state


def _page() -> str:
    """The running page's script hash ("" outside a Streamlit run)."""
    ctx = run_context()
    return ctx.page_script_hash if ctx is not None else ""


def _page_name() -> str:
    """The running page's url path ("attention"), as the marker parameter writes it."""
    ctx = run_context()
    if ctx is None:
        return ""
    return _url_name(ctx.pages_manager.get_pages().get(ctx.page_script_hash, {}), ctx.page_script_hash[:8])


def _history_navigation() -> bool:
    """Whether the browser's Back or Forward button started this run."""
    ctx = run_context()
    return bool(getattr(ctx, "is_history_navigation", False))


def history_entry() -> bool:
    """Whether Back/Forward brought the reader to an entry a page wrote whole (it has ?view=): the sidebar's
    model, language and presentation mode then follow the URL too. Entries left on the way of a page switch
    have no ?view= and change nothing."""
    return _history_navigation() and MARKER in st.query_params


def _following(key: str, default, current):
    """The value, moved to a new default (the UI language's own default text) when it still was the old one:
    a language switch changes words only, never what the reader typed or chose."""
    defaults = st.session_state.setdefault(DEFAULTS, {})  # kept across pages: the switch may happen elsewhere
    before = defaults.get(key, default)
    defaults[key] = default
    if not _same(before, default) and _same(current, before):
        return default
    return current


def _current(key: str, default, codec: Codec):
    """The widget's value in this session (or the one saved when its page was left), if still valid."""
    if key in st.session_state:
        value = st.session_state[key]
    else:
        value = st.session_state.get(_saved(key), default)
    return value if codec.accepts(value) else default


def _url_text(value, default, codec: Codec) -> str | None:
    """What the URL should say for value: None (left out) for the default or a value that cannot travel."""
    if _same(value, default) or not codec.accepts(value):
        return None
    return codec.format(value)


def _write(bound: dict[str, tuple[Any, Codec]], extra: dict[str, str | None] | None = None) -> None:
    """Put the bound keys' session values (and `extra`'s parameters) in the URL, in one change, and remember
    what was written."""
    wrote = _state()["wrote"]
    params = {k: st.query_params.get_all(k) for k in st.query_params if k.lower() not in EMBED}
    new = dict(params) | {MARKER: [_page_name()]}
    for key, value in (extra or {}).items():
        if value is None:
            new.pop(key, None)
        else:
            new[key] = [value]
    for key, (default, codec) in bound.items():
        wrote[key] = _url_text(st.session_state.get(key, default), default, codec)
        if wrote[key] is None:
            new.pop(key, None)
        else:
            new[key] = [wrote[key]]
    if new != params:
        st.query_params.from_dict({k: v[0] if len(v) == 1 else v for k, v in new.items()})


def _same(a, b) -> bool:
    """a == b for values of one type (a slider's 0.9000000000000001 is its default 0.9)."""
    try:
        if isinstance(a, float) and isinstance(b, float):
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001  (an exotic value never breaks a page)
        return False


def _too_long_note(value, codec: Codec) -> None:
    """A caption when a text is too long to travel in a link."""
    if isinstance(value, str) and codec.format(value) is None:
        st.caption(t(f"This text is {num(len(value))} characters, more than a link carries ({num(MAX_LINK_TEXT)}): "
                     "a shared link of this page opens its default text.",
                     f"Este texto tem {num(len(value))} caracteres, mais do que um link leva ({num(MAX_LINK_TEXT)}): "
                     "um link compartilhado desta página abre o texto padrão."))


def _item(key: str, raw: str, e: LinkValueError, instead: str | None = None) -> str:
    """One ignored value as the notice lists it: `key=raw` (shortened), why, and what the page shows instead (its
    link text; None for a text's default, which may be long: "its default")."""
    more = t(f", {num(len(raw))} characters", f", {num(len(raw))} caracteres") if len(raw) > SHOWN_CHARS else ""
    if instead is None:
        showing = t(", showing its default instead", ", mostrando o padrão no lugar")
    else:
        showing = t(", showing ", ", mostrando ") + f"`{shown(instead)}`" + t(" instead", " no lugar")
    return f"`{key}={shown(raw)}` ({messages.text(e)}{more}){showing}"


def _ignore(key: str, raw: str, e: LinkValueError, instead: str | None = None) -> None:
    """Add `key=raw` to this run's notice of ignored link values (drawn where the first one was met), with the
    value shown instead."""
    item = _item(key, raw, e, instead)
    run = _run.get()
    if run is None:
        st.warning(notice_text([item]))
        return
    run.ignored.append(item)
    if run.box is None:
        run.box = st.empty()
    run.box.warning(notice_text(run.ignored))


def notice_text(items: list[str]) -> str:
    """The notice listing ignored link values, in the UI language (each item names what is shown instead)."""
    lead = t("Ignored from the link: ", "Ignorado do link: ")
    return lead + "; ".join(items) + "."


def shown(raw: str) -> str:
    """A URL value as the notice quotes it inside a code span: shortened, no control characters, no backticks."""
    s = raw if len(raw) <= SHOWN_CHARS else raw[:SHOWN_CHARS] + "…"
    return "".join(c if c.isprintable() else "�" for c in s).replace("`", "ˋ")
