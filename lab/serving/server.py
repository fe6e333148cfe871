"""An OpenAI-compatible HTTP server for one decoder (chapter 14): FastAPI + uvicorn over lab.serving.engine.

GET /health, GET /v1/models, POST /v1/completions and POST /v1/chat/completions (the chat template of
lab.serving.chat). Completions take prompt (a string, a list of strings, a list of token ids or a list of lists),
max_tokens, temperature (below 1e-5: greedy), top_p, top_k (-1 or 0: off), seed, n, stream, stream_options
(include_usage, continuous_usage_stats), logprobs, echo, stop, ignore_eos; `stream: true` sends server-sent
events, `data: {...}` chunks (one per drawn token), then `data: [DONE]`. docs/serving.md compares every field with
vLLM's server and says why each difference is there.

No request hurts another: every request is checked whole before it joins a batch (tokenized off the event loop,
behind a body-size limit); special tokens never reach the returned text; a client that leaves (streaming or not)
frees its slot at the next token. Bad requests get a 4xx with an OpenAI-style body {"error": {"message", "type",
"param", "code"}}, never a traceback: malformed JSON or UTF-8, lone surrogates, unknown or out-of-range fields, a
prompt over the context, another model's name, a wrong key (401, compared in constant time), a Host header that is
not a loopback name while bound to loopback (400: DNS rebinding). At most `max_concurrent` requests run and
`max_queue` more wait; beyond that, 429.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import secrets
import threading
import time
import uuid
from typing import Literal

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.datastructures import Headers

from lab.errors import LabError
from lab.serving import chat
from lab.serving.engine import GREEDY_BELOW, Engine, Job, prompt_logprobs, scheduler_of

LOOPBACK = ("127.0.0.1", "localhost", "::1")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
MAX_BODY = 8 * 1024 * 1024  # bytes: a 4 MB prompt is read (and refused for its length), 8 MB more is 413
log = logging.getLogger("lab.serve")


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    include_usage: bool | None = False
    continuous_usage_stats: bool | None = False


class Sampling(BaseModel):
    """The fields both endpoints read; any other field is refused (400), so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")
    model: str
    max_tokens: int | None = Field(None, ge=1)
    temperature: float = Field(1.0, ge=0, le=2)
    top_p: float = Field(1.0, gt=0, le=1)
    top_k: int = Field(0, ge=-1, le=100_000)
    seed: int | None = Field(None, ge=0, lt=2**63)
    stream: bool = False
    stream_options: StreamOptions | None = None
    stop: str | list[str] | None = None
    n: int = Field(1, ge=1, le=8)
    presence_penalty: float = Field(0.0, ge=-2, le=2)
    frequency_penalty: float = Field(0.0, ge=-2, le=2)
    ignore_eos: bool = False
    user: str | None = None


class CompletionRequest(Sampling):
    prompt: str | list[str] | list[int] | list[list[int]]
    logprobs: int | None = Field(None, ge=0, le=5)
    echo: bool = False
    suffix: str | None = None


class TextPart(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["text"]
    text: str


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart]
    name: str | None = None


class ChatRequest(Sampling):
    messages: list[Message] = Field(min_length=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    logprobs: bool | None = None
    top_logprobs: int | None = None


@dataclasses.dataclass
class Options:
    """The server's settings (the CLI's flags). `batching`: True (= "static"), False (= "off") or a scheduler."""

    api_key: str | None = None
    max_concurrent: int = 8
    max_queue: int = 16
    batching: bool | str = True
    cache: bool = True
    host: str = "127.0.0.1"


class Slots:
    """Running and waiting requests: `take` refuses (False) beyond max_concurrent + max_queue."""

    def __init__(self, options: Options):
        self.limit, self.lock, self.active = options.max_concurrent + options.max_queue, threading.Lock(), 0

    def take(self, n: int = 1) -> bool:
        with self.lock:
            if self.active + n > self.limit:
                return False
            self.active += n
            return True

    def give(self, n: int = 1) -> None:
        with self.lock:
            self.active -= n


class Refused(LabError):
    """A request refused before it reaches the engine: the OpenAI-style error to answer with. Reason: its OpenAI
    `code`, or "invalid_request"; details: status (HTTP), param, code, kind (the error's type). Made by `refuse`."""


def refuse(status: int, message: str, param: str | None = None, code: str | None = None,
           kind: str = "invalid_request_error") -> Refused:
    """Refused(message) with its HTTP status and OpenAI error fields."""
    return Refused(message, code or "invalid_request", status=status, param=param, code=code, kind=kind)


def error(status: int, message: str, kind: str = "invalid_request_error", param: str | None = None,
          code: str | None = None):
    """An OpenAI-style error response."""
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}}, status)


