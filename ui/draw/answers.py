"""The reveal of a step's question (ui/answers.py): the model's answer in words, then the class's answers beside it,
each round side by side (viz/answers.py). Every number comes from lab.questions."""

from __future__ import annotations

import html

import streamlit as st

from lab import questions
from ui.i18n import lang, num, t
from viz import answers as charts
from viz.format import markdown_literal, number
from viz.tokens import visible

NAMES_PT = {"right": "a resposta do modelo", "wrong": "outra resposta", "unmarked": "uma resposta",
            "share": "parte da turma", "answer": "resposta", "round": "rodada", "count": "alunos",
            "p": "probabilidade do modelo", "value": "estimativa", "truth": "valor verdadeiro"}
NAMES_EN_CHOICE_RIGHT = {"right": "the right option"}
NAMES_PT_CHOICE_RIGHT = {"right": "a opção certa"}


ECHO_STYLE = "font-size:0.875rem;margin:0 0 0.5rem 0;line-height:1.6"  # a caption's size, the text's own colour
CODE_STYLE = "white-space:pre-wrap;font-size:0.85em;padding:0.1em 0.25em;border-radius:0.25rem;background:#f0f0f2"


def echo(before: str, answer: str | None, after: str, code: bool = True, where=st) -> None:
    """One sentence giving back a reader's answer exactly as they typed it (issue 56): HTML, every part escaped,
    never Markdown, so `<script>` shows as typed, with no added backslash, and never runs; the answer in a code
    span (`code`: a typed answer; an option's words plain), "—" for none. `where`: the container (st, a column)."""
    shown = "—" if not answer else html.escape(answer)
    if answer and code:
        shown = f'<code style="{CODE_STYLE}">{shown}</code>'
    where.html(f'<p class="lab-echo" style="{ECHO_STYLE}">{html.escape(before)}{shown}{html.escape(after)}</p>')


def _names(kind: str) -> dict:
    names = NAMES_PT.copy() if lang() == "pt" else {}
    if kind == "choice":
        names |= NAMES_PT_CHOICE_RIGHT if lang() == "pt" else NAMES_EN_CHOICE_RIGHT
    return names


def model_answer(question: dict, side: dict) -> str:
    """The model's (or the file's, or the measurement's) answer in one sentence of the reader's language."""
    kind = question["kind"]
    if kind == "next-token":
        top = side["top"][0]
        return t(f"The model's most likely next token: `{markdown_literal(visible(top['token']))}`, probability ",
                 f"O próximo token mais provável para o modelo: `{markdown_literal(visible(top['token']))}`, "
                 "probabilidade ") + number(top["p"], lang(), 3) + "."
    if kind == "number":
        return t("The true value: ", "O valor verdadeiro: ") + number(side["value"], lang()) + "."
    right = side.get("right")
    if right is None:
        return t("No option is right or wrong here: compare the class's answers.",
                 "Aqui nenhuma opção é certa ou errada: compare as respostas da turma.")
    return t("The right option: ", "A opção certa: ") + markdown_literal(question["options"][right - 1][lang()]) + "."


def _judged(question: dict, side: dict, rounds: dict[int, dict[str, int]]) -> dict[int, list[dict]]:
    """Each round's rows as lab judges them; a choice's answer shown as its option's words."""
    out = {}
    for n, counts in rounds.items():
        rows = questions.judge(question, side, counts)
        if question["kind"] == "choice":
            rows = [r | {"answer": question["options"][int(r["answer"]) - 1][lang()]} for r in rows]
        out[n] = rows
    return out


def results(question: dict, side: dict, rounds: dict[int, dict[str, int]]) -> None:
    """The model's answer, the class's answers (rounds side by side) and, for a next token, the model's top 5."""
    st.markdown(model_answer(question, side))
    answered = {n: c for n, c in rounds.items() if c}
    total = sum(sum(c.values()) for c in answered.values())
    rounds_words = t(f"{num(len(answered))} round" + "s" * (len(answered) != 1),
                     f"{num(len(answered))} rodada" + "s" * (len(answered) != 1))
    st.caption(t(f"{num(total)} answer" + "s" * (total != 1) + f" in {rounds_words}.",
                 f"{num(total)} resposta" + "s" * (total != 1) + f" em {rounds_words}."))
    names = _names(question["kind"])
    if question["kind"] == "number" and answered:
        st.altair_chart(charts.estimates_chart(charts.estimates_frame(answered), side["value"], names, lang()))
    elif answered:
        frame = charts.rounds_frame(_judged(question, side, answered), t("others", "outras"))
        st.altair_chart(charts.rounds_chart(frame, names, lang()))
    if question["kind"] == "next-token":
        st.altair_chart(charts.model_chart(charts.model_frame(side["top"]), names, lang()))

