"""Data for the perplexity page: one evaluation per (model, text, stride), computed once per process.

Models are evaluated one after another through the shared loader (its memory budget drops the
least recently used model when the next one needs room), each with its own progress bar. Results
live in a small process-wide table keyed by (model, text, stride fraction), so a table that filled
in survives page switches and a classroom opening the same link computes each row once.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import streamlit as st

from lab import hosting, perplexity, registry
from lab.model_cache import ModelTooLarge
from lab.models import ModelUnavailable
from lab.text import encode
from ui import messages
from ui.i18n import lang, num, t
from ui.model_loader import load_named

MAX_RESULTS = 256
STRIDES = (0.125, 0.25, 0.5, 1.0)  # fractions of each model's context; the guide's default is 1/2
_results: OrderedDict[tuple, dict] = OrderedDict()
_lock = threading.Lock()


def _key(name: str, text: str, fraction: float) -> tuple:
    return name, hashlib.sha256(text.encode("utf-8")).hexdigest(), fraction


def cached(name: str, text: str, fraction: float) -> dict | None:
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


def error_text(e: Exception) -> str:
    """A PerplexityError in the reader's language."""
    if getattr(e, "reason", None) == "empty":
        return t("The text is empty.", "O texto está vazio.")
    if getattr(e, "reason", None) == "one_token":
        return t("The text is a single token: there is nothing to predict.",
                 "O texto é um único token: não há nada a prever.")
    return str(e)


def evaluate(name: str, text: str, fraction: float) -> dict:
    """The result for one model (stored), or {"model", "error"} when it cannot be had; a progress bar meanwhile."""
    if (found := cached(name, text, fraction)) is not None:
        return found
    label = registry.info(name).label if name in registry.REGISTRY else name
    try:
        loaded = load_named(name)
    except hosting.ModelNotOffered as e:
        return {"model": name, "error": messages.text(e)}
    except (ModelUnavailable, ModelTooLarge) as e:
        return {"model": name, "error": messages.text(e)}
    bar = st.progress(0.0, text=t(f"Evaluating {label}…", f"Avaliando {label}…"))
    stride = max(1, int(loaded.context * fraction))
    try:
        result = perplexity.evaluate(loaded, text, stride, progress=lambda f: bar.progress(
            f, text=t(f"Evaluating {label}…", f"Avaliando {label}…")))
    except perplexity.PerplexityError as e:
        bar.empty()
        return {"model": name, "error": error_text(e)}
    result["params"] = registry.info(name).params if name in registry.REGISTRY else None
    result["non_embedding"] = perplexity.non_embedding_params(loaded.model)
    if name.startswith("course-gpt2"):  # the course tokenizer: the unigram baseline applies
        ids = encode(loaded.tokenizer, text)
        unigram = perplexity.unigram_nll(ids, [r["position"] for r in result["surprisal"]])
        if unigram is not None:
            result["unigram_nll"] = unigram
    del loaded  # the next model may need the room; the cache decides
    bar.empty()
    _store(name, text, fraction, result)
    return result


# lab.perplexity.PUBLISHED's English wording, in Portuguese.
PUBLISHED_PT = {"WikiText-2": "WikiText-2", "WikiText-2 (raw), stride 1024": "WikiText-2 (texto cru), stride de 1.024",
                "WikiText-2 (raw), stride 512": "WikiText-2 (texto cru), stride de 512",
                "GPT-2 paper (Radford et al. 2019), table 3, zero-shot":
                    "artigo do GPT-2 (Radford et al. 2019), tabela 3, zero-shot",
                "GPT-2 paper, table 3, zero-shot": "artigo do GPT-2, tabela 3, zero-shot",
                'Hugging Face guide "Perplexity of fixed-length models"':
                    "guia da Hugging Face sobre a perplexidade de modelos de contexto fixo"}


def published_table(model_header: str):
    """perplexity.PUBLISHED as the page shows it: headers and wording in the UI language, numbers written its way."""
    import pandas as pd

    rows = pd.DataFrame(perplexity.PUBLISHED)
    if lang() == "pt":
        rows = rows.assign(dataset=[PUBLISHED_PT.get(d, d) for d in rows["dataset"]],
                           source=[PUBLISHED_PT.get(s, s) for s in rows["source"]],
                           ppl=[num(float(p)) for p in rows["ppl"]])
    return rows.rename(columns={"model": model_header, "dataset": t("data", "dados"), "source": t("source", "fonte")})
