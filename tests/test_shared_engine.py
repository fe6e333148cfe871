"""The shared decoding engine (lab/serving/shared.py, issue 57): many readers' generations decoded in one continuous
batch give what each gives alone through lab.sampling.steps (itself checked against transformers' generate in
test_sampling.py), the shared model stays unchanged, one reader's failure or departure touches nobody else, and a
full queue is refused at once.

Tolerance: a padded batch is not bit-identical to a lone sequence (the batched matmuls sum in another order). The
largest difference measured in any step's probabilities (drawn token, top candidates at every stage, entropies),
2026-12-06 on this 2-core x86 machine, 1 / 2 torch threads: course-gpt2 16 rows x 24 tokens 7.2e-6 / 7.2e-6, 32 rows x
16 tokens 9.9e-6 / 7.8e-6; GPT-2 small's shapes (random weights) 8 rows x 6 tokens 3.6e-6 / 1.9e-6; no drawn token
differed in any of them. TOL is ten times the largest. The drawn tokens are compared exactly: a draw flips only when a
row's uniform number falls within ~1e-5 of a boundary of its cumulative distribution.
"""

from __future__ import annotations

import hashlib
import threading
import time

import pytest
import torch

from lab import sampling
from lab.serving import engine as engines
from lab.serving import shared

TOL = 1e-4
SETTINGS = [(1.0, 50, 0.9), (0.7, 0, 1.0), (0.0, 0, 1.0), (1.3, 20, 0.8)]  # temperature, top-k, top-p
PROMPTS = ["The Debian package manager", "O gerenciador de pacotes do Debian instala", "Hello",
           "apt-get install a package and then, when the dependencies are resolved,"]


@pytest.fixture(scope="module")
def course():
    from lab import models

    return models.load("course-gpt2")


def fingerprint(model) -> str:
    """Every parameter and buffer, and the config, hashed: equal before and after means unchanged."""
    h = hashlib.sha256(model.config.to_json_string().encode())
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        h.update(name.encode())
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def jobs_for(tokenizer, n: int, new: int) -> list[tuple]:
    from lab.text import encode

    return [(encode(tokenizer, PROMPTS[i % len(PROMPTS)], "prompt"), new, *SETTINGS[i % len(SETTINGS)], 100 + i)
            for i in range(n)]


def together(model, jobs: list[tuple]) -> list[list[dict]]:
    """Every job through the shared engine at once, one thread each (as readers' sessions run)."""
    out: list = [None] * len(jobs)
    barrier = threading.Barrier(len(jobs))

    def run(i: int) -> None:
        barrier.wait()
        out[i] = list(shared.steps(model, *jobs[i]))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return out


def assert_same(alone: list[dict], batched: list[dict]) -> None:
    assert [s["id"] for s in batched] == [s["id"] for s in alone]
    for a, b in zip(alone, batched, strict=True):
        assert set(a) == set(b) and a["rank"] == b["rank"] and a["kept"] == b["kept"]
        for key in ("p", "p_raw", "entropy_raw", "entropy"):
            assert b[key] == pytest.approx(a[key], abs=TOL), key
        for key in ("p_raw", "p_temp", "p_topk", "p_filtered"):
            assert b["candidates"][key] == pytest.approx(a["candidates"][key], abs=TOL), key


def test_readers_decoded_together_draw_what_each_draws_alone(course):
    jobs = jobs_for(course.tokenizer, 16, 24)
    alone = [list(sampling.steps(course.model, *j)) for j in jobs]
    before, sizes = fingerprint(course.model), len(shared.engine_for(course.model).batches)
    batched = together(course.model, jobs)
    for a, b in zip(alone, batched, strict=True):
        assert_same(a, b)
    steps_run = list(shared.engine_for(course.model).batches)[sizes:]
    assert max(steps_run) >= 8, steps_run  # decoded together, not one after another
    assert fingerprint(course.model) == before  # the shared model only read


@pytest.mark.slow
def test_gpt2_small_shapes_batched_equal_alone():
    from lab.testing.random_models import build

    model, tok = build("gpt2", "small")
    jobs = jobs_for(tok, 8, 6)
    alone = [list(sampling.steps(model, *j)) for j in jobs]
    for a, b in zip(alone, together(model, jobs), strict=True):
        assert_same(a, b)


def test_a_model_without_a_cache_gpt1_batched_equal_alone(tiny_model_dirs):
    from lab import models

    gpt1 = models.load(str(tiny_model_dirs["openai-gpt"]))
    assert not sampling.uses_cache(gpt1.model)
    jobs = jobs_for(gpt1.tokenizer, 6, 8)
    alone = [list(sampling.steps(gpt1.model, *j)) for j in jobs]
    for a, b in zip(alone, together(gpt1.model, jobs), strict=True):
        assert_same(a, b)


