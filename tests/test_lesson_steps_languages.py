"""Every step of every shipped lesson opens on its own inputs in both UI languages (issue 56, item 1).

A step's inputs that name a language's content (the English trophy pair, the English unseen text) were dropped from
the step's link when they equalled the English page's default, so a Portuguese reader got the Portuguese default
instead (lesson 03 step 3 showed the Portuguese pair; lesson 06 steps 1 and 3 the Portuguese text), and "back to the
step" appeared and changed nothing. Here each step is opened as its link opens it, under English and Portuguese, and
the inputs the page runs on are read back from the session and compared with the step's, through the page's own
codec (the catalogue's); a withheld step (a question not yet answered, a guessing game not yet played) is first
shown through its "show the page without answering" (or "without playing") button, as a reader alone would.
"""

from __future__ import annotations

import pytest

from lab import lessons
from lab.link_codec import from_spec
from tests.pages import open_page

pytestmark = pytest.mark.slow

STEPS = [(path.stem, k) for path in sorted(lessons.LESSONS_DIR.glob("*.yaml"))
         for k in range(1, len(lessons.load(path).steps) + 1)]


def labels(at) -> list[str]:
    return [b.label for b in at.button if not (b.key or "").startswith("maker_")]


def shown(at) -> None:
    """A withheld step's page, shown without answering (a reader alone), then run."""
    skip = [b for b in at.button if b.key in ("answers_skip", "game_skip")]
    if skip:
        skip[0].click().run()


def test_the_language_defaults_the_catalogue_names_are_the_pages_own():
    """The catalogue's Portuguese defaults (lab/data/lesson_inputs.json's default_pt) exist where a page's default
    follows the UI language: without them a step's short link drops an English value as 'the default'."""
    catalogue = lessons.catalogue()
    assert catalogue["causal_mask"]["trophy_pair"]["default_pt"] == "pt"
    assert catalogue["perplexity"]["ppl_source"]["default_pt"] == "unseen:pt"
    assert catalogue["ceiling"]["ceil_source"]["default_pt"] == "unseen:pt"


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize("page", sorted(lessons.catalogue()))
def test_the_catalogues_defaults_are_what_the_page_opens_on(page, lang):
    """Each input the page binds when a reader opens it with nothing in its link: the catalogue's default in that
    language is the value it runs on (read from the session, through the catalogue's codec). The heads page's score
    was catalogued "previous" in English (the value of its own-text view) while the page opens on "induction", so a
    step asking for "previous" lost it from its English link."""
    from ui.url_state import INPUTS

    at = open_page(f"app_pages/{page}.py", lang=lang, timeout=300)
    bound = at.session_state[INPUTS].get(page, {}) if INPUTS in at.session_state else {}
    for key, spec in lessons.catalogue()[page].items():
        if key not in bound or "default" not in spec:
            continue  # an input of another view (a text box, an opened comparison)
        _, default = bound[key]
        want = spec.get("default_pt", spec["default"]) if lang == "pt" else spec["default"]
        assert from_spec(spec).format(default) == want, (page, key)


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_step_link_keeps_a_value_that_is_not_this_languages_default(lang):
    lesson = lessons.load(lessons.LESSONS_DIR / "03-attention-trophy.yaml")
    links = [lessons.step_link(lesson, k, lang, "course-gpt2").get("trophy_pair") for k in (3, 4)]
    assert links == ([None, "pt"] if lang == "en" else ["en", None])


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize(("name", "k"), STEPS, ids=[f"{n}-{k}" for n, k in STEPS])
def test_every_step_opens_on_its_own_inputs(name, k, lang):
    lesson = lessons.load(lessons.LESSONS_DIR / f"{name}.yaml")
    step = lesson.steps[k - 1]
    at = open_page(None, lesson=name, step=str(k), lang=lang, timeout=120)
    shown(at)
    assert not at.exception, at.exception
    assert at.query_params["view"] == step.page
    specs = lessons.catalogue()[step.page]
    for key, want in lessons.link_params(step).items():
        codec = from_spec(specs[key])
        got = codec.format(at.session_state[key]) if key in at.session_state else None
        assert got == codec.format(codec.parse(want)), f"{name} step {k} ({lang}): {key} is {got!r}, not {want!r}"
    assert not any("Back to the step" in b or "Voltar ao passo" in b for b in labels(at)), labels(at)
    assert not any("Ignored from the link" in w.value or "Ignorado do link" in w.value for w in at.warning)


@pytest.mark.parametrize(("lang", "words"), [("en", "), showing `unseen:en` instead"),
                                             ("pt", "), mostrando `unseen:pt` no lugar")])
def test_a_link_value_the_page_does_not_hold_is_refused_out_loud(lang, words):
    """A value the page's options do not hold is refused with a notice in the reader's language that names what the
    page shows instead (the default of that language)."""
    at = open_page("app_pages/perplexity.py", ppl_source="unseen:fr", lang=lang, timeout=120)
    (notice,) = [w.value for w in at.warning if w.value.startswith(("Ignored from the link", "Ignorado do link"))]
    assert "`ppl_source=unseen:fr`" in notice and words in notice, notice
    assert at.session_state["ppl_source"] == f"unseen:{lang}"
