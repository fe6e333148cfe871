"""The hosted image's memory with the Space's hub models baked in (issue 59, item 4): "peak resident memory over
every page on each, in the container".

The image is built as the Space builds it, with HUB_MODELS="gpt2 distilgpt2 openai-gpt roberta-base", the stand-in
hub (tests/fake_hub.py) serving random models of each one's real shapes under its hub id (bench_pages/gpt2_image.py,
lab.testing.random_models.HUB_LIKE). Each run is a fresh container limited as a free Space is (2 vCPU, 16 GB):

- one container per model: one reader opens home (the warm-up starts: gpt2 first, then the course models), the run
  waits until the container's CPU is quiet, then opens every page of the manifest with ?model=<that model>, one
  after another; the server's VmHWM (process 1's peak resident memory) is read after the warm-up and at the end;
- one container for all four in turn under a model budget (LAB_HOSTED_BUDGET_MB): every page on each, then a text
  nobody typed before on each model's attention page, twice round: the second round's seconds show whether a reader
  switching models waits for a model the budget dropped to load again (a shared link's results are cached and
  need no model: a second round of every page took 5.1 s for all four under 1,700 MB).

    python bench_pages/image_memory.py build                        # the image (gpt2-explorer-four:bench)
    python bench_pages/image_memory.py each [MODEL ...]             # JSON lines: one per model
    python bench_pages/image_memory.py all BUDGET_MB                # JSON line: the four in turn

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
from bench_pages.class_play import OWN_TEXT, cpu_seconds, resident_mb  # noqa: E402
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


def fresh(url, round_: int) -> list[tuple[str, float]]:
    """Each model's attention page on a text nobody asked for before (nothing cached: the model itself runs)."""
    from urllib.parse import urlencode

    seconds = []
    for model in HUB_MODELS:
        text = f"A reader in round {round_} typed this sentence for {model}"
        got = read(url, "attention", urlencode({OWN_TEXT["attention"]: text, "model": model}), timeout=900)
        seconds.append((model, round(got.seconds, 2) if got.finished and not got.exceptions else None))
    return seconds


def every_model(budget_mb: int, image: str = TAG) -> dict:
    """A fresh container under `budget_mb`: the warm-up, every page on each of the four models in turn, then a new
    text on each model's attention page, twice round: a model the budget dropped loads again for it."""
    env = {"LAB_HOSTED_BUDGET_MB": str(budget_mb)}
    with container.container(image, timeout=300, environ=env, **container.FREE_TIER) as url:
        read(url, "", "", timeout=900)
        quiet(url)
        rows = visit(url, HUB_MODELS)
        return {"budget_mb": budget_mb, "pages_s": round(sum(x["s"] for x in rows), 1),
                "fresh_s": {r: fresh(url, r) for r in (1, 2)}, "peak_mb": resident_mb(url.name, "VmHWM"),
                "rss_mb": resident_mb(url.name), "problems": [(x["model"], x["page"]) for x in rows if not x["ok"]]}


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    if what == "build":
        print(gpt2_image.build(TAG, gpt2_image.WHERE, HUB_MODELS))
    elif what == "each":
        for m in args or HUB_MODELS:
            print(json.dumps(each(m)), flush=True)
    else:
        print(json.dumps(every_model(int(args[0]))), flush=True)
