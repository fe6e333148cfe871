"""The decoding engine behind `python -m lab serve` (chapter 14): requests in, tokens out, one worker thread.

Each request is a `Job` (its prompt ids and settings, its own seed); the worker takes jobs from a queue and
streams every drawn token back to the job's callback as soon as it is drawn. Three schedulers:
- "off": one job at a time (the others wait in the queue).
- "static": the worker takes every job waiting when a batch starts, up to `max_batch`, and decodes them together:
  one forward pass per step for the whole batch (left padding, each row its own positions and its own key-value
  cache rows), each row drawn with its own settings and generator. A row that has finished stops advancing (it is
  fed padding that nothing attends to, at its last position), the batch ends when its last row does. Jobs arriving
  meanwhile wait for the next batch.
- "continuous" (Orca, OSDI 2022; vLLM): a job joins the running batch at the next token and a finished row leaves
  at once. Each newcomer's prompt is read alone (its own forward pass, its first token drawn as a lone job draws
  it); its key-value cache is then padded on the left and stacked under the others', and from then on every step is
  one forward pass of one new token per row. Without the cache each step re-reads every row's whole sequence.
  Newcomers are read shortest prompt first, and rows of far-apart lengths decode in separate groups (one forward
  pass per group and step): a 2,000-character prompt padded into thirty short rows made each of their steps read
  and copy its 500 columns (30 short readers on GPT-2 small's shapes: 7 s alone, 30-62 s beside one such text).
The key-value cache can be switched off in every scheduler: each step then re-reads every row's whole sequence.
A lone job in "off" runs through lab.sampling.steps itself, so a request draws exactly what `python -m lab sample`
draws for the same seed and settings. The shared model is only read.

A job that breaks while its tokens are drawn (its distribution, its callback) fails alone: it gets
`done("error: ...")`, the error is logged with its request id, the other rows go on. A forward pass that fails
for a whole batch fails that batch's rows (logged each), and the worker goes on.
"""

from __future__ import annotations

import atexit
import collections
import dataclasses
import json
import logging
import math
import queue
import threading
import weakref
from collections.abc import Callable

import torch

from lab import sampling
from lab.errors import LabError

WAIT_S = 0.02  # how long the static batching worker waits for more jobs once one has arrived
GREEDY_BELOW = 1e-5  # a temperature below this is greedy (as vLLM does): dividing by it overflows
SCHEDULERS = ("off", "static", "continuous")
log = logging.getLogger("lab.serve")


@dataclasses.dataclass
class Job:
    """One request: prompt ids, settings, and `emit(token_id, logprob, top)` called per drawn token, then
    `done(reason)` ("stop" at end-of-text, "length" at max_tokens, "cancelled", or "error: ...")."""

    ids: list[int]
    max_tokens: int
    temperature: float
    top_k: int
    top_p: float
    seed: int
    emit: Callable[[int, float, list], bool]  # returns False to stop this job (a stop string was written)
    done: Callable[[str], None]
    top_logprobs: int = 0
    logprobs: bool = False  # whether emit needs the token's log-probability (else it gets 0.0)
    cancelled: threading.Event = dataclasses.field(default_factory=threading.Event)
    ignore_eos: bool = False  # keep drawing after end-of-text (load generators ask for exact lengths)
    request_id: str = ""
    # A page's generation (lab.serving.shared): each step as lab.sampling.steps yields it (its `record_top`
    # candidates at every stage), drawn by lab.sampling.drawn at the job's exact temperature; emit is not called.
    on_step: Callable[[dict], bool] | None = None
    record_top: int = 0
    ticket: int = -1  # the engine's count of jobs submitted before this one (Engine.ahead)


_RUNNING: weakref.WeakSet = weakref.WeakSet()  # every engine whose worker may still run


@atexit.register
def close_all() -> None:
    """Stop every engine's worker, at the interpreter's exit (Engine.close says why)."""
    for engine in list(_RUNNING):
        engine.close()


class _Closed(LabError):
    """Engine.close's signal to its worker (`reason` "closed"); never reaches a reader."""


