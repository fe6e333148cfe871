"""A bounded load test for any OpenAI-compatible completions server (chapter 14), and the same measurement for a
plain in-process function call.

`run(url, concurrency, requests, max_tokens)` sends `requests` streamed completions, `concurrency` at a time (or,
with `rate`, arriving as a Poisson process of `rate` requests per second, at most `concurrency` in flight), over
plain HTTP (the standard library: nothing to install), and times each one the way vLLM's `bench serve` reports it:
- TTFT, time to first token: from sending the request to its first token;
- ITL, inter-token latency: every gap between two consecutive tokens, all requests' gaps pooled;
- TPOT, time per output token: per request, (end - first token) / (tokens - 1), then across requests;
- E2EL, end-to-end latency: from sending to the last token;
each as p50 / p90 / p99 (and the first keys kept: TTFT p50/p95, the mean gap `tbt_mean`), output tokens per second
over the whole test, and goodput: the share of requests that met every SLO (default TTFT <= 1 s, ITL <= 100 ms:
each of the request's gaps). Loopback addresses only unless `allow_remote`; every request has a timeout and the
whole test a deadline. `in_process` measures lab.sampling.steps called directly, the same way, for the comparison.
"""

from __future__ import annotations

import concurrent.futures as cf
import http.client
import ipaddress
import json
import random
import socket
import statistics
import threading
import time
import urllib.parse

from lab.errors import LabError

PROMPT = "The Debian package manager"
MAX_REQUESTS, MAX_CONCURRENCY = 1000, 64
SLO = {"ttft": 1.0, "itl": 0.1}  # seconds: the goodput's default service-level objectives
SLO_KEYS = ("ttft", "itl", "tpot", "e2el")


class LoadTestError(LabError):
    """Bad input: `reason` "url" (url), "remote" (host), "bounds" (what, value, low, high), "key" (status),
    "server" (detail)."""


def check(url: str, concurrency: int, requests: int, allow_remote: bool = False) -> urllib.parse.SplitResult:
    """The parsed URL; LoadTestError for a URL that is not http(s)://host:port, a host that is not loopback
    (unless allowed) or counts out of bounds."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LoadTestError(f"not an http(s) URL: {url!r}", "url", url=url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 0 < port < 65536:
        raise LoadTestError(f"not a port from 1 to 65535 in {url!r}", "url", url=url)
    if parts.path.rstrip("/").endswith("/v1"):
        raise LoadTestError(f"give the server's base URL without /v1 ({url[:url.rindex('/v1')]}): the load test adds "
                            "/v1/completions itself", "url", url=url)
    if not allow_remote and not _loopback(parts.hostname):
        raise LoadTestError(f"{parts.hostname} is not a loopback address: pass --allow-remote to load-test another "
                            "machine", "remote", host=parts.hostname)
    for what, value, high in (("concurrency", concurrency, MAX_CONCURRENCY), ("requests", requests, MAX_REQUESTS)):
        if not 1 <= value <= high:
            raise LoadTestError(f"{what} must be from 1 to {high}, not {value}", "bounds", what=what, value=value,
                                low=1, high=high)
    return parts


def _loopback(host: str) -> bool:
    """True when every address `host` names is a loopback one (an IPv6 literal such as ::1 included)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        return all(ipaddress.ip_address(info[4][0]).is_loopback for info in socket.getaddrinfo(host, None))
    except (OSError, ValueError):
        return False


def check_limits(timeout: float, deadline: float, rate: float | None = None) -> None:
    """LoadTestError unless the request timeout, the deadline and the rate are positive (and finite)."""
    for what, value in (("timeout", timeout), ("deadline", deadline), ("rate", rate)):
        if value is not None and not 0 < value < float("inf"):
            unit = "requests per second" if what == "rate" else "seconds"
            raise LoadTestError(f"--{what} must be a positive number of {unit}, not {value}", "bounds", what=what,
                                value=value, low=0, high=None)


def parse_slo(items: list[str] | None) -> dict[str, float]:
    """{"ttft": s, ...} from ["ttft:1000", "itl:100"] (milliseconds, as vLLM's --goodput takes them); SLO when None."""
    if not items:
        return dict(SLO)
    out = {}
    for item in items:
        key, _, ms = item.partition(":")
        try:
            value = float(ms)
        except ValueError:
            value = -1.0
        if key not in SLO_KEYS or not value > 0:
            raise LoadTestError(f"--goodput takes KEY:MS with KEY one of {', '.join(SLO_KEYS)} and MS > 0, not "
                                f"{item!r}", "bounds", what="goodput", value=item, low=0, high=None)
        out[key] = value / 1000
    return out


