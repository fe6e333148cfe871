"""One decoding engine per loaded model, shared by every reader of the app's process (issue 57, "a class that types
its own text").

A class that types its own prompts asks for thirty generations at once. Run one after another (each reader's
session calling lab.sampling.steps), the last reader waited for all the others: 30 x 3 s on GPT-2 small's shapes.
Here every generation of a model joins that model's one engine (lab.serving.engine's continuous scheduler, the one
`python -m lab serve` runs): each newcomer's prompt is read alone, then it decodes in the running batch, one forward
pass per step for every reader, each row with its own temperature, top-k, top-p and seeded generator; a finished or
abandoned row leaves at once. Each step is made by lab.sampling.drawn, the function lab.sampling.steps draws with,
so a seeded generation draws the same tokens batched or alone (the logits of a padded batch are not bit-identical:
equal within a tolerance, tests/test_shared_engine.py).

The engine lives in the app's process, beside the cached model (ui/model_loader.py), because that is where the
model is: a separate process would hold a second copy of every model (memory is the hosted demo's limit) and send
every step's candidates back over a socket. With `python -m lab replicas`, each replica has its own engine.

The shared model is only read (the engine calls it; nothing is set on it or its config). A reader who leaves (the
iterator is closed) frees their row at the next step; an error in one row's step fails that reader alone; a full
queue (MAX_WAITING generations waiting) is refused at once with EngineBusy. LAB_ENGINE_OFF=1 in the environment
turns the engine off (each generation then runs alone in its reader's session, as before): the class bench's
comparison.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator

from lab import sampling
from lab.errors import LabError
from lab.serving.engine import Engine, EngineBusy, Job

MAX_BATCH = 32  # rows decoded together (a class; a 33rd reader waits for a row to finish)
MAX_WAITING = 256  # generations waiting beyond the running batch before EngineBusy
POLL_S = 0.1  # how often a waiting reader is told their place
OFF = "LAB_ENGINE_OFF"  # set to 1: every generation runs alone in its reader's session (the class bench's "before")
STEP_LOG = "LAB_ENGINE_LOG"  # a file: each engine step's groups appended as a JSON line (the class bench's batch sizes)

_LOCK = threading.Lock()
_ENGINES: dict[int, tuple[object, Engine]] = {}  # id(model) -> (the model, kept alive with its id; its engine)

__all__ = ["EngineBusy", "GenerationFailed", "engine_for", "steps"]


class GenerationFailed(LabError):
    """The engine could not finish this reader's generation (`reason` "failed", details: error): the others go on."""


def engine_for(model) -> Engine:
    """The model's shared engine (made on first use: a continuous batch of MAX_BATCH rows)."""
    with _LOCK:
        found = _ENGINES.get(id(model))
        if found is None or found[0] is not model:
            found = _ENGINES[id(model)] = (model, Engine(model, batching="continuous", max_batch=MAX_BATCH,
                                                         max_waiting=MAX_WAITING,
                                                         step_log=os.environ.get(STEP_LOG) or None))
        return found[1]


def steps(model, ids: list[int], max_new_tokens: int, temperature: float, top_k: int, top_p: float, seed: int,
          top: int = sampling.TOP, on_wait: Callable[[int | None], None] | None = None) -> Iterator[dict]:
    """lab.sampling.steps through the model's shared engine: the same steps (and the same refusals, raised before
    anything is queued), decoded beside every other reader's. `on_wait(n)` is called every POLL_S while no step has
    come yet, with the number of generations queued before this one (0: next in line; None: its prompt is being
    read). Close the iterator to leave: the row is dropped at the engine's next step."""
    sampling.check_generation(model, ids, max_new_tokens, temperature, top_k, top_p, seed)
    if os.environ.get(OFF) == "1":  # the way it was: this reader's session decodes alone (for measuring)
        yield from sampling.steps(model, ids, max_new_tokens, temperature, top_k, top_p, seed, top)
        return
    engine, out = engine_for(model), queue.Queue()
    job = Job(ids=list(ids), max_tokens=max_new_tokens, temperature=temperature, top_k=top_k, top_p=top_p,
              seed=seed, emit=lambda *_: True, done=lambda reason: out.put(("done", reason)),
              on_step=lambda step: out.put(("step", step)) is None, record_top=top)
    engine.submit(job)
    started = False
    try:
        while True:
            try:
                kind, value = out.get(timeout=POLL_S)
            except queue.Empty:
                if on_wait is not None and not started:
                    on_wait(engine.ahead(job))
                continue
            if kind == "step":
                started = True
                yield value
            elif value.startswith("error"):
                raise GenerationFailed(f"the generation failed: {value}", "failed", error=value)
            else:
                return
    finally:
        job.cancelled.set()
