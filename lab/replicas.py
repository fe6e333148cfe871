"""Several app processes behind a real HAProxy, for a class bigger than one process serves (issue 41).

Streamlit keeps a reader's session inside one process, so replicas need session affinity, and it must be by
cookie, never by client address: a class behind one school NAT shares one address. HAProxy (Debian's
/usr/sbin/haproxy) inserts a cookie naming the replica that served the first request
(`cookie SRV insert indirect nocache`), sends every later request and the websocket (HTTP upgrade, then a
tunnel) to it, checks each replica's `/_stcore/health` every second, and with `option redispatch` sends a
reader whose replica died to a live one: the page's frontend reconnects and reopens its view from the URL.

    with Class(replicas=2, port=8600) as c:      # N `streamlit run app.py` on free loopback ports + HAProxy
        c.proxy                                   # "http://127.0.0.1:8600"
        c.replicas                                # [{"port": ..., "pid": ...}, ...]

Every child is stopped when the block ends (SIGTERM, then SIGKILL after 10 s); on Linux each child also
gets SIGTERM should this process die without cleaning up (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from lab.errors import LabError

ROOT = Path(__file__).resolve().parents[1]  # the repository (app.py)
# glibc's malloc arenas, at most 2 per replica (as `make run` and the image set it): a server answering a class keeps
# a freed arena per thread that ran a page; after 30 own texts on the attention, lens and sampling pages (GPT-2 small's
# shapes) one process held 1,485 MB with glibc's default, 1,132 MB with 2, at the same speed (docs/hosting.md)
MALLOC_ARENA_MAX = "2"
HAPROXY = "/usr/sbin/haproxy"
MAX_REPLICAS = 32
COOKIE = "SRV"


class ReplicasError(LabError):
    """Cannot start the class. `reason`: "replicas" (count out of range), "port" (out of range or taken),
    "haproxy" (missing or refusing its config), "start" (a replica or the proxy did not come up in time)."""


def haproxy_config(port: int, replica_ports: list[int], host: str = "127.0.0.1") -> str:
    """HAProxy's configuration: one frontend on host:port, cookie-sticky round robin over the replicas."""
    servers = "\n".join(f"    server r{i} 127.0.0.1:{p} check cookie r{i}" for i, p in enumerate(replica_ports, 1))
    return f"""global
    maxconn 4096

defaults
    mode http
    option http-server-close
    option redispatch
    retries 3
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    timeout http-request 30s

frontend class
    bind {host}:{port}
    default_backend app

backend app
    balance roundrobin
    cookie {COOKIE} insert indirect nocache
    option httpchk GET /_stcore/health
    http-check expect status 200
    default-server inter 1s fall 2 rise 2
{servers}
"""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on `host` that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _port_taken(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies (Linux prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def healthy(url: str) -> bool:
    """True when Streamlit's health endpoint at `url` answers ok."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200 and r.read().strip() == b"ok"
    except OSError:
        return False


class Class:
    """N app replicas and HAProxy in front; a context manager that stops them all."""

    def __init__(self, replicas: int, port: int, hosted: bool = False, host: str = "127.0.0.1",
                 timeout: float = 180, log_dir: str | None = None):
        if not 1 <= replicas <= MAX_REPLICAS:
            raise ReplicasError(f"--replicas must be from 1 to {MAX_REPLICAS}, not {replicas}", "replicas",
                                value=replicas)
        if not 0 < port < 65536:
            raise ReplicasError(f"--port must be from 1 to 65535, not {port}", "port", value=port)
        self.n, self.port, self.hosted, self.host, self.timeout = replicas, port, hosted, host, timeout
        self.proxy = f"http://{host}:{port}"
        self.replicas: list[dict] = []
        self.procs: list[subprocess.Popen] = []
        self.haproxy: subprocess.Popen | None = None
        self._tmp = tempfile.TemporaryDirectory(prefix="lab-replicas-")
        self.log_dir = Path(log_dir or self._tmp.name)

    def __enter__(self) -> Class:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _spawn(self, cmd: list[str], log: str, env: dict | None = None) -> subprocess.Popen:
        out = open(self.log_dir / log, "wb")  # noqa: SIM115  (the child holds it; closed with the class)
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, **(env or {})}, preexec_fn=_die_with_parent)
        out.close()
        self.procs.append(proc)
        return proc

    def start(self) -> None:
        """Start every replica and the proxy; return once every replica and the proxy answer their health check."""
        if not os.access(HAPROXY, os.X_OK) and not shutil.which("haproxy"):
            raise ReplicasError("HAProxy is not installed (apt-get install -y haproxy)", "haproxy")
        if _port_taken(self.host, self.port):
            raise ReplicasError(f"port {self.port} is already in use on {self.host}", "port", value=self.port)
        env = ({"LAB_HOSTED": "1"} if self.hosted else {}) | {"MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX",
                                                                                               MALLOC_ARENA_MAX)}
        for i in range(1, self.n + 1):
            p = free_port()
            proc = self._spawn([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(p),
                                "--server.address", "127.0.0.1"], f"replica-{i}.log", env)
            self.replicas.append({"port": p, "pid": proc.pid, "name": f"r{i}"})
        config = self.log_dir / "haproxy.cfg"
        config.write_text(haproxy_config(self.port, [r["port"] for r in self.replicas], self.host))
        binary = HAPROXY if os.access(HAPROXY, os.X_OK) else shutil.which("haproxy")
        check = subprocess.run([binary, "-c", "-q", "-f", str(config)], capture_output=True, text=True)
        if check.returncode != 0:
            raise ReplicasError(f"HAProxy refused its config: {(check.stderr or check.stdout).strip()[-300:]}",
                                "haproxy")
        self._wait([f"http://127.0.0.1:{r['port']}" for r in self.replicas])
        self.haproxy = self._spawn([binary, "-db", "-f", str(config)], "haproxy.log")
        self._wait([self.proxy])

    def _wait(self, urls: list[str]) -> None:
        """Until every url answers its health check; ReplicasError if a child exits or time runs out."""
        deadline = time.monotonic() + self.timeout
        waiting = list(urls)
        while waiting:
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise ReplicasError(f"a process exited while starting (pid {dead[0].pid}, status "
                                    f"{dead[0].returncode}); logs in {self.log_dir}", "start")
            if time.monotonic() > deadline:
                raise ReplicasError(f"not healthy after {self.timeout:g} s: {', '.join(waiting)}", "start")
            waiting = [u for u in waiting if not healthy(u)]
            if waiting:
                time.sleep(0.25)

    def stop(self) -> None:
        """SIGTERM every child (the proxy first), then SIGKILL what is left after 10 s; wait for all."""
        procs = ([self.haproxy] if self.haproxy else []) + [p for p in self.procs if p is not self.haproxy]
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._tmp.cleanup()

    def description(self) -> dict:
        """The --json document: the proxy's URL and each replica's port and process id."""
        return {"proxy": self.proxy, "replicas": [{"port": r["port"], "pid": r["pid"]} for r in self.replicas]}
