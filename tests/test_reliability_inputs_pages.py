"""The bad-input matrix on every page (AppTest): each case of tests/bad_inputs.py typed into every text box
of every page, and garbage slider values handed in through a link.

Per run: no exception; a blank main box gets the page's own request for text; nothing the visitor typed is
rendered as markup (HTML views hold no element or event attribute from the payload; Markdown, LaTeX and
Streamlit's colour/icon directives quoted in a message are escaped); the page's other boxes keep their
values, and a box the page hides meanwhile comes back with its value (nothing lost). Tiny random models
stand in for the course models (no network).

A lone surrogate cannot cross Streamlit's websocket (protobuf strings are UTF-8) or its URL parsing
(`parse_qs` replaces undecodable bytes), so it reaches a page as U+FFFD; the raw form is the CLI's case.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from html.parser import HTMLParser

import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from tests import pages
from tests.bad_inputs import ASKS, CASES, MARKDOWN_RAW, URL_CASES, matrix

pytestmark = pytest.mark.slow  # every case in every box of every page: minutes (docs/testing.md)

MATRIX = matrix()  # every page with inputs, from the page manifest and the lessons' catalogue (tests/bad_inputs.py)
BLANK = ("empty", "whitespace", "newlines only")
NOTICE = ("Ignored from the link", "Ignorado do link")
UNKNOWN_MODEL = "The link names a model this app does not know"  # the sidebar's own notice for ?model=
DANGEROUS_TAGS = {"script", "img", "svg", "iframe", "object", "embed", "textarea", "a", "b", "strong", "em",
                  "math", "style", "link", "meta", "form", "input"}
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def as_received(text: str) -> str:
    """What the server gets for `text`: lone surrogates become U+FFFD, as parse_qs decodes a link's bytes."""
    raw = urllib.parse.quote(text.encode("utf-8", "surrogatepass"))
    return urllib.parse.parse_qs(f"t={raw}", keep_blank_values=True).get("t", [""])[0]


class _Tags(HTMLParser):
    """Collects (tag, attribute names) of every start tag."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, [name for name, _ in attrs]))


def html_problems(body: str, ours: set[str]) -> list[str]:
    """Tags or event attributes in an HTML view that the page's own markup (`ours`) does not have."""
    parser = _Tags()
    parser.feed(body)
    found = []
    for tag, attrs in parser.tags:
        if tag in DANGEROUS_TAGS and tag not in ours:
            found.append(f"<{tag}>")
        found += [f"<{tag} {a}=>" for a in attrs if a.startswith("on")]
    return found


def rendered(at: AppTest) -> list[tuple[str, str, dict]]:
    """(kind, key, message as a dict) of every element on the page."""
    out = []
    for node in at._tree:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "DESCRIPTOR"):
            out.append((getattr(node, "type", ""), getattr(node, "key", None) or "",
                        MessageToDict(proto, preserving_proto_field_name=True)))
    return out


def problems(at: AppTest, ours: set[str]) -> list[str]:
    """What is wrong on the page as it stands: exceptions, markup from the visitor rendered."""
    found = []
    for kind, _key, d in rendered(at):
        body = d.get("body", "")
        if kind == "exception":
            found.append(f"exception: {d.get('message', '')[:200]}")
        elif kind == "html" or (kind == "markdown" and d.get("allow_html")):
            found += [f"{kind}: {p}" for p in html_problems(body, ours)]
        elif kind in ("markdown", "alert", "caption", "info", "warning", "error", "success", "toast") and body:
            outside_code = CODE_SPAN.sub("", body)
            found += [f"{kind}: Markdown left live {raw!r} in {body[:120]!r}" for raw in MARKDOWN_RAW
                      if raw in outside_code]
    return found


def messages(at: AppTest) -> list[str]:
    """The bodies of the page's info, warning and error boxes."""
    return [m.value for kind in ("info", "warning", "error") for m in getattr(at, kind)]


def open_page(page: str, **params) -> AppTest:
    """The app on `page` (first run on the entry page, as a visitor arrives), from a link with `params`;
    an exception is left for the test to report."""
    return pages.open_page(MATRIX[page]["path"], timeout=120, check=False, **params)


def own_markup(at: AppTest) -> set[str]:
    """Tags the page's own HTML views use on a normal run (the payload's must be extra)."""
    tags = set()
    for kind, _key, d in rendered(at):
        if kind == "html" or (kind == "markdown" and d.get("allow_html")):
            parser = _Tags()
            parser.feed(d.get("body", ""))
            tags |= {tag for tag, _ in parser.tags}
    return tags


