"""Benchmarks measured side by side: project time / reference time in one run, never a timed test.

Each module listed in MODULES (each page's `bench` in lab/pages.py, then its OTHER_BENCH) defines
`benchmarks() -> list[dict]`, each dict made by `entry()`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from lab import pages as manifest


def __getattr__(name: str):
    """MODULES: the benchmark modules, in the order `python -m lab bench` runs them, read from the page manifest
    (lab/pages.py: each page's, in the navigation's order, then those of no one page)."""
    if name == "MODULES":
        return manifest.bench_modules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def side_by_side(project: Callable[[], object], reference: Callable[[], object],
                 repeats: int = 5, warmup: int = 1) -> tuple[float, float]:
    """Median seconds of project() and reference(), alternating runs so both meet the same noise."""
    for _ in range(warmup):
        project()
        reference()
    p, r = [], []
    for i in range(repeats):
        order = ((project, p), (reference, r)) if i % 2 == 0 else ((reference, r), (project, p))
        for fn, times in order:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(p), statistics.median(r)


def random_gpt2_small(tokens: int, seed: int = 0):
    """(Loaded, ids): a random-weight GPT-2 with GPT-2 small's shapes, wrapped as lab.models.Loaded, and `tokens`
    random ids (seeded): the common subject of the model benchmarks."""
    import torch

    from lab.models import Loaded
    from lab.testing import random_models

    model, tok = random_models.build("gpt2", "small")
    model.requires_grad_(False)
    c = model.config
    loaded = Loaded("random-gpt2-small", model, tok, "decoder", c.n_positions, c.n_layer, c.n_head, c.n_embd)
    ids = torch.randint(0, c.vocab_size, (tokens,), generator=torch.Generator().manual_seed(seed)).tolist()
    return loaded, ids


def entry(name: str, project_s: float, reference_s: float, target: float, **extra) -> dict:
    """One benchmark result: ratio = project / reference, ok when ratio <= target."""
    ratio = project_s / reference_s if reference_s > 0 else float("inf")
    return {"name": name, "project_s": round(project_s, 6), "reference_s": round(reference_s, 6),
            "ratio": round(ratio, 4), "target": target, "ok": ratio <= target, **extra}