class EngineBusy(LabError):
    """The engine's queue is full (`reason` "busy", details: waiting, limit): the reader is told to try again."""


def scheduler_of(batching) -> str:
    """The scheduler's name from a bool (the first API: True = static, False = off) or a name."""
    name = {True: "static", False: "off"}.get(batching, batching) if isinstance(batching, bool) else batching
    if name not in SCHEDULERS:
        raise ValueError(f"batching must be one of {', '.join(SCHEDULERS)}, not {batching!r}")
    return name


class Engine:
    """One worker thread decoding jobs with one of SCHEDULERS, with or without the key-value cache."""

    def __init__(self, model, batching=True, cache: bool = True, max_batch: int = 8, max_waiting: int | None = None,
                 step_log: str | None = None):
        self.model, self.cache, self.max_batch, self.max_waiting = model, cache, max_batch, max_waiting
        self.step_log = step_log  # continuous: a file each step's groups are appended to (one JSON line; a bench's)
        self.scheduler = scheduler_of(batching)
        self.batching = self.scheduler != "off"
        self.eos = _eos(model)
        self.jobs: queue.Queue[Job] = queue.Queue()
        self.batches: collections.deque[int] = collections.deque(maxlen=10_000)  # recent batch (or step) sizes
        # continuous: each recent step's groups, (rows, longest row's length) each
        self.groups: collections.deque[tuple] = collections.deque(maxlen=10_000)
        self.submitted = self.taken = 0  # jobs put in the queue, and taken from it by the worker (Engine.ahead)
        self._count = threading.Lock()
        loop = self._continuous if self.scheduler == "continuous" else self._loop
        self._thread = threading.Thread(target=self._until_closed, args=(loop,), daemon=True, name="lab-engine")
        self._thread.start()
        _RUNNING.add(self)

    def close(self, timeout: float = 10.0) -> None:
        """Stop the worker (rows still decoding are dropped) and wait for it. The interpreter's exit with the daemon
        worker still inside torch aborted the process about one run in three ("terminate called without an active
        exception", exit status 134): every engine is closed at exit (close_all)."""
        self.jobs.put(None)
        self._thread.join(timeout)

    @staticmethod
    def _until_closed(loop) -> None:
        try:
            loop()
        except _Closed:
            return

    def submit(self, job: Job) -> None:
        """Queue a job; EngineBusy when `max_waiting` jobs wait already (a clear refusal, never a hang)."""
        with self._count:
            waiting = self.submitted - self.taken
            if self.max_waiting is not None and waiting >= self.max_waiting:
                raise EngineBusy(f"the engine is busy: {waiting} requests wait already", "busy", waiting=waiting,
                                 limit=self.max_waiting)
            job.ticket, self.submitted = self.submitted, self.submitted + 1
            self.jobs.put(job)

    def ahead(self, job: Job) -> int | None:
        """How many jobs wait in the queue before `job`; None once the worker has taken it (its prompt is being read,
        or it decodes)."""
        ahead = job.ticket - self.taken
        return None if ahead < 0 else ahead

    def _take(self, block: bool) -> Job:
        """The next job from the queue (queue.Empty when not blocking and none waits), counted as taken."""
        job = self.jobs.get() if block else self.jobs.get_nowait()
        if job is None:
            raise _Closed("the engine was closed", "closed")
        with self._count:
            self.taken += 1
        return job

    def _loop(self) -> None:
        while True:
            batch = [self._take(True)]
            if self.batching:
                threading.Event().wait(WAIT_S)
                while len(batch) < self.max_batch:
                    try:
                        batch.append(self._take(False))
                    except queue.Empty:
                        break
            batch = [j for j in batch if not _dropped(j)]
            if batch:
                self.batches.append(len(batch))
                try:
                    (self._one if len(batch) == 1 else self._many)(batch)
                except Exception as e:  # noqa: BLE001 - reported to every waiting client, the worker goes on
                    for j in batch:
                        _fail(j, e)

    def _one(self, batch: list[Job]) -> None:
        """A lone job: lab.sampling.steps, the CLI's own loop."""
        j = batch[0]
        gen = sampling.steps(self.model, j.ids, j.max_tokens, j.temperature if j.on_step else _temperature(j), j.top_k,
                             j.top_p, j.seed, top=j.record_top or sampling.TOP, use_cache=self.cache,
                             stop_at_eos=not j.ignore_eos)
        n = 0
        for step in gen:
            if j.cancelled.is_set():
                return j.done("cancelled")
            n += 1
            top = [(i, math.log(p)) for i, p in zip(step["candidates"]["id"], step["candidates"]["p_raw"],
                                                    strict=True)][:j.top_logprobs]
            kept = j.on_step(step) if j.on_step is not None else j.emit(step["id"], math.log(max(step["p_raw"], 1e-45)),
                                                                         top)
            if not kept:
                return j.done("stop")
            if step["id"] in self.eos and not j.ignore_eos:
                return j.done("stop")
        j.done("length" if n == j.max_tokens else "stop")

    def _many(self, batch: list[Job]) -> None:
        """Several jobs decoded together (static batch); finished rows stop advancing."""
        rows = _Rows(batch, self.model.config.pad_token_id or 0)
        gens = [torch.Generator().manual_seed(j.seed) for j in batch]
        live = [True] * len(batch)
        past = None
        for _ in range(max(j.max_tokens for j in batch)):
            logits, past = self._step(rows, past)
            nxt = []
            for r, j in enumerate(batch):
                token = self._next(j, logits[r], gens[r], rows.count(r) + 1) if live[r] else None
                live[r] = token is not None
                nxt.append(token)
            if not any(live):
                return
            rows.extend([self.pad if t is None else t for t in nxt], live)
        for r, j in enumerate(batch):
            if live[r]:
                j.done("length")

    @property
    def pad(self) -> int:
        return self.model.config.pad_token_id or 0

    def _next(self, j: Job, logits, gen, written: int) -> int | None:
        """Draw and report one row's token; None once the job is over (done already reported). Whatever breaks
        here fails this job alone."""
        try:
            if j.on_step is not None:  # a page's generation: lab.sampling's own step, at the job's temperature
                step = sampling.drawn(logits[None], j.temperature, j.top_k, j.top_p, gen, j.record_top or sampling.TOP)
                return step["id"] if self._report(j, step["id"], logits, written, step) else None
            token = _draw(logits, _distribution(logits, j), gen)
            return token if self._report(j, token, logits, written) else None
        except Exception as e:  # noqa: BLE001 - this request's own failure: the others go on
            _fail(j, e)
            return None

    def _report(self, j: Job, token: int, logits, written: int, step: dict | None = None) -> bool:
        """Hand one drawn token (or, to a page's job, its whole step) to its job; False once the job is over (and
        done reported)."""
        if j.cancelled.is_set():
            j.done("cancelled")
            return False
        if step is not None:
            kept = j.on_step(step)
        else:
            pairs, logprob = [], 0.0
            if j.logprobs or j.top_logprobs:
                logp = torch.log_softmax(logits.float(), -1)
                top = logp.topk(j.top_logprobs)
                pairs, logprob = list(zip(top.indices.tolist(), top.values.tolist(), strict=True)), float(logp[token])
            kept = j.emit(token, logprob, pairs)
        if not kept or (token in self.eos and not j.ignore_eos):
            j.done("stop")
            return False
        if written >= j.max_tokens:
            j.done("length")
            return False
        return True

    def eos_or_pad(self) -> int:
        return next(iter(self.eos), 0)

    def _step(self, rows: _Rows, past):
        """One forward pass for the whole batch: the last logits of every row (B, V) and the new cache."""
        cache = sampling.cache_argument(self.model) if self.cache else None
        with torch.inference_mode():
            if cache and past is not None:  # one new token per row against the cached keys and values
                out = self.model(input_ids=rows.last(), attention_mask=rows.mask(),
                                 position_ids=rows.positions()[:, -1:], use_cache=True, **{cache: past})
            else:
                out = self.model(input_ids=rows.ids(), attention_mask=rows.mask(), position_ids=rows.positions(),
                                 use_cache=bool(cache))
            return out.logits[:, -1].float(), (getattr(out, cache) if cache else None)

    # --- continuous batching -------------------------------------------------------------------------------

    def _continuous(self) -> None:
        """Join at the next token, leave when done: the running rows change between any two steps. A round's
        newcomers are read shortest prompt first; rows of far-apart lengths decode in separate groups (GROUP_SLACK),
        one forward pass per group and step."""
        groups: list[_Running] = []
        while True:
            live = sum(len(g.rows) for g in groups)
            waiting = [self._take(True)] if not live else []
            while live + len(waiting) < self.max_batch:
                try:
                    waiting.append(self._take(False))
                except queue.Empty:
                    break
            read = [self._read(j) for j in sorted(waiting, key=lambda j: len(j.ids)) if not _dropped(j)]
            groups = _place(groups, [r for r in read if r is not None], self.model, self.cache)
            if not groups:
                continue
            self.batches.append(sum(len(g.rows) for g in groups))
            self.groups.append(tuple((len(g.rows), g.width()) for g in groups))
            if self.step_log:
                _log_step(self.step_log, self.groups[-1])
            for g in groups:
                self._decode(g)
            groups = [g for g in groups if g.rows]

    def _read(self, j: Job):
        """A newcomer's prompt read alone and its first token drawn: (job, generator, token, its keys and values),
        or None when it failed or is already over."""
        try:
            gen = torch.Generator().manual_seed(j.seed)
            logits, kv = _prefill(self.model, sampling.cache_argument(self.model) if self.cache else None, j.ids)
        except Exception as e:  # noqa: BLE001 - this request's own failure
            return _fail(j, e)
        token = self._next(j, logits, gen, 1)
        return None if token is None else (j, gen, token, kv)

    def _decode(self, group: _Running) -> None:
        """One step of one group: a forward pass, each row's token drawn; a failed pass fails that group's rows."""
        try:
            logits = group.step()
        except Exception as e:  # noqa: BLE001 - a failed forward pass fails the rows in it
            for row in group.rows:
                _fail(row.job, e)
            return group.clear()
        group.advance([self._next(row.job, logits[r], row.gen, row.written + 1) for r, row in enumerate(group.rows)])


