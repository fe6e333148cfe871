"""A process-wide cache of loaded models under a memory budget: one load per model, however many ask.

Serves every model page of the app (the hosted demo's sessions share it; chapter 14, serving).

Thread-safe and Streamlit-free (the app wraps one instance in the only Streamlit resource cache, ui/model_loader.py).
- Concurrent requests for one model wait on a per-model lock: the model loads once.
- A model whose memory estimate exceeds the whole budget is refused (`ModelTooLarge`, saying why
  and which models fit) before anything is loaded.
- Otherwise least-recently-used models are dropped until the new one fits beside the models held
  and those being loaded right now. A dropped model stays alive while a session still holds it;
  the cache just stops keeping it.
- Different models load in parallel while they fit together; when they do not, a load waits until
  one in progress lands (then drops what it must) instead of going over the budget.
Accounting uses each model's estimate known before loading (`lab.models.estimate_bytes`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import lab.models.hosting as hosting
import lab.models.registry as registry
from lab.errors import LabError

BUDGET_ENV = "LAB_MEMORY_BUDGET_MB"
# The default follows the machine: half its physical memory (the other half stays with the OS, the
# browser showing the app and whatever else the reader runs), less ~1 GB that the app holds outside
# the model cache (Python + Streamlit + torch ~0.5 GB, forward passes and cached results ~0.5 GB).
# A 16 GB laptop gets ~7.6 GB: every GPT-2 size loads (gpt2-xl needs ~6.9 GB), one big one at a time.
# Never under MIN_BUDGET_MB, so GPT-2 small and the course models load even on a small machine.
# The hosted demo sets its own cap (lab.models.hosting, 1,700 MB); $LAB_MEMORY_BUDGET_MB overrides both.
MACHINE_SHARE = 0.5
APP_BASELINE_MB = 1000
MIN_BUDGET_MB = 700
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
log = logging.getLogger(__name__)


class ModelTooLarge(LabError):
    """The model cannot fit in the memory budget even alone; str(e) is the English line saying why and what fits.

    reason "too_large"; details: name, need and budget (bytes), env (the variable that sets the budget),
    fit (registry names that fit), so a page writes the message in its reader's language.
    """

    reason_default = "too_large"


def physical_memory_bytes() -> int:
    """This machine's memory: psutil's total, or a container's cgroup limit when that is smaller."""
    import psutil

    total = psutil.virtual_memory().total
    for path in CGROUP_LIMITS:  # a container (a hosting service) sees the host's RAM in psutil
        try:
            raw = Path(path).read_text(encoding="ascii").strip()
        except OSError:
            continue
        if raw.isdigit() and 0 < int(raw) < total:
            total = int(raw)
    return total


def machine_budget_bytes(total: int | None = None) -> int:
    """The laptop default: MACHINE_SHARE of `total` bytes (this machine's memory) less APP_BASELINE_MB."""
    total = physical_memory_bytes() if total is None else total
    return max(int(total * MACHINE_SHARE) - APP_BASELINE_MB * registry.MB, MIN_BUDGET_MB * registry.MB)


@dataclass(frozen=True)
class Budget:
    """The memory budget for cached models and where it comes from."""

    bytes: int
    source: str  # "env" ($LAB_MEMORY_BUDGET_MB) | "hosted" (lab.models.hosting's cap) | "machine"
    machine_bytes: int  # this machine's memory, as physical_memory_bytes() reads it


def budget() -> Budget:
    """$LAB_MEMORY_BUDGET_MB megabytes if set; else the hosted demo's cap; else a share of this machine."""
    total = physical_memory_bytes()
    raw = os.environ.get(BUDGET_ENV, "").strip()
    if raw:
        try:
            mb = float(raw)
            if mb > 0:
                return Budget(int(mb * registry.MB), "env", total)
        except ValueError:
            pass
        log.warning("%s=%r is not a positive number of megabytes; using the default", BUDGET_ENV, raw)
    lim = hosting.limits()
    if lim.hosted:
        return Budget(lim.budget_mb * registry.MB, "hosted", total)
    return Budget(machine_budget_bytes(total), "machine", total)