def _stops(stop) -> list[str]:
    return [] if stop is None else [stop] if isinstance(stop, str) else list(stop)


class Completion:
    """One choice's tokens as they come from the engine: decoded incrementally without special tokens (a
    character split over two tokens is written once whole), cut at a stop string, pushed to the request's asyncio
    queue as (index, kind, value, logprobs). Text that could be the start of a stop string is held back until the
    next tokens say whether it is one (a stop string split over tokens is never streamed in part), and sent at the
    end if it was not."""

    def __init__(self, tokenizer, index: int, stops: list[str], want_logprobs: bool, loop, queue: asyncio.Queue,
                 offset: int = 0):
        self.tok, self.index, self.loop, self.queue, self.offset = tokenizer, index, loop, queue, offset
        self.new, self.text, self.stops, self.want = [], "", stops, want_logprobs
        self.logprobs = {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}
        self.reason = None
        self.sent = 0  # characters of self.text already streamed

    def emit(self, token: int, logprob: float, top: list) -> bool:
        self.new.append(token)
        whole = self.tok.decode(self.new, skip_special_tokens=True)
        if not whole.endswith("\ufffd"):  # else half a character: wait for the rest
            self.text = whole
        cut = min((self.text.find(s) for s in self.stops if s in self.text), default=-1)
        if cut >= 0:
            self.text = self.text[:cut]
        ready = len(self.text) if cut >= 0 else len(self.text) - self._held(self.text)
        start = min(self.sent, ready)
        piece, self.sent = self.text[start:ready], max(self.sent, ready)
        lp = self.entry([(token, logprob, top)], self.offset + start)
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (self.index, "token", piece, lp))
        return cut < 0

    def _held(self, text: str) -> int:
        """The length of the longest end of `text` that begins a stop string (0 without stops)."""
        return max((n for s in self.stops for n in range(min(len(s) - 1, len(text)), 0, -1)
                    if text.endswith(s[:n])), default=0)

    def entry(self, steps: list[tuple], offset: int) -> dict | None:
        """The logprobs object of `steps` ((token, logprob, top) each), appended to the choice's whole one."""
        if not self.want:
            return None
        entry = {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}
        for token, logprob, top in steps:
            text = self.tok.decode([token])
            entry["tokens"].append(text)
            entry["token_logprobs"].append(logprob)
            entry["top_logprobs"].append(None if logprob is None else {self.tok.decode([i]): v for i, v in top})
            entry["text_offset"].append(offset)
            offset += len(text)
        for k, v in entry.items():
            self.logprobs[k] += v
        return entry

    def done(self, reason: str) -> None:
        if self.sent < len(self.text):  # held back for a stop string that never came
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (self.index, "token", self.text[self.sent:], None))
            self.sent = len(self.text)
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (self.index, "done", reason, None))


class _Gate:
    """The Host-header and API-key checks before any route, as a plain ASGI middleware: Starlette's
    BaseHTTPMiddleware (`@app.middleware("http")`) wraps `receive`, and a route behind it never sees its client
    hang up (request.is_disconnected() stays False), so a non-streamed request kept its slot to the end."""

    def __init__(self, app, options: Options):
        self.app, self.options = app, options

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            if self.options.host in LOOPBACK and _host_name(headers.get("host", "")) not in LOOPBACK_HOSTS:
                return await error(400, "this server is bound to loopback and answers only Host: localhost, "
                                   "127.0.0.1 or [::1]", code="invalid_host_header")(scope, receive, send)
            if self.options.api_key and scope["path"].startswith("/v1/") and not _key_ok(
                    headers.get("authorization", ""), self.options.api_key):
                return await error(401, "Incorrect API key provided", code="invalid_api_key")(scope, receive, send)
        await self.app(scope, receive, send)


def make_app(loaded, options: Options):
    """The FastAPI app serving `loaded` (a decoder) with `options`."""
    from fastapi import FastAPI

    app = FastAPI(title="lab serve", docs_url=None, redoc_url=None, openapi_url=None)
    engine = Engine(loaded.model, scheduler_of(options.batching), options.cache, max_batch=options.max_concurrent)
    slots = Slots(options)
    app.state.engine, app.state.slots = engine, slots
    serving = _Serving(loaded, engine, slots)

    _errors(app)

    app.add_middleware(_Gate, options=options)

    @app.get("/health")
    async def health():
        return {"status": "ok", "model": loaded.name, "active": slots.active, "batching": engine.batching,
                "scheduler": engine.scheduler, "cache": options.cache}

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": loaded.name, "object": "model", "created": 0, "owned_by": "lab"}]}

    @app.post("/v1/completions")
    async def completions(req: CompletionRequest, request: Request):
        return await serving.complete(req, request)

    @app.post("/v1/chat/completions")
    async def chat_completions(req: ChatRequest, request: Request):
        return await serving.chat(req, request)

    return _BodyLimit(app, MAX_BODY)


