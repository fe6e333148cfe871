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
from tests.bad_inputs import CASES, MARKDOWN_RAW, URL_CASES

pytestmark = pytest.mark.slow  # every case in every box of every page: minutes (docs/testing.md)

PAGES = {"tokens": "app_pages/tokens.py", "analogies": "app_pages/analogies.py",
         "attention": "app_pages/attention.py", "causal": "app_pages/causal_mask.py",
         "sampling": "app_pages/sampling.py", "perplexity": "app_pages/perplexity.py",
         "lens": "app_pages/logit_lens.py", "detector": "app_pages/detector.py",
         "ceiling": "app_pages/ceiling.py", "code": "app_pages/code.py",
         "fill": "app_pages/fill.py", "serving": "app_pages/serving.py"}
# page -> its text boxes: (widget kind, key, the page's request when this box is blank, or None)
FIELDS = {
    "tokens": [("text_area", "tokens_pt", "Type or paste some Portuguese text"), ("text_area", "tokens_en", None)],
    "analogies": [("text_input", "an_a", "Type a word in each box"), ("text_input", "an_b", "Type a word in each box"),
                  ("text_input", "an_c", "Type a word in each box"), ("text_input", "an_expected", None),
                  ("text_input", "an_word", "Type a word")],
    "attention": [("text_area", "attn_text", "Type some text")],
    "causal": [("text_input", "mask_text", "Type a sentence"), ("text_input", "trophy_a", None),
               ("text_input", "trophy_b", None), ("text_input", "trophy_word", None)],
    "sampling": [("text_area", "samp_prompt", "Type a prompt")],
    "perplexity": [("text_area", "ppl_text", "Type or choose a text")],
    "lens": [("text_area", "lens_text", "Type some text"), ("text_input", "lens_word", None)],
    "detector": [("text_area", "det_text", "Type a text to score")],
    "ceiling": [("text_area", "ceil_text", "Type a text to measure")],
    "code": [("text_area", "code_text", "Type a text to run the code on")],
    "fill": [("text_area", "fill_text", "The text is empty"), ("text_area", "fill_pair", "The text is empty"),
             ("text_input", "fill_train", "Type a sentence to mask")],
    "serving": [("text_input", "serve_url", "Type the server's URL")],
}
BLANK = ("empty", "whitespace", "newlines only")
SOURCES = {"perplexity": ("selectbox", "ppl_source", "own"), "detector": ("selectbox", "det_source", "own"),
           "ceiling": ("selectbox", "ceil_source", "own"), "serving": ("radio", "serve_source", "url")}
# Numeric and choice parameters a link can carry, per page (every one of them bound through ui/url_state).
URL_KEYS = {
    "home": ["present", "lang", "model"],
    "tokens": ["tokens_sample", "tokens_encoding"],
    "analogies": ["an_preset", "an_method", "an_exclude", "an_space", "an_mean", "an_k", "an_nk"],
    "attention": ["attn_layer", "attn_head", "attn_metric"],
    "causal": ["mask_layer", "mask_head", "trophy_pair", "trophy_encoder"],
    "sampling": ["samp_temperature", "samp_top_k", "samp_top_p", "samp_seed", "samp_n", "samp_pick",
                 "samp_compare", "samp_b_temperature", "samp_b_top_k", "samp_b_top_p"],
    "perplexity": ["ppl_source", "ppl_models", "ppl_stride", "ppl_strip"],
    "lens": ["lens_position", "lens_new_word"],
    "detector": ["det_source", "det_observer", "det_buckets", "det_method", "det_threshold", "det_prevalence"],
    "ceiling": ["ceil_source", "ceil_models", "ceil_n", "ceil_pos"],
    "code": ["code_layer", "code_head", "code_step"],
    "fill": ["fill_order", "fill_top", "fill_decoder", "fill_dynamic", "fill_seed", "fill_epoch"],
    "serving": ["serve_source", "serve_conc", "serve_requests", "serve_tokens", "serve_repeats"],
}
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
    return pages.open_page(None if page == "home" else PAGES[page], timeout=120, check=False, **params)


def own_markup(at: AppTest) -> set[str]:
    """Tags the page's own HTML views use on a normal run (the payload's must be extra)."""
    tags = set()
    for kind, _key, d in rendered(at):
        if kind == "html" or (kind == "markdown" and d.get("allow_html")):
            parser = _Tags()
            parser.feed(d.get("body", ""))
            tags |= {tag for tag, _ in parser.tags}
    return tags


def text_values(at: AppTest, page: str) -> dict[str, str]:
    """The page's text boxes as they stand."""
    out = {}
    for kind, key, _blank in FIELDS[page]:
        try:
            out[key] = getattr(at, kind)(key=key).value
        except KeyError:
            pass
    return out


@pytest.mark.parametrize("page", list(FIELDS))
def test_every_case_in_every_text_box(course_standins, page):
    at = open_page(page)
    if page in SOURCES:  # their text box shows once "own text" (or "a URL") is chosen
        kind, key, value = SOURCES[page]
        getattr(at, kind)(key=key).set_value(value).run()
    assert not at.exception, at.exception
    ours = own_markup(at)
    start = text_values(at, page)
    failures, slowest = [], (0.0, "")
    for kind, key, blank in FIELDS[page]:
        for name, text in CASES:
            before = text_values(at, page)
            t0 = time.perf_counter()
            getattr(at, kind)(key=key).set_value(as_received(text)).run()
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
        getattr(at, kind)(key=key).set_value(start[key]).run()  # back to the page's own text: it still works,
        assert not at.exception, (key, at.exception)  # and boxes hidden meanwhile (a blank sentence hides the
        if text_values(at, page) != start:  # trophy's boxes) are back with their values
            failures.append(f"{page}.{key}: after the matrix the boxes read {text_values(at, page)}, not {start}")
    print(f"{page}: {sum(len(CASES) for _ in FIELDS[page])} runs, slowest {slowest[1]} {slowest[0]:.1f} s")
    assert not failures, f"{len(failures)} problems:\n" + "\n".join(failures[:40])


@pytest.mark.parametrize("page", list(URL_KEYS))
def test_garbage_link_values_fall_back_with_a_notice(course_standins, page):
    failures = []
    for name, value in URL_CASES:  # every parameter of the page spoiled at once
        at = open_page(page, **dict.fromkeys(URL_KEYS[page], value))
        where = f"{page} [{name}]"
        failures += [f"{where}: {p}" for p in problems(at, own_markup(at))]
        notes = " ".join(m for m in messages(at) if m.startswith(NOTICE))
        missed = [k for k in URL_KEYS[page] if f"{k}=" not in notes and not (
            k == "model" and any(m.startswith(UNKNOWN_MODEL) for m in messages(at)))]
        if value and missed:  # an empty value means "not given"
            failures.append(f"{where}: the notice does not name {missed}: {notes[:300]!r}")
    assert not failures, f"{len(failures)} problems:\n" + "\n".join(failures[:40])


def test_a_lone_surrogate_arrives_as_a_replacement_character():
    assert as_received("a\ud800b") == "a\ufffd\ufffd\ufffdb"  # one per byte
    assert as_received("é <b> \x00") == "é <b> \x00"
