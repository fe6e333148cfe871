"""The class bench through the hosted demo's container (issue 49): the image `make image` builds, limited to what
Hugging Face's free CPU tier gives a Space (2 vCPU, 16 GB), one fresh container per crowd size, every page's link
opened by 1 and 30 virtual readers arriving within 3 s (the same readers and pages as lab/benchmarks/class_readers.py,
which serves the bare process). Reports each page's warm p95 against the target (<= 1 s for 30 readers) and the
server's resident memory after the crowd.

Skipped (one entry saying why) where podman or the image is missing. LAB_CONTAINER_IMAGE picks another image,
LAB_CLASS_PAGES / LAB_CLASS_SIZES narrow the run as for the class bench.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from lab import pages as manifest
from lab.benchmarks.class_readers import PLAY, ROOT, TIMEOUT_S, WITHIN_S
from lab.testing import container

SIZES = (1, 30)
TARGET_S = 1.0  # p95 of 30 readers, warm (as on the bare process)


def play(image: str, sizes, pages) -> dict:
    """class_play's results for a container of `image` limited to the free tier."""
    plan = {"sizes": list(sizes), "pages": list(pages), "flags": [], "within": WITHIN_S, "timeout": TIMEOUT_S,
            "image": image, **container.FREE_TIER}
    out = subprocess.run([sys.executable, str(PLAY), json.dumps(plan)], capture_output=True, text=True, cwd=ROOT,
                         timeout=3600 * 3)
    if out.returncode != 0:
        raise RuntimeError(f"the class run in a container failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def skipped(why: str) -> list[dict]:
    return [{"name": "class in the container: skipped", "project_s": None, "reference_s": None, "ratio": None,
             "target": None, "ok": None, "skipped": why}]


def benchmarks() -> list[dict]:
    image = os.environ.get("LAB_CONTAINER_IMAGE", container.IMAGE)
    why = container.missing()
    if why is None and container.podman("image", "exists", image, check=False).returncode != 0:
        why = f"no image {image} here (make image builds it)"
    if why:
        return skipped(why)
    env = os.environ
    pages = tuple(p for p in env.get("LAB_CLASS_PAGES", ",".join(manifest.class_pages())).split(",") if p)
    sizes = tuple(int(n) for n in env.get("LAB_CLASS_SIZES", ",".join(map(str, SIZES))).split(",") if n)
    t0 = time.perf_counter()
    raw = play(image, sizes, pages)
    wall = round(time.perf_counter() - t0, 3)
    crowd = max(sizes)
    rss = {n.split("|")[2]: v["rss_mb"] for n, v in raw.items() if n.startswith("memory|")}
    out = []
    for page in pages:
        alone, many = raw.get(f"{page}|warm|1", {}), raw[f"{page}|warm|{crowd}"]
        ok = many["finished"] == many["n"] and many["errors"] == 0 and (crowd < 30 or many["p95_s"] <= TARGET_S)
        out.append({"name": f"class in the container ({image}, 2 CPUs, 16 GB): {page}, warm: p95 of {crowd} "
                            f"readers arriving within {WITHIN_S:g} s vs one alone",
                    "project_s": many["p95_s"], "reference_s": alone.get("p95_s"),
                    "ratio": round(many["p95_s"] / alone["p95_s"], 4) if alone.get("p95_s") else None,
                    "target": None, "target_p95_s": TARGET_S, "ok": ok, "page": page, "within_s": WITHIN_S,
                    "cold": raw[f"{page}|cold|{crowd}"], "warm": many, "resident_mb_after": rss, "wall_s": wall})
    return out
