"""Answers in a room (issue 52), the store's side: N virtual students answer one question within 3 s (each at a
seeded random moment; a third of them change their answer once, later in the window), while the teacher's page
polls the count every 50 ms. Store clients only (lab.rooms, as ui/rooms.py calls it), not the app's websocket
protocol: what this measures is the store under a class, not a page run.

Backends: this process's memory (students are threads), and a real redis-server with the students split over two
processes (each its own RedisStore, as two app replicas would be) and the teacher in a third.

project_s = the p95 of the students' latencies (seconds from the moment a student submits to the store's
acknowledgement), reference_s = the median time of one room read (`get`) alone on the same store, ratio = their
quotient. ok = p95 <= 1 s (the issue's bound), every answer counted exactly once (the tally equals each student's
last acknowledged answer; answered == N), and the teacher's count showing all N within 2 s of the moment the N-th
student's first answer was acknowledged (teacher_saw_all_s; the teacher polls every 50 ms). Also the tally's
median time (tally_s: `answers()`, the histogram a reveal draws; count_s: `answered()`, the teacher's count).
Environment: LAB_ANSWER_STUDENTS ("60,200"), LAB_ANSWER_BACKENDS ("memory,redis"). The redis backend needs
redis-server (apt-get install -y redis-server); without it that row is skipped, with the reason.

Then the same class through the app itself (rows with "clients": "protocol"): bench_pages/answer_play.py, in a
fresh interpreter, has a teacher in Chromium start a room on lesson 01 step 3 (a number question) and N virtual
students, clients of Streamlit's websocket protocol that run the room's poll as a browser does, submit the answer
form as the frontend does (the text box's value and the submit button's trigger in one rerun), each within 3 s, a
third changing their answer once. project_s = the p95 from a student's submit until a run of its page finished
showing "Your answer: VALUE" (its acknowledgement), reference_s = the median of the same (ratio: the tail over the
middle, a scale, not a target). ok = p95 <= 1 s, every submit acknowledged, the teacher's page showing exactly N
answered (read again 2.5 s after it first showed N: nothing counted twice; with Redis also the room's tally equal
to each student's last acknowledged answer), and the teacher's page showing N within 2 s of the N-th student's first
acknowledgement (teacher_saw_all_s; its count is a fragment read every 2 s, the page read every 50 ms). One app
process (rooms in memory), or two sharing a redis-server (students alternate between them, the teacher on the
first). LAB_ANSWER_PROTOCOL_STUDENTS ("60"; "" for none) sets N; without Chromium those rows are skipped.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from lab import rooms

WITHIN_S, TARGET_P95_S, TARGET_SEEN_S, POLL_S, STEP = 3.0, 1.0, 2.0, 0.05, 2
PLAY = Path(__file__).resolve().parents[2] / "bench_pages" / "answer_play.py"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def plan(students: int, seed: int = 0) -> list[tuple[str, list[tuple[float, str]]]]:
    """[(who, [(seconds after the start, answer), ...])]: one answer each, a second later for every third student."""
    rng, out = random.Random(seed), []
    for i in range(students):
        first = rng.uniform(0, WITHIN_S * 0.8)
        moves = [(first, f"option {rng.randrange(4)}")]
        if i % 3 == 0:
            moves.append((rng.uniform(first, WITHIN_S), f"option {rng.randrange(4)}"))
        out.append((f"student-{i:04d}-{rng.getrandbits(32):08x}", moves))
    return out


def _student(store, code: str, who: str, moves, t0: float, out: list) -> None:
    """One student: each answer at its moment; out gets (who, submitted, acknowledged, answer, error or None)."""
    for at, value in moves:
        time.sleep(max(0.0, t0 + at - time.time()))
        submitted = time.time()
        try:
            store.answer(code, who, STEP, value)
            out.append((who, submitted, time.time(), value, None))
        except rooms.RoomError as e:
            out.append((who, submitted, time.time(), value, e.reason))


def _threads(store, code: str, part, t0: float) -> list:
    """The students of `part` as threads on `store`: their results."""
    out: list = []
    threads = [threading.Thread(target=_student, args=(store, code, w, m, t0, out)) for w, m in part]
    [t.start() for t in threads]
    [t.join() for t in threads]
    return out


def students(url: str, code: str, part, t0: float) -> list:
    """The students of `part` in this process (one of two app replicas), on their own client of Redis at `url`."""
    return _threads(rooms.RedisStore(url), code, part, t0)


def _teacher(store, code: str, n: int, until: float, seen: list) -> None:
    """The teacher's page polling the count: seen gets the first time it read all n."""
    while time.time() < until:
        if store.answered(code, STEP) >= n:
            seen.append(time.time())
            return
        time.sleep(POLL_S)


