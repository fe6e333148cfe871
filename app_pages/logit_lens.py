"""The logit lens: what each layer would predict if it were the last (chapter 05)."""

import streamlit as st

from lab import lens, models
from lab.causal import TROPHY
from lab.text import labels
from ui import exports, presentation
from ui import lens_data as data
from ui import url_state as link
from ui.i18n import lang, t
from ui.limits import cap_text
from ui.model_loader import current_model, get_model
from viz import lens as viz

st.title(t("Logit lens", "Lente dos logits"))
presentation.explain(t("Each block adds its bit to the residual stream. Read that stream after any block through the model's own "
           "final layer norm and unembedding, as if it were the last, and you see what the model would say at that "
           "floor: where the answer appears, and where it settles.",
           "Cada bloco soma a sua parte ao fluxo residual. Leia esse fluxo depois de qualquer bloco com a normalização "
           "final e a projeção para o vocabulário (unembedding) do próprio modelo, como se fosse o último, e você vê o "
           "que o modelo diria naquele andar: onde a resposta aparece e onde ela se firma."))
st.caption(t("A caveat: the early layers were never trained to be read this way, so this lens is rough there; a "
             "translator trained for each layer (the \"tuned lens\") reads them better.",
             "Uma ressalva: as primeiras camadas nunca foram treinadas para serem lidas assim, então a lente é grosseira "
             "ali; um tradutor treinado para cada camada (a \"tuned lens\") as lê melhor."))
m = current_model()
if m.kind != "decoder":
    st.info(t(f"The lens needs a decoder: {m.name} is an encoder, it does not predict the next token. Using the course "
              f"decoder, {models.DEFAULT_OFFLINE}.", f"A lente precisa de um decoder: {m.name} é um encoder, não prevê o "
              f"próximo token. Usando o decoder do curso, {models.DEFAULT_OFFLINE}."))
    m = get_model(models.DEFAULT_OFFLINE)
link.bind("lens_text", TROPHY[lang()][0], link.text())
text = st.text_area(t("Text", "Texto"), key="lens_text", height=80, on_change=data.reset_position,
                    max_chars=cap_text("lens_text"))
if not text.strip():
    st.info(t("Type some text to read its layers.", "Digite um texto para ler as camadas dele."))
    st.stop()
view, words = data.lens_view(m.name, text), data.names()
n = len(view["ids"])
if note := data.cut_note(view, m):
    st.warning(note)
if note := data.norm_note(view, m):
    st.caption(note)
st.subheader(t("Every layer's guess for the next token", "O palpite de cada camada para o próximo token"))
start = 0
if n > viz.GRID_MAX:
    link.bind("lens_start", 0, link.integer(0, n - viz.GRID_MAX))
    start = st.slider(t("Grid starts at token", "A grade começa no token"), 0, n - viz.GRID_MAX, key="lens_start")
window, tags = slice(start, start + viz.GRID_MAX), labels(view["tokens"])
frame = viz.grid_frame(view["top_tokens"][:, window], view["top_p"][:, window], tags[window], start, lang())
exports.chart("logit-lens", st, viz.grid(frame, tags[window], start, names=words, lang=lang()), key="lens_grid", width="content")
st.caption(t(f"Rows: the embeddings (bottom) and the output of each of the {view['n_layer']} blocks; columns: the input "
             "tokens. Each cell is the token that layer would predict next, coloured by its probability; hover for "
             "the top 5. The bottom row often just repeats each input token: before any block has run, the stream "
             "is little more than that token's embedding, read back through the same (tied) matrix.",
             f"Linhas: os embeddings (embaixo) e a saída de cada um dos {view['n_layer']} blocos; colunas: os tokens de "
             "entrada. Cada célula é o token que a camada preveria a seguir, colorido pela probabilidade; passe o mouse "
             "para ver os 5 primeiros. A linha de baixo muitas vezes só repete cada token de entrada: antes de qualquer "
             "bloco, o fluxo é pouco mais que o embedding desse token, lido de volta pela mesma matriz (compartilhada)."))

st.subheader(t("One token, up the floors", "Um token, andar por andar"))
data.keep_position(n)
c1, c2, c3 = st.columns([3, 3, 2])
position = c1.selectbox(t("After the token", "Depois do token"), range(n), format_func=tags.__getitem__,
                        key="lens_position")
link.bind("lens_word", "", link.text())
word = c2.text_input(t("Follow a token (empty: the model's own prediction)",
                       "Seguir um token (vazio: a previsão do próprio modelo)"), key="lens_word",
                       max_chars=cap_text("lens_word"))
link.bind("lens_new_word", True, link.boolean())
new_word = c3.checkbox(t("starts a new word (a space in front)", "começa palavra nova (espaço na frente)"),
                       key="lens_new_word")
if (target := data.target_word(word, new_word)) is not None:
    try:
        view = data.lens_view(m.name, text, target)
    except lens.LensError as e:
        st.warning(data.problem(e))
        st.text(" | ".join(e.details.get("pieces", [])))
st.text(t("Following: ", "Seguindo: ") + viz.shown(view["targets"][position]))
data.settle_metrics(view["rank"][:, position], view["p"][:, position])
exports.chart("lens-trace", st, viz.trace(viz.trace_frame(view["rank"][:, position], view["p"][:, position]), names=words,
                                             lang=lang()),
                key="lens_trace")
st.dataframe(data.trace_table(view, position), hide_index=True, column_config=data.trace_columns())
