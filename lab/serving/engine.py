"""The decoding engine behind `python -m lab serve` (chapter 14): requests in, tokens out, one worker thread.

Each request is a `Job` (its prompt ids and settings, its own seed); the worker takes jobs from a queue and
streams every drawn token back to the job's callback as soon as it is drawn.
- Without batching the worker decodes one job at a time (the others wait in the queue).
- With batching (static batches) it takes every job waiting when it starts, up to `max_batch`, and decodes them
  together: one forward pass per step for the whole batch (left padding, each row its own positions and its
  own key-value cache rows), each row drawn with its own settings and generator; a row that ends early stops
  being reported, the batch ends when its last row does. Jobs arriving meanwhile wait for the next batch.
- The key-value cache can be switched off: each step then re-reads every row's whole sequence.
A lone job runs through lab.sampling.steps itself, so a request draws exactly what `python -m lab sample`
draws for the same seed and settings. The shared model is only read.
"""

from __future__ import annotations

import dataclasses
import math
import queue
import threading
from collections.abc import Callable

import torch

from lab import sampling

WAIT_S = 0.02  # how long the batching worker waits for more jobs once one has arrived


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


class Engine:
    """One worker thread decoding jobs, with or without batching and the key-value cache."""

    def __init__(self, model, batching: bool = True, cache: bool = True, max_batch: int = 8):
        self.model, self.batching, self.cache, self.max_batch = model, batching, cache, max_batch
        self.eos = _eos(model)
        self.jobs: queue.Queue[Job] = queue.Queue()
        self.batches: list[int] = []  # the size of every batch run (for the lesson and the tests)
        threading.Thread(target=self._loop, daemon=True, name="lab-engine").start()

    def submit(self, job: Job) -> None:
        self.jobs.put(job)

    def _loop(self) -> None:
        while True:
            batch = [self.jobs.get()]
            if self.batching:
                threading.Event().wait(WAIT_S)
                while len(batch) < self.max_batch:
                    try:
                        batch.append(self.jobs.get_nowait())
                    except queue.Empty:
                        break
            batch = [j for j in batch if not _dropped(j)]
            if batch:
                self.batches.append(len(batch))
                try:
                    (self._one if len(batch) == 1 else self._many)(batch)
                except Exception as e:  # noqa: BLE001 - reported to every waiting client, the worker goes on
                    for j in batch:
                        j.done(f"error: {e}")

    def _one(self, batch: list[Job]) -> None:
        """A lone job: lab.sampling.steps, the CLI's own loop."""
        j = batch[0]
        gen = sampling.steps(self.model, j.ids, j.max_tokens, j.temperature, j.top_k, j.top_p, j.seed,
                             use_cache=self.cache)
        n = 0
        for step in gen:
            if j.cancelled.is_set():
                return j.done("cancelled")
            n += 1
            top = [(i, math.log(p)) for i, p in zip(step["candidates"]["id"], step["candidates"]["p_raw"],
                                                    strict=True)][:j.top_logprobs]
            if not j.emit(step["id"], math.log(max(step["p_raw"], 1e-45)), top):
                return j.done("stop")
            if step["id"] in self.eos:
                return j.done("stop")
        j.done("length" if n == j.max_tokens else "stop")

    def _many(self, batch: list[Job]) -> None:
        """Several jobs decoded together (static batch)."""
        rows = _Rows(batch, self.model.config.pad_token_id or 0)
        gens = [torch.Generator().manual_seed(j.seed) for j in batch]
        live = [True] * len(batch)
        past = None
        for _ in range(max(j.max_tokens for j in batch)):
            logits, past = self._step(rows, past)
            p = _distributions(logits, batch, live)
            nxt = []
            for r, j in enumerate(batch):
                token = _draw(logits[r], p[r], gens[r]) if live[r] else self.eos_or_pad()
                nxt.append(token)
                if live[r]:
                    live[r] = self._report(j, token, logits[r], rows.count(r) + 1)
            if not any(live):
                return
            rows.extend(nxt)
        for r, j in enumerate(batch):
            if live[r]:
                j.done("length")

    def _report(self, j: Job, token: int, logits, written: int) -> bool:
        """Hand one drawn token to its job; False once the job is over (and done reported)."""
        if j.cancelled.is_set():
            j.done("cancelled")
            return False
        pairs, logprob = [], 0.0
        if j.logprobs or j.top_logprobs:
            logp = torch.log_softmax(logits.float(), -1)
            top = logp.topk(j.top_logprobs)
            pairs, logprob = list(zip(top.indices.tolist(), top.values.tolist(), strict=True)), float(logp[token])
        if not j.emit(token, logprob, pairs) or token in self.eos:
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


class _Rows:
    """A batch's sequences, left-padded: ids (B, T), the attention mask and each row's positions."""

    def __init__(self, batch: list[Job], pad: int):
        width = max(len(j.ids) for j in batch)
        self.pad = [width - len(j.ids) for j in batch]
        self.start = [len(j.ids) for j in batch]
        self.x = torch.tensor([[pad] * p + j.ids for p, j in zip(self.pad, batch, strict=True)])
        self._mask = torch.tensor([[0] * p + [1] * len(j.ids) for p, j in zip(self.pad, batch, strict=True)])
        self._pos = (self._mask.cumsum(-1) - 1).clamp(min=0)

    def extend(self, tokens: list[int]) -> None:
        self.x = torch.cat([self.x, torch.tensor(tokens)[:, None]], dim=1)
        self._mask = torch.cat([self._mask, torch.ones(len(tokens), 1, dtype=self._mask.dtype)], dim=1)
        self._pos = torch.cat([self._pos, self._pos[:, -1:] + 1], dim=1)

    def ids(self):
        return self.x

    def last(self):
        return self.x[:, -1:]

    def mask(self):
        return self._mask

    def positions(self):
        return self._pos

    def count(self, r: int) -> int:
        """Tokens row r has written so far."""
        return self.x.shape[1] - self.pad[r] - self.start[r]


def _distributions(logits, batch: list[Job], live: list[bool]) -> list:
    """Each live row's distribution to draw from (None for greedy rows and finished ones): rows that share their
    settings are filtered together, in one pass (B', V), as lab.sampling.next_token_distribution does one."""
    out: list = [None] * len(batch)
    groups: dict[tuple, list[int]] = {}
    for r, j in enumerate(batch):
        if live[r] and j.temperature != 0:
            groups.setdefault((j.temperature, j.top_k, j.top_p), []).append(r)
    for (temperature, top_k, top_p), rows in groups.items():
        p = sampling.next_token_distribution(logits[rows], temperature, top_k, top_p)
        for k, r in enumerate(rows):
            out[r] = p[k:k + 1]
    return out


def _draw(logits, p, gen) -> int:
    """One token for one row, as lab.sampling.steps draws it: the argmax (greedy), or one draw from p with the
    row's own generator."""
    if p is None:
        return int(logits.argmax(-1))
    return int(torch.multinomial(p, 1, generator=gen))


def _eos(model) -> set[int]:
    eos = model.generation_config.eos_token_id
    return set(eos if isinstance(eos, list) else [] if eos is None else [eos])


def _dropped(j: Job) -> bool:
    """A job whose client left while it waited: reported and skipped."""
    if j.cancelled.is_set():
        j.done("cancelled")
        return True
    return False
