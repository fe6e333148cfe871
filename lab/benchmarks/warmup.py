"""The first visit after a server start (issue 34, item 11): the detector and the ceiling opened by one reader 30 s
after the home page, on a server that warms at start-up (ui/warmup.py, the default) against one that does not
(LAB_WARM=0). A reader speaks Streamlit's websocket protocol (bench_pages/readers.py); its time is from connecting
until its run finishes. ratio = warmed / not warmed; target 0.5: the warm-up at least halves the wait."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lab.benchmarks import entry

PAGES = ("detector", "ceiling")
WAIT_S = 30  # between the home page and the first page visit
ROOT = Path(__file__).resolve().parents[2]
PLAY = ROOT / "bench_pages" / "warm_play.py"


def benchmarks() -> list[dict]:
    plan = {"pages": list(PAGES), "wait": WAIT_S, "timeout": 180}
    out = subprocess.run([sys.executable, str(PLAY), json.dumps(plan)], capture_output=True, text=True, cwd=ROOT,
                         timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"the warm-up run failed: {out.stderr.strip().splitlines()[-1:]}")
    seconds = json.loads(out.stdout.strip().splitlines()[-1])
    if None in seconds.values():
        raise RuntimeError(f"a first visit did not finish without an error: {seconds}")
    return [entry(f"first visit after a start: {page}, {WAIT_S} s after the home page, warmed vs not",
                  seconds[f"{page}|1"], seconds[f"{page}|0"], 0.5, page=page, wait_s=WAIT_S)
            for page in PAGES]