def _errors(app) -> None:
    """Every error the app answers, in OpenAI's shape: validation, routes, refusals, and anything unforeseen."""
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

    @app.exception_handler(RequestValidationError)
    async def invalid(request, exc):
        first = exc.errors()[0] if exc.errors() else {}
        where = [str(p) for p in first.get("loc", ()) if p != "body"]
        message = "the body is not valid JSON" if first.get("type") == "json_invalid" else (
            f"{'.'.join(where) or 'body'}: {first.get('msg', 'invalid')}")
        return error(400, message, param=None if first.get("type") == "json_invalid" else ".".join(where) or None)

    @app.exception_handler(HTTPException)
    async def http_error(request, exc):
        if exc.status_code == 404:
            return error(404, f"no such route: {request.method} {request.url.path}", code="not_found")
        if exc.status_code == 405:
            return error(405, f"{request.method} is not allowed on {request.url.path}", code="method_not_allowed")
        message = "the body is not valid JSON (or not UTF-8)" if exc.status_code == 400 else str(exc.detail)
        return error(exc.status_code, message)

    @app.exception_handler(Refused)
    async def refused(request, exc: Refused):
        d = exc.details
        return error(d["status"], str(exc), d["kind"], d["param"], d["code"])

    @app.exception_handler(Exception)
    async def crashed(request, exc):
        log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
        return error(500, "the server failed on this request (logged)", kind="server_error")


def _host_name(host: str) -> str:
    """The name in a Host header, without its port ("[::1]:8000" -> "[::1]")."""
    if host.startswith("["):
        return host[:host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0].lower() if ":" in host else host.lower()


def _key_ok(header: str, key: str) -> bool:
    """'Bearer <key>' (the scheme in any case), compared in constant time."""
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), key.encode())


class _BodyLimit:
    """ASGI wrapper: a body over `limit` bytes is answered 413 (by its Content-Length, or while it arrives)."""

    def __init__(self, app, limit: int):
        self.app, self.limit, self.state = app, limit, app.state

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self.limit:
            return await _send_413(send, self.limit)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge("the body is over the limit", "too_large")
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _send_413(send, self.limit)


class _TooLarge(LabError):
    """A body that passed its Content-Length check and then sent more: answered with a 413."""


