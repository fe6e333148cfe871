"""The hosted demo's image, built and run (issue 49): `make image` (deploy/build-image.sh) under podman, then a
container as a Space runs it: uid 1000, a read-only root except its cache and temp directories, the free tier's
2 CPUs and 16 GB. Its health check turns healthy; every page of the navigation opens through it in Chromium in
English, Portuguese and presentation mode with no exception and no request leaving the machine; the models load
from the image (no network, nothing in the hub cache); SIGTERM stops it within 10 s; and the faults a deployer
meets (too little memory, a wrong PORT, a model missing from the build) each say so instead of serving errors.

Needs podman (CI installs it, with runc and debootstrap); skipped without it unless REQUIRE_CONTAINERS=1.
"""

from __future__ import annotations

import shutil
import time

import pytest

from lab import container as preflight
from lab.testing import container as podman_
from tests.container_checks import build_context, built, detached, healthy_within, page_problems, wait_exit
from tests.streamlit_server import chromium, new_page, require_browser

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def image():
    return built(podman_.IMAGE, 8501)


@pytest.fixture(scope="module")
def served(image):
    with podman_.container(image, **podman_.FREE_TIER) as url:
        yield url


def test_it_runs_as_uid_1000_on_a_read_only_root_but_its_cache_and_temp(served):
    assert podman_.podman("exec", served.name, "id", "-u").stdout.strip() == "1000"
    assert podman_.podman("inspect", served.name, "--format", "{{.HostConfig.ReadonlyRootfs}}").stdout.strip() \
        == "true"
    denied = podman_.podman("exec", served.name, "touch", "/home/app/explorer/x", check=False)
    assert denied.returncode != 0 and "Read-only file system" in denied.stderr
    for writable in ("/tmp/x", "/home/app/.cache/x"):
        podman_.podman("exec", served.name, "touch", writable)


def test_its_health_check_turns_healthy(served):
    spec = podman_.podman("image", "inspect", podman_.IMAGE, "--format", "{{json .Config.Healthcheck}}").stdout
    assert "_stcore/health" in spec
    assert healthy_within(served.name, 60)
    assert podman_.podman("inspect", served.name, "--format", "{{.State.Health.Status}}").stdout.strip() == "healthy"


def test_every_page_opens_in_english_portuguese_and_presentation_with_nothing_leaving(served):
    require_browser()
    with chromium() as browser:
        problems = page_problems(new_page(browser, 1280, 900), served)
    assert problems == [], "\n".join(problems)
    # the models came from the image: nothing was downloaded into the hub cache while every page ran
    cache = podman_.podman("exec", served.name, "sh", "-c", "ls -A /home/app/.cache/huggingface 2>/dev/null",
                           check=False).stdout
    assert cache.strip() == "", cache


def test_the_course_models_load_with_no_network_at_all(image):
    code = ("from lab.models import load; from lab.container import course_models; "
            "[load(m) for m in course_models()]; print('loaded', len(course_models()))")
    out = podman_.podman("run", "--rm", "--network", "none", "--read-only", image, "python", "-c", code,
                         timeout=300)
    assert out.stdout.strip() == f"loaded {len(preflight.course_models())}"


def test_sigterm_stops_it_within_10_s(image):
    with detached(image) as name:
        assert healthy_within(name, 120)
        t0 = time.monotonic()
        podman_.podman("kill", "--signal", "TERM", name)
        code = wait_exit(name, 30)
        took = time.monotonic() - t0
    assert took <= 10, f"stopped after {took:.1f} s"
    assert code == 0, f"exit code {code} (137 would be a kill)"


def test_too_little_memory_is_said_in_the_log_and_exits_non_zero(image):
    out = podman_.podman("run", "--rm", "--memory", "512m", image, check=False, timeout=120)
    assert out.returncode == 3
    assert f"needs at least {preflight.MIN_MEMORY_MIB} MiB" in out.stderr and "512 MiB" in out.stderr


@pytest.mark.parametrize("port", ["http", "70000", ""])
def test_a_wrong_port_fails_the_health_check_visibly(image, port):
    with detached(image, "-e", f"PORT={port}") as name:
        assert wait_exit(name, 60) == 2
        log = podman_.podman("logs", name).stderr
        assert "lab.container: PORT" in log, log
        assert podman_.podman("healthcheck", "run", name, check=False).returncode != 0


def test_a_model_missing_from_the_image_fails_the_build(image, tmp_path):
    context = build_context(tmp_path / "context")
    shutil.rmtree(context / "models" / "course-roberta")
    out = podman_.podman("build", "--format", "docker", "-f", str(context / "deploy" / "Dockerfile"), "-t",
                         "lab-missing-model:test", str(context), check=False, timeout=900)
    podman_.podman("rmi", "--force", "lab-missing-model:test", check=False)
    assert out.returncode != 0
    assert "course-roberta: missing config.json, model.safetensors, tokenizer.json" in out.stdout + out.stderr
