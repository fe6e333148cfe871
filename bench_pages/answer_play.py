"""The answers bench's protocol run (lab/benchmarks/answers.py starts it in a fresh interpreter): a teacher in
Chromium starts a room on a step with an answerable question (lesson 01 step 3, a number); N virtual students,
clients of Streamlit's websocket protocol (bench_pages/followers.py's Student: they run the room's poll as a browser
does), open `?room=CODE`, and each answers at a seeded random moment within 3 s (a third change their answer once,
later) the way the frontend submits a form: one BackMsg rerun_script whose widget states hold the text box's string
and the form's submit button's trigger. A student's acknowledgement is the first run that finished after its submit
drawing the echo of its answer ("Your answer: VALUE", ui.draw.answers.echo). The teacher's page shows the count
("N answered",
a fragment read every 2 s); the run notes when it first shows all N.

Prints JSON: {"latencies": [seconds from each submit to its acknowledgement], "submitted", "acked", "unacked",
"students", "processes", "ready_s" (until every student's form was drawn), "spread_s" (first to last submit),
"teacher_saw_all_s" (from the N-th student's first acknowledgement until the teacher's page showed N answered;
null if it never did), "teacher_count" (the count the teacher's page showed 2.5 s after that: exactly N if each
student counted once), "counts" ([seconds after the start, the count the teacher's page showed] at each change),
"tally" and "expected" (redis: the room's tally read back from the store, and each
student's last acknowledged answer counted; memory: null, the store is in the app's process), "exact"}.

    python bench_pages/answer_play.py '{"students": 5, "backend": "memory"}'   # or "redis": two app processes
    # "break": "trigger" sends the submit without its trigger (a check that a lost submit is seen)
"""

from __future__ import annotations

import asyncio
import html
import json
import random
import re
import sys
import threading
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_pages.followers import Student  # noqa: E402
from bench_pages.readers import (
    _rerun_message,  # noqa: E402
    app_server,  # noqa: E402
)
from bench_pages.room_play import redis_server  # noqa: E402
from lab import rooms  # noqa: E402
from lab.testing.browser import chromium, new_page, wait_idle  # noqa: E402

LESSON, STEP, STEPS = "01-tokens-and-embeddings", 3, 6  # step 3: how many tokens (a number)
WITHIN_S = 3.0  # every student answers within this
TIMEOUT_S = 30  # an answer not acknowledged this long after its submit is lost
COUNT = re.compile(r"(\d+) answered")
SHOWN = """([n]) => [...document.querySelectorAll('[data-testid="stMarkdownContainer"] p')]
                   .some(e => e.textContent.includes(n + ' answered'))"""
COUNTED = """() => [...document.querySelectorAll('[data-testid="stMarkdownContainer"] p')]
                .map(e => e.textContent).filter(t => / answered/.test(t)).join('|')"""


def plan(students: int, seed: int = 0) -> list[list[tuple[float, str]]]:
    """Each student's answers: [(seconds after the start, a number)], a second one (another number) for every third."""
    rng, out = random.Random(seed), []
    for i in range(students):
        first, value = rng.uniform(0, WITHIN_S * 0.8), rng.randrange(10, 40)
        moves = [(first, str(value))]
        if i % 3 == 0:
            moves.append((rng.uniform(first, WITHIN_S), str(value + rng.randrange(1, 9))))
        out.append(moves)
    return out


def _submit(page_hash: str, query: str, url: str, text_id: str, value: str, button_id: str, trigger: bool) -> bytes:
    """The BackMsg the frontend sends when a form is submitted: a full rerun with the form's values and its
    submit button's trigger."""
    from ui.streamlit_internals import BackMsg

    msg = BackMsg()
    msg.ParseFromString(_rerun_message("", query, url))
    state = msg.rerun_script
    state.page_script_hash = page_hash
    box = state.widget_states.widgets.add()
    box.id, box.string_value = text_id, value
    button = state.widget_states.widgets.add()
    button.id = button_id
    button.trigger_value = trigger
    return msg.SerializeToString()


