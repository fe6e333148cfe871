"""Sampling: temperature, top-k, top-p and the seed, step by step and streamed (chapter 07)."""

import streamlit as st

from lab import sampling
from lab.text import encode
from ui import presentation
from ui import sampling_data as data
from ui import url_state as link
from ui.i18n import lang, t
from ui.limits import cap_text
from ui.model_loader import current_model
from viz.sampling import coloured_tokens

st.title(t("Sampling", "Amostragem"))
presentation.explain(t("The model gives a probability to every token of its vocabulary; the decoding settings decide which one "
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
link.bind("samp_prompt", sampling.PROMPTS[lang()], link.text())
prompt = st.text_area(t("Prompt", "Prompt"), key="samp_prompt", height=68, max_chars=cap_text("samp_prompt"))
try:
    ids = encode(m.tokenizer, prompt, "prompt")
    if len(ids) >= m.context:
        raise sampling.SamplingError("too long", "too_long", tokens=len(ids), context=m.context)
except sampling.SamplingError as e:
    st.info(data.problem_text(e))
    st.stop()
s = data.settings(m.context - len(ids))
if not sampling.uses_cache(m.model):
    st.caption(t(f"{m.name} has no key-value cache in this transformers version: each step re-reads the whole text.",
                 f"{m.name} não tem cache de chaves e valores nesta versão do transformers: cada passo relê o texto todo."))

st.subheader(t("Generation, token by token", "Geração, token a token"))
st.button(t("Stop", "Parar"), key="samp_stop", help=t("Keeps what was drawn so far.", "Guarda o que já foi sorteado."))
with st.container(key="samp_stream"):
    result = data.stream(m, prompt, ids, s, st.empty())
if result["stopped"]:
    st.caption(t(f"Stopped after {len(result['tokens'])} tokens.", f"Parado depois de {len(result['tokens'])} tokens."))
st.caption(t("Each token's background is the probability it had when drawn: pale = unlikely, deep blue = certain.",
             "O fundo de cada token é a probabilidade que ele tinha no sorteio: claro = improvável, azul forte = certo."))
if not result["tokens"]:
    st.stop()

st.subheader(t("The distribution each token was drawn from", "A distribuição de onde cada token saiu"))
n = len(result["tokens"])
link.bind("samp_pick", 0, link.integer(0, n - 1))  # none picked, or past this text's end: the first
pick = st.pills(t("Pick a generated token", "Escolha um token gerado"), range(n), format_func=data.pick_label(result),
                key="samp_pick")
data.step_view(result, pick or 0, s.top_p)

st.subheader(t("Compare", "Compare"))
link.bind("samp_compare", "pair", link.choice(["pair", "seeds"]))
view = st.radio(t("Compare", "Comparar"), ["pair", "seeds"], horizontal=True, key="samp_compare",
                label_visibility="collapsed", format_func={"pair": t("Two settings side by side", "Duas configurações lado a lado"),
                                                           "seeds": t("Same settings, five seeds", "Mesmas configurações, cinco sementes")}.get)
if view == "pair":
    left, right = presentation.stacking("pair").columns(2)
    left.markdown(t("**A**: the settings above", "**A**: as configurações acima"))
    left.markdown(coloured_tokens(result["tokens"], prompt, lang=lang()), unsafe_allow_html=True)
    right.markdown(t("**B**: pick its filters (same seed and length)", "**B**: escolha os filtros (mesma semente e tamanho)"))
    b = data.filters("samp_b", (0.0, 0, 1.0), right.columns(3))
    with st.spinner(t("Generating B…", "Gerando B…")):
        other = data.generation(m.name, prompt, s._replace(temperature=b[0], top_k=b[1], top_p=b[2]))
    right.markdown(coloured_tokens(other["tokens"], prompt, lang=lang()), unsafe_allow_html=True)
else:
    with st.spinner(t("Generating five seeds…", "Gerando cinco sementes…")):
        runs = [data.generation(m.name, prompt, s._replace(seed=s.seed + i)) for i in range(5)]
    for i, r in enumerate(runs):
        st.caption(f"{t('seed', 'semente')} {s.seed + i}")
        st.markdown(coloured_tokens(r["tokens"], lang=lang()), unsafe_allow_html=True)
    st.caption(data.variety(runs))