GROUP_SLACK = 64  # rows whose lengths differ by more than this and by more than the shorter one decode apart


def _place(groups: list[_Running], newcomers: list[tuple], model, cache: bool) -> list[_Running]:
    """Add each newcomer to the first group of a length close to its own (GROUP_SLACK), else to a new group; every
    group's keys and values are stacked once per round. A 2,000-character prompt padded into thirty short rows
    would make each of their steps read (and copy) its 500 columns: apart, it costs one small forward pass."""
    groups = [g for g in groups if g.rows]
    widths, joining = [g.width() for g in groups], [[] for _ in groups]
    for item in newcomers:
        n = len(item[0].ids) + 1
        k = next((i for i, w in enumerate(widths) if abs(w - n) <= max(GROUP_SLACK, min(w, n))), None)
        if k is None:
            groups.append(_Running(model, cache))
            widths.append(n)
            joining.append([])
            k = len(groups) - 1
        joining[k].append(item)
        widths[k] = max(widths[k], n)
    for g, items in zip(groups, joining, strict=True):
        if items:
            g.add_many(items)
    return groups


def _log_step(path: str, groups: tuple) -> None:
    """One step's groups, [[rows, longest row's length], ...], as a JSON line appended to `path`."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps([list(g) for g in groups]) + "\n")


def _prefill(model, name: str | None, ids: list[int]):
    """The prompt's last logits (V,) and its own keys and values (None without the cache), as a lone job reads it."""
    with torch.inference_mode():
        if name is None:
            return model(input_ids=torch.tensor([ids])).logits[0, -1].float(), None
        out = model(input_ids=torch.tensor([ids]), use_cache=True)
        return out.logits[0, -1].float(), [(layer.keys, layer.values) for layer in getattr(out, name).layers]


