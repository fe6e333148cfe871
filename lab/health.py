"""The container's liveness check: `python -m lab.health` exits 0 when the server in this container answers
Streamlit's health endpoint on $PORT within 2 s, else 1 with one line on stderr.

deploy/k8s/deployment.yaml's liveness probe runs it as an exec probe. An argument list with no spaces or shell
characters in it, because `podman kube play` (4.3, tests/test_k8s_play.py) joins an exec probe's arguments with
spaces into a shell command, and turns an httpGet probe into `curl`, which the image does not carry; a kubelet runs
the same list as it is. Imports nothing heavy (the standard library only): a probe every 20 s costs ~0.1 s.
"""

from __future__ import annotations

import os
import sys
import urllib.request

TIMEOUT_S = 2.0


def healthy(port: str, timeout: float = TIMEOUT_S) -> str | None:
    """None when http://127.0.0.1:port/_stcore/health answers 200, else why not (one line)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=timeout) as reply:
            return None if reply.status == 200 else f"HTTP {reply.status}"
    except (OSError, ValueError) as e:  # refused, timed out, an HTTP error status, a malformed port
        return str(e)


def main() -> int:
    port = os.environ.get("PORT", "8501").strip()
    problem = healthy(port)
    if problem:
        print(f"lab.health: port {port}: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
