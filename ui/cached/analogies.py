"""What the analogies page computes (chapter 02); ui.draw.analogies draws it.

The scores of every token for one query are cached with st.cache_data, keyed by model name + words +
options that change the scores (method, leading space, mean of pieces). Widgets that only change the
view — exclusion, rarely trained rows, how many results, the expected word — re-slice those cached scores. No forward
pass runs on this page; the unit-normalised embedding matrix is cached per model by lab.embeddings.
"""

from __future__ import annotations

import streamlit as st

from lab import embeddings
from lab.embeddings import PRESET_LANGUAGES, PRESETS
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


def view(model_name: str, query: dict, k: int, exclude: bool, expected: str, space: bool,
         all_tokens: bool = False) -> dict:
    """The cached scores re-sliced: result rows, the expected word's ranks, the 2D picture, and what was
    left out as rarely trained (lab.learned; nothing with all_tokens)."""
    m = get_model(model_name)
    rare, left_out = embeddings.rare_rows(m.model, m.tokenizer, all_tokens)
    best = embeddings.top(query["scores"], k, (embeddings.excluded(query) if exclude else set()) | rare)
    exp = embeddings.expected_rank(m.tokenizer, query, expected, space, rare) if expected.strip() else None
    target = exp["ids"][0] if exp and exp["rank_all"] is not None else None
    pic = (embeddings.picture(m.model, query, best[:PICTURE_RESULTS], m.tokenizer, target)
           if len(query["vectors"]) == 3 else None)
    return {"results": embeddings.results(m.tokenizer, best), "expected": exp, "picture": pic, "left_out": left_out}


def left_out_text(left: dict, model_name: str) -> str | None:
    """How many rows were left out as rarely trained and by what rule; None when none were."""
    n = num(left["count"])
    if left["method"] == "counts":
        least = num(left["min_count"])
        return t(f"{n} tokens left out (seen fewer than {least} times in training).",
                 f"{n} tokens deixados de fora (vistos menos de {least} vezes no treino).")
    if left["method"] == "indicator":
        return t(f"{n} tokens left out: {model_name} ships no training counts, so they were flagged as under-trained "
                 "from the weights alone (Land & Bartolo 2024, \"Fishing for Magikarp\"). A heuristic: it can miss "
                 "rarely trained rows and flag others.",
                 f"{n} tokens deixados de fora: {model_name} não traz as contagens do treino, então foram marcados "
                 "como mal treinados só pelos pesos (Land & Bartolo 2024, \"Fishing for Magikarp\"). Uma heurística: "
                 "pode deixar passar linhas pouco treinadas e marcar outras.")
    return None


def preset_label(key: str) -> str:
    """A preset as the selectbox shows it, with its language and what it does on the course models (measured:
    lab.embeddings.PRESET_VERDICTS): "king − man + woman → queen · English · cannot hold on the course models"."""
    a, b, c, d, mean = PRESETS[key]
    langs = {"en": t("English", "inglês"), "pt": t("Portuguese", "português"),
             "pt-en": t("Portuguese ↔ English", "português ↔ inglês")}
    verdicts = {"holds": t("holds on both course models", "vale nos dois modelos do curso"),
                "fails": t("does not hold on the course models", "não se confirma nos modelos do curso"),
                "refused": t("cannot hold on the course models (a word is several tokens)",
                             "não pode dar certo nos modelos do curso (uma palavra tem vários tokens)")}
    mean_note = t(", mean of pieces", ", média dos pedaços") if mean else ""
    return f"{a} − {b} + {c} → {d}  · {langs[PRESET_LANGUAGES[key]]} · {verdicts[embeddings.verdict(key)]}{mean_note}"


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
