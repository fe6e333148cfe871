"""What tokenization costs in Portuguese: three tokenizers side by side on your text (chapter 01)."""

import streamlit as st

from lab import tokens as lab
from ui import exports, presentation
from ui import tokens_data as data
from ui import url_state as link
from ui.i18n import lang, num, t
from ui.limits import cap_text
from viz import tokens as viz

PAIRS = lab.sample_pairs()
CHIP_LIMIT = 400


def load_sample() -> None:
    """Fill both text boxes from the sample selector (a widget callback)."""
    st.session_state["tokens_pt"], st.session_state["tokens_en"] = data.sample(st.session_state["tokens_sample"])


st.title(t("What tokenization costs in Portuguese", "Quanto custa a tokenização em português"))
presentation.explain(t("The same sentence costs more tokens in Portuguese than in English: a tokenizer learns its merges "
           "from its training text, and GPT-2's was almost all English. Compare GPT-2's tokenizer with cl100k_base (GPT-4) and o200k_base "
           "(GPT-4o) on your own text.",
           "A mesma frase custa mais tokens em português do que em inglês: um tokenizador aprende suas fusões "
           "com o texto de treino, e o do GPT-2 era quase todo em inglês. Compare o tokenizador do GPT-2 com o cl100k_base "
           "(GPT-4) e o o200k_base (GPT-4o) no seu próprio texto."))

labels = {"course": t("The course's trophy passage", "O trecho do troféu, do curso"),
          "all": t(f"The whole sample set ({len(PAIRS)} pairs)", f"O conjunto de exemplos inteiro ({len(PAIRS)} pares)")}
samples = ["course", "all", *range(len(PAIRS))]
chosen = link.bind("tokens_sample", "course", link.choice(samples))
st.selectbox(t("Load a text", "Carregar um texto"), samples, key="tokens_sample",
             format_func=lambda c: labels.get(c) or f"{c + 1}. {PAIRS[c]['pt'][:60]}…", on_change=load_sample)
for key, default in zip(("tokens_pt", "tokens_en"), data.sample(chosen), strict=True):  # the texts the sample loads
    link.bind(key, default, link.text())
left, right = st.columns(2)
pt = left.text_area(t("Portuguese text", "Texto em português"), key="tokens_pt", height=160,
                   max_chars=cap_text("tokens_pt"))
en = right.text_area(t("The same text in English (optional)", "O mesmo texto em inglês (opcional)"),
                     key="tokens_en", height=160, max_chars=cap_text("tokens_en"))

if not pt.strip():
    st.info(t("Type or paste some Portuguese text above to see what it costs in tokens.",
              "Digite ou cole um texto em português acima para ver quanto ele custa em tokens."))
else:
    rows = {"tokens": "tokens", "words": t("words", "palavras"), "chars": t("characters", "caracteres"),
            "tokens_per_word": t("tokens per word", "tokens por palavra"),
            "chars_per_token": t("characters per token", "caracteres por token")}
    costs = data.costs(pt)
    en_costs = data.costs(en) if en.strip() else None
    left, right = presentation.stacking("costs").columns(2)
    left.subheader(t("Portuguese", "Português"))
    left.table(pt_table := viz.costs_frame(costs, rows, lang()))
    exports.table("costs-portuguese", left, pt_table.rename_axis(t("measure", "medida")).reset_index())
    if en_costs:
        right.subheader(t("English", "Inglês"))
        right.table(en_table := viz.costs_frame(en_costs, rows, lang()))
        exports.table("costs-english", right, en_table.rename_axis(t("measure", "medida")).reset_index())

    model, window = lab.CONTEXT["gpt2"]
    pt_words = lab.words_in_window(costs["gpt2"], window)
    en_words = en_costs and lab.words_in_window(en_costs["gpt2"], window)
    st.markdown(t(f"**{model}'s {num(window)} tokens hold about {num(pt_words)} words of this Portuguese text"
                  + (f", {num(en_words)} of English.**" if en_words else ".**"),
                  f"**Os {num(window)} tokens do {model} comportam cerca de {num(pt_words)} palavras deste "
                  "texto em português" + (f", e {num(en_words)} do inglês.**" if en_words else ".**")))

    link.bind("tokens_encoding", lab.ENCODINGS[0], link.choice(lab.ENCODINGS))
    name = st.radio(t("Encoding", "Codificação"), lab.ENCODINGS, key="tokens_encoding", horizontal=True)
    st.subheader(t("The tokens", "Os tokens"))
    st.caption(t("Each chip is one token: its text (␣ is a space) over its id. Orange chips hold part of a "
                 "UTF-8 character, shown as bytes such as \\xc3.",
                 "Cada ficha é um token: o texto (␣ é um espaço) sobre o id. Fichas laranja guardam parte "
                 "de um caractere UTF-8, mostrada em bytes como \\xc3."))
    st.html(viz.token_chips(data.chips(name, pt, CHIP_LIMIT), total=costs[name]["tokens"], lang=lang()))
    st.subheader(t("The words that cost the most", "As palavras que mais custam"))
    st.table(costliest := viz.costliest_frame(data.costliest(pt, name, 10),
                                              (t("word", "palavra"), "tokens", t("pieces", "pedaços"))))
    exports.table("costliest-words", st, costliest)

st.subheader(t("The premium: Portuguese tokens ÷ English tokens", "O ágio: tokens em português ÷ tokens em inglês"))
series = {t(f"sample set ({len(PAIRS)} pairs)", f"conjunto de exemplos ({len(PAIRS)} pares)"): data.sample_premium(),
          "Petrov et al. 2023 (FLORES-200)": lab.PUBLISHED_PREMIUM}
if pt.strip() and en.strip():
    series = {t("your text", "seu texto"): data.premium(en, pt), **series}
    if (ratio := lab.length_mismatch(en, pt)) is not None:
        st.warning(t(f"The two boxes do not look like one text in two languages: the Portuguese is {num(ratio)} times "
                     "as long as the English (translations stay between about 0.7 and 1.4). The premium of your "
                     "text compares different texts and means little.",
                     f"As duas caixas não parecem o mesmo texto em duas línguas: o português tem {num(ratio)} vezes "
                     "o tamanho do inglês (traduções ficam entre cerca de 0,7 e 1,4). O ágio do seu texto compara "
                     "textos diferentes e quer dizer pouco."))
y_title = t("pt tokens ÷ en tokens", "tokens em português ÷ tokens em inglês")
exports.chart("premium", st, viz.premium_chart(viz.premium_frame(series), y_title=y_title, lang=lang()), width="stretch")
st.caption(t("Above 1.0, the same content costs Portuguese readers more tokens: more money per request and "
             "less text in the context window. CLI: `python -m lab premium --sample`.",
             "Acima de 1,0, o mesmo conteúdo custa mais tokens para quem lê em português: mais dinheiro por "
             "requisição e menos texto na janela de contexto. CLI: `python -m lab premium --sample`."))
