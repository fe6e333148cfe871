"""Chart specs made once per view (issue 41): a class on one link asks for the same charts 30 times, and building
and validating them was most of a warm rerun on the chart-heavy pages. ui.cached.charts makes each spec once;
ui.exports draws it with st.vega_lite_chart.

The oracle is Streamlit itself: for the same chart, what the page sends must be what st.altair_chart sends."""

from __future__ import annotations

import functools

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages import open_page


def both_ways(projector: bool):
    """A script that draws three charts with st.altair_chart, then the same three through ui.exports."""
    import numpy as np
    import streamlit as st

    from ui import exports
    from viz import attention as heat
    from viz import tokens as words
    from viz.present import for_projector

    values = np.tril(np.random.default_rng(0).random((7, 7)))
    frame = words.premium_frame({"seu texto": {"gpt2": 1.8, "o200k_base": 1.2}})
    charts = [(heat.heatmap, (values, [f"t{i}" for i in range(7)], "weights"), {"lang": "pt"}),
              (heat.heatmap, (values[:5, :5], list("abcde"), "scores"), {"scheme": "purpleorange", "digits": 1}),
              (words.premium_chart, (frame,), {"y_title": "pt ÷ en", "lang": "pt"})]
    if projector:
        st.query_params["present"] = "1"
    for build, args, kwargs in charts:
        chart = build(*args, **kwargs)
        st.altair_chart(for_projector(chart) if projector else chart)
    for k, (build, args, kwargs) in enumerate(charts):
        exports.chart(f"c{k}", st, exports.later(build, *args, **kwargs))


def drawn(chart) -> tuple:
    """What reaches the browser of one chart: its spec, its datasets and how it is laid out."""
    p = chart.proto
    return p.spec, [(d.name, d.has_name, d.data.data) for d in p.datasets], p.theme, p.use_container_width


@pytest.mark.parametrize("check", ["1", "0"])  # the tests validate every spec; the app does not (the same dict)
@pytest.mark.parametrize("projector", [False, True])
def test_the_page_sends_what_st_altair_chart_sends(projector, check, monkeypatch):
    from ui.cached import charts as cached_charts

    monkeypatch.setenv(cached_charts.CHECK_ENV, check)
    cached_charts.spec.clear()  # each way builds its own specs
    at = AppTest.from_function(both_ways, args=(projector,), default_timeout=60)
    if projector:
        at.query_params["present"] = "1"
    at.run()
    assert not at.exception, at.exception
    charts = at.get("vega_lite_chart")
    assert len(charts) == 6
    ours, streamlits = [drawn(c) for c in charts[3:]], [drawn(c) for c in charts[:3]]
    assert ours == streamlits
    assert len({spec for spec, *_ in ours}) == 3 and all(data for _, data, *_ in ours)  # three different charts


def test_a_spec_vega_lite_refuses_fails_where_the_tests_check_and_is_sent_where_the_app_does_not(monkeypatch):
    """The check is Altair's validation against the Vega-Lite schema: on in the tests (tests/conftest.py), where a
    chart Vega-Lite refuses fails; skipped in the app, which sends the same dict unchecked."""
    import altair as alt
    import pandas as pd

    from ui.cached import charts as cached_charts
    from viz.altair_internals import set_own

    def bad():
        chart = alt.Chart(pd.DataFrame({"x": [1]})).mark_bar(size=10).encode(x="x:Q")
        set_own(chart.mark, "size", "wide")  # a bar's size is a number (set after Altair checked the mark)
        return chart

    cached_charts.spec.clear()
    with pytest.raises(alt.utils.schemapi.SchemaValidationError):
        cached_charts.spec("tests.bad", bad, (), {}, False)
    monkeypatch.setenv(cached_charts.CHECK_ENV, "0")
    assert cached_charts.spec("tests.bad", bad, (), {}, False)["mark"] == {"type": "bar", "size": "wide"}


def test_a_second_reader_of_the_same_view_builds_no_chart(course_standins, monkeypatch):
    from viz import attention as heat

    real, built = heat.heatmap, []

    @functools.wraps(real)
    def counted(*args, **kwargs):
        built.append(args[2] if len(args) > 2 else kwargs.get("title"))
        return real(*args, **kwargs)

    monkeypatch.setattr(heat, "heatmap", counted)
    first = open_page("app_pages/causal_mask.py")
    assert len(built) == 4  # scores and weights, with the mask and without it
    second = open_page("app_pages/causal_mask.py")
    assert len(built) == 4  # the same view: every spec from the cache
    assert [drawn(c) for c in second.get("vega_lite_chart")] == [drawn(c) for c in first.get("vega_lite_chart")]
    open_page("app_pages/causal_mask.py", present="1")
    assert len(built) == 8  # a projector's view is another view: larger fonts and sizes
    other = open_page("app_pages/causal_mask.py", state={"mask_head": 1})
    assert len(built) == 12 and drawn(other.get("vega_lite_chart")[0]) != drawn(first.get("vega_lite_chart")[0])
