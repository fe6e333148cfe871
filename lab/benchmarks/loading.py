"""Loading a GPT-2-small-sized model directory: time through lab vs bare transformers, and memory.

1. `lab.models.load(dir)` against what bare transformers needs for the same two objects:
   `AutoModelForCausalLM.from_pretrained(dir)` + `AutoTokenizer.from_pretrained(dir)` (the model
   alone is also reported; it is mmapped and loads in tens of milliseconds, so the tokenizer
   dominates both sides). Target ratio 1.1.
2. Resident memory after loading (model + tokenizer) and one 64-token forward pass, which touches
   every weight, measured in a fresh process, against the weights' bytes plus that process's
   baseline: torch and GPT-2's modeling code imported and run once on a micro model (so kernel
   code is paged in), no weights. Target ratio 1.2.
The model has random weights and GPT-2 small's real shapes (lab.testing.random_models, size "small").
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lab.benchmarks import entry, side_by_side

_RSS_SCRIPT = """
import gc, json, sys, psutil, torch
from transformers import GPT2Config, GPT2LMHeadModel
import lab.models
rss = lambda: psutil.Process().memory_info().rss
# Baseline: torch and GPT-2's modeling code imported and run once (kernels paged in), no weights.
micro = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=8, n_positions=8, vocab_size=16,
                                   bos_token_id=0, eos_token_id=0)).eval()
with torch.no_grad():
    micro(torch.arange(8)[None])
del micro
gc.collect()
baseline = rss()
loaded = lab.models.load(sys.argv[1])
with torch.no_grad():
    loaded.model(torch.arange(64)[None])  # touches every weight (they are mmapped from the file)
weights = sum(p.numel() * p.element_size() for p in loaded.model.parameters())
print(json.dumps({"baseline": baseline, "weights": weights, "after": rss()}))
"""


def _rss(model_dir: Path) -> dict:
    """Baseline, weights and after-load RSS in bytes, from a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, str(model_dir)], capture_output=True,
                         text=True, check=True, cwd=Path(__file__).resolve().parents[2])
    return json.loads(out.stdout.strip().splitlines()[-1])


def benchmarks() -> list[dict]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lab import models
    from lab.testing import random_models

    with tempfile.TemporaryDirectory() as tmp:
        d = random_models.save("gpt2", Path(tmp) / "gpt2-small", size="small")

        def bare_model():
            return AutoModelForCausalLM.from_pretrained(d)

        def bare_pair():
            return AutoModelForCausalLM.from_pretrained(d), AutoTokenizer.from_pretrained(d)

        lab_s, ref_s = side_by_side(lambda: models.load(str(d)), bare_pair, repeats=5)
        t0 = time.perf_counter()
        for _ in range(5):
            bare_model()
        model_only_s = (time.perf_counter() - t0) / 5
        mem = _rss(d)
    gib = 2**30
    budget = mem["weights"] + mem["baseline"]
    return [
        entry("loading: lab.models.load vs bare from_pretrained (model + tokenizer), GPT-2 small dir",
              lab_s, ref_s, 1.1, bare_model_only_s=round(model_only_s, 6)),
        # A memory entry: project_s / reference_s hold GiB here, not seconds (the keys are the
        # contract of every entry); project_gib / reference_gib say so explicitly.
        entry("loading: memory in GiB (not seconds): RSS after load + forward vs weights + baseline "
              "with torch", mem["after"] / gib, budget / gib, 1.2, unit="GiB",
              project_gib=round(mem["after"] / gib, 6), reference_gib=round(budget / gib, 6),
              weights_bytes=mem["weights"], baseline_bytes=mem["baseline"], rss_bytes=mem["after"]),
    ]
