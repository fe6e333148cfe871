"""ui.url_state.decide: which value a page input gets, the address's, the session's or the default, as a pure
function of what bind() sees (issue 51). The module docstring's rules, one case each; the pages' AppTest and
Chromium tests (tests/test_shared_links.py, tests/test_browser_links.py) check the same rules end to end."""

from __future__ import annotations

import pytest

from lab import link_codec as lc
from ui.url_state import decide

LAYER = lc.integer(0, 11)
TEXT = lc.text(10)


def run(raw, *, arrived=False, wrote=None, history=False, ours=False, current=4, default=0, codec=LAYER):
    return decide(raw, arrived, wrote, history, ours, current, default, codec)


@pytest.mark.parametrize(("case", "got", "expected"), [
    ("a link that carries the value wins on arrival", run("3", arrived=True), ("address", 3, None)),
    ("without it, the session's value (inputs survive page switches)", run(None, arrived=True), ("session", 4, None)),
    ("a link equal to the default still wins", run("0", arrived=True), ("address", 0, None)),
    ("Back onto an entry this page wrote, without the value: the default",
     run(None, arrived=True, history=True, ours=True), ("default", 0, None)),
    ("Back/Forward onto an entry of this page: the address", run("7", wrote="3", history=True, ours=True),
     ("address", 7, None)),
    ("Back onto an entry a page switch left (no ?view= of this page): the view stays",
     run(None, wrote="4", history=True, ours=False), ("session", 4, None)),
    ("the address moved while the widget stayed where the page left it (a lesson's link in the same tab)",
     run("9", wrote="4", current=4), ("address", 9, None)),
    ("the address moved, and the widget moved too (what the reader just did): the widget",
     run("9", wrote="4", current=5), ("session", 5, None)),
    ("nothing moved: the widget", run("4", wrote="4"), ("session", 4, None)),
    ("the address dropped the value while the widget stayed at what the page wrote: the default",
     run(None, wrote="4", current=4), ("default", 0, None)),
    ("a text too long for any link stays when an entry of this page lacks it",
     run(None, wrote=None, history=True, ours=True, current="x" * 11, default="", codec=TEXT),
     ("session", "x" * 11, None)),
    ("...but a link that carries a text still wins over it",
     run("short", arrived=True, current="x" * 11, default="", codec=TEXT), ("address", "short", None)),
])
def test_which_value_wins(case, got, expected):
    assert got == expected, case


@pytest.mark.parametrize("raw", ["12", "-1", "3.5", "abc", "", "1e999"])
def test_a_link_value_the_input_cannot_take_gives_the_default_and_the_reason(raw):
    source, value, error = run(raw, arrived=True)
    assert (source, value) == ("default", 0) and isinstance(error, lc.LinkValueError)
    assert error.reason == ("out_of_range" if raw in ("12", "-1") else "not_integer")


# --- the app's own parameters (issue 58): one door, the codec's rules, the same notice as a page input ----------
# AppTest on the home page (no model loaded). The expected texts are written out by hand from the rules: the
# codec's boolean words (lab/link_codec.py's docstring), the notice's shape and its two languages.

LESSON = "04-heads-and-mask"  # five steps


@pytest.mark.parametrize("word", ["1", "true", "True", "yes", "on"])
def test_any_boolean_word_opens_presentation_mode(word):
    from tests.pages import open_page

    at = open_page(None, present=word)
    assert at.toggle(key="present").value is True
    assert at.query_params["present"] == "1"  # written as the links teachers already share
    assert not at.warning, [w.value for w in at.warning]


@pytest.mark.parametrize("word", ["0", "false", "off"])
def test_an_off_word_leaves_presentation_mode_off_quietly(word):
    from tests.pages import open_page

    at = open_page(None, present=word)
    assert at.toggle(key="present").value is False and "present" not in at.query_params
    assert not at.warning, [w.value for w in at.warning]


@pytest.mark.parametrize(("lang", "words"), [
    ("en", "Ignored from the link: `step=abc` (not a whole number), showing `1` instead."),
    ("pt", "Ignorado do link: `step=abc` (não é um número inteiro), mostrando `1` no lugar."),
])
def test_a_bad_step_gets_the_links_notice_in_the_readers_language(lang, words):
    from tests.pages import open_page

    at = open_page(None, lesson=LESSON, step="abc", lang=lang)
    assert words in [w.value for w in at.warning], [w.value for w in at.warning]
    assert at.query_params["step"] == "1" and at.query_params["view"] == "attention"  # step 1's page


def test_a_step_out_of_the_lessons_range_names_the_step_shown():
    from tests.pages import open_page

    at = open_page(None, lesson=LESSON, step="2")
    at.query_params["step"] = "6"
    at.run()
    notice = "Ignored from the link: `step=6` (out of range 1–5), showing `2` instead."
    assert notice in [w.value for w in at.warning], [w.value for w in at.warning]


@pytest.mark.parametrize(("browser", "words"), [
    ("en", "Ignored from the link: `lang=xx` (not one of the options), showing `en` instead."),
    ("pt", "Ignorado do link: `lang=xx` (não é uma das opções), mostrando `pt` no lugar."),
])
def test_a_bad_lang_gets_the_links_notice_and_the_browsers_language(monkeypatch, browser, words):
    from tests.pages import open_page
    from ui import i18n

    monkeypatch.setattr(i18n, "browser_language", lambda: browser)
    at = open_page(None, lang="xx")
    assert words in [w.value for w in at.sidebar.warning], [w.value for w in at.warning]
    assert at.sidebar.radio(key="ui_lang").value == browser and at.query_params["lang"] == browser


def test_a_bad_present_word_gets_the_links_notice():
    from tests.pages import open_page

    at = open_page(None, present="maybe")
    words = "Ignored from the link: `present=maybe` (not true or false), showing `0` instead."
    assert words in [w.value for w in at.sidebar.warning], [w.value for w in at.warning]
    assert at.toggle(key="present").value is False
