"""A cold link (issue 41): a class opening a link nobody has opened yet costs one computation, not one per reader.
The perplexity table and the detector's set evaluation are kept outside st.cache_data (beside their progress bars),
so ui.runs.single.Single gives each key one computation at a time; readers arriving meanwhile wait for it."""

from __future__ import annotations

import threading
import time
from functools import partial

import pytest

from tests import pages
from ui.runs.single import Single


def test_one_computation_per_key_while_others_wait():
    single, store, calls = Single(), {}, []

    def get(key):
        with single.turn(key):
            if key not in store:
                calls.append(key)
                time.sleep(0.05)
                store[key] = f"value of {key}"
            return store[key]

    got = []
    threads = [threading.Thread(target=lambda k=k: got.append(get(k % 2))) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(calls) == [0, 1] and sorted(got) == ["value of 0"] * 4 + ["value of 1"] * 4
    assert single.waiting() == 0  # no key left behind


def test_other_keys_run_alongside_and_a_caller_that_fails_hands_over():
    single, both = Single(), threading.Barrier(2, timeout=5)

    def hold(key):
        with single.turn(key):
            both.wait()  # both keys inside at once: a shared lock would time out here

    threads = [threading.Thread(target=hold, args=(k,)) for k in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not both.broken
    with pytest.raises(RuntimeError), single.turn("a"):
        raise RuntimeError("the reader left")
    with single.turn("a"):  # the turn came back
        pass
    assert single.waiting() == 0


def at_once(open_page, n: int, gate: threading.Event) -> list:
    """`n` sessions opening the page at once (threads, as Streamlit runs them); the gate opens after 2 s."""
    results = [None] * n
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, open_page(timeout=180))) for i in range(n)]
    for t in threads:
        t.start()
    threading.Timer(2.0, gate.set).start()
    for t in threads:
        t.join(240)
    return results


def test_three_readers_of_a_cold_perplexity_link_evaluate_each_model_once(course_standins, monkeypatch,
                                                                           shared_runtime):
    from lab import perplexity

    real, calls, gate = perplexity.evaluate, [], threading.Event()

    def slow(loaded, *args, **kwargs):  # the first reader is still evaluating when the others arrive
        calls.append(loaded.name)
        gate.wait(30)
        return real(loaded, *args, **kwargs)

    monkeypatch.setattr(perplexity, "evaluate", slow)
    readers = at_once(partial(pages.open_page, "app_pages/perplexity.py"), 3, gate)
    assert all(r is not None and not r.exception for r in readers)
    assert calls and len(calls) == len(set(calls))  # each model once, not once per reader
    tables = [r.dataframe[0].value.to_dict() for r in readers]
    assert tables[0] == tables[1] == tables[2]


def test_three_readers_of_a_cold_detector_link_evaluate_the_set_once(course_standins, monkeypatch, shared_runtime):
    from lab.detect import evaluation as detect_eval

    real, calls, gate = detect_eval.evaluate, [], threading.Event()

    def slow(rows):
        calls.append(len(rows))
        gate.wait(30)
        return real(rows)

    monkeypatch.setattr(detect_eval, "evaluate", slow)
    readers = at_once(partial(pages.open_page, "app_pages/detector.py"), 3, gate)
    assert all(r is not None and not r.exception for r in readers)
    assert len(calls) == 1