def one(parts, body: dict, api_key: str | None, timeout: float) -> dict:
    """One streamed completion: {"ttft", "gaps" (s between tokens), "tokens", "e2el", "error"}."""
    conn_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_class(parts.hostname, parts.port, timeout=timeout)
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
    path = parts.path.rstrip("/") + "/v1/completions"
    start, times = time.perf_counter(), []
    try:
        conn.request("POST", path, json.dumps(body), headers)
        resp = conn.getresponse()
        if resp.status != 200:
            return {"ttft": None, "gaps": [], "tokens": 0, "e2el": None, "error": f"HTTP {resp.status}"}
        for line in resp:
            line = line.strip()
            if line == b"data: [DONE]":
                break
            if line.startswith(b"data: "):
                chunk = json.loads(line[6:])
                if "error" in chunk:
                    return {"ttft": None, "gaps": [], "tokens": len(times), "e2el": None, "error": "server error"}
                if chunk["choices"] and chunk["choices"][0]["finish_reason"] is None:
                    times.append(time.perf_counter())
    except (OSError, http.client.HTTPException, ValueError) as e:
        return {"ttft": None, "gaps": [], "tokens": len(times), "e2el": None, "error": type(e).__name__}
    finally:
        conn.close()
    return {"ttft": times[0] - start if times else None, "gaps": gaps(times), "tokens": len(times),
            "e2el": times[-1] - start if times else None, "error": None}


def gaps(times: list[float]) -> list[float]:
    """The seconds between consecutive tokens."""
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def percentile(values: list[float], q: float) -> float | None:
    """The q-quantile (0..1) of values, linearly interpolated as numpy's default; None when empty."""
    if not values:
        return None
    v = sorted(values)
    at = q * (len(v) - 1)
    low = int(at)
    return v[low] + (v[min(low + 1, len(v) - 1)] - v[low]) * (at - low)


def tpot(r: dict) -> float | None:
    """Time per output token after the first, for one request."""
    return (r["e2el"] - r["ttft"]) / (r["tokens"] - 1) if r.get("e2el") is not None and r["tokens"] > 1 else None


def meets(r: dict, slo: dict[str, float]) -> bool:
    """Whether one request met every SLO (ITL: each of its gaps)."""
    if r["error"] is not None or r["ttft"] is None:
        return False
    have = {"ttft": r["ttft"], "itl": max(r["gaps"], default=0.0), "tpot": tpot(r) or 0.0, "e2el": r.get("e2el")}
    return all(have[k] is not None and have[k] <= v for k, v in slo.items())


def summary(results: list[dict], wall: float, concurrency: int, slo: dict[str, float] | None = None,
            rate: float | None = None) -> dict:
    """TTFT p50/p95, the mean time between tokens, tokens per second overall, errors (the first keys); TTFT, ITL,
    TPOT and E2EL p50/p90/p99, output tokens/s and goodput (the share of requests meeting `slo`)."""
    slo = SLO if slo is None else slo
    ttft = sorted(r["ttft"] for r in results if r["ttft"] is not None)
    between = [g for r in results for g in r["gaps"]]
    tokens = sum(r["tokens"] for r in results)
    pick = lambda q: ttft[min(len(ttft) - 1, int(q * len(ttft)))] if ttft else None  # noqa: E731
    errors = sum(r["error"] is not None for r in results)
    out = {"concurrency": concurrency, "requests": len(results), "errors": errors,
           "ttft_p50": pick(0.5), "ttft_p95": pick(0.95), "tbt_mean": statistics.fmean(between) if between else None,
           "tokens": tokens, "tokens_per_s": tokens / wall if wall > 0 else None, "wall_s": wall}
    series = {"ttft": ttft, "itl": between, "tpot": [x for r in results if (x := tpot(r)) is not None],
              "e2el": [r["e2el"] for r in results if r.get("e2el") is not None]}
    for name, values in series.items():
        for q in (50, 90, 99):
            out[f"{name}_p{q}_s"] = percentile(values, q / 100)
    good = sum(meets(r, slo) for r in results)
    out.update(output_tokens_per_s=out["tokens_per_s"], goodput=good / len(results) if results else None,
               goodput_requests_per_s=good / wall if wall > 0 else None, slo_s=dict(slo), rate=rate)
    return out


