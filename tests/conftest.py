"""Shared fixtures: tiny random models saved in Hugging Face format (never a download)."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach for the hub
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


@pytest.fixture(scope="session")
def tiny_model_dirs(tmp_path_factory):
    """{"gpt2": dir, "openai-gpt": dir, "roberta": dir}: tiny random models with tokenizer files."""
    from lab.testing import random_models

    root = tmp_path_factory.mktemp("tiny_models")
    return {arch: random_models.save(arch, root / arch) for arch in random_models.ARCHS}


@pytest.fixture
def forwards():
    """Counts real forward passes: every call of a base transformer (GPT2Model, RobertaModel, ...),
    through a process-wide module hook, whoever makes the call."""
    import torch
    from transformers import PreTrainedModel

    count = {"n": 0}

    def hook(module, args, output):
        if isinstance(module, PreTrainedModel) and module.base_model is module:
            count["n"] += 1

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    yield count
    handle.remove()


def pytest_configure(config):
    """The `slow` marker: real-server reliability tests (a minute or more). They still run in `make test`
    (CI runs everything); `-m "not slow"` leaves them out of a quick local run."""
    config.addinivalue_line("markers", "slow: real-server reliability tests (a minute or more); in make test too")


# The course models' tiny stand-ins for AppTest: the sizes differ, the names and kinds are the course's.
COURSE_STANDINS = {"course-gpt2": "gpt2", "course-gpt2-1x64": "gpt2", "course-gpt2-2x128": "openai-gpt",
                   "course-roberta": "roberta"}


@pytest.fixture
def fresh_caches(monkeypatch):
    """Offline (HF_HUB_OFFLINE=1); every Streamlit cache, the shared model cache and the perplexity cache
    empty before and after. The course models are the shipped ones (course_standins swaps them)."""
    import streamlit as st

    from ui.model_loader import model_cache
    from ui.runs import detect as detect_rows
    from ui.runs import perplexity as perplexity_results

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for clear in (model_cache.clear, st.cache_data.clear, perplexity_results.clear, detect_rows.clear):
        clear()
    yield
    for clear in (model_cache.clear, st.cache_data.clear, perplexity_results.clear, detect_rows.clear):
        clear()


@pytest.fixture
def course_standins(fresh_caches, tmp_path, monkeypatch, tiny_model_dirs):
    """Every course model is a tiny random one (COURSE_STANDINS); an offline, private HF cache; every
    Streamlit cache and the shared model cache empty before and after (fresh_caches). Yields the private
    hub folder."""
    import dataclasses

    from lab.models import registry

    for name, arch in COURSE_STANDINS.items():
        monkeypatch.setitem(registry.REGISTRY, name, dataclasses.replace(registry.info(name),
                                                                         path=str(tiny_model_dirs[arch])))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    yield tmp_path / "hf" / "hub"


@pytest.fixture(scope="module")
def tiny_hub_app(tmp_path_factory, tiny_model_dirs):
    """The app's URL on a real server (one per test module), offline, where "gpt2" and "roberta-base" are
    tiny random models (2 layers x 4 heads) in a fake Hugging Face cache. Needs Chromium (require_browser)."""
    from tests.streamlit_server import require_browser, streamlit_server
    from tests.test_models import fake_hub_cache

    require_browser()
    hf = tmp_path_factory.mktemp("hf")
    fake_hub_cache(hf / "hub", "openai-community/gpt2", tiny_model_dirs["gpt2"])
    fake_hub_cache(hf / "hub", "FacebookAI/roberta-base", tiny_model_dirs["roberta"])
    env = {"HF_HOME": str(hf), "HF_HUB_CACHE": str(hf / "hub"), "HF_HUB_OFFLINE": "1"}
    with streamlit_server(str(Path(__file__).resolve().parents[1] / "app.py"), env=env) as url:
        yield url
