"""What viz/altair_internals.py relies on in Altair (6.x): the properties set on a schema object are kept in its
private dict `_kwds`, and a value written there is what `to_dict()` (the Vega-Lite spec, the outside oracle) gives.
An Altair upgrade that moves them fails here, by name, instead of leaving projector charts small (viz/present.py)
and charts without their text alternative (viz/access.py)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import pytest

from viz import altair_internals as door
from viz.access import summary
from viz.present import scaled

DATA = pd.DataFrame({"a": [1, 2], "b": [3, 4]})


def test_altair_keeps_an_objects_own_properties_in_its_private_dict():
    chart = alt.Chart(DATA).mark_point(size=30).encode(x=alt.X("a:Q", title="keys")).properties(width=200)
    for obj in (chart, chart.mark, chart.encoding, chart.encoding.x):
        assert isinstance(obj, alt.SchemaBase) and isinstance(vars(obj).get("_kwds"), dict), type(obj)
    assert (door.own(chart, "width"), door.own(chart.mark, "size")) == (200, 30)
    assert door.own(chart.encoding.x, "title") == "keys"
    assert callable(chart.encoding.x.title)  # why the door reads the dict: a channel's attribute is a setter
    assert door.own(chart, "height") is None and "height" not in chart.to_dict()  # unset: left to Vega
    assert door.own("not altair", "width") is None


def test_a_value_written_through_the_door_is_the_specs():
    chart = alt.Chart(DATA).mark_text(fontSize=12).encode(x="a:Q").properties(height=alt.Step(20))
    door.set_own(chart.mark, "fontSize", 18)
    door.set_own(chart, "width", 300)
    spec = chart.to_dict()
    assert (spec["mark"]["fontSize"], spec["width"], spec["height"]) == (18, 300, {"step": 20})


def test_nested_charts_and_titles_are_kept_the_same_way():
    base = alt.Chart(DATA).mark_bar().encode(x="a:Q", y="b:Q")
    layered = alt.layer(base, base.mark_rule()).properties(title=alt.TitleParams("Weights", subtitle="layer 2"))
    assert len(door.own(layered, "layer")) == 2
    assert door.own(door.own(layered, "title"), "subtitle") == "layer 2"
    assert door.own(alt.hconcat(base, base), "hconcat") is not None
    assert isinstance(door.own(base.facet(column="a:N"), "spec"), alt.SchemaBase)


@pytest.mark.parametrize("factor", [1.35, 2.0])
def test_the_doors_users_still_see_a_charts_own_sizes_and_words(factor):
    """Through the door, end to end: the projector copy's sizes (hand computed) and the chart's description."""
    chart = alt.Chart(DATA).mark_point(size=40, fontSize=10).encode(
        x=alt.X("a:Q", title="keys"), y=alt.Y("b:Q", axis=alt.Axis(title="queries"))).properties(width=100)
    big = scaled(chart, factor).to_dict()
    assert big["mark"]["size"] == pytest.approx(40 * factor * factor) and big["width"] == pytest.approx(100 * factor)
    assert big["mark"]["fontSize"] == pytest.approx(10 * factor) and chart.to_dict()["width"] == 100
    assert summary(chart.properties(title="Heads")) == "Chart: Heads. across: keys; up: queries."
