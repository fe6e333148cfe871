"""Mistakes the suite let through (issue 58, "What to build" 5), one test each, each seen failing with its mistake
written in: the browser's language on a tie of weights, a small difference never written as zero nor a zero with
a sign, the course map's order inside a chapter, and a question or an answer of exactly the maximum length.
(The Space folder's COPY check is in tests/test_space.py, the chips' contrast in tests/test_colour.py.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import yaml

from lab import guess, lessons, questions, rooms
from lab import pages as manifest
from tests.pages import open_page
from tests.test_rooms import redis_url  # noqa: F401  (the fixture: a real redis-server for this module)
from viz import format as fmt

# ----------------------------------------------------------- the browser's language (RFC 9110, 12.5.4 and 12.4.2)

# (Accept-Language, the UI language): the highest q wins; on equal q (none written is q=1) the tag listed first
# wins; q=0 means "not this one"; a tag's language is its first subtag, in any case; a weight that is not a number
# drops its tag; a wildcard or a language we do not have asks for nothing of ours (English).
ACCEPT = [
    ("pt-BR, en", "pt"), ("pt-BR,en", "pt"), ("en, pt-BR", "en"), ("pt-BR, en-US, en", "pt"),
    ("pt-BR;q=0.8, en;q=0.8", "pt"), ("en;q=0.8, pt-BR;q=0.8", "en"), ("pt-BR;q=1, en", "pt"),
    ("en;q=1.0, pt", "en"), ("pt-BR; q=0.5, en; q=0.50", "pt"), ("fr-FR, pt-BR, en", "pt"),
    ("fr-FR, en, pt-BR", "en"), ("PT-br, EN", "pt"), ("en;q=0.5, pt-BR", "pt"), ("pt;q=0, en;q=0.1", "en"),
    ("pt;q=0", "en"), ("*", "en"), ("*, pt;q=0.5", "pt"), ("pt;q=abc, en", "en"), ("pt-BR;q=, en", "en"),
    (";;,, ,", "en"), ("", "en"), (None, "en"), ("pt-PT", "pt"), ("pt-BR", "pt"), ("en-GB,pt-BR;q=0.9", "en"),
]


@pytest.mark.parametrize(("accept", "code"), ACCEPT)
def test_the_browsers_first_listed_language_wins_a_tie(accept, code):
    from ui.i18n import preferred

    assert preferred(accept) == code


class _Context:
    def __init__(self, headers: dict, locale: str | None = None):
        self.headers, self.locale = headers, locale


@pytest.mark.parametrize(("headers", "locale", "code"), [
    ({"Accept-Language": "pt-BR, en"}, "en-US", "pt"),  # the header first: it lists every preference
    ({"Accept-Language": "en, pt-BR"}, "pt-BR", "en"),
    ({}, "pt-BR", "pt"),  # no header (a proxy dropped it): the browser's own navigator.language
    ({}, None, "en"),
])
def test_a_link_without_lang_reads_the_browsers_header_then_its_locale(monkeypatch, headers, locale, code):
    from ui import i18n

    monkeypatch.setattr(i18n.st, "context", _Context(headers, locale))
    assert i18n.browser_language() == code


# ------------------------------------------------------------------ a small difference, and a zero, as written

# (x, decimals, English, Portuguese), each written by hand: a value that rounds to zero is 0 with no sign, in
# numpy's float32 too; a value that does not is written as it rounds.
NUMBERS = [
    (-0.004, 3, "-0.004", "-0,004"), (0.004, 3, "0.004", "0,004"), (-0.0004, 3, "0.000", "0,000"),
    (-0.4, 0, "0", "0"), (-0.5, 0, "0", "0"), (-0.04, 1, "0.0", "0,0"), (-0.0, 1, "0.0", "0,0"),
    (-0.06, 1, "-0.1", "-0,1"), (-0.6, 0, "-1", "-1"), (-1234.5, 1, "-1,234.5", "-1.234,5"),
    (np.float32(-0.04), 1, "0.0", "0,0"), (np.float32(-0.4), 0, "0", "0"), (np.float64(-0.004), 2, "0.00", "0,00"),
    (np.float32(-0.25), 2, "-0.25", "-0,25"),
]


@pytest.mark.parametrize(("x", "decimals", "en", "pt"), NUMBERS)
def test_a_number_that_rounds_to_zero_has_no_sign(monkeypatch, x, decimals, en, pt):
    from ui import i18n

    assert (fmt.number(x, "en", decimals), fmt.number(x, "pt", decimals)) == (en, pt)
    for code, shown in (("en", en), ("pt", pt)):
        monkeypatch.setattr(i18n, "lang", lambda code=code: code)
        assert i18n.num(x, decimals) == shown


# A signed difference (the causal-mask page's "loss without the mask vs with it"): its sign always, an exact zero
# with none, and one that is not zero never written as zero: it gets the decimals its first digit needs (rather
# than "<0.001", which hides how small; the reader compares two losses and wants the figure).
SIGNED = [
    (-0.004, 3, "-0.004", "-0,004"), (0.004, 3, "+0.004", "+0,004"), (-0.0004, 3, "-0.0004", "-0,0004"),
    (0.00004, 3, "+0.00004", "+0,00004"), (-0.00096, 3, "-0.001", "-0,001"), (0.0, 3, "0.000", "0,000"),
    (-0.0, 3, "0.000", "0,000"), (-0.04, 1, "-0.04", "-0,04"), (0.4, 0, "+0.4", "+0,4"), (-0.6, 0, "-1", "-1"),
    (2.5, 3, "+2.500", "+2,500"), (-1234.5, 1, "-1,234.5", "-1.234,5"), (-4e-9, 3, "-4e-09", "-4e-09"),
    (np.float32(-0.004), 3, "-0.004", "-0,004"),
]


@pytest.mark.parametrize(("x", "decimals", "en", "pt"), SIGNED)
def test_a_difference_keeps_its_sign_and_is_never_written_as_zero(monkeypatch, x, decimals, en, pt):
    from ui import i18n

    assert (fmt.signed(x, "en", decimals), fmt.signed(x, "pt", decimals)) == (en, pt)
    for code, shown in (("en", en), ("pt", pt)):
        monkeypatch.setattr(i18n, "lang", lambda code=code: code)
        assert i18n.signed(x, decimals) == shown
    if x != 0:  # what it says is true: the written value has x's sign and is not zero
        value = float(fmt.signed(x, "en", decimals).replace(",", ""))
        assert value != 0 and (value > 0) == (x > 0)


# ----------------------------------------------------------------------- the course map's order in a chapter


def expected_map(pages, lead: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """{chapter: its pages' scripts}, from the manifest by the rule the course map states: a chapter's lead pages
    (ui.chapters.LEAD) first, in the lead's order, then every other page showing it in the navigation's order."""
    out = {}
    for chapter in manifest.CHAPTERS:
        showing = [p for p in pages if chapter in p.chapters]
        first = [p for slug in lead.get(chapter, ()) for p in showing if p.slug == slug]
        out[chapter] = tuple(p.script for p in first + [p for p in showing if p not in first])
    return out


def test_the_course_map_follows_the_manifests_order_and_its_lead_pages():
    from ui import chapters

    shown = {c[0]: c[3] for c in chapters.chapters()}
    assert shown == expected_map(manifest.PAGES, chapters.LEAD)
    # what the chapters' own words say (ui.chapters.COURSE): 09 and 11 are the fill page's first, 04 attention's
    assert shown["11"] == ("app_pages/fill.py", "app_pages/causal_mask.py")
    assert shown["09"] == ("app_pages/fill.py", "app_pages/perplexity.py")
    assert shown["04"] == ("app_pages/attention.py", "app_pages/causal_mask.py", "app_pages/heads.py")
    assert shown["05"] == ("app_pages/logit_lens.py", "app_pages/heads.py")  # the lens leads its own chapter


def test_a_new_page_takes_its_place_in_the_navigations_order_not_the_alphabets(monkeypatch):
    """Two pages added around the others: the map lists them by the manifest's order, never by name."""
    from ui import chapters

    early = dataclasses.replace(manifest.by_slug("ceiling"), slug="zebra", chapters=("04", "11"), commands=(),
                                default=False, file="app_pages/zebra.py")
    late = dataclasses.replace(early, slug="aardvark", chapters=("04", "09"), file="app_pages/aardvark.py")
    pages = (manifest.PAGES[0], early, *manifest.PAGES[1:], late)
    monkeypatch.setattr(manifest, "PAGES", pages)
    shown = {c[0]: c[3] for c in chapters.chapters()}
    assert shown == expected_map(pages, chapters.LEAD)
    assert shown["04"] == ("app_pages/zebra.py", "app_pages/attention.py", "app_pages/causal_mask.py",
                           "app_pages/heads.py", "app_pages/aardvark.py")
    assert shown["11"] == ("app_pages/fill.py", "app_pages/zebra.py", "app_pages/causal_mask.py")
    assert shown["09"] == ("app_pages/fill.py", "app_pages/perplexity.py", "app_pages/aardvark.py")


def test_the_home_page_draws_each_chapters_pages_in_the_maps_order():
    from ui import chapters

    home = open_page(timeout=90)
    labels = [link.proto.label for link in home.get("page_link")]
    titles = {p.script: p.title[0] for p in manifest.PAGES}
    for number, pages in expected_map(manifest.PAGES, chapters.LEAD).items():
        if len(pages) < 2:
            continue
        first = next(i for i, label in enumerate(labels) if label.startswith(f"**Chapter {number} ·"))
        drawn = [labels[first].rsplit(" → ", 1)[1]] + [label.removeprefix("and also → ")
                                                      for label in labels[first + 1:first + len(pages)]]
        assert drawn == [titles[p] for p in pages], number


# --------------------------------------------------------------------- exactly the maximum length, and one past


def lesson_text(question: dict | None = None, note: str = "n", title: str = "T") -> str:
    """A one-step lesson file on the tokens page, as a teacher writes it (YAML)."""
    step = {"page": "tokens", "note": {"en": note, "pt": note}} | ({"question": question} if question else {})
    return yaml.safe_dump({"title": {"en": title, "pt": title}, "steps": [step]}, allow_unicode=True)


def _fits(text: str) -> bool:
    try:
        lessons.loads(text, "t")
    except lessons.LessonError:
        return False
    return True


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_a_lessons_question_of_exactly_the_maximum_length_is_accepted(delta):
    long_words, long_text = "q" * (lessons.MAX_WORDS + delta), "é" * (lessons.MAX_CONTEXT + delta)
    fits = delta <= 0
    assert _fits(lesson_text({"en": long_words, "pt": "p"})) is fits  # a plain question's words
    assert _fits(lesson_text({"en": "e", "pt": long_words})) is fits
    assert _fits(lesson_text(note=long_words)) is fits and _fits(lesson_text(title=long_words)) is fits
    number = {"en": "How many?", "pt": "Quantos?", "kind": "number", "of": "tokens", "encoding": "gpt2"}
    assert _fits(lesson_text(number | {"text": long_text})) is fits  # an answerable question's text
    nxt = {"en": "Next?", "pt": "Próxima?", "kind": "next-token", "text": "a"}
    assert _fits(lesson_text(nxt | {"text": long_text})) is fits
    assert _fits(lesson_text(nxt | {"passage": long_text})) is fits
    if fits:
        kept = lessons.loads(lesson_text(nxt | {"text": long_text}), "t").steps[0].question
        assert kept["text"] == long_text  # kept whole, not cut


@pytest.fixture(params=["memory", "redis"])
def store(request):
    return rooms.MemoryStore() if request.param == "memory" else rooms.RedisStore(request.getfixturevalue("redis_url"))


NEXT = {"en": "Next?", "pt": "Próxima?", "kind": "next-token", "text": "The cat sat on the"}


@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_a_rooms_answer_of_exactly_the_maximum_length_is_kept(store, delta):
    """What a student types goes through lab.questions.clean, then into the room: at the answer box's cap and one
    below it is kept as typed; one past it is refused by name, and the room keeps nothing."""
    room, _ = store.create("07-sampling", 3)
    typed = "ã" * (rooms.MAX_ANSWER + delta)
    assert guess.MAX_ANSWER == rooms.MAX_ANSWER  # the answer box's cap (ui/answers.py) is both of these
    if delta > 0:
        with pytest.raises(questions.QuestionError) as e:
            questions.clean(NEXT, typed)
        assert e.value.reason == "long_answer"
        with pytest.raises(rooms.RoomError) as e:
            store.answer(room.code, "s" * rooms.MAX_WHO, 3, typed)
        assert e.value.reason == "not_an_answer"
        assert store.answered(room.code, 3) == 0
        return
    value = questions.clean(NEXT, "  " + typed + " ")
    assert value == typed
    store.answer(room.code, "s" * (rooms.MAX_WHO + delta), 3, value)
    assert store.answers(room.code, 3) == {typed: 1}
    assert store.mine(room.code, "s" * (rooms.MAX_WHO + delta), 3) == typed