def budget_bytes() -> int:
    """The memory budget for cached models, in bytes (see budget())."""
    return budget().bytes


def models_that_fit(budget: int) -> list[str]:
    """Registry names whose memory estimate fits in `budget` bytes."""
    return [m.name for m in registry.REGISTRY.values() if m.memory_bytes <= budget]


class ModelCache:
    """LRU cache of loaded models, keyed by registry name or absolute directory path."""

    def __init__(self, budget: int | None = None, load: Callable[[str], object] | None = None,
                 estimate: Callable[[str], int] | None = None):
        if load is None or estimate is None:
            from lab import models
            load, estimate = load or models.load, estimate or models.estimate_bytes
        self.budget = budget_bytes() if budget is None else budget
        self._load, self._estimate = load, estimate
        self._lock = threading.Lock()  # guards everything below
        self._landed = threading.Condition(self._lock)  # notified whenever a load ends
        self._entries: OrderedDict[str, tuple[object, int]] = OrderedDict()  # oldest first
        self._pending: dict[str, int] = {}  # key -> estimate of each load in progress
        self._key_locks: dict[str, threading.Lock] = {}
        self.loads = 0  # how many times a model was actually loaded (tests count these)
        self.evictions = 0

    def get(self, key: str):
        """The loaded model for `key`, loading it at most once however many threads ask."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key][0]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:  # another thread may have loaded it while we waited
                if key in self._entries:
                    self._entries.move_to_end(key)
                    return self._entries[key][0]
            need = self.check_fits(key)
            with self._landed:  # make room first, so memory peaks within the budget
                while self._pending and sum(self._pending.values()) + need > self.budget:
                    self._landed.wait()  # loads in progress leave no room: wait for one to land
                self._evict_until_fits(need)
                self._pending[key] = need
            try:
                loaded = self._load(key)
            except BaseException:
                self._land(key)
                raise
            self._land(key, loaded)
            return loaded

    def _land(self, key: str, loaded: object = None) -> None:
        """End `key`'s load: keep the model (None: the load failed), wake the loads waiting for room."""
        with self._landed:
            need = self._pending.pop(key)
            if loaded is not None:
                self._entries[key] = (loaded, need)
                self.loads += 1
                self._evict_until_fits(0, keep=key)  # a no-op unless estimates were off
            self._landed.notify_all()

    def check_fits(self, key: str) -> int:
        """The estimate for `key` in bytes; ModelTooLarge when it exceeds the whole budget."""
        need = self._estimate(key)
        if need > self.budget:
            fit = models_that_fit(self.budget)
            raise ModelTooLarge(
                f"{key} needs about {registry.human_bytes(need)} of memory, more than this server's "
                f"budget for models ({registry.human_bytes(self.budget)}, set by {BUDGET_ENV}); "
                f"models that fit: {', '.join(fit) if fit else 'none'}",
                name=key, need=need, budget=self.budget, env=BUDGET_ENV, fit=fit)
        return need

    def _evict_until_fits(self, extra: int, keep: str | None = None) -> None:
        """Drop least-recently-used models (never `keep`) until they, loads under way and `extra` fit."""
        extra += sum(self._pending.values())
        while sum(size for _, size in self._entries.values()) + extra > self.budget:
            oldest = next((k for k in self._entries if k != keep), None)
            if oldest is None:
                return
            del self._entries[oldest]
            self.evictions += 1

    @property
    def used_bytes(self) -> int:
        """Sum of the estimates of the models held now."""
        with self._lock:
            return sum(size for _, size in self._entries.values())

    def keys(self) -> list[str]:
        """Cached keys, least recently used first."""
        with self._lock:
            return list(self._entries)

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._entries
