"""The sampling page for a class on one link (issue 41): the model runs once per (model, prompt, settings, seed),
however many readers open it. Forward passes are counted (conftest's `forwards`); the text is checked against
the one the first reader streamed, which test_sampling_page.py checks against transformers' generate."""

import threading
from functools import partial

from tests import pages
from tests.test_sampling_page import streamed

open_page = partial(pages.open_page, "app_pages/sampling.py")


def paused_after_the_first_token(monkeypatch):
    """lab.serving.shared.steps (the page's generation, in the model's shared engine) made to pause the first stream
    after its first token (so others arrive mid-stream) until
    `release` is set; (started, release)."""
    from lab.serving import shared

    real, started, release = shared.steps, threading.Event(), threading.Event()

    def slow(*args, **kwargs):
        for i, step in enumerate(real(*args, **kwargs)):
            yield step
            if i == 0 and not started.is_set():
                started.set()
                release.wait(30)

    monkeypatch.setattr(shared, "steps", slow)
    return started, release


def test_later_readers_of_a_link_replay_it_without_a_forward_pass(course_standins, forwards):
    first = open_page(samp_compare="pair")
    n = first.session_state["samp_n"]
    assert forwards["n"] == 2 * n  # the stream and comparison B: the counter is live
    text = streamed(first)
    for _ in range(3):  # three more readers of the same link: each its own session, no model call
        other = open_page(samp_compare="pair")
        assert streamed(other) == text and not other.exception
    assert forwards["n"] == 2 * n
    seeded = open_page(samp_seed=7, samp_compare="pair")  # another link (another seed): generated, once
    assert streamed(seeded) != text and forwards["n"] == 3 * n


def test_readers_arriving_while_it_streams_follow_the_first_one(course_standins, forwards, monkeypatch,
                                                                 shared_runtime):
    """Three sessions at once (threads, as Streamlit runs them): the model runs for one stream only."""
    started, release = paused_after_the_first_token(monkeypatch)
    results = {}
    lead = threading.Thread(target=lambda: results.setdefault("lead", open_page(timeout=120)))
    lead.start()
    assert started.wait(60)
    others = [threading.Thread(target=lambda i=i: results.setdefault(i, open_page(timeout=120))) for i in range(2)]
    for t in others:
        t.start()
    threading.Timer(2.0, release.set).start()
    for t in [lead, *others]:
        t.join(180)
    n = results["lead"].session_state["samp_n"]
    assert forwards["n"] == n  # one stream, not three (comparison B is not opened: not generated)
    assert streamed(results[0]) == streamed(results[1]) == streamed(results["lead"])


def test_a_reader_arriving_mid_stream_with_another_seed_gets_its_own_text(course_standins, forwards, monkeypatch,
                                                                           shared_runtime):
    """Issue 51: the key that lets a crowd share one generation must hold the seed, for readers arriving while it
    streams too: a reader of the seed-7 link, arriving while the seed-0 stream is paused, streams its own text."""
    started, release = paused_after_the_first_token(monkeypatch)
    results = {}
    lead = threading.Thread(target=lambda: results.setdefault("lead", open_page(timeout=120)))
    lead.start()
    assert started.wait(60)
    other = threading.Thread(target=lambda: results.setdefault("seven", open_page(timeout=120, samp_seed=7)))
    other.start()
    threading.Timer(2.0, release.set).start()
    for t in (lead, other):
        t.join(180)
    assert results["lead"].session_state["samp_temperature"] > 0  # a seed decides the text
    seven, zero = streamed(results["seven"]), streamed(results["lead"])
    assert seven != zero
    assert streamed(open_page(samp_seed=7)) == seven  # a later seed-7 reader replays the same text
