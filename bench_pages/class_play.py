"""The class benchmark's run (lab/benchmarks/class_readers.py starts it in a fresh interpreter): for each crowd size
a fresh app server started as `make run` starts it, every page's link opened by that many virtual readers, cold
then warm; prints {"PAGE|cold|N": summary} as JSON.

    python bench_pages/class_play.py '{"sizes": [1, 30, 60], "pages": ["home", ...], "flags": [], "within": 3.0,
                                       "timeout": 180}'
"""

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_pages.readers import app_server, arrive  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(math.ceil(q / 100 * len(ordered)) - 1, 0)]


def summary(readings) -> dict:
    """p50 / p95 / max seconds, how many finished, how many drew an error, of one crowd's readings."""
    secs = [r.seconds for r in readings]
    return {"n": len(readings), "p50_s": round(percentile(secs, 50), 4), "p95_s": round(percentile(secs, 95), 4),
            "max_s": round(max(secs), 4), "finished": sum(r.finished for r in readings),
            "errors": sum(r.exceptions > 0 for r in readings),
            "statuses": sorted({r.status for r in readings if not r.finished})}


def main(plan: dict) -> dict:
    results = {}
    for n in plan["sizes"]:
        with app_server("app.py", *plan["flags"], env={"HF_HUB_OFFLINE": "1"}) as url:
            for page in plan["pages"]:
                path = "" if page == "home" else page
                for temperature in ("cold", "warm"):
                    readings = arrive(url, n, plan["within"] if n > 1 else 0, path, timeout=plan["timeout"])
                    results[f"{page}|{temperature}|{n}"] = summary(readings)
    return results


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