def test_refusals_are_raised_before_anything_is_queued(course):
    from lab.sampling import SamplingError

    engine = shared.engine_for(course.model)
    before = engine.submitted
    for args, reason in [(([], 5, 1.0, 0, 1.0, 0), "empty_prompt"), (([1, 2], 0, 1.0, 0, 1.0, 0), "max_new_tokens"),
                         (([1, 2], 5, -1.0, 0, 1.0, 0), "temperature"), (([1, 2], 5, 1.0, 0, 1.0, -3), "seed")]:
        with pytest.raises(SamplingError) as e:
            next(shared.steps(course.model, *args))
        assert e.value.reason == reason
    assert engine.submitted == before


def test_a_reader_who_leaves_frees_their_row(course):
    engine = shared.engine_for(course.model)
    gen = shared.steps(course.model, [464, 4676], 200, 1.0, 0, 1.0, 3)
    next(gen), next(gen)
    gen.close()  # the reader closed the tab: the page's generator is closed
    time.sleep(0.5)
    steps_after = len(engine.batches)
    time.sleep(0.5)
    assert len(engine.batches) == steps_after  # no row left decoding for nobody


def test_one_rows_failure_fails_that_reader_alone(course):
    """A job whose step breaks (here its step callback, on its third token) gets an error; the row beside it in the
    same batch finishes with the tokens it draws alone."""
    engine = engines.Engine(course.model, batching="continuous", max_batch=4)
    done: dict[str, str] = {}
    got: dict[str, list[int]] = {"ok": [], "bad": []}

    def on_step(name):
        def record(step):
            if name == "bad" and len(got["bad"]) == 2:
                raise RuntimeError("a broken row")
            got[name].append(step["id"])
            return True
        return record

    for name, seed in (("ok", 5), ("bad", 6)):
        engine.submit(engines.Job(ids=[464, 4676, 286], max_tokens=12, temperature=1.0, top_k=0, top_p=1.0,
                                  seed=seed, emit=lambda *_: True, done=lambda r, n=name: done.__setitem__(n, r),
                                  on_step=on_step(name), ignore_eos=True))
    deadline = time.monotonic() + 60
    while len(done) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done["bad"].startswith("error: RuntimeError: a broken row") and len(got["bad"]) == 2
    assert done["ok"] == "length"
    alone = [s["id"] for s in sampling.steps(course.model, [464, 4676, 286], 12, 1.0, 0, 1.0, 5, stop_at_eos=False)]
    assert got["ok"] == alone


def test_a_full_queue_is_refused_at_once_and_a_waiting_reader_knows_their_place(course):
    engine = engines.Engine(course.model, batching="continuous", max_batch=1, max_waiting=2)
    release = threading.Event()
    first = engines.Job(ids=[464], max_tokens=50, temperature=1.0, top_k=0, top_p=1.0, seed=0, emit=lambda *_: True,
                        done=lambda r: None, on_step=lambda s: release.wait(30) or True, ignore_eos=True)
    engine.submit(first)
    deadline = time.monotonic() + 30
    while engine.ahead(first) is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    waiting = [engines.Job(ids=[464], max_tokens=2, temperature=1.0, top_k=0, top_p=1.0, seed=i, emit=lambda *_: True,
                           done=lambda r: None) for i in range(2)]
    for j in waiting:
        engine.submit(j)
    assert engine.ahead(first) is None and [engine.ahead(j) for j in waiting] == [0, 1]
    with pytest.raises(engines.EngineBusy) as e:
        engine.submit(engines.Job(ids=[464], max_tokens=2, temperature=1.0, top_k=0, top_p=1.0, seed=9,
                                  emit=lambda *_: True, done=lambda r: None))
    assert e.value.reason == "busy" and e.value.details == {"waiting": 2, "limit": 2}
    first.cancelled.set()
    release.set()


def test_the_busy_and_failed_notices_in_both_languages(monkeypatch):
    from ui import i18n, messages

    busy = engines.EngineBusy("the engine is busy", "busy", waiting=1200, limit=256)
    failed = shared.GenerationFailed("the generation failed", "failed", error="error: RuntimeError: x")
    monkeypatch.setattr(i18n, "lang", lambda: "en")
    assert messages.text(busy) == "The server is busy: 1,200 generations are waiting already. Try again in a moment."
    assert "the other readers' go on" in messages.text(failed)
    monkeypatch.setattr(i18n, "lang", lambda: "pt")
    assert messages.text(busy).startswith("O servidor está ocupado: 1.200 gerações")
    assert "RuntimeError: x" in messages.text(failed)


def test_many_threads_leave_the_shared_model_as_it_was(course):
    """Sixteen sessions generating at once, through the engine and alone side by side: nothing written on the model
    or its config (DESIGN.md: a cached model is shared by every session)."""
    before, config = fingerprint(course.model), course.model.config.to_dict()
    jobs = jobs_for(course.tokenizer, 16, 8)
    threads = [threading.Thread(target=lambda j=j: list(sampling.steps(course.model, *j))) for j in jobs[:4]]
    for t in threads:
        t.start()
    together(course.model, jobs)
    for t in threads:
        t.join(120)
    assert fingerprint(course.model) == before and course.model.config.to_dict() == config
    assert torch.is_inference_mode_enabled() is False


