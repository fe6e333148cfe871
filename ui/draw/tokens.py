"""What the tokens page draws (chapter 01): the cost tables, one encoding's tokens and the premium chart;
ui.cached.tokens counts.
"""

from __future__ import annotations

import streamlit as st

from lab import tokens as lab
from lab.encodings import COURSE, COURSE_MERGES
from ui import exports, presentation
from ui.cached import tokens as cached
from ui.i18n import lang, num, t
from ui.token_words import short
from viz import tokens as viz


def costs(pt_costs: dict, en_costs: dict | None) -> None:
    """The cost tables (Portuguese, and English when given) and how many words GPT-2's context holds."""
    rows = {"tokens": "tokens", "words": t("words", "palavras"), "chars": t("characters", "caracteres"),
            "tokens_per_word": t("tokens per word", "tokens por palavra"),
            "chars_per_token": t("characters per token", "caracteres por token")}
    left, right = presentation.stacking("costs").columns(2)
    left.subheader(t("Portuguese", "Português"))
    left.table(pt_table := viz.costs_frame(pt_costs, rows, lang()))
    exports.table("costs-portuguese", left, pt_table.rename_axis(t("measure", "medida")).reset_index())
    if en_costs:
        right.subheader(t("English", "Inglês"))
        right.table(en_table := viz.costs_frame(en_costs, rows, lang()))
        exports.table("costs-english", right, en_table.rename_axis(t("measure", "medida")).reset_index())

    model, window = lab.CONTEXT["gpt2"]
    pt_words = lab.words_in_window(pt_costs["gpt2"], window)
    en_words = en_costs and lab.words_in_window(en_costs["gpt2"], window)
    course = lab.CONTEXT["course"][1]
    pt_course = lab.words_in_window(pt_costs["course"], course)
    st.markdown(t(f"**{model}'s {num(window)} tokens hold about {num(pt_words)} words of this Portuguese text"
                  + (f", {num(en_words)} of English.**" if en_words else ".**"),
                  f"**Os {num(window)} tokens do {model} comportam cerca de {num(pt_words)} palavras deste "
                  "texto em português" + (f", e {num(en_words)} do inglês.**" if en_words else ".**")))
    st.markdown(t(f"The course models read {num(course)} tokens: about {num(pt_course)} words of this Portuguese text.",
                  f"Os modelos do curso leem {num(course)} tokens: cerca de {num(pt_course)} palavras deste texto."))


def tokens(pt: str, name: str, total: int, limit: int) -> None:
    """The first `limit` tokens of pt under encoding `name` (of `total`) as chips, and its costliest words."""
    st.subheader(t("The tokens", "Os tokens"))
    st.caption(t("Each chip is one token: its text (␣ is a space) over its id. Orange chips hold part of a "
                 "UTF-8 character, shown as its bytes, such as \"byte C3\" (the first half of ã or ç): here a "
                 "single token is the subject, so its own bytes show (the other pages join such pieces back into "
                 "the character). Hover a chip for its bytes.",
                 "Cada ficha é um token: o texto (␣ é um espaço) sobre o id. Fichas laranja guardam parte "
                 "de um caractere UTF-8, mostrada pelos seus bytes, como \"byte C3\" (a primeira metade de ã, ç, "
                 "é): aqui o assunto é cada token, então aparecem os bytes dele (as outras páginas juntam esses "
                 "pedaços de volta no caractere). Passe o mouse numa ficha para ver os bytes."))
    records = [r | {"text": short(r["text"])} for r in cached.chips(name, pt, limit)]  # a lone byte: "byte C3"
    st.html(viz.token_chips(records, total=total, lang=lang()))
    st.subheader(t("The words that cost the most", "As palavras que mais custam"))
    words = [r | {"pieces": [short(p) for p in r["pieces"]]} for r in cached.costliest(pt, name, 10)]
    st.table(costliest := viz.costliest_frame(words,
                                              (t("word", "palavra"), "tokens", t("pieces", "pedaços"))))
    exports.table("costliest-words", st, costliest)


def premium(pt: str, en: str, pairs: int) -> None:
    """The premium chart: the sample set's (`pairs` pairs), the published one and, with both texts, the reader's."""
    st.subheader(t("The premium: Portuguese tokens ÷ English tokens",
                   "O ágio: tokens em português ÷ tokens em inglês"))
    series = {t(f"sample set ({pairs} pairs)", f"conjunto de exemplos ({pairs} pares)"): cached.sample_premium(),
              "Petrov et al. 2023 (FLORES-200)": lab.PUBLISHED_PREMIUM}
    if pt.strip() and en.strip():
        series = {t("your text", "seu texto"): cached.premium(en, pt), **series}
        if (ratio := lab.length_mismatch(en, pt)) is not None:
            st.warning(t(f"The two boxes do not look like one text in two languages: the Portuguese is {num(ratio)} "
                         "times as long as the English (translations stay between about 0.7 and 1.4). The premium of "
                         "your text compares different texts and means little.",
                         f"As duas caixas não parecem o mesmo texto em duas línguas: o português tem {num(ratio)} "
                         "vezes o tamanho do inglês (traduções ficam entre cerca de 0,7 e 1,4). O ágio do seu "
                         "texto compara textos diferentes e quer dizer pouco."))
    y_title = t("pt tokens ÷ en tokens", "tokens pt ÷ tokens en")  # short: it must fit the chart's height
    exports.chart("premium", st, exports.later(viz.premium_chart, viz.premium_frame(series), y_title=y_title,
                                               lang=lang()), width="stretch")
    st.caption(t("Above 1.0, the same content costs Portuguese readers more tokens: more money per request and "
                 "less text in the context window. CLI: `python -m lab premium --sample`.",
                 "Acima de 1,0, o mesmo conteúdo custa mais tokens para quem lê em português: mais dinheiro por "
                 "requisição e menos texto na janela de contexto. CLI: `python -m lab premium --sample`."))


def encoding_name(name: str) -> str:
    """How the page names an encoding: its own name, the course tokenizer by what it is."""
    if name == COURSE:
        return t(f"course models (GPT-2's first {num(COURSE_MERGES)} merges)",
                 f"modelos do curso (as primeiras {num(COURSE_MERGES)} fusões do GPT-2)")
    return name


def intro_words() -> str:
    """The page's opening: what it compares (the course tokenizer's merges counted in lab.encodings)."""
    merges = num(COURSE_MERGES)
    return t("The same sentence costs more tokens in Portuguese than in English: a tokenizer learns its merges "
             "from its training text, and GPT-2's was almost all English. Compare GPT-2's tokenizer with cl100k_base "
             f"(GPT-4), o200k_base (GPT-4o) and the course models' own (GPT-2's first {merges} merges, the one every "
             "other page runs on) on your own text.",
             "A mesma frase custa mais tokens em português do que em inglês: um tokenizador aprende suas fusões "
             "com o texto de treino, e o do GPT-2 era quase todo em inglês. Compare o tokenizador do GPT-2 com o "
             f"cl100k_base (GPT-4), o o200k_base (GPT-4o) e o dos modelos do curso (as primeiras {merges} fusões do "
             "GPT-2, o que todas as outras páginas usam) no seu próprio texto.")
