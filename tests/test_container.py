"""The hosted demo's image, built and run (issue 49): `make image` (deploy/build-image.sh) under podman, then a
container as a Space runs it: uid 1000, a read-only root except its cache and temp directories, the free tier's
2 CPUs and 16 GB. Its health check turns healthy; every page of the navigation opens through it in Chromium in
English, Portuguese and presentation mode with no exception and no request leaving the machine; the models load
from the image (no network, nothing in the hub cache); SIGTERM stops it within 10 s; and the faults a deployer
meets (too little memory, a wrong PORT, a model missing from the build) each say so instead of serving errors.
The Space's folder (`make space`) builds as the Hub builds it and passes the same checks on port 7860. One module,
so its containers start on one pytest worker, one after another.

Needs podman (CI installs it, with runc and debootstrap); skipped without it unless REQUIRE_CONTAINERS=1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid

import pytest

from lab import container as preflight
from lab import pod as lab_pod
from lab import space
from lab.replicas import COOKIE
from lab.testing import container as podman_
from tests.container_checks import (
    MODES,
    build_context,
    built,
    detached,
    healthy_within,
    page_problems,
    visit,
    wait_exit,
)
from tests.streamlit_server import ROOT, chromium, free_port, new_page, require_browser
from tests.test_browser_lessons import at_step, start_room

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def image():
    return built(podman_.IMAGE)


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
    assert '"python","-m","lab.health"' in spec  # lab.health asks Streamlit's /_stcore/health on $PORT
    assert healthy_within(served.name, 60)
    wrong = podman_.podman("exec", "-e", "PORT=1", served.name, "python", "-m", "lab.health", check=False)
    assert wrong.returncode == 1 and wrong.stderr.strip()  # nothing on that port: unhealthy, in one line
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


SPACE = "gpt2-explorer-space:latest"


# The Space's folder (lab/space.py, `make space`) builds with its own Dockerfile as the Hub builds it (no build
# argument: the port is its default, 7860), and its container passes the same checks as the repository's image.
@pytest.fixture(scope="module")
def space_image(tmp_path_factory):
    folder = space.write(tmp_path_factory.mktemp("space") / "space")
    assert space.check(folder) == []
    # no hub reaches this machine: the Space's hub models are left out here (HUB_MODELS set empty overrides its
    # Dockerfile's list); tests/test_container_hub.py bakes gpt2 in from the stand-in hub
    saved = os.environ.get("HUB_MODELS")
    os.environ["HUB_MODELS"] = ""
    try:
        return built(SPACE, folder)
    finally:
        os.environ.pop("HUB_MODELS") if saved is None else os.environ.update(HUB_MODELS=saved)


def test_the_space_image_serves_on_7860(space_image):
    image = space_image
    env = podman_.podman("image", "inspect", image, "--format", "{{range .Config.Env}}{{println .}}{{end}}").stdout
    assert "PORT=7860" in env.split()
    assert "7860/tcp" in podman_.podman("image", "inspect", image, "--format", "{{json .Config.ExposedPorts}}").stdout


def test_the_space_passes_the_containers_checks_and_its_cold_start_is_recorded(space_image, record_property):
    """The cold start a Space's reader waits through: from `podman run` to the first page drawn."""
    require_browser()
    with chromium() as browser:
        page = new_page(browser, 1280, 900)
        t0 = time.monotonic()
        with podman_.container(space_image, inside=7860, **podman_.FREE_TIER) as url:
            visit(page, f"{url}/attention")
            record_property("cold_start_s", round(time.monotonic() - t0, 1))
            assert podman_.podman("exec", url.name, "id", "-u").stdout.strip() == "1000"
            assert podman_.podman("inspect", url.name, "--format", "{{.HostConfig.ReadonlyRootfs}}").stdout \
                .strip() == "true"
            assert healthy_within(url.name, 60)
            # the same app files as the image above, which opens every page in all three modes: here every page
            # in one (Portuguese, presenting), enough to find a file the Space's folder lacks
            problems = page_problems(page, url, {"present": MODES["present"]})
    assert problems == [], "\n".join(problems)


# Replicas through containers (python -m lab.pod: what deploy/compose.yaml describes, as a podman pod): two app
# containers, Redis and HAProxy. A teacher on one replica leads a student on the other; the student's container is
# killed mid-class and the student's tab comes back on the live one, at the teacher's step, and keeps following.
def test_a_room_spans_two_app_containers_and_survives_one_killed(image, tmp_path):
    require_browser()
    subprocess.run([str(ROOT / "deploy" / "standins.sh")], check=True, capture_output=True, env=podman_.env())
    name = f"lab-pod-{uuid.uuid4().hex[:8]}"
    pod = lab_pod.up(free_port(), 2, name=name, config_dir=tmp_path)
    try:
        assert all(healthy_within(app, 120) for app in pod.apps)
        podman_.settle()
        with chromium() as browser:
            teacher_ctx, student_ctx = browser.new_context(), browser.new_context()
            teacher, student = teacher_ctx.new_page(), student_ctx.new_page()
            code = start_room(teacher, pod.url)
            mine = _replica(teacher_ctx)
            other = "r2" if mine == "r1" else "r1"
            student_ctx.add_cookies([{"name": COOKIE, "value": other, "url": pod.url}])  # the other replica
            student.goto(f"{pod.url}/?room={code}")
            at_step(student, 1)
            teacher.keyboard.press("PageDown")
            at_step(teacher, 2)
            at_step(student, 2)
            assert _replica(student_ctx) == other
            podman_.podman("kill", "--signal", "KILL", pod.apps[int(other[1]) - 1])
            deadline = time.monotonic() + 60
            while _replica(student_ctx) != mine:  # its websocket reconnects through the proxy, to the live one
                assert time.monotonic() < deadline, "the student's tab did not move to the live replica"
                student.wait_for_timeout(250)
            at_step(student, 2)  # the view it had: the room's step, from its address
            teacher.keyboard.press("PageDown")
            at_step(teacher, 3)
            at_step(student, 3)
            assert "Following the teacher" in student.locator(".st-key-lesson-bar").inner_text()
    finally:
        lab_pod.down(name)


def _replica(context) -> str | None:
    """The replica HAProxy's cookie names for this browser context."""
    return next((c["value"] for c in context.cookies() if c["name"] == COOKIE), None)
