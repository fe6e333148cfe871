"""A bounded load test for any OpenAI-compatible completions server (chapter 14), and the same measurement for a
plain in-process function call.

`run(url, concurrency, requests, max_tokens)` sends `requests` streamed completions, `concurrency` at a time, over
plain HTTP (the standard library: nothing to install), and times each one: time to first token (TTFT), the
time between tokens, tokens per second over the whole test, errors. Loopback addresses only unless
`allow_remote`; every request has a timeout and the whole test a deadline. `in_process` measures lab.sampling.steps
called directly, the same way, for the comparison.
"""

from __future__ import annotations

import concurrent.futures as cf
import http.client
import ipaddress
import json
import socket
import statistics
import time
import urllib.parse

from lab.errors import LabError

PROMPT = "The Debian package manager"
MAX_REQUESTS, MAX_CONCURRENCY = 1000, 64


class LoadTestError(LabError):
    """Bad input: `reason` "url" (url), "remote" (host), "bounds" (what, value, low, high)."""


def check(url: str, concurrency: int, requests: int, allow_remote: bool = False) -> urllib.parse.SplitResult:
    """The parsed URL; LoadTestError for a URL that is not http(s)://host:port, a host that is not loopback
    (unless allowed) or counts out of bounds."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LoadTestError(f"not an http(s) URL: {url!r}", "url", url=url)
    if not allow_remote and not _loopback(parts.hostname):
        raise LoadTestError(f"{parts.hostname} is not a loopback address: pass --allow-remote to load-test another "
                            "machine", "remote", host=parts.hostname)
    for what, value, high in (("concurrency", concurrency, MAX_CONCURRENCY), ("requests", requests, MAX_REQUESTS)):
        if not 1 <= value <= high:
            raise LoadTestError(f"{what} must be from 1 to {high}, not {value}", "bounds", what=what, value=value,
                                low=1, high=high)
    return parts


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def one(parts, body: dict, api_key: str | None, timeout: float) -> dict:
    """One streamed completion: {"ttft", "gaps" (s between tokens), "tokens", "error"}."""
    conn_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_class(parts.hostname, parts.port, timeout=timeout)
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
    path = parts.path.rstrip("/") + "/v1/completions"
    start, times = time.perf_counter(), []
    try:
        conn.request("POST", path, json.dumps(body), headers)
        resp = conn.getresponse()
        if resp.status != 200:
            return {"ttft": None, "gaps": [], "tokens": 0, "error": f"HTTP {resp.status}"}
        for line in resp:
            line = line.strip()
            if line == b"data: [DONE]":
                break
            if line.startswith(b"data: ") and json.loads(line[6:])["choices"][0]["finish_reason"] is None:
                times.append(time.perf_counter())
    except (OSError, http.client.HTTPException, ValueError) as e:
        return {"ttft": None, "gaps": [], "tokens": len(times), "error": type(e).__name__}
    finally:
        conn.close()
    return {"ttft": times[0] - start if times else None, "gaps": gaps(times),
            "tokens": len(times), "error": None}


def gaps(times: list[float]) -> list[float]:
    """The seconds between consecutive tokens."""
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def summary(results: list[dict], wall: float, concurrency: int) -> dict:
    """TTFT p50/p95, the mean time between tokens, tokens per second overall, errors."""
    ttft = sorted(r["ttft"] for r in results if r["ttft"] is not None)
    between = [g for r in results for g in r["gaps"]]
    tokens = sum(r["tokens"] for r in results)
    pick = lambda q: ttft[min(len(ttft) - 1, int(q * len(ttft)))] if ttft else None  # noqa: E731
    errors = sum(r["error"] is not None for r in results)
    return {"concurrency": concurrency, "requests": len(results), "errors": errors,
            "ttft_p50": pick(0.5), "ttft_p95": pick(0.95), "tbt_mean": statistics.fmean(between) if between else None,
            "tokens": tokens, "tokens_per_s": tokens / wall if wall > 0 else None, "wall_s": wall}


def run(url: str, concurrency: int, requests: int, max_tokens: int = 32, model: str | None = None,
        api_key: str | None = None, timeout: float = 120, deadline: float = 600, allow_remote: bool = False,
        seed: int = 0, progress=None) -> dict:
    """The load test: `requests` streamed completions, `concurrency` at a time; summary() of them."""
    parts = check(url, concurrency, requests, allow_remote)
    model = model or _served_model(parts, api_key, timeout)
    bodies = [{"model": model, "prompt": PROMPT, "max_tokens": max_tokens, "stream": True, "seed": seed + i,
               "temperature": 1.0, "top_k": 50, "top_p": 0.9} for i in range(requests)]
    return _pool(lambda b: one(parts, b, api_key, timeout), bodies, concurrency, deadline, progress)


def in_process(loaded, concurrency: int, requests: int, max_tokens: int = 32, seed: int = 0, deadline: float = 600,
               progress=None) -> dict:
    """The same measurement for lab.sampling.steps called directly, `concurrency` threads at a time."""
    from lab import sampling

    ids = list(loaded.tokenizer(PROMPT)["input_ids"])

    def call(s: int) -> dict:
        start, times = time.perf_counter(), []
        for _ in sampling.steps(loaded.model, ids, max_tokens, 1.0, 50, 0.9, s):
            times.append(time.perf_counter())
        return {"ttft": times[0] - start, "gaps": gaps(times), "tokens": len(times),
                "error": None}

    return _pool(call, [seed + i for i in range(requests)], concurrency, deadline, progress)


def _pool(fn, items: list, concurrency: int, deadline: float, progress) -> dict:
    start, results = time.perf_counter(), []
    with cf.ThreadPoolExecutor(concurrency) as pool:
        futures = [pool.submit(fn, item) for item in items]
        try:
            for f in cf.as_completed(futures, timeout=deadline):
                results.append(f.result())
                if progress:
                    progress(len(results) / len(items))
        except cf.TimeoutError:
            for f in futures:
                f.cancel()
            results += [{"ttft": None, "gaps": [], "tokens": 0, "error": "deadline"}] * (len(items) - len(results))
    return summary(results, time.perf_counter() - start, concurrency)


def _served_model(parts, api_key: str | None, timeout: float) -> str:
    """The first model GET /v1/models names."""
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("GET", parts.path.rstrip("/") + "/v1/models",
                     headers={"Authorization": f"Bearer {api_key}"} if api_key else {})
        return json.loads(conn.getresponse().read())["data"][0]["id"]
    finally:
        conn.close()


# The modes the serving lesson compares: (name, lab serve's flags); "function" is the in-process call.
MODES = (("function", None), ("http", ("--no-batching",)), ("http_batched", ()), ("no_cache", ("--no-cache",)))


def compare(model: str, concurrencies=(1, 2, 4, 8), requests: int = 8, max_tokens: int = 16, progress=None,
            modes=MODES) -> list[dict]:
    """Every mode at every concurrency: a server started per HTTP mode (lab.serving.server.Spawned, loopback), the same
    load test against each, and the in-process call beside them. One row per (mode, concurrency): summary()'s
    fields plus "mode"."""
    from lab.models import load
    from lab.serving.server import Spawned

    rows, total, done = [], len(modes) * len(concurrencies), 0
    for mode, flags in modes:
        server = Spawned(model, "--max-concurrent", str(max(concurrencies)), *flags) if flags is not None else None
        loaded = load(model) if server is None else None
        with server if server is not None else _nothing() as url:
            for c in concurrencies:
                r = (in_process(loaded, c, requests, max_tokens) if url is None
                     else run(url, c, requests, max_tokens))
                rows.append({"mode": mode, **r})
                done += 1
                if progress:
                    progress(done / total, mode, c)
    return rows


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None
