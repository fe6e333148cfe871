"""lab.models and lab.models.registry: tiny random models by path, the hub cache path offline, clear failures.

Oracles: transformers' own classes, parameter counts and outputs; nothing reaches the network.
"""

import math
import subprocess
import sys
import time
from pathlib import Path
from shutil import copytree

import pytest

from lab import models
from lab.models import ModelUnavailable, hub, registry

ROOT = Path(__file__).resolve().parents[1]
CLASSES = {"gpt2": ("GPT2LMHeadModel", "decoder"), "openai-gpt": ("OpenAIGPTLMHeadModel", "decoder"),
           "roberta": ("RobertaForMaskedLM", "encoder")}


@pytest.fixture
def empty_hf(tmp_path, monkeypatch):
    """An empty, private Hugging Face cache, offline."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "hf" / "hub"


def fake_hub_cache(hub_cache: Path, hub_id: str, model_dir: Path) -> Path:
    """Lay model_dir out as the HF cache holds hub_id's main revision (refs/main -> snapshot)."""
    repo = hub_cache / ("models--" + hub_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0123456789abcdef0123456789abcdef01234567")
    copytree(model_dir, repo / "snapshots" / "0123456789abcdef0123456789abcdef01234567")
    return repo


@pytest.mark.parametrize("arch", list(CLASSES))
def test_local_dir_loads_ready_for_attention(tiny_model_dirs, arch):
    import torch
    from transformers import AutoConfig

    path = tiny_model_dirs[arch]
    loaded = models.load(str(path))
    config = AutoConfig.from_pretrained(path)
    cls, kind = CLASSES[arch]
    assert type(loaded.model).__name__ == cls and loaded.kind == kind
    assert (loaded.n_layer, loaded.n_head, loaded.n_embd) == (
        config.num_hidden_layers, config.num_attention_heads, config.hidden_size) == (2, 4, 32)
    assert loaded.context == 64  # the positions the model can use (RoBERTa: 66 minus pad offset 2)
    assert loaded.name == str(path.resolve())
    assert not loaded.model.training
    assert not any(p.requires_grad for p in loaded.model.parameters())
    assert loaded.model.dtype == torch.float32
    ids = loaded.tokenizer("the trophy did not fit", return_tensors="pt").input_ids
    with torch.no_grad():
        out = loaded.model(ids, output_attentions=True)
    assert len(out.attentions) == 2
    assert out.attentions[0].shape == (1, 4, ids.shape[1], ids.shape[1])
    torch.testing.assert_close(out.attentions[0].sum(-1), torch.ones(1, 4, ids.shape[1]))


def test_logits_match_transformers_own_load(tiny_model_dirs):
    import torch
    from transformers import AutoModelForCausalLM

    path = tiny_model_dirs["gpt2"]
    ref = AutoModelForCausalLM.from_pretrained(path).eval()
    ids = torch.tensor([[464, 4077, 750, 407, 4197]])
    with torch.no_grad():
        torch.testing.assert_close(models.load(str(path)).model(ids).logits, ref(ids).logits)


def test_loading_leaves_the_config_as_saved(tiny_model_dirs):
    from transformers import AutoConfig

    path = tiny_model_dirs["gpt2"]
    loaded = models.load(str(path))
    saved = AutoConfig.from_pretrained(path).to_dict()
    now = loaded.model.config.to_dict()
    assert {k: v for k, v in now.items() if k not in ("_attn_implementation_internal", "dtype")} == {
        k: v for k, v in saved.items() if k not in ("_attn_implementation_internal", "dtype")}


@pytest.mark.parametrize("value, words", [
    ("no-such-model", ["unknown model", "no-such-model", "gpt2"]),
    ("/definitely/not/here", ["unknown model", "/definitely/not/here"]),
])
def test_unknown_names_and_paths_are_clear(value, words):
    with pytest.raises(ModelUnavailable) as e:
        models.load(value)
    assert all(w in str(e.value) for w in words) and "\n" not in str(e.value)


def test_a_directory_without_a_model_is_clear(tmp_path):
    with pytest.raises(ModelUnavailable, match="not a Hugging Face model directory"):
        models.load(str(tmp_path))


def test_offline_uncached_hub_model_fails_fast_with_the_prefetch_command(empty_hf):
    t0 = time.perf_counter()
    with pytest.raises(ModelUnavailable) as e:
        models.load("gpt2")
    assert time.perf_counter() - t0 < 2
    msg = str(e.value)
    assert "gpt2" in msg and "HF_HUB_OFFLINE" in msg and "python -m lab prefetch gpt2" in msg
    assert "\n" not in msg
    assert not hub.is_available("gpt2")


def test_unreachable_hub_fails_fast(tmp_path):
    """Not offline, but the hub endpoint refuses connections: no timeout wait, a clear line."""
    code = ("import time; from lab import models\nt=time.perf_counter()\ntry:\n models.load('distilgpt2')\n"
            "except models.ModelUnavailable as e:\n print(round(time.perf_counter()-t, 2)); print(e)")
    env = {"PATH": "/usr/bin:/bin", "HF_HOME": str(tmp_path), "HF_ENDPOINT": "http://127.0.0.1:9",
           "HF_HUB_DISABLE_TELEMETRY": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=60)
    seconds, msg = out.stdout.strip().splitlines()
    assert float(seconds) < 2
    assert "cannot be reached" in msg and "python -m lab prefetch distilgpt2" in msg


@pytest.fixture
def silent_hub(monkeypatch):
    """HF_ENDPOINT on a loopback socket that accepts connections and never answers; online mode."""
    import socket

    from huggingface_hub import constants

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)  # the kernel completes the handshake; nobody ever reads or replies
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{sock.getsockname()[1]}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # read once, when huggingface_hub was imported
    hub.forget_silent_hub()
    try:
        yield sock
    finally:
        hub.forget_silent_hub()
        sock.close()


