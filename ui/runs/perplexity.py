"""The perplexity page's evaluations (chapters 06, 08, 09): one per (model, text, stride), computed once per process.

Models are evaluated one after another through the shared loader (its memory budget drops the
least recently used model when the next one needs room), each with its own progress bar (drawn by
the caller). Results live in a small process-wide table keyed by (model, text, stride fraction), so a
table that filled in survives page switches and a classroom opening the same link computes each row once.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

from lab import perplexity
from lab.models import ModelUnavailable, hosting, registry
from lab.models.budget import ModelTooLarge
from lab.text import encode, readable
from ui import messages
from ui.i18n import t
from ui.model_loader import load_named
from ui.runs.single import Single

MAX_RESULTS = 256
_results: OrderedDict[tuple, dict] = OrderedDict()
_lock = threading.Lock()
_single = Single()  # a class on a cold link: the first reader evaluates, the others wait for its result


def _key(name: str, text: str, fraction: float) -> tuple:
    return name, hashlib.sha256(text.encode("utf-8")).hexdigest(), fraction


def stored(name: str, text: str, fraction: float) -> dict | None:
    """The stored result for this model, text and stride, if any."""
    with _lock:
        found = _results.get(_key(name, text, fraction))
        if found is not None:
            _results.move_to_end(_key(name, text, fraction))
        return found


def _store(name: str, text: str, fraction: float, result: dict) -> None:
    with _lock:
        _results[_key(name, text, fraction)] = result
        while len(_results) > MAX_RESULTS:
            _results.popitem(last=False)


def clear() -> None:
    """Forget every stored result (tests)."""
    with _lock:
        _results.clear()


def evaluate(name: str, text: str, fraction: float, progress_bar: Callable) -> dict:
    """The result for one model (stored), or {"model", "error"} when it cannot be had. Once the model is loaded,
    `progress_bar(words)` draws a bar (st.progress's: .progress(f, text=words), .empty()) for the evaluation."""
    if (found := stored(name, text, fraction)) is not None:
        return found
    with _single.turn(_key(name, text, fraction)):
        return stored(name, text, fraction) or _evaluate(name, text, fraction, progress_bar)


def _evaluate(name: str, text: str, fraction: float, progress_bar: Callable) -> dict:
    """evaluate's computation, stored when it succeeds."""
    label = registry.info(name).label if name in registry.REGISTRY else name
    try:
        loaded = load_named(name)
    except (hosting.ModelNotOffered, ModelUnavailable, ModelTooLarge) as e:
        return {"model": name, "error": messages.text(e)}
    words = t(f"Evaluating {label}…", f"Avaliando {label}…")
    bar = progress_bar(words)
    stride = max(1, int(loaded.context * fraction))
    try:
        result = perplexity.evaluate(loaded, text, stride, progress=lambda f: bar.progress(f, text=words))
    except perplexity.PerplexityError as e:
        bar.empty()
        return {"model": name, "error": messages.text(e)}
    result["params"] = registry.info(name).params if name in registry.REGISTRY else None
    result["non_embedding"] = perplexity.non_embedding_params(loaded.model)
    ids = encode(loaded.tokenizer, text)
    result["runs"] = readable(loaded.tokenizer, ids)  # the surprisal view reads split characters whole
    if name.startswith("course-gpt2"):  # the course tokenizer: the unigram baseline applies
        unigram = perplexity.unigram_nll(ids, [r["position"] for r in result["surprisal"]])
        if unigram is not None:
            result["unigram_nll"] = unigram
    del loaded  # the next model may need the room; the cache decides
    bar.empty()
    _store(name, text, fraction, result)
    return result
