"""Chart specs made once per view: a class of 30 on one link asks for the same charts 30 times.

Building an Altair chart and turning it into Vega-Lite (Altair validates the whole spec against its JSON schema,
under a lock Streamlit holds for every session) was most of a warm rerun on the chart-heavy pages. Here it
happens once per (builder, arguments, projector); every later reader gets the finished spec (st.cache_data hands
each one its own copy) and ui.exports draws it with st.vega_lite_chart, exactly what st.altair_chart would draw.

Altair's validation of the spec against the Vega-Lite schema is a check, not a step: the spec is the same dict
without it. The app skips it (a class typing its own text makes a new spec per reader: 11 of a heatmap's 16 ms,
under a lock every session shares); the tests turn it on (CHECK_ENV=1, tests/conftest.py), so every chart any test
draws, in AppTest or a real server, is still validated.
"""

from __future__ import annotations

import os

import streamlit as st

from ui.streamlit_internals import altair_to_vega_lite as streamlit_spec
from viz.altair_internals import Unvalidated
from viz.present import for_projector

CHECK_ENV = "LAB_CHECK_CHARTS"  # 1: validate every spec against the Vega-Lite schema (the tests)


@st.cache_data(max_entries=128, show_spinner=False)  # specs are 25-60 kB; a 64-token heatmap 300 kB: <= ~38 MB
def spec(builder: str, _build, args: tuple, kwargs: dict, projector: bool) -> dict:
    """The Vega-Lite spec st.altair_chart would send for `_build(*args, **kwargs)` (a viz function, known in the
    cache's key by its full name `builder`), enlarged for a projector when `projector`. Its data are Arrow
    datasets, as Streamlit's own."""
    chart = _build(*args, **kwargs)
    chart = for_projector(chart) if projector else chart
    return streamlit_spec(chart if os.environ.get(CHECK_ENV) == "1" else Unvalidated(chart))
