"""A class on one link (issue 41): N virtual readers open one page's link on one app process.

The app is started as `make run` starts it (`streamlit run app.py`, the repository's config: no file
watcher, no forced collection after each run). A reader is a client of Streamlit's own websocket
protocol (bench_pages/readers.py): it opens the page's link and waits until that run finishes; its time
is from connecting until then. For N = 1, 30, 60, 120 and 200 (arriving evenly within 3 s; 200 within 5 s) one
fresh server per N plays every page in turn, home first: "cold" is the first N readers of that link on this
server (its computations not cached yet; the model may be loaded by an earlier page), "warm" the next N.

One entry per page and temperature: project_s = p95 of 30 readers, reference_s = one reader alone,
ratio = p95(30) / alone. target is None (nothing bounds the ratio); ok and targets_p95_s are the issues'
targets: warm, 30 and 60 readers p95 <= 1 s and 120 readers p95 <= 3 s; cold, 30 readers within 2 s of one alone;
every reader finished, no error shown. Each entry also carries, for every N, p50 / p95 / max, finished, errors,
the arrival window (within_s), the payload a reader received (kb_per_reader) and the server's CPU per run
(server_cpu_ms_per_run: its processes' CPU time over the crowd / N) and, where generations ran, the shared engine's
batch sizes over the crowd (engine_steps, engine_rows_max, engine_rows_mean, engine_groups_max: the server's
LAB_ENGINE_LOG, one line per step).

Environment, for shorter or comparative runs: LAB_CLASS_PAGES (comma-separated URL paths, "home" for
the home page), LAB_CLASS_SIZES (e.g. "1,30"), LAB_CLASS_FLAGS (extra `streamlit run` flags, e.g.
"--server.fileWatcherType auto --runner.postScriptGC true" to measure Streamlit's defaults), LAB_CLASS_REPLICAS
(N: serve through `python -m lab replicas --replicas N`, HAProxy in front, instead of one process).
LAB_CLASS_IMAGE (an image tag, e.g. what bench_pages/gpt2_image.py builds: gpt2 baked in): serve through a fresh
container of that image per crowd size, limited as a Space's free CPU tier (lab.testing.container.FREE_TIER: 2 CPUs,
16 GB), instead of a local process; the crowds, own texts, sizes and pages are unchanged, the own-text crowd's model
comes from the image (no local gpt2 cache), and the server's resident memory is read from the container's process 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from lab import pages as manifest

SIZES = (1, 30, 60, 120, 200)
WITHIN_S = 3.0  # the class arrives within this many seconds (200 readers: within 5 s, bench_pages/class_play.py)
TARGETS = {30: 1.0, 60: 1.0, 120: 3.0}  # p95 seconds, warm (issues 41 and 50); 200 readers: all finish, p95 reported
COLD_EXTRA_S = 2.0  # cold: 30 readers within this many seconds of one reader alone
TIMEOUT_S = 180  # one reader gives up after this
ROOT = Path(__file__).resolve().parents[2]
PLAY = ROOT / "bench_pages" / "class_play.py"  # the run itself (Streamlit's protocol lives outside lab/)


def __getattr__(name: str):
    """PAGES: the pages the class opens, home first (each page's `class_bench` in lab/pages.py)."""
    if name == "PAGES":
        return manifest.class_pages()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def plan_of(sizes=SIZES, pages: tuple[str, ...] | None = None, flags: tuple[str, ...] = (), replicas: int = 0,
            own: dict | None = None, image: str | None = None, linked: dict | None = None) -> dict:
    """bench_pages/class_play.py's plan. `own`: the own-text crowd's plan ({"model", "gpt2_cache", "env"}; see OWN);
    `image`: a container of that image per crowd, limited to FREE_TIER, serves instead of a local process; `linked`:
    the shared-link crowds' model ({"model", "gpt2_cache"}: _model_plan)."""
    pages = manifest.class_pages() if pages is None else pages
    plan = {"sizes": list(sizes), "pages": list(pages), "flags": list(flags), "within": WITHIN_S,
            "timeout": TIMEOUT_S, "replicas": replicas} | ({"own": True} | own if own is not None else linked or {})
    if image:
        from lab.testing.container import FREE_TIER

        plan |= {"image": image} | FREE_TIER
    return plan


def play(sizes=SIZES, pages: tuple[str, ...] | None = None, flags: tuple[str, ...] = (), replicas: int = 0,
         own: dict | None = None, image: str | None = None, linked: dict | None = None) -> dict:
    """{(page, "cold"|"warm"|"own"): {n: summary}}, one fresh server per crowd size (bench_pages/class_play.py, in a
    fresh interpreter: the readers speak Streamlit's protocol with its own classes, which lab never imports); the
    plan as plan_of makes it."""
    plan = plan_of(sizes, pages, flags, replicas, own, image, linked)
    out = subprocess.run([sys.executable, str(PLAY), json.dumps(plan)], capture_output=True, text=True, cwd=ROOT,
                         timeout=3600 * 3)
    if out.returncode != 0:
        raise RuntimeError(f"the class run failed: {out.stderr.strip().splitlines()[-1:]}")
    results: dict = {}
    for key, summary in json.loads(out.stdout.strip().splitlines()[-1]).items():
        page, temperature, n = key.split("|")
        results.setdefault((page, temperature), {})[int(n)] = summary
    return results


# Each reader types their own text (issue 57): LAB_CLASS_OWN=1 opens OWN_PAGES (unless LAB_CLASS_PAGES names others)
# with a different text per reader; LAB_CLASS_MODEL=gpt2 serves GPT-2 small's shapes (random weights) under the name
# gpt2 from a Hugging Face cache made in LAB_CLASS_GPT2_CACHE (default: a folder under the system's temp); and
# LAB_ENGINE_OFF=1 runs the server without the shared engine (each reader's generation alone: the comparison).
# Without LAB_CLASS_OWN, LAB_CLASS_MODEL puts ?model= in the shared link (gpt2 served the same way).
OWN_PAGES = ("attention", "logit_lens", "sampling")
OWN_TARGETS = {"attention": 1.5, "logit_lens": 4.0, "sampling": 15.0}  # p95 s, 30 readers, GPT-2 small (issue 57)
OWN_FIRST_TOKEN_S = 2.0  # the sampling page: every reader's first token within this (p95 reported, max judged)
OWN_COURSE_SAMPLING_S = 1.5  # course-gpt2's sampling page, 30 own texts


def _model_plan(env) -> dict:
    """LAB_CLASS_MODEL's part of the plan ({} when unset): ?model= in every link ("model"), and for gpt2 the local
    Hugging Face cache it is served from ("gpt2_cache"), unless a container (LAB_CLASS_IMAGE) carries its own."""
    import tempfile

    model = env.get("LAB_CLASS_MODEL") or None
    if model is None:
        return {}
    plan: dict = {"model": model}
    if model == "gpt2" and not env.get("LAB_CLASS_IMAGE"):
        plan["gpt2_cache"] = env.get("LAB_CLASS_GPT2_CACHE") or str(Path(tempfile.gettempdir()) / "lab-gpt2-bench")
    return plan


def _own_plan(env) -> dict | None:
    """The own-text crowd's plan from the environment, or None (the shared-link crowds)."""
    if env.get("LAB_CLASS_OWN") != "1":
        return None
    # LAB_WARM=0: the server's background warm-up (course models, the ceiling's table) would take a core for seconds
    # at a moment that varies from run to run (measured: the same crowd's p95 0.6 s or 3.3 s); the crowd's model is
    # loaded by one reader before it arrives instead.
    switches = {k: "1" for k in ("LAB_ENGINE_OFF",) if env.get(k) == "1"}
    return {"model": None, "env": switches | {"LAB_WARM": "0"}} | _model_plan(env)


def _ok_own(page: str, by_n: dict, model: str | None) -> bool | None:
    """Issue 57's targets for 30 readers each typing their own text: on GPT-2 small's shapes the page's OWN_TARGETS
    p95 (and the sampling page's every first token within OWN_FIRST_TOKEN_S); on course-gpt2 the sampling page
    within OWN_COURSE_SAMPLING_S. None where the issue sets none, or the crowd is missing."""
    crowd = by_n.get(30)
    if crowd is None:
        return None
    if crowd["finished"] != crowd["n"] or crowd["errors"]:
        return False
    if model == "gpt2" and page in OWN_TARGETS:
        first = crowd.get("first_token_max_s")
        return crowd["p95_s"] <= OWN_TARGETS[page] and (page != "sampling" or (first or 1e9) <= OWN_FIRST_TOKEN_S)
    if model in (None, "course-gpt2") and page == "sampling":
        return crowd["p95_s"] <= OWN_COURSE_SAMPLING_S
    return None


def _ok(by_n: dict, temperature: str = "warm") -> bool | None:
    """The issues' targets met: every reader finished with no error; warm, p95 within its target for each crowd
    in TARGETS; cold, 30 readers' p95 within COLD_EXTRA_S of one reader alone. None when a crowd is missing."""
    needed = TARGETS if temperature == "warm" else {1: None, 30: None}
    if not all(n in by_n for n in needed):
        return None
    if not all(s["finished"] == s["n"] and s["errors"] == 0 for s in by_n.values()):
        return False
    if temperature != "warm":
        return by_n[30]["p95_s"] <= by_n[1]["p95_s"] + COLD_EXTRA_S
    return all(by_n[n]["p95_s"] <= target for n, target in TARGETS.items())


def image_problem(image: str, model: str | None, replicas: int = 0) -> str | None:
    """Why LAB_CLASS_IMAGE cannot serve this run (no podman, no such image, a hub model it does not carry, replicas
    asked for: the container is one process), or None."""
    from lab.testing import container

    if replicas:
        return "LAB_CLASS_IMAGE serves one container: leave LAB_CLASS_REPLICAS out"
    if why := container.missing():
        return why
    found = container.podman("image", "inspect", image, "--format", "{{range .Config.Env}}{{println .}}{{end}}",
                             check=False)
    if found.returncode != 0:
        return f"no image {image} here (python bench_pages/gpt2_image.py {image} builds one with gpt2 baked in)"
    baked = next((line.split("=", 1)[1].split() for line in found.stdout.splitlines()
                  if line.startswith("LAB_HUB_MODELS=")), [])
    if model and model not in baked and not model.startswith("course-"):
        return f"the image {image} carries no {model} (its hub models: {' '.join(baked) or 'none'})"
    return None


def benchmarks() -> list[dict]:
    env = os.environ
    pages = tuple(p for p in env.get("LAB_CLASS_PAGES", ",".join(manifest.class_pages())).split(",") if p)
    sizes = tuple(int(n) for n in env.get("LAB_CLASS_SIZES", ",".join(map(str, SIZES))).split(",") if n)
    flags = tuple(env.get("LAB_CLASS_FLAGS", "").split())
    replicas = int(env.get("LAB_CLASS_REPLICAS", "0") or 0)
    own, image = _own_plan(env), env.get("LAB_CLASS_IMAGE") or None
    linked = _model_plan(env) if own is None else None
    if own is not None and "LAB_CLASS_PAGES" not in env:
        pages = OWN_PAGES
    if image and (why := image_problem(image, (own or linked).get("model"), replicas)):
        raise RuntimeError(why)
    t0 = time.perf_counter()
    results = play(sizes, pages, flags, replicas, own, image, linked)
    wall = round(time.perf_counter() - t0, 3)
    out = []
    after = results.pop(("memory", "after"), {})
    memory = {str(n): m["rss_mb"] for n, m in after.items()}  # server RSS after each crowd
    peak = {str(n): m["peak_mb"] for n, m in after.items() if "peak_mb" in m}  # a container's: its peak so far
    for (page, temperature), by_n in results.items():
        alone = by_n.get(1, {}).get("p95_s")
        crowd = by_n.get(30, by_n[max(by_n)])["p95_s"]
        serving = f"{replicas} replicas behind HAProxy" if replicas else "one process"
        serving = f"a container of {image}, 2 CPUs, 16 GB" if image else serving
        serving += f", {linked['model']}" if linked else ""
        if own is not None:
            serving += f", {own.get('model') or 'course-gpt2'}" + "".join(f", {k} set" for k in own.get("env", {})
                                                                            if k != "LAB_WARM")
        crowd_of = "each reader's own text" if temperature == "own" else temperature
        out.append({"name": f"class ({serving}): {page}, {crowd_of}: p95 of 30 readers arriving within 3 s vs one "
                            "alone",
                    "project_s": crowd, "reference_s": alone,
                    "ratio": round(crowd / alone, 4) if alone else None,
                    "target": None, "targets_p95_s": {str(n): x for n, x in TARGETS.items()},
                    "ok": _ok_own(page, by_n, own.get("model")) if own is not None else _ok(by_n, temperature),
                    "page": page, "temperature": temperature, "readers": {str(n): s for n, s in by_n.items()},
                    "flags": list(flags), "replicas": replicas, "wall_s": wall, "rss_mb_after": memory}
                   | ({"image": image, "rss_peak_mb_after": peak} if image else {}))
    return out
