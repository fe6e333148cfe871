"""The sampling page's main generation for a class on one link (chapter 07): the model runs once per (model,
prompt, settings) in this process, however many readers open the link.

The first reader leads: lab.sampling draws token by token and the reader streams it; readers arriving meanwhile
follow the same steps as they come (no model call of their own); when it finishes, the steps go into
ui.cached.sampling.generation's cache and later readers replay them from there. A leader that stops or leaves
mid-way hands over: its followers take the whole generation from that cache, computed once for all of them. The
seed makes every path the same text. Process-wide state, so it lives here and not in ui/cached.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import closing

import streamlit as st

from lab import sampling
from lab.serving import shared
from ui.cached.sampling import Settings, generation

_LOCK = threading.Lock()
_LIVE: dict[tuple, dict] = {}  # (model, prompt, settings) -> {"steps": [...], "state": ...}: being streamed now
_DONE: OrderedDict[tuple, float] = OrderedDict()  # keys whose steps generation() holds -> _epoch() when stored
DONE_KEEP = 256


@st.cache_data(show_spinner=False)
def _epoch() -> float:
    """A value that changes whenever Streamlit's data caches are cleared: _DONE entries from before stop counting."""
    return time.monotonic()


def steps(m, prompt: str, ids: list[int], s: Settings,
          on_wait: Callable[[int | None], None] | None = None) -> Iterator[dict]:
    """The main generation's steps (candidate texts added), one at a time as they are drawn, for the page to
    stream; the model runs once per key in this process (the module docstring), in the model's shared engine
    beside every other reader's generation (lab.serving.shared; `on_wait(n)`: n generations queued before this
    one, while it waits). Close the iterator when leaving it early, so a leader's followers are handed over at once."""
    key, epoch = (m.name, prompt, s.drawn()), _epoch()
    with _LOCK:
        replay = _DONE.get(key) == epoch
        live = None if replay else _LIVE.get(key)
        lead = not replay and live is None
        if lead:
            live = _LIVE[key] = {"steps": [], "state": "running"}
    if replay:
        yield from generation(m.name, prompt, s.drawn())["steps"]
    elif lead:
        yield from _lead(m, prompt, ids, s, key, live, epoch, on_wait)
    else:
        yield from _follow(m.name, prompt, s, live)


def _lead(m, prompt: str, ids: list[int], s: Settings, key: tuple, live: dict, epoch: float,
          on_wait: Callable[[int | None], None] | None) -> Iterator[dict]:
    """Generate in the model's shared engine, sharing each step with the followers; store the finished steps."""
    try:
        with closing(shared.steps(m.model, ids, s.n, s.temperature, s.top_k, s.top_p, s.seed, on_wait=on_wait)) as gen:
            for step in gen:
                live["steps"].append(sampling.with_texts(step, m.tokenizer))
                yield live["steps"][-1]
        generation(m.name, prompt, s.drawn(), _steps=live["steps"])
        with _LOCK:
            _DONE[key] = epoch
            _DONE.move_to_end(key)
            while len(_DONE) > DONE_KEEP:
                _DONE.popitem(last=False)
        live["state"] = "done"
    finally:
        if live["state"] != "done":
            live["state"] = "abandoned"
        with _LOCK:
            if _LIVE.get(key) is live:
                del _LIVE[key]


def _follow(model_name: str, prompt: str, s: Settings, live: dict, poll_s: float = 0.02) -> Iterator[dict]:
    """The leader's steps as they come; the rest from generation() if the leader stops or leaves."""
    i = 0
    while True:
        state = live["state"]  # read before the steps: "done" means every step is in the list already
        while i < len(live["steps"]):
            i += 1
            yield live["steps"][i - 1]
        if state == "done":
            return
        if state == "abandoned":
            yield from generation(model_name, prompt, s.drawn())["steps"][i:]
            return
        time.sleep(poll_s)
