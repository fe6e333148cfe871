"""Perplexity compared across models, fairly normalised (chapters 06, 08, 09)."""

import streamlit as st

from lab import perplexity, registry
from ui import exports, presentation
from ui import perplexity_data as data
from ui import url_state as link
from ui.i18n import lang, model_label, num, t
from ui.limits import clip_perplexity, keep_offered, offered, perplexity_cap
from viz import perplexity as viz

PAGE_CHARS = 6_000  # the unseen Debian text and the reader's own are cut here on the page (the CLI takes them whole)
COURSE_DECODERS = ["course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2"]

st.title(t("Perplexity, compared fairly", "Perplexidade, comparada com justiça"))
presentation.explain(t("Perplexity is the exponential of the average surprise per token: how many tokens the model is, on "
           "average, hesitating between. It says what a model learned, but only per token, and models cut text into "
           "tokens differently. So the same total log-likelihood is also given per byte of text and per word.",
           "Perplexidade é a exponencial da surpresa média por token: entre quantos tokens o modelo está, em média, "
           "hesitando. Ela diz o que o modelo aprendeu, mas só por token, e cada modelo corta o texto em tokens de um "
           "jeito. Por isso a mesma log-verossimilhança total aparece também por byte de texto e por palavra."))

sources = {f"{p['id']}:{p['lang']}": p for p in perplexity.passages()}
unseen = perplexity.unseen_texts()
options = list(sources) + ["unseen:en", "unseen:pt", "own"]
titles = {(p["id"], p["lang"]): p["title"] for p in sources.values()}  # an English text's title in Portuguese too
names = {k: f"{titles.get((p['id'], lang()), p['title'])} ({p['lang'].upper()})" for k, p in sources.items()} | {
    "unseen:en": t("Debian documentation no course model saw (EN)", "Documentação Debian que nenhum modelo do curso viu (EN)"),
    "unseen:pt": t("Debian documentation no course model saw (PT)", "Documentação Debian que nenhum modelo do curso viu (PT)"),
    "own": t("Your own text", "Seu próprio texto")}
link.bind("ppl_source", "unseen:en", link.choice(options))
source = st.selectbox(t("Text", "Texto"), options, format_func=names.get, key="ppl_source")
if source == "own":
    link.bind("ppl_text", sources["market:en"]["text"], link.text())
    text = st.text_area(t("Your text", "Seu texto"), key="ppl_text", height=160, max_chars=perplexity_cap("ppl_text"))
    if len(text) > PAGE_CHARS:  # 200,000 characters would take minutes per model; the CLI takes it whole
        st.info(t(f"The page measures the first {num(PAGE_CHARS)} of these {num(len(text))} characters. For the whole "
                  "text: `python -m lab perplexity --file FILE`.",
                  f"A página mede os primeiros {num(PAGE_CHARS)} destes {num(len(text))} caracteres. Para o texto "
                  "inteiro: `python -m lab perplexity --file ARQUIVO`."))
        text = text[:PAGE_CHARS]
else:
    text = clip_perplexity(sources[source]["text"] if source in sources else unseen[source.split(":")[1]][:PAGE_CHARS])
    with st.expander(t("Show the text", "Mostrar o texto")):
        st.text(text)

labels = {n: model_label(n) for n in registry.REGISTRY}
link.bind("ppl_models", [n for n in COURSE_DECODERS if n in registry.REGISTRY], link.choices(registry.REGISTRY))
keep_offered("ppl_models")  # a link may name models the hosted demo does not offer
chosen = st.multiselect(t("Models (evaluated one after another)", "Modelos (avaliados um depois do outro)"),
                        offered(registry.REGISTRY), key="ppl_models", format_func=lambda n: f"{n} · {labels[n]}")
link.bind("ppl_stride", 0.5, link.choice(data.STRIDES))
fraction = st.select_slider(
    t("Stride, as a share of each model's context", "Passo (stride), como fração do contexto de cada modelo"),
    data.STRIDES, key="ppl_stride", format_func=lambda f: f"{num(f)} × " + t("context", "contexto"),
    help=t("The window moves this many tokens at a time; every token is scored once, with at least "
           "context − stride tokens before it once the text is longer than the context.",
           "A janela anda esse tanto de tokens por vez; cada token é avaliado uma vez, com pelo menos "
           "contexto − passo tokens antes dele quando o texto é maior que o contexto."))
if not text.strip():
    st.info(t("Type or choose a text to measure.", "Digite ou escolha um texto para medir."))
    st.stop()
if not chosen:
    st.info(t("Choose at least one model.", "Escolha pelo menos um modelo."))
    st.stop()

results = []
for name in chosen:
    r = data.evaluate(name, text, fraction)
    if "error" in r:
        st.warning(t(f"{name}: {r['error']}", f"{name}: {r['error']}"))
    else:
        results.append(r)
if not results:
    st.stop()

