"""Fill in the blank vs continue the text: what an encoder sees that a decoder cannot (chapters 09-11)."""

import streamlit as st

from lab import fill, models
from lab.errors import LabError
from lab.models import registry
from ui import presentation, widgets
from ui.cached import fill as cached
from ui.draw import fill as draw
from ui.draw import reproduce
from ui.i18n import lang, t
from ui.limits import offered
from ui.messages import text as worded
from ui.model_loader import current_model, get_model

st.title(t("Fill in the blank, or continue the text", "Preencher a lacuna, ou continuar o texto"))
presentation.explain(t(
    "An encoder and a decoder differ by one line, the mask. A decoder reads left to right and continues the "
    "text; an encoder sees both sides and fills a blank in the middle. Same sentence, both models: where does "
    "seeing the right-hand side help?",
    "Um encoder e um decoder diferem por uma linha, a máscara. Um decoder lê da esquerda para a direita e "
    "continua o texto; um encoder vê os dois lados e preenche uma lacuna no meio. A mesma frase, os dois "
    "modelos: onde ver o lado direito ajuda?"))

# Widgets and data, section by section: the encoder (the sidebar's, or the course's), then each section's inputs.
m = current_model()
if m.kind != "encoder":  # the sidebar's default is a decoder: say which encoder runs, quietly
    st.caption(t(f"Encoder: {cached.ENCODER} (the sidebar's {m.name} is a decoder; pick an encoder there to use "
                 "another).", f"Encoder: {cached.ENCODER} (o {m.name} da barra lateral é um decoder; escolha um "
                 "encoder lá para usar outro)."))
    m = get_model(cached.ENCODER)

st.subheader(t("Fill in the blank", "Preencha a lacuna"))
text = widgets.Text("fill_text", t("Text with <mask> (or [MASK])", "Texto com <mask> (ou [MASK])"),
                    t("The <mask> manager installs the package.", "O arquivo de configuração fica no diretório "
                      "<mask>."), height=80).draw()
left, right, button = st.columns([3, 3, 2], vertical_alignment="bottom")
orders = {"own": t("each on its own", "cada uma por si"), "order": t("one after another", "uma depois da outra")}
order = widgets.Choice("fill_order", t("Several masks", "Várias máscaras"), list(orders), "own",
                       format_func=orders.get).draw(left)
top = widgets.Slider("fill_top", t("Candidates per mask", "Candidatos por máscara"), 1, 20, 5).draw(right)
button.button(t("Insert <mask>", "Inserir <mask>"), on_click=draw.insert_mask)
with presentation.view("fill"):
    try:
        draw.fills(cached.filled(m.name, text, top, order == "order"), order == "order")
    except LabError as e:
        st.warning(worded(e))

st.subheader(t("Same sentence, both models, every position", "A mesma frase, os dois modelos, cada posição"))
decoders = [n for n in offered(registry.REGISTRY) if registry.info(n).kind == "decoder"]
decoder = widgets.Choice("fill_decoder", t("Decoder", "Decoder"), decoders, models.DEFAULT_OFFLINE).draw()
pair = widgets.Text("fill_pair", t("Sentence", "Frase"), t(fill.PAIRS["en"][0], fill.PAIRS["pt"][0]), height=70).draw()
with presentation.view("compare"):
    try:
        draw.comparison(cached.compared(m.name, decoder, pair), m.name, decoder)
        draw.trophy(cached.trophy(m.name, decoder, lang()), m.name, decoder)
    except LabError as e:
        st.warning(worded(e))

st.subheader(t("How RoBERTa is trained, live", "Como o RoBERTa é treinado, ao vivo"))
presentation.explain(draw.training_words())
train_text = widgets.Text("fill_train", t("Sentence", "Frase"), t(
    "The package manager installs the package and its dependencies.",
    "O gerenciador de pacotes instala o pacote e as suas dependências."), kind="text_input").draw()
a, b, c = st.columns(3, vertical_alignment="bottom")
dynamic = widgets.Toggle("fill_dynamic", t("Dynamic masking", "Máscara dinâmica"), True).draw(a)
seed = widgets.NumberInput("fill_seed", t("Seed", "Semente"), 0, 9999, 0).draw(b)
epoch = widgets.Slider("fill_epoch", t("Epoch", "Época"), 1, cached.EPOCHS, 1).draw(c)
with presentation.view("masking"):
    if train_text.strip():
        draw.masking(cached.masking(train_text, seed, dynamic), epoch)
    else:
        st.info(t("Type a sentence to mask.", "Digite uma frase para mascarar."))
draw.roberta_decisions()
draw.course_roberta()

st.subheader(t("From GPT-1 to GPT-2", "Do GPT-1 ao GPT-2"))
draw.gpt_history()
reproduce.command(["fill", "--json", "--model", m.name, "--text", text, "--top", str(top),  # chapter 15
                   *(["--in-order"] if order == "order" else [])], ["fill", "--json", "--model", m.name, "--text",
                                                                   pair, "--compare", decoder])