def _noop() -> None:
    return None


def play(store, url: str | None, n: int) -> dict:
    """One class of n students on `store` (url: Redis's, run in two processes; None: memory, in threads here)."""
    room, _ = store.create("07-sampling", STEP)
    everyone, t0 = plan(n), time.time() + 1.0
    seen: list[float] = []
    teacher = threading.Thread(target=_teacher, args=(store, room.code, n, t0 + WITHIN_S + 30, seen))
    if url is None:
        teacher.start()
        t0 = time.time() + 0.2
        results = _threads(store, room.code, everyone, t0)
    else:
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            pool.starmap(_noop, [()] * 2)  # both processes started and importing done before the clock starts
            t0 = time.time() + 0.5
            halves = [pool.apply_async(students, (url, room.code, everyone[k::2], t0)) for k in range(2)]
            teacher.start()
            results = [r for h in halves for r in h.get(timeout=120)]
    teacher.join()
    return _figures(store, room.code, everyone, results, seen)


def _figures(store, code: str, everyone, results, seen) -> dict:
    ok = [r for r in results if r[4] is None]
    last = {who: value for who, _, _, value, _ in sorted(ok, key=lambda r: r[2])}  # each student's last answer
    latencies = [r[2] - r[1] for r in results]
    tally_s, counts = _timed(lambda: store.answers(code, STEP))
    count_s, answered = _timed(lambda: store.answered(code, STEP))
    read_s, _ = _timed(lambda: store.get(code))
    exact = counts == dict(Counter(last.values())) and answered == len(everyone) == len(last)
    first = {}
    for who, _, acked, _, _ in ok:
        first[who] = min(acked, first.get(who, acked))
    last_ack = max(first.values(), default=float("nan"))  # the moment the n-th student had answered
    return {"p95_s": _quantile(latencies, 0.95), "median_s": statistics.median(latencies),
            "max_s": max(latencies), "submitted": len(results), "refused": len(results) - len(ok),
            "exact": exact, "teacher_saw_all_s": (seen[0] - last_ack) if seen else None,  # after the n-th
            "tally_s": tally_s, "count_s": count_s, "read_s": read_s,
            "spread_s": max(r[1] for r in results) - min(r[1] for r in results)}


