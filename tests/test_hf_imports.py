"""transformers' lazy imports under one lock (lab/hf_imports.py): the hosted container's fossils page once failed with
"ImportError: cannot import name 'GPT2Config' from 'transformers'" while the warm-up thread loaded the course models.

The oracle is transformers itself in fresh interpreters: twelve threads released at once, each through a different
lab function that imports from transformers or loads through it. Without the lock about half of such starts fail
(measured: 2 of 4 fresh interpreters, 4-5 of 12 threads each, importing two top-level names per thread)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lab.testing.browser import ROOT

# Where threads run (the app's script runs and warm-up, the server's engine) no module may import from transformers
# but under hf_imports.LOCK. Left out: what only a single-threaded command runs (training, benchmarks, the tests'
# random models) and the CLI's logging switch, read before anything else starts.
SCANNED = ("lab", "ui", "app_pages", "viz")
OUTSIDE = ("lab/hf_imports.py", "lab/benchmarks/", "lab/course/", "lab/testing/", "lab/cli/args.py")

STARTS = r"""
import json, sys, threading
from lab import encodings, fossils, hf_imports, models, recipes, trace
calls = [lambda: fossils.config("gpt2"), recipes.architecture, recipes.layer_norm_lines, trace.pass_order,
         encodings.hf_gpt2_tokenizer, encodings.hf_roberta_tokenizer, lambda: models.load("course-gpt2"),
         lambda: models.load("course-roberta"), lambda: fossils.config("openai-gpt"),
         lambda: fossils.config("roberta-base"),
         lambda: hf_imports.names("GPT2LMHeadModel", "RobertaForMaskedLM"), lambda: hf_imports.name("DynamicCache")]
errors, gate = [], threading.Barrier(len(calls))
def run(call):
    gate.wait()
    try:
        call()
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}"[:200])
threads = [threading.Thread(target=run, args=(c,)) for c in calls]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps(errors))
"""


def _unguarded(path: Path) -> list[str]:
    """`path:line` of each import from transformers not inside `with hf_imports.LOCK:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and any(ast.unparse(i.context_expr) == "hf_imports.LOCK" for i in node.items):
            guarded |= {id(n) for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if any(n == "transformers" or n.startswith("transformers.") for n in names) and id(node) not in guarded:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_import_from_transformers_outside_the_lock_where_threads_run():
    files = [p for d in SCANNED for p in (ROOT / d).rglob("*.py")] + [ROOT / "app.py"]
    files = [p for p in files if not str(p.relative_to(ROOT)).startswith(OUTSIDE)]
    assert len(files) > 100
    assert [hit for p in files for hit in _unguarded(p)] == []


def test_the_scan_finds_an_unguarded_import(tmp_path):
    bad = ROOT / "lab" / "_scan_probe.py"  # inside ROOT, as the scanned files are
    bad.write_text("from lab import hf_imports\n\ndef f():\n    with hf_imports.LOCK:\n        import transformers\n"
                   "    from transformers import GPT2Config\n    import transformers.models.gpt2 as g\n",
                   encoding="utf-8")
    try:
        assert _unguarded(bad) == ["lab/_scan_probe.py:6", "lab/_scan_probe.py:7"]
    finally:
        bad.unlink()


@pytest.mark.parametrize("start", range(3))
def test_twelve_threads_through_transformers_first_imports_in_a_fresh_interpreter(start):
    out = subprocess.run([sys.executable, "-c", STARTS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
