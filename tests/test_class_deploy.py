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
    assert {p.name for p in MANIFESTS} == {"deployment.yaml", "service.yaml", "ingress.yaml"}
    out = run(tool("kubernetes-validate"), "--strict", *map(str, MANIFESTS))
    assert out.returncode == 0, out.stdout + out.stderr
    kinds = {d["kind"]: d for p in MANIFESTS for d in yaml.safe_load_all(p.read_text())}
    pod = kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert pod["readinessProbe"]["httpGet"]["path"] == "/_stcore/health"
    assert pod["resources"]["requests"]["memory"] == "2Gi"  # the hosted bench's 1.74 GB peak, rounded up
    assert kinds["Ingress"]["metadata"]["annotations"]["nginx.ingress.kubernetes.io/affinity"] == "cookie"


def test_yamllint_passes_every_yaml_file():
    config = "{extends: default, rules: {line-length: {max: 120}, document-start: disable}}"
    out = run(tool("yamllint"), "--strict", "-d", config, "deploy/")
    assert out.returncode == 0, out.stdout + out.stderr