async def _send_413(send, limit: int) -> None:
    body = json.dumps({"error": {"message": f"the body is over {limit // (1024 * 1024)} MB", "type":
                                 "invalid_request_error", "param": None, "code": "body_too_large"}}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class _Serving:
    """What both endpoints do: check the request whole, tokenize off the event loop, take slots (or 429), submit
    one job per choice, answer whole or as a stream."""

    def __init__(self, loaded, engine: Engine, slots: Slots):
        from lab.models import context_of

        self.loaded, self.engine, self.slots = loaded, engine, slots
        self.context, self.vocab = context_of(loaded.model.config), loaded.model.config.vocab_size
        self.tokenize_lock = threading.Lock()  # a fast tokenizer is not safe to call from two threads at once

    async def complete(self, req: CompletionRequest, request):
        self._check(req)
        if req.suffix is not None:
            raise refuse(400, "suffix is not supported: GPT-2 only continues text (no fill-in-the-middle)",
                          "suffix", "unsupported_parameter")
        prompts = _prompts(req.prompt)
        for p in prompts:
            if isinstance(p, str):
                _text_ok(p, "prompt")
        ids = [await asyncio.to_thread(self._ids, p, req.max_tokens or 16) for p in prompts]
        echo = None
        if req.echo:
            echo = [await asyncio.to_thread(prompt_logprobs, self.loaded.model, i, req.logprobs or 0) for i in ids]
        return await self._run(req, request, ids, req.max_tokens or 16, chat=False, echo=echo,
                               logprobs=req.logprobs is not None)

    async def chat(self, req: ChatRequest, request):
        self._check(req)
        if req.logprobs or req.top_logprobs:
            raise refuse(400, "logprobs are not supported on /v1/chat/completions here: use /v1/completions",
                          "logprobs", "unsupported_parameter")
        messages = [{"role": m.role, "content": m.content if isinstance(m.content, str) else
                     "".join(p.text for p in m.content)} for m in req.messages]
        for m in messages:
            _text_ok(m["content"], "messages")
        limit = req.max_completion_tokens or req.max_tokens or 16
        ids = [await asyncio.to_thread(self._ids, chat.render(messages), limit)]
        return await self._run(req, request, ids, limit, chat=True)

    def _check(self, req: Sampling) -> None:
        if req.model != self.loaded.name:
            raise refuse(404, f"the model {req.model!r} is not served here; this server serves "
                          f"{self.loaded.name!r}", "model", "model_not_found")
        for name in ("presence_penalty", "frequency_penalty"):
            if getattr(req, name):
                raise refuse(400, f"{name} is not supported (transformers' generate has no such penalty): send 0",
                              name, "unsupported_parameter")
        for s in _stops(req.stop):
            _text_ok(s, "stop")

    def _ids(self, prompt, max_tokens: int) -> list[int]:
        """The prompt's token ids, checked against the vocabulary and the context (run in a worker thread). A very
        long text is first measured on a prefix: one over the context is refused without reading the rest."""
        if isinstance(prompt, list):
            if not prompt or any(not 0 <= i < self.vocab for i in prompt):
                raise refuse(400, f"token ids must be from 0 to {self.vocab - 1}, and a prompt non-empty", "prompt")
            ids = prompt
        else:
            if not prompt:
                raise refuse(400, "give a non-empty prompt", "prompt")
            head = prompt[:64 * self.context]
            with self.tokenize_lock:
                ids = self.loaded.tokenizer(head, verbose=False)["input_ids"]
                if len(head) < len(prompt) and len(ids) <= self.context:
                    ids = self.loaded.tokenizer(prompt, verbose=False)["input_ids"]
            ids = list(ids)
        if len(ids) + max_tokens > self.context:
            at_least = "at least " if isinstance(prompt, str) and len(prompt) > 64 * self.context else ""
            raise refuse(400, f"the prompt is {at_least}{len(ids)} tokens and max_tokens {max_tokens}: more than the "
                          f"context of {self.context}", "max_tokens", "context_length_exceeded")
        return ids

    async def _run(self, req: Sampling, request, ids: list[list[int]], max_tokens: int, chat: bool, echo=None,
                   logprobs: bool = False):
        n = len(ids) * req.n
        if n > self.slots.limit:
            raise refuse(400, f"{n} choices in one request: more than this server's {self.slots.limit} slots", "n")
        if not self.slots.take(n):
            raise refuse(429, "too many requests at once: try again shortly", None, "rate_limit_exceeded",
                          "rate_limit_error")
        rid = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex[:24]}"
        queue: asyncio.Queue = asyncio.Queue()
        loop, outs, jobs = asyncio.get_running_loop(), [], []
        stops = _stops(req.stop) + (chat_stops() if chat else [])
        for index in range(n):
            prompt = ids[index // req.n]
            text = self.loaded.tokenizer.decode(prompt) if echo else ""
            out = Completion(self.loaded.tokenizer, index, stops, logprobs, loop, queue, len(text))
            out.prompt_text = text
            if echo:
                out.entry([(t, lp, top) for t, (lp, top) in zip(prompt, echo[index // req.n], strict=True)], 0)
            outs.append(out)
            jobs.append(Job(prompt, max_tokens, 0.0 if req.temperature < GREEDY_BELOW else req.temperature,
                            0 if req.top_k == -1 else req.top_k, req.top_p, (req.seed or 0) + index, out.emit,
                            out.done, top_logprobs=(req.logprobs or 0) if logprobs else 0,
                            logprobs=logprobs, ignore_eos=req.ignore_eos, request_id=f"{rid}/{index}"))
        for job in jobs:
            self.engine.submit(job)
        answer = _Answer(rid, self.loaded.name, chat, req, outs, ids)
        if req.stream:
            from fastapi.responses import StreamingResponse

            return StreamingResponse(_events(answer, queue, jobs, self.slots), media_type="text/event-stream")
        watch = asyncio.create_task(_watch(request, jobs))
        try:
            await _drain(queue, outs)
        finally:
            watch.cancel()
            for job in jobs:
                job.cancelled.set()
            self.slots.give(n)
        failed = next((o.reason for o in outs if o.reason.startswith("error")), None)
        if failed:
            return error(500, f"the engine failed on this request ({rid}): {failed[7:]}", kind="server_error")
        return answer.whole()


def chat_stops() -> list[str]:
    return list(chat.STOP)


def _prompts(prompt) -> list:
    """The prompts of a request: a string, a list of strings, a list of ids or a list of lists of ids."""
    if isinstance(prompt, str):
        return [prompt]
    if not prompt:
        raise refuse(400, "give a non-empty prompt", "prompt")
    if isinstance(prompt[0], int):
        return [prompt]
    return list(prompt)


def _text_ok(text: str, param: str) -> None:
    """400 for text that is not valid Unicode (a lone surrogate such as "\\ud800" from a JSON escape)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise refuse(400, f"{param} is not valid Unicode text (a lone surrogate?)", param, "invalid_text") from None


async def _watch(request, jobs: list[Job]) -> None:
    """Cancel the jobs once the client hangs up (a non-streamed request): the engine drops them at the next
    token, and the slots come back then."""
    while not await request.is_disconnected():
        await asyncio.sleep(0.05)
    for job in jobs:
        job.cancelled.set()


async def _drain(queue: asyncio.Queue, outs: list[Completion]) -> None:
    left = len(outs)
    while left:
        index, kind, value, _ = await queue.get()
        if kind == "done":
            outs[index].reason, left = value, left - 1


def _finish(reason: str) -> str:
    return "length" if reason == "length" else "stop"


class _Answer:
    """The response's shapes: whole, or chunk by chunk (completions or chat)."""

    def __init__(self, rid: str, model: str, chat: bool, req: Sampling, outs: list[Completion], ids: list):
        self.chat, self.req, self.outs = chat, req, outs
        self.head = {"id": rid, "object": "chat.completion" if chat else "text_completion",
                     "created": int(time.time()), "model": model}
        self.prompt_tokens = sum(len(i) for i in ids)

    def usage(self) -> dict:
        done = sum(len(o.new) for o in self.outs)
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": done,
                "total_tokens": self.prompt_tokens + done}

    def whole(self) -> dict:
        if self.chat:
            choices = [{"index": o.index, "message": {"role": "assistant", "content": o.text}, "logprobs": None,
                        "finish_reason": _finish(o.reason)} for o in self.outs]
        else:
            choices = [{"text": o.prompt_text + o.text, "index": o.index, "finish_reason": _finish(o.reason),
                        "logprobs": o.logprobs if o.want else None} for o in self.outs]
        return {**self.head, "choices": choices, "usage": self.usage()}

    def chunk(self, index: int, text: str | None, lp, finish: str | None) -> str:
        if self.chat:
            delta = {} if text is None else {"content": text}
            choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}
            body = {**self.head, "object": "chat.completion.chunk", "choices": [choice]}
        else:
            choice = {"text": text or "", "index": index, "logprobs": lp, "finish_reason": finish}
            body = {**self.head, "choices": [choice]}
        options = self.req.stream_options
        if options and options.include_usage:
            body["usage"] = self.usage() if options.continuous_usage_stats else None
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    def first(self) -> list[str]:
        """What is sent before any token: the chat role, or the echoed prompt."""
        if self.chat:
            out = []
            for o in self.outs:
                choice = {"index": o.index, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                          "finish_reason": None}
                out.append(f"data: {json.dumps({**self.head, 'object': 'chat.completion.chunk', 'choices': [choice]})}"
                           "\n\n")
            return out
        return [self.chunk(o.index, o.prompt_text, o.logprobs if o.want else None, None) for o in self.outs
                if o.prompt_text]

    def last(self) -> list[str]:
        options = self.req.stream_options
        if options and options.include_usage:
            obj = "chat.completion.chunk" if self.chat else "text_completion"
            return [f"data: {json.dumps({**self.head, 'object': obj, 'choices': [], 'usage': self.usage()})}\n\n"]
        return []


async def _events(answer: _Answer, queue: asyncio.Queue, jobs: list[Job], slots: Slots):
    """The server-sent events of one streamed request; leaving early (the client went away) cancels its jobs and
    frees the slots at once."""
    left = len(jobs)
    try:
        for line in answer.first():
            yield line
        while left:
            index, kind, value, lp = await queue.get()
            if kind == "token":
                yield answer.chunk(index, value, lp, None)
                continue
            left -= 1
            answer.outs[index].reason = value
            if value.startswith("error"):
                failure = {"message": f"the engine failed ({answer.head['id']}): {value[7:]}", "type": "server_error",
                           "param": None, "code": None}
                yield f"data: {json.dumps({'error': failure})}\n\n"
            else:
                yield answer.chunk(index, None if answer.chat else "", None, _finish(value))
        for line in answer.last():
            yield line
        yield "data: [DONE]\n\n"
    finally:
        for job in jobs:
            job.cancelled.set()
        slots.give(len(jobs))


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
