"""The class benchmark's run (lab/benchmarks/class_readers.py starts it in a fresh interpreter): for each crowd size
a fresh app server started as `make run` starts it, every page's link opened by that many virtual readers, cold
then warm; prints {"PAGE|cold|N": summary} as JSON. With "image" in the plan, the server is a fresh container of that
image per crowd size (lab/testing/container.py; "cpus" and "memory" limit it), and "memory|after|N" holds the
server's resident memory after that crowd's pages and its peak (lab/benchmarks/container.py;
lab/benchmarks/class_readers.py with LAB_CLASS_IMAGE, where the plan's "env" reaches the container too).

    python bench_pages/class_play.py '{"sizes": [1, 30, 60], "pages": ["home", ...], "flags": [], "within": 3.0,
                                       "timeout": 180}'

With "own": true, the pages of OWN_TEXT are opened by readers who each type their own text ("PAGE|own|N": nothing
cached for anyone; the sampling page's summary adds the time to each reader's first generated token); "model" puts
?model= in every link, "gpt2_cache" (a folder) serves GPT-2 small's shapes under the name gpt2 from a Hugging Face
cache made there (bench_pages/gpt2_cache.py), and "env" adds to the server's environment (LAB_ENGINE_OFF=1: the
shared engine off, the comparison).
"""

import json
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil  # noqa: E402

from bench_pages import gpt2_cache  # noqa: E402
from bench_pages.readers import app_server, arrive  # noqa: E402
from lab.testing import container  # noqa: E402
from lab.testing.browser import free_port, served  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(math.ceil(q / 100 * len(ordered)) - 1, 0)]


def summary(readings, cpu_s: float | None = None, within: float = 0.0) -> dict:
    """p50 / p95 / max seconds, how many finished, how many drew an error, of one crowd's readings; the payload a
    reader received (KB, median); the server's CPU per run (ms: its process's CPU time over the crowd / readers,
    None when the server is not a process of this machine's, e.g. a container); the arrival window."""
    secs = [r.seconds for r in readings]
    return {"n": len(readings), "within_s": within, "p50_s": round(percentile(secs, 50), 4),
            "p95_s": round(percentile(secs, 95), 4), "max_s": round(max(secs), 4),
            "finished": sum(r.finished for r in readings), "errors": sum(r.exceptions > 0 for r in readings),
            "statuses": sorted({r.status for r in readings if not r.finished}),
            "kb_per_reader": round(percentile([r.received for r in readings], 50) / 1000, 1),
            "server_cpu_ms_per_run": None if cpu_s is None else round(cpu_s * 1000 / len(readings), 1),
            **_first(readings)}


def _first(readings) -> dict:
    """Time to each reader's first generated token (the sampling page; own-text crowds): p50 / p95 / max, or {}."""
    firsts = [r.first_s for r in readings if r.first_s is not None]
    if not firsts:
        return {}
    return {"first_token_p50_s": round(percentile(firsts, 50), 4),
            "first_token_p95_s": round(percentile(firsts, 95), 4), "first_token_max_s": round(max(firsts), 4),
            "first_token_seen": len(firsts)}


# Each reader's own text (issue 57): the page's text parameter, and a sentence no two readers share. The words vary
# with the reader's number so nothing is cached for anyone, and the lengths stay close to what a student types.
OWN_TEXT = {"sampling": "samp_prompt", "attention": "attn_text", "logit_lens": "lens_text"}
SUBJECTS = ["The package manager", "My teacher", "The old computer", "A small program", "The Debian archive",
            "O professor", "A biblioteca", "Um estudante"]
MARK = 'class="samp-tok'  # the sampling page's first generated token (viz.sampling.coloured_tokens)


def own_query(page: str, model: str | None) -> object:
    """Reader i's query string for its own text on `page` (with ?model= when the plan names one)."""
    from urllib.parse import urlencode

    def query(i: int) -> str:
        text = f"{SUBJECTS[i % len(SUBJECTS)]} number {i + 1} said that"
        return urlencode({OWN_TEXT[page]: text} | ({"model": model} if model else {}))

    return query


def server_pid(url) -> int | None:
    """The server's process id on this machine: the local process, or a container's process 1 as the host sees it
    (podman inspect's State.Pid: runc's containers are this machine's processes); None when unknown."""
    if getattr(url, "name", None):
        out = container.podman("inspect", "--format", "{{.State.Pid}}", url.name, check=False)
        return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() else None
    proc = getattr(url, "proc", None)
    return None if proc is None else proc.pid


def cpu_seconds(url) -> float | None:
    """The server's CPU time so far (user + system, every thread of its process and of the processes it started:
    the replicas and HAProxy; a container's process 1 and its children), or None when unknown."""
    pid = server_pid(url)
    if not pid:
        return None
    total = 0.0
    root = psutil.Process(pid)
    for p in [root, *root.children(recursive=True)]:
        try:
            times = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


WINDOWS = {200: 5.0}  # crowds that arrive over a longer window than the plan's (issue 50: 200 readers within 5 s)


