"""The room bench's machinery (lab/benchmarks/rooms.py): virtual students (bench_pages/followers.py) run the
room's poll as a browser does and follow a teacher in Chromium across pages. What is checked is that every student
reached every step the teacher moved to, on the right page, not how fast (the bench measures that)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lab.lessons import ROOT
from tests.streamlit_server import require_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_virtual_students_follow_a_teacher_across_pages():
    require_browser()
    plan = {"students": 3, "moves": 4, "backend": "memory"}  # steps 2, 3, 4 (another page), 5 (another page)
    done = subprocess.run([sys.executable, str(ROOT / "bench_pages" / "room_play.py"), json.dumps(plan)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    run = json.loads(done.stdout.strip().splitlines()[-1])
    assert run["missed"] == 0 and len(run["lags"]) == 3 * 4 and len(run["teacher"]) == 4
    assert all(lag > 0 for lag in run["lags"])
