"""`python -m lab lesson check FILE...`: a lesson file checked as the app would load it, then every step opened
headless (Streamlit's AppTest, in a fresh interpreter: scripts/lesson_headless.py, since lab never imports
Streamlit), one line per step:

    lessons/03-attention-trophy.yaml step 1 attention: ok
    lessons/bad.yaml: step 2, inputs.attn_layer: 9 is outside 0..3

A step fails when its page raises, ignores one of the step's values (url_state's notice) or never binds one of
its keys. Exit status 2 when any file or step fails, 0 otherwise. See lab/lessons.py and docs/teaching.md.

`python -m lab lesson warm --url URL FILE [--lang pt] [--json]`: every step opened twice against the running app
at URL, as a class's link opens it, so that the class's first visit finds its computations cached; one line per
step with the seconds cold and warm (scripts/lesson_warm.py: virtual readers speaking Streamlit's websocket
protocol, no browser). Exit status 2 when a step fails or the app cannot be reached.
"""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import urlencode, urlsplit

from lab.cli import one_line
from lab.lessons import ROOT, LessonError, load, step_link

HEADLESS = ROOT / "scripts" / "lesson_headless.py"
WARM = ROOT / "scripts" / "lesson_warm.py"
STEP_TIMEOUT_S = 900  # a whole lesson, cold, on a busy 2-core machine


def register(sub) -> None:
    """Add the `lesson` command and its `check` sub-command."""
    p = sub.add_parser("lesson", help="lesson files: check one (schema, then every step opened headless)")
    lesson_sub = p.add_subparsers(dest="lesson_command", required=True, parser_class=type(p))
    check = lesson_sub.add_parser("check", help="validate lesson files and render every step headless")
    check.add_argument("files", nargs="+", metavar="FILE", help="lessons/NAME.yaml files")
    check.set_defaults(run=run_check)
    warm = lesson_sub.add_parser("warm", help="open every step against a running app, so a class finds it warm")
    warm.add_argument("--url", required=True, help="the running app, e.g. http://127.0.0.1:8501")
    warm.add_argument("file", metavar="FILE", help="a lessons/NAME.yaml file")
    warm.add_argument("--lang", choices=("en", "pt"), default="en", help="the language the class reads (en)")
    warm.add_argument("--timeout", type=float, default=600, help="seconds one visit may take (600)")
    warm.add_argument("--json", action="store_true", help="one JSON object: {lesson, url, steps: [...]}")
    warm.set_defaults(run=run_warm)


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


def _reachable(url: str) -> str | None:
    """Why `url` cannot be the app's address, or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url[:200]!r} is not an http(s) address of a running app"
    from urllib.request import urlopen

    try:
        with urlopen(url.rstrip("/") + "/_stcore/health", timeout=10) as answer:  # noqa: S310 (http(s) only)
            return None if answer.status == 200 else f"{url} answered {answer.status} on /_stcore/health"
    except OSError as e:
        return f"no app answers at {url} ({type(e).__name__})"


def run_warm(args) -> int:
    """Open every step of the lesson twice against the app at --url; one line (or --json) per step."""
    from lab.models import DEFAULT_OFFLINE

    try:
        lesson = load(args.file)
    except LessonError as e:
        print(one_line(f"{args.file}: {e}"), file=sys.stderr)
        return 2
    problem = _reachable(args.url)
    if problem:
        print(one_line(problem), file=sys.stderr)
        return 2
    n = len(lesson.steps)
    bar = (lambda k: f"step {k} of {n}") if args.lang == "en" else (lambda k: f"passo {k} de {n}")  # ui.lesson's
    steps = [{"step": k, "page": s.page, "query": urlencode(step_link(lesson, k, args.lang, DEFAULT_OFFLINE)),
              "bar": bar(k)} for k, s in enumerate(lesson.steps, 1)]
    plan = {"url": args.url, "timeout": args.timeout, "steps": steps}
    done = subprocess.Popen([sys.executable, str(WARM), json.dumps(plan)], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)
    rows = []
    for line in done.stdout:
        rows.append(row := json.loads(line))
        if not args.json:
            verdict = "ok" if row["ok"] else row["problem"]
            print(one_line(f"{args.file} step {row['step']} {row['page']}: cold {row['cold_s']:.2f} s, "
                           f"warm {row['warm_s']:.2f} s: {verdict}"), flush=True)
    done.wait()
    if args.json:
        print(json.dumps({"lesson": lesson.name, "url": args.url, "lang": args.lang, "steps": rows}))
    return 0 if len(rows) == len(steps) and all(r["ok"] for r in rows) else 2
