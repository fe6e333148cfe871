"""Warm what the slowest first visits wait for, once per server process, in the background (issue 34, item 11).

After a server start the first reader of the detector or the ceiling waited 9-17 s: torch and transformers
imported, the course models loaded, the ceiling's course table measured (docs/hosting.md has the figures). The
first script run of the process, whatever its page, starts one thread that loads the course models the pages open
on (those this server offers, already on disk, and only while they fit the memory budget without evicting any),
then measures the ceiling's course table; a reader who arrives meanwhile shares the same loads (the model cache
loads a model once however many ask) and sees what is loading in the page's spinner.

It gives way to readers: before each step (a model, then each half of a row of the ceiling's table, each under a
second of one core) it waits until no script run has been going for GRACE_S; app.py wraps each run in `reading()`.
A class that opens a link while it warms is served first (`python -m lab bench --only class`, docs/hosting.md).

Where the image carries hub models (LAB_HUB_MODELS), it then loads the other decoders among them and makes each one's
detector evaluation set, while they fit the budget beside what is loaded (docs/hosting.md has the figures).

LAB_WARM=0 turns it off (the test suite does: its tests count loads and forward passes).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from lab import ceiling
from lab.models import DEFAULT_OFFLINE, hosting, hub, registry
from lab.models.budget import ModelTooLarge
from lab.models.default import default_model
from ui.limits import offered
from ui.model_loader import model_cache

ENV = "LAB_WARM"
MODELS = (DEFAULT_OFFLINE, *ceiling.COURSE_DECODERS, "course-roberta")  # every page's default model, the detector's
# observer and the ceiling's table among them
log = logging.getLogger(__name__)


GRACE_S = 1.0  # a step starts only after this long with no script run going (a class arrives over a few seconds)
_runs = {"active": 0, "ended": 0.0}  # script runs going now; when the last one ended (time.monotonic)
_idle = threading.Condition()


@contextmanager
def reading() -> Iterator[None]:
    """Around a script run (app.py): the warm-up waits while any run is going."""
    with _idle:
        _runs["active"] += 1
    try:
        yield
    finally:
        with _idle:
            _runs["active"] -= 1
            _runs["ended"] = time.monotonic()
            _idle.notify_all()


def wait_for_quiet(grace: float = GRACE_S) -> None:
    """Return once no script run has been going for `grace` seconds."""
    with _idle:
        while True:
            quiet_for = time.monotonic() - _runs["ended"]
            if _runs["active"] == 0 and quiet_for >= grace:
                return
            _idle.wait(None if _runs["active"] else grace - quiet_for)


def enabled() -> bool:
    """On unless LAB_WARM=0."""
    return os.environ.get(ENV, "1") != "0"


# {"thread": the warm-up thread or None}, once per process; a lock, not a Streamlit resource cache (the model loader
# is the app's one)
_started: dict = {}
_lock = threading.Lock()


def start() -> threading.Thread | None:
    """The process's warm-up thread, started by the first script run that asks (None when LAB_WARM=0)."""
    with _lock:
        if "thread" not in _started:
            _started["thread"] = None
            if enabled():
                _started["thread"] = threading.Thread(target=warm, args=(model_cache(),), name="lab-warm-up",
                                                      daemon=True)
                _started["thread"].start()
        return _started["thread"]


def reset() -> None:
    """Forget the process's warm-up (tests: a fresh process's first run)."""
    with _lock:
        _started.clear()


def models_to_warm(cache) -> list[str]:
    """The pages' default model (gpt2 where it is cached whole: lab.models.default.default_model) and MODELS that this
    server offers and has on disk, in order, as long as they fit the budget together."""
    return _fitting(cache, dict.fromkeys(offered((default_model(), *MODELS))))


def other_decoders(cache) -> list[str]:
    """The image's other hub decoders (LAB_HUB_MODELS, in its order: DistilGPT-2 and GPT-1 on the Space) that this
    server offers, has on disk and has not loaded, as long as they fit the budget beside what is loaded. A reader who
    switched the detector to one waited for its evaluation set: 33 s on distilgpt2, 47 s on openai-gpt (each a
    fresh container of the Space's image, docs/hosting.md)."""
    baked = hosting.baked(os.environ)
    names = [n for n in dict.fromkeys((os.environ.get(hosting.BAKED_ENV) or "").split()) if n in baked
             and n != default_model() and n not in cache and registry.REGISTRY[n].kind == "decoder"]
    return _fitting(cache, offered(names))


