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
