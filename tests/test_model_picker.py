"""The sidebar model picker and ui.model_loader under Streamlit's AppTest (tiny models, no network)."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lab import models
from lab.models import hub, registry
from tests.pages import APP
from tests.test_models import fake_hub_cache

ROOT = Path(__file__).resolve().parents[1]
@pytest.fixture
def hf(tmp_path, monkeypatch):
    """A private, empty, offline Hugging Face cache and a fresh shared model cache."""
    from ui.model_loader import model_cache

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model_cache.clear()
    yield tmp_path / "hf" / "hub"
    model_cache.clear()


@pytest.fixture
def course_model(monkeypatch, tiny_model_dirs):
    """course-gpt2 pointed at a tiny random GPT-2 (the real one is trained elsewhere)."""
    info = registry.info("course-gpt2")
    monkeypatch.setitem(registry.REGISTRY, "course-gpt2",
                        dataclasses.replace(info, path=str(tiny_model_dirs["gpt2"])))


def picker(at):
    return at.selectbox(key="model")


def test_picker_persists_across_pages(hf):
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()
    assert not at.exception
    assert picker(at).value == models.DEFAULT_OFFLINE
    picker(at).select("distilgpt2").run()
    assert at.query_params["model"] == "distilgpt2"
    for page in ("app_pages/tokens.py", "app_pages/home.py", "app_pages/tokens.py"):
        at.switch_page(page)
        at.run()
        assert not at.exception
        assert picker(at).value == "distilgpt2" and at.session_state["model"] == "distilgpt2"
        assert at.query_params["model"] == "distilgpt2"


def test_link_chooses_the_model_and_unknown_links_are_refused_safely(hf):
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["model"] = "roberta-base"
    at.run()
    assert picker(at).value == "roberta-base"

    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params["model"] = "<img src=x onerror=alert(1)>"
    at.run()
    assert not at.exception and picker(at).value == models.DEFAULT_OFFLINE
    assert len(at.warning) == 1 and "<img" not in at.warning[0].value


def test_options_show_size_and_offline_availability(hf, tiny_model_dirs, monkeypatch):
    monkeypatch.setenv("LAB_MEMORY_BUDGET_MB", "1700")  # the default follows the machine; gpt2-xl needs ~6.9 GB
    fake_hub_cache(hf, "openai-community/gpt2", tiny_model_dirs["gpt2"])
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()
    labels = dict(zip(registry.REGISTRY, picker(at).options, strict=True))
    assert labels["gpt2"].startswith("GPT-2 small") and "551 MB" in labels["gpt2"]
    assert labels["gpt2"].endswith("✓ offline")
    assert labels["roberta-base"].endswith("not downloaded (offline)") and "502 MB" in labels["roberta-base"]
    assert labels["gpt2-xl"].endswith("too big for this server")


def current_model_page():
    """A model page in miniature: whatever current_model() gives, by name."""
    import streamlit as st

    from ui.model_loader import current_model, model_cache

    loaded = current_model()
    st.write(f"loaded: {loaded.name}")
    st.write(f"loads: {model_cache().loads}")


def run_model_page(model: str) -> AppTest:
    at = AppTest.from_function(current_model_page, default_timeout=30)
    at.session_state["model"] = model
    at.run()
    assert not at.exception
    return at


def test_uncached_hub_model_offline_falls_back_with_a_clear_message(hf, course_model):
    at = run_model_page("gpt2")
    assert len(at.error) == 1
    assert "gpt2" in at.error[0].value and "python -m lab prefetch gpt2" in at.error[0].value
    assert "course-gpt2" in at.info[0].value and not at.status  # no download box when offline
    assert [m.value for m in at.markdown] == ["loaded: course-gpt2", "loads: 1"]
    at.run()  # a rerun (or another session) reuses the loaded fallback
    assert at.markdown[1].value == "loads: 1"


def test_cached_hub_model_loads_through_the_shared_cache(hf, tiny_model_dirs):
    fake_hub_cache(hf, "openai-community/gpt2", tiny_model_dirs["gpt2"])
    at = run_model_page("gpt2")
    assert not at.error and [m.value for m in at.markdown] == ["loaded: gpt2", "loads: 1"]
    other = run_model_page("gpt2")  # a second session: same process, same cache, no reload
    assert other.markdown[1].value == "loads: 1"


def test_model_over_the_budget_is_refused_in_the_app(hf, course_model, monkeypatch):
    monkeypatch.setenv("LAB_MEMORY_BUDGET_MB", "700")
    at = run_model_page("gpt2-medium")
    assert len(at.error) == 1 and "models that fit" in at.error[0].value and "700 MB" in at.error[0].value
    assert at.markdown[0].value == "loaded: course-gpt2"


def test_missing_offline_model_stops_the_page_with_a_message(hf):
    info = registry.info("course-gpt2")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(registry.REGISTRY, "course-gpt2", dataclasses.replace(info, path="/nonexistent/course"))
        at = run_model_page("course-gpt2")
    assert len(at.error) == 1 and "course-gpt2" in at.error[0].value and not at.markdown


def test_home_and_tokens_pages_never_import_torch(tmp_path):
    """The picker is registry + cache checks only: pages without a model stay torch-free."""
    code = (
        "import sys, json\nfrom streamlit.testing.v1 import AppTest\n"
        "at = AppTest.from_file('app.py', default_timeout=60)\nat.run()\n"
        "at.selectbox(key='model').select('gpt2').run()\n"
        "at.switch_page('app_pages/tokens.py'); at.run()\n"
        "print(json.dumps({'exc': bool(at.exception), 'torch': 'torch' in sys.modules,"
        " 'transformers': 'transformers' in sys.modules}))")
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=120)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"exc": False, "torch": False,
                                                               "transformers": False}


def test_download_shows_progress_then_loads(hf, tiny_model_dirs, monkeypatch):
    """A hub model not yet cached: a status box with a progress bar while the (stand-in) download
    writes into the HF cache, then the model loads from there."""
    import time

    def fake_download(name):
        info = registry.info(name)
        blobs = hf / ("models--" + info.hub_id.replace("/", "--")) / "blobs"
        blobs.mkdir(parents=True)
        for _ in range(3):  # bytes arrive while the page polls
            with open(blobs / "weights.incomplete", "ab") as f:
                f.write(b"\0" * 1000)
            time.sleep(0.4)
        fake_hub_cache(hf, info.hub_id, tiny_model_dirs["gpt2"])

    polled = []
    downloaded_bytes = hub.downloaded_bytes
    monkeypatch.setattr(hub, "download", fake_download)
    monkeypatch.setattr(hub, "check_online", lambda name: None)  # as if the hub answered
    monkeypatch.setattr(hub, "downloaded_bytes", lambda name: polled.append(downloaded_bytes(name))
                        or polled[-1])
    at = run_model_page("distilgpt2")
    assert not at.error
    assert [m.value for m in at.markdown] == ["loaded: distilgpt2", "loads: 1"]
    assert len(at.status) == 1 and at.status[0].label == "DistilGPT-2 (82M) downloaded"
    assert at.status[0].state == "complete" and len(at.status[0].progress) == 1
    assert len(set(polled)) >= 2 and polled == sorted(polled)  # the bar followed the bytes as they came


LEAVE_A_CORE = """
import json, torch
from ui.model_loader import leave_a_core, model_cache
torch.set_num_threads(4)  # as if torch had found 4 cores
first = leave_a_core()
model_cache(); model_cache.clear(); model_cache()  # the cache made twice: no second core given up
print(json.dumps([first, torch.get_num_threads()]))
"""


@pytest.mark.parametrize("env, expected", [({}, [3, 3]), ({"OMP_NUM_THREADS": "4"}, [4, 4]),
                                           ({"MKL_NUM_THREADS": "4"}, [4, 4])])
def test_the_app_leaves_the_browser_a_core(env, expected):
    """The app's torch takes one core fewer than torch would (its own count, read once), unless whoever runs it
    set a thread count: in a fresh process, whatever ran before in this one aside."""
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", LEAVE_A_CORE], cwd=ROOT, env={**clean, **env}, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == expected
