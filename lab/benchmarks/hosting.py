"""Memory of the hosted demo: the peak resident memory of a hosted-mode run that opens every page.

One fresh interpreter runs the whole app under Streamlit's AppTest with LAB_HOSTED=1 (the caps and
the 1,700 MB model budget of lab.models.hosting), offline, and opens each page of app_pages/ in turn with
its default inputs, as a reader clicking through the sidebar would: the model pages run their
forward passes, the sampling page generates, the perplexity page evaluates the three course
decoders. The course model, course-gpt2, is pointed at a random model with GPT-2 small's real
shapes (124M parameters, 12 layers x 12 heads x 768, 1024 positions; lab.testing.random_models), so
every model page works at the size of the hosted demo's largest offered model.
The peak is the process's high-water mark (VmHWM), so it is this run's alone. Target: 2.0 GB
(decimal), which leaves 0.7 GB under Streamlit Community Cloud's 2.7 GB ceiling for a few more
sessions' cached results. project_s / reference_s hold GB here, not seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from lab.benchmarks import entry

ROOT = Path(__file__).resolve().parents[2]
TARGET_BYTES = 2.0e9
CEILING_BYTES = 2.7e9  # Streamlit Community Cloud's memory limit per app

RUN_SCRIPT = ROOT / "bench_pages" / "hosted_memory.py"  # the run itself (Streamlit lives outside lab/)


def pages() -> list[str]:
    """Every page file, home first (the rest in name order)."""
    found = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "app_pages").glob("*.py"))
    return sorted(found, key=lambda p: not p.endswith("/home.py"))


def hosted_run(model_dir: Path, params: int) -> dict:
    """Peak and per-page RSS in bytes of a fresh hosted-mode AppTest run over every page."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAB_")}
    with tempfile.TemporaryDirectory() as hf:
        env.update(LAB_HOSTED="1", HF_HUB_OFFLINE="1", HF_HOME=hf, HF_HUB_DISABLE_PROGRESS_BARS="1")
        out = subprocess.run([sys.executable, str(RUN_SCRIPT), str(model_dir), str(params),
                              json.dumps(pages())], capture_output=True, text=True, cwd=ROOT, env=env,
                             timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"the hosted run failed: {out.stderr.strip().splitlines()[-1:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["problems"]:
        raise RuntimeError(f"pages raised in the hosted run: {result['problems']}")
    return result


def benchmarks() -> list[dict]:
    from lab.models import registry
    from lab.testing import random_models

    with tempfile.TemporaryDirectory() as tmp:
        d = random_models.save("gpt2", Path(tmp) / "gpt2-small", size="small")
        params = registry.safetensors_params(d / "model.safetensors")[0]
        run = hosted_run(d, params)
    peak = run["peak"]
    return [entry("hosting: peak resident memory in GB (not seconds) of a hosted-mode run over every page, "
                  "GPT-2 small shapes, vs the 2.0 GB target", peak / 1e9, TARGET_BYTES / 1e9, 1.0, unit="GB",
                  peak_bytes=peak, peak_gib=round(peak / 2**30, 4), ceiling_bytes=int(CEILING_BYTES),
                  ceiling_ratio=round(peak / CEILING_BYTES, 4), rss_after_page_bytes=run["rss"],
                  models_cached=run["models"])]
