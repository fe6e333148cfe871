"""UI language: English or Brazilian Portuguese, chosen in the sidebar, kept in the URL (?lang=pt)."""

import streamlit as st

from lab.models import registry
from viz.format import number
from viz.format import signed as viz_signed
from viz.format import size as viz_size

LANGUAGES = {"en": "English", "pt": "Português (Brasil)"}


def lang() -> str:
    """The current UI language code ('en' or 'pt'): the reader's choice, the link's ?lang=, else the browser's (a
    ?lang= that is neither is ignored: the sidebar says so)."""
    from ui import url_state  # here: url_state words its notices with t()

    code = st.session_state.get("ui_lang") or url_state.read(url_state.LANG) or browser_language()
    return code if code in LANGUAGES else "en"


def preferred(accept: str | None) -> str:
    """The UI language an Accept-Language header (or a navigator.language such as "pt-BR") asks for first: the
    highest-weighted tag whose language is one of ours, 'en' when none is."""
    ranked = []
    for i, part in enumerate((accept or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = params.strip()[2:] if params.strip().startswith("q=") else "1"
        try:
            weight = float(q)
        except ValueError:
            continue
        code = tag.strip().lower().split("-")[0]
        if code in LANGUAGES and weight > 0:
            ranked.append((-weight, i, code))
    return min(ranked)[2] if ranked else "en"


def browser_language() -> str:
    """What the reader's browser prefers, for a link with no ?lang= (a student's QR code, a bare address)."""
    try:
        accept = st.context.headers.get("Accept-Language") or st.context.locale
    except Exception:  # no browser behind this run (a bare script run): English
        return "en"
    return preferred(accept)


def t(en: str, pt: str) -> str:
    """The string for the current UI language."""
    return pt if lang() == "pt" else en


def num(x, decimals: int = 2) -> str:
    """A number as the current UI language writes it (1,024 / 1.024; 2.20 / 2,20); floats with `decimals`."""
    return number(x, lang(), decimals)


def signed(x: float, decimals: int = 2) -> str:
    """A difference with its sign as the current UI language writes it (+0.25 / -0,25; -0.0004, never 0.000)."""
    return viz_signed(x, lang(), decimals)


def size(n: int) -> str:
    """A size in bytes as the current UI language writes it ('1.52 GB' / '1,52 GB')."""
    return viz_size(n, lang())


# The registry's labels are English; these are the ones Portuguese writes differently.
MODEL_LABELS_PT = {"course-gpt2": "Modelo do curso: GPT-2 pequeno, offline",
                   "course-roberta": "Modelo do curso: RoBERTa pequeno, offline",
                   "course-gpt2-2x128": "Modelo do curso: GPT-2, 2 camadas × 128, offline",
                   "course-gpt2-1x64": "Modelo do curso: GPT-2, 1 camada × 64, offline",
                   "gpt2-xl": "GPT-2 XL (1,5B)",
                   "gpt2-small-portuguese": "GPT-2 small, português (124M)"}


def model_label(name: str) -> str:
    """A registry model's label in the current UI language (its name for a model outside the registry)."""
    info = registry.REGISTRY.get(name)
    if info is None:
        return name
    return MODEL_LABELS_PT.get(name, info.label) if lang() == "pt" else info.label
