"""ui/runtime_fix.py: a rerun that arrives after a run ended waits until that run's last events are handled.

The defect is a race on a loaded server, measured with virtual students (docs/teaching.md: 30-34 of 180 moves never
shown on 2 cores, 60 students; none with the fix). Here the decision itself, on Streamlit's own ScriptRequests
(whose terminal state is what a stopped ScriptRunner refuses reruns with) and a recording event loop, and the patch
in place once the app has run."""

from types import SimpleNamespace

import pytest
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequests

from ui import runtime_fix


class Loop:
    def __init__(self):
        self.later = []

    def call_later(self, delay, fn, *args):
        self.later.append((delay, fn, args))


def session(runner, state=AppSessionState.APP_NOT_RUNNING):
    return SimpleNamespace(_scriptrunner=runner, _state=state, _event_loop=Loop())


def runner(stopped: bool):
    requests = ScriptRequests()
    if stopped:
        requests.on_scriptrunner_ready()  # what a runner calls when its run is over and no rerun waits: STOP
    assert requests.request_rerun(RerunData()) is not stopped  # Streamlit's own refusal: the oracle for "stopped"
    return SimpleNamespace(_requests=requests)


@pytest.fixture
def calls():
    return []


@pytest.fixture
def request_rerun(calls):
    return runtime_fix.request_rerun(lambda self, client_state: calls.append(client_state))


def test_a_rerun_waits_while_the_ended_runner_is_still_the_sessions(request_rerun, calls):
    s = session(runner(stopped=True))
    request_rerun(s, "state")
    assert calls == [] and len(s._event_loop.later) == 1
    delay, fn, args = s._event_loop.later[0]
    assert delay == runtime_fix.RETRY_S
    s._scriptrunner = None  # the old runner's shutdown event was handled: the session let it go
    fn(*args)
    assert calls == ["state"]


@pytest.mark.parametrize("who", ["none", "running"])
def test_no_runner_or_a_running_one_goes_straight_to_streamlit(request_rerun, calls, who):
    s = session(None if who == "none" else runner(stopped=False))
    request_rerun(s, "state")
    assert calls == ["state"] and s._event_loop.later == []


def test_a_session_shutting_down_and_a_runner_that_never_lets_go_go_to_streamlit(request_rerun, calls):
    request_rerun(session(runner(stopped=True), AppSessionState.SHUTDOWN_REQUESTED), "a")
    request_rerun(session(runner(stopped=True)), "b", runtime_fix.MAX_WAIT_S)
    assert calls == ["a", "b"]


def test_the_app_installs_it_on_this_streamlit():
    from streamlit.testing.v1 import AppTest

    from tests.pages import APP

    AppTest.from_file(APP, default_timeout=60).run()
    assert getattr(AppSession.request_rerun, "lab_fix", False)
    assert runtime_fix.install()  # once: a second call changes nothing
