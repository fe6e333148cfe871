"""`python -m lab lesson check FILE...`: a lesson file checked as the app would load it, then every step opened
headless (Streamlit's AppTest, in a fresh interpreter: scripts/lesson_headless.py, since lab never imports
Streamlit), one line per step:

    lessons/03-attention-trophy.yaml step 1 attention: ok
    lessons/bad.yaml: step 2, inputs.attn_layer: 9 is outside 0..3

A step fails when its page raises, ignores one of the step's values (url_state's notice) or never binds one of
its keys. Exit status 2 when any file or step fails, 0 otherwise. See lab/lessons.py and docs/teaching.md.
"""

from __future__ import annotations

import json
import subprocess
import sys

from lab.cli import one_line
from lab.lessons import ROOT, LessonError, load

HEADLESS = ROOT / "scripts" / "lesson_headless.py"
STEP_TIMEOUT_S = 900  # a whole lesson, cold, on a busy 2-core machine


def register(sub) -> None:
    """Add the `lesson` command and its `check` sub-command."""
    p = sub.add_parser("lesson", help="lesson files: check one (schema, then every step opened headless)")
    lesson_sub = p.add_subparsers(dest="lesson_command", required=True, parser_class=type(p))
    check = lesson_sub.add_parser("check", help="validate lesson files and render every step headless")
    check.add_argument("files", nargs="+", metavar="FILE", help="lessons/NAME.yaml files")
    check.set_defaults(run=run_check)


def _steps(path: str) -> list[dict]:
    """The headless run's report, one dict per step ({"step", "page", "problems"})."""
    done = subprocess.run([sys.executable, str(HEADLESS), "steps", path], cwd=ROOT, capture_output=True, text=True,
                          timeout=STEP_TIMEOUT_S)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 and not rows:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        rows = [{"step": 0, "page": "-", "problems": [f"the headless run failed: {tail[0]}"]}]
    return rows


def check_file(path: str) -> bool:
    """Print one line per step of `path` (or one line for a file refused whole); whether all passed."""
    try:
        lesson = load(path)
    except LessonError as e:
        print(one_line(f"{path}: {e}"))
        return False
    rows = _steps(path)
    for row in rows:
        verdict = "; ".join(row["problems"]) or "ok"
        print(one_line(f"{path} step {row['step']} {row['page']}: {verdict}"), flush=True)
    return len(rows) == len(lesson.steps) and not any(row["problems"] for row in rows)


def run_check(args) -> int:
    """Check every file; exit status 2 when any fails."""
    results = [check_file(path) for path in args.files]
    return 0 if all(results) else 2
