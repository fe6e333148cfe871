"""The guessing game's reveal (ui/game.py): the word just revealed, the class's guesses beside the model's candidate
words, the table of every revealed word and, after the last, the class's bits per word beside the model's. Every
number comes from lab.questions (game, game_play); the words and the reader's number format are drawn here."""

from __future__ import annotations

import streamlit as st

from ui.draw.answers import NAMES_PT
from ui.i18n import lang, num, t
from viz import answers as charts
from viz.format import markdown_literal, number
from viz.tokens import visible


def _names() -> dict:
    return (NAMES_PT.copy() if lang() == "pt" else {}) | {"right": t("the true word", "a palavra verdadeira")}


def _revealed(row: dict) -> str:
    """The sentence on the word just revealed: what came, the model's probability of it, its place among the
    model's candidate words."""
    word = f"`{markdown_literal(visible(row['token']))}`"
    rank = (t(f", its word number {num(row['rank'])} of {num(len(row['top']))}.",
              f", sua palavra número {num(row['rank'])} de {num(len(row['top']))}.") if row["rank"] is not None else
            t(f", not among its {num(len(row['top']))} likeliest words.",
              f", fora das suas {num(len(row['top']))} palavras mais prováveis."))
    return (t(f"Position {row['position']}: the text went on with ", f"Posição {row['position']}: o texto seguiu com ")
            + word + t(". The model gave it ", ". O modelo lhe deu ") + charts.probability(row["p"], lang()) + rank)


def game(side: dict, played: dict, shown: int, n: int) -> None:
    """The guessing game so far: the last revealed word (the true word, the class's guesses, the model's candidate
    words), every revealed word in a table, and after the last the class's bits per word beside the model's."""
    rows = side["rows"]
    last = rows[shown - 1]
    by = {c["position"]: c for c in played["class"]}
    st.markdown(_revealed(last))
    names, left = _names(), None
    guesses = by.get(last["position"], {}).get("guesses", [])
    if guesses:
        left, right = st.columns(2)
        frame = charts.guesses_frame(guesses, last["position"], t("others", "outras"))
        left.altair_chart(charts.rounds_chart(frame, names | {"round": t("position", "posição")}, lang()))
    model = names | {"p": t("the model's probability of the word", "probabilidade da palavra pelo modelo")}
    (right if left is not None else st).altair_chart(charts.model_chart(charts.model_frame(last["top"]), model,
                                                                        lang()))
    st.dataframe(charts.walk_frame(rows[:shown], by,
                                   t(("position", "word", "class's top guess", "class p", "model p", "model top 1"),
                                     ("posição", "palavra", "palpite mais comum", "p da turma", "p do modelo",
                                      "top 1 do modelo")), lang()), hide_index=True)
    if shown == n:
        summary(played["summary"])


def summary(s: dict) -> None:
    """The class's and the model's bits per word over the answered positions, and how often they agreed."""
    if not s["positions"]:
        st.caption(t("Nobody guessed: nothing to compare.", "Ninguém deu palpite: nada para comparar."))
        return
    a, b, c = st.columns(3)
    a.metric(t("The class, bits per word", "A turma, bits por palavra"), number(s["class_bits"], lang()))
    b.metric(t("The model, bits per word", "O modelo, bits por palavra"), number(s["model_bits"], lang()))
    c.metric(t("Most common guess = model's top 1", "Palpite mais comum = top 1 do modelo"),
             number(100 * s["agreement"], lang(), 0) + " %")
    st.caption(t("Each position is a whole word, and both sides are counted in bits per word: the model's probability "
                 "of a word is the product of its tokens' (\" apt\" is \" a\" then \"pt\"), and its candidates are "
                 "whole words (its likeliest first tokens, each completed to the end of its word). The class's "
                 "guesses at a position become a probability by adding 1/2 to each word named and to one bucket for "
                 "every other word (python -m lab guess --unit word; docs/teaching.md).",
                 "Cada posição é uma palavra inteira, e os dois lados contam bits por palavra: a probabilidade de "
                 "uma palavra para o modelo é o produto das dos seus tokens (\" apt\" é \" a\" e depois \"pt\"), e "
                 "os seus candidatos são palavras inteiras (os primeiros tokens mais prováveis, cada um completado "
                 "até o fim da palavra). Os palpites da turma numa posição viram uma probabilidade somando 1/2 a cada "
                 "palavra citada e a um balde para todas as outras (python -m lab guess --unit word; "
                 "docs/teaching.md)."))
