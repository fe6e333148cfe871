"""Forward passes from many readers gathered into one padded batch (issue 57, "a class that types its own text").

When a class types its own sentences, thirty forward passes over thirty short texts arrive within a second. Run one
after another, each reads the model's weights on its own (56 ms each for GPT-2 small's shapes and an 8-token text,
one thread); run as one right-padded batch, they cost 15 ms each (measured 2026-12-06). This module does what a
serving engine's dynamic batcher does (Triton's queue delay, TorchServe's batch_delay), without a thread of its own:
the first caller of a round waits WAIT_S for others to join, runs the whole round as one batch through the caller's
function, and hands each caller its own part; later callers wait for it. A round is closed to newcomers once it
starts, and holds at most `budget` (what its padded batch may cost, in the caller's units: bytes of attention
weights), so one long text does not make thirty short ones pay its padding: it starts a round of its own.

Every reader's result is what the same function gives for their text alone, to the noise of a batched matmul: right
padding leaves a causal model's outputs at the real positions unchanged, and a padded key is masked, never only
trimmed (lab.attention.run). If a round's batch fails, each of its texts is run alone, so only the reader whose text
breaks it sees the error. The shared model is only called, never changed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from lab.errors import LabError

WAIT_S = 0.01  # how long the first caller of a round waits for others to join it

_LOCK = threading.Lock()
_OPEN: dict[Hashable, _Round] = {}  # key -> the round still taking newcomers
SIZES: list[int] = []  # recent rounds' sizes (batch sizes), newest last: the bench reports them
KEEP_SIZES = 1000


@dataclass
class _Round:
    items: list = field(default_factory=list)
    results: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


def gathered(key: Hashable, item, run: Callable[[list], list], cost: Callable[[list], float] | None = None,
             budget: float = float("inf")):
    """run([item, ...])'s result for `item`, computed in one call with the other items given under `key` within
    WAIT_S (run returns one result per item, in order). `cost(items)`: what a batch of these items costs; a round
    whose cost with `item` would pass `budget` is left to run without it."""
    with _LOCK:
        rnd = _OPEN.get(key)
        if rnd is not None and cost is not None and rnd.items and cost([*rnd.items, item]) > budget:
            rnd = None
        lead = rnd is None
        if lead:
            rnd = _OPEN[key] = _Round()
        index = len(rnd.items)
        rnd.items.append(item)
    if lead:
        _lead(key, rnd, run)
    else:
        rnd.done.wait()
    if rnd.errors[index] is not None:
        raise rnd.errors[index]
    return rnd.results[index]


def _lead(key: Hashable, rnd: _Round, run: Callable[[list], list]) -> None:
    """Wait for the round to fill, close it, run it (each item alone if the batch fails), wake the others."""
    time.sleep(WAIT_S)
    with _LOCK:
        if _OPEN.get(key) is rnd:
            del _OPEN[key]
        SIZES.append(len(rnd.items))
        del SIZES[:-KEEP_SIZES]
    try:
        rnd.results, rnd.errors = list(run(rnd.items)), [None] * len(rnd.items)
    except Exception:  # noqa: BLE001 - one text breaks the batch: each runs alone, only its reader sees why
        rnd.results, rnd.errors = [], []
        for item in rnd.items:
            try:
                rnd.results.append(run([item])[0])
                rnd.errors.append(None)
            except Exception as e:  # noqa: BLE001 - this reader's own failure
                rnd.results.append(None)
                rnd.errors.append(e)
    finally:
        if len(rnd.errors) < len(rnd.items):  # a BaseException (the leader's run stopped): the others run alone
            left = _Abandoned("the reader leading this round left before it ran", "abandoned")
            rnd.results, rnd.errors = [None] * len(rnd.items), [left] * len(rnd.items)
        rnd.done.set()


class _Abandoned(LabError):
    """The reader leading a round left before it ran (their script was stopped): the round's others retry (never
    shown: gathered's callers catch it and try again)."""


ATTENTION_BYTES = 32e6  # a round's attention weights at most (all layers, padded; each reader's part is copied out)


def attention_by_layer(model, ids: list[int], budget_bytes: float = ATTENTION_BYTES):
    """lab.attention.attention_by_layer(model, ids) (causal): (H, T, T) float32 arrays, one per layer, computed in one
    padded batch with the other readers' texts arriving within WAIT_S. A round's weights stay within `budget_bytes`;
    a text whose weights alone pass it runs as before, alone and one layer at a time (its memory bounded by a layer)."""
    from lab import attention

    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads

    def cost(batch: list) -> float:
        return len(batch) * layers * heads * max(len(ids) for ids in batch) ** 2 * 4

    if cost([ids]) > budget_bytes:
        return attention.attention_by_layer(model, ids)

    def run(batch: list) -> list:
        out = attention.run(model, [list(ids) for ids in batch])
        mine: list[list] = [[] for _ in batch]
        for layer in attention.each_layer(out):  # (B, H, T, T): each reader's rows and columns, copied out
            for b, ids in enumerate(batch):
                mine[b].append(layer[b, :, :len(ids), :len(ids)].copy())
        return mine

    while True:
        try:
            return gathered(("attention", id(model)), tuple(ids), run, cost, budget_bytes)
        except _Abandoned:
            continue


LENS_TOKENS = 4096  # a lens round's padded tokens at most (its hidden states: 13 x 4,096 x 768 floats for GPT-2 small)


def lens(model, ids: list[int], top: int = 5, target: int | None = None) -> dict:
    """lab.lens.lens(model, ids, top, target), computed with the other readers' texts (same top and target) that
    arrive within WAIT_S: one padded forward pass and shared unembedding passes (lab.lens.lens_many). A text that
    the lens refuses is refused before any gathering, so it never breaks a round."""
    from lab import lens as logit_lens

    logit_lens.check_inputs(model, [ids], top, target)

    def cost(batch: list) -> float:
        return len(batch) * max(len(x) for x in batch)

    def run(batch: list) -> list:
        return logit_lens.lens_many(model, [list(x) for x in batch], top, target)

    if cost([ids]) > LENS_TOKENS:
        return logit_lens.lens(model, ids, top, target)
    while True:
        try:
            return gathered(("lens", id(model), top, target), tuple(ids), run, cost, LENS_TOKENS)
        except _Abandoned:
            continue
