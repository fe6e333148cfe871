"""`python -m lab lesson warm --url URL FILE` (issue 37): every step of a lesson opened twice against a running app
by a virtual reader speaking Streamlit's websocket protocol, so that the class's first visit finds it warm.

Against the one shared app server (conftest's app_url). What each visit drew is checked, not its seconds: the
lesson bar's "step K of N" shows the step was applied; a wrong query or page would fail it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lab import lessons
from lab.lessons import LESSONS_DIR, ROOT

pytestmark = pytest.mark.slow
LESSON = LESSONS_DIR / "04-heads-and-mask.yaml"


def warm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lab", "lesson", "warm", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)


@pytest.mark.parametrize("language", ["en", "pt"])
def test_every_step_opened_cold_then_warm(app_url, language):
    done = warm("--url", app_url, str(LESSON), "--lang", language, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    lesson = lessons.load(LESSON)
    assert [(r["step"], r["page"]) for r in report["steps"]] == [(k, s.page) for k, s in enumerate(lesson.steps, 1)]
    assert all(r["ok"] and r["cold_s"] > 0 and r["warm_s"] > 0 for r in report["steps"]), report
    assert report["lang"] == language and report["lesson"] == "04-heads-and-mask"


def test_the_lines_a_teacher_reads(app_url):
    done = warm("--url", app_url, str(LESSON))
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and len(lines) == len(lessons.load(LESSON).steps)
    assert lines[0].startswith(f"{LESSON} step 1 attention: cold ") and lines[0].endswith(" s: ok")


def test_a_step_the_app_does_not_apply_fails(app_url):
    """The check is live: a query without the lesson (so no bar) fails every step, exit 2."""
    plan = {"url": app_url, "timeout": 300, "steps": [{"step": 1, "page": "attention", "query": "attn_layer=1",
                                                       "bar": "step 1 of 5"}]}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "lesson_warm.py"), json.dumps(plan)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    row = json.loads(done.stdout)
    assert not row["ok"] and "never said 'step 1 of 5'" in row["problem"]


@pytest.mark.parametrize("args, words", [
    (["--url", "ftp://x", str(LESSON)], "is not an http(s) address"),
    (["--url", "http://127.0.0.1:9", str(LESSON)], "no app answers at http://127.0.0.1:9"),
    (["--url", "http://127.0.0.1:9", "lessons/none.yaml"], "lessons/none.yaml: file: no such file"),
])
def test_bad_input_is_one_line_and_exit_2(args, words):
    done = warm(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr


def test_a_step_whose_page_waits_for_the_answer_is_warmed_through_the_pages_own_link(app_url):
    """Issue 52: a step whose question withholds its page until the reveal (ui/answers.py) is opened first by the
    page's own link (the step's inputs, no lesson: the page runs and its computations are cached), then by the
    step's link (the bar and the question); a step without one is opened twice by its link."""
    from urllib.parse import parse_qs

    from lab.cli.lessons import _warm_step

    sampling = lessons.named("07-sampling")
    first, second = _warm_step(sampling, 1, "en", "step 1 of 5"), _warm_step(sampling, 2, "en", "step 2 of 5")
    page = parse_qs(first["page_query"])
    assert "lesson" not in page and "step" not in page and page["samp_prompt"] == ["The Debian package manager"]
    assert "page_query" not in second
    plan = {"url": app_url, "timeout": 600, "steps": [first]}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "lesson_warm.py"), json.dumps(plan)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    row = json.loads(done.stdout)
    assert row["ok"] and row["step"] == 1, row
