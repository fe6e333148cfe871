"""A fake Hugging Face hub on a loopback port: the real huggingface_hub client downloads from it.

No machine here reaches the hub, so the download path (lab.models.hub.download -> snapshot_download ->
HEAD + GET per file) is tested against this: it answers the few calls that path makes (repo info,
the file tree, HEAD and GET on /resolve/), logs every request, and can drop a connection half-way
through a file, as flaky wifi does.

    with fake_hub({"openai-community/gpt2": files_of(tiny_dir)}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        ...
        hub.requests  # [("GET", "/api/models/openai-community/gpt2/revision/main"), ...]
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SHA = "0123456789abcdef0123456789abcdef01234567"  # the one commit every fake repo is at


def files_of(model_dir: Path) -> dict[str, bytes]:
    """{filename: bytes} of the plain files of a model directory (what its hub repo would hold)."""
    return {p.name: p.read_bytes() for p in sorted(Path(model_dir).iterdir()) if p.is_file()}


class FakeHub:
    """What the server serves and what it saw. `drop[file] = n`: every GET of `file` sends n bytes, then
    hangs up; `before_body[file]`: called just before a GET of `file` sends its body (e.g. to fill a disk)."""

    def __init__(self, repos: dict[str, dict[str, bytes]]):
        self.repos = repos
        self.drop: dict[str, int] = {}
        self.before_body: dict[str, object] = {}
        self.requests: list[tuple[str, str]] = []
        self.url = ""
        self._lock = threading.Lock()

    def downloads(self) -> list[str]:
        """Paths of the file bodies that were asked for (GET on /resolve/)."""
        with self._lock:
            return [p for m, p in self.requests if m == "GET" and "/resolve/" in p]

    def _log(self, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((method, path))


def _etag(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _handler(hub: FakeHub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head=False) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            if "Content-Length" not in (headers or {}):
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _json(self, value, head=False) -> None:
            self._send(200, json.dumps(value).encode(), {"Content-Type": "application/json"}, head)

        def _route(self, head: bool) -> None:
            path = self.path.split("?")[0]
            hub._log(self.command, self.path)
            if path.rstrip("/") == "/api/models":
                return self._json([], head)
            for repo, files in hub.repos.items():
                revision = re.fullmatch(rf"/api/models/{re.escape(repo)}/revision/[^/]+", path)
                if path == f"/api/models/{repo}" or revision:
                    return self._json({"id": repo, "modelId": repo, "sha": SHA, "private": False,
                                       "siblings": [{"rfilename": f} for f in files]}, head)
                if re.fullmatch(rf"/api/models/{re.escape(repo)}/tree/[^/]+/?", path):
                    return self._json([{"type": "file", "oid": _etag(d), "size": len(d), "path": f}
                                       for f, d in files.items()], head)
                found = re.fullmatch(rf"/{re.escape(repo)}/resolve/[^/]+/(.+)", path)
                if found:
                    return self._file(files, found.group(1), head)
            return self._send(404, b'{"error": "not found"}', {"Content-Type": "application/json",
                                                               "X-Error-Code": "RepoNotFound"}, head)

        def _file(self, files: dict[str, bytes], name: str, head: bool) -> None:
            if name not in files:
                return self._send(404, b"", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": SHA}, head)
            data = files[name]
            start = 0
            ranged = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
            if ranged:
                start = int(ranged.group(1))
            headers = {"X-Repo-Commit": SHA, "ETag": f'"{_etag(data)}"', "Content-Length": str(len(data) - start),
                       "Accept-Ranges": "bytes"}
            if head:
                return self._send(200, b"", {**headers, "Content-Length": str(len(data))}, head=True)
            cut = hub.drop.get(name)
            if name in hub.before_body:
                hub.before_body[name]()
            self.send_response(206 if ranged else 200)
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            if cut is not None:  # the connection drops half-way through the body
                self.wfile.write(data[start:start + cut])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(data[start:])

        def do_HEAD(self):
            self._route(head=True)

        def do_GET(self):
            self._route(head=False)

    return Handler


@contextlib.contextmanager
def fake_hub(repos: dict[str, dict[str, bytes]]) -> Iterator[FakeHub]:
    """Serve `repos` ({hub_id: {filename: bytes}}) on a free 127.0.0.1 port until the block ends."""
    hub = FakeHub(repos)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