def run(url: str, concurrency: int, requests: int, max_tokens: int | list[int] = 32, model: str | None = None,
        api_key: str | None = None, timeout: float = 120, deadline: float = 600, allow_remote: bool = False,
        seed: int = 0, progress=None, rate: float | None = None, slo: dict[str, float] | None = None,
        prompts: list[str] | None = None) -> dict:
    """The load test: `requests` streamed completions, `concurrency` at a time (or Poisson arrivals at `rate` per
    second, at most `concurrency` in flight); summary() of them. `prompts` and a list of `max_tokens` are cycled over
the requests."""
    parts = check(url, concurrency, requests, allow_remote)
    check_limits(timeout, deadline, rate)
    model = model or _served_model(parts, api_key, timeout)
    texts, sizes = prompts or [PROMPT], max_tokens if isinstance(max_tokens, list) else [max_tokens]
    bodies = [{"model": model, "prompt": texts[i % len(texts)], "max_tokens": sizes[i % len(sizes)], "stream": True,
               "seed": seed + i, "temperature": 1.0, "top_k": 50, "top_p": 0.9, "ignore_eos": True}
              for i in range(requests)]
    fn = lambda b: one(parts, b, api_key, timeout)  # noqa: E731
    return _pool(fn, bodies, concurrency, deadline, progress, slo=slo, rate=rate, seed=seed)


def in_process(loaded, concurrency: int, requests: int, max_tokens: int | list[int] = 32, seed: int = 0,
               deadline: float = 600, progress=None) -> dict:
    """The same measurement for lab.sampling.steps called directly, `concurrency` threads at a time."""
    from lab import sampling

    ids = list(loaded.tokenizer(PROMPT)["input_ids"])
    sizes = max_tokens if isinstance(max_tokens, list) else [max_tokens]

    def call(s: int) -> dict:
        start, times = time.perf_counter(), []
        for _ in sampling.steps(loaded.model, ids, sizes[(s - seed) % len(sizes)], 1.0, 50, 0.9, s,
                                stop_at_eos=False):
            times.append(time.perf_counter())
        return {"ttft": times[0] - start, "gaps": gaps(times), "tokens": len(times),
                "e2el": times[-1] - start, "error": None}

    return _pool(call, [seed + i for i in range(requests)], concurrency, deadline, progress)


def _pool(fn, items: list, concurrency: int, deadline: float, progress, slo=None, rate=None, seed: int = 0) -> dict:
    """Run fn over items, `concurrency` at a time; with `rate`, item i is not sent before its Poisson arrival
    time (exponential gaps of mean 1/rate, seeded)."""
    rng, at, arrivals = random.Random(seed), 0.0, []
    for _ in items:
        arrivals.append(at)
        at += rng.expovariate(rate) if rate else 0.0
    start, results, lock = time.perf_counter(), [], threading.Lock()

    def timed(k: int, item):
        wait = start + arrivals[k] - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        return fn(item)

    with cf.ThreadPoolExecutor(concurrency) as pool:
        futures = [pool.submit(timed, k, item) for k, item in enumerate(items)]
        try:
            for f in cf.as_completed(futures, timeout=deadline):
                with lock:
                    results.append(f.result())
                if progress:
                    progress(len(results) / len(items))
        except cf.TimeoutError:
            for f in futures:
                f.cancel()
            results += [{"ttft": None, "gaps": [], "tokens": 0, "e2el": None, "error": "deadline"}] * (
                len(items) - len(results))
    return summary(results, time.perf_counter() - start, concurrency, slo, rate)


