"""Two fixes to Streamlit's runtime (1.67.0), both in `AppSession.request_rerun`, both measured with students in a room.

1. A rerun that arrives just after a run ended must not lose that run's tail.

What happens without it (measured with 60 virtual students in a room, docs/teaching.md): a script run's elements
and its "finished" message reach the browser as callbacks on the server's event loop, scheduled by the run's own
thread. When a rerun request (a fragment's `run_every` tick: a student's room poll, once a second) arrives after the
run's script has ended but before the loop has handled those callbacks, `AppSession.request_rerun` finds the run's
ScriptRunner stopped, starts a new one at once, and from then on ignores every event of the old one: the end of
the completed run (its last elements, its "finished") never reaches the browser. The student's page stays on the
old step with the lesson bar missing, and no later poll repairs it (the poll sees the room where the server's last
run left it). On 2 cores, 60 students, 3 moves: 2,033 events of 46 sessions ignored in one run, 48-51 of them a
completed run's "finished"; 30-34 of 180 student-moves never shown.

The fix: while the session's ScriptRunner has stopped but its last events are still on their way (it has not yet
reported its shutdown, which clears it from the session), the new run waits on the event loop (a few milliseconds)
instead of starting. The old run's events are then handled first, in order, and nothing is ignored. Full reruns
that stop a run still in progress (Streamlit's fastReruns: a reader's click) are left as they are: the new run
redraws everything, as Streamlit intends.

2. A fragment's timer tick (`run_every`: a student's room poll) is dropped while the session has a run going (or
its events still in flight), and so is any fragment rerun asked for on a page the session has already left. Without
this, a tick sent during a full run waits and runs right after it, and the browser can lose part of the page the full
run has just drawn: measured in Chromium with the protocol's messages logged, the lesson bar's title and buttons
gone while the address shows the new step, every later poll satisfied, so nothing repaired it (students in a room:
2 of 70 student-moves stuck on 2 cores with one busy process beside; in one case the tick still named the page the
poll had just moved the student away from, and the fragment's run announced that old page). A poll loses nothing
by skipping one tick: the next comes a second later, with the page the browser now shows.
"""

from __future__ import annotations

import logging

RETRY_S = 0.005  # how soon a deferred rerun looks again
MAX_WAIT_S = 2.0  # then it starts anyway, as Streamlit would have (a runner's shutdown never came)
log = logging.getLogger(__name__)


def _stopped(runner) -> bool:
    """Whether a ScriptRunner refuses reruns because its run is over (its requests are in their terminal state)."""
    from ui.streamlit_internals import ScriptRequestType

    return runner._requests._state == ScriptRequestType.STOP


def _dropped(session, client_state) -> bool:
    """Whether this fragment rerun is one to drop: a timer's tick while a run is going or ending, or any fragment
    rerun asked for on another page than the one the session now runs."""
    if client_state is None or not getattr(client_state, "fragment_id", ""):
        return False
    if client_state.is_auto_rerun and session._scriptrunner is not None:
        return True
    current = session._pages_manager.current_page_script_hash
    return bool(current and client_state.page_script_hash) and client_state.page_script_hash != current


def request_rerun(original):
    """AppSession.request_rerun, deferred while the session's runner has stopped and its events are in flight;
    a fragment's tick during a run, or a fragment rerun for a page the session has left, dropped."""
    def request(self, client_state, _waited: float = 0.0) -> None:
        from ui.streamlit_internals import AppSessionState

        if _dropped(self, client_state):
            log.debug("runtime_fix: a fragment rerun dropped (a tick during a run, or for a page this session left)")
            return
        runner = self._scriptrunner
        if (runner is not None and self._state != AppSessionState.SHUTDOWN_REQUESTED and _waited < MAX_WAIT_S
                and _stopped(runner)):
            self._event_loop.call_later(RETRY_S, request, self, client_state, _waited + RETRY_S)
            return
        original(self, client_state)

    request.lab_fix = True
    return request


def install() -> bool:
    """Patch AppSession.request_rerun once per process; False (and a logged warning) where this Streamlit lacks
    the parts the fix reads, so the app runs unpatched rather than not at all."""
    from ui.streamlit_internals import APP_SESSION_ATTRIBUTES, AppSession, PagesManager, script_requests

    if getattr(AppSession.request_rerun, "lab_fix", False):
        return True
    if not (hasattr(script_requests.ScriptRequests(), "_state")
            and set(APP_SESSION_ATTRIBUTES) <= set(AppSession.__init__.__code__.co_names)
            and hasattr(PagesManager, "current_page_script_hash")):
        log.warning("runtime_fix: this Streamlit does not look like 1.67; the rerun fix is not installed")
        return False
    AppSession.request_rerun = request_rerun(AppSession.request_rerun)
    return True
