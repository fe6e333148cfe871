"""lab.models.budget: one load per model under concurrency, refusal over budget, LRU eviction."""

import threading
import time

import pytest

from lab import models
from lab.models import registry
from lab.models.budget import BUDGET_ENV, ModelCache, ModelTooLarge, budget_bytes, machine_budget_bytes
from lab.models.hosting import HOSTED_BUDGET_MB
from tests.overlap import InFlight


class Recorder:
    """A stand-in loader that records which keys it loaded (slowly, to widen any race)."""

    def __init__(self, delay=0.0):
        self.calls, self.delay, self.inside = [], delay, InFlight()

    def __call__(self, key):
        with self.inside:  # inside.peak: how many loads ever ran at once
            self.calls.append(key)
            time.sleep(self.delay)
            return object()


def hammer(cache, key, n=8):
    """n threads released together asking for key; their results. Asserts that the requests overlapped."""
    barrier, results, asking = threading.Barrier(n), [None] * n, InFlight()

    def ask(i):
        barrier.wait()
        with asking:
            results[i] = cache.get(key)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert asking.peak > 1, "the requests never ran at once: nothing was tested"
    return results


def test_concurrent_requests_load_once():
    rec = Recorder(delay=0.3)
    cache = ModelCache(budget=100, load=rec, estimate=lambda k: 10)
    results = hammer(cache, "m")
    assert rec.calls == ["m"] and cache.loads == 1 and rec.inside.peak == 1
    assert all(r is results[0] for r in results)
    assert cache.get("m") is results[0] and cache.loads == 1  # a later request: no reload


def test_concurrent_real_loads_of_a_tiny_model_load_once(tiny_model_dirs):
    calls = []

    def load(key):
        calls.append(key)
        return models.load(key)

    key = models.canonical(str(tiny_model_dirs["openai-gpt"]))
    cache = ModelCache(budget=10**9, load=load)
    results = hammer(cache, key, n=6)
    assert calls == [key] and cache.loads == 1
    assert all(r is results[0] for r in results) and results[0].n_layer == 2


def test_different_models_load_in_parallel_not_in_series():
    rec = Recorder(delay=0.4)
    cache = ModelCache(budget=100, load=rec, estimate=lambda k: 10)
    barrier = threading.Barrier(3)

    def ask(key):
        barrier.wait()
        cache.get(key)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=ask, args=(k,)) for k in ("a", "b", "c")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(rec.calls) == ["a", "b", "c"]
    assert time.perf_counter() - t0 < 1.0  # three 0.4 s loads, not one after another
    assert rec.inside.peak == 3  # all three loads were under way at once


