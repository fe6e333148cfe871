"""The detector page under AppTest, in both languages, on the shipped course models (offline, small): what it shows
equals what the lab and scikit-learn compute; bad input and hostile text are handled."""

import html
import re
from functools import partial

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from lab.detect import evaluation as detect_eval
from lab.detect import labelled_set as detect_set
from lab.detect import scoring as detect
from lab.models import load
from tests import pages

PAGE = "app_pages/detector.py"
open_page = partial(pages.open_page, PAGE, timeout=120)


@pytest.fixture(scope="module")
def course_rows():
    return detect_eval.shipped_rows(load("course-gpt2"), load("course-gpt2-2x128"))


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def coloured(at) -> str:
    return next(h.proto.body for h in at.get("html") if 'class="det-text"' in h.proto.body)


def test_english_page_shows_the_labs_numbers(fresh_caches, course_rows):
    at = open_page()
    assert at.title[0].value == "The detector"
    y = np.array([r["label"] == "machine" for r in course_rows])
    s = detect_eval.oriented("fast_detectgpt", [r["fast_detectgpt"] for r in course_rows])
    r = detect_eval.at_threshold(course_rows, "fast_detectgpt", 95)  # the default: 95th percentile of the humans
    assert abs(r["fpr"] - 0.05) <= 1 / (~y).sum()  # about 5 % of the human texts, within one text
    assert metrics(at) == {"machine texts caught (TPR)": f"{100 * r['tpr']:.1f} %",
                           "human texts flagged (FPR)": f"{100 * r['fpr']:.1f} %"}
    auroc = next(d.value for d in at.dataframe if "AUROC" in d.value.columns)
    want = roc_auc_score(y, s)
    assert r["auroc"] == pytest.approx(want)
    who = next(d.value for d in at.dataframe if "group" in d.value.columns).set_index("group")
    assert who.loc["English", "%"] == f"{100 * r['by_group']['lang:en']['value']:.1f}"
    assert who.loc["Portuguese", "%"] == f"{100 * r['by_group']['lang:pt']['value']:.1f}"
    assert auroc.set_index("score").loc["Fast-DetectGPT (Bao et al. 2024)", "AUROC"] == f"{want:.3f}"
    # The default text is the project's own English passage; its tokens and ranks are lab.detect.scoring's.
    written = next(t for t in detect_set.load()["texts"] if t["source"] == "written-by-the-project")
    view = detect.detect(load("course-gpt2"), written["text"], load("course-gpt2-2x128"))
    body = coloured(at)
    assert body.count('class="det-b') == len({p for p in range(len(view["ids"]))} - {0}) - body.count("det-joined")
    assert f"rank {view['tokens'][0]['rank']:,}" in body
    words = at.success[0].value  # the conclusion: its numbers are the evaluation's
    assert f"catches {100 * r['tpr']:.0f} % of the machine texts and wrongly flags {100 * r['fpr']:.0f} %" in words
    assert f"AUROC of {want:.2f}" in words and "greedy" in words


def test_portuguese_words_numbers_and_default_text(fresh_caches):
    at = open_page(lang="pt")
    assert at.title[0].value == "O detector"
    assert set(metrics(at)) == {"textos de máquina pegos (TPR)", "textos humanos acusados (FPR)"}
    assert all("," in v for v in metrics(at).values())
    written = next(t for t in detect_set.load()["texts"] if t["source"] == "written-by-the-project"
                   and t["lang"] == "pt")
    assert at.expander[0].label == "Mostrar o texto" and written["text"] in [x.value for x in at.text]
    assert "Neste conjunto o melhor escore" in at.success[0].value
    assert "posto" in coloured(at)


def test_moving_the_threshold_needs_no_forward_pass(fresh_caches, forwards):
    at = open_page()
    before = metrics(at)
    assert forwards["n"] > 0  # the counter is live: the first view ran the model
    n = forwards["n"]
    at.slider(key="det_threshold").set_value(20).run()
    at.slider(key="det_prevalence").set_value(50).run()
    assert not at.exception and forwards["n"] == n
    assert metrics(at) != before


def test_hostile_text_is_shown_escaped(fresh_caches):
    hostile = 'Oi <script>alert(1)</script> <img src=x onerror="alert(2)"> & fim'
    at = open_page(det_source="own", state={"det_text": hostile})
    body = coloured(at)
    assert "<script" not in body and "<img" not in body and "onerror=" not in body.replace('onerror=&quot;', "")
    shown = html.unescape(re.sub(r"<[^>]*>", "", body))  # the markup the view itself adds taken away
    assert shown == hostile


@pytest.mark.parametrize("text", ["", "   \n"])
def test_an_empty_text_says_so(fresh_caches, text):
    at = open_page(det_source="own", state={"det_text": text})
    assert at.info[-1].value in ("Type a text to score.",)


def test_an_encoder_falls_back_to_the_course_decoder(fresh_caches):
    at = open_page(model="course-roberta")
    assert "encoder" in at.info[0].value and metrics(at)


def test_an_observer_that_cannot_be_had_is_a_message(fresh_caches):
    at = open_page(det_observer="gpt2")  # a hub model, not in this machine's cache
    assert at.warning and "gpt2" in at.warning[0].value and not at.metric


def test_no_observer_drops_binoculars(fresh_caches):
    at = open_page(det_observer="none")
    scores = next(d.value for d in at.dataframe if "this text" in d.value.columns)
    assert "Binoculars (Hans et al. 2024)" not in scores["score"].tolist() and len(scores) == 4


def test_the_gltr_buckets_only_colour_the_text_and_never_change_the_evaluation(fresh_caches, course_rows):
    """Issue 34, item 3: a display option leaves what is measured alone: the same shipped texts (all of them), the same
    AUROCs, TPRs and confusion at the threshold, whatever the buckets; only this text's colours follow them."""
    at = open_page()
    before = {"metrics": metrics(at), "tables": [d.value.to_dict() for d in at.dataframe],
              "captions": [c.value for c in at.caption if "Evaluation set" in c.value]}
    at.pills(key="det_buckets").set_value("1/10/100").run()
    assert not at.exception
    after = {"metrics": metrics(at), "tables": [d.value.to_dict() for d in at.dataframe],
             "captions": [c.value for c in at.caption if "Evaluation set" in c.value]}
    texts = detect_set.load()["texts"]
    n_human = sum(t["label"] == "human" for t in texts)
    assert after == before and f"{n_human:,} human texts" in after["captions"][0]
    assert f"{len(texts) - n_human:,} continuations" in after["captions"][0]
    assert any(">top 1<" in h.proto.body for h in at.get("html"))  # the legend follows the buckets


def test_tpr_at_1_and_5_percent_fpr_beside_the_auroc(fresh_caches, course_rows):
    """RAID's headline figure in the AUROC table, read from scikit-learn's ROC curve on the shipped rows."""
    from sklearn.metrics import roc_curve

    at = open_page()
    table = next(d.value for d in at.dataframe if "AUROC" in d.value.columns).set_index("score")
    y = np.array([r["label"] == "machine" for r in course_rows])
    s = detect_eval.oriented("fast_detectgpt", [r["fast_detectgpt"] for r in course_rows])
    fpr, tpr, _ = roc_curve(y, s)
    row = table.loc["Fast-DetectGPT (Bao et al. 2024)"]
    assert row["TPR at 1 % FPR"] == f"{100 * tpr[fpr <= 0.01].max():.1f} %"
    assert row["TPR at 5 % FPR"] == f"{100 * tpr[fpr <= 0.05].max():.1f} %"
    assert any(f"of the {(~y).sum()} human texts" in c.value for c in at.caption)