def _timed(fn, repeats: int = 21):
    """(median seconds of fn(), its last result)."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


@contextmanager
def redis_server():
    """A real redis-server on a free loopback port, no persistence; its URL."""
    from lab.testing.browser import free_port

    port, folder = free_port(), tempfile.mkdtemp(prefix="answers-bench-")
    proc = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", folder], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        for _ in range(100):
            try:
                rooms.RedisStore(url).client.ping()
                break
            except Exception:  # noqa: BLE001  (not up yet)
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


def _row(backend: str, n: int, f: dict) -> dict:
    seen_ok = f["teacher_saw_all_s"] is not None and f["teacher_saw_all_s"] <= TARGET_SEEN_S
    where = "rooms in memory, one process" if backend == "memory" else "a real redis-server, students in 2 processes"
    return {"name": f"answers: {n} students answer within {WITHIN_S:g} s, {where}: p95 submit-to-ack vs one room read",
            "project_s": _sig(f["p95_s"]), "reference_s": _sig(f["read_s"]),
            "ratio": round(f["p95_s"] / f["read_s"], 2) if f["read_s"] else None, "target": None,
            "target_p95_s": TARGET_P95_S, "target_seen_s": TARGET_SEEN_S,
            "ok": f["p95_s"] <= TARGET_P95_S and f["exact"] and seen_ok, "backend": backend, "students": n,
            **{k: _sig(v) if isinstance(v, float) else v for k, v in f.items()}}


def _sig(seconds: float) -> float:
    return float(f"{seconds:.3g}")


def benchmarks() -> list[dict]:
    sizes = [int(n) for n in os.environ.get("LAB_ANSWER_STUDENTS", "60,200").split(",") if n]
    out = []
    for backend in os.environ.get("LAB_ANSWER_BACKENDS", "memory,redis").split(","):
        if backend == "redis" and shutil.which("redis-server") is None:
            out.append({"name": "answers on a real redis-server: skipped", "project_s": None, "reference_s": None,
                        "ratio": None, "target": None, "ok": None,
                        "skipped": "redis-server is not installed (apt-get install -y redis-server)"})
            continue
        with (redis_server() if backend == "redis" else _nothing()) as url:
            store = rooms.RedisStore(url) if url else rooms.MemoryStore()
            out.extend(_row(backend, n, play(store, url, n)) for n in sizes)
    return out + protocol_rows()


def protocol_play(backend: str, students: int) -> dict:
    """bench_pages/answer_play.py's run (a fresh interpreter): its JSON."""
    plan = {"students": students, "backend": backend}
    done = subprocess.run([sys.executable, str(PLAY), json.dumps(plan)], capture_output=True, text=True,
                          cwd=PLAY.parents[1], timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"the answers protocol run failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _protocol_row(backend: str, run: dict) -> dict:
    lat = run["latencies"] or [float("nan")]
    p95, median, seen = _quantile(lat, 0.95), statistics.median(lat), run["teacher_saw_all_s"]
    where = ("one app process, rooms in memory" if backend == "memory"
             else f"{run['processes']} app processes sharing a redis-server")
    return {"name": f"answers over the app's websocket protocol: {run['students']} students answer within "
                    f"{WITHIN_S:g} s, {where}: p95 submit-to-ack vs its median",
            "project_s": _sig(p95), "reference_s": _sig(median), "ratio": round(p95 / median, 2) if median else None,
            "target": None, "target_p95_s": TARGET_P95_S, "target_seen_s": TARGET_SEEN_S,
            "ok": (p95 <= TARGET_P95_S and run["unacked"] == 0 and run["exact"] and seen is not None
                   and seen <= TARGET_SEEN_S),
            "clients": "protocol", "backend": backend, "students": run["students"], "processes": run["processes"],
            "p95_s": _sig(p95), "median_s": _sig(median), "max_s": _sig(max(lat)), "submitted": run["submitted"],
            "acked": run["acked"], "unacked": run["unacked"], "exact": run["exact"], "teacher_saw_all_s": seen,
            "teacher_count": run["teacher_count"], "teacher_counts": run["counts"], "tally": run["tally"],
            "expected": run["expected"], "ready_s": run["ready_s"], "spread_s": run["spread_s"]}


def protocol_rows() -> list[dict]:
    """The class through the app's websocket protocol, a teacher in Chromium (see the module's docstring)."""
    from lab.testing.browser import browser_missing

    sizes = [int(n) for n in os.environ.get("LAB_ANSWER_PROTOCOL_STUDENTS", "60").split(",") if n]
    missing, out = browser_missing(), []
    for backend in os.environ.get("LAB_ANSWER_BACKENDS", "memory,redis").split(","):
        why = missing or (None if backend != "redis" or shutil.which("redis-server") else
                          "redis-server is not installed (apt-get install -y redis-server)")
        for n in sizes:
            if why:
                out.append({"name": f"answers over the app's websocket protocol, {n} students, {backend}: skipped",
                            "project_s": None, "reference_s": None, "ratio": None, "target": None, "ok": None,
                            "clients": "protocol", "skipped": why})
            else:
                out.append(_protocol_row(backend, protocol_play(backend, n)))
    return out


@contextmanager
def _nothing():
    yield None
