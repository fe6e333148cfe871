"""The answers bench's protocol run (bench_pages/answer_play.py, lab/benchmarks/answers.py): virtual students,
clients of Streamlit's websocket protocol, answer a lesson step's question in a room a teacher in Chromium started.
What is checked is that every answer was acknowledged on the student's page and counted exactly once on the
teacher's, not how fast (the bench measures that)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lab.lessons import ROOT
from tests.streamlit_server import require_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def play(plan: dict) -> dict:
    done = subprocess.run([sys.executable, str(ROOT / "bench_pages" / "answer_play.py"), json.dumps(plan)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_virtual_students_answer_and_the_teacher_counts_each_once():
    require_browser()
    run = play({"students": 5, "backend": "memory"})  # students 0 and 3 change their answer: 7 submits
    assert run["submitted"] == 7 and run["acked"] == 7 and run["unacked"] == 0, run
    assert run["teacher_count"] == 5 and run["exact"], run  # 5 answered, not 7
    assert sum(run["expected"].values()) == 5 and run["teacher_saw_all_s"] is not None
    assert all(lat > 0 for lat in run["latencies"])