@dataclasses.dataclass
class _Row:
    job: Job
    gen: torch.Generator
    seq: list[int]  # prompt and drawn tokens
    written: int = 1


class _Running:
    """One group of the continuous batch: its rows, and (with the cache) every layer's keys and values stacked
    (B, H, T, D), left-padded, with the attention mask (B, T) saying which columns are real."""

    def __init__(self, model, cache: bool):
        self.model, self.name = model, sampling.cache_argument(model) if cache else None
        self.rows: list[_Row] = []
        self.kv: list[tuple] | None = None
        self.mask = None

    def clear(self) -> None:
        self.rows, self.kv, self.mask = [], None, None

    def width(self) -> int:
        """The longest row's length (prompt and drawn tokens)."""
        return max(len(r.seq) for r in self.rows)

    def add_many(self, items: list[tuple]) -> None:
        """Newcomers (job, generator, first token, keys and values) stacked under the rows, padded on the left
        once for all of them."""
        kvs = ([self.kv] if self.rows else []) + [kv for *_, kv in items]
        self.rows += [_Row(j, gen, [*j.ids, token]) for j, gen, token, _ in items]
        if self.name is None:
            return
        masks = ([self.mask] if self.mask is not None else []) + [torch.ones(1, kv[0][0].shape[2], dtype=torch.long)
                                                                  for *_, kv in items]
        width = max(m.shape[1] for m in masks)
        self.kv = [tuple(torch.cat([_left(kv[layer][half], width) for kv in kvs]) for half in (0, 1))
                   for layer in range(len(kvs[0]))]
        self.mask = torch.cat([_left(m, width) for m in masks])

    def step(self):
        """One forward pass: every row's next-token logits (B, V)."""
        with torch.inference_mode():
            if self.name is None:
                width = max(len(r.seq) for r in self.rows)
                ids = torch.tensor([[0] * (width - len(r.seq)) + r.seq for r in self.rows])
                mask = torch.tensor([[0] * (width - len(r.seq)) + [1] * len(r.seq) for r in self.rows])
                out = self.model(input_ids=ids, attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0))
                return out.logits[:, -1].float()
            from lab import hf_imports

            DynamicCache = hf_imports.name("DynamicCache")  # noqa: N806 (a class)

            self.mask = torch.cat([self.mask, torch.ones(len(self.rows), 1, dtype=self.mask.dtype)], dim=1)
            last = torch.tensor([[r.seq[-1]] for r in self.rows])
            positions = torch.tensor([[len(r.seq) - 1] for r in self.rows])
            out = self.model(input_ids=last, attention_mask=self.mask, position_ids=positions, use_cache=True,
                             **{self.name: DynamicCache(self.kv)})
            self.kv = [(layer.keys, layer.values) for layer in getattr(out, self.name).layers]
            return out.logits[:, -1].float()

    def advance(self, tokens: list[int | None]) -> None:
        """Append each live row's token; drop finished rows (and the padding columns no row needs any more)."""
        keep = [r for r, t in enumerate(tokens) if t is not None]
        for r in keep:
            self.rows[r].seq.append(tokens[r])
            self.rows[r].written += 1
        self.rows = [self.rows[r] for r in keep]
        if self.name is None:
            return
        if not keep:
            return self.clear()
        if len(keep) < len(tokens):  # rows left: keep the others' keys and values (a copy), else nothing moves
            index = torch.tensor(keep)
            self.mask = self.mask[index]
            self.kv = [(k[index], v[index]) for k, v in self.kv]
            first = int((self.mask.sum(0) > 0).nonzero()[0])  # the first column some row still reads
            self.mask = self.mask[:, first:]
            self.kv = [(k[:, :, first:], v[:, :, first:]) for k, v in self.kv]


