"""The explorer's image under podman, for the container tests and the class bench through a container.

    with container(IMAGE, cpus=2, memory="16g") as url:   # a fresh container on a free loopback port
        ...                                               # url.name: the container's name

The image is built by `make image` (deploy/build-image.sh); `build()` runs the same script. Podman's settings for
a machine without systemd come from deploy/podman/containers.conf, as the deploy scripts use them.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lab.container import podman_env
from lab.testing.browser import ROOT, ServerURL, free_port, served

IMAGE = "gpt2-explorer:latest"
BUILD = ROOT / "deploy" / "build-image.sh"
# Hugging Face's free CPU tier for a Space: 2 vCPU, 16 GB (docs/hosting.md).
FREE_TIER = {"cpus": 2, "memory": "16g"}
# As a Space runs it: uid 1000, nothing written outside the cache and temp directories.
READ_ONLY = ("--read-only", "--tmpfs", "/tmp:rw,mode=1777", "--tmpfs", "/home/app/.cache:rw,mode=1777")


env = podman_env  # deploy/podman/containers.conf where the deploy scripts would use it

def missing() -> str | None:
    """Why no container can run here, or None when podman can."""
    if shutil.which("podman") is None:
        return "podman is not installed (apt-get install podman runc)"
    return None


def podman(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    """One podman command, its output captured as text."""
    return subprocess.run(["podman", *args], capture_output=True, text=True, env=env(), check=check,
                          timeout=timeout)


def build(tag: str = IMAGE, port: int | None = None, context: Path = ROOT) -> str:
    """deploy/build-image.sh: the base, the torch wheel, the image (layers cached; `port` None: the Dockerfile's
    default). Its last line: the port, time and size. At a lower priority (nice 10, the processes it starts too):
    a test's build must not starve the other worker's real-browser tests."""
    out = subprocess.run(["nice", "-n", "10", str(BUILD), tag, str(port or ""), str(context)], capture_output=True,
                         text=True, env=env(), timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"building {tag} failed:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    return out.stdout.strip().splitlines()[-1]


def run_command(image: str, port: int, name: str, *, inside: int = 8501, cpus: float | None = None,
                memory: str | None = None, read_only: bool = True, environ: dict | None = None) -> list[str]:
    """`podman run` in the foreground (the caller's process is the container's lifetime), on 127.0.0.1:port."""
    cmd = ["podman", "run", "--rm", "--name", name, "-p", f"127.0.0.1:{port}:{inside}"]
    cmd += list(READ_ONLY) if read_only else []
    cmd += [f"--cpus={cpus}"] if cpus else []
    cmd += [f"--memory={memory}"] if memory else []
    for k, v in (environ or {}).items():
        cmd += ["-e", f"{k}={v}"]
    return [*cmd, image]


def tentative() -> int:
    """How many of the host's IPv6 addresses are still tentative (duplicate address detection running)."""
    try:
        lines = Path("/proc/net/if_inet6").read_text().splitlines()
    except OSError:
        return 0
    return sum(int(line.split()[4], 16) & 0x40 != 0 for line in lines)  # IFA_F_TENTATIVE


def settle(timeout: float = 10) -> None:
    """Wait until the host's network stops changing after podman added a container's veth (its IPv6 address
    settles a second or two later): Chromium aborts requests in flight with ERR_NETWORK_CHANGED until then."""
    deadline = time.monotonic() + timeout
    while tentative() and time.monotonic() < deadline:
        time.sleep(0.1)


@contextmanager
def container(image: str = IMAGE, *, inside: int = 8501, timeout: float = 180, **options) -> Iterator[ServerURL]:
    """A fresh container of `image` serving on a free loopback port; yields its URL (with .name, .proc, .log());
    stopped (SIGTERM through podman) and removed after."""
    port, name = free_port(), f"lab-{uuid.uuid4().hex[:10]}"
    cmd = run_command(image, port, name, inside=inside, **options)
    try:
        with served(cmd, port, timeout, env=env()) as url:
            url.name = name
            settle()
            yield url
    finally:
        podman("rm", "--force", "--time", "0", name, check=False)
