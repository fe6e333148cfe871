"""The ceiling page under AppTest, in both languages, on the shipped course decoders (offline, small): its table
and sentence equal what lab.ceiling computes; the forced-error view and bad input."""

import html
import re
from functools import partial

import pytest

from lab import ceiling
from lab.models import load
from lab.text import encode
from tests import pages

PAGE = "app_pages/ceiling.py"
open_page = partial(pages.open_page, PAGE, timeout=180)


def table(at, column):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_english_page_shows_the_labs_numbers(fresh_caches):
    at = open_page()
    assert at.title[0].value == "The ceiling of this path"
    text = ceiling.unseen_texts()["en"][:6000]
    shown = table(at, "e").set_index("model")
    for name in ("course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2"):
        m = load(name)
        r = ceiling.measure(m, encode(m.tokenizer, text), 64)
        assert shown.loc[name, "e"] == f"{r['e']:.3f}"
        assert shown.loc[name, "error after an error"] == f"{100 * r['after_error']:.1f} %"
    course = table(at, "language")
    assert len(course) == 6 and set(course["language"]) == {"EN", "PT"}
    words = at.success[0].value
    assert "course-gpt2 in PT" in words and "times as often" in words


def test_portuguese_words_and_numbers(fresh_caches):
    at = open_page(lang="pt")
    assert at.title[0].value == "O teto deste caminho"
    assert "," in table(at, "e")["e"].iloc[0] and "O erro por token" in at.success[0].value


def test_the_forced_view_marks_the_forced_token_and_escapes_text(fresh_caches):
    hostile = "Antes <b>negrito</b> <img src=x onerror=alert(1)> & depois " + "palavra " * 60
    at = open_page(ceil_source="own", ceil_pos="5", state={"ceil_text": hostile})
    bodies = [h.proto.body for h in at.get("html") if 'class="ceil-text"' in h.proto.body]
    assert len(bodies) == 2
    for body in bodies:
        assert "<b>" not in body and "<img" not in body
    plain = html.unescape(re.sub(r"<[^>]*>", "", bodies[0]))
    assert hostile.startswith(plain[:40])
    assert 'class="ceil-forced"' in bodies[1] and "<s " in bodies[1] and "ceil-forced" not in bodies[0]
    m = load("course-gpt2")
    r = ceiling.forced(m, encode(m.tokenizer, hostile)[:m.context], 5, 16)
    assert bodies[1].count("#c6ecbf") + bodies[1].count("#f08a78") >= 1  # viz.ceiling RIGHT, WRONG
    assert f"({sum(not x for x in r['with'])} wrong)" in " ".join(x.value for x in at.markdown)


@pytest.mark.parametrize("text", ["", "  \n"])
def test_an_empty_text_says_so(fresh_caches, text):
    at = open_page(ceil_source="own", state={"ceil_text": text})
    assert at.info[-1].value == "Type a text to measure."


def test_an_encoder_in_a_link_is_not_offered(fresh_caches):
    at = open_page(ceil_models="course-gpt2,course-roberta")
    assert "course-roberta" not in at.multiselect(key="ceil_models").options
    assert "course-roberta" not in at.multiselect(key="ceil_models").value
    assert any("ceil_models" in m.value for m in [*at.warning, *at.info])  # the link notice names it


@pytest.mark.parametrize("text", ["!?", "a b", "a b c", "uma frase curta"])
def test_short_texts_keep_the_page_whole(fresh_caches, text):
    """A text of 3 tokens made the position slider's range 1..1 (a Streamlit exception, found by the bad-input
    matrix); too short a text says so, and the course table still follows."""
    at = open_page(ceil_source="own", state={"ceil_text": text})
    assert not at.exception
    assert any(d for d in at.dataframe if "language" in d.value.columns)


def curves_spec(at) -> dict:
    import json

    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    return next(s for s in specs if "layer" in s and any("strokeDash" in x.get("encoding", {}) for x in s["layer"]))


def test_the_longest_run_moves_the_axis_without_a_forward_pass(fresh_caches, forwards):
    """Issue 34, item 6: "Longest run" 16, 64 and 128 draw three x-axes (1..n), and moving it runs no model: the
    numbers are the 128-token measurement cut, equal to lab.ceiling.measure at that n."""
    at = open_page()
    n = forwards["n"]
    for longest in (16, 128, 64):
        at.slider(key="ceil_n").set_value(longest).run()
        assert not at.exception
        lines = next(x for x in curves_spec(at)["layer"] if "strokeDash" in x["encoding"])
        assert lines["encoding"]["x"]["scale"]["domain"] == [1, longest]
    assert forwards["n"] == n  # the slider re-slices: no forward pass
    at.slider(key="ceil_n").set_value(4).run()
    m, text = load("course-gpt2"), ceiling.unseen_texts()["en"][:6000]
    want = ceiling.half_life([c["predicted"] for c in ceiling.measure(m, encode(m.tokenizer, text), 4)["curve"]])
    shown = table(at, "e").set_index("model").loc["course-gpt2", "n at one half, (1 − e)ⁿ"]
    assert shown == ("beyond 4" if want is None else str(want))


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_legend_keys_solid_against_dashed_and_counts_tokens_in_words(fresh_caches, lang):
    at = open_page(lang=lang)
    lines = next(x for x in curves_spec(at)["layer"] if "strokeDash" in x["encoding"])
    dash = lines["encoding"]["strokeDash"]
    assert dash["scale"]["domain"] == [{"en": "observed", "pt": "observado"}[lang], "(1 − e)ⁿ"]
    assert dash["scale"]["range"][0] != dash["scale"]["range"][1]  # solid, dashed
    assert dash["legend"]["symbolType"] == "stroke"  # a line in the key, not the points' dot
    words = at.success[0].value
    assert "token(s)" not in words and re.search(r"\d+ tokens?\.", words)
