"""deploy/ validated with well-kept linters (no container engine or cluster runs here): hadolint on the
Dockerfile, the Compose Specification's schema (bundled in check-jsonschema) on compose.yaml, HAProxy's own
`haproxy -c` on its config, kubernetes-validate (bundled schemas) on the manifests, yamllint on every YAML file."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lab.testing.browser import ROOT

DEPLOY = ROOT / "deploy"
BIN = Path(sys.executable).parent
MANIFESTS = sorted((DEPLOY / "k8s").glob("*.yaml"))


def tool(name: str) -> str:
    """A linter from requirements-dev.txt (in the virtual environment's bin), or skip."""
    found = BIN / name if (BIN / name).exists() else shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (requirements-dev.txt)")
    return str(found)


def run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_hadolint_passes_the_dockerfile():
    out = run(tool("hadolint"), "deploy/Dockerfile")
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_dockerfile_is_cpu_offline_non_root_and_its_port_configurable():
    text = (DEPLOY / "Dockerfile").read_text()
    assert "torch==2.13.0+cpu" in text and "HF_HUB_OFFLINE=1" in text and "COPY --chown=app:app models/" in text
    assert "MALLOC_ARENA_MAX=2" in text  # as make run and lab replicas serve (docs/hosting.md: the memory it saves)
    # the port: a build argument, read by lab.container's serve (which runs streamlit on it: tests/test_container.py)
    assert "ARG PORT=8501" in text and 'CMD ["python", "-m", "lab.container", "serve"]' in text
    assert "USER 1000:1000" in text


def test_compose_matches_the_compose_specification():
    out = run(tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", "deploy/compose.yaml")
    assert out.returncode == 0, out.stdout + out.stderr
    doc = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert doc["services"]["app"]["deploy"]["replicas"] >= 2 and "proxy" in doc["services"]


@pytest.mark.skipif(not os.access("/usr/sbin/haproxy", os.X_OK), reason="HAProxy missing (.ci/run installs it)")
def test_haproxy_accepts_the_compose_proxy_config():
    out = run("/usr/sbin/haproxy", "-c", "-f", "deploy/haproxy.cfg")
    assert out.returncode == 0, out.stdout + out.stderr
    text = (DEPLOY / "haproxy.cfg").read_text()
    assert "cookie SRV insert indirect nocache" in text and "option redispatch" in text
    assert "option httpchk GET /_stcore/health" in text


def test_kubernetes_validate_passes_the_manifests():
    assert {p.name for p in MANIFESTS} == {"deployment.yaml", "service.yaml", "ingress.yaml", "redis.yaml"}
    out = run(tool("kubernetes-validate"), "--strict", *map(str, MANIFESTS))
    assert out.returncode == 0, out.stdout + out.stderr
    docs = {(d["kind"], d["metadata"]["name"]): d for p in MANIFESTS for d in yaml.safe_load_all(p.read_text())}
    kinds = {kind: d for (kind, name), d in docs.items() if name == "gpt2-explorer"}
    pod = kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert pod["readinessProbe"]["httpGet"]["path"] == "/_stcore/health"
    assert pod["resources"]["requests"]["memory"] == "2Gi"  # the hosted bench's 1.74 GB peak, rounded up
    assert kinds["Ingress"]["metadata"]["annotations"]["nginx.ingress.kubernetes.io/affinity"] == "cookie"


def test_the_replicas_share_rooms_through_the_redis_service():
    """Issue 59: the replicas' LAB_ROOMS_URL (lab/rooms.py's ENV) names the Redis Service's name and port, which
    selects the one Redis pod (replaced, never rolled: two would split the rooms), probed and with requests."""
    from lab.rooms import ENV

    docs = {(d["kind"], d["metadata"]["name"]): d for p in MANIFESTS for d in yaml.safe_load_all(p.read_text())}
    app = docs["Deployment", "gpt2-explorer"]["spec"]["template"]["spec"]["containers"][0]
    url = {e["name"]: e.get("value") for e in app["env"]}[ENV]
    assert url == "redis://gpt2-explorer-redis:6379/0"
    service, redis = docs["Service", "gpt2-explorer-redis"], docs["Deployment", "gpt2-explorer-redis"]
    assert service["spec"]["ports"][0]["port"] == 6379
    assert service["spec"]["selector"].items() <= redis["spec"]["template"]["metadata"]["labels"].items()
    assert redis["spec"]["replicas"] == 1 and redis["spec"]["strategy"]["type"] == "Recreate"
    box = redis["spec"]["template"]["spec"]["containers"][0]
    assert {"readinessProbe", "livenessProbe"} <= box.keys() and box["resources"]["requests"]["memory"]
    # podman kube play (tests/test_k8s_play.py) turns an httpGet or tcpSocket liveness probe into curl or nc,
    # which neither image carries: exec probes run the same under a kubelet and under podman
    assert "exec" in app["livenessProbe"] and "exec" in box["livenessProbe"]


def test_yamllint_passes_every_yaml_file():
    config = "{extends: default, rules: {line-length: {max: 120}, document-start: disable}}"
    out = run(tool("yamllint"), "--strict", "-d", config, "deploy/")
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_liveness_probe_command_passes_on_a_healthy_server_only():
    """deploy/k8s's liveness probe, `python -m lab.health`, run as the probe runs it (PORT from the environment)
    against a stdlib HTTP server: 200 on /_stcore/health passes; a 503 there, or nothing listening, fails."""
    import http.server
    import threading

    from lab.testing.browser import free_port

    class Health(http.server.BaseHTTPRequestHandler):
        status = 200

        def do_GET(self):
            self.send_response(Health.status if self.path == "/_stcore/health" else 404)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def probe(port: int) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "lab.health"], cwd=ROOT, capture_output=True, text=True,
                              timeout=30, env={**os.environ, "PORT": str(port)})

    try:
        assert probe(server.server_port).returncode == 0
        Health.status = 503
        out = probe(server.server_port)
        assert out.returncode == 1 and "503" in out.stderr
    finally:
        server.shutdown()
        server.server_close()
    assert probe(free_port()).returncode == 1
