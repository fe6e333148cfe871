"""Where a warm rerun's server CPU goes (issue 50): one page's warm reruns under py-spy, split two ways.

    .venv/bin/python scripts/profile_rerun.py attention [--readers 60] [--within 3] [--py-spy PATH]

Starts the app as `make run` does, warms the page (one reader, then a cold crowd), then samples the server with
py-spy (`record --format raw`, every thread, 250 Hz, subprocesses off) while a warm crowd of virtual readers opens
the page. Each sample is attributed twice: to who asked (the outermost frame in the app's own code: the page's
script, the lesson bar, the sidebar, the accessibility script, the theme, app.py's frame...) and to what did the
work (the innermost frame in a known part: Streamlit's element building, protobuf serialisation, Arrow, Vega-Lite
and Altair, the websocket server, Streamlit's runtime, lab's computations). Prints JSON: each split in % of the
server's samples, and the server's CPU ms per rerun. Needs py-spy (`pip install py-spy`; not a project dependency).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_pages.readers import app_server, arrive  # noqa: E402

WHO = [("app_pages/", "the page's script"), ("/ui/lesson", "lesson bar"), ("/ui/rooms", "lesson bar"),
       ("/ui/sidebar", "sidebar"), ("/ui/model_picker", "sidebar"), ("/ui/a11y", "accessibility script"),
       ("/ui/theme", "theme"), ("/ui/presentation", "presentation"), ("/ui/url_state", "link state"),
       ("/ui/navigation", "navigation"), ("/app.py", "app.py (its own frame)")]
WHAT = [("google/protobuf", "protobuf serialisation"), ("SerializeToString", "protobuf serialisation"),
        ("pyarrow", "Arrow"), ("streamlit/dataframe_util", "Arrow"), ("altair", "Vega-Lite / Altair"),
        ("jsonschema", "Vega-Lite / Altair"), ("vega_charts", "Vega-Lite / Altair"),
        ("streamlit/elements", "Streamlit element building"),
        ("streamlit/delta_generator", "Streamlit element building"),
        ("streamlit/runtime/caching", "Streamlit's caches"), ("streamlit/runtime/state", "session state"),
        ("streamlit/runtime/scriptrunner", "script runner"), ("streamlit/runtime", "Streamlit's runtime"),
        ("uvicorn", "web server and websocket"), ("starlette", "web server and websocket"),
        ("tornado", "web server and websocket"), ("websockets", "web server and websocket"),
        ("asyncio", "event loop"), ("pandas", "pandas"), ("torch", "torch"), ("/lab/", "lab"), ("/viz/", "viz"),
        ("/ui/", "ui (own code)"), ("app_pages/", "the page's script (own code)")]


def classify(frames: list[str], table, innermost: bool) -> str:
    """What did the work: the innermost frame in a known part. Who asked: the table's first part in the stack."""
    if innermost:
        for frame in reversed(frames):
            for needle, label in table:
                if needle in frame:
                    return label
        return "other"
    return next((label for needle, label in table if any(needle in f for f in frames)), "other")


def split(raw: Path) -> tuple[dict, dict, int]:
    """Samples by who and by what (% of all), and the sample count, from py-spy's raw (collapsed) output."""
    who, what, total, leaves = collections.Counter(), collections.Counter(), 0, collections.Counter()
    callers = collections.Counter()  # PROFILE_GREP=<leaf function>: the stacks that end there
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        frames, n = stack.split(";"), int(count)
        total += n
        who[classify(frames, WHO, innermost=False)] += n
        what[classify(frames, WHAT, innermost=True)] += n
        leaves[frames[-1]] += n
        if os.environ.get("PROFILE_GREP") and os.environ["PROFILE_GREP"] in frames[-1]:
            callers[" <- ".join(f.split(" (")[0] for f in reversed(frames[-14:-1]))] += n
    print("\n".join(f"{n:5d} {f}" for f, n in leaves.most_common(25)), file=sys.stderr)
    print("\n".join(f"{n:5d} {f}" for f, n in callers.most_common(6)), file=sys.stderr)
    pct = lambda c: {k: round(100 * v / max(total, 1), 1) for k, v in c.most_common()}  # noqa: E731
    return pct(who), pct(what), total


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("page")
    p.add_argument("--readers", type=int, default=60)
    p.add_argument("--within", type=float, default=3.0)
    p.add_argument("--py-spy", default=shutil.which("py-spy") or "py-spy")
    args = p.parse_args()
    env = {"HF_HUB_OFFLINE": "1", "LAB_WARM": "0"}  # no background warm-up: only the reruns are sampled
    with app_server("app.py", env=env) as url, tempfile.TemporaryDirectory() as tmp:
        arrive(url, 1, 0, args.page)
        arrive(url, args.readers, args.within, args.page)  # cold: fills the caches
        raw = Path(os.environ.get("PROFILE_RAW", Path(tmp) / "raw.txt"))
        spy = subprocess.Popen([args.py_spy, "record", "--pid", str(url.proc.pid), "--format", "raw", "--rate", "250",
                                "--output", str(raw), "--nonblocking", "--full-filenames"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        cpu0 = sum(psutil.Process(url.proc.pid).cpu_times()[:2])
        readings = arrive(url, args.readers, args.within, args.page)
        cpu = sum(psutil.Process(url.proc.pid).cpu_times()[:2]) - cpu0
        spy.send_signal(2)
        spy.wait(60)
        who, what, samples = split(raw)
    secs = sorted(r.seconds for r in readings)
    print(json.dumps({"page": args.page, "readers": args.readers, "within_s": args.within,
                      "p95_s": round(secs[int(0.95 * len(secs)) - 1], 3), "finished": sum(r.finished for r in readings),
                      "server_cpu_ms_per_run": round(cpu * 1000 / len(readings), 1), "samples": samples,
                      "who_pct": who, "what_pct": what}, indent=1))


if __name__ == "__main__":
    main()
