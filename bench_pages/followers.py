"""Virtual students in a room: clients of Streamlit's websocket protocol that follow the teacher as a browser does.

A student opens `?room=CODE` (one BackMsg rerun_script, as bench_pages/readers.py), then does what the frontend
does for a fragment with `run_every` (ui/rooms.py polls the room in one): on each `auto_rerun` ForwardMsg it sends
a fragment rerun every `interval` seconds, with the page it is on (the `navigation` message's page hash) and the
address it has (`page_info_changed`). When the fragment sees the teacher moved, the server reruns the app, which
opens the teacher's step; the student notes when a run finished with the lesson bar saying "step K of N".

    seen = []  # (student, step, monotonic seconds) appended as runs finish
    asyncio.run(follow(url, code, 10, seen, stop_event))

Only for benchmarks (lab/benchmarks/rooms.py runs bench_pages/room_play.py, which uses it).
"""

from __future__ import annotations

import asyncio
import re
import time

from bench_pages.readers import _rerun_message

STEP = re.compile(r"step (\d+) of \d+")


def _fragment_rerun(page_hash: str, query: str, fragment_id: str, url: str) -> bytes:
    """The BackMsg the frontend sends when a fragment's run_every timer fires."""
    from ui.streamlit_internals import BackMsg

    msg = BackMsg()
    msg.ParseFromString(_rerun_message("", query, url))
    state = msg.rerun_script
    state.page_script_hash, state.fragment_id, state.is_auto_rerun = page_hash, fragment_id, True
    return msg.SerializeToString()


class Student:
    """One student's connection: what it shows, and the timers of its fragments."""

    def __init__(self, name: int, url: str, code: str, seen: list):
        self.name, self.url, self.code, self.seen = name, url.rstrip("/"), code, seen
        self.page_hash, self.query, self.texts = "", f"room={code}", []
        self.timers: dict[str, asyncio.Task] = {}

    async def _tick(self, ws, fragment_id: str, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            await ws.send(_fragment_rerun(self.page_hash, self.query, fragment_id, f"{self.url}/?{self.query}"))

    def _stop_timers(self, ids=None) -> None:
        for fid in list(self.timers) if ids is None else ids:
            task = self.timers.pop(fid, None)
            if task:
                task.cancel()

    def _note(self, fwd, ws) -> None:
        """One ForwardMsg: the page and address it is on, its fragments' timers, the steps its runs showed."""
        kind = fwd.WhichOneof("type")
        if kind == "navigation":
            self.page_hash = fwd.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = fwd.page_info_changed.query_string
        elif kind == "auto_rerun":
            self._stop_timers([fwd.auto_rerun.fragment_id])
            self.timers[fwd.auto_rerun.fragment_id] = asyncio.create_task(
                self._tick(ws, fwd.auto_rerun.fragment_id, fwd.auto_rerun.interval))
        elif kind == "stop_auto_rerun":
            self._stop_timers(list(fwd.stop_auto_rerun.fragment_ids))
        elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
            element = fwd.delta.new_element
            if element.WhichOneof("type") == "markdown":
                self.texts.append(element.markdown.body)
        elif kind == "script_finished":
            steps = [int(m.group(1)) for text in self.texts for m in [STEP.search(text)] if m]
            if steps:
                self.seen.append((self.name, steps[-1], time.monotonic()))
            self.texts = []

    async def run(self, stop: asyncio.Event) -> None:
        from websockets.asyncio.client import connect

        from ui.streamlit_internals import ForwardMsg

        ws_url = self.url.replace("http", "ws", 1) + "/_stcore/stream"
        async with connect(ws_url, subprotocols=["streamlit"], max_size=None, ping_interval=None) as ws:
            await ws.send(_rerun_message("", self.query, f"{self.url}/?{self.query}"))
            reader = asyncio.create_task(self._read(ws, ForwardMsg))
            await stop.wait()
            reader.cancel()
            self._stop_timers()

    async def _read(self, ws, forward) -> None:
        async for data in ws:
            fwd = forward()
            fwd.ParseFromString(data)
            self._note(fwd, ws)


async def follow(urls: list[str], code: str, n: int, seen: list, stop: asyncio.Event) -> None:
    """`n` students in room `code`, student i on urls[i % len(urls)] (several app processes), until `stop`."""
    await asyncio.gather(*(Student(i, urls[i % len(urls)], code, seen).run(stop) for i in range(n)))