def test_two_models_that_do_not_fit_together_never_load_at_once():
    """Budget 15, two models of 10 asked for together: one loads, lands, is dropped, then the other."""
    held, peak, guard = [0], [0], threading.Lock()
    cache = None

    def load(key):
        with guard:  # bytes the cache keeps plus every load under way, as this load starts
            held[0] += 10
            peak[0] = max(peak[0], cache.used_bytes + held[0])
        time.sleep(0.3)  # a slow load: the other request arrives meanwhile
        with guard:
            held[0] -= 10
        return object()

    cache = ModelCache(budget=15, load=load, estimate=lambda k: 10)
    barrier, results, asking = threading.Barrier(2), {}, InFlight()

    def ask(key):
        barrier.wait()
        with asking:
            results[key] = cache.get(key)

    threads = [threading.Thread(target=ask, args=(k,)) for k in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert set(results) == {"a", "b"} and all(r is not None for r in results.values())
    assert asking.peak == 2  # both requests were in the cache at once (the second one waited)
    assert peak[0] == 10  # never both resident or loading: 20 would exceed the budget of 15
    assert cache.loads == 2 and cache.evictions == 1 and len(cache.keys()) == 1 and cache.used_bytes == 10


def test_a_failed_load_frees_its_room():
    loading, failed, asking = threading.Event(), [], InFlight()

    def load(key):
        if key == "broken":
            loading.set()
            deadline = time.monotonic() + 30
            while asking.now < 2 and time.monotonic() < deadline:  # until "ok" has been asked too
                time.sleep(0.01)
        time.sleep(0.2)
        if key == "broken":
            raise OSError("truncated")
        return object()

    cache = ModelCache(budget=15, load=load, estimate=lambda k: 10)

    def ask_broken():
        try:
            with asking:
                cache.get("broken")
        except OSError as e:
            failed.append(e)

    t = threading.Thread(target=ask_broken)
    t.start()
    assert loading.wait(30)  # "broken" is loading; "ok" must wait for it, then load
    with asking:
        assert cache.get("ok") is not None
    t.join(30)
    assert len(failed) == 1 and cache.keys() == ["ok"] and cache.used_bytes == 10 and cache.loads == 1
    assert asking.peak == 2  # "ok" was asked while "broken" was still loading


def test_over_budget_model_is_refused_before_loading(tiny_model_dirs):
    rec = Recorder()
    key = models.canonical(str(tiny_model_dirs["gpt2"]))
    need = models.estimate_bytes(key)
    cache = ModelCache(budget=need - 1, load=rec)
    with pytest.raises(ModelTooLarge) as e:
        cache.get(key)
    msg = str(e.value)
    assert key in msg and BUDGET_ENV in msg and "models that fit" in msg
    assert rec.calls == [] and cache.loads == 0 and key not in cache


def test_refusal_names_what_fits():
    budget = registry.info("gpt2").memory_bytes
    cache = ModelCache(budget=budget, load=Recorder())
    with pytest.raises(ModelTooLarge) as e:
        cache.get("gpt2-xl")
    fits = str(e.value).split("models that fit: ")[1].split(", ")
    assert "gpt2" in fits and "distilgpt2" in fits and "gpt2-xl" not in fits and "gpt2-medium" not in fits
    assert registry.human_bytes(registry.info("gpt2-xl").memory_bytes) in str(e.value)


def test_least_recently_used_is_evicted():
    rec = Recorder()
    cache = ModelCache(budget=100, load=rec, estimate=lambda k: 40)
    a = cache.get("a")
    cache.get("b")
    assert cache.get("a") is a  # a is now the most recently used
    cache.get("c")  # 120 > 100: b goes
    assert cache.keys() == ["a", "c"] and cache.evictions == 1 and cache.used_bytes == 80
    cache.get("b")  # a is now the least recently used
    assert cache.keys() == ["c", "b"] and rec.calls == ["a", "b", "c", "b"] and cache.loads == 4


def test_budget_from_environment(monkeypatch):
    monkeypatch.setenv(BUDGET_ENV, "500")
    assert budget_bytes() == 500 * registry.MB
    assert ModelCache(load=Recorder(), estimate=lambda k: 1).budget == 500 * registry.MB
    monkeypatch.delenv("LAB_HOSTED", raising=False)
    monkeypatch.setenv(BUDGET_ENV, "lots")
    assert budget_bytes() == machine_budget_bytes()  # the default (tests/test_hosting.py: what it is)
    monkeypatch.delenv(BUDGET_ENV)
    assert budget_bytes() == machine_budget_bytes()


def test_hosted_budget_suits_a_small_host():
    """The hosted demo's budget holds the course models and GPT-2 small together, and GPT-2 medium alone, not large."""
    budget = HOSTED_BUDGET_MB * registry.MB
    together = sum(registry.info(n).memory_bytes for n in ("course-gpt2", "course-roberta", "gpt2"))
    assert together <= budget
    assert registry.info("gpt2-medium").memory_bytes <= budget < registry.info("gpt2-large").memory_bytes
    assert budget <= 2.7e9 - 0.9e9  # room on a 2.7 GB host for Python + torch + Streamlit and forwards
