"""Embedding analogies, honestly: a − b + c over the input token embeddings, neighbours, a 2D picture (chapter 02)."""

import streamlit as st

from lab.embeddings import EmbeddingError
from ui import exports, presentation
from ui.cached import analogies as cached
from ui.draw import analogies as draw
from ui.draw import reproduce
from ui.i18n import lang, t
from ui.model_loader import current_model
from viz import embeddings as viz

st.title(t("Embedding analogies", "Analogias de embeddings"))
presentation.explain(t(
    "Each token's first vector, before any layer: is \"king − man + woman\" really \"queen\"? Here the claim "
    "is measured: the three input words are left out of the answers (switch it off to see why), the "
    "expected word's rank is shown both ways, and words are tokens — \" king\" with its leading space.",
    "O primeiro vetor de cada token, antes de qualquer camada: \"rei − homem + mulher\" dá mesmo \"rainha\"? "
    "Aqui a afirmação é medida: as três palavras de entrada ficam fora das respostas (desligue para ver "
    "por quê), a posição da palavra esperada aparece dos dois jeitos, e palavras são tokens — \" king\" "
    "com o espaço na frente."))
m = current_model()
w = draw.inputs()  # every input bound before the preset box: its callback fills the words
left, right = st.columns([3, 2], vertical_alignment="bottom")  # one row: the main chart stays on a projector's screen
w["an_preset"].draw(left)
draw.famous_button(right)
cols = st.columns(4)
a, b, c, expected = (w[key].draw(col) for col, key in zip(cols, ("an_a", "an_b", "an_c", "an_expected"), strict=True))
with presentation.options():  # folded away on a projector
    o1, o2 = st.columns(2)
    method, k = w["an_method"].draw(o1), w["an_k"].draw(o2)
    exclude, rare, space, mean = (w[key].draw(col) for col, key in zip(
        st.columns(4), ("an_exclude", "an_rare", "an_space", "an_mean"), strict=True))
try:
    query = cached.analogy_query(m.name, a, b, c, method, space, mean)
except EmbeddingError as e:
    query = None
    draw.problem(e)
if query is not None:
    v = cached.view(m.name, query, k, exclude, expected, space, rare)
    if note := draw.left_out_text(v["left_out"], m.name):
        st.caption(note)
    if presentation.shown():
        st.dataframe(draw.tokens_table(query), hide_index=True)
    if any(len(ids) > 1 for ids in query["tokens"]):
        st.info(t("Approximation: a word of several tokens above stands for the mean of its pieces.",
                  "Aproximação: uma palavra de vários tokens acima vale pela média dos seus pedaços."))
    exp = v["expected"] or {}
    with presentation.view("answer"):
        m1, m2, m3 = st.columns(3)
        m1.metric(t("Top answer", "Melhor resposta"), viz.visible(v["results"][0]["token"]) if v["results"] else "—")
        m2.metric(t("Expected word's rank, inputs excluded", "Posição da esperada, sem as de entrada"),
                  draw.rank_text(exp.get("rank")))
        m3.metric(t("Expected word's rank, inputs included", "Posição da esperada, com as de entrada"),
                  draw.rank_text(exp.get("rank_all")))
        notes = st.container() if presentation.shown() else None  # on a projector: under the charts
        names = draw.chart_names()
        left, right = presentation.stacking("analogy").columns([2, 3])
        best = exports.later(viz.scores_chart, v["results"], t("Best answers", "Melhores respostas"), names,
                             highlight=(exp.get("ids") or [None])[0], lang=lang())
        exports.chart("analogy-answers", left, best)
        pca = exports.later(viz.analogy_chart, v["picture"], t("The analogy in 2D (PCA)", "A analogia em 2D (PCA)"),
                            draw.kept_text(v["picture"]), names, lang=lang())
        exports.chart("analogy-pca", right, pca)
    right.caption(t("a − b + c is drawn as the sum itself, so the parallelogram closes; the scores compare "
                    "directions (cosines), so the best answer need not be the nearest dot.",
                    "a − b + c aparece como a própria soma, para o paralelogramo fechar; as pontuações comparam "
                    "direções (cossenos), então a melhor resposta não precisa ser o ponto mais próximo."))
    with notes or st.container():
        draw.expected_note(m.name, v["expected"])

st.header(t("Nearest neighbours", "Vizinhos mais próximos"))
n1, n2 = st.columns([3, 2])
word, nk = w["an_word"].draw(n1), w["an_nk"].draw(n2)
try:
    near = cached.neighbour_query(m.name, word, space, mean)
except EmbeddingError as e:
    draw.problem(e)
else:
    closest = exports.later(viz.scores_chart, cached.view(m.name, near, nk, True, "", space, rare)["results"],
                            t("Closest tokens by cosine", "Tokens mais próximos pelo cosseno"),
                            names=draw.chart_names(), lang=lang())
    exports.chart("neighbours", st, closest)
reproduce.command(*draw.commands(m.name, {key: st.session_state[key] for key in w}))  # chapter 15
