"""Making a lesson in the app (ui/lesson_maker.py): "Add this view to a lesson" records the page and its inputs,
the home page edits the draft, and the file it downloads is a lesson the app presents as the view was shown.

The oracle for a recorded step is the page itself: the step, opened as a lesson, gives the page the inputs the
teacher had. Uploads go through a real browser (tests/test_browser_lessons.py)."""

from __future__ import annotations

import pytest
import yaml

from lab import lessons
from tests.pages import open_page
from ui.lesson_maker import DRAFT, checked

VIEW = {"attn_layer": 2, "attn_head": 3, "attn_metric": "entropy", "attn_text": "The trophy didn't fit: it was big."}


def add(at, note: str = ""):
    at.text_input(key="maker_note").set_value(note)
    at.button(key="maker_add").click().run()
    assert not at.exception, at.exception
    return at


def attention_view(**params):
    at = open_page("app_pages/attention.py", **params)
    for key, value in VIEW.items():
        at.session_state[key] = value
    at.run()
    return at


@pytest.mark.parametrize("language", ["en", "pt"])
def test_a_recorded_view_opens_again_as_the_teacher_had_it(language):
    at = add(attention_view(lang=language), "Entropy: which heads spread out?")
    step = at.session_state[DRAFT]["steps"][0]["step"]
    assert step == {"page": "attention", "inputs": VIEW, "note": {"en": "Entropy: which heads spread out?",
                                                                   "pt": "Entropy: which heads spread out?"}}
    assert any(("Added as step 1" if language == "en" else "Adicionada como passo 1") in s.value for s in at.success)
    at.switch_page("app_pages/tokens.py").run()
    add(at)  # a second view: the tokens page as it opens, with no note (a numbered one is written)
    lesson = checked(at.session_state[DRAFT])
    assert [(s.page, len(s.inputs)) for s in lesson.steps] == [("attention", 4), ("tokens", 0)]
    assert lesson.steps[1].note["en"] == ("Step 2." if language == "en" else "Passo 2.")
    text = lessons.dumps(lesson)
    assert lessons.loads(text, lesson.name, lessons.registry_models()) == lesson  # the file reads back as the draft
    assert yaml.safe_load(text)["steps"][0]["inputs"] == VIEW and "lição" in text  # UTF-8 as it is
    again = open_page("app_pages/attention.py", **lessons.link_params(lesson.steps[0]))  # the step's link
    assert {k: again.session_state[k] for k in VIEW} == VIEW


def test_the_editor_reorders_edits_and_removes():
    at = add(attention_view(), "first")
    at.switch_page("app_pages/tokens.py").run()
    add(at, "second")
    at.switch_page("app_pages/home.py").run()
    assert not at.exception
    ids = [s["id"] for s in at.session_state[DRAFT]["steps"]]
    assert [s["step"]["page"] for s in at.session_state[DRAFT]["steps"]] == ["attention", "tokens"]
    at.button(key=f"maker_up_{ids[1]}").click().run()
    assert [s["step"]["page"] for s in at.session_state[DRAFT]["steps"]] == ["tokens", "attention"]
    assert at.button(key=f"maker_up_{ids[1]}").disabled and at.button(key=f"maker_down_{ids[0]}").disabled
    at.text_input(key=f"maker_note_{ids[0]}_pt").set_value("primeira nota").run()
    assert at.session_state[DRAFT]["steps"][1]["step"]["note"] == {"en": "first", "pt": "primeira nota"}
    at.text_input(key="maker_title_en").set_value("Heads and tokens").run()
    assert checked(at.session_state[DRAFT]).name == "heads-and-tokens"
    assert len(at.get("download_button")) == 1
    at.button(key=f"maker_out_{ids[1]}").click().run()
    assert [s["step"]["page"] for s in at.session_state[DRAFT]["steps"]] == ["attention"]


@pytest.mark.parametrize("language", ["en", "pt"])
def test_a_draft_that_cannot_be_saved_says_why_and_offers_no_file(language):
    at = add(attention_view(lang=language), "note")
    at.switch_page("app_pages/home.py").run()
    at.text_input(key="maker_title_en").set_value("   ").run()
    assert not at.exception and len(at.get("download_button")) == 0
    lead = "The draft cannot be saved yet" if language == "en" else "O rascunho ainda não pode ser salvo"
    assert any(w.value.startswith(lead) and "title.en" in w.value for w in at.warning)
    assert len(at.session_state[DRAFT]["steps"]) == 1  # nothing lost


def test_user_text_in_a_step_is_shown_escaped():
    at = open_page("app_pages/attention.py")
    at.session_state["attn_text"] = "[click](javascript:x) <img src=x> **bold**"
    at.run()
    add(at, "<b>note</b>")
    at.switch_page("app_pages/home.py").run()
    row = next(m.value for m in at.markdown if m.value.startswith("**1.**"))
    assert "\\[click\\]" in row and "\\*\\*bold\\*\\*" in row and "<img" not in row.replace("\\<img", "")
    assert not at.exception


def test_the_sidebar_offers_it_on_every_page_in_both_languages():
    for language, label in (("en", "Add this view to a lesson"), ("pt", "Adicionar esta vista a uma lição")):
        at = open_page("app_pages/tokens.py", lang=language)
        assert at.button(key="maker_add").label == label


def test_the_lab_types_a_links_values_as_a_file_writes_them():
    specs = lessons.catalogue()
    step = lessons.step_data("sampling", {"samp_temperature": "0.7", "samp_n": "12", "samp_prompt": "Era uma vez",
                                          "samp_seed": "0", "lang": "pt", "view": "sampling"}, {"en": "a", "pt": "b"})
    assert step["inputs"] == {"samp_temperature": 0.7, "samp_n": 12, "samp_prompt": "Era uma vez"}  # seed 0: default
    assert specs["sampling"]["samp_seed"]["default"] == "0"
    with pytest.raises(lessons.LessonError, match="UTF-8"):
        lessons.from_bytes(b"title: \xff", "x")
    with pytest.raises(lessons.LessonError, match="line 3, column 1: not valid YAML"):
        lessons.from_bytes(b"title: {en: a, pt: b}\nsteps: [\n", "x")
