"""A language switch changes words only (issue 21, part 4): every page, switched to Portuguese in the sidebar,
shows exactly what the same page opened in Portuguese shows — the Portuguese default texts, every slider and
choice where it was, the same link — and what the reader typed or moved stays as it was.

AppTest, on the tiny stand-ins for the course models. (A relabelled widget's value in the browser, which
AppTest cannot see, is checked in Chromium by tests/test_browser_language.py.)
"""

from __future__ import annotations

import pytest

from tests.pages import matrix, open_page, script

PAGES = matrix("language_switch")  # every page of the manifest (tests/pages.py)
KINDS = ("slider", "select_slider", "selectbox", "multiselect", "toggle", "checkbox", "number_input", "radio",
         "text_area", "text_input")
TEXTS = ("text_area", "text_input")


def inputs(at) -> dict:
    """Every keyed page input's value (the sidebar's language radio left out), by key."""
    values = {}
    for kind in KINDS:
        for w in getattr(at, kind):
            if w.key and w.key != "ui_lang" and not w.key.startswith("$$"):
                values[w.key] = w.value
    return values


def switch(at, to: str = "pt"):
    at.sidebar.radio(key="ui_lang").set_value(to).run()
    assert not at.exception, at.exception
    return at


def link(at) -> dict:
    return {k: at.query_params[k] for k in at.query_params}


@pytest.mark.parametrize("page", PAGES)
def test_switching_to_portuguese_gives_the_portuguese_page(course_standins, page):
    at = switch(open_page(script(page), lang="en"))
    fresh = open_page(script(page), lang="pt")
    assert inputs(at) == inputs(fresh)
    assert link(at) == link(fresh)


def expected(before: dict, defaults: dict, other: dict) -> dict:
    """After a switch: what still was its default takes the other language's default; the rest stays."""
    return {k: other[k] if k in defaults and v == defaults[k] else v for k, v in before.items()}


@pytest.mark.parametrize("page", ["attention", "logit_lens", "sampling", "causal_mask"])
def test_what_the_reader_changed_stays_across_a_switch_and_back(course_standins, page):
    en, pt = (inputs(open_page(f"app_pages/{page}.py", lang=code)) for code in ("en", "pt"))
    at = open_page(f"app_pages/{page}.py", lang="en")
    box = next(w for kind in TEXTS for w in getattr(at, kind) if w.key)
    box.set_value("Meu próprio texto, com acentos: não.").run()
    before = inputs(at)
    assert before[box.key] == "Meu próprio texto, com acentos: não." and en[box.key] != pt[box.key]
    after = inputs(switch(at))
    assert after == expected(before, en, pt) and after[box.key] == before[box.key]
    assert inputs(switch(at, "en")) == before


def test_the_perplexity_page_measures_the_portuguese_passage_by_default_in_portuguese(course_standins):
    at = open_page("app_pages/perplexity.py", lang="pt")
    assert at.selectbox(key="ppl_source").value == "unseen:pt"
    assert open_page("app_pages/perplexity.py", lang="en").selectbox(key="ppl_source").value == "unseen:en"
