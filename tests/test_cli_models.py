"""`python -m lab models --json` and `python -m lab prefetch`, run as a reader would, offline."""

import json
import os
import subprocess
import sys
from pathlib import Path

from lab.models import registry
from tests.test_models import fake_hub_cache

ROOT = Path(__file__).resolve().parents[1]
KEYS = {"name", "hub_id", "kind", "params", "download_bytes", "context", "cached"}


def lab(*args, hf_home: Path, offline: bool = True) -> subprocess.CompletedProcess:
    """Run `python -m lab ...` with a private HF cache (offline unless told otherwise)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(HF_HOME=str(hf_home), HF_HUB_DISABLE_TELEMETRY="1")
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([sys.executable, "-m", "lab", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)


def test_models_json_shape(tmp_path):
    out = lab("models", "--json", hf_home=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["name"] for r in rows] == list(registry.REGISTRY)
    for r in rows:
        assert set(r) == KEYS
        assert r["kind"] in ("decoder", "encoder") and isinstance(r["cached"], bool)
        assert isinstance(r["params"], int) and isinstance(r["download_bytes"], int)
        assert isinstance(r["context"], int) and r["context"] > 0
    by = {r["name"]: r for r in rows}
    assert by["gpt2"]["hub_id"] == "openai-community/gpt2" and by["gpt2"]["params"] == 124_439_808
    assert by["gpt2"]["cached"] is False and by["course-gpt2"]["hub_id"] is None
    assert by["course-gpt2"]["cached"] == (ROOT / "models" / "course-gpt2" / "config.json").is_file()


def test_models_json_sees_the_local_cache(tmp_path, tiny_model_dirs):
    fake_hub_cache(tmp_path / "hub", "FacebookAI/roberta-base", tiny_model_dirs["roberta"])
    rows = {r["name"]: r for r in json.loads(lab("models", "--json", hf_home=tmp_path).stdout)}
    assert rows["roberta-base"]["cached"] is True and rows["gpt2"]["cached"] is False


def test_models_table_and_no_torch(tmp_path):
    code = ("import sys; from lab.cli import main; rc = main(['models']); "
            "sys.exit(rc if 'torch' not in sys.modules else 99)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "HF_HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert "openai-community/gpt2-xl" in out.stdout and "6.43 GB" in out.stdout


def test_prefetch_offline_exits_2_with_one_line_per_model(tmp_path):
    out = lab("prefetch", "gpt2", "roberta-base", hf_home=tmp_path)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2
    assert "gpt2" in lines[0] and "roberta-base" in lines[1]
    assert all(line.startswith("lab: error: ") and "HF_HUB_OFFLINE" in line for line in lines)
    assert out.stdout == ""


def test_prefetch_unreachable_hub_exits_2_quickly(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HF_HOME": str(tmp_path),
           "HF_ENDPOINT": "http://127.0.0.1:9"}  # not offline, but refuses connections at once
    out = subprocess.run([sys.executable, "-m", "lab", "prefetch", "distilgpt2"], capture_output=True,
                         text=True, cwd=ROOT, timeout=30, env=env)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "cannot be reached" in out.stderr


def test_prefetch_of_a_cached_model_is_a_no_op_offline(tmp_path, tiny_model_dirs):
    fake_hub_cache(tmp_path / "hub", "distilbert/distilgpt2", tiny_model_dirs["gpt2"])
    out = lab("prefetch", "distilgpt2", hf_home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("distilgpt2: ready offline")


def test_prefetch_unknown_name_exits_2(tmp_path):
    out = lab("prefetch", "gpt5", hf_home=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [out.stderr.strip()] and "unknown model(s) gpt5" in out.stderr
