"""Shared fixtures: tiny random models saved in Hugging Face format (never a download)."""

import os

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
