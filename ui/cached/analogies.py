"""What the analogies page computes (chapter 02); ui.draw.analogies draws it.

The scores of every token for one query are cached with st.cache_data, keyed by model name + words +
options that change the scores (method, leading space, mean of pieces). Widgets that only change the
view — exclusion, how many results, the expected word — re-slice those cached scores. No forward
pass runs on this page; the unit-normalised embedding matrix is cached per model by lab.embeddings.
"""

from __future__ import annotations

import streamlit as st

from lab import embeddings
from lab.embeddings import PRESET_GROUPS, PRESETS
from ui.i18n import lang, num, t
from ui.model_loader import get_model
from viz.format import number

PICTURE_RESULTS = 5  # best answers drawn in the 2D picture (more crowd the labels)


@st.cache_data(max_entries=64, show_spinner=False)
def analogy_query(model_name: str, a: str, b: str, c: str, method: str, space: bool, mean_pieces: bool) -> dict:
    """lab.embeddings.analogy_scores on the named model: every token's score, the words' ids and pieces."""
    m = get_model(model_name)
    return embeddings.analogy_scores(m.model, m.tokenizer, a, b, c, method, space, mean_pieces)


@st.cache_data(max_entries=64, show_spinner=False)
def neighbour_query(model_name: str, word: str, space: bool, mean_pieces: bool) -> dict:
    """lab.embeddings.neighbour_scores on the named model."""
    m = get_model(model_name)
    return embeddings.neighbour_scores(m.model, m.tokenizer, word, space, mean_pieces)


def view(model_name: str, query: dict, k: int, exclude: bool, expected: str, space: bool) -> dict:
    """The cached scores re-sliced: result rows, the expected word's ranks, the 2D picture."""
    m = get_model(model_name)
    best = embeddings.top(query["scores"], k, embeddings.excluded(query) if exclude else ())
    exp = embeddings.expected_rank(m.tokenizer, query, expected, space) if expected.strip() else None
    target = exp["ids"][0] if exp and exp["rank_all"] is not None else None
    pic = (embeddings.picture(m.model, query, best[:PICTURE_RESULTS], m.tokenizer, target)
           if len(query["vectors"]) == 3 else None)
    return {"results": embeddings.results(m.tokenizer, best), "expected": exp, "picture": pic}


def preset_label(key: str) -> str:
    """A preset as the selectbox shows it: "king − man + woman → queen · classic"."""
    a, b, c, d, mean = PRESETS[key]
    group = next(g for g, keys in PRESET_GROUPS.items() if key in keys)
    names = {"classic": t("English classic", "clássico em inglês"), "portuguese": t("Portuguese", "português"),
             "course": t("works on the course models", "funciona nos modelos do curso")}
    mean_note = t(", mean of pieces", ", média dos pedaços") if mean else ""
    return f"{a} − {b} + {c} → {d}  · {names[group]}{mean_note}"


def tokens_table(query: dict):
    """How each word was looked up: the word, how many tokens, their ids and pieces (plain table)."""
    import pandas as pd

    from viz.embeddings import visible

    return pd.DataFrame({t("word", "palavra"): query["words"],
                         t("tokens", "tokens"): [len(i) for i in query["tokens"]],
                         "ids": [" ".join(map(str, i)) for i in query["tokens"]],
                         t("pieces", "pedaços"): [" + ".join(visible(p) for p in ps) for ps in query["pieces"]]})


def rank_text(r: int | None) -> str:
    """A rank for a metric: 1st as "1", none as "—"."""
    return "—" if r is None else num(r)


def chart_names() -> dict:
    """viz.embeddings.NAMES in the UI language."""
    return {"rank": t("rank", "posição"), "token": "token", "score": t("score", "pontuação"),
            "role": t("role", "papel"), "result": t("result", "resultado"), "expected": t("expected", "esperada"),
            "target": "a − b + c"}


def kept_text(pic: dict) -> str:
    """The share of variance the two axes keep, as the chart's subtitle."""
    share = number(100 * pic["kept"], lang(), 1)
    n = len(pic["points"])
    return t(f"These two axes keep {share}% of the variance of the {n} points drawn: the rest is not shown.",
             f"Estes dois eixos guardam {share}% da variância dos {n} pontos desenhados: o resto não aparece.")


def method_name(method: str) -> str:
    """The radio's label for a method."""
    return {"add": "3CosAdd (a − b + c)", "mul": "3CosMul"}[method]
