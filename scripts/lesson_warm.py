"""`python -m lab lesson warm`'s run (lab/cli/lessons.py starts it in a fresh interpreter, since lab never imports
Streamlit): every step of a lesson opened twice against a running app by a virtual reader (bench_pages/readers.py:
a client of Streamlit's own websocket protocol, no browser), cold then warm.

    python scripts/lesson_warm.py '{"url": "http://127.0.0.1:8501", "timeout": 600,
                                    "steps": [{"step": 1, "page": "attention", "query": "lesson=...&step=1&...",
                                               "bar": "step 1 of 5"}]}'

Prints one JSON line per step: {"step", "page", "cold_s", "warm_s", "ok", "problem"}. A visit fails when its run
does not finish, shows an error, or does not draw the lesson bar's "step K of N" (the step was not applied).
A step with "page_query" (its question withholds the page until the reveal, ui/answers.py) is opened first by the
page's own link (cold: the page's computations made), then by the step's (warm: the bar and the question).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_pages.readers import read  # noqa: E402


def problem(reading, bar: str) -> str | None:
    """Why a visit failed, in words; None when its run finished, showed no error and drew the step's bar."""
    if not reading.finished:
        return f"the run did not finish ({reading.status})"
    if reading.exceptions:
        return f"the page showed {reading.exceptions} error(s)"
    if not any(bar in text for text in reading.texts):
        return f"the lesson bar never said {bar!r}"
    return None


def main(plan: dict) -> None:
    for step in plan["steps"]:
        page = "" if step["page"] == "home" else step["page"]
        if "page_query" in step:  # the page waits for the question's answer: warmed through its own link first
            cold = read(plan["url"], page, step["page_query"], timeout=plan["timeout"])
            warm = read(plan["url"], page, step["query"], timeout=plan["timeout"])
            trouble = problem(cold, "") or problem(warm, step["bar"])
        else:
            cold, warm = (read(plan["url"], page, step["query"], timeout=plan["timeout"]) for _ in range(2))
            trouble = problem(cold, step["bar"]) or problem(warm, step["bar"])
        print(json.dumps({"step": step["step"], "page": step["page"], "cold_s": round(cold.seconds, 3),
                          "warm_s": round(warm.seconds, 3), "ok": trouble is None, "problem": trouble}), flush=True)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
