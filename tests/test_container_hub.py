"""GPT-2 baked into the hosted image at build time (issue 59): the stand-in hub (tests/fake_hub.py) on this
machine's loopback serves a model of GPT-2 small's shapes (random weights, made here) under `gpt2`'s real hub id;
`deploy/build-image.sh` with HUB_MODELS=gpt2 and HF_ENDPOINT on that hub builds an image whose build downloads it
(`python -m lab prefetch gpt2`, on the host's network). The hub is then stopped, and the image, offline, loads
gpt2 with no network at all (its logits those transformers gives for the same files on the host) and opens the
attention, lens and sampling pages on `?model=gpt2` in Chromium: gpt2's figures, no "offline" notice, nothing
leaving the machine. A download the hub refuses (404) or cuts short fails the build with one line naming the
model. The image without hub models is tests/test_container.py's.

Needs podman and Chromium; skipped without them unless REQUIRE_CONTAINERS=1 / REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import sys

import pytest

from lab.testing import container as podman_
from lab.testing import random_models
from tests.container_checks import require_podman, visit
from tests.fake_hub import fake_hub, files_of
from tests.pages import outside
from tests.streamlit_server import ROOT, chromium, new_page, require_browser

pytestmark = pytest.mark.slow

HUB_ID = "openai-community/gpt2"
TAG = "gpt2-explorer-hub:test"
MODEL_BOX = '[data-testid="stSidebar"] input[aria-label="Model"]'
TEXT = "The trophy would not fit in the suitcase"


def build(tag: str, hub_url: str, models: str) -> subprocess.CompletedProcess:
    """deploy/build-image.sh as `make image HUB_MODELS=... HF_ENDPOINT=...` runs it (niced, as the other builds)."""
    env = podman_.env() | {"HUB_MODELS": models, "HF_ENDPOINT": hub_url}
    with open("/tmp/lab-image-build.lock", "w") as lock:  # one build at a time (tests.container_checks.built)
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(["nice", "-n", "10", str(podman_.BUILD), tag, "", str(ROOT)], capture_output=True,
                              text=True, env=env, timeout=3600)


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return random_models.save("gpt2", tmp_path_factory.mktemp("gpt2") / "gpt2", size="small")


@pytest.fixture(scope="module")
def image(gpt2_dir, record_testsuite_property):
    require_podman()
    with fake_hub({HUB_ID: files_of(gpt2_dir)}) as hub:
        out = build(TAG, hub.url, "gpt2")
        fetched = hub.downloads()
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert any(p.endswith("/model.safetensors") for p in fetched), fetched  # the build itself downloaded it
    last = out.stdout.strip().splitlines()[-1]
    assert last.endswith(", hub models: gpt2"), last
    record_testsuite_property("gpt2_image", last)
    yield TAG
    podman_.podman("rmi", "--force", TAG, check=False)


def test_the_baked_gpt2_loads_with_no_network_and_gives_transformers_logits(image, gpt2_dir):
    code = ("import json; from lab.models import load; from lab import text; import torch; m = load('gpt2'); "
            f"ids = text.encode(m.tokenizer, {TEXT!r}); "
            "print(json.dumps(m.model(torch.tensor([ids])).logits[0, -1, :8].tolist()))")
    out = podman_.podman("run", "--rm", "--network", "none", "--read-only", image, "python", "-c", code,
                         timeout=300)
    import torch
    from transformers import GPT2LMHeadModel, GPT2TokenizerFast

    oracle = GPT2LMHeadModel.from_pretrained(gpt2_dir, dtype=torch.float32).eval()
    ids = GPT2TokenizerFast.from_pretrained(gpt2_dir)(TEXT)["input_ids"]
    with torch.no_grad():
        want = oracle(torch.tensor([ids])).logits[0, -1, :8]
    got = torch.tensor(json.loads(out.stdout.strip().splitlines()[-1]))
    assert torch.allclose(got, want, atol=1e-4), (got, want)


PAGES = {  # what the page shows for gpt2 (12 layers x 12 heads x 64) and never for the course model (4 x 8 x 32)
    "attention": "768 = 12 heads × 64 dimensions; 12 layers",
    "logit_lens": "each of the 12 blocks",
    "sampling": None,
}


def test_the_attention_lens_and_sampling_pages_open_on_gpt2_offline(image, record_testsuite_property):
    require_browser()
    seen: list[str] = []
    with podman_.container(image, **podman_.FREE_TIER) as url, chromium() as browser:
        page = new_page(browser, 1280, 1800)
        page.on("request", lambda r: seen.append(r.url))
        for path, figure in PAGES.items():
            visit(page, f"{url}/{path}?model=gpt2&lang=en")
            main = page.locator('[data-testid="stMain"]').inner_text()
            assert not page.locator('[data-testid="stException"]').count(), main[:2000]
            assert page.locator(MODEL_BOX).input_value().startswith("GPT-2 small"), path
            assert "offline model" not in main and "HF_HUB_OFFLINE" not in main, main[:2000]
            page.get_by_text("Reproduce this view from the shell").first.click()  # the page's command: on gpt2
            command = page.locator('[data-testid="stMain"] code').last
            command.wait_for(timeout=10_000)
            assert re.search(r"--model gpt2\b(?!-)", command.inner_text()), command.inner_text()
            assert figure is None or figure in main, main[:2000]
        status = podman_.podman("exec", url.name, "cat", "/proc/1/status").stdout  # pid 1: the server (exec)
        peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) // 1024
        baked = podman_.podman("exec", url.name, "sh", "-c", "ls -A /home/app/.cache/huggingface 2>/dev/null",
                               check=False).stdout
    record_testsuite_property("gpt2_pages_peak_rss_mib", peak)
    print(f"peak resident memory of the server over attention, lens, sampling on gpt2: {peak} MiB")
    assert outside(seen, url) == []
    assert baked.strip() == "", baked  # nothing downloaded at run time: gpt2 came from the image


@pytest.mark.parametrize("fault", ["404", "cut"])
def test_a_failed_or_partial_download_fails_the_build_with_one_line_naming_the_model(gpt2_dir, fault):
    require_podman()
    tag = f"lab-hub-{fault}:test"
    repos = {HUB_ID: files_of(gpt2_dir)} if fault == "cut" else {}
    with fake_hub(repos) as hub:
        hub.drop["model.safetensors"] = 1_000_000  # the connection drops after 1 MB of 498 MB, every try
        out = build(tag, hub.url, "gpt2")
    podman_.podman("rmi", "--force", tag, check=False)
    assert out.returncode != 0
    lines = [line for line in (out.stdout + out.stderr).splitlines() if "gpt2" in line and "error" in line.lower()]
    want = ("RepositoryNotFoundError: 404" if fault == "404" else "RemoteProtocolError")
    assert len(lines) == 1 and lines[0].startswith("lab: error: downloading gpt2 (openai-community/gpt2) failed: ") \
        and want in lines[0], out.stdout[-2000:] + out.stderr[-3000:]
    assert "Trying to resume" not in out.stderr  # huggingface_hub's retries: not printed, the one line says it


def test_prefetch_says_a_partial_download_in_one_line_naming_the_model(tmp_path):
    """What the build prints, without a container: the hub cuts every try of the weights short."""
    model = random_models.save("gpt2", tmp_path / "tiny")
    with fake_hub({"distilbert/distilgpt2": files_of(model)}) as hub:
        hub.drop["model.safetensors"] = 1000
        env = {"HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0",
               "HF_HUB_DISABLE_PROGRESS_BARS": "1", "PATH": "/usr/bin:/bin"}
        out = subprocess.run([sys.executable, "-m", "lab", "prefetch", "distilgpt2"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        "lab: error: downloading distilgpt2 (distilbert/distilgpt2) failed: RemoteProtocolError: peer closed "
        "connection without sending complete message body (received 1000 bytes, expected "
        f"{(model / 'model.safetensors').stat().st_size})"], out.stderr


def test_the_serve_check_counts_the_baked_models_memory_and_presence(tmp_path, monkeypatch):
    """An image with gpt2 baked in needs its loaded size on top of the course models' 1,024 MiB: GPT-2 small's
    124,439,808 fp32 parameters x 4 bytes x 1.10 + 64 MB = 611,534,155 B = 583 MiB (registry's estimate)."""
    from lab import container

    assert container.memory_need_mib([]) == 1024
    assert container.memory_need_mib(["gpt2"]) == 1024 + 583
    assert "the app on the course models, gpt2 needs at least 1607 MiB" in container.memory_problem(
        1200 * container.MIB, 1607, ["gpt2"])
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert container.hub_model_problems(["course-gpt2", "gpt2"], load=False) == [
        "course-gpt2: not a hub model of the registry (" + ", ".join(container.REGISTRY) + ")",
        f"gpt2: not in the image's Hugging Face cache ({tmp_path})"]
