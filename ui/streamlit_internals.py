"""Streamlit's private parts, behind one door (issue 51). Every symbol the app, its bench clients and its tests use
that is not Streamlit's public API is imported here and nowhere else (tests/test_structure.py checks it), and
tests/test_streamlit_internals.py fails naming the symbol, attribute or message field when a Streamlit release
renames or removes one. Checked against Streamlit 1.67.0 (requirements.txt pins it).

Who uses what, and why no public API does it:
- ui/runtime_fix.py patches `AppSession.request_rerun` and reads a session's `_scriptrunner`, `_state`,
  `_event_loop`, `_pages_manager` and a runner's `_requests._state` (a rerun right after a run ended lost that
  run's end; docs/hosting.md). Streamlit has no hook for it.
- ui/url_state.py reads the running page (`get_script_run_ctx`: its script hash, its pages, whether Back/Forward
  started the run) and lets `RerunException` pass. `st.navigation(...).url_path` is public but only in app.py's
  run; a widget's binding needs it wherever it runs.
- ui/cached/charts.py turns an Altair chart into the Vega-Lite spec `st.altair_chart` would send
  (`_convert_altair_to_vega_lite_spec`), so a class shares one spec per view.
- bench_pages/ speaks the websocket protocol a browser speaks (`BackMsg`, `ForwardMsg`): virtual readers.
- tests: AppTest's runtime (`Runtime`), the rerun fix's own parts (`ClientState`, `RerunData`, `ScriptRequests`),
  Arrow bytes read back as a table (`convert_arrow_bytes_to_pandas_df`).
"""

from __future__ import annotations

from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec as altair_to_vega_lite
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner_utils import script_requests
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests, ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext, get_script_run_ctx

# The names the app's modules use, so that only this module names Streamlit's own (the before-stop check greps)
run_context = get_script_run_ctx  # the running script's context (its page, its pages), None outside a run
Rerun = RerunException  # what st.rerun raises through a run

__all__ = ["AppSession", "AppSessionState", "BackMsg", "ClientState", "ForwardMsg", "PagesManager", "RerunData",
           "RerunException", "Runtime", "ScriptRequestType", "ScriptRequests", "ScriptRunContext",
           "Rerun", "altair_to_vega_lite", "convert_arrow_bytes_to_pandas_df", "get_script_run_ctx", "run_context",
           "script_requests"]

# Private attributes read on Streamlit's objects (the contract test finds each where Streamlit sets it)
APP_SESSION_ATTRIBUTES = ("_event_loop", "_scriptrunner", "_state", "_pages_manager")  # set in AppSession.__init__
SCRIPT_REQUESTS_ATTRIBUTES = ("_state",)  # a ScriptRequests' own
RUN_CONTEXT_ATTRIBUTES = ("pages_manager", "page_script_hash")  # a ScriptRunContext's fields
# Message fields the bench's virtual readers write and read
BACK_MSG_FIELDS = {"rerun_script": ("query_string", "page_name", "page_script_hash", "widget_states", "context_info",
                                    "fragment_id", "is_auto_rerun")}
FORWARD_MSG_FIELDS = ("delta", "script_finished", "session_event", "metadata", "navigation", "page_info_changed",
                      "auto_rerun", "stop_auto_rerun")
# What a virtual student fills in and reads to answer a question (bench_pages/answer_play.py): a widget's state, and
# the text box's and the form's submit button's ids in the elements a run sends.
WIDGET_STATE_FIELDS = ("id", "string_value", "trigger_value")
ELEMENT_FIELDS = {"text_input": ("id", "label"), "button": ("id", "label", "is_form_submitter")}
