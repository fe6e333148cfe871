"""The sidebar every page shares: UI language and the model picker, both kept in the URL.

Torch-free: the picker reads the registry and the local caches only; models load on the pages
that need one, through ui.model_loader.current_model().
"""

import streamlit as st

from lab import models, quoted
from lab.models import hub, registry
from lab.models.budget import APP_BASELINE_MB, BUDGET_ENV, MIN_BUDGET_MB, budget, budget_bytes, models_that_fit
from lab.models.default import default_model
from ui import limits, url_state
from ui.i18n import LANGUAGES, lang, model_label, num, size, t
from ui.model_loader import MODEL_KEY
from viz.format import number


def draw() -> None:
    """Draw the shared sidebar widgets; their state survives page switches and lives in the URL."""
    with st.sidebar:
        url_lang = url_state.read(url_state.LANG)  # None: absent, or neither language
        if url_state.history_entry() and url_lang is not None:
            st.session_state["ui_lang"] = url_lang  # Back/Forward to a view in the other language
        st.session_state["ui_lang"] = lang()  # the widget takes its value from here (a link's ?lang= at first)
        url_state.check(url_state.LANG, instead=lang())  # ?lang=xx: a notice, then the browser's language
        choice = st.radio("Language / Idioma", list(LANGUAGES), format_func=LANGUAGES.get, key="ui_lang",
                          horizontal=True)
        url_state.put(url_state.LANG, choice)
        model_picker()


def option_labels() -> dict[str, str]:
    """Each registry model's picker label: name, size, and whether it works offline here."""
    budget, is_offline = budget_bytes(), hub.offline()
    labels = {}
    for name, info in registry.REGISTRY.items():  # the hosted demo's picker shows only those it offers
        label = model_label(name)
        if info.memory_bytes > budget:
            status = t("too big for this server", "grande demais para este servidor")
        elif hub.is_available(name):
            status = "✓ offline"
        elif info.hub_id is None:
            status = t("missing from this copy", "ausente desta cópia")
        elif is_offline:
            status = t("not downloaded (offline)", "não baixado (offline)")
        else:
            status = t("download", "baixar")
        labels[name] = f"{label} · {size(info.download_bytes)} · {status}"
    return labels


def model_picker() -> None:
    """The model every model page uses: st.session_state[MODEL_KEY], mirrored in ?model=."""
    names = limits.offered(registry.REGISTRY)  # every model, unless this is the hosted demo
    url_model = url_state.read(url_state.MODEL, default=None)  # None: the link names none
    default = default_model()  # gpt2 where it is on this machine (and offered), else the course model
    wanted = st.session_state.get(MODEL_KEY) or url_model or default
    if url_state.history_entry() and url_model in names:
        wanted = url_model  # Back/Forward to a view of another model: the URL wins, as for page inputs
    if wanted not in registry.REGISTRY:
        st.warning(t("The link names a model this app does not know; using the course model.",
                     "O link pede um modelo que este app não conhece; usando o modelo do curso."))
        wanted = models.DEFAULT_OFFLINE
    elif wanted not in names:  # e.g. ?model=gpt2-xl on the hosted demo
        limits.refused_notice([wanted])
        wanted = models.DEFAULT_OFFLINE
    if st.session_state.get(MODEL_KEY) != wanted or st.session_state.get("_model_lang") != lang():
        st.session_state[MODEL_KEY] = wanted  # the widget takes its value from here (again after a language
        st.session_state["_model_lang"] = lang()  # switch: a selectbox keyed by its key alone keeps its old label)
    labels = option_labels()
    choice = st.selectbox(
        t("Model", "Modelo"), names, format_func=labels.get, key=MODEL_KEY,
        help=default_help(default))
    url_state.put(url_state.MODEL, choice)
    st.caption(budget_text(names))
    st.caption(labels[choice])  # the chosen model whole: the picker's box is narrower than most labels
    if choice == quoted.NAME:
        st.caption(described_text())


