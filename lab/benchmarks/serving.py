"""Serving (serving page, chapter 14): what HTTP costs, and what batching buys, on course-gpt2.

1. Concurrency 1: seconds per streamed token through `python -m lab serve` (a subprocess on loopback, no
   batching) against lab.sampling.steps called in-process, 16 requests of 32 tokens each. Target 1.2.
2. Concurrency 8: seconds per token over the whole test with static batching against the same server without
   batching (16 requests of 32 tokens): throughput ×2 is a ratio of 0.5. Target 0.5.
Both measured with lab.serving.loadtest (the same client the CLI and the page use), one run each, servers started
fresh. The first request of each test warms its server up and is not counted apart.
"""

from __future__ import annotations

from lab.benchmarks import entry

MODEL, REQUESTS, TOKENS = "course-gpt2", 16, 32


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
    return [entry("serving: seconds per streamed token over HTTP (lab serve, concurrency 1) vs the in-process "
                  "function call, course-gpt2, 16 x 32 tokens", _per_token(http1), _per_token(call1), 1.2),
            entry("serving: seconds per token at concurrency 8, static batching vs no batching (throughput x2 = "
                  "0.5), course-gpt2, 16 x 32 tokens", _per_token(batched8), _per_token(plain8), 0.5,
                  throughput_batched=round(batched8["tokens_per_s"], 1),
                  throughput_unbatched=round(plain8["tokens_per_s"], 1))]