def _fitting(cache, names) -> list[str]:
    """`names` on disk, in order, as long as they fit the budget together beside what `cache` holds (one larger than
    the whole budget is passed over)."""
    kept, need = [], 0
    for name in names:
        if not hub.is_available(name):
            continue
        try:
            need += cache.check_fits(name)
        except ModelTooLarge:  # larger than the whole budget: not this one
            continue
        if cache.used_bytes + need > cache.budget:
            break
        kept.append(name)
    return kept


def warm(cache) -> None:
    """Load models_to_warm, make gpt2's slowest first views where the pages open on it, measure the ceiling's course
    table row by row, then load the image's other decoders with their detector sets; each step waits for a quiet
    moment; a failure is logged and the rest goes on."""
    from ui.cached import ceiling as cached_ceiling

    for name in models_to_warm(cache):
        _step(name, cache.get, name)
    default = default_model()
    if default not in MODELS and default in cache:  # the pages open on a hub model (gpt2): its slowest first views
        _step(f"the detector's evaluation set on {default}", detector_set, default)
        _step(f"the heads page's knock-out grid on {default}", heads_grid, default)
        for lang in ("en", "pt"):
            _step(f"the heads page's patching pair on {default} in {lang}", heads_patch, default, lang)
    if all(name in cache for name in ceiling.COURSE_DECODERS):  # else the table would load them past the budget
        texts = ceiling.unseen_texts()
        for name, lang in cached_ceiling.COURSE_ROWS:  # two steps a row (each under a second of one core)
            text = texts[lang][:cached_ceiling.PAGE_CHARS]
            _step(f"the ceiling's {name} curve in {lang}", cached_ceiling.measured, name, text, cached_ceiling.LONGEST)
            _step(f"the ceiling's {name} row in {lang}", cached_ceiling.course_row, name, lang)
        _step("the ceiling's course table", cached_ceiling.course_table, cached_ceiling.LONGEST)
    for name in other_decoders(cache):  # last: a reader opens the pages' defaults first, these on a switch
        _step(name, cache.get, name)
        if name in cache:
            _step(f"the detector's evaluation set on {name}", detector_set, name)


class _NoBar:
    """A progress bar nobody sees (the warm-up's scoring has no reader)."""

    def progress(self, *args, **kwargs) -> None:
        pass

    def empty(self) -> None:
        pass


def detector_set(name: str) -> None:
    """The detector page's evaluation set scored by `name` alone (ui.runs.detect), as its first reader would score
    it: shipped for the course pair only, so on GPT-2 small the first reader of a hosted demo waited about 80 s (180
    texts) behind a progress bar. Scored here in one step while nobody reads; a reader who comes meanwhile waits for
    the same scoring (ui.runs.detect's one turn per set), never a second one."""
    from lab.detect import scoring
    from ui.runs import detect as detect_rows

    detect_rows.set_rows(name, None, scoring.BUCKETS, _NoBar)


def heads_grid(name: str) -> None:
    """The heads page's default view on `name`: the repeated sequence and its knock-out grid (each head alone, zero
    mode), as its first reader asks for them (12 s of one core on GPT-2 small's shapes; the page's first reader on
    gpt2 waited 24 s, measured through the container)."""
    from lab import heads
    from ui.cached import heads as cached_heads

    r = cached_heads.copying(name, None, heads.LENGTH, heads.SEED)
    cached_heads.grid(name, tuple(r["ids"]), "zero")


def heads_patch(name: str, lang: str) -> None:
    """The heads page's default patching pair in `lang` on `name`, as its first reader asks for it."""
    from lab import patching
    from ui.cached import heads as cached_heads

    cached_heads.patch(name, *patching.defaults(lang))


def _step(what: str, fn, *args) -> None:
    wait_for_quiet()
    try:
        fn(*args)
    except Exception as e:  # a damaged model folder, memory: the page says so when a reader asks
        log.warning("warm-up: %s failed: %s", what, e)
