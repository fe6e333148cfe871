"""Data and helpers for the analogies page (chapter 02).

The scores of every token for one query are cached with st.cache_data, keyed by model name + words +
options that change the scores (method, leading space, mean of pieces). Widgets that only change the
view — exclusion, how many results, the expected word — re-slice those cached scores. No forward
pass runs on this page; the unit-normalised embedding matrix is cached per model by lab.embeddings.
"""

from __future__ import annotations

import streamlit as st

from lab import embeddings
from lab.embeddings import PRESET_GROUPS, PRESETS, EmbeddingError
from ui import url_state as link
from ui.i18n import lang, num, t
from ui.model_loader import get_model
from viz.format import number

# Keys of the page's widgets, their first-visit values and how they travel in a link (the preset fills the words).
DEFAULTS = {"an_method": "add", "an_exclude": True, "an_space": True, "an_mean": False, "an_k": 10,
            "an_word": "package", "an_nk": 10}
CODECS = {"an_method": link.choice(["add", "mul"]), "an_exclude": link.boolean(), "an_space": link.boolean(),
          "an_mean": link.boolean(), "an_k": link.integer(1, 30), "an_word": link.text(), "an_nk": link.integer(1, 30)}
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
    pic = embeddings.picture(m.model, query, best[:PICTURE_RESULTS], m.tokenizer, target) if len(query["vectors"]) == 3 else None
    return {"results": embeddings.results(m.tokenizer, best), "expected": exp, "picture": pic}


def preset_label(key: str) -> str:
    """A preset as the selectbox shows it: "king − man + woman → queen · classic"."""
    a, b, c, d, mean = PRESETS[key]
    group = next(g for g, keys in PRESET_GROUPS.items() if key in keys)
    names = {"classic": t("English classic", "clássico em inglês"), "portuguese": t("Portuguese", "português"),
             "course": t("works on the course models", "funciona nos modelos do curso")}
    mean_note = t(", mean of pieces", ", média dos pedaços") if mean else ""
    return f"{a} − {b} + {c} → {d}  · {names[group]}{mean_note}"


def load_preset() -> None:
    """Widget callback: fill the words, the expected word and the mean-of-pieces switch from the preset."""
    a, b, c, d, mean = PRESETS[st.session_state["an_preset"]]
    st.session_state.update(an_a=a, an_b=b, an_c=c, an_expected=d, an_mean=mean)


def preset_picker() -> None:
    """The preset box (king − man + woman at first); the words and the mean-of-pieces switch start at the
    preset's, and every input of the page travels in the link."""
    preset = link.bind("an_preset", "king", link.choice(PRESETS))
    a, b, c, d, mean = PRESETS[preset]
    for key, default in zip(("an_a", "an_b", "an_c", "an_expected"), (a, b, c, d), strict=True):
        link.bind(key, default, link.text())
    for key, default in DEFAULTS.items():
        link.bind(key, mean if key == "an_mean" else default, CODECS[key])
    st.selectbox(t("Preset", "Exemplo pronto"), list(PRESETS), format_func=preset_label, key="an_preset",
                 on_change=load_preset)


def tokens_table(query: dict):
    """How each word was looked up: the word, how many tokens, their ids and pieces (plain table)."""
    import pandas as pd

    from viz.embeddings import visible

    return pd.DataFrame({t("word", "palavra"): query["words"], t("tokens", "tokens"): [len(i) for i in query["tokens"]],
                         "ids": [" ".join(map(str, i)) for i in query["tokens"]],
                         t("pieces", "pedaços"): [" + ".join(visible(p) for p in ps) for ps in query["pieces"]]})


def show_problem(e: EmbeddingError) -> None:
    """Why the words cannot be used, in the UI language; the word and its pieces as plain text."""
    if e.reason == "empty":
        st.info(t("Type a word in each box.", "Digite uma palavra em cada caixa."))
        return
    d = e.details
    n = len(d["pieces"])
    st.warning(t(f"A word is {n} tokens in this model's vocabulary. Arithmetic on single tokens needs one row "
                 "per word: switch on \"mean of pieces\" to use the average of its pieces (an approximation), "
                 "or pick another word.",
                 f"Uma palavra tem {n} tokens no vocabulário deste modelo. A aritmética de tokens precisa de uma "
                 "linha por palavra: ligue \"média dos pedaços\" para usar a média dos pedaços (uma aproximação) "
                 "ou escolha outra palavra."))
    st.text(f"{d['word']!r} → {' + '.join(map(repr, d['pieces']))}")


def expected_note(model_name: str, exp: dict | None) -> None:
    """The verdict on the expected word: holds (rank 1), ranks low, or cannot (several tokens)."""
    if exp is None:
        return
    if exp["rank_all"] is None:
        st.warning(t(f"The expected word is {len(exp['ids'])} tokens on {model_name}: it has no row of its own, "
                     "so this analogy cannot come out right on this model.",
                     f"A palavra esperada tem {len(exp['ids'])} tokens em {model_name}: não tem linha própria, "
                     "então esta analogia não pode dar certo neste modelo."))
        st.text(f"{exp['word'].strip()!r} → {' + '.join(map(repr, exp['pieces']))}")
    elif exp["rank"] is None:
        st.info(t("The expected word is one of the three inputs, so exclusion removes it.",
                  "A palavra esperada é uma das três de entrada; a exclusão a remove."))
    elif exp["rank"] == 1:
        st.success(t(f"On {model_name} the expected word comes first (with the inputs excluded).",
                     f"Em {model_name} a palavra esperada vem em primeiro (com as de entrada excluídas)."))
    else:
        st.warning(t(f"On {model_name} this analogy does not hold: the expected word ranks {num(exp['rank'])} "
                     "with the inputs excluded.",
                     f"Em {model_name} esta analogia não se confirma: a palavra esperada fica em "
                     f"{num(exp['rank'])}º lugar com as de entrada excluídas."))


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
