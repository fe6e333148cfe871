"""Fast unit tests written to kill mutmut's surviving mutants (`make mutants`, docs/testing.md): each pins a
number a page states, worked by hand here."""

import numpy as np
import pytest

from lab.detect import evaluation as detect_eval


def test_rates_count_a_flag_at_the_threshold_itself():
    labels, values = np.array([1, 0, 1, 0]), np.array([0.5, 0.5, 0.2, 0.1])
    assert detect_eval.rates(labels, values, 0.5) == {"tp": 1, "fp": 1, "fn": 1, "tn": 1, "tpr": 0.5, "fpr": 0.5}


def test_rates_with_one_machine_text_and_with_none():
    r = detect_eval.rates(np.array([1, 0, 0]), np.array([0.9, 0.1, 0.95]), 0.5)
    assert (r["tp"], r["fp"], r["fn"], r["tn"], r["tpr"], r["fpr"]) == (1, 1, 0, 1, 1.0, 0.5)
    r = detect_eval.rates(np.array([0, 0]), np.array([0.9, 0.1]), 0.5)  # no machine text: TPR 0, not a crash
    assert (r["tpr"], r["fpr"]) == (0.0, 0.5)
    r = detect_eval.rates(np.array([1]), np.array([0.1]), 0.5)
    assert (r["tpr"], r["fpr"], r["fn"]) == (0.0, 0.0, 1)


def test_base_rate_when_every_text_is_flagged():
    assert detect_eval.base_rate(1.0, 1.0, 0.5) == pytest.approx(0.5)  # everyone flagged: half are people
    assert detect_eval.base_rate(1.0, 0.0, 0.5) == 0.0 and detect_eval.base_rate(0.0, 0.5, 0.5) == 1.0


def test_auroc_of_one_class_is_undefined_and_ties_count_half():
    assert np.isnan(detect_eval.auroc([1, 1], [0.1, 0.2])) and np.isnan(detect_eval.auroc([0, 0], [0.1, 0.2]))
    assert detect_eval.auroc([1, 0], [0.5, 0.5]) == 0.5
    assert detect_eval.auroc([1, 0, 1, 0], [0.9, 0.1, 0.3, 0.3]) == 0.875  # 3 pairs won, 1 tied, of 4


def test_roc_starts_at_infinity_and_walks_the_thresholds_down():
    curve = detect_eval.roc([1, 0, 1], [0.2, 0.5, 0.9])
    assert curve["threshold"].tolist() == [np.inf, 0.9, 0.5, 0.2]
    assert curve["tpr"].tolist() == [0.0, 0.5, 0.5, 1.0] and curve["fpr"].tolist() == [0.0, 0.0, 1.0, 1.0]


def test_oriented_turns_only_the_scores_where_machine_text_is_low():
    assert detect_eval.oriented("mean_log_rank", [1, -2]).tolist() == [-1.0, 2.0]
    assert detect_eval.oriented("fast_detectgpt", [1, -2]).tolist() == [1.0, -2.0]


def rows():
    """Two human texts (en short, pt long) and four machine ones, two settings and two generators."""
    out = []
    for i, (label, lang, band, setting, generator, a, b) in enumerate([
            ("human", "en", "short", None, None, 0.1, 3.0), ("human", "pt", "long", None, None, 0.4, 1.0),
            ("machine", "en", "short", "greedy", "g1", 0.9, 2.0), ("machine", "pt", "long", "greedy", "g2", 0.3, 0.5),
            ("machine", "en", "long", "pure", "g1", 0.6, 4.0), ("machine", "pt", "short", "pure", "g2", 0.2, 0.2)]):
        out.append({"id": i, "label": label, "lang": lang, "band": band, "setting": setting, "generator": generator,
                    "fast_detectgpt": a, "mean_log_rank": b})
    return out


def test_groups_and_evaluate_on_hand_made_rows():
    g = detect_eval.groups(rows())
    assert list(g) == ["lang:en", "lang:pt", "length:long", "length:short", "setting:greedy", "setting:pure",
                       "generator:g1", "generator:g2"]
    assert g["lang:en"].tolist() == [True, False, True, False, True, False]
    assert g["setting:greedy"].tolist() == [True, True, True, True, False, False]  # every human text, its machines
    assert g["generator:g2"].tolist() == [True, True, False, True, False, True]
    out = detect_eval.evaluate(rows() + [{**rows()[0], "id": 9, "fast_detectgpt": 0.0} | {"mean_log_rank": 1.0}])
    assert (out["n_human"], out["n_machine"]) == (3, 4)
    fast = detect_eval.evaluate(rows())["methods"]["fast_detectgpt"]
    # machine 0.9 0.3 0.6 0.2 against human 0.1 0.4: won 4 + 1 + 2 + 1 = 6 of 8
    assert fast["auroc"] == 0.75 and fast["by_group"]["lang:en"] == 1.0 and fast["by_group"]["lang:pt"] == 0.0
    rank = detect_eval.evaluate(rows())["methods"]["mean_log_rank"]  # low is machine: -2 -0.5 -4 -0.2 vs -3 -1
    assert rank["auroc"] == 0.625
    partial = [{k: v for k, v in r.items() if k != "mean_log_rank" or r["id"] != 2} for r in rows()]
    assert list(detect_eval.evaluate(partial)["methods"]) == ["fast_detectgpt"]  # a score some rows lack: left out


def test_rates_with_one_human_text():
    r = detect_eval.rates(np.array([1, 0]), np.array([0.9, 0.8]), 0.5)  # the one human text flagged: FPR 1
    assert (r["tpr"], r["fpr"]) == (1.0, 1.0)