def echoes(body: str, value: str) -> bool:
    """Whether a drawn element gives back the answer `value`: the echo ui.draw.answers.echo draws (an escaped HTML
    paragraph, the answer in a code span) or, before issue 56, the Markdown caption "Your answer: `VALUE`"."""
    return (f"Your answer: `{value}`" in body
            or ("Your answer: " in body and f">{html.escape(value)}</code>" in body))


class Answerer(Student):
    """A student who follows the room (its poll, as followers.Student) and answers the step's question."""

    def __init__(self, name: int, url: str, code: str, moves, box: dict, trigger: bool = True):
        super().__init__(name, url, code, [])
        self.moves, self.box, self.trigger = moves, box, trigger
        self.ids: dict[str, str] = {}  # "text" / "button": the form's widget ids, from the runs' elements
        self.ready = asyncio.Event()  # a run finished drawing the form
        self.waiting: tuple[str, float, asyncio.Future] | None = None  # (value, submitted, its acknowledgement)
        self.results: list[tuple[str, float, float | None]] = []  # (value, submitted, acknowledged or None)

    def _note(self, fwd, ws) -> None:
        kind = fwd.WhichOneof("type")
        if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
            element = fwd.delta.new_element
            which = element.WhichOneof("type")
            if which == "text_input" and element.text_input.label.startswith("Your answer"):
                self.ids["text"] = element.text_input.id
            elif which == "button" and element.button.is_form_submitter:
                self.ids["button"] = element.button.id
            elif which == "html" and 'class="lab-echo"' in element.html.body:  # ui.draw.answers.echo: st.html
                self.texts.append(element.html.body)
        elif kind == "script_finished":
            drawn = list(self.texts)
            if len(self.ids) == 2:
                self.ready.set()
            if self.waiting and any(echoes(text, self.waiting[0]) for text in drawn):
                if not self.waiting[2].done():
                    self.waiting[2].set_result(time.monotonic())
        super()._note(fwd, ws)

    async def answer(self, ws, t0: float) -> None:
        """Each answer at its moment (monotonic t0 + its offset), waiting for its acknowledgement."""
        for at, value in self.moves:
            await asyncio.sleep(max(0.0, t0 + at - time.monotonic()))
            done = asyncio.get_running_loop().create_future()
            submitted = time.monotonic()
            self.waiting = (value, submitted, done)
            await ws.send(_submit(self.page_hash, self.query, f"{self.url}/?{self.query}", self.ids["text"], value,
                                  self.ids["button"], self.trigger))
            try:
                acked = await asyncio.wait_for(done, TIMEOUT_S)
            except TimeoutError:
                acked = None
            self.results.append((value, submitted, acked))
            self.waiting = None
            self.box["done"] += 1

    async def play(self, start: asyncio.Future, stop: asyncio.Event) -> None:
        from websockets.asyncio.client import connect

        from ui.streamlit_internals import ForwardMsg

        ws_url = self.url.replace("http", "ws", 1) + "/_stcore/stream"
        async with connect(ws_url, subprotocols=["streamlit"], max_size=None, ping_interval=None) as ws:
            await ws.send(_rerun_message("", self.query, f"{self.url}/?{self.query}"))
            reader = asyncio.create_task(self._read(ws, ForwardMsg))
            try:
                await self.answer(ws, await start)
                await stop.wait()
            finally:
                reader.cancel()
                self._stop_timers()


async def _class(urls: list[str], code: str, moves, trigger: bool, started: threading.Event, box: dict,
                 stop: asyncio.Event) -> list[Answerer]:
    """The students, student i on urls[i % len(urls)]; box["t0"] set once all are ready (their form drawn)."""
    students = [Answerer(i, urls[i % len(urls)], code, m, box, trigger) for i, m in enumerate(moves)]
    start = asyncio.get_running_loop().create_future()
    runs = [asyncio.create_task(s.play(start, stop)) for s in students]
    t_open = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in students)), 120)
    box["ready_s"] = time.monotonic() - t_open
    box["t0"] = time.monotonic() + 0.5
    start.set_result(box["t0"])
    started.set()
    await asyncio.gather(*runs)
    return students


