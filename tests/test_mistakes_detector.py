"""Mistakes the detector page once let through (issue #33's list), each caught where a reader would see it: the
base rate's sentence, who gets flagged per language, the GLTR buckets the reader chose, a joined run's colour,
the short/long band. References: a base rate worked by hand, lab.detect's functions called with the reader's
inputs, the labels the page writes."""

import re

import numpy as np
import pytest
import streamlit as st

from lab.detect import evaluation as detect_eval
from lab.detect import labelled_set as detect_set
from lab.detect import scoring as detect
from lab.models import load
from lab.text import readable
from tests import pages
from tests.test_tokens_page import chart_data

PAGE = "app_pages/detector.py"
BUCKETS = (1, 10, 100)  # the reader picks "1/10/100", not the default 10/100/1000


def human_share(tpr: float, fpr: float, prevalence: float) -> float:
    """Bayes' rule written out here: people flagged over everyone flagged."""
    people, machines = fpr * (1 - prevalence), tpr * prevalence
    return people / (people + machines)


@pytest.fixture(scope="module")
def page():
    """The Portuguese page (its passage has joined runs: accented characters split in two tokens), with 20 %
    machine text chosen; the caches emptied before and after."""
    from ui.model_loader import model_cache
    from ui.runs import detect as rows_cache

    for clear in (model_cache.clear, st.cache_data.clear, rows_cache.clear):
        clear()
    at = pages.open_page(PAGE, timeout=180, lang="pt", det_prevalence="20")
    yield at
    for clear in (model_cache.clear, st.cache_data.clear, rows_cache.clear):
        clear()


@pytest.fixture(scope="module")
def course():
    return load("course-gpt2"), load("course-gpt2-2x128")


@pytest.fixture(scope="module")
def at_threshold(course):
    """The set's labels, oriented Fast-DetectGPT scores and the default threshold (95th percentile of humans)."""
    rows = detect_eval.shipped_rows(*course)
    y = np.array([r["label"] == "machine" for r in rows])
    s = detect_eval.oriented("fast_detectgpt", [r["fast_detectgpt"] for r in rows])
    return rows, y, s, float(np.percentile(s[~y], 95))


def test_the_base_rate_on_a_hand_worked_asymmetric_example():
    # 1,000 texts, 20 % machine: 200 machine, 120 caught (TPR 0.6); 800 human, 40 flagged (FPR 0.05).
    # Of the 160 flagged, 40 were written by people: 0.04 / (0.04 + 0.12) = 0.25. The swapped formula gives 0.75.
    assert detect_eval.base_rate(0.6, 0.05, 0.2) == pytest.approx(0.25)
    assert detect_eval.base_rate(0.9, 0.05, 0.5) == pytest.approx(0.05 / 0.95)


def test_the_pages_base_rate_sentence_is_bayes_rule(page, at_threshold):
    _, y, s, cut = at_threshold
    r = detect_eval.rates(y, s, cut)
    want = round(100 * human_share(r["tpr"], r["fpr"], 0.20))
    swapped = round(100 * r["tpr"] * 0.2 / (r["tpr"] * 0.2 + r["fpr"] * 0.8))
    assert want != swapped  # the example tells the two formulas apart
    (words,) = [i.value for i in page.info if "redações que este detector acusa" in i.value]
    assert f"cerca de **{want}** foram escritas por alunos" in words


def test_who_gets_flagged_keeps_english_and_portuguese_apart(page, at_threshold):
    rows, y, s, cut = at_threshold
    masks = detect_eval.groups(rows)
    fpr = {g: detect_eval.rates(y[masks[g]], s[masks[g]], cut)["fpr"] for g in ("lang:en", "lang:pt")}
    assert f"{100 * fpr['lang:en']:.1f}" != f"{100 * fpr['lang:pt']:.1f}"  # the swap would show
    table = next(d.value for d in page.dataframe if "grupo" in d.value.columns).set_index("grupo")
    assert table.loc["inglês", "%"] == f"{100 * fpr['lang:en']:.1f}".replace(".", ",")
    assert table.loc["português", "%"] == f"{100 * fpr['lang:pt']:.1f}".replace(".", ",")
    pct = lambda x: f"{100 * x:.0f} %"  # noqa: E731
    assert f"{pct(fpr['lang:en'])} dos em inglês e {pct(fpr['lang:pt'])} dos em português" in page.success[0].value


def passage(lang: str) -> str:
    return next(t["text"] for t in detect_set.load()["texts"] if t["source"] == "written-by-the-project"
                and t["lang"] == lang)


def test_the_text_is_scored_with_the_buckets_the_reader_chose(fresh_caches, course):
    at = pages.open_page(PAGE, timeout=180, lang="pt", det_buckets="1/10/100")
    chosen = detect.detect(course[0], passage("pt"), course[1], BUCKETS)["scores"]["gltr"]
    default = detect.detect(course[0], passage("pt"), course[1])["scores"]["gltr"]
    assert list(chosen.values()) != pytest.approx(list(default.values()))
    (chart,) = [c for c in at.get("vega_lite_chart") if '"field": "bucket"' in c.proto.spec]
    frame = chart_data(chart)
    assert list(frame["bucket"]) == ["top 1", "top 10", "top 100", "além de 100"]
    assert list(frame["share"]) == pytest.approx(list(chosen.values()))


def test_a_joined_run_takes_the_colour_of_its_highest_bucket(page, course):
    view = detect.detect(course[0], passage("pt"), course[1])
    bucket = {t["position"]: t["bucket"] for t in view["tokens"]}
    want, mixed = [], 0
    for run in readable(course[0].tokenizer, view["ids"]):
        scored = [bucket[p] for p in range(run["start"], run["stop"]) if p in bucket]
        if scored:
            want.append((max(scored), run["joined"]))
            mixed += run["joined"] and min(scored) != max(scored)
    assert mixed >= 1  # a run whose tokens fall in different buckets: lowest and highest differ
    (body,) = [h.proto.body for h in page.get("html") if 'class="det-text"' in h.proto.body]
    shown = [(int(b), bool(j)) for b, j in re.findall(r'<span class="det-b(\d)( det-joined)?"', body)]
    assert shown == want


def test_the_length_band_boundary_is_the_one_the_page_names(page):
    names = list(next(d.value for d in page.dataframe if "grupo" in d.value.columns)["grupo"])
    assert "curtos (< 96 tokens)" in names and "longos (96 tokens ou mais)" in names  # what the reader is told
    assert detect_set.band(95) == "short" and detect_set.band(96) == "long"
    assert detect_set.band(1) == "short" and detect_set.band(10_000) == "long"