def _left(x, width: int):
    """x padded with zeros on the left of its sequence axis (dim 2 for keys/values (B, H, T, D), 1 for masks)."""
    dim = 2 if x.dim() == 4 else 1
    missing = width - x.shape[dim]
    if missing == 0:
        return x
    shape = list(x.shape)
    shape[dim] = missing
    return torch.cat([torch.zeros(shape, dtype=x.dtype), x], dim=dim)


class _Rows:
    """A static batch's sequences, left-padded: ids (B, T), the attention mask and each row's positions. A finished
    row is fed padding (masked out) at its last position: its positions never pass the context."""

    def __init__(self, batch: list[Job], pad: int):
        width = max(len(j.ids) for j in batch)
        self.pad = [width - len(j.ids) for j in batch]
        self.start = [len(j.ids) for j in batch]
        self.x = torch.tensor([[pad] * p + j.ids for p, j in zip(self.pad, batch, strict=True)])
        self._mask = torch.tensor([[0] * p + [1] * len(j.ids) for p, j in zip(self.pad, batch, strict=True)])
        self._pos = (self._mask.cumsum(-1) - 1).clamp(min=0)

    def extend(self, tokens: list[int], live: list[bool] | None = None) -> None:
        alive = torch.tensor([[1] for _ in tokens] if live is None else [[int(a)] for a in live])
        self.x = torch.cat([self.x, torch.tensor(tokens)[:, None]], dim=1)
        self._mask = torch.cat([self._mask, alive.to(self._mask.dtype)], dim=1)
        self._pos = torch.cat([self._pos, self._pos[:, -1:] + alive], dim=1)

    def ids(self):
        return self.x

    def last(self):
        return self.x[:, -1:]

    def mask(self):
        return self._mask

    def positions(self):
        return self._pos

    def count(self, r: int) -> int:
        """Tokens row r has written so far (counting only while it is live)."""
        return int(self._mask[r, self.pad[r] + self.start[r]:].sum())