def server(plan: dict):
    """The app as `make run` serves it; or plan["replicas"] processes behind HAProxy (`python -m lab replicas`,
    rooms on nothing: the readers only read); or a fresh container of plan["image"] limited as the plan says."""
    if plan.get("image"):  # the image's own environment (offline, its baked models) plus the plan's switches
        return container.container(plan["image"], cpus=plan.get("cpus"), memory=plan.get("memory"),
                                   environ=plan.get("env") or None)
    env = {"HF_HUB_OFFLINE": "1", "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", "2")} | plan.get("env", {})
    if plan.get("gpt2_cache"):  # GPT-2 small's shapes under the name gpt2, prefetched as a reader's machine does
        env["HF_HOME"] = str(gpt2_cache.prepared(Path(plan["gpt2_cache"])))
    if plan.get("replicas"):
        port = free_port()
        cmd = [sys.executable, "-m", "lab", "replicas", "--replicas", str(plan["replicas"]), "--port", str(port)]
        return served(cmd, port, 180, env=env)
    return app_server("app.py", *plan["flags"], env=env)


def local_resident_mb(pid: int) -> float:
    """Resident memory, MB, of the server process and the processes it started (replicas), after a crowd."""
    root = psutil.Process(pid)
    total = 0
    for p in [root, *root.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return round(total / 1e6, 1)


def resident_mb(name: str, field: str = "VmRSS") -> float:
    """The container's server process (its process 1) resident memory, MB (VmHWM: its peak so far)."""
    status = container.podman("exec", name, "cat", "/proc/1/status").stdout
    kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith(field + ":"))
    return round(kib * 1024 / 1e6, 1)


ENGINE_LOG = "/tmp/lab-engine-steps.jsonl"  # inside a container (its /tmp is its own)


def engine_lines(url, path: str) -> list[str]:
    """The shared engine's step log so far (lab.serving.shared.STEP_LOG): the local file, or the container's."""
    if getattr(url, "name", None):
        return container.podman("exec", url.name, "sh", "-c", f"cat {path} 2>/dev/null || true").stdout.splitlines()
    return Path(path).read_text(encoding="utf-8").splitlines() if Path(path).exists() else []


def engine_summary(lines: list[str]) -> dict:
    """The engine's batch sizes over a crowd's steps: rows decoded together per step (max, mean), and the most
    groups of far-apart lengths in one step; {} when no generation ran."""
    steps = [json.loads(line) for line in lines if line.strip()]
    if not steps:
        return {}
    rows = [sum(r for r, _ in step) for step in steps]
    return {"engine_steps": len(steps), "engine_rows_max": max(rows),
            "engine_rows_mean": round(sum(rows) / len(rows), 1), "engine_groups_max": max(len(s) for s in steps)}


def main(plan: dict) -> dict:
    import tempfile

    results = {}
    log = ENGINE_LOG if plan.get("image") else str(Path(tempfile.mkdtemp(prefix="lab-engine-")) / "steps.jsonl")
    plan = plan | {"env": (plan.get("env") or {}) | {"LAB_ENGINE_LOG": log}}
    for n in plan["sizes"]:
        with server(plan) as url:
            for page in plan["pages"]:
                path = "" if page == "home" else page
                own = plan.get("own") and page in OWN_TEXT
                query = own_query(page, plan.get("model")) if own else (f"model={plan['model']}" if plan.get("model")
                                                                         else "")
                # The model loaded and the page's code warm, as for a class that first opened the link: one reader per
                # replica (HAProxy's round robin sends each new one to the next, once every replica is up: its check
                # passes twice a second apart), else the second replica's crowd waited for its model to load (2
                # replicas, attention, 30 readers: p95 4.8 s with one warm reader)
                if own and plan.get("replicas") and page == plan["pages"][0]:
                    time.sleep(3)
                for k in range(max(1, plan.get("replicas") or 0) if own else 0):
                    arrive(url, 1, 0, path, own_query(page, plan.get("model"))(-1 - k), timeout=plan["timeout"])
                for temperature in ("own",) if own else ("cold", "warm"):
                    within = WINDOWS.get(n, plan["within"]) if n > 1 else 0
                    before, steps = cpu_seconds(url), len(engine_lines(url, log))
                    readings = arrive(url, n, within, path, query, timeout=plan["timeout"], mark=MARK)
                    after = cpu_seconds(url)
                    cpu = None if before is None else after - before
                    results[f"{page}|{temperature}|{n}"] = summary(readings, cpu, within) | engine_summary(
                        engine_lines(url, log)[steps:])
            if plan.get("image"):
                results[f"memory|after|{n}"] = {"rss_mb": resident_mb(url.name),
                                                 "peak_mb": resident_mb(url.name, "VmHWM")}
            elif getattr(url, "proc", None) is not None:  # the app's processes on this machine (issue 57's budget)
                results[f"memory|after|{n}"] = {"rss_mb": local_resident_mb(url.proc.pid)}
    return results


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
