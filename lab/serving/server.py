"""An OpenAI-compatible HTTP server for one decoder (chapter 14): FastAPI + uvicorn over lab.serving.engine.

GET /health, GET /v1/models, POST /v1/completions (prompt, max_tokens, temperature, top_p, seed, stream,
logprobs, stop; top_k as an extension field), the legacy completions API: `stream: true` sends server-sent
events, `data: {...}` chunks (one per drawn token), then `data: [DONE]`. Bad requests get a 4xx with an
OpenAI-style body {"error": {"message", "type", "param", "code"}}, never a traceback: malformed JSON, unknown
or out-of-range fields, a prompt over the context, another model's name, a wrong key (401). At most
`max_concurrent` requests run and `max_queue` more wait; beyond that, 429. A client that leaves mid-stream
frees its slot at once (its job is cancelled).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lab.serving.engine import Engine, Job

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class CompletionRequest(BaseModel):
    """The fields this server reads; any other field is refused (400), so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")
    model: str
    prompt: str | list[str]
    max_tokens: int = Field(16, ge=1)
    temperature: float = Field(1.0, ge=0, le=2)
    top_p: float = Field(1.0, gt=0, le=1)
    top_k: int = Field(0, ge=0, le=100_000)
    seed: int = Field(0, ge=0, lt=2**63)
    stream: bool = False
    logprobs: int | None = Field(None, ge=0, le=5)
    stop: str | list[str] | None = None
    n: Literal[1] = 1
    user: str | None = None


@dataclasses.dataclass
class Options:
    """The server's settings (the CLI's flags)."""

    api_key: str | None = None
    max_concurrent: int = 8
    max_queue: int = 16
    batching: bool = True
    cache: bool = True


class Slots:
    """Running and waiting requests: `take` refuses (False) beyond max_concurrent + max_queue."""

    def __init__(self, options: Options):
        self.limit, self.lock, self.active = options.max_concurrent + options.max_queue, threading.Lock(), 0

    def take(self) -> bool:
        with self.lock:
            if self.active >= self.limit:
                return False
            self.active += 1
            return True

    def give(self) -> None:
        with self.lock:
            self.active -= 1


def error(status: int, message: str, kind: str = "invalid_request_error", param: str | None = None,
          code: str | None = None):
    """An OpenAI-style error response."""
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}}, status)


def _stops(stop) -> list[str]:
    return [] if stop is None else [stop] if isinstance(stop, str) else list(stop)


class Completion:
    """One request's tokens as they come from the engine: decoded incrementally (a character split over two
    tokens is written once whole), cut at a stop string, pushed to an asyncio queue as chunks. Text that could be
    the start of a stop string is held back until the next tokens say whether it is one (a stop string split over
    tokens is never streamed in part), and sent at the end if it was not."""

    def __init__(self, loaded, req: CompletionRequest, ids: list[int], loop, queue: asyncio.Queue):
        self.tok, self.req, self.loop, self.queue = loaded.tokenizer, req, loop, queue
        self.ids, self.new, self.text, self.stops = ids, [], "", _stops(req.stop)
        self.sent = 0  # characters of self.text already streamed
        self.logprobs = {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}

    def emit(self, token: int, logprob: float, top: list) -> bool:
        self.new.append(token)
        whole = self.tok.decode(self.new)
        if not whole.endswith("\ufffd"):  # else half a character: wait for the rest
            self.text = whole
        cut = min((self.text.find(s) for s in self.stops if s in self.text), default=-1)
        if cut >= 0:
            self.text = self.text[:cut]
        ready = len(self.text) if cut >= 0 else len(self.text) - self._held(self.text)
        start = min(self.sent, ready)
        piece, self.sent = self.text[start:ready], max(self.sent, ready)
        lp = self._logprob(token, logprob, top, start)
        self.loop.call_soon_threadsafe(self.queue.put_nowait, ("token", piece, lp))
        return cut < 0

    def _held(self, text: str) -> int:
        """The length of the longest end of `text` that begins a stop string (0 without stops)."""
        return max((n for s in self.stops for n in range(min(len(s) - 1, len(text)), 0, -1)
                    if text.endswith(s[:n])), default=0)

    def _logprob(self, token: int, logprob: float, top: list, offset: int) -> dict | None:
        if self.req.logprobs is None:
            return None
        text = self.tok.decode([token])
        entry = {"tokens": [text], "token_logprobs": [logprob],
                 "top_logprobs": [{self.tok.decode([i]): v for i, v in top}], "text_offset": [offset]}
        for k, v in entry.items():
            self.logprobs[k] += v
        return entry

    def done(self, reason: str) -> None:
        if self.sent < len(self.text):  # held back for a stop string that never came
            self.loop.call_soon_threadsafe(self.queue.put_nowait, ("token", self.text[self.sent:], None))
            self.sent = len(self.text)
        self.loop.call_soon_threadsafe(self.queue.put_nowait, ("done", reason, None))


