"""The start-up warm-up (ui/warmup.py; issue 34, item 11): the first script run of a server process loads the
course models and measures the ceiling's course table in the background, so the first reader of the detector or
the ceiling waits for none of it. The oracle is the app's own model cache and forward-pass count: after the
warm-up, the pages' first visits load no model and the ceiling's default measurements run no forward pass."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages import APP


def first_run(monkeypatch, warm: str) -> AppTest:
    monkeypatch.setenv("LAB_WARM", warm)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()  # the home page: it loads no model itself
    assert not at.exception
    return at


@pytest.mark.slow  # it loads every course model and measures the ceiling's table (35-80 s): make test, not make check
def test_the_first_run_warms_the_course_models_and_the_ceiling_table(course_standins, monkeypatch, forwards,
                                                                       shared_runtime):
    from lab import ceiling
    from ui import warmup
    from ui.cached import ceiling as cached_ceiling
    from ui.model_loader import model_cache

    at = first_run(monkeypatch, "1")
    thread = warmup.start()  # the thread that run started (one per process)
    assert thread is not None and thread.name == "lab-warm-up"
    thread.join(300)
    assert not thread.is_alive()
    cache = model_cache()
    assert set(warmup.MODELS) <= set(cache.keys())
    loads, passes = cache.loads, forwards["n"]
    unseen = ceiling.unseen_texts()
    for lang in ("en", "pt"):  # what the ceiling page asks first, in either language
        for name in ceiling.COURSE_DECODERS:
            cached_ceiling.measured(name, unseen[lang][:cached_ceiling.PAGE_CHARS], 64)
    cached_ceiling.course_table(64)
    assert forwards["n"] == passes, "the ceiling's default measurements ran the models again"
    for page in ("detector", "ceiling", "fill", "tokens"):
        at.switch_page(f"app_pages/{page}.py")
        at.run()
        assert not at.exception, page
    assert cache.loads == loads, "a first visit loaded a model the warm-up should have loaded"
    assert warmup.start() is thread  # later runs start no second thread


def test_lab_warm_0_warms_nothing(course_standins, monkeypatch):
    from ui import warmup
    from ui.model_loader import model_cache

    first_run(monkeypatch, "0")
    assert warmup.start() is None
    assert model_cache().keys() == []


@pytest.mark.parametrize("budget_models", [1, 2])
def test_the_warm_up_stops_where_the_memory_budget_would_evict(course_standins, monkeypatch, budget_models):
    """A hosted demo with a small budget: the warm-up loads models in order while they fit together, never
    evicting one to load the next."""
    from lab.models.budget import ModelCache
    from ui import warmup

    names = list(dict.fromkeys(warmup.MODELS))
    probe = ModelCache(budget=1 << 50)
    need = [probe.check_fits(n) for n in names]
    cache = ModelCache(budget=sum(need[:budget_models]) + min(need) // 2)
    warmup.warm(cache)
    assert cache.keys() == names[:budget_models] and cache.evictions == 0


def test_where_gpt2_is_the_pages_default_it_is_warmed_first(monkeypatch, tmp_path):
    """GPT-2 cached whole (GPT-2 small's shapes, random weights, in a Hugging Face cache under its hub id): the
    pages open on it (lab.models.default.default_model), so the warm-up loads it before the course models."""
    from bench_pages.gpt2_cache import prepared
    from lab.models.budget import ModelCache
    from ui import warmup

    hf = prepared(tmp_path)
    monkeypatch.setenv("HF_HOME", str(hf))
    monkeypatch.setenv("HF_HUB_CACHE", str(hf / "hub"))
    names = warmup.models_to_warm(ModelCache(budget=1 << 50))
    assert names[0] == "gpt2" and set(warmup.MODELS) <= set(names)


def test_where_the_pages_open_on_gpt2_its_slowest_first_views_are_made_before_a_reader_asks(fresh_caches, monkeypatch,
                                                                                             tmp_path, tiny_model_dirs):
    """The detector page scores its evaluation set live for any model but the course pair, and the heads page's
    knock-out grid and patching pair are the lab's (on GPT-2 small, through the container, the first reader of the
    detector waited about 80 s and of the heads page 24 s). Where gpt2 is the pages' default, the warm-up makes them:
    the first reader's calls then compute nothing. A tiny gpt2 in a private cache."""
    from lab import heads, patching
    from lab.detect import scoring
    from tests.test_models import fake_hub_cache
    from ui import warmup
    from ui.cached import heads as cached_heads
    from ui.model_loader import model_cache
    from ui.runs import detect as detect_rows

    hub = tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    fake_hub_cache(hub, "openai-community/gpt2", tiny_model_dirs["gpt2"])
    monkeypatch.setattr(warmup, "MODELS", ())  # the course models' steps are the first test's

    def computed(*_, **__):
        raise AssertionError("the first reader computed it again")

    warmup.warm(model_cache())
    monkeypatch.setattr(heads, "knockout_grid", computed)
    monkeypatch.setattr(patching, "patching", computed)
    rows = detect_rows.set_rows("gpt2", None, scoring.BUCKETS, computed)
    assert len(rows) == 180
    r = cached_heads.copying("gpt2", None, heads.LENGTH, heads.SEED)
    assert cached_heads.grid("gpt2", tuple(r["ids"]), "zero").shape == (2, 4)  # the tiny model's layers x heads
    for lang in ("en", "pt"):
        assert cached_heads.patch("gpt2", *patching.defaults(lang))["resid"].shape[0] == 2