def _served_model(parts, api_key: str | None, timeout: float) -> str:
    """The first model GET /v1/models names; LoadTestError when the server refuses the key or is not one."""
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("GET", parts.path.rstrip("/") + "/v1/models",
                     headers={"Authorization": f"Bearer {api_key}"} if api_key else {})
        resp = conn.getresponse()
        if resp.status == 401:
            hint = "check --api-key" if api_key else "pass its key with --api-key"
            raise LoadTestError(f"the server refused the API key (HTTP 401): {hint}", "key", status=401)
        try:
            return json.loads(resp.read())["data"][0]["id"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LoadTestError(f"{parts.geturl()} did not answer GET /v1/models as an OpenAI-compatible server "
                                f"(HTTP {resp.status})", "server", detail=resp.status) from None
    finally:
        conn.close()


# The modes the serving lesson compares: (name, lab serve's flags); "function" is the in-process call.
MODES = (("function", None), ("http", ("--no-batching",)), ("http_batched", ()),
         ("http_continuous", ("--batching", "continuous")), ("no_cache", ("--no-cache",)))
SPREAD = ("ttft_p50", "tbt_mean", "tokens_per_s")  # the measures whose min-max over repeats the page draws


def lengths(max_tokens: int) -> list[int]:
    """Mixed output lengths for the page's comparison (max_tokens, a quarter, half, three quarters): continuous
    batching differs from static batching only when requests end at different times."""
    return [max(1, max_tokens * k // 4) for k in (4, 1, 2, 3)]


def compare(model: str, concurrencies=(1, 8), requests: int = 8, max_tokens: int = 16, progress=None,
            modes=MODES, repeats: int = 2, mixed: bool = True) -> list[dict]:
    """Every mode at every concurrency, measured the way a class can trust: every server started first
    (lab.serving.server.Spawned, loopback) and warmed up with one request, then the modes interleaved (each repeat
    and concurrency runs every mode in turn, the order rotated between repeats), `repeats` times. One row per
    (mode, concurrency): the median repeat's summary() (by tokens/s) plus "mode", "repeats" and, for each of
    SPREAD, its min and max over the repeats (`<measure>_lo`, `<measure>_hi`)."""
    import contextlib

    from lab.models import load
    from lab.serving.server import Spawned

    size = max(concurrencies)
    runs: dict[tuple, list[dict]] = {}
    with contextlib.ExitStack() as stack:
        urls = {mode: None if flags is None else stack.enter_context(Spawned(model, "--max-concurrent", str(size),
                                                                              *flags)) for mode, flags in modes}
        loaded = load(model) if any(u is None for u in urls.values()) else None
        measure = lambda mode, c, n, k: (in_process(loaded, c, n, k) if urls[mode] is None  # noqa: E731
                                         else run(urls[mode], c, n, k))
        for mode, _ in modes:  # warm-up: first requests pay for lazy set-up, not for the mode
            measure(mode, 1, 1, 2)
        total, done = repeats * len(concurrencies) * len(modes), 0
        for rep in range(repeats):
            for c in concurrencies:
                for k in range(len(modes)):
                    mode = modes[(k + rep) % len(modes)][0]
                    n = lengths(max_tokens) if mixed else max_tokens
                    runs.setdefault((mode, c), []).append(measure(mode, c, requests, n))
                    done += 1
                    if progress:
                        progress(done / total, mode, c)
    return [spread(mode, c, runs[(mode, c)]) for mode, _ in modes for c in concurrencies]


def spread(mode: str, c: int, results: list[dict]) -> dict:
    """One row of compare(): the median repeat (by tokens/s), with each SPREAD measure's min and max."""
    ordered = sorted(results, key=lambda r: r["tokens_per_s"] or 0)
    row = {"mode": mode, **ordered[len(ordered) // 2], "repeats": len(results)}
    for m in SPREAD:
        values = [r[m] for r in results if r[m] is not None]
        row[f"{m}_lo"], row[f"{m}_hi"] = (min(values), max(values)) if values else (None, None)
    return row


def too_wide(rows: list[dict], measure: str = "tokens_per_s") -> list[int]:
    """The concurrencies at which two modes' min-max ranges of `measure` overlap: there the repeats cannot tell
    those modes apart, and the page says so."""
    out = []
    for c in sorted({r["concurrency"] for r in rows}):
        spans = sorted((r[f"{measure}_lo"], r[f"{measure}_hi"]) for r in rows if r["concurrency"] == c
                       and r.get(f"{measure}_lo") is not None)
        if any(b[0] <= a[1] for a, b in zip(spans, spans[1:], strict=False)):
            out.append(c)
    return out


def estimate_s(concurrencies, requests: int, max_tokens: int, repeats: int = 2, modes=MODES) -> float:
    """A rough duration for compare() on the course model here (2 busy cores): 25 ms per token decoded alone,
    8 ms per token in a batch, 20 s to start the servers."""
    tokens = requests * sum(lengths(max_tokens)) / 4
    per_c = sum(tokens * (0.025 if mode in ("function", "http") or c == 1 else 0.008)
                for mode, _ in modes for c in concurrencies)
    return 20 + repeats * per_c
