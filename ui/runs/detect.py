"""The detector page's evaluation set scores (chapter 12), kept process-wide by the weights that scored them.

The set's scores for the course pair ship with the app (lab.detect.evaluation.shipped_rows; docs/detector.md
says what that saves); any other model or bucket choice scores a balanced subset of the set
(lab.detect.labelled_set.balanced: the 90 human texts continued in every setting, one continuation of each) once
per process, with a progress bar drawn by the caller. `python -m lab detect-eval --model M` scores the whole set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from lab.detect import evaluation as detect_eval
from lab.detect import labelled_set as detect_set
from lab.detect import scoring as detect
from ui.model_loader import get_model
from ui.runs.single import Single

_rows: dict[tuple, list[dict]] = {}
_evaluated: dict[int, tuple[list[dict], dict]] = {}  # id(rows) -> (rows, detect_eval.evaluate(rows)): one per set
_derived: dict[tuple, tuple[list[dict], object]] = {}  # (what, id(rows), choice...) -> (rows, result): _once
KEPT = 1024  # derived results kept (a threshold for each of 7 scores x 99 percentiles is 693)
_lock = threading.Lock()
_single = Single()  # a class on a cold link: the first reader scores or evaluates, the others wait for it


def set_rows(model: str, observer: str | None, buckets: tuple, progress_bar: Callable) -> list[dict]:
    """The evaluation set's rows (lab.detect.evaluation.score_set): shipped, stored, or computed now, with
    `progress_bar()` (st.progress's: .progress(f), .empty()) drawn while they are."""
    m, o = get_model(model), get_model(observer) if observer else None
    key = (detect_eval.weights_id(m), detect_eval.weights_id(o) if o is not None else None, buckets)  # by weights:
    with _single.turn(key):
        with _lock:  # a retrained model or a test's stand-in never gets another model's rows
            if key in _rows:
                return _rows[key]
        rows = _scored(m, o, buckets, progress_bar)
        with _lock:
            _rows[key] = rows
        return rows


def _scored(m, o, buckets: tuple, progress_bar: Callable) -> list[dict]:
    """The set's rows for this pair: shipped, or scored now (a balanced subset: 180 of its 1,430 texts) with a
    progress bar."""
    rows = detect_eval.shipped_rows(m, o, buckets)
    if rows is None:  # not shipped: every human text and one continuation of each (180 of the 1,430 texts)
        if o is None:
            detect.check_decoder(m)
        else:
            detect.check_pair(m, o)
        bar = progress_bar()
        texts = detect_set.balanced(detect_set.load()["texts"])
        rows = detect_eval.score_set(m, texts, o, buckets, progress=bar.progress)
        bar.empty()
    return rows


def evaluation(rows: list[dict]) -> dict:
    """detect_eval.evaluate(rows) (every score's AUROC and rates on the set), computed once per stored set of
    rows: every reader of the page shares it (a class on one link paid it per reader). Read-only."""
    with _single.turn(("evaluation", id(rows))):
        with _lock:
            found = _evaluated.get(id(rows))
        if found is not None and found[0] is rows:
            return found[1]
        result = detect_eval.evaluate(rows)
        with _lock:
            _evaluated[id(rows)] = (rows, result)  # rows kept with it: their id is not reused while stored
        return result


def at_threshold(rows: list[dict], method: str, percentile: float) -> dict:
    """detect_eval.at_threshold(rows, method, percentile) for stored rows, computed once per choice: a class on one
    link reads the same rates, ROC and groups (it cost every reader a pass over the set). Read-only."""
    return _once(("threshold", id(rows), method, percentile), rows, detect_eval.at_threshold, method, percentile)


def histogram(rows: list[dict], method: str) -> dict:
    """detect_eval.histogram(rows, method) for stored rows, once per score. Read-only."""
    return _once(("histogram", id(rows), method), rows, detect_eval.histogram, method)


def _once(key: tuple, rows: list[dict], compute: Callable, *args):
    """compute(rows, *args), kept under `key` with the rows it came from (their id is not reused while kept); at
    most KEPT results, the oldest forgotten first."""
    with _lock:
        found = _derived.get(key)
    if found is not None and found[0] is rows:
        return found[1]
    result = compute(rows, *args)
    with _lock:
        while len(_derived) >= KEPT:
            _derived.pop(next(iter(_derived)))
        _derived[key] = (rows, result)
    return result


def clear() -> None:
    """Forget the stored rows and what was derived from them (tests)."""
    with _lock:
        _rows.clear()
        _evaluated.clear()
        _derived.clear()