def start_room(teacher, url: str) -> str:
    teacher.goto(f"{url}/?lesson={LESSON}&step={STEP}")
    teacher.get_by_text(f"step {STEP} of {STEPS}").first.wait_for(timeout=TIMEOUT_S * 1000)
    wait_idle(teacher, TIMEOUT_S * 1000)
    teacher.locator(".st-key-room_start button:visible").click()
    teacher.wait_for_selector(".st-key-room-panel img", timeout=TIMEOUT_S * 1000)
    teacher.wait_for_function(SHOWN, arg=[0], timeout=TIMEOUT_S * 1000)  # the count: 0 answered
    return re.search(r"Room ([A-Z0-9]{6}),", teacher.locator(".st-key-room-panel").inner_text()).group(1)


def _answered(box: dict) -> bool:
    """Whether every answer of the plan was acknowledged or given up on."""
    return box["done"] >= box["due"]


@contextmanager
def _apps(backend: str):
    """(the app's URLs, the redis-server's URL or None): one process with rooms in memory, or two sharing Redis."""
    with ExitStack() as stack:
        env, redis = {"HF_HUB_OFFLINE": "1"}, None
        if backend == "redis":
            env["LAB_ROOMS_URL"] = redis = stack.enter_context(redis_server())
        yield [stack.enter_context(app_server("app.py", env=env)) for _ in range(2 if backend == "redis" else 1)], redis


def _count(teacher) -> int | None:
    found = COUNT.search(teacher.evaluate(COUNTED))
    return int(found.group(1)) if found else None


def main(plan_: dict) -> dict:
    n, backend = plan_["students"], plan_["backend"]
    moves = plan(n, plan_.get("seed", 0))
    trigger = plan_.get("break") != "trigger"
    with _apps(backend) as (urls, redis), chromium() as browser:
        teacher = new_page(browser, 1280, 720)
        code = start_room(teacher, urls[0])
        loop, box, started, out = asyncio.new_event_loop(), {"done": 0, "due": sum(map(len, moves))}, \
            threading.Event(), {}
        stop = asyncio.Event()

        def students() -> None:
            out["students"] = loop.run_until_complete(_class(urls, code, moves, trigger, started, box, stop))

        thread = threading.Thread(target=students)
        thread.start()
        if not started.wait(150):
            raise RuntimeError("the students' forms were not drawn within 150 s")
        seen, counts, end = None, [], box["t0"] + WITHIN_S + 2 * TIMEOUT_S
        while time.monotonic() < end:  # the teacher's page: its count (a fragment reads the store every 2 s)
            shown = _count(teacher)
            if not counts or counts[-1][1] != shown:
                counts.append((round(time.monotonic() - box["t0"], 3), shown))
            if shown == n:
                seen = time.monotonic()
                break
            time.sleep(0.05)
        while thread.is_alive() and "students" not in out and not _answered(box):
            time.sleep(0.1)
        time.sleep(2.5)  # one more refresh of the teacher's count: still exactly n, nothing counted twice
        teacher_count = _count(teacher)
        loop.call_soon_threadsafe(stop.set)
        thread.join(TIMEOUT_S * 3)
        everyone: list[Answerer] = out["students"]
        results = [(s.name, *r) for s in everyone for r in s.results]
        tally = rooms.RedisStore(redis).answers(code, STEP) if redis else None
    last, first = {}, {}
    for who, value, _submitted, acked in sorted(results, key=lambda r: r[2]):
        if acked is not None:
            last[who] = value
            first.setdefault(who, acked)
    expected = dict(Counter(last.values()))
    nth = max(first.values()) if len(first) == n else None
    acked = [r for r in results if r[3] is not None]
    exact = len(last) == n == teacher_count and (tally is None or tally == expected)
    return {"latencies": [round(r[3] - r[2], 4) for r in acked], "submitted": len(results), "acked": len(acked),
            "unacked": len(results) - len(acked), "students": n, "processes": len(urls),
            "ready_s": round(box["ready_s"], 3), "spread_s": round(max(r[2] for r in results) - min(r[2] for r in
                                                                                                     results), 3),
            "teacher_saw_all_s": round(seen - nth, 4) if seen is not None and nth is not None else None,
            "teacher_count": teacher_count, "counts": counts, "tally": tally, "expected": expected, "exact": exact}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
