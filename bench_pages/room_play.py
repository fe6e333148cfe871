"""The room bench's run (lab/benchmarks/rooms.py starts it in a fresh interpreter): a teacher in Chromium moves a
room through a lesson with a clicker's keys; virtual students (bench_pages/followers.py) follow; for every move and
every student, the seconds from the teacher's key press until a run of that student's page finished on the new
step. Prints {"lags": [...], "teacher": [...], "missed": N, "students": N, "moves": N, "processes": N} as JSON
("teacher": the seconds from each key press until the teacher's own bar showed the step).

    python bench_pages/room_play.py '{"students": 10, "moves": 20, "backend": "memory"}'   # or "redis": two
                                                                                          # app processes
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_pages.followers import follow  # noqa: E402
from bench_pages.readers import app_server  # noqa: E402
from lab.testing.browser import chromium, free_port, new_page, wait_idle  # noqa: E402

LESSON, STEPS = "04-heads-and-mask", 5  # steps 1-3 attention, 4 causal_mask, 5 code
BAR = '.st-key-lesson-bar [data-testid="stMarkdownContainer"] p'
TIMEOUT_S = 30  # a student not on the step this long after the move has missed it


@contextmanager
def redis_server():
    """A real redis-server on a free loopback port, no persistence; its URL."""
    port, folder = free_port(), tempfile.mkdtemp(prefix="room-bench-")
    proc = subprocess.Popen([shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind",
                             "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", folder],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def apps(backend: str):
    """The app's URLs: one process (rooms in memory), or two sharing a redis-server."""
    with ExitStack() as stack:
        env = {"HF_HUB_OFFLINE": "1"}
        if backend == "redis":
            env["LAB_ROOMS_URL"] = stack.enter_context(redis_server())
        yield [stack.enter_context(app_server("app.py", env=env)) for _ in range(2 if backend == "redis" else 1)]


def at_step(page, k: int) -> None:
    shows = "([sel, text]) => [...document.querySelectorAll(sel)].some(e => e.textContent.includes(text))"
    page.wait_for_function(shows, arg=[BAR, f"step {k} of {STEPS}"], timeout=TIMEOUT_S * 1000)


def start_room(teacher, url: str) -> str:
    teacher.goto(f"{url}/?lesson={LESSON}&step=1")
    at_step(teacher, 1)
    wait_idle(teacher, TIMEOUT_S * 1000)
    teacher.locator(".st-key-room_start button:visible").click()
    teacher.wait_for_selector(".st-key-room-panel img", timeout=TIMEOUT_S * 1000)
    return re.search(r"Room ([A-Z0-9]{6}),", teacher.locator(".st-key-room-panel").inner_text()).group(1)


def arrived(seen: list, k: int, since: float, n: int, timeout: float) -> dict[int, float]:
    """{student: seconds after `since` its page showed step k}, waiting up to `timeout` for all n."""
    end = time.monotonic() + timeout
    while True:
        got = {}
        for who, step, at in list(seen):
            if step == k and at >= since and who not in got:
                got[who] = at - since
        if len(got) == n or time.monotonic() > end:
            return got
        time.sleep(0.02)


def path(moves: int) -> list[int]:
    """The steps the teacher moves to: forward to the end, back to the start, and again."""
    cycle = [*range(2, STEPS + 1), *range(STEPS - 1, 0, -1)]
    return [cycle[i % len(cycle)] for i in range(moves)]


def main(plan: dict) -> dict:
    n, lags, own, missed = plan["students"], [], [], 0
    with apps(plan["backend"]) as urls, chromium() as browser:
        teacher = new_page(browser, 1280, 720)
        code = start_room(teacher, urls[0])
        seen: list = []
        loop = asyncio.new_event_loop()
        stop = asyncio.Event()
        students = threading.Thread(target=loop.run_until_complete, args=(follow(urls, code, n, seen, stop),))
        students.start()
        missed += n - len(arrived(seen, 1, 0, n, 120))  # everyone in the room on step 1
        k_now = 1
        for k in path(plan["moves"]):
            wait_idle(teacher, TIMEOUT_S * 1000)
            since = time.monotonic()
            teacher.keyboard.press("PageDown" if k > k_now else "PageUp")
            at_step(teacher, k)
            own.append(time.monotonic() - since)
            got = arrived(seen, k, since, n, TIMEOUT_S)
            lags += list(got.values())
            missed += n - len(got)
            k_now = k
        loop.call_soon_threadsafe(stop.set)
        students.join(30)
    return {"lags": [round(x, 4) for x in lags], "teacher": [round(x, 4) for x in own], "missed": missed,
            "students": n, "moves": plan["moves"], "processes": len(urls)}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