def test_the_images_other_decoders_get_their_detector_set_too(fresh_caches, monkeypatch, tmp_path, tiny_model_dirs):
    """The Space carries gpt2, distilgpt2, openai-gpt and roberta-base (LAB_HUB_MODELS): a reader who switched the
    detector to GPT-1 waited 47 s for its evaluation set, on distilgpt2 33 s. The warm-up makes both decoders' sets
    after gpt2's views (RoBERTa is no decoder: the detector does not offer it); the first reader computes nothing.
    Tiny random models under the four hub ids, in a private cache."""
    from lab.detect import scoring
    from lab.models import hosting
    from tests.test_models import fake_hub_cache
    from ui import warmup
    from ui.model_loader import model_cache
    from ui.runs import detect as detect_rows

    hub = tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    for hub_id, arch in (("openai-community/gpt2", "gpt2"), ("distilbert/distilgpt2", "gpt2"),
                         ("openai-community/openai-gpt", "openai-gpt"), ("FacebookAI/roberta-base", "roberta")):
        fake_hub_cache(hub, hub_id, tiny_model_dirs[arch])
    monkeypatch.setenv(hosting.BAKED_ENV, "gpt2 openai-gpt roberta-base distilgpt2")
    monkeypatch.setattr(warmup, "MODELS", ())  # the course models' steps are the first test's
    for slow in ("heads_grid", "heads_patch"):  # gpt2's own views: the test above
        monkeypatch.setattr(warmup, slow, lambda *_: None)
    assert warmup.other_decoders(model_cache()) == ["openai-gpt", "distilgpt2"]  # the image's order, no encoder

    def computed(*_, **__):
        raise AssertionError("the first reader computed it again")

    warmup.warm(model_cache())
    for name in ("gpt2", "openai-gpt", "distilgpt2"):
        assert name in model_cache() and len(detect_rows.set_rows(name, None, scoring.BUCKETS, computed)) == 180
    assert "roberta-base" not in model_cache() and warmup.other_decoders(model_cache()) == []


def test_the_other_decoders_stop_where_the_budget_would_evict(fresh_caches, monkeypatch, tmp_path, tiny_model_dirs):
    """Beside what is loaded, only the image's decoders that fit the budget together are warmed, in its order."""
    from lab.models import hosting
    from lab.models.budget import ModelCache
    from tests.test_models import fake_hub_cache
    from ui import warmup

    hub = tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    for hub_id, arch in (("distilbert/distilgpt2", "gpt2"), ("openai-community/openai-gpt", "openai-gpt")):
        fake_hub_cache(hub, hub_id, tiny_model_dirs[arch])
    monkeypatch.setenv(hosting.BAKED_ENV, "distilgpt2 openai-gpt")
    need = {n: ModelCache(budget=1 << 50).check_fits(n) for n in ("distilgpt2", "openai-gpt")}
    assert warmup.other_decoders(ModelCache(budget=sum(need.values()))) == ["distilgpt2", "openai-gpt"]
    assert warmup.other_decoders(ModelCache(budget=sum(need.values()) - 1)) == ["distilgpt2"]
    assert warmup.other_decoders(ModelCache(budget=need["distilgpt2"] - 1)) == []  # neither fits even alone


def test_a_warm_up_step_waits_until_no_reader_has_run_for_the_grace(monkeypatch):
    """The warm-up gives way to readers: a step does not start while a script run is going, nor within GRACE_S of
    the last one ending; then it does."""
    import threading
    import time

    from ui import warmup

    done = []
    with warmup.reading():  # a reader's run is going
        step = threading.Thread(target=warmup._step, args=("a step", lambda: done.append(time.monotonic())))
        step.start()
        step.join(2 * warmup.GRACE_S + 0.5)
        assert done == [], "the warm-up ran a step while a reader's script was running"
        ended_before = time.monotonic()
    step.join(30)
    assert not step.is_alive() and len(done) == 1
    assert done[0] - ended_before >= warmup.GRACE_S


def test_every_run_of_the_app_counts_as_a_reader_for_the_warm_up(course_standins, monkeypatch):
    """app.py wraps each script run in warmup.reading(): the warm-up sees a run going while the page draws, and none
    once it ended."""
    from ui import warmup

    seen = []
    monkeypatch.setattr(warmup, "start", lambda: seen.append(warmup._runs["active"]))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception
    assert seen == [1] and warmup._runs["active"] == 0


def test_the_course_table_is_its_rows_measured_one_at_a_time(course_standins):
    """The warm-up measures the ceiling's table row by row (ui.cached.ceiling.course_row); the table is those rows,
    in the course's order, each equal to lab.ceiling.course_row on the unseen text."""
    from lab import ceiling
    from lab.models import load
    from ui.cached import ceiling as cached_ceiling

    table = cached_ceiling.course_table(cached_ceiling.LONGEST)
    assert [(r["model"], r["lang"]) for r in table] == cached_ceiling.COURSE_ROWS
    name, lang = cached_ceiling.COURSE_ROWS[-1]
    m, text = load(name), ceiling.unseen_texts()[lang][:cached_ceiling.PAGE_CHARS]
    direct = ceiling.course_row(m, text, cached_ceiling.LONGEST, ceiling.K)
    assert table[-1] == {**direct, "lang": lang}
