"""Fast unit tests written to kill mutmut's surviving mutants (`make mutants`, docs/testing.md): each pins a
number a page states, worked by hand here."""

import numpy as np
import pytest

from lab.detect import evaluation as detect_eval


def test_rates_count_a_flag_at_the_threshold_itself():
    labels, values = np.array([1, 0, 1, 0]), np.array([0.5, 0.5, 0.2, 0.1])
    assert detect_eval.rates(labels, values, 0.5) == {"tp": 1, "fp": 1, "fn": 1, "tn": 1, "tpr": 0.5, "fpr": 0.5}
