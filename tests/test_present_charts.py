"""viz.present: a chart for a projector has its own sizes scaled (the spec Vega gets says so), its data shared
and the original chart untouched."""

import altair as alt
import pandas as pd

from viz import present


def chart():
    df = pd.DataFrame({"x": ["a", "b"], "y": [1, 2]})
    cells = alt.Chart(df).mark_rect().encode(x="x:N", y="y:O")
    text = alt.Chart(df).mark_text(fontSize=9, dy=-6).encode(x="x:N", y="y:O", text="y:Q")
    return (cells + text).properties(width=100, height=alt.Step(20)), df


def test_sizes_fonts_and_offsets_scale_and_the_original_stays():
    ch, df = chart()
    before = ch.to_dict()
    big = present.for_projector(ch, 2.0).to_dict()
    assert (big["width"], big["height"]) == (200, {"step": 40})
    marks = [layer["mark"] for layer in big["layer"]]
    assert {"type": "text", "fontSize": 18, "dy": -12} in marks
    assert big["config"]["axis"]["labelFontSize"] > 11 and big["config"]["text"]["fontSize"] == 15
    assert ch.to_dict() == before  # not mutated


def test_the_data_is_shared_not_copied():
    ch, df = chart()
    big = present.scaled(ch, 1.5)
    assert all(a.data is b.data for a, b in zip(big.layer, ch.layer, strict=True))


def test_a_facet_and_a_concat_scale_inside():
    df = pd.DataFrame({"x": ["a"], "y": [1], "f": ["p"]})
    inner = alt.Chart(df).mark_text(fontSize=10).encode(x="x:N", text="y:Q").properties(width=50)
    facet = inner.facet(column="f:N")
    assert present.scaled(facet, 2).to_dict()["spec"]["width"] == 100
    both = alt.hconcat(inner, inner)
    assert [c["mark"]["fontSize"] for c in present.scaled(both, 3).to_dict()["hconcat"]] == [30, 30]
