"""Mistakes the ceiling page once let through (issues #40 and #33), each caught: the Portuguese text measured as the
English one, the curves ignoring the slider, the labels "observed" and "(1 − e)ⁿ" swapped, and the error rates
after an error (the conditional rates worked by hand; the forced-error summary against transformers' own logits,
with and without kept apart, averaged per distance)."""

import numpy as np
import pytest
import streamlit as st
import torch

from lab import ceiling
from lab.models import load
from lab.text import encode
from tests import pages

PAGE = "app_pages/ceiling.py"
MODEL = "course-gpt2-1x64"  # the smallest course decoder: one model on the curves keeps the page quick


def frames(chart):
    """Every dataset of a chart (a layered chart sends one per layer), as DataFrames."""
    import pyarrow as pa

    return [pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets]


@pytest.fixture(scope="module")
def page():
    """The English page measuring the Portuguese documentation, runs up to 8 tokens, one model; caches emptied."""
    from ui.model_loader import model_cache

    for clear in (model_cache.clear, st.cache_data.clear):
        clear()
    at = pages.open_page(PAGE, timeout=300, ceil_source="unseen:pt", ceil_n="8", ceil_models=MODEL)
    yield at
    for clear in (model_cache.clear, st.cache_data.clear):
        clear()


@pytest.fixture(scope="module")
def measured():
    """lab.ceiling.measure on the Portuguese and English texts the page reads (first 6,000 characters), n <= 8."""
    m = load(MODEL)
    return {lang: ceiling.measure(m, encode(m.tokenizer, text[:6000]), 8)
            for lang, text in ceiling.unseen_texts().items()}


def curve(at) -> "pd.DataFrame":  # noqa: F821
    (chart,) = [c for c in at.get("vega_lite_chart") if '"field": "which"' in c.proto.spec]
    return next(f for f in frames(chart) if "which" in f.columns)


def test_the_portuguese_text_is_the_one_measured(page, measured):
    assert f"{measured['pt']['e']:.3f}" != f"{measured['en']['e']:.3f}"
    shown = next(d.value for d in page.dataframe if "e" in d.value.columns and "model" in d.value.columns)
    shown = shown.set_index("model")
    assert shown.loc[MODEL, "e"] == f"{measured['pt']['e']:.3f}"
    assert shown.loc[MODEL, "tokens"] == f"{measured['pt']['tokens']:,}"


def test_the_curves_follow_the_slider(page, measured):
    frame = curve(page)
    assert sorted(set(frame["n"])) == list(range(1, 9))  # 8 from the slider, not the default 64
    want = [c["predicted"] for c in measured["pt"]["curve"]]
    got = frame[frame["which"] == "(1 − e)ⁿ"].sort_values("n")["value"].tolist()
    assert got == pytest.approx(want)


def test_observed_and_predicted_carry_their_own_labels(page, measured):
    frame = curve(page)
    observed = frame[frame["which"] == "observed"].sort_values("n")
    want = {c["n"]: c["observed"] for c in measured["pt"]["curve"] if c["observed"] is not None}
    assert dict(zip(observed["n"], observed["value"], strict=True)) == pytest.approx(
        {n: v for n, v in want.items() if v >= 1e-4})
    predicted = frame[frame["which"] == "(1 − e)ⁿ"]
    e = measured["pt"]["e"]
    assert predicted["value"].tolist() == pytest.approx([(1 - e) ** n for n in predicted["n"]])
    assert observed["value"].tolist() != pytest.approx(predicted.sort_values("n")["value"].tolist())


def test_the_conditional_error_rates_on_a_hand_worked_run():
    right = np.array([True, False, False, True, True, False, True, True])
    # after an error (positions 1, 2, 5): next wrong at 2 only -> 1/3; after a right token (0, 3, 4, 6): next
    # wrong at 1 and 5 -> 2/4
    assert ceiling.conditional(right) == pytest.approx((1 / 3, 1 / 2))


def direct_forced(loaded, ids, positions, k):
    """For each position: whether each of the next k top-1 predictions is wrong, without and with the token the
    model ranks last there forced in, from transformers' own logits (the text fits the context)."""
    out = {"without": [], "with": []}
    with torch.no_grad():
        for p in positions:
            end = min(len(ids), p + 1 + k)
            bad = int(loaded.model(torch.tensor([ids[:p]])).logits[0, -1].argmin())
            for name, seq in (("without", ids[:end]), ("with", ids[:p] + [bad] + ids[p + 1:end])):
                best = loaded.model(torch.tensor([seq])).logits[0, :-1].argmax(-1).numpy()
                out[name].append((best != np.array(ids[1:end]))[p:])
    return out


def test_the_forced_error_summary_equals_transformers():
    m = load(MODEL)
    ids = encode(m.tokenizer, ceiling.unseen_texts()["en"])[:80]
    s = ceiling.forced_summary(m, ids, k=8, positions=6)
    assert len(s["positions"]) == 6 and all(1 <= p <= len(ids) - 2 for p in s["positions"])
    wrong = direct_forced(m, ids, s["positions"], 8)
    for name in ("without", "with"):
        assert s[f"error_{name}"] == pytest.approx(np.concatenate(wrong[name]).mean())
        per_distance = [np.mean([w[d] for w in wrong[name] if len(w) > d]) for d in range(8)]
        assert s["by_distance"][name] == pytest.approx(per_distance)
    assert s["error_with"] != pytest.approx(s["error_without"])  # a swap would show
    assert s["by_distance"]["with"] != pytest.approx(s["by_distance"]["without"])


def test_the_course_table_puts_the_forced_rates_in_their_columns(page):
    m = load("course-gpt2")  # on Portuguese: 52.3 % with, 43.6 % without
    f = ceiling.forced_summary(m, encode(m.tokenizer, ceiling.unseen_texts()["pt"][:6000]), k=16)
    assert f"{100 * f['error_with']:.1f}" != f"{100 * f['error_without']:.1f}"
    table = next(d.value for d in page.dataframe if "language" in d.value.columns)
    row = table[(table["model"] == "course-gpt2") & (table["language"] == "PT")].iloc[0]
    assert row["error in the 16 tokens after a forced wrong one"] == f"{100 * f['error_with']:.1f} %"
    assert row["same tokens, nothing forced"] == f"{100 * f['error_without']:.1f} %"