def make_app(loaded, options: Options):
    """The FastAPI app serving `loaded` (a decoder) with `options`."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError

    app = FastAPI(title="lab serve", docs_url=None, redoc_url=None, openapi_url=None)
    engine = Engine(loaded.model, options.batching, options.cache, max_batch=options.max_concurrent)
    slots = Slots(options)
    app.state.engine, app.state.slots = engine, slots

    @app.exception_handler(RequestValidationError)
    async def invalid(request, exc):
        first = exc.errors()[0] if exc.errors() else {}
        where = [str(p) for p in first.get("loc", ()) if p != "body"]
        message = "the body is not valid JSON" if first.get("type") == "json_invalid" else (
            f"{'.'.join(where) or 'body'}: {first.get('msg', 'invalid')}")
        return error(400, message, param=None if first.get("type") == "json_invalid" else ".".join(where) or None)

    @app.exception_handler(404)
    async def not_found(request, exc):
        return error(404, f"no such route: {request.method} {request.url.path}", code="not_found")

    @app.exception_handler(405)
    async def not_allowed(request, exc):
        return error(405, f"{request.method} is not allowed on {request.url.path}", code="method_not_allowed")

    @app.middleware("http")
    async def key(request: Request, call_next):
        if options.api_key and request.url.path.startswith("/v1/") and \
                request.headers.get("authorization") != f"Bearer {options.api_key}":
            return error(401, "Incorrect API key provided", code="invalid_api_key")
        return await call_next(request)

    @app.get("/health")
    async def health():
        return {"status": "ok", "model": loaded.name, "active": slots.active, "batching": options.batching,
                "cache": options.cache}

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": loaded.name, "object": "model", "created": 0, "owned_by": "lab"}]}

    @app.post("/v1/completions")
    async def completions(req: CompletionRequest):
        return await _complete(loaded, engine, slots, req)

    return app


async def _complete(loaded, engine: Engine, slots: Slots, req: CompletionRequest):
    """Check the request, take a slot (or 429), submit the job, answer whole or as a stream."""
    from fastapi.responses import StreamingResponse

    from lab.models import context_of

    if req.model != loaded.name:
        return error(404, f"the model {req.model!r} is not served here; this server serves {loaded.name!r}",
                     param="model", code="model_not_found")
    prompts = [req.prompt] if isinstance(req.prompt, str) else req.prompt
    if len(prompts) != 1 or not prompts[0]:
        return error(400, "give one non-empty prompt", param="prompt")
    ids = list(loaded.tokenizer(prompts[0], verbose=False)["input_ids"])
    context = context_of(loaded.model.config)
    if len(ids) + req.max_tokens > context:
        return error(400, f"the prompt is {len(ids)} tokens and max_tokens {req.max_tokens}: more than the context "
                     f"of {context}", param="max_tokens", code="context_length_exceeded")
    if not slots.take():
        return error(429, "too many requests at once: try again shortly", kind="rate_limit_error",
                     code="rate_limit_exceeded")
    queue: asyncio.Queue = asyncio.Queue()
    out = Completion(loaded, req, ids, asyncio.get_running_loop(), queue)
    job = Job(ids, req.max_tokens, req.temperature, req.top_k, req.top_p, req.seed, out.emit, out.done,
              top_logprobs=req.logprobs or 0, logprobs=req.logprobs is not None)
    engine.submit(job)
    head = {"id": f"cmpl-{uuid.uuid4().hex[:24]}", "object": "text_completion", "created": int(time.time()),
            "model": loaded.name}
    if req.stream:
        return StreamingResponse(_events(head, queue, job, slots), media_type="text/event-stream")
    try:
        reason = await _drain(queue)
    finally:
        job.cancelled.set()
        slots.give()
    if reason.startswith("error"):
        return error(500, reason, kind="server_error")
    return {**head, "choices": [{"text": out.text, "index": 0, "finish_reason": _finish(reason),
                                 "logprobs": out.logprobs if req.logprobs is not None else None}],
            "usage": {"prompt_tokens": len(ids), "completion_tokens": len(out.new),
                      "total_tokens": len(ids) + len(out.new)}}


async def _drain(queue: asyncio.Queue) -> str:
    while True:
        kind, value, _ = await queue.get()
        if kind == "done":
            return value


def _finish(reason: str) -> str:
    return "length" if reason == "length" else "stop"


async def _events(head: dict, queue: asyncio.Queue, job: Job, slots: Slots):
    """The server-sent events of one streamed completion; leaving early (the client went away) cancels the job
    and frees the slot at once."""
    try:
        while True:
            kind, value, lp = await queue.get()
            if kind == "done":
                if value.startswith("error"):
                    yield f"data: {json.dumps({'error': {'message': value, 'type': 'server_error'}})}\n\n"
                else:
                    chunk = {**head, "choices": [{"text": "", "index": 0, "logprobs": None,
                                                  "finish_reason": _finish(value)}]}
                    yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
                yield "data: [DONE]\n\n"
                return
            chunk = {**head, "choices": [{"text": value, "index": 0, "logprobs": lp, "finish_reason": None}]}
            yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
    finally:
        job.cancelled.set()
        slots.give()


def run(loaded, host: str, port: int, options: Options) -> None:
    """Serve until interrupted."""
    import uvicorn

    uvicorn.run(make_app(loaded, options), host=host, port=port, log_level="warning", access_log=False)


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Spawned:
    """`python -m lab serve` in a subprocess on a free loopback port, for the page and the benchmarks: a context
    manager whose value is the base URL; the server is stopped on exit."""

    def __init__(self, model: str, *flags: str, timeout: float = 180):
        self.model, self.flags, self.timeout = model, flags, timeout
        self.port, self.proc = free_port(), None

    def __enter__(self) -> str:
        import http.client
        import os
        import subprocess
        import sys

        cmd = [sys.executable, "-m", "lab", "serve", "--model", self.model, "--port", str(self.port), *self.flags]
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"lab serve stopped: {self.proc.stderr.read().decode(errors='replace')[-500:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    return f"http://127.0.0.1:{self.port}"
            except OSError:
                time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"lab serve did not answer within {self.timeout:.0f} s")

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except Exception:  # noqa: BLE001 - a server that will not stop is killed
                self.proc.kill()
