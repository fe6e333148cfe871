"""No page shows a byte as \\xNN (issue 34, item 1): every page in Portuguese, on the shipped course models
(course-gpt2 splits ã, ç, é into two byte tokens and often predicts a lone byte), scanned whole: every string
of every element the page sends (titles, captions, HTML views and their tooltips, tables, widget options,
chart specs with their titles and label expressions) and every cell of every table and chart dataset (the
tooltips' values). A token that is a lone byte is named in words (ui.token_words), checked here against
Python's own UTF-8 codec."""

import re

import pytest
from google.protobuf.message import Message

from lab.text import byte_pieces, byte_run
from tests.pages import matrix, open_page, script
from ui.streamlit_internals import convert_arrow_bytes_to_pandas_df

PAGES = matrix("portuguese_bytes")  # every page of the manifest (tests/pages.py)
ESCAPE = re.compile(r"\\x[0-9a-fA-F]{2}")
PRINTED_LEADS = {chr(c).encode()[0] for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000 and chr(c).isprintable()}


def _cells(data: bytes):
    """The strings of an Arrow table (a dataframe or a chart's dataset); nothing for other bytes."""
    try:
        frame = convert_arrow_bytes_to_pandas_df(data)
    except Exception:  # not an Arrow table
        return
    yield from (str(c) for c in frame.columns)
    for column in frame.columns:
        yield from (str(x) for x in frame[column].tolist())


def strings(message: Message):
    """Every string field of a protobuf message, nested messages and Arrow tables included."""
    for _, value in message.ListFields():
        many = value if hasattr(value, "__len__") and not isinstance(value, (str, bytes, Message)) else [value]
        for v in many:
            if isinstance(v, Message):
                yield from strings(v)
            elif isinstance(v, str):
                yield v
            elif isinstance(v, bytes):
                yield from _cells(v)


def everything_shown(at) -> list[str]:
    """Every string the page sends to the browser, element by element."""
    out, todo = [], [at._tree]
    while todo:
        node = todo.pop()
        if isinstance(getattr(node, "proto", None), Message):
            out += strings(node.proto)
        todo += list(getattr(node, "children", {}).values()) if isinstance(getattr(node, "children", None),
                                                                              dict) else []
    return out


@pytest.mark.parametrize("page", PAGES)
def test_no_page_shows_a_byte_escape_in_portuguese(fresh_caches, page):
    at = open_page(script(page), timeout=300, lang="pt")
    shown = everything_shown(at)
    assert len(shown) > 20  # the page drew
    found = [s[:160] for s in shown if ESCAPE.search(s)]
    assert not found, found


def test_the_scan_reads_chart_data_and_tooltips(fresh_caches):
    """The scan sees inside a chart: the lens's cells carry their guesses (tooltips) in the dataset."""
    at = open_page("app_pages/logit_lens.py", timeout=300, lang="pt")
    shown = [s.replace("\u00a0", " ") for s in everything_shown(at)]  # the grid keeps the words' spaces unbroken
    assert any(s.startswith("byte C3 (primeira metade de ") for s in shown)  # course-gpt2 predicts the byte C3
    assert any(s.startswith("\"$schema\"") or '"$schema"' in s for s in shown)  # the chart specs


@pytest.mark.parametrize("b", range(0x80, 0x100))
def test_a_lone_byte_is_named_by_what_it_starts_or_ends(b):
    """byte_run's examples against Python's UTF-8 codec: a lead byte starts each example, a later byte ends it."""
    r = byte_run(bytes([b]))
    assert r["hex"] == f"{b:02X}" and r["first"] == (b >= 0xC0)
    for c in r["examples"]:
        encoded = c.encode("utf-8")
        assert (encoded[0] == b and len(encoded) == r["size"]) if r["first"] else encoded[-1] == b
    if b in PRINTED_LEADS or b < 0xC0:
        assert r["examples"], b  # a byte that starts a printable character, or ends one: something to name


def test_words_in_both_languages(monkeypatch):
    import streamlit as st

    from ui.token_words import short, worded

    assert byte_pieces("␣\\xc3") == ["␣", b"\xc3"]
    monkeypatch.setattr(st, "session_state", {"ui_lang": "pt"})
    assert worded(" \\xc3") == " " + "byte C3 (primeira metade de ã, ç, é…)".replace(" ", "\u00a0")
    assert worded(" \\xc3", marked=True) == "␣byte\u00a0C3\u00a0(primeira\u00a0metade\u00a0de\u00a0ã,\u00a0ç,\u00a0é…)"
    assert worded("\\xaa").replace("\u00a0", " ") == "byte AA (final de ê, ª…)"
    assert worded("\\xe2\\x80").replace("\u00a0", " ") == "bytes E2 80 (os primeiros 2 de 3 bytes de —, –, “…)"
    assert short("\\xc3") == "byte\u00a0C3" and worded("casa") == "casa"
    monkeypatch.setattr(st, "session_state", {"ui_lang": "en"})
    assert worded("\\xc3").replace("\u00a0", " ") == "byte C3 (first half of ã, ç, é…)"
    assert worded("\\xaa").replace("\u00a0", " ") == "byte AA (end of ê, ª…)"
