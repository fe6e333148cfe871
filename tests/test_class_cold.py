"""A cold link (issue 41): a class opening a link nobody has opened yet costs one computation, not one per reader.
The perplexity table and the detector's set evaluation are kept outside st.cache_data (beside their progress bars),
so ui.runs.single.Single gives each key one computation at a time; readers arriving meanwhile wait for it."""

from __future__ import annotations

import threading
import time

import pytest

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


def at_once(call, n: int, gate: threading.Event) -> list:
    """`call()` in `n` threads at once (as Streamlit runs n sessions' scripts); the gate opens after 2 s. Called
    directly, not through n AppTest sessions: AppTest keeps some of its state process-wide, so sessions run at once
    in threads can fail in the harness itself."""
    results = [None] * n
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, call())) for i in range(n)]
    for t in threads:
        t.start()
    threading.Timer(2.0, gate.set).start()
    for t in threads:
        t.join(240)
    return results


class Bar:
    """What st.progress returns, as far as the runs use it."""

    def progress(self, *args, **kwargs):
        pass

    def empty(self):
        pass


def test_three_readers_of_a_cold_perplexity_link_evaluate_the_model_once(course_standins, monkeypatch):
    from lab import perplexity
    from ui.runs import perplexity as runs

    real, calls, gate = perplexity.evaluate, [], threading.Event()

    def slow(loaded, *args, **kwargs):  # the first reader is still evaluating when the others arrive
        calls.append(loaded.name)
        gate.wait(30)
        return real(loaded, *args, **kwargs)

    monkeypatch.setattr(perplexity, "evaluate", slow)
    text = "The trophy did not fit in the suitcase because it was too big. " * 4
    got = at_once(lambda: runs.evaluate("course-gpt2", text, 0.5, lambda words: Bar()), 3, gate)
    assert calls == ["course-gpt2"]  # once, not once per reader
    assert all(g is not None and "error" not in g for g in got) and got[0] is got[1] is got[2]


def test_three_readers_of_a_cold_detector_link_evaluate_the_set_once(monkeypatch):
    from lab.detect import evaluation as detect_eval
    from ui.runs import detect as runs

    real, calls, gate = detect_eval.evaluate, [], threading.Event()

    def slow(rows):
        calls.append(len(rows))
        gate.wait(30)
        return real(rows)

    monkeypatch.setattr(detect_eval, "evaluate", slow)
    rows = [{"label": "machine" if k % 3 else "human", "lang": "en", "band": "short", "setting": None,
             "generator": None, "fast_detectgpt": k / 10} for k in range(60)]
    runs.clear()
    try:
        got = at_once(lambda: runs.evaluation(rows), 3, gate)
    finally:
        runs.clear()
    assert calls == [60] and got[0] is got[1] is got[2]
    assert got[0]["methods"]["fast_detectgpt"]["auroc"] == detect_eval.evaluate(rows)["methods"]["fast_detectgpt"][
        "auroc"]
