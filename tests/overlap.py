"""Proof that a concurrency test's threads really ran at once: calls in flight together, counted.

A thread test that never overlapped proves nothing, so each one asserts `peak > 1`:

    inside = InFlight()
    with inside:                      # around the call the threads share
        cache.get(key)
    assert inside.peak > 1

`forwards_in_flight()` does the same for every base-model forward pass in the process (module
hooks, whoever calls); with `rendezvous=` (a threading.Barrier) each pass waits there until the
others are inside a pass too, so they overlap by construction.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class InFlight:
    """A context manager counting how many threads are inside it now (`now`), at most (`peak`), in all (`calls`)."""

    def __init__(self):
        self.now = self.peak = self.calls = 0
        self._lock = threading.Lock()

    def __enter__(self):
        with self._lock:
            self.now += 1
            self.calls += 1
            self.peak = max(self.peak, self.now)
        return self

    def __exit__(self, *exc):
        with self._lock:
            self.now -= 1
        return False


def _is_base_model(module) -> bool:
    """True for the base transformer of a Hugging Face model (GPT2Model, RobertaModel, ...)."""
    from transformers import PreTrainedModel

    return isinstance(module, PreTrainedModel) and module.base_model is module


@contextlib.contextmanager
def forwards_in_flight(rendezvous: threading.Barrier | None = None) -> Iterator[InFlight]:
    """An InFlight over every base-model forward pass in the process while the block runs."""
    import torch

    inside = InFlight()

    def before(module, args):
        if _is_base_model(module):
            inside.__enter__()
            if rendezvous is not None:
                rendezvous.wait()  # every thread is inside a forward pass now

    def after(module, args, output):
        if _is_base_model(module):
            inside.__exit__()

    pre = torch.nn.modules.module.register_module_forward_pre_hook(before)
    post = torch.nn.modules.module.register_module_forward_hook(after)
    try:
        yield inside
    finally:
        pre.remove()
        post.remove()
