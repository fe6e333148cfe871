"""The logit lens (logit-lens page, chapter 05): time and peak memory against the same work written directly.

`lab.lens.lens(model, ids, top=5)` against a bare forward of the base model with
`output_hidden_states=True` plus the same projections written inline (ln_f on all but the last
state, `@ lm_head.weight.T`, softmax, top-5, the last position's target rank), layer by layer,
both under torch.inference_mode, 128 tokens, GPT-2 small's shapes with random weights
(lab.testing.random_models, size "small"). Target ratio 1.2. The lab does more than the reference
(the target's rank and probability at every position, not one), so the ratio is an upper bound on
its overhead.

Peak memory is the peak resident set size (Linux VmHWM) minus the resident size just before one
call, each measured in a fresh process after the model is built (the peak is reset through
/proc/self/clear_refs), in MB. The child runs with glibc's mmap threshold fixed at 1 MB
(MALLOC_MMAP_THRESHOLD_): every big array is then mapped and unmapped on its own, so the peak counts
live memory rather than how the allocator happened to reuse its heap. Measured for the lab, for the reference,
and for the naive all-layers-at-once version (every layer's (T, V) probabilities stacked: 13 x 128 x 50,257 floats),
which is what keeping only the top-k layer by layer avoids.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from lab.benchmarks import entry, side_by_side

ROOT = Path(__file__).resolve().parents[2]
TOKENS, TOP = 128, 5


def _setup():
    """(model, ids): GPT-2 small's shapes with random weights, 128 random token ids (fixed seed)."""
    import torch

    from lab.testing import random_models

    model, _ = random_models.build("gpt2", "small")
    model.requires_grad_(False)
    ids = torch.randint(0, model.config.vocab_size, (TOKENS,), generator=torch.Generator().manual_seed(0)).tolist()
    return model, ids


def _reference(model, ids):
    """The lens written directly: one forward, then ln_f, unembedding, softmax and top-k per layer."""
    import torch

    with torch.inference_mode():
        hs = model.transformer(torch.tensor([ids]), output_hidden_states=True).hidden_states
        ln_f, w = model.transformer.ln_f, model.lm_head.weight  # (V, C)
        unembed = torch.nn.functional.linear  # x @ w.T without copying w.T (a 154 MB transpose)
        target = unembed(hs[-1][0, -1:], w)[0].argmax()  # the model's own last prediction ((1, C): no copy of w)
        out = []
        for i, h in enumerate(hs):
            probs = torch.softmax(unembed(h[0] if i == len(hs) - 1 else ln_f(h[0]), w), -1)  # (T, V)
            top = probs.topk(TOP, -1)
            out.append((top.values.numpy(), top.indices.numpy(), int((probs[-1] > probs[-1, target]).sum()) + 1))
        return out


def _stacked(model, ids):
    """The naive lens: every layer's (T, V) probabilities at once, (L+1, T, V), then top-k."""
    import torch

    with torch.inference_mode():
        hs = model.transformer(torch.tensor([ids]), output_hidden_states=True).hidden_states
        ln_f, w = model.transformer.ln_f, model.lm_head.weight
        states = torch.stack([ln_f(h[0]) for h in hs[:-1]] + [hs[-1][0]])  # (L+1, T, C)
        probs = torch.softmax(torch.nn.functional.linear(states, w), -1)  # (L+1, T, V)
        return probs.topk(TOP, -1)


def _status_kb(field: str) -> int:
    """A field of /proc/self/status in kB (VmRSS, VmHWM)."""
    with open("/proc/self/status") as f:
        return int(re.search(rf"{field}:\s+(\d+)", f.read()).group(1))


def peak_mb(which: str) -> float:
    """Peak RSS growth (MB) over one call of `which` ("lab", "reference", "stacked"), in this process."""
    from lab import lens

    model, ids = _setup()
    run = {"lab": lambda: lens.lens(model, ids, top=TOP), "reference": lambda: _reference(model, ids),
           "stacked": lambda: _stacked(model, ids)}[which]
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current RSS
    before = _status_kb("VmRSS")
    run()
    return (_status_kb("VmHWM") - before) / 1024


def _peak_in_child(which: str) -> float | None:
    """peak_mb(which) in a fresh Python process; None when it cannot be measured (not Linux, ...)."""
    code = f"import json; from lab.benchmarks.lens import peak_mb; print(json.dumps(peak_mb({which!r})))"
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(2**20)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return None
    return round(json.loads(done.stdout.strip().splitlines()[-1]), 1)


def benchmarks() -> list[dict]:
    """The lens vs the direct code, 128 tokens, GPT-2 small's shapes; peak memory of each in a fresh process."""
    from lab import lens

    model, ids = _setup()
    lab_s, ref_s = side_by_side(lambda: lens.lens(model, ids, top=TOP), lambda: _reference(model, ids), repeats=5)
    memory = {f"{which}_peak_mb": _peak_in_child(which) for which in ("lab", "reference", "stacked")}
    return [entry("lens: lab.lens.lens vs bare forward with output_hidden_states + ln_f/unembedding/softmax/top-5 "
                  "written directly, GPT-2 small shapes, 128 tokens", lab_s, ref_s, 1.2,
                  memory="peak RSS (VmHWM) minus RSS before one call, fresh process each, mmap threshold 1 MB",
                  **memory)]
