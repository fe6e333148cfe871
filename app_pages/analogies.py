"""Embedding analogies, honestly: a − b + c over the input token embeddings, neighbours, a 2D picture (chapter 02)."""

import streamlit as st

from lab.embeddings import EmbeddingError
from ui import analogies_data as data
from ui import exports, presentation
from ui.i18n import lang, t
from ui.limits import cap_text
from ui.model_loader import current_model
from viz import embeddings as viz

st.title(t("Embedding analogies", "Analogias de embeddings"))
presentation.explain(t("Each token's first vector, before any layer: is \"king − man + woman\" really \"queen\"? Here the claim "
           "is measured: the three input words are left out of the answers (switch it off to see why), the "
           "expected word's rank is shown both ways, and words are tokens — \" king\" with its leading space.",
           "O primeiro vetor de cada token, antes de qualquer camada: \"rei − homem + mulher\" dá mesmo \"rainha\"? "
           "Aqui a afirmação é medida: as três palavras de entrada ficam fora das respostas (desligue para ver "
           "por quê), a posição da palavra esperada aparece dos dois jeitos, e palavras são tokens — \" king\" "
           "com o espaço na frente."))
m = current_model()
data.preset_picker()
cols = st.columns(4)
a, b, c = (col.text_input(label, key=key, max_chars=cap_text(key)) for col, label, key in zip(cols, ("A", "− B", "+ C"), ("an_a", "an_b", "an_c"),
                                                                        strict=False))
expected = cols[3].text_input(t("= expected", "= esperada"), key="an_expected", max_chars=cap_text("an_expected"))
o1, o2 = st.columns(2)
method = o1.radio(t("Method", "Método"), ["add", "mul"], format_func=data.method_name, horizontal=True, key="an_method")
k = o2.slider(t("Results", "Resultados"), 1, 30, key="an_k")
o1, o2, o3 = st.columns(3)
exclude = o1.toggle(t("Exclude the three inputs", "Excluir as três de entrada"), key="an_exclude")
space = o2.toggle(t("Leading space (\" king\")", "Espaço na frente (\" rei\")"), key="an_space")
mean = o3.toggle(t("Mean of pieces", "Média dos pedaços"), key="an_mean",
                 help=t("A word of several tokens stands for the mean of its pieces: an approximation.",
                        "Uma palavra de vários tokens vira a média dos pedaços: uma aproximação."))
try:
    query = data.analogy_query(m.name, a, b, c, method, space, mean)
except EmbeddingError as e:
    query = None
    data.show_problem(e)
if query is not None:
    v = data.view(m.name, query, k, exclude, expected, space)
    st.dataframe(data.tokens_table(query), hide_index=True)
    if any(len(ids) > 1 for ids in query["tokens"]):
        st.info(t("Approximation: a word of several tokens above stands for the mean of its pieces.",
                  "Aproximação: uma palavra de vários tokens acima vale pela média dos seus pedaços."))
    exp = v["expected"] or {}
    m1, m2, m3 = st.columns(3)
    m1.metric(t("Top answer", "Melhor resposta"), viz.visible(v["results"][0]["token"]) if v["results"] else "—")
    m2.metric(t("Expected word's rank, inputs excluded", "Posição da esperada, sem as de entrada"), data.rank_text(exp.get("rank")))
    m3.metric(t("Expected word's rank, inputs included", "Posição da esperada, com as de entrada"), data.rank_text(exp.get("rank_all")))
    data.expected_note(m.name, v["expected"])
    names = data.chart_names()
    left, right = presentation.stacking("analogy").columns([2, 3])
    exports.chart("analogy-answers", left, viz.scores_chart(v["results"], t("Best answers", "Melhores respostas"), names,
                                       highlight=(exp.get("ids") or [None])[0], lang=lang()))
    exports.chart("analogy-pca", right, viz.analogy_chart(v["picture"], t("The analogy in 2D (PCA)", "A analogia em 2D (PCA)"),
                                         data.kept_text(v["picture"]), names, lang=lang()))
    right.caption(t("a − b + c is drawn as the sum itself, so the parallelogram closes; the scores compare "
                    "directions (cosines), so the best answer need not be the nearest dot.",
                    "a − b + c aparece como a própria soma, para o paralelogramo fechar; as pontuações comparam "
                    "direções (cossenos), então a melhor resposta não precisa ser o ponto mais próximo."))

st.header(t("Nearest neighbours", "Vizinhos mais próximos"))
n1, n2 = st.columns([3, 2])
word = n1.text_input(t("Word", "Palavra"), key="an_word", max_chars=cap_text("an_word"))
nk = n2.slider(t("Neighbours", "Vizinhos"), 1, 30, key="an_nk")
try:
    near = data.neighbour_query(m.name, word, space, mean)
except EmbeddingError as e:
    data.show_problem(e)
else:
    exports.chart("neighbours", st, viz.scores_chart(data.view(m.name, near, nk, True, "", space)["results"],
                                     t("Closest tokens by cosine", "Tokens mais próximos pelo cosseno"), names=data.chart_names(),
                                     lang=lang()))
