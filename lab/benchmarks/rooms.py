"""Room follow latency (issue 37): a teacher moves a room through a lesson with a clicker's keys (Chromium), and
10 virtual students (clients of Streamlit's websocket protocol that run the room's poll as a browser does:
bench_pages/followers.py) follow. For each of 20 moves and each student: seconds from the key press until a run
of the student's page finished on the new step. Once on one app process (rooms in memory), once on two processes
sharing a real redis-server (students alternate between them; the teacher is on the first).

project_s = the median lag of the students, reference_s = the median time the teacher's own page took to show the
step; ratio = their quotient. target_s = 2 (the issue's bound on the median); ok = within it and no move missed
(a student not on the step 30 s after the move). Environment: LAB_ROOM_STUDENTS, LAB_ROOM_MOVES, LAB_ROOM_BACKENDS
("memory,redis") for shorter runs; the redis backend needs redis-server (apt-get install -y redis-server).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLAY = ROOT / "bench_pages" / "room_play.py"
TARGET_S = 2.0


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def play(backend: str, students: int, moves: int) -> dict:
    plan = {"students": students, "moves": moves, "backend": backend}
    out = subprocess.run([sys.executable, str(PLAY), json.dumps(plan)], capture_output=True, text=True, cwd=ROOT,
                         timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"the room run failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def benchmarks() -> list[dict]:
    students = int(os.environ.get("LAB_ROOM_STUDENTS", "10"))
    moves = int(os.environ.get("LAB_ROOM_MOVES", "20"))
    out = []
    for backend in os.environ.get("LAB_ROOM_BACKENDS", "memory,redis").split(","):
        run = play(backend, students, moves)
        lags, own = run["lags"] or [float("nan")], run["teacher"] or [float("nan")]
        median, teacher = statistics.median(lags), statistics.median(own)
        out.append({"name": f"rooms: {students} students follow {moves} moves, {run['processes']} process(es), "
                            f"rooms in {backend}: median lag vs the teacher's own page",
                    "project_s": round(median, 4), "reference_s": round(teacher, 4),
                    "ratio": round(median / teacher, 4) if teacher else None, "target": None, "target_s": TARGET_S,
                    "ok": median <= TARGET_S and run["missed"] == 0, "p95_s": round(_quantile(lags, 0.95), 4),
                    "max_s": round(max(lags), 4), "missed": run["missed"], "students": students, "moves": moves,
                    "processes": run["processes"], "backend": backend})
    return out
