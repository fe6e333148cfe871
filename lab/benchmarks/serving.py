"""Serving (serving page, chapter 14): what HTTP costs, and what batching buys, on course-gpt2.

1. Concurrency 1: seconds per streamed token through `python -m lab serve` (a subprocess on loopback, no
   batching) against lab.sampling.steps called in-process, 16 requests of 32 tokens each. Target 1.2.
2. Concurrency 8: seconds per token over the whole test with static batching against the same server without
   batching (16 requests of 32 tokens): throughput ×2 is a ratio of 0.5. Target 0.5.
3. Concurrency 8, mixed lengths (32, 4, 16, 8 tokens, cycled; 16 requests): seconds per token with continuous
   batching against static batching. Target 1 / 1.3 = 0.77 (tokens/s x1.3).
4. Poisson arrivals near saturation (0.9 x the static server's requests/s at concurrency 8, at most 16 in
   flight): TTFT p50 with continuous batching against static. Target 0.5.
All measured with lab.serving.loadtest (the same client the CLI and the page use), one run each, servers started
fresh. The first request of each test warms its server up and is not counted apart.
"""

from __future__ import annotations

from lab.benchmarks import entry

MODEL, REQUESTS, TOKENS = "course-gpt2", 16, 32
MIXED, MIXED_REQUESTS = [32, 4, 16, 8], 16


def _per_token(r: dict) -> float:
    return r["wall_s"] / r["tokens"]


def benchmarks() -> list[dict]:
    from lab.models import load
    from lab.serving import loadtest
    from lab.serving.server import Spawned

    loaded = load(MODEL)
    loadtest.in_process(loaded, 1, 2, TOKENS)  # warm-up
    with Spawned(MODEL, "--no-batching") as url:
        loadtest.run(url, 1, 2, TOKENS)  # warm-up
        http1 = loadtest.run(url, 1, REQUESTS, TOKENS)
        plain8 = loadtest.run(url, 8, REQUESTS, TOKENS)
    call1 = loadtest.in_process(loaded, 1, REQUESTS, TOKENS)
    with Spawned(MODEL, "--max-concurrent", "8") as url:
        loadtest.run(url, 8, 8, TOKENS)  # warm-up
        batched8 = loadtest.run(url, 8, REQUESTS, TOKENS)
    return [*_first(http1, call1, batched8, plain8), *continuous_vs_static()]


def continuous_vs_static() -> list[dict]:
    """Entries 3 and 4: the same mixed load on a static and a continuous server (max 16 running each)."""
    from lab.serving import loadtest
    from lab.serving.server import Spawned

    out = {}
    for name in ("static", "continuous"):
        with Spawned(MODEL, "--max-concurrent", "16", "--batching", name) as url:
            loadtest.run(url, 8, 8, MIXED)  # warm-up
            out[name] = loadtest.run(url, 8, MIXED_REQUESTS, MIXED)
            if name == "static":
                rate = 0.9 * MIXED_REQUESTS / out["static"]["wall_s"]
            out[f"{name}_rate"] = loadtest.run(url, 16, MIXED_REQUESTS, MIXED, rate=rate)
    s, c = out["static"], out["continuous"]
    return [entry("serving: seconds per token at concurrency 8, mixed lengths (32/4/16/8), continuous vs static "
                  "batching (tokens/s x1.3 = 0.77), course-gpt2, 16 requests", _per_token(c), _per_token(s), 0.77,
                  throughput_continuous=round(c["tokens_per_s"], 1), throughput_static=round(s["tokens_per_s"], 1)),
            entry(f"serving: TTFT p50 under Poisson arrivals near saturation ({rate:.2f} requests/s), continuous vs "
                  "static batching, course-gpt2, mixed lengths, 16 requests", out["continuous_rate"]["ttft_p50_s"],
                  out["static_rate"]["ttft_p50_s"], 0.5,
                  ttft_p50_ms_continuous=round(1000 * out["continuous_rate"]["ttft_p50_s"], 1),
                  ttft_p50_ms_static=round(1000 * out["static_rate"]["ttft_p50_s"], 1))]


def _first(http1, call1, batched8, plain8) -> list[dict]:
    return [entry("serving: seconds per streamed token over HTTP (lab serve, concurrency 1) vs the in-process "
                  "function call, course-gpt2, 16 x 32 tokens", _per_token(http1), _per_token(call1), 1.2),
            entry("serving: seconds per token at concurrency 8, static batching vs no batching (throughput x2 = "
                  "0.5), course-gpt2, 16 x 32 tokens", _per_token(batched8), _per_token(plain8), 0.5,
                  throughput_batched=round(batched8["tokens_per_s"], 1),
                  throughput_unbatched=round(plain8["tokens_per_s"], 1))]
