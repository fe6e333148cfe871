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
