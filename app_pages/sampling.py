"""Sampling: temperature, top-k, top-p and the seed, step by step and streamed (chapter 07)."""

import streamlit as st

from lab import sampling
from lab.text import EmptyText, encode
from ui import messages, presentation, widgets
from ui.cached import sampling as cached
from ui.draw import reproduce
from ui.draw import sampling as draw
from ui.i18n import lang, num, t
from ui.model_loader import current_model

st.title(t("Sampling", "Amostragem"))
presentation.explain(t(
    "The model gives a probability to every token of its vocabulary; the decoding settings decide which one "
    "is written. Temperature sharpens or flattens the distribution, top-k keeps the k most likely tokens, "
    "top-p the fewest whose probabilities reach p, in that order (as transformers' generate does); then one "
    "token is drawn with the seed. This choice changes the text more than switching models.",
    "O modelo dá uma probabilidade a cada token do vocabulário; as configurações de decodificação decidem qual "
    "é escrito. A temperatura afia ou achata a distribuição, o top-k mantém os k tokens mais prováveis, o top-p "
    "os poucos cujas probabilidades somam p, nessa ordem (como o generate do transformers); então um token é "
    "sorteado com a semente. Essa escolha muda o texto mais do que trocar de modelo."))
m = current_model()
if m.kind != "decoder":
    st.info(t(f"Sampling needs a decoder, a model that continues text. {m.name} is an encoder (it fills in masked "
              "words): pick a GPT model in the sidebar.",
              f"A amostragem precisa de um decoder, um modelo que continua o texto. {m.name} é um encoder (preenche "
              "palavras mascaradas): escolha um modelo GPT na barra lateral."))
    st.stop()
prompt = widgets.Text("samp_prompt", t("Prompt", "Prompt"), sampling.PROMPTS[lang()], height=68).draw()
try:
    ids = encode(m.tokenizer, prompt, "prompt")
except EmptyText as e:
    st.info(messages.text(e))
    st.stop()
if len(ids) >= m.context:
    st.info(t(f"The prompt is {num(len(ids))} tokens: no room is left in the model's context of {num(m.context)}.",
              f"O prompt tem {num(len(ids))} tokens: não sobra espaço no contexto do modelo, de {num(m.context)}."))
    st.stop()
s = draw.settings(m.context - len(ids))
if not sampling.uses_cache(m.model):
    st.caption(t(f"{m.name} has no key-value cache in this transformers version: each step re-reads the whole "
                 "text.", f"{m.name} não tem cache de chaves e valores nesta versão do transformers: cada passo "
                 "relê o texto todo."))

with presentation.view("text"):
    st.subheader(t("Generation, token by token", "Geração, token a token"))
    st.button(t("Stop", "Parar"), key="samp_stop", help=t("Keeps what was drawn so far.",
                                                          "Guarda o que já foi sorteado."))
    with st.container(key="samp_stream"):
        result = draw.stream(m, prompt, ids, s, st.empty())
    if result["stopped"]:
        st.caption(t(f"Stopped after {len(result['tokens'])} tokens.",
                     f"Parado depois de {len(result['tokens'])} tokens."))
    st.caption(t("Each token's background is the probability it had when drawn: pale = unlikely, deep blue = certain.",
                 "O fundo de cada token é a probabilidade que ele tinha no sorteio: claro = improvável, "
                 "azul forte = certo."))
if not result["tokens"]:
    st.stop()

with presentation.view("distribution"):
    st.subheader(t("The distribution each token was drawn from", "A distribuição de onde cada token saiu"))
    n = len(result["tokens"])
    pick = widgets.Choice("samp_pick", t("Pick a generated token", "Escolha um token gerado"), range(n), 0,
                          kind="pills", format_func=draw.pick_label(result, m.tokenizer)).draw()  # none/past end: 1st
    draw.step(result, pick or 0, s.top_p)

with presentation.view("compare"):
    st.subheader(t("Compare", "Compare"))
    views = {"none": t("Nothing yet", "Nada ainda"),  # a comparison is generated when the reader opens it
             "pair": t("Two settings side by side", "Duas configurações lado a lado"),
             "seeds": t("Same settings, five seeds", "Mesmas configurações, cinco sementes")}
    view = widgets.Choice("samp_compare", t("Compare", "Comparar"), views, "none", kind="radio", horizontal=True,
                          label_visibility="collapsed", format_func=views.get).draw()
    if view == "none":
        st.caption(t("Pick a comparison: it is generated when you open it.",
                     "Escolha uma comparação: ela é gerada quando você a abre."))
    elif view == "pair":
        left, right = presentation.stacking("pair").columns(2)
        left.markdown(t("**A**: the settings above", "**A**: as configurações acima"))
        left.markdown(draw.text(result["tokens"], result["runs"], prompt), unsafe_allow_html=True)
        right.markdown(t("**B**: pick its filters (same seed and length)",
                         "**B**: escolha os filtros (mesma semente e tamanho)"))
        b = draw.filters("samp_b", (0.0, 0, 1.0), right.columns(3))
        with st.spinner(t("Generating B…", "Gerando B…")):
            other = cached.generation(m.name, prompt, s._replace(temperature=b[0], top_k=b[1], top_p=b[2]).drawn())
        right.markdown(draw.text(other["tokens"], other["runs"], prompt), unsafe_allow_html=True)
    else:
        with st.spinner(t("Generating five seeds…", "Gerando cinco sementes…")):
            runs = [cached.generation(m.name, prompt, s._replace(seed=s.seed + i).drawn()) for i in range(5)]
        for i, r in enumerate(runs):
            st.caption(f"{t('seed', 'semente')} {s.seed + i}")
            st.markdown(draw.text(r["tokens"], r["runs"]), unsafe_allow_html=True)
        st.caption(draw.variety(runs))
reproduce.command(["sample", "--json", "--model", m.name, "--prompt", prompt, "--seed", str(s.seed), "--max-new-tokens",
                   str(s.n), "--temperature", str(s.temperature), "--top-k", str(s.top_k), "--top-p", str(s.top_p)])
