"""One codec for links and lessons (lab/link_codec.py, issue 51): a value written to a link and read back is the
same; a value written to a lesson file (YAML) and read back is the same and links as the page writes it; and for
any link text, the page and a lesson recorded from it agree on whether it is usable and on what it means.
Property tests (hypothesis) over codecs of every kind with random ranges and options."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lab import lessons
from lab import link_codec as lc
from lab.link_codec import LinkValueError

PAGE = "tokens"  # a real page of the manifest; the catalogue is the test's own
NOTE = {"en": "n", "pt": "n"}
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)  # YAML cannot write a lone surrogate
OPTION = st.one_of(st.integers(-1000, 1000), st.sampled_from([0.125, 0.5, 1.0, 2.5]),
                   TEXT.filter(lambda s: s and "," not in s and s == s.strip()))


def short_real(lo=-1000, hi=1000):
    """A bound as a page writes one (a few decimals): a value inside it never rounds outside when written."""
    return st.integers(lo * 100, hi * 100).map(lambda n: n / 100)


@st.composite
def codec_and_value(draw):
    """(codec, a value the codec accepts) of a random kind."""
    kind = draw(st.sampled_from(lc.KINDS))
    if kind == "integer":
        lo = draw(st.integers(-10**17, 10**17))
        hi = draw(st.integers(lo, 10**17))
        return lc.integer(lo, hi), draw(st.integers(lo, hi))
    if kind == "real":
        lo = draw(short_real())
        hi = draw(short_real().filter(lambda h: h >= lo))
        least = draw(st.sampled_from([0.0, 1e-6, 0.01]))
        value = draw(st.floats(lo, hi).filter(lambda v: not 0 < abs(v) < least))
        return lc.real(lo, hi, least), value
    if kind == "boolean":
        return lc.boolean(), draw(st.booleans())
    if kind == "text":
        most = draw(st.integers(0, lc.MAX_LINK_TEXT))
        return lc.text(most), draw(TEXT.filter(lambda s: len(s) <= most))
    options = draw(st.lists(OPTION, min_size=1, max_size=8, unique_by=str))
    if kind == "choice":
        return lc.choice(options), draw(st.sampled_from(options))
    return lc.choices(options), draw(st.lists(st.sampled_from(options), unique=True))


def same(a, b) -> bool:
    """Equal, a real to ui.url_state._same's tolerance (a slider's 0.9000000000000001 is 0.9)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return type(a) is type(b) and a == b


def lesson_of(value, spec: dict) -> lessons.Lesson:
    """A one-step lesson giving the input `value`, checked against `spec`, written as a file (lessons.dumps, as
    the lesson maker downloads it) and read back: the same lesson."""
    data = {"title": NOTE, "steps": [{"page": PAGE, "inputs": {"k": value}, "note": NOTE}]}
    lesson = lessons.parse(data, "x", inputs={PAGE: {"k": spec}})
    again = lessons.parse(yaml.safe_load(lessons.dumps(lesson)), "x", inputs={PAGE: {"k": spec}})
    assert again == lesson and type(again.steps[0].inputs["k"]) is type(value)
    return again


@SETTINGS
@given(codec_and_value())
def test_a_value_written_to_a_link_and_read_back_is_the_same(pair):
    codec, value = pair
    written = codec.format(value)
    assert written is not None
    assert same(codec.parse(written), value) and codec.accepts(codec.parse(written))
    assert codec.format(codec.parse(written)) == written  # written again: the same link


@SETTINGS
@given(codec_and_value())
@example((lc.text(5), "\x85"))  # found by this test: PyYAML read it back as a space (lessons.dumps quotes it)
def test_a_value_written_to_a_lesson_and_read_back_is_the_same_and_links_as_the_page_does(pair):
    codec, value = pair
    spec = lc.describe(codec, value)
    assert lc.describe(lc.from_spec(spec), lc.from_spec(spec).parse(spec.get("default", ""))) == spec
    file_value = lessons.typed(codec.format(value), spec)  # recorded from the page's link (lesson_maker)
    step = lesson_of(file_value, spec).steps[0]
    assert step.inputs["k"] == file_value  # read back as it was written
    link = lessons.link_params(step, inputs={PAGE: {"k": spec}})["k"]
    assert link == codec.format(value) and same(codec.parse(link), value)  # the page reads the value it showed


