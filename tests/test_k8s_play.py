"""deploy/k8s/ run for real (issue 59, item 5): `podman kube play` starts the Redis Deployment and two pods of the
app's Deployment; every pod's liveness probe passes as podman made it from the manifest; a teacher starts a room
through one app pod and a student in another browser follows it through the other pod, the room found in Redis.

What the test changes in a temporary copy of the manifests, and why (everything else is played as written, the
images by their names: `gpt2-explorer:latest` and `redis:7` resolve to the local images make image and
deploy/standins.sh tagged):
- each Deployment's name gets a suffix, so a run never meets another run's pods (or a crashed run's leftovers);
- podman 4.3 publishes every container port on the host (0.0.0.0:containerPort when no hostPort is given: seen here,
  Redis took 0.0.0.0:6379), so each pod gets hostIP 127.0.0.1 and a free hostPort;
- so the two app pods are two plays of the app's Deployment, one replica each: the replicas of one play share one
  template, so one host port, and the second pod fails to start (seen here with replicas: 2);
- podman runs no cluster DNS and ignores Services, so the app pods get a hostAliases entry naming the Redis
  Service (`gpt2-explorer-redis`, as LAB_ROOMS_URL has it) at the Redis pod's address: the URL is not rewritten.
`podman kube down` removes every pod afterwards, failed or not.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from lab.rooms import ENV
from lab.testing import container as podman_
from tests.container_checks import built, healthy_within
from tests.streamlit_server import ROOT, chromium, free_port, require_browser
from tests.test_browser_lessons import at_step, start_room

pytestmark = [pytest.mark.browser, pytest.mark.slow]

K8S = ROOT / "deploy" / "k8s"
SERVICE = "gpt2-explorer-redis"  # the Redis Service's name, which the app's LAB_ROOMS_URL names
PLAYS = 2  # two pods of the app's Deployment


def manifest(name: str) -> list[dict]:
    return list(yaml.safe_load_all((K8S / name).read_text()))


def deployment(docs: list[dict], suffix: str) -> dict:
    """The file's Deployment, renamed with `suffix` (its Services left out: podman ignores them)."""
    dep = next(d for d in docs if d["kind"] == "Deployment")
    dep["metadata"]["name"] += suffix
    return dep


def on_loopback(doc: dict) -> str:
    """Publish the Deployment's one container port on 127.0.0.1:<a free port>; that port's URL."""
    port = doc["spec"]["template"]["spec"]["containers"][0]["ports"][0]
    port.update(hostIP="127.0.0.1", hostPort=free_port())
    return f"http://127.0.0.1:{port['hostPort']}"


def box(doc: dict) -> str:
    """The name podman gives the one pod's container: <deployment>-pod-0-<container>."""
    return f"{doc['metadata']['name']}-pod-0-{doc['spec']['template']['spec']['containers'][0]['name']}"


def why(name: str) -> str:
    """A container's state, its health checks' last answers and its log's tail (for a failed wait)."""
    state = podman_.podman("inspect", name, "--format", "{{.State.Status}} restarts={{.RestartCount}} "
                           "{{json .State.Health}}", check=False)
    log = podman_.podman("logs", name, check=False)
    return f"{name}: {state.stdout}{state.stderr}\n{(log.stdout + log.stderr)[-1500:]}"


def play(doc: dict, folder: Path) -> Path:
    """`podman kube play` one Deployment (written to `folder`); the file, for `podman kube down`."""
    path = folder / f"{doc['metadata']['name']}.yaml"
    path.write_text(yaml.safe_dump(doc))
    podman_.podman("kube", "play", str(path), timeout=300)
    return path


def pod_ip(pod: str) -> str:
    """The pod's address on podman's network (its infra container's)."""
    infra = podman_.podman("pod", "inspect", pod, "--format", "{{.InfraContainerID}}").stdout.strip()
    ip = podman_.podman("inspect", infra, "--format",
                        "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}").stdout.strip()
    assert ip, f"pod {pod} has no address"
    return ip


def test_a_room_started_through_one_app_pod_is_followed_through_another(tmp_path):
    require_browser()
    built(podman_.IMAGE)
    subprocess.run([str(ROOT / "deploy" / "standins.sh")], check=True, capture_output=True, env=podman_.env())
    suffix, played = f"-t{uuid.uuid4().hex[:6]}", []
    redis = deployment(manifest("redis.yaml"), suffix)
    on_loopback(redis)
    try:
        played.append(play(redis, tmp_path))
        assert healthy_within(box(redis), 60), why(box(redis))
        apps, urls = [], []
        for i in range(PLAYS):
            app = deployment(manifest("deployment.yaml"), f"{suffix}-{i}")
            app["spec"]["replicas"] = 1
            app["spec"]["template"]["spec"]["hostAliases"] = [
                {"ip": pod_ip(f"{redis['metadata']['name']}-pod-0"), "hostnames": [SERVICE]}]
            env = {e["name"]: e.get("value") for e in app["spec"]["template"]["spec"]["containers"][0]["env"]}
            assert env[ENV].startswith(f"redis://{SERVICE}:")  # the Service's name, resolved by hostAliases here
            urls.append(on_loopback(app))
            played.append(play(app, tmp_path))
            apps.append(box(app))
        for name in apps:  # the liveness probe as podman made it (no systemd timer runs it here: run on demand)
            assert healthy_within(name, 180), why(name)
        podman_.settle()
        with chromium() as browser:
            teacher, student = browser.new_context().new_page(), browser.new_context().new_page()
            code = start_room(teacher, urls[0])
            keys = podman_.podman("exec", box(redis), "redis-cli", "--scan", "--pattern", "lab:room:*").stdout
            assert f"lab:room:{code}" in keys.split()  # the room lives in the Redis pod, not in the first app pod
            student.goto(f"{urls[1]}/?room={code}")
            at_step(student, 1)
            teacher.keyboard.press("PageDown")
            at_step(teacher, 2)
            at_step(student, 2)
            assert "Following the teacher" in student.locator(".st-key-lesson-bar").inner_text()
            assert student.url.startswith(urls[1]) and teacher.url.startswith(urls[0])
    finally:
        for path in reversed(played):
            podman_.podman("kube", "down", str(path), check=False, timeout=120)
