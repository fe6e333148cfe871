"""viz.attention's cell text and the per-head table order, read from what Altair and pandas are given."""

import math
import random

import numpy as np
import pandas as pd
import pytest

from viz import attention as viz

# RoBERTa's <s> row on the trophy sentence looked like this: almost all weight on <s>, the rest ~1e-6..1e-15.
S_ROW = [0.9999989, 3e-15, 1e-06, 8e-12, 2.5e-07, 4e-10, 1e-07, 6e-13]


def _parse(text: str) -> float:
    """A cell's text back to a float with Python's own parser (pt's decimal comma, the minus sign)."""
    return float(text.replace("−", "-").replace(",", "."))


def test_cell_text_is_short_and_never_scientific_nor_a_false_zero():
    rng = random.Random(0)
    xs = [0.0, 1.0, *S_ROW, *(10 ** rng.uniform(-16, 0) for _ in range(2000)), *(rng.random() for _ in range(500))]
    for x in xs:
        for lang in ("en", "pt"):
            text = viz._cell(x, 2, lang)
            assert "e" not in text and len(text) <= 5, (x, text)
            if text.startswith("<"):
                assert 0 < x < 0.005 and text == {"en": "<0.01", "pt": "<0,01"}[lang]
            else:
                assert abs(_parse(text) - x) <= 0.005 + 1e-12, (x, text)  # rounded, never further
                assert (_parse(text) == 0) == (x == 0)  # only an exact zero prints 0
    assert [viz._cell(x) for x in (0.0, 1.0, 0.07, 0.5, 0.999)] == ["0", "1", "0.07", "0.50", "1.00"]
    assert [viz._cell(x, 2, "pt") for x in (0.88, 0.12)] == ["0,88", "0,12"]  # issue 48: never ",88"


def test_score_text_keeps_signs_and_stays_short():
    for x, want in ((-12.34, "−12"), (-0.04, ">−0.1"), (0.04, "<0.1"), (-3.21, "−3.2"), (-0.5, "−0.5"),
                    (float("-inf"), "−∞"), (123.4, "123")):
        assert viz._cell(x, 1) == want
        if math.isfinite(x) and want[0] not in "<>":
            assert abs(_parse(want) - x) <= 0.5


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [])


def test_tiny_weights_print_as_less_than_a_hundredth_and_only_where_they_fit():
    n = len(S_ROW)
    values = np.full((n, n), 1.0 / n)
    values[0] = S_ROW
    labels = [f"{i} t{i}" for i in range(n)]
    chart = viz.heatmap(values, labels, size=viz.AXES_PX + 20 * n)  # cells 20 px: the smallest that print
    spec = chart.to_dict()
    (text_layer,) = [lay for lay in _layers(spec) if lay.get("mark", {}).get("type") == "text"]
    assert {"filter": "datum.fits"} in text_layer["transform"]
    rows = pd.DataFrame(next(iter(spec["datasets"].values())))
    first = rows[rows["query"] == 0]
    assert list(first["text"]) == ["1.00", *["<0.01"] * (n - 1)]
    assert not any("e-" in t for t in rows["text"])
    for _, r in rows.iterrows():  # what is drawn is narrower than its 20 px cell
        assert r["fits"] == (viz.text_px(r["text"]) <= 18)
    drawn = rows[rows["fits"]]
    assert "0.12" in set(drawn["text"]) and "<0.01" not in set(drawn["text"])  # 4 characters fit 20 px, 5 do not


def test_long_scores_are_left_out_of_cells_too_narrow_for_them():
    values = np.array([[-123.4, 0.5], [-12.3, -1.0]])
    df = viz.grid_frame(values, ["0 a", "1 b"], diverging=True, digits=1, cell_px=20)
    assert dict(zip(df["text"], df["fits"], strict=True)) == {"−123": False, "0.5": True, "−12": True, "−1.0": True}
    assert viz.grid_frame(values, ["0 a", "1 b"], digits=1)["fits"].all()  # no cell size given: all


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize("metric", viz.SUMMARIES)
def test_the_per_head_table_shows_the_highest_first(metric, lang):
    rng = np.random.default_rng(1)
    rows = [{"layer": la, "head": h, "entropy": rng.random() * 4, "previous": rng.random(), "first": rng.random(),
             "self": rng.random()} for la in range(3) for h in range(4)]
    frame = viz.summary_frame(rows)
    shown = viz.summary_shown(frame, lang, by=metric)
    want = sorted(rows, key=lambda r: -r[metric])  # Python's own sort: highest first
    assert [(r["layer"], r["head"]) for r in want] == list(zip(shown["layer"], shown["head"], strict=True))
    assert list(shown.index) == list(range(len(rows)))  # row i of what is shown is row i of the frame returned


def test_no_negative_zero_in_numbers_a_page_writes():
    """Issue 48: "Entropia, no sorteio: -0,00 bits" at temperature 0. A value that rounds to zero has no sign."""
    from viz.format import number

    assert number(-1e-9, "pt") == "0,00" and number(-0.004, "en") == "0.00" and number(-0.0, "pt", 3) == "0,000"
    assert number(-0.006, "en") == "-0.01" and number(-1234.5, "pt", 1) == "-1.234,5"


def test_every_row_label_of_a_16_token_heatmap_is_kept():
    """Issue 48: row labels are thinned only where they would truly overlap (no extra separation on the rows)."""
    chart = viz.heatmap(np.full((16, 16), 1 / 16), [f"t{i}" for i in range(16)], size=420)
    spec = chart.to_dict()
    axes = [layer["encoding"]["y"]["axis"] for layer in spec.get("layer", [spec]) if "y" in layer.get("encoding", {})]
    assert axes and all(a.get("labelSeparation", 0) <= viz.ROW_LABEL_GAP for a in axes)
    rows_px = (420 - viz.AXES_PX) / 16
    assert rows_px >= 12  # a 12 px label fits its row: Vega's greedy rule drops none
