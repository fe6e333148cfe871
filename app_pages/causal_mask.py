"""The causal mask, on and off, and the trophy experiment beside an encoder (chapters 04 and 11)."""

import streamlit as st

from lab import models, registry
from lab.attention import labels
from lab.causal import TROPHY
from ui import attention_data as data
from ui.i18n import lang, t
from ui.model_loader import current_model, get_model
from viz import attention as viz

st.title(t("The causal mask, on and off", "A máscara causal, ligada e desligada"))
st.write(t("A decoder adds −∞ to every score above the diagonal, so after the softmax each token gives exactly "
           "zero weight to the tokens after it. Remove that one line and you have an encoder. Here the same "
           "model runs with and without it; the shared model itself is never changed.",
           "Um decoder soma −∞ a cada score acima da diagonal; depois do softmax, cada token dá peso exatamente "
           "zero aos tokens seguintes. Tire essa linha e você tem um encoder. Aqui o mesmo modelo roda com e sem "
           "ela; o modelo compartilhado em si nunca é alterado."))
m = current_model()
if m.kind != "decoder":
    st.info(t(f"{m.name} is an encoder: it has no causal mask. Using the course decoder, {models.DEFAULT_OFFLINE}.",
              f"{m.name} é um encoder: não tem máscara causal. Usando o decoder do curso, {models.DEFAULT_OFFLINE}."))
    m = get_model(models.DEFAULT_OFFLINE)
text = st.text_input(t("Sentence", "Frase"), TROPHY[lang()][0], key="mask_text")
if not text.strip():
    st.info(t("Type a sentence.", "Digite uma frase."))
    st.stop()
c1, c2 = st.columns(2)
layer = c1.selectbox(t("Layer", "Camada"), range(m.n_layer), key="mask_layer")
head = c2.selectbox(t("Head", "Cabeça"), range(m.n_head), key="mask_head")
views = {True: data.mask_view(m.name, text, True)}
try:
    views[False] = data.mask_view(m.name, text, False)
except ValueError as e:  # GPT-1's mask is built into every layer
    st.warning(t(f"Without the mask: not available for this model ({e}).", f"Sem a máscara: indisponível ({e})."))
if views[True]["n_total"] > viz.HEATMAP_MAX:
    st.caption(t(f"Showing the first {viz.HEATMAP_MAX} tokens.", f"Mostrando os primeiros {viz.HEATMAP_MAX} tokens."))
names = labels(views[True]["tokens"])
for on, v in views.items():
    st.subheader(t("With the causal mask", "Com a máscara causal") if on else t("Without the mask", "Sem a máscara"))
    left, right = st.columns(2)
    left.altair_chart(viz.heatmap(v["scores"][layer, head], names, t("Scores q·k/√d (before softmax)",
                      "Scores q·k/√d (antes do softmax)"), value_title="score", scheme="purpleorange", digits=1))
    right.altair_chart(viz.heatmap(v["attention"][layer, head], names, t("Weights (after softmax)",
                       "Pesos (depois do softmax)")))
if False in views and views[True]["loss"] is not None:
    a, b = views[True]["loss"], views[False]["loss"]
    st.metric(t("Next-token loss without the mask (nats)", "Perda do próximo token sem a máscara (nats)"),
              f"{b:.3f}", f"{b - a:+.3f} " + t(f"vs {a:.3f} with it", f"vs {a:.3f} com ela"), delta_color="inverse")
    st.caption(t("Without the mask each position can also see the very token it must predict, so this loss "
                 "stops being an honest score: lower means leakage, not skill; higher means the model, trained "
                 "with the mask, never learned to read the future.",
                 "Sem a máscara cada posição também vê o próprio token que deve prever, então esta perda deixa "
                 "de ser uma medida honesta: menor é vazamento, não habilidade; maior mostra que o modelo, "
                 "treinado com a máscara, nunca aprendeu a ler o futuro."))

st.header(t("The trophy experiment", "O experimento do troféu"))
st.write(t("Change only the adjective at the end. In a decoder, the attention row of the word is computed before "
           "the adjective exists, so it is bit for bit the same (difference exactly 0.0). In an encoder it is not.",
           "Troque só o adjetivo no fim. Num decoder, a linha de atenção da palavra é calculada antes do adjetivo "
           "existir, então é idêntica bit a bit (diferença exatamente 0,0). Num encoder, não."))


def load_pair() -> None:
    """Fill the two sentences and the word from the chosen pair (a widget callback)."""
    a, b, word = TROPHY[st.session_state["trophy_pair"]]
    st.session_state.update(trophy_a=a, trophy_b=b, trophy_word=word)


if "trophy_a" not in st.session_state:  # first visit: the pair in the UI language
    st.session_state["trophy_pair"] = lang()
    load_pair()
pair = st.radio(t("Pair", "Par"), ["en", "pt"], format_func={"en": "English", "pt": "Português"}.get,
                horizontal=True, key="trophy_pair", on_change=load_pair)
if pair == "pt":
    st.caption(t("In Portuguese the pronoun would give the answer away: \"ele\" is the trophy (o troféu, masculine), "
                 "\"ela\" the suitcase (a mala, feminine). So the sentence leaves the subject implicit, as Portuguese "
                 "usually does, and the adjective agrees (\"pequena\" can only be the suitcase). The word compared is "
                 "the verb \"era\", the last word both sentences share.",
                 "Em português o pronome já entregaria a resposta: \"ele\" é o troféu, \"ela\" é a mala. Por isso a "
                 "frase cala o sujeito, como o português costuma fazer, e o adjetivo concorda (\"pequena\" só pode "
                 "ser a mala). Comparamos o verbo \"era\", a última palavra comum às duas frases."))
c1, c2, c3 = st.columns([5, 5, 1])
a = c1.text_input("A", key="trophy_a")
b = c2.text_input("B", key="trophy_b")
word = c3.text_input(t("Word", "Palavra"), key="trophy_word")
encoders = [n for n, i in registry.REGISTRY.items() if i.kind == "encoder"]
default = next((n for n in ("roberta-base", "course-roberta") if models.is_available(n)), "course-roberta")
encoder = st.selectbox(t("Encoder beside it", "Encoder ao lado"), encoders, encoders.index(default), key="trophy_encoder")
series = {}
try:
    for on in views:
        series[t("decoder, mask on", "decoder, com máscara") if on else t("decoder, mask off", "decoder, sem máscara")] = \
            data.trophy(m.name, a, b, word, on)["per_layer"]
    if models.is_available(encoder):
        series[f"{t('encoder', 'encoder')} ({encoder})"] = data.trophy(encoder, a, b, word, False)["per_layer"]
    else:
        st.info(t(f"{encoder} is not downloaded here: pick it once in the sidebar to download it.",
                  f"{encoder} não está baixado aqui: escolha-o uma vez na barra lateral para baixá-lo."))
except ValueError as e:
    st.warning(str(e))
if series:
    cols = st.columns(len(series))
    for col, (name, values) in zip(cols, series.items(), strict=True):
        col.metric(name, repr(max(values)), help=t("max |difference| over every layer and head",
                                                     "máx |diferença| em todas as camadas e cabeças"))
    st.altair_chart(viz.diff_bars(series, t("Max |difference| of the word's attention row, per layer",
                                            "Máx |diferença| da linha de atenção da palavra, por camada")))