frame = viz.results_frame(results, labels)
headers = {"model": t("model", "modelo"), "params": t("parameters", "parâmetros"), "tokens": t("tokens predicted",
           "tokens previstos"), "ppl": t("ppl / token", "ppl / token"), "bits_per_byte": t("bits / byte", "bits / byte"),
           "ppl_per_word": t("ppl / word", "ppl / palavra"), "note": t("note", "nota")}
pseudo = t("pseudo-perplexity (encoder): not comparable", "pseudo-perplexidade (encoder): não comparável")
st.dataframe(shown := viz.shown_table(frame, headers, lang(), pseudo), hide_index=True)
exports.table("perplexity", st, shown)
st.info(t("**Which column to compare.** Across models with different tokenizers (GPT-1, GPT-2, RoBERTa, the course "
          "models) compare **bits per byte** or **perplexity per word**: both divide the same total by something "
          "every model shares, the text. Perplexity per token compares only models with the same tokenizer (the GPT-2 "
          "sizes and DistilGPT-2; the three course decoders). Encoders' pseudo-perplexity sees both sides of each "
          "token and is not comparable with any decoder's number.",
          "**Qual coluna comparar.** Entre modelos com tokenizadores diferentes (GPT-1, GPT-2, RoBERTa, os modelos do "
          "curso) compare **bits por byte** ou **perplexidade por palavra**: as duas dividem o mesmo total por algo "
          "que todos os modelos têm em comum, o texto. Perplexidade por token só compara modelos com o mesmo "
          "tokenizador (os tamanhos do GPT-2 e o DistilGPT-2; os três decoders do curso). A pseudo-perplexidade dos "
          "encoders vê os dois lados de cada token e não se compara com número nenhum de decoder."))
exports.chart("bits-per-byte", st, viz.bits_chart(frame, t("Bits per byte, smaller models first", "Bits por byte, modelos menores primeiro"),
                               t("bits per byte (lower is better)", "bits por byte (menor é melhor)"),
                               {"decoder": t("decoder", "decoder"), "pseudo": pseudo}, lang()))

scale = viz.scale_frame(results)
if len(scale) >= 2:
    st.subheader(t("What scale buys, offline", "O que a escala compra, offline"))
    exports.chart("scale-curve", st, viz.scale_chart(scale, t("Course decoders: same tokenizer, corpus and context; only size differs",
                                             "Decoders do curso: mesmo tokenizador, corpus e contexto; só o tamanho muda"),
                                    t("non-embedding parameters (log)", "parâmetros fora dos embeddings (log)"),
                                    t("perplexity per token (log)", "perplexidade por token (log)"),
                                    t("unigram baseline", "linha de base unigrama"), lang()))

st.subheader(t("Which tokens surprised which model", "Quais tokens surpreenderam qual modelo"))
by_name = {r["model"]: r for r in results}
link.bind("ppl_strip", results[-1]["model"], link.choice(by_name))
one = st.selectbox(t("Model", "Modelo"), list(by_name), key="ppl_strip")
st.caption(t("Darker red: more bits of surprise. Hover a token for its value.",
             "Vermelho mais escuro: mais bits de surpresa. Passe o mouse num token para ver o valor."))
st.html(viz.surprisal_html(text, by_name[one]["surprisal"], lang()))
if len(results) >= 2:
    c1, c2 = presentation.stacking("surprisal").columns(2)
    link.bind("ppl_a", results[-1]["model"], link.choice(by_name))
    link.bind("ppl_b", results[0]["model"], link.choice(by_name))
    a = c1.selectbox(t("Model A", "Modelo A"), list(by_name), key="ppl_a")
    b = c2.selectbox(t("Model B", "Modelo B"), list(by_name), key="ppl_b")
    words = viz.words_compare(text, perplexity.by_character(by_name[a]["surprisal"], len(text)),
                              perplexity.by_character(by_name[b]["surprisal"], len(text)))
    st.caption(t(f"Per word, aligned by characters: green where {a} was less surprised than {b}, red where more.",
                 f"Por palavra, alinhado pelos caracteres: verde onde {a} se surpreendeu menos que {b}, vermelho onde mais."))
    st.html(viz.compare_html(text, words, lang(), (a, b)))

st.subheader(t("Published figures", "Números publicados"))
st.dataframe(data.published_table(headers["model"]), hide_index=True)
st.caption(t("The GPT-2 paper scores WikiText-2 after undoing its tokenization (spaces around punctuation, "
             "@-@ markers), with its own detokenizers; raw text, as here and in the Hugging Face guide, scores "
             "differently, so expect the same order of magnitude, not the same digits.",
             "O artigo do GPT-2 mede o WikiText-2 depois de desfazer a tokenização dele (espaços em volta da "
             "pontuação, marcas @-@) com destokenizadores próprios; texto cru, como aqui e no guia da Hugging Face, "
             "dá outros valores: espere a mesma ordem de grandeza, não os mesmos dígitos."))