LINK_TEXTS = st.one_of(TEXT, st.sampled_from(["true", " On", "YES", "0", "1", "2", "off", "nan", "-inf", "1e999",
                                              "3.0", "+7", " 7 ", "٣", "1_0", "0.30000000000000004", "", ",", "a,a",
                                              "1e-320", "9" * 50]))


@SETTINGS
@given(codec_and_value(), LINK_TEXTS)
@example((lc.boolean(), True), "yes")
@example((lc.integer(0, 11), 3), "3.0")
@example((lc.real(0.0, 2.0, 1e-6), 1.0), "1e-320")
@example((lc.choices(["a", "b"]), ["a"]), "a,a")
def test_the_page_and_a_lesson_agree_on_any_link_text(pair, raw):
    codec, value = pair
    spec = lc.describe(codec, value)
    try:
        page = codec.format(codec.parse(raw))
    except LinkValueError:
        page = None
    try:
        lesson = lessons.link_params(lesson_of(lessons.typed(raw, spec), spec).steps[0], inputs={PAGE: {"k": spec}})
    except lessons.LessonError:
        lesson = None
    assert page == (lesson or {}).get("k"), (raw, page, lesson)


@pytest.mark.parametrize("word", ["true", "TRUE", " yes ", "On", "1", "false", "No", "OFF", "0"])
def test_one_rule_for_booleans_in_links_and_lessons(word):
    on = word.strip().lower() in ("true", "yes", "on", "1")
    spec = {"kind": "boolean", "default": "false"}
    assert lc.boolean().parse(word) is on  # a link
    assert lessons.typed(word, spec) is on  # a lesson recorded from a link
    for file_value in (word, on, int(on)):  # a lesson file: quoted, true/false, 1/0
        step = lesson_of(file_value, spec).steps[0]
        assert lessons.link_params(step, inputs={PAGE: {"k": spec}}) == {"k": "true" if on else "false"}
    with pytest.raises(lessons.LessonError, match="must be true or false"):
        lesson_of(2, spec)


def test_a_whole_float_in_a_lesson_links_as_the_whole_number_and_a_fraction_is_refused():
    spec = {"kind": "integer", "lo": 0, "hi": 11, "default": "0"}
    assert lessons.link_params(lesson_of(3.0, spec).steps[0], inputs={PAGE: {"k": spec}}) == {"k": "3"}
    for bad, words in ((3.5, "must be a whole number"), ("3", "must be a whole number"), (12, "12 is outside 0..11"),
                       (True, "must be a whole number")):
        with pytest.raises(lessons.LessonError, match=words):
            lesson_of(bad, spec)


@pytest.mark.parametrize(("codec", "raw", "reason"), [
    (lc.real(0.0, 2.0, least=1e-6), "1e-320", "near_zero"), (lc.real(0.0, 2.0), "1" * 41, "not_number"),
    (lc.choices(["a", "b"]), "a,,b", "unknown_choice"), (lc.choices(["a", "b"]), ",", "unknown_choice"),
    (lc.integer(0, 11), "1_0", "not_integer"), (lc.boolean(), "y", "not_boolean")])
def test_the_rules_both_share(codec, raw, reason):
    """What the agreement above cannot see, since both sides read with it: the rules themselves."""
    with pytest.raises(LinkValueError) as e:
        codec.parse(raw)
    assert e.value.reason == reason
    spec = lc.describe(codec, codec.parse("0") if codec.kind in ("real", "integer") else
                       ([] if codec.kind == "choices" else False))
    with pytest.raises(lessons.LessonError):
        lesson_of(lessons.typed(raw, spec), spec)
