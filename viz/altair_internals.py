"""Altair's private parts, behind one door (as ui/streamlit_internals.py is for Streamlit's).

Altair keeps the properties set on a schema object (a chart, a mark, an encoding, a channel, an axis, a title) in
the object's private dict `_kwds`. Reading it is how viz tells "set by the builder" from "left to Vega" (on a
channel, `getattr` gives a setter method, not the value); writing it changes one property of a copied chart in
place (viz/present.py enlarges a chart for a projector). Only this module touches `_kwds`
(tests/test_structure.py); tests/test_altair_internals.py checks that Altair still keeps properties there, so that an
upgrade that moves them fails a test instead of silently leaving projector charts small and charts undescribed.
"""

from __future__ import annotations

import altair as alt


def own(obj, name: str):
    """The property `name` set on the Altair object `obj` itself, or None (unset, or `obj` not an Altair object)."""
    value = obj._kwds.get(name, alt.Undefined) if isinstance(obj, alt.SchemaBase) else alt.Undefined
    return None if value is alt.Undefined else value


def set_own(obj, name: str, value) -> None:
    """Set the property `name` of the Altair object `obj` in place (on a copy: a chart may be shared)."""
    obj._kwds[name] = value


class Unvalidated:
    """A chart whose to_dict() skips Altair's validation against the Vega-Lite JSON schema (the dict is the same:
    validation only reads it). Streamlit's conversion (ui.streamlit_internals.altair_to_vega_lite) calls nothing
    but to_dict() on the chart it is given, under a lock every session shares; validating there took 11 of a
    heatmap's 16 ms, most of a warm chart's cost (ui/cached/charts.py says when it is skipped)."""

    def __init__(self, chart):
        self.chart = chart

    def to_dict(self, **kwargs) -> dict:
        return self.chart.to_dict(validate=False, **kwargs)
