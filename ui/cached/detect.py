"""What the detector page computes (chapter 12): one text's per-token ranks and scores (st.cache_data per
model, observer, text and buckets), and the evaluation set's scores per (model, observer, buckets), kept
process-wide like the perplexity page's results. ui.draw.detect draws.

The set's scores for the course pair ship with the app (lab.detect.evaluation.shipped_rows: about 30 s of work
on 2 cores otherwise); any other model or bucket choice scores a balanced tenth of the set
(lab.detect.labelled_set.balanced: every human text, one continuation of each) once per process, with a progress
bar drawn by the caller. `python -m lab detect-eval --model M` scores the whole set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import streamlit as st

from lab.detect import evaluation as detect_eval
from lab.detect import labelled_set as detect_set
from lab.detect import scoring as detect
from lab.text import readable
from ui.model_loader import get_model

BUCKET_CHOICES = {"10/100/1000": (10, 100, 1000), "5/50/500": (5, 50, 500), "1/10/100": (1, 10, 100),
                  "20/200/2000": (20, 200, 2000)}
PAGE_CHARS = 4_000  # the page scores a text's first 4,000 characters (the CLI takes it whole)
SAMPLES = ("human", *detect_set.SETTINGS)  # the project's own passage, then course-gpt2's continuations of it
_rows: dict[tuple, list[dict]] = {}
_evaluated: dict[int, tuple[list[dict], dict]] = {}  # id(rows) -> (rows, detect_eval.evaluate(rows)): one per set
_lock = threading.Lock()


@st.cache_data(max_entries=4, show_spinner=False)
def samples(language: str) -> dict[str, str]:
    """{option: text}: the set's first passage written by the project in `language`, and course-gpt2's
    continuations of its opening under each decoding setting."""
    texts = detect_set.load()["texts"]
    human = next(t for t in texts if t["source"] == "written-by-the-project" and t["lang"] == language)
    out = {"human": human["text"]}
    for t in texts:
        if t["pair"] == human["id"] and t.get("generator") == detect_set.GENERATORS[0]:
            out[t["setting"]] = t["text"]
    return out


@st.cache_data(max_entries=32, show_spinner=False)
def text_view(model: str, observer: str | None, text: str, buckets: tuple) -> dict:
    """lab.detect.scoring.detect's result for one text (DetectError on bad input), with its readable runs."""
    m = get_model(model)
    result = detect.detect(m, text, get_model(observer) if observer else None, buckets)
    return result | {"runs": readable(m.tokenizer, result["ids"])}


def set_rows(model: str, observer: str | None, buckets: tuple, progress_bar: Callable) -> list[dict]:
    """The evaluation set's rows (lab.detect.evaluation.score_set): shipped, stored, or computed now, with
    `progress_bar()` (st.progress's: .progress(f), .empty()) drawn while they are."""
    m, o = get_model(model), get_model(observer) if observer else None
    key = (detect_eval.weights_id(m), detect_eval.weights_id(o) if o is not None else None, buckets)  # by weights:
    with _lock:  # a retrained model or a test's stand-in never gets another model's rows
        if key in _rows:
            return _rows[key]
    rows = detect_eval.shipped_rows(m, o, buckets)
    if rows is None:  # not shipped: every human text and one continuation of each (a tenth of the machine texts)
        if o is None:
            detect.check_decoder(m)
        else:
            detect.check_pair(m, o)
        bar = progress_bar()
        texts = detect_set.balanced(detect_set.load()["texts"])
        rows = detect_eval.score_set(m, texts, o, buckets, progress=bar.progress)
        bar.empty()
    with _lock:
        _rows[key] = rows
    return rows


def evaluation(rows: list[dict]) -> dict:
    """detect_eval.evaluate(rows) (every score's AUROC and rates on the set), computed once per stored set of
    rows: every reader of the page shares it (a class on one link paid it twice per reader). Read-only."""
    with _lock:
        found = _evaluated.get(id(rows))
    if found is not None and found[0] is rows:
        return found[1]
    result = detect_eval.evaluate(rows)
    with _lock:
        _evaluated[id(rows)] = (rows, result)  # rows kept with it: their id is not reused while stored
    return result


def clear() -> None:
    """Forget the stored rows and their evaluations (tests)."""
    with _lock:
        _rows.clear()
        _evaluated.clear()


def is_machine(rows: list[dict]) -> np.ndarray:
    """True for each machine-written text of the rows."""
    return np.array([r["label"] == "machine" for r in rows])


def oriented(rows: list[dict], method: str) -> np.ndarray:
    return detect_eval.oriented(method, [r[method] for r in rows])


def threshold(rows: list[dict], method: str, percentile: int) -> float:
    """The oriented score at this percentile of the set's human texts: flagging what scores above it wrongly
    flags about (100 - percentile) % of them, the way a detector is tuned to a false-positive rate."""
    return float(np.percentile(oriented(rows, method)[~is_machine(rows)], percentile))


def flag_rates(rows: list[dict], method: str, cut: float) -> dict:
    """Who is flagged at this threshold: the false-positive rate of human texts per language and length band,
    the true-positive rate per decoding setting and per generating model."""
    s, y = oriented(rows, method), is_machine(rows)
    out = {}
    for name, mask in detect_eval.groups(rows).items():
        part = detect_eval.rates(y[mask], s[mask], cut)
        kind = "fpr" if name.split(":")[0] in ("lang", "length") else "tpr"
        out[name] = (kind, part[kind], int((~y[mask]).sum() if kind == "fpr" else y[mask].sum()))
    return out
