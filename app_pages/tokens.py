"""What tokenization costs in Portuguese: three tokenizers side by side on your text (chapter 01)."""

import streamlit as st

from lab import tokens as lab
from ui import presentation, widgets
from ui.cached import tokens as cached
from ui.draw import reproduce
from ui.draw import tokens as draw
from ui.i18n import t

PAIRS = lab.sample_pairs()
CHIP_LIMIT = 400


def load_sample() -> None:
    """Fill both text boxes from the sample selector (a widget callback)."""
    st.session_state["tokens_pt"], st.session_state["tokens_en"] = cached.sample(st.session_state["tokens_sample"])


st.title(t("What tokenization costs in Portuguese", "Quanto custa a tokenização em português"))
presentation.explain(draw.intro_words())

labels = {"course": t("The course's trophy passage", "O trecho do troféu, do curso"),
          "all": t(f"The whole sample set ({len(PAIRS)} pairs)",
                   f"O conjunto de exemplos inteiro ({len(PAIRS)} pares)")}
samples = ["course", "all", *range(len(PAIRS))]
chosen = widgets.Choice("tokens_sample", t("Load a text", "Carregar um texto"), samples, "course",
                        format_func=lambda c: labels.get(c) or f"{c + 1}. {PAIRS[c]['pt'][:60]}…",
                        on_change=load_sample).draw()
pt_default, en_default = cached.sample(chosen)  # the texts the sample loads
pt_box = widgets.Text("tokens_pt", t("Portuguese text", "Texto em português"), pt_default, height=160)
en_box = widgets.Text("tokens_en", t("The same text in English (optional)", "O mesmo texto em inglês (opcional)"),
                      en_default, height=160)
widgets.bind_all(pt_box, en_box)  # before the columns, as before: a link notice or too-long caption stays above them
left, right = st.columns(2)
pt, en = pt_box.draw(left), en_box.draw(right)

if not pt.strip():
    st.info(t("Type or paste some Portuguese text above to see what it costs in tokens.",
              "Digite ou cole um texto em português acima para ver quanto ele custa em tokens."))
else:
    costs = cached.costs(pt)
    with presentation.view("costs"):
        draw.costs(costs, cached.costs(en) if en.strip() else None)
    name = widgets.Choice("tokens_encoding", t("Encoding", "Codificação"), lab.ENCODINGS, lab.ENCODINGS[0],
                          kind="radio", horizontal=True,
                          format_func={n: draw.encoding_name(n) for n in lab.ENCODINGS}.get).draw()
    with presentation.view("chips"):
        draw.tokens(pt, name, costs[name]["tokens"], CHIP_LIMIT)
draw.premium(pt, en, len(PAIRS))
reproduce.command(["tokens", "--json", "-"], stdin=pt)  # chapter 15: this view from the shell
