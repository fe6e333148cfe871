"""The hosted demo's caps on the page (lab.models.hosting decides them): text cut with a notice, models refused
in words.

Every hosted cap is a no-op when the app is not hosted (`LAB_HOSTED` unset): a laptop has no caps. `page_cut` is
the one limit that holds everywhere: how much of a reader's text a page measures (its CLI command takes it whole).
"""

from __future__ import annotations

import streamlit as st

from lab.models import hosting
from ui.i18n import num, t

LOCAL = ("Run the app on your own machine (`streamlit run app.py`) for no limit.",
         "Rode o app na sua máquina (`streamlit run app.py`) para não ter limite.")


def cap_text(key: str, cap: int | None = None) -> int | None:
    """Call inside the widget `key`'s call, as its max_chars: cuts st.session_state[key] to the cap
    (a link, a sample or a paste may be longer) with a notice, and returns the cap for the widget.

    `cap` defaults to the hosted input cap; None when the app is not hosted.
    """
    lim = hosting.limits()
    cap = lim.max_input_chars if cap is None else cap
    if not lim.hosted or cap is None:
        return None
    value = st.session_state.get(key)
    if isinstance(value, str) and len(value) >= cap:  # the widget itself cuts a longer reply to the cap
        st.session_state[key] = value[:cap]
        cut_notice(cap)
    return cap


def perplexity_cap(key: str) -> int | None:
    """cap_text with the perplexity page's own cap (the text it evaluates)."""
    return cap_text(key, hosting.limits().max_perplexity_chars)


def cut_notice(cap: int) -> None:
    """A notice that a text was cut at `cap` characters on this hosted demo."""
    st.warning(t(f"This hosted demo reads at most {num(cap)} characters here: the text was cut there. " + LOCAL[0],
                 f"Esta demonstração hospedada lê no máximo {num(cap)} caracteres aqui: o texto foi cortado aí. "
                 + LOCAL[1]))


def clip_perplexity(text: str) -> str:
    """A text the perplexity page chose (a passage, the unseen documentation) cut at the hosted cap, with a notice."""
    cap = hosting.limits().max_perplexity_chars
    text, cut = hosting.clip(text, cap)
    if cut:
        cut_notice(cap)
    return text


def new_tokens(most: int) -> int:
    """The most new tokens the sampling page may generate: its own `most`, or the hosted cap."""
    return hosting.new_tokens(most)


def new_tokens_note(most: int) -> None:
    """A caption under the length slider when the hosted cap is below the page's own `most`."""
    cap = hosting.new_tokens(most)
    if cap < most:
        st.caption(t(f"This hosted demo generates at most {num(cap)} new tokens (the app on your own machine: "
                     f"{num(most)}).", f"Esta demonstração hospedada gera no máximo {num(cap)} tokens novos (o app "
                     f"na sua máquina: {num(most)})."))


def offered(names) -> list[str]:
    """`names` without the models this server does not offer (all of them when not hosted)."""
    return hosting.offered_names(names)


def keep_offered(key: str) -> None:
    """Drop models this server does not offer from a multiselect's state `key` (a link may name them), with a notice."""
    chosen = st.session_state.get(key)
    if not isinstance(chosen, list):
        return
    kept = offered(chosen)
    if kept != chosen:
        st.session_state[key] = kept
        refused_notice(sorted(set(chosen) - set(kept)))


def refused_notice(names: list[str]) -> None:
    """A warning naming models this hosted demo does not offer."""
    listed = ", ".join(names)
    st.warning(t(f"This hosted demo does not offer {listed}. Run the app on your own machine (`streamlit run app.py`) "
                 "for every model.", f"Esta demonstração hospedada não oferece {listed}. Rode o app na sua máquina "
                 "(`streamlit run app.py`) para ter todos os modelos."))


def page_cut(text: str, chars: int, command: str) -> str:
    """The reader's text as a page measures it: its first `chars` characters, with a notice naming the
    `python -m lab <command>` that takes it whole, when it is longer."""
    if len(text) <= chars:
        return text
    st.info(t(f"The page measures the first {num(chars)} of these {num(len(text))} characters. For the whole text: "
              f"`python -m lab {command} --file FILE`.",
              f"A página mede os primeiros {num(chars)} destes {num(len(text))} caracteres. Para o texto inteiro: "
              f"`python -m lab {command} --file ARQUIVO`."))
    return text[:chars]