def _temperature(j: Job) -> float:
    return 0.0 if j.temperature < GREEDY_BELOW else j.temperature


def _distribution(logits, j: Job):
    """The row's distribution to draw from (None when greedy), as lab.sampling.next_token_distribution makes it."""
    temperature = _temperature(j)
    if temperature == 0:
        return None
    return sampling.next_token_distribution(logits[None], temperature, j.top_k, j.top_p)


def _draw(logits, p, gen) -> int:
    """One token for one row, as lab.sampling.steps draws it: the argmax (greedy), or one draw from p with the
    row's own generator."""
    if p is None:
        return int(logits.argmax(-1))
    return int(torch.multinomial(p, 1, generator=gen))


def _fail(j: Job, e: Exception) -> None:
    """One job's failure: logged with its request id, reported to its client only."""
    log.error("request %s failed in the engine: %s: %s", j.request_id or "?", type(e).__name__, e,
              exc_info=(type(e), e, e.__traceback__))
    j.done(f"error: {type(e).__name__}: {e}")


def _eos(model) -> set[int]:
    eos = model.generation_config.eos_token_id
    return set(eos if isinstance(eos, list) else [] if eos is None else [eos])


def _dropped(j: Job) -> bool:
    """A job whose client left while it waited: reported and skipped."""
    if j.cancelled.is_set():
        j.done("cancelled")
        return True
    return False


def prompt_logprobs(model, ids: list[int], top: int) -> list[tuple[float | None, list]]:
    """Each prompt token's log-probability given the tokens before it, and the `top` best there ((id, logprob)
    pairs): the first token has none (None, []), as OpenAI's `echo` with `logprobs` returns it. One forward pass
    over the prompt; the shared model is only read."""
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), -1)  # (T, V)
    out: list[tuple[float | None, list]] = [(None, [])]
    for t in range(1, len(ids)):
        best = logp[t - 1].topk(top) if top else None
        pairs = list(zip(best.indices.tolist(), best.values.tolist(), strict=True)) if best is not None else []
        out.append((float(logp[t - 1, ids[t]]), pairs))
    return out
