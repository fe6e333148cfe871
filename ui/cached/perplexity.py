"""What the perplexity page computes (chapters 06, 08, 09): one evaluation per (model, text, stride), computed
once per process; the texts it offers; the published figures. ui.draw.perplexity draws.

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

import streamlit as st

from lab import perplexity
from lab.models import ModelUnavailable, hosting, registry
from lab.models.budget import ModelTooLarge
from lab.text import encode, readable
from ui import messages
from ui.i18n import lang, num, t
from ui.model_loader import load_named
from viz import perplexity as viz

MAX_RESULTS = 256
STRIDES = (0.125, 0.25, 0.5, 1.0)  # fractions of each model's context; the guide's default is 1/2
PAGE_CHARS = 6_000  # the unseen Debian text and the reader's own are cut here on the page (the CLI takes them whole)
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


def evaluate(name: str, text: str, fraction: float, progress_bar: Callable) -> dict:
    """The result for one model (stored), or {"model", "error"} when it cannot be had. Once the model is loaded,
    `progress_bar(words)` draws a bar (st.progress's: .progress(f, text=words), .empty()) for the evaluation."""
    if (found := cached(name, text, fraction)) is not None:
        return found
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


@st.cache_data(max_entries=64, show_spinner=False)
def strip_html(name: str, text: str, fraction: float, language: str) -> str:
    """The surprisal strip of one evaluated model (viz.perplexity.surprisal_html), made once per model, text,
    stride and language (keyed by those, never by the result's thousands of records)."""
    r = cached(name, text, fraction)
    return viz.surprisal_html(text, r["surprisal"], language, runs=r.get("runs"),
                              joined=t("{n} tokens, summed", "{n} tokens, somados"))


@st.cache_data(max_entries=64, show_spinner=False)
def compare_html(a: str, b: str, text: str, fraction: float, language: str) -> str:
    """Two evaluated models word by word (viz.perplexity.compare_html), made once per pair, text, stride, language."""
    n = len(text)
    words = viz.words_compare(text, perplexity.by_character(cached(a, text, fraction)["surprisal"], n),
                              perplexity.by_character(cached(b, text, fraction)["surprisal"], n))
    return viz.compare_html(text, words, language, (a, b))


def texts() -> tuple[dict[str, str], dict[str, str]]:
    """The text selector's options as ({option: its text}, {option: its name in the UI language}): the bundled
    passages, the unseen documentation (cut at PAGE_CHARS) and "own" (its text: the reader's box's default)."""
    sources = {f"{p['id']}:{p['lang']}": p for p in perplexity.passages()}
    unseen = perplexity.unseen_texts()
    titles = {(p["id"], p["lang"]): p["title"] for p in sources.values()}  # an English text's title in Portuguese too
    texts = {k: p["text"] for k, p in sources.items()} | {
        f"unseen:{code}": unseen[code][:PAGE_CHARS] for code in ("en", "pt")} | {"own": sources["market:en"]["text"]}
    names = {k: f"{titles.get((p['id'], lang()), p['title'])} ({p['lang'].upper()})" for k, p in sources.items()} | {
        "unseen:en": t("Debian documentation no course model saw (EN)",
                       "Documentação Debian que nenhum modelo do curso viu (EN)"),
        "unseen:pt": t("Debian documentation no course model saw (PT)",
                       "Documentação Debian que nenhum modelo do curso viu (PT)"),
        "own": t("Your own text", "Seu próprio texto")}
    return texts, names


def headers() -> dict[str, str]:
    """The results table's column headers in the UI language (viz.perplexity.shown_table's keys)."""
    return {"model": t("model", "modelo"), "params": t("parameters", "parâmetros"),
            "tokens": t("tokens predicted", "tokens previstos"), "ppl": t("ppl / token", "ppl / token"),
            "bits_per_byte": t("bits / byte", "bits / byte"), "ppl_per_word": t("ppl / word", "ppl / palavra"),
            "note": t("note", "nota")}


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