def test_the_engine_switched_off_decodes_alone(course, monkeypatch):
    """LAB_ENGINE_OFF=1 (the class bench's "before"): nothing reaches the engine, the steps are lab.sampling's."""
    monkeypatch.setenv(shared.OFF, "1")
    engine = shared.engine_for(course.model)
    before = engine.submitted
    got = list(shared.steps(course.model, [464, 4676], 6, 1.0, 0, 1.0, 11))
    assert engine.submitted == before
    assert got == list(sampling.steps(course.model, [464, 4676], 6, 1.0, 0, 1.0, 11))


LONG = ("The quick brown fox jumps over the lazy dog near the river bank. " * 40)[:2000]  # the hosted cap's 2,000


def long_and_short(tokenizer, long_tokens: int | None, n: int, new: int) -> list[tuple]:
    from lab.text import encode

    ids = encode(tokenizer, LONG, "prompt")[:long_tokens]
    return [(ids, new, 1.0, 0, 1.0, 7), *jobs_for(tokenizer, n, new)]


def assert_decoded_apart(engine, since: int) -> None:
    """The long row decoded beside the others, never padded into their group: every step's group of several rows
    is short."""
    steps = list(engine.groups)[since:]
    assert any(len(groups) == 2 for groups in steps), steps  # at the same time, in two groups
    for groups in steps:
        for rows, width in groups:
            assert rows == 1 or width < 120, groups


def test_a_long_prompt_decodes_apart_and_draws_what_it_draws_alone(course):
    """Fairness (issue 57): a reader's long text (here the course model's 200 tokens) does not make thirty short
    rows read and copy its columns at every step; each row, long or short, still draws what it draws alone."""
    jobs = long_and_short(course.tokenizer, 200, 8, 16)
    alone = [list(sampling.steps(course.model, *j)) for j in jobs]
    engine = shared.engine_for(course.model)
    since = len(engine.groups)
    batched = together(course.model, jobs)
    for a, b in zip(alone, batched, strict=True):
        assert_same(a, b)
    assert_decoded_apart(engine, since)


@pytest.mark.slow
def test_a_text_at_the_hosted_cap_on_gpt2_small_shapes():
    """The hosted cap's 2,000 characters (431 GPT-2 tokens) beside four short prompts, on GPT-2 small's shapes."""
    from lab.testing.random_models import build

    model, tok = build("gpt2", "small")
    jobs = long_and_short(tok, None, 4, 6)
    assert len(jobs[0][0]) > 400
    alone = [list(sampling.steps(model, *j)) for j in jobs]
    batched = together(model, jobs)
    for a, b in zip(alone, batched, strict=True):
        assert_same(a, b)
    assert_decoded_apart(shared.engine_for(model), 0)


@pytest.mark.slow
def test_a_process_that_exits_while_the_engine_decodes_exits_cleanly():
    """The interpreter's exit while the engine's daemon worker was inside torch (a reader's generation still
    running: a server stopped mid-class, a script that left early) aborted the process: "terminate called without
    an active exception", exit status 134, every run here. Engines are closed at exit: each run exits 0."""
    import subprocess
    import sys

    from tests.streamlit_server import ROOT

    code = ("from lab.testing.random_models import build\nfrom lab.serving import shared\n"
            "model, tok = build('gpt2', 'tiny')\n"
            "gen = shared.steps(model, tok.encode('hello there'), 60, 1.0, 0, 1.0, 1)\n"
            "print(next(gen)['id'] >= 0)\n")  # one token drawn, 59 still to decode when the script ends
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.strip() == "True", (out.returncode, out.stderr[-300:])


def test_the_step_log_holds_each_steps_groups(course, tmp_path):
    """LAB_ENGINE_LOG (the class bench's batch sizes): one JSON line per step, the rows and longest length of each
    group, as the engine recorded them; the bench's summary of them, by hand."""
    import json

    from bench_pages.class_play import engine_summary

    log = tmp_path / "steps.jsonl"
    engine = engines.Engine(course.model, batching="continuous", max_batch=4, step_log=str(log))
    done = threading.Event()
    finished: list[str] = []
    for seed in (1, 2):
        engine.submit(engines.Job(ids=[464, 4676, 286], max_tokens=6, temperature=1.0, top_k=0, top_p=1.0, seed=seed,
                                  emit=lambda *_: True, ignore_eos=True,
                                  done=lambda r: (finished.append(r), len(finished) == 2 and done.set())))
    assert done.wait(60)
    lines = log.read_text().splitlines()
    assert [json.loads(line) for line in lines] == [[list(g) for g in step] for step in engine.groups]
    rows = [sum(r for r, _ in json.loads(line)) for line in lines]
    assert engine_summary(lines) == {"engine_steps": len(lines), "engine_rows_max": max(rows),
                                     "engine_rows_mean": round(sum(rows) / len(rows), 1), "engine_groups_max": 1}
    assert max(rows) == 2  # the two decoded together
