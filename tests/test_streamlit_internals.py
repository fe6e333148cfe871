"""The contract with Streamlit's private parts (ui/streamlit_internals.py, issue 51): each symbol, attribute and
message field the app reads is still where 1.67 put it. A Streamlit upgrade that moves one fails here, naming it,
instead of somewhere in a browser test."""

from __future__ import annotations

import importlib

import pytest

from ui import streamlit_internals as door


@pytest.mark.parametrize("name", door.__all__)
def test_every_private_symbol_is_importable(name):
    assert getattr(importlib.reload(door), name, None) is not None, f"streamlit no longer has {name}"


def test_the_private_attributes_the_rerun_fix_reads_are_still_set():
    missing = set(door.APP_SESSION_ATTRIBUTES) - set(door.AppSession.__init__.__code__.co_names)
    assert not missing, f"AppSession.__init__ no longer sets {sorted(missing)}"
    requests = door.ScriptRequests()
    assert all(hasattr(requests, a) for a in door.SCRIPT_REQUESTS_ATTRIBUTES), "ScriptRequests._state is gone"
    assert hasattr(door.ScriptRequestType, "STOP") and hasattr(door.AppSessionState, "SHUTDOWN_REQUESTED")
    assert hasattr(door.PagesManager, "current_page_script_hash") and hasattr(door.AppSession, "request_rerun")


def test_the_run_context_has_what_url_state_reads():
    fields = set(door.ScriptRunContext.__dataclass_fields__)  # its fields, or its properties
    missing = {a for a in door.RUN_CONTEXT_ATTRIBUTES if a not in fields and not hasattr(door.ScriptRunContext, a)}
    assert not missing, f"ScriptRunContext has no {sorted(missing)}"


def test_the_protocol_fields_the_virtual_readers_use():
    for message, fields in door.BACK_MSG_FIELDS.items():
        part = door.BackMsg.DESCRIPTOR.fields_by_name.get(message)
        assert part is not None, f"BackMsg.{message} is gone"
        missing = set(fields) - set(part.message_type.fields_by_name)
        assert not missing, f"BackMsg.{message} has no {sorted(missing)}"
    missing = set(door.FORWARD_MSG_FIELDS) - set(door.ForwardMsg.DESCRIPTOR.fields_by_name)
    assert not missing, f"ForwardMsg has no {sorted(missing)}"
    state = door.BackMsg.DESCRIPTOR.fields_by_name["rerun_script"].message_type.fields_by_name["widget_states"]
    widget = state.message_type.fields_by_name["widgets"].message_type
    assert not set(door.WIDGET_STATE_FIELDS) - set(widget.fields_by_name), "WidgetState lost a field the bench sets"
    delta = door.ForwardMsg.DESCRIPTOR.fields_by_name["delta"].message_type
    element = delta.fields_by_name["new_element"].message_type
    for kind, fields in door.ELEMENT_FIELDS.items():
        missing = set(fields) - set(element.fields_by_name[kind].message_type.fields_by_name)
        assert not missing, f"Element.{kind} has no {sorted(missing)}"


def test_the_vega_lite_conversion_still_takes_a_chart():
    import altair as alt
    import pandas as pd

    chart = alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q")
    spec = door.altair_to_vega_lite(chart)
    assert "mark" in spec or "layer" in spec
