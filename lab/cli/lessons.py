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

`python -m lab lesson question [--json] FILE STEP [--answers ANSWERS.csv] [--model M]`: the model's side of step
STEP's answerable question (lab/questions.py), computed with the lesson's model (or the offline default; --model
overrides both), and with an answers table (CSV with the columns answer and count, '-' = stdin) the judged rows.
The JSON (a contract):

    {"lesson": "07-sampling", "step": 1, "question": {...as the file holds it...}, "model": "course-gpt2",
     "side": {...lab.questions.model_side's...},
     "judged": [{"answer": "is", "count": 3, "read_as": " is", "p": 0.084, "rank": 2}, ...]}   # with --answers

`lesson check` also computes the model side of each answerable question, so that a head the lesson's model lacks,
or options that tie, fail the step's line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import urlencode, urlsplit

from lab.cli import CliError, one_line, print_json, print_table, read_text
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
    question = lesson_sub.add_parser("question", help="an answerable question's model side, and a class's answers "
                                                      "judged")
    question.add_argument("file", metavar="FILE", help="a lessons/NAME.yaml file")
    question.add_argument("step", type=_step_number, metavar="STEP", help="the step's number, 1 for the first")
    question.add_argument("--answers", metavar="CSV", help="the class's answers: CSV with answer, count ('-' = stdin)")
    question.add_argument("--model", metavar="NAME_OR_DIR", help="the model (default: the lesson's, or the offline "
                                                                 "default)")
    question.add_argument("--json", action="store_true", help="print JSON")
    question.set_defaults(run=run_question)


def _step_number(value: str) -> int:
    """STEP: a whole number from 1 (argparse's type; the range is the lesson's, checked once it is read)."""
    if not value.strip().isdigit() or not 1 <= int(value) <= 10_000:
        raise CliError(f"STEP must be a step's number (1 for the first); got {value[:40]!r}")
    return int(value)


def _steps(paths: list[str]) -> dict[str, list[dict]]:
    """The headless run's report for every file, in one interpreter (the app's models load once): {path: one dict
    per step ({"step", "page", "problems"})}; a run that failed before a file's first step gives it one row saying
    so."""
    done = subprocess.run([sys.executable, str(HEADLESS), "steps", *paths], cwd=ROOT, capture_output=True, text=True,
                          timeout=STEP_TIMEOUT_S * len(paths))
    rows: dict[str, list[dict]] = {path: [] for path in paths}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[row.pop("file")].append(row)
    tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
    for path in paths:
        if done.returncode != 0 and not rows[path]:
            rows[path] = [{"step": 0, "page": "-", "problems": [f"the headless run failed: {tail[0]}"]}]
    return rows


def check_files(paths: list[str]) -> bool:
    """Print one line per step of each file (or one line for a file refused whole), in the order given; whether
    all passed."""
    loaded = {}
    for path in paths:
        try:
            loaded[path] = load(path)
        except LessonError as e:
            loaded[path] = e
    good = [p for p, lesson in loaded.items() if not isinstance(lesson, LessonError)]
    reports = _steps(good) if good else {}
    passed = True
    for path, lesson in loaded.items():
        if isinstance(lesson, LessonError):
            print(one_line(f"{path}: {lesson}"))
            passed = False
            continue
        rows = reports[path]
        _question_problems(lesson, rows)
        for row in rows:
            print(one_line(f"{path} step {row['step']} {row['page']}: {'; '.join(row['problems']) or 'ok'}"),
                  flush=True)
        passed &= len(rows) == len(lesson.steps) and not any(row["problems"] for row in rows)
    return passed


def _question_problems(lesson, rows: list[dict]) -> None:
    """Each answerable question's model side computed, its problem (a head the model lacks, options that tie, a
    text too long) added to its step's row."""
    from lab import questions
    from lab.errors import LabError
    from lab.models import DEFAULT_OFFLINE

    loaded = None
    for row in rows:
        step = lesson.steps[row["step"] - 1] if 1 <= row["step"] <= len(lesson.steps) else None
        if step is None or not questions.answerable(step):
            continue
        try:
            if loaded is None and questions.needs_model(step.question):
                from lab.cli.args import load_model_arg

                loaded = load_model_arg(lesson.model or DEFAULT_OFFLINE)
            questions.model_side(step.question, loaded)
        except (LabError, CliError) as e:
            row["problems"].append(f"question: {e}")


def run_question(args) -> int:
    """The model's side of one step's question, and the answers judged; JSON or a readable form."""
    from lab import questions
    from lab.cli.args import load_model_arg
    from lab.models import DEFAULT_OFFLINE

    try:
        lesson = load(args.file)
    except LessonError as e:
        raise CliError(f"{args.file}: {e}") from None
    if args.step > len(lesson.steps):
        raise CliError(f"{args.file} has {len(lesson.steps)} steps; there is no step {args.step}")
    step = lesson.steps[args.step - 1]
    if not questions.answerable(step):
        raise CliError(f"step {args.step} of {args.file} has no answerable question (a question needs a kind)")
    counts = questions.read_answers(step.question, read_text(args.answers)) if args.answers is not None else None
    name = args.model or lesson.model or DEFAULT_OFFLINE
    loaded = load_model_arg(name) if questions.needs_model(step.question) else name
    side = questions.model_side(step.question, loaded, counts or ())
    doc = {"lesson": lesson.name, "step": args.step, "question": step.question,
           "model": name if questions.needs_model(step.question) else None, "side": side}
    if counts is not None:
        doc["judged"] = questions.judge(step.question, side, counts)
    if args.json:
        print_json(doc)
    else:
        _readable(doc)
    return 0


def _readable(doc: dict) -> None:
    """The side and the judged rows as text."""
    side = doc["side"]
    print(one_line(f"{doc['lesson']} step {doc['step']}: {doc['question']['en']}"))
    if side["kind"] == "next-token":
        print_table(["model's top", "p"], [[repr(t["token"]), f"{t['p']:.3g}"] for t in side["top"]])
    elif side["kind"] == "choice":
        print(f"right option: {side['right'] if side['right'] is not None else 'none (no option is right)'}")
        for key in ("tokens", "previous"):
            if key in side:
                print_table(["option value", key], [[k, v] for k, v in side[key].items()])
    else:
        print(f"true value: {side['value']}")
    if "judged" in doc:
        keys = [k for k in doc["judged"][0] if k not in ("read_as",)] if doc["judged"] else ["answer", "count"]
        print()
        print_table(keys, [[f"{row[k]:.3g}" if k == "p" and row[k] is not None else row[k] for k in keys]
                           for row in doc["judged"]])


def run_check(args) -> int:
    """Check every file; exit status 2 when any fails."""
    return 0 if check_files(list(dict.fromkeys(args.files))) else 2


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


def _warm_step(lesson, k: int, lang: str, bar: str) -> dict:
    """Step k's visits: its link, twice; for a step whose question withholds the page until the reveal (ui/answers),
    the page's own link (its inputs, the model, the language) first, so that the reveal finds the page warm."""
    from lab.models import DEFAULT_OFFLINE
    from lab.questions import answerable

    step, link = lesson.steps[k - 1], step_link(lesson, k, lang, DEFAULT_OFFLINE)
    plan = {"step": k, "page": step.page, "query": urlencode(link), "bar": bar}
    if step.question and answerable(step):
        page_link = {p: v for p, v in link.items() if p not in ("lesson", "step")}
        plan["page_query"] = urlencode(page_link)
    return plan


def run_warm(args) -> int:
    """Open every step of the lesson twice against the app at --url; one line (or --json) per step."""

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
    steps = [_warm_step(lesson, k, args.lang, bar(k)) for k in range(1, n + 1)]
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
