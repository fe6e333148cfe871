"""The detector page for a class on one link (issue 41): the evaluation of the whole set (every score's AUROC and
rates) is computed once and shared by every reader, and it is scikit-learn's AUROC."""

from functools import partial

import numpy as np
from sklearn.metrics import roc_auc_score

from lab.detect import evaluation as detect_eval
from tests import pages

open_page = partial(pages.open_page, "app_pages/detector.py", timeout=120)


def test_the_sets_evaluation_is_computed_once_for_every_reader(fresh_caches, monkeypatch):
    real, calls = detect_eval.evaluate, []

    def counted(rows):
        calls.append(len(rows))
        return real(rows)

    monkeypatch.setattr(detect_eval, "evaluate", counted)
    first = open_page()
    assert calls  # the counter is live
    n = len(calls)
    for _ in range(2):  # two more readers of the same link
        other = open_page()
        assert not other.exception
    assert len(calls) == n == 1
    from ui.runs import detect as runs

    [(rows, shown)] = runs._evaluated.values()
    y = np.array([r["label"] == "machine" for r in rows])
    oracle = roc_auc_score(y, detect_eval.oriented("fast_detectgpt", [r["fast_detectgpt"] for r in rows]))
    assert abs(shown["methods"]["fast_detectgpt"]["auroc"] - oracle) < 1e-9
    assert not first.exception


def test_the_threshold_and_histogram_are_computed_once_per_choice_for_every_reader(fresh_caches, monkeypatch):
    """The threshold's rates, ROC and groups, and the score's histogram: one computation per (set, score,
    percentile) however many readers open the link, equal to lab.detect.evaluation's."""
    real_at, real_hist, calls = detect_eval.at_threshold, detect_eval.histogram, []
    monkeypatch.setattr(detect_eval, "at_threshold", lambda *a, **k: calls.append("at") or real_at(*a, **k))
    monkeypatch.setattr(detect_eval, "histogram", lambda *a, **k: calls.append("hist") or real_hist(*a, **k))
    for _ in range(3):
        assert not open_page().exception
    assert sorted(calls) == ["at", "hist"]
    moved = open_page(det_threshold="90")  # another percentile: one more threshold, the same histogram
    assert not moved.exception and sorted(calls) == ["at", "at", "hist"]
    from ui.runs import detect as runs

    rows = next(v for v in runs._rows.values())
    shown = runs.at_threshold(rows, "fast_detectgpt", 90)
    assert shown == real_at(rows, "fast_detectgpt", 90)
    assert runs.histogram(rows, "fast_detectgpt") == real_hist(rows, "fast_detectgpt")
