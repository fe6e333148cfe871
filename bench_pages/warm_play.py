"""The warm-up benchmark's run (lab/benchmarks/warmup.py starts it in a fresh interpreter): for LAB_WARM=0 and 1, a
fresh app server started as `make run` starts it; one reader opens the home page, and `wait` seconds later (a
teacher opens the app, then talks) one reader opens each page in turn; prints {"PAGE|WARM": seconds} as JSON.

    python bench_pages/warm_play.py '{"pages": ["detector", "ceiling"], "wait": 30, "timeout": 180}'
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_pages.readers import app_server, read  # noqa: E402


def main(plan: dict) -> dict:
    results = {}
    for warm in ("0", "1"):
        with app_server("app.py", env={"HF_HUB_OFFLINE": "1", "LAB_WARM": warm}) as url:
            home = read(url, "", timeout=plan["timeout"])
            assert home.finished, home.status
            time.sleep(plan["wait"])
            for page in plan["pages"]:
                r = read(url, page, timeout=plan["timeout"])
                results[f"{page}|{warm}"] = round(r.seconds, 3) if r.finished and not r.exceptions else None
    return results


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