def box(at: AppTest, key: str):
    """The text box `key` (a text area or a text input; KeyError when the page does not show it now)."""
    try:
        return at.text_area(key=key)
    except KeyError:
        return at.text_input(key=key)


def text_values(at: AppTest, page: str) -> dict[str, str]:
    """The page's text boxes as they stand."""
    out = {}
    for key in MATRIX[page]["texts"]:
        try:
            out[key] = box(at, key).value
        except KeyError:
            pass
    return out


@pytest.mark.parametrize("page", [p for p, m in MATRIX.items() if m["texts"]])
def test_every_case_in_every_text_box(course_standins, page):
    at = open_page(page)
    for key, value in MATRIX[page]["reveal"].items():  # a text box shown once "own text" (or "a URL") is chosen
        next(w for kind in ("selectbox", "radio", "segmented_control", "pills") for w in at.get(kind)
             if w.key == key).set_value(value).run()
    assert not at.exception, at.exception
    ours = own_markup(at)
    start = text_values(at, page)
    failures, slowest = [], (0.0, "")
    for key in MATRIX[page]["texts"]:
        blank = ASKS.get(key)
        for name, text in CASES:
            before = text_values(at, page)
            t0 = time.perf_counter()
            box(at, key).set_value(as_received(text)).run()
            took = time.perf_counter() - t0
            slowest = max(slowest, (took, f"{key}/{name}"))
            where = f"{page}.{key} [{name}]"
            failures += [f"{where}: {p}" for p in problems(at, ours)]
            if blank and name in BLANK and not any(m.startswith(blank) for m in messages(at)):
                failures.append(f"{where}: no request for text among {messages(at)}")
            now = text_values(at, page)
            changed = {k for k, v in before.items() if k != key and k in now and now[k] != v}  # hidden: see below
            if changed:
                failures.append(f"{where}: other boxes changed: {sorted(changed)}")
            if now.get(key) != as_received(text):
                failures.append(f"{where}: the box no longer holds what was typed")
        box(at, key).set_value(start[key]).run()  # back to the page's own text: it still works,
        assert not at.exception, (key, at.exception)  # and boxes hidden meanwhile (a blank sentence hides the
        if text_values(at, page) != start:  # trophy's boxes) are back with their values
            failures.append(f"{page}.{key}: after the matrix the boxes read {text_values(at, page)}, not {start}")
    print(f"{page}: {len(CASES) * len(MATRIX[page]['texts'])} runs, slowest {slowest[1]} {slowest[0]:.1f} s")
    assert not failures, f"{len(failures)} problems:\n" + "\n".join(failures[:40])


@pytest.mark.parametrize("page", [p for p, m in MATRIX.items() if m["links"]])
def test_garbage_link_values_fall_back_with_a_notice(course_standins, page):
    """Every link parameter of the page spoiled at once, but the choice that opens a view whose inputs exist only
    while it is open (scripts/lesson_headless.OPENED: the sampling page's comparison B), which is set to open it so
    that its inputs are read and named too (that choice's own garbage: test_shared_links' garbage test)."""
    import scripts.lesson_headless as headless

    failures, opener = [], dict(headless.OPENED).get(page, {})
    for name, value in URL_CASES:  # every parameter of the page spoiled at once
        at = open_page(page, **dict.fromkeys(MATRIX[page]["links"], value) | opener)
        where = f"{page} [{name}]"
        failures += [f"{where}: {p}" for p in problems(at, own_markup(at))]
        notes = " ".join(m for m in messages(at) if m.startswith(NOTICE))
        missed = [k for k in MATRIX[page]["links"] if k not in opener and f"{k}=" not in notes and not (
            k == "model" and any(m.startswith(UNKNOWN_MODEL) for m in messages(at)))]
        if value and missed:  # an empty value means "not given"
            failures.append(f"{where}: the notice does not name {missed}: {notes[:300]!r}")
    assert not failures, f"{len(failures)} problems:\n" + "\n".join(failures[:40])


def test_a_lone_surrogate_arrives_as_a_replacement_character():
    assert as_received("a\ud800b") == "a\ufffd\ufffd\ufffdb"  # one per byte
    assert as_received("é <b> \x00") == "é <b> \x00"
