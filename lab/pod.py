"""A class of hundreds through containers on one machine (issue 49): a podman pod with N app containers, Redis for
the rooms they share, and HAProxy in front with sticky cookies, what deploy/compose.yaml describes for Docker.

    python -m lab.pod up --port 8501 --replicas 2      # needs make image and deploy/standins.sh (or the official
    python -m lab.pod down                             #   haproxy:2.6 and redis:7 where a registry is reachable)

The containers of a pod share one network namespace: replica i serves 127.0.0.1:(8501 + i) inside it, Redis
127.0.0.1:6379, and HAProxy (lab.replicas.haproxy_config: the proxy `lab replicas` runs for bare processes) listens
on 8500, published on the host's `--host:--port`. A reader whose replica dies is sent to a live one, its view kept
in the address; a room lives in Redis, so a teacher on one replica leads students on the other.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lab.container import podman_env
from lab.replicas import haproxy_config

POD = "gpt2-class"
IMAGE = "gpt2-explorer:latest"
PROXY_PORT, FIRST_PORT, REDIS_PORT = 8500, 8501, 6379
ROOMS_URL = f"redis://127.0.0.1:{REDIS_PORT}/0"


def podman(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check, timeout=300,
                          env=podman_env())


@dataclass
class Pod:
    """The pod's name, its containers (app replicas first, in port order) and the host address of its proxy."""

    name: str
    url: str
    apps: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)


def app_env(i: int) -> list[str]:
    """Replica i's environment: its port, the shared rooms, one torch thread (replicas share the machine's cores)."""
    return ["-e", f"PORT={FIRST_PORT + i}", "-e", f"LAB_ROOMS_URL={ROOMS_URL}", "-e", "OMP_NUM_THREADS=1"]


def up(port: int, replicas: int = 2, host: str = "127.0.0.1", name: str = POD, image: str = IMAGE,
       memory: str | None = None, config_dir: Path | None = None) -> Pod:
    """Start the pod (its proxy on host:port); raises CalledProcessError naming the podman step that failed."""
    cfg = Path(config_dir or tempfile.mkdtemp(prefix="lab-pod-")) / "haproxy.cfg"
    cfg.write_text(haproxy_config(PROXY_PORT, [FIRST_PORT + i for i in range(replicas)], host="0.0.0.0"))
    cfg.parent.chmod(0o755)
    cfg.chmod(0o644)
    podman("pod", "create", "--name", name, "-p", f"{host}:{port}:{PROXY_PORT}")
    pod = Pod(name, f"http://{host}:{port}")
    podman("run", "-d", "--pod", name, "--name", f"{name}-redis", "redis:7", "redis-server", "--bind", "127.0.0.1",
           "--port", str(REDIS_PORT), "--save", "", "--protected-mode", "no")
    pod.others.append(f"{name}-redis")
    limits = ["--memory", memory] if memory else []
    for i in range(replicas):
        podman("run", "-d", "--pod", name, "--name", f"{name}-app{i + 1}", "--read-only", "--tmpfs",
               "/tmp:rw,mode=1777", "--tmpfs", "/home/app/.cache:rw,mode=1777", *limits, *app_env(i), image)
        pod.apps.append(f"{name}-app{i + 1}")
    podman("run", "-d", "--pod", name, "--name", f"{name}-proxy", "-v",
           f"{cfg}:/usr/local/etc/haproxy/haproxy.cfg:ro,Z", "haproxy:2.6", "haproxy", "-W", "-db", "-f",
           "/usr/local/etc/haproxy/haproxy.cfg")
    pod.others.append(f"{name}-proxy")
    return pod


def down(name: str = POD) -> None:
    """Stop and remove the pod and its containers (nothing to do when there is none)."""
    podman("pod", "rm", "--force", "--time", "10", name, check=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lab.pod", description=__doc__.split("\n")[0])
    p.add_argument("action", choices=["up", "down"])
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--host", default="127.0.0.1", help="the host address to publish on (0.0.0.0: the classroom)")
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--image", default=IMAGE)
    args = p.parse_args(argv)
    if args.action == "down":
        down()
        return 0
    if not 1 <= args.replicas <= 8 or not 1 <= args.port <= 65535:
        print("python -m lab.pod: --replicas must be 1-8 and --port 1-65535", file=sys.stderr)
        return 2
    try:
        pod = up(args.port, args.replicas, args.host, image=args.image)
    except subprocess.CalledProcessError as e:
        down()
        print(f"python -m lab.pod: {' '.join(e.cmd[:4])} failed: {e.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return 1
    print(f"{pod.url}: {len(pod.apps)} replicas, Redis and HAProxy in pod {pod.name} (python -m lab.pod down)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
