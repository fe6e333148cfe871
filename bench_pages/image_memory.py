"""The hosted image's memory with the Space's hub models baked in (issue 59, item 4): "peak resident memory over
every page on each, in the container".

The image is built as the Space builds it, with HUB_MODELS="gpt2 distilgpt2 openai-gpt roberta-base", the stand-in
hub (tests/fake_hub.py) serving random models of each one's real shapes under its hub id (bench_pages/gpt2_image.py,
lab.testing.random_models.HUB_LIKE). Each run is a fresh container limited as a free Space is (2 vCPU, 16 GB):

- one container per model: one reader opens home (the warm-up starts: gpt2 first, then the course models), the run
  waits until the container's CPU is quiet, then opens every page of the manifest with ?model=<that model>, one
  after another; the server's VmHWM (process 1's peak resident memory) is read after the warm-up and at the end;
- one container for all four in turn, twice round, under a model budget (LAB_HOSTED_BUDGET_MB): the second round's
  seconds show whether a reader switching models waits for a model to load again.

    python bench_pages/image_memory.py build                        # the image (gpt2-explorer-four:bench)
    python bench_pages/image_memory.py each [MODEL ...]             # JSON lines: one per model
    python bench_pages/image_memory.py all BUDGET_MB                # JSON line: the four in turn, twice

Only for measuring; docs/hosting.md ("GPT-2 in the hosted image") has the figures.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench_pages import gpt2_image  # noqa: E402
from bench_pages.class_play import cpu_seconds, resident_mb  # noqa: E402
from bench_pages.readers import read  # noqa: E402
from lab import pages as manifest  # noqa: E402
from lab.space import HUB_MODELS  # noqa: E402
from lab.testing import container  # noqa: E402

TAG = "gpt2-explorer-four:bench"
QUIET_S, QUIET_CPU_S, WARM_LIMIT_S = 5.0, 0.3, 600.0  # quiet: under 0.3 CPU-seconds in 5 s


def slugs() -> list[str]:
    """Every page's name as a reader's request names it ("" for the default page)."""
    return ["" if p.default else p.slug for p in manifest.PAGES]


def quiet(url) -> float:
    """Wait until the container's CPU is quiet (the warm-up done); the seconds it took."""
    start = time.monotonic()
    last = cpu_seconds(url)
    while time.monotonic() - start < WARM_LIMIT_S:
        time.sleep(QUIET_S)
        now = cpu_seconds(url)
        if now is not None and last is not None and now - last < QUIET_CPU_S:
            break
        last = now
    return round(time.monotonic() - start, 1)


def visit(url, models: tuple[str, ...], rounds: int = 1) -> list[dict]:
    """Every page on each of `models`, `rounds` times round; a row per page opened."""
    rows = []
    for r in range(rounds):
        for model in models:
            for page in slugs():
                got = read(url, page, f"model={model}", timeout=900)
                rows.append({"round": r + 1, "model": model, "page": page or "home", "s": round(got.seconds, 2),
                             "ok": got.finished and got.exceptions == 0, "rss_mb": resident_mb(url.name)})
    return rows


def each(model: str, image: str = TAG) -> dict:
    """A fresh container: the warm-up, then every page on `model`; its memory at each stage."""
    with container.container(image, timeout=300, **container.FREE_TIER) as url:
        read(url, "", f"model={model}", timeout=900)
        warm_s = quiet(url)
        warmed = resident_mb(url.name, "VmHWM")
        rows = visit(url, (model,))
        return {"model": model, "warm_s": warm_s, "after_warm_up_peak_mb": warmed,
                "peak_mb": resident_mb(url.name, "VmHWM"), "rss_mb": resident_mb(url.name),
                "page_max_mb": max(rows, key=lambda r: r["rss_mb"])["rss_mb"],
                "page_max": max(rows, key=lambda r: r["rss_mb"])["page"],
                "pages_s": round(sum(r["s"] for r in rows), 1), "slowest": max(rows, key=lambda r: r["s"]),
                "problems": [r["page"] for r in rows if not r["ok"]]}


def every_model(budget_mb: int, image: str = TAG) -> dict:
    """A fresh container under `budget_mb`: the warm-up, then the four models' pages in turn, twice round."""
    env = {"LAB_HOSTED_BUDGET_MB": str(budget_mb)}
    with container.container(image, timeout=300, environ=env, **container.FREE_TIER) as url:
        read(url, "", "", timeout=900)
        quiet(url)
        rows = visit(url, HUB_MODELS, rounds=2)
        by_round = {r: round(sum(x["s"] for x in rows if x["round"] == r), 1) for r in (1, 2)}
        firsts = [x for x in rows if x["page"] == "attention"]
        return {"budget_mb": budget_mb, "peak_mb": resident_mb(url.name, "VmHWM"), "rss_mb": resident_mb(url.name),
                "round_s": by_round, "attention_s": [(x["round"], x["model"], x["s"]) for x in firsts],
                "problems": [(x["model"], x["page"]) for x in rows if not x["ok"]]}


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    if what == "build":
        print(gpt2_image.build(TAG, gpt2_image.WHERE, HUB_MODELS))
    elif what == "each":
        for m in args or HUB_MODELS:
            print(json.dumps(each(m)), flush=True)
    else:
        print(json.dumps(every_model(int(args[0]))), flush=True)