def default_help(default: str) -> str:
    """The picker's help: what ✓ offline means, which model is the default here and why, how to fetch others."""
    if default == models.DEFAULT_OFFLINE:
        why = t(f"The default, {default}, is the course's small model, shipped with the app.",
                f"O padrão, {default}, é o modelo pequeno do curso, que vem com o app.")
    else:
        why = t(f"The default, {default}, is the model the course describes, found on this machine.",
                f"O padrão, {default}, é o modelo que o curso descreve, encontrado nesta máquina.")
    return t(f"Models marked ✓ offline load without internet. {why} To fetch others ahead of a class: "
             "`python -m lab prefetch NAME`.",
             f"Modelos com ✓ offline carregam sem internet. {why} Para baixar outros antes da aula: "
             "`python -m lab prefetch NOME`.")


def described_text() -> str:
    """GPT-2 small named as the model the course describes, with the figures the course quotes (lab.quoted)."""
    q = quoted.figures()
    m, paper, docs = q["params_released"] // 1_000_000, q["params_paper"] // 1_000_000, q["webtext_documents"] // 10**6
    layers, heads, dims = q["n_layer"], q["n_head"], q["head_dim"]
    counted, wide, context = num(q["params_released"]), num(q["n_embd"]), num(q["context"])
    ppl = num(q["wikitext2_ppl"])
    return t(f"The model the course describes: GPT-2 small, {m}M parameters ({counted} counted; its paper says "
             f"{paper}M); {layers} × {heads} × {dims}: {layers} layers, {heads} heads of {dims} dimensions each, "
             f"{wide} wide; a context of {context} tokens; trained on WebText (about {docs} million web pages, "
             f"{q['webtext_gb']} GB of text). The paper's zero-shot perplexity on WikiText-2: {ppl}.",
             f"O modelo que o curso descreve: GPT-2 small, {m} milhões de parâmetros ({counted} contados; o artigo "
             f"diz {paper} milhões); {layers} × {heads} × {dims}: {layers} camadas, {heads} cabeças de {dims} "
             f"dimensões cada, {wide} de largura; contexto de {context} tokens; treinado no WebText (cerca de {docs} "
             f"milhões de páginas da web, {q['webtext_gb']} GB de texto). A perplexidade zero-shot do artigo no "
             f"WikiText-2: {ppl}.")


def gigabytes(n: int) -> str:
    """Bytes as '11.6 GB' (English) or '11,6 GB' (Portuguese)."""
    return f"{number(n / 1e9, lang(), 1)} GB"


def budget_text(names: list[str]) -> str:
    """The memory budget for models, where it comes from, and which of `names` do not fit in it."""
    b = budget()
    source = {"env": t(f"set by {BUDGET_ENV}", f"definida por {BUDGET_ENV}"),
              "hosted": t("this hosted demo's cap", "o limite desta demonstração hospedada"),
              "machine": t(f"half of this machine's {gigabytes(b.machine_bytes)}, less "
                           f"{gigabytes(APP_BASELINE_MB * registry.MB)} for the app",
                           f"metade dos {gigabytes(b.machine_bytes)} desta máquina, menos "
                           f"{gigabytes(APP_BASELINE_MB * registry.MB)} para o app")}[b.source]
    if b.source == "machine" and b.bytes == MIN_BUDGET_MB * registry.MB:
        source = t(f"the minimum; this machine has {gigabytes(b.machine_bytes)}",
                   f"o mínimo; esta máquina tem {gigabytes(b.machine_bytes)}")
    fit = set(models_that_fit(b.bytes))
    too_big = [n for n in names if n not in fit]
    return (t(f"Memory for models: {gigabytes(b.bytes)} ({source}). ",
              f"Memória para modelos: {gigabytes(b.bytes)} ({source}). ")
            + (t("Too big for it: ", "Grandes demais para ela: ") + ", ".join(too_big) + "." if too_big
               else t("Every model listed fits.", "Todos os modelos da lista cabem.")))
