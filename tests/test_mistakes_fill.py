"""Mistakes the fill-in-the-blank page once let through (issues #40 and #33), each caught on the page: the
"Candidates per mask" slider, the decoder the reader picked for "Same sentence, both models", the trophy rows'
tokens, and course-roberta's "tokens seen". References: lab.fill called with the reader's inputs, a count worked by
hand from the training record."""

import pytest
import streamlit as st

from lab import fill
from lab.causal import TROPHY
from lab.models import load
from tests import pages
from tests.test_fill_page import candidates

PAGE = "app_pages/fill.py"
DECODER = "course-gpt2-1x64"  # not the default course-gpt2


@pytest.fixture(scope="module")
def page():
    """The English page with 3 candidates per mask and the small course decoder picked; caches emptied."""
    from ui.model_loader import model_cache

    for clear in (model_cache.clear, st.cache_data.clear):
        clear()
    at = pages.open_page(PAGE, timeout=180, fill_top="3", fill_decoder=DECODER)
    yield at
    for clear in (model_cache.clear, st.cache_data.clear):
        clear()


def pct(p):
    return "—" if p is None else f"{100 * p:.2f} %"


@pytest.fixture(scope="module")
def encoder():
    return load("course-roberta")


def test_the_candidates_slider_sets_how_many_are_shown(page, encoder):
    want = fill.fill(encoder, "The <mask> manager installs the package.", 3)["masks"][0]["candidates"]
    assert candidates(page) == [c["token"] for c in want] and len(want) == 3


def test_both_models_numbers_come_from_the_picked_decoder(page, encoder):
    sentence = TROPHY["en"][0]
    want = fill.compare(encoder, load(DECODER), sentence)["positions"]
    other = fill.compare(encoder, load("course-gpt2"), sentence)["positions"]
    shown = [pct(r["decoder_p"]) for r in want]
    assert shown != [pct(r["decoder_p"]) for r in other]  # the two decoders differ here
    table = next(d.value for d in page.dataframe if f"p {DECODER}" in d.value.columns and "rank D" in d.value.columns)
    assert list(table[f"p {DECODER}"]) == shown
    assert list(table["rank D"]) == ["—"] + [f"{r['decoder_rank']:,}" for r in want[1:]]


def test_the_trophy_rows_are_the_word_that_refers_back_and_the_last_word(page, encoder):
    rows = []
    for sentence, last in ((TROPHY["en"][0], " big"), (TROPHY["en"][1], " small")):
        pos = {r["token"]: r for r in fill.compare(encoder, load(DECODER), sentence)["positions"]}
        rows += [(sentence, token, pct(pos[token]["encoder_p"]), pct(pos[token]["decoder_p"]))
                 for token in (" it", last)]
    table = next(d.value for d in page.dataframe if "sentence" in d.value.columns)
    shown = list(table[["sentence", "token", "p course-roberta", f"p {DECODER}"]].itertuples(index=False, name=None))
    assert shown == rows


def test_tokens_seen_is_steps_times_batch_times_window(page):
    # docs/course-models-run/training.json: 5,950 steps of 128 windows of 256 tokens = 194,969,600 tokens
    table = next(d.value for d in page.dataframe if "course-roberta's training" in d.value.columns)
    values = dict(table.itertuples(index=False, name=None))
    assert values["steps"] == "5,950" and values["batch"] == "128 windows of 256 tokens"
    assert values["tokens seen"] == f"{5_950 * 128 * 256:,}" == "194,969,600"