def test_a_silent_hub_is_remembered_not_probed_on_every_rerun(silent_hub):
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        with pytest.raises(ModelUnavailable, match="cannot be reached"):
            hub.check_online("distilgpt2")
        times.append(time.perf_counter() - t0)
    assert hub.PROBE_TIMEOUT_S - 0.5 <= times[0] <= hub.PROBE_TIMEOUT_S + 1.0  # it waited for the probe
    assert max(times[1:]) < 0.05  # then remembered the silence
    hub.forget_silent_hub()
    t0 = time.perf_counter()
    assert not hub.hub_reachable(timeout=0.3)  # forgotten: probes again (briefly)
    assert time.perf_counter() - t0 >= 0.3


def test_broken_checkpoints_are_one_clear_line(tmp_path, tiny_model_dirs, capsys):
    from lab.cli import main

    broken = copytree(tiny_model_dirs["gpt2"], tmp_path / "broken")
    weights = broken / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])  # an interrupted copy
    with pytest.raises(ModelUnavailable, match=r"cannot load .*broken: SafetensorError") as e:
        models.load(str(broken))
    assert "\n" not in str(e.value)
    assert main(["attention", "--json", "--model", str(broken), "--text", "oi"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1 and "cannot load" in out.err
    weights.write_bytes(data[:4])  # not even the header's length
    with pytest.raises(ModelUnavailable, match="cannot read the weights"):
        models.estimate_bytes(str(broken))
    weights.unlink()
    (broken / "pytorch_model.bin").write_bytes(b"PK\x03\x04" + data[:1000])  # a truncated zip
    with pytest.raises(ModelUnavailable, match="cannot load .*broken: RuntimeError"):
        models.load(str(broken))


def test_hub_model_in_the_local_cache_loads_offline_by_name(empty_hf, tiny_model_dirs):
    fake_hub_cache(empty_hf, "openai-community/gpt2", tiny_model_dirs["gpt2"])
    assert hub.is_available("gpt2") and not hub.is_available("gpt2-medium")
    loaded = models.load("gpt2")
    assert loaded.name == "gpt2" and loaded.kind == "decoder" and loaded.n_layer == 2


def test_estimate_reads_the_parameter_count_from_the_weights(tiny_model_dirs):
    from transformers import AutoModelForMaskedLM

    path = tiny_model_dirs["roberta"]
    n = AutoModelForMaskedLM.from_pretrained(path).num_parameters()
    assert registry.safetensors_params(path / "model.safetensors") == (n, 4)
    assert models.estimate_bytes(str(path)) == registry.memory_estimate(n)
    assert models.estimate_bytes("gpt2") == registry.info("gpt2").memory_bytes


def _hub_architectures():
    from transformers import (
        GPT2Config,
        GPT2LMHeadModel,
        OpenAIGPTConfig,
        OpenAIGPTLMHeadModel,
        RobertaConfig,
        RobertaForMaskedLM,
    )

    gpt2 = lambda **kw: (GPT2LMHeadModel, GPT2Config(**kw))  # noqa: E731
    return {
        "gpt2": gpt2(), "gpt2-small-portuguese": gpt2(), "distilgpt2": gpt2(n_layer=6),
        "gpt2-medium": gpt2(n_embd=1024, n_layer=24, n_head=16),
        "gpt2-large": gpt2(n_embd=1280, n_layer=36, n_head=20),
        "gpt2-xl": gpt2(n_embd=1600, n_layer=48, n_head=25),
        "openai-gpt": (OpenAIGPTLMHeadModel, OpenAIGPTConfig()),
        "roberta-base": (RobertaForMaskedLM, RobertaConfig(vocab_size=50265, max_position_embeddings=514,
                                                           type_vocab_size=1, pad_token_id=1)),
    }


def test_registry_numbers_match_the_architectures():
    """params and context from transformers' own classes (on the meta device: no memory, no download);
    the fp32 weights file must be at least params x 4 bytes and at most 12% more (mask buffers)."""
    import torch

    for name, (cls, config) in _hub_architectures().items():
        info = registry.info(name)
        with torch.device("meta"):
            n = cls(config).num_parameters()
        assert info.params == n, name
        context = config.max_position_embeddings - (2 if cls.__name__.startswith("Roberta") else 0)
        assert info.context == context, name
        assert n * 4 < info.download_bytes < n * 4 * 1.12, name
        assert info.memory_bytes > n * 4, name


def test_registry_has_the_course_models():
    for name in ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "distilgpt2", "openai-gpt", "roberta-base",
                 "gpt2-small-portuguese", "course-gpt2", "course-roberta"):
        assert name in registry.REGISTRY
    assert registry.info("openai-gpt").hub_id == "openai-community/openai-gpt"
    assert registry.info("roberta-base").hub_id == "FacebookAI/roberta-base"
    assert registry.info("course-gpt2").path == str(ROOT / "models" / "course-gpt2")
    assert registry.info("course-roberta").kind == "encoder"
    assert models.DEFAULT_OFFLINE == "course-gpt2"
    assert all(info.kind in ("decoder", "encoder") for info in registry.REGISTRY.values())
    assert math.isclose(registry.info("gpt2").download_bytes, 548_105_171 + registry.GPT2_TOKENIZER_FILES)


def test_importing_the_registry_and_loader_module_does_not_import_torch():
    code = "import sys, lab.models, lab.models.budget, lab.cli.models; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


def test_loading_benchmark_memory_entry_states_its_unit(monkeypatch, tiny_model_dirs):
    """The memory entry keeps the project_s/reference_s keys of every entry, but says GiB twice."""
    from lab.benchmarks import loading
    from lab.testing import random_models

    gib = 2**30
    monkeypatch.setattr(random_models, "save", lambda arch, path, size: tiny_model_dirs["gpt2"])
    monkeypatch.setattr(loading, "side_by_side", lambda *a, **k: (0.2, 0.1))
    monkeypatch.setattr(loading, "_rss", lambda d: {"baseline": gib // 2, "weights": gib // 4, "after": gib})
    timing, memory = loading.benchmarks()
    assert "GiB" not in timing["name"] and "project_gib" not in timing
    assert "GiB" in memory["name"] and memory["unit"] == "GiB"
    assert memory["project_gib"] == memory["project_s"] == 1.0
    assert memory["reference_gib"] == memory["reference_s"] == 0.75
    assert memory["ratio"] == round(1 / 0.75, 4) and memory["ok"] is False
