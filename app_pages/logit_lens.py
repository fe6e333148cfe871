"""The logit lens: what each layer would predict if it were the last (chapter 05)."""

import streamlit as st

from lab import lens
from ui import exports, messages, presentation, widgets
from ui.cached import lens as cached
from ui.draw import lens as draw
from ui.draw import reproduce
from ui.i18n import lang, t
from ui.model_loader import current_decoder
from ui.token_words import short_array, worded, worded_array
from viz import lens as viz

st.title(t("Logit lens", "Lente dos logits"))
presentation.explain(t(
    "Each block adds its bit to the residual stream. Read that stream after any block through the model's own "
    "final layer norm and unembedding, as if it were the last, and you see what the model would say at that "
    "floor: where the answer appears, and where it settles.",
    "Cada bloco soma a sua parte ao fluxo residual. Leia esse fluxo depois de qualquer bloco com a normalização "
    "final e a projeção para o vocabulário (unembedding) do próprio modelo, como se fosse o último, e você vê o "
    "que o modelo diria naquele andar: onde a resposta aparece e onde ela se firma."))
st.caption(t("A caveat: the early layers were never trained to be read this way, so this lens is rough there; a "
             "translator trained for each layer (the \"tuned lens\") reads them better.",
             "Uma ressalva: as primeiras camadas nunca foram treinadas para serem lidas assim, então a lente é "
             "grosseira ali; um tradutor treinado para cada camada (a \"tuned lens\") as lê melhor."))
m = current_decoder("The lens", "A lente")
text = widgets.Text("lens_text", t("Text", "Texto"), t(lens.DEFAULT_TEXT["en"], lens.DEFAULT_TEXT["pt"]), height=80,
                    on_change=draw.reset_position).draw()
if not text.strip():
    st.info(t("Type some text to read its layers.", "Digite um texto para ler as camadas dele."))
    st.stop()
view, words = cached.lens_view(m.name, text), draw.names()
n, tags = len(view["ids"]), view["labels"]
if note := draw.cut_note(view, m):
    st.warning(note)
if note := draw.norm_note(view, m):
    st.caption(note)
with presentation.view("grid"):
    st.subheader(t("Every layer's guess for the next token", "O palpite de cada camada para o próximo token"))
    window = draw.window(view)
    frame = viz.grid_frame(worded_array(view["top_tokens"][:, window], marked=True), view["top_p"][:, window],
                           tags[window], window.start, lang(), cells=short_array(view["top_tokens"][:, window, 0]))
    exports.chart("logit-lens", st, exports.later(viz.grid, frame, tags[window], window.start, names=words,
                                                  lang=lang()), key="lens_grid", width="content")
st.caption(t(f"Rows: the embeddings (bottom) and the output of each of the {view['n_layer']} blocks; columns: the "
             "input tokens. Each cell is the token that layer would predict next, coloured by its probability; hover "
             "for the top 5. The bottom row often just repeats each input token: before any block has run, the "
             "stream is little more than that token's embedding, read back through the same (tied) matrix. An accented "
             "letter the tokenizer split into bytes labels each of its columns, marked ·1/2, ·2/2; a guess such as "
             "\"byte C3\" is one byte, the first half of such a letter (the next token would finish it).",
             f"Linhas: os embeddings (embaixo) e a saída de cada um dos {view['n_layer']} blocos; colunas: os tokens "
             "de entrada. Cada célula é o token que a camada preveria a seguir, colorido pela probabilidade; passe o "
             "mouse para ver os 5 primeiros. A linha de baixo muitas vezes só repete cada token de entrada: antes de "
             "qualquer bloco, o fluxo é pouco mais que o embedding desse token, lido de volta pela mesma matriz "
             "(compartilhada). Uma letra acentuada que o tokenizador partiu em bytes dá nome a cada uma das suas "
             "colunas, marcadas ·1/2, ·2/2; um palpite como \"byte C3\" é um único byte, a primeira metade de uma "
             "letra assim (o próximo token a completaria)."))

st.subheader(t("One token, up the floors", "Um token, andar por andar"))
if text == t(lens.DEFAULT_TEXT["en"], lens.DEFAULT_TEXT["pt"]):
    st.caption(t("The default text stops before its last word. On the course model that word is far down the list "
                 "after the embeddings, reaches rank 1 at a middle floor and stays there, its probability growing "
                 "floor by floor.",
                 "O texto padrão para antes da última palavra. No modelo do curso, essa palavra está longe do topo "
                 "depois dos embeddings, chega ao 1º lugar num andar do meio e fica lá, com a probabilidade "
                 "crescendo andar a andar."))
c1, c2 = st.columns(2)
# The followed position starts at the last token; one this text does not have goes back to it.
position = widgets.Choice("lens_position", t("After the token", "Depois do token"), range(n), n - 1,
                          format_func=tags.__getitem__).draw(c1)
word = widgets.Text("lens_word", t("Follow a token (empty: the model's own prediction)",
                                   "Seguir um token (vazio: a previsão do próprio modelo)"), "",
                    kind="text_input").draw(c2)
new_word = widgets.Toggle("lens_new_word", t("starts a new word (a space in front)",
                                             "começa palavra nova (espaço na frente)"), True,
                          kind="checkbox").draw(c2)
if (target := lens.target_word(word, new_word)) is not None:
    try:
        view = cached.lens_view(m.name, text, target)
    except lens.LensError as e:
        st.warning(messages.text(e))
        st.text(" | ".join(e.details.get("readable", [])))
with presentation.view("follow"):
    st.text(t("Following: ", "Seguindo: ") + worded(view["targets"][position], marked=True))
    draw.metrics(view["rank"][:, position], view["p"][:, position])
    trace = exports.later(viz.trace, viz.trace_frame(view["rank"][:, position], view["p"][:, position]), names=words,
                          lang=lang())
    exports.chart("lens-trace", st, trace, key="lens_trace")
    st.dataframe(draw.trace_table(view, position), hide_index=True, column_config=draw.trace_columns())
reproduce.command(["lens", "--json", "--model", m.name, "--text", text, "--position", str(position)]
                  + (["--target", target] if target is not None else []))  # chapter 15: this view from the shell
