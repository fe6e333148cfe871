"""The course's map for the home page: every chapter 00-16 and the glossary, each with the page that shows it
or the `python -m lab` command, and plainly which ones the app does not cover. Titles are the app's own words.

Which pages show a chapter, each page's title and each command's page come from the page manifest (lab/pages.py):
TITLES, CHAPTERS and COMMANDS are read from it when asked for, so a page added there is on the map at once."""

from __future__ import annotations

from lab import pages as manifest

# (chapter, title en, title pt, command or None, what en, what pt); the pages come from the manifest. No page and
# no command: not covered.
COURSE = [
    ("00", "The fossils: a cross-section of history", "Os fósseis: um corte da história",
     "python -m lab fossils", "GPT-1, GPT-2's four sizes, DistilGPT-2, RoBERTa and the course models side by side: "
     "shape, parameters, FLOPs, memory, the key-value cache, data and year.",
     "GPT-1, os quatro tamanhos do GPT-2, DistilGPT-2, RoBERTa e os modelos do curso lado a lado: forma, "
     "parâmetros, FLOPs, memória, o cache KV, dados e ano."),
    ("01", "Tokens, and what they cost in Portuguese", "Tokens, e quanto custam em português",
     None, "Tokens per word and the Portuguese premium in four tokenizers.",
     "Tokens por palavra e o ágio do português em quatro tokenizadores."),
    ("02", "Embeddings", "Embeddings", None,
     "Analogies as vector arithmetic, measured honestly.",
     "Analogias como aritmética de vetores, medidas com honestidade."),
    ("03", "Attention", "Atenção", None, "Every head of every layer on your text.",
     "Todas as cabeças de todas as camadas sobre o seu texto."),
    ("04", "Many heads, and the mask", "Várias cabeças, e a máscara", None,
     "The split into heads and the line that makes a model causal.",
     "A divisão em cabeças e a linha que torna um modelo causal."),
    ("05", "Layer by layer", "Camada por camada", None,
     "Each layer read out as if it were the last.", "Cada camada lida como se fosse a última."),
    ("06", "What scale buys", "O que a escala compra", None,
     "Three course decoders that differ only in size.", "Três decoders do curso que só diferem no tamanho."),
    ("07", "Temperature, top-k, top-p", "Temperatura, top-k, top-p", None,
     "The next-token distribution, stage by stage.", "A distribuição do próximo token, etapa por etapa."),
    ("08", "Perplexity", "Perplexidade", None,
     "One number, compared fairly across tokenizers.", "Um número, comparado com justiça entre tokenizadores."),
    ("09", "From GPT-1 to GPT-2", "Do GPT-1 ao GPT-2", None,
     "The decisions side by side, each figure with its source; both models on the same text.",
     "As decisões lado a lado, cada número com a sua fonte; os dois modelos no mesmo texto."),
    ("10", "RoBERTa: training better", "RoBERTa: treinar melhor", "python -m lab fill",
     "Fill in the blank, and RoBERTa's masking live beside the paper's four decisions.",
     "Preencher a lacuna, e a máscara do RoBERTa ao vivo ao lado das quatro decisões do artigo."),
    ("11", "Encoder against decoder", "Encoder contra decoder", None,
     "One line of code, the mask, and what follows from it.", "Uma linha de código, a máscara, e o que decorre dela."),
    ("12", "The detector", "O detector", None,
     "A model as an AI-text classifier, and whom it wrongly accuses.",
     "Um modelo como classificador de texto de IA, e quem ele acusa por engano."),
    ("13", "GPT-2's original code", "O código original do GPT-2", "python -m lab trace",
     "A forward pass written out, each line beside the tensor it makes, and the KV cache measured.",
     "Um forward escrito por extenso, cada linha ao lado do tensor que produz, e o cache KV medido."),
    ("14", "Serving a model over HTTP", "Servir um modelo por HTTP",
     "python -m lab serve", "A real server and a real client, measured: batching, the cache, what production adds.",
     "Um servidor e um cliente de verdade, medidos: lotes, o cache, o que a produção acrescenta."),
    ("15", "The lab guide", "O guia do laboratório", "python -m lab --help",
     "Every command, chapter by chapter, with the page it reproduces; every page shows its own command.",
     "Cada comando, capítulo por capítulo, com a página que ele reproduz; cada página mostra o seu comando."),
    ("16", "The ceiling of this path", "O teto deste caminho", None,
     "The compounding-error argument, measured.", "O argumento do erro que se acumula, medido."),
    ("—", "Glossary", "Glossário", None,
     "Every term the course uses, in the app's own words, each linked to the view that shows it.",
     "Cada termo que o curso usa, nas palavras do app, cada um com o link da vista que o mostra."),
]
# A chapter's pages are listed in the navigation's order, these first: its text names them in this order.
LEAD = {"09": ("fill",), "11": ("fill",)}


def titles() -> dict[str, tuple[str, str]]:
    """{page script: (title en, title pt)}, as the navigation and the course map name each page."""
    return {p.script: p.title for p in manifest.PAGES}


def chapters() -> list[tuple]:
    """The course map: (chapter, title en, title pt, pages (scripts), command or None, what en, what pt)."""
    return [(number, en, pt, manifest.in_chapter(number, LEAD.get(number, ())), command, what_en, what_pt)
            for number, en, pt, command, what_en, what_pt in COURSE]


def __getattr__(name: str):
    """TITLES, CHAPTERS and COMMANDS ({command: (chapters, page script or None)}), read from the manifest."""
    derived = {"TITLES": titles, "CHAPTERS": chapters, "COMMANDS": manifest.commands}
    if name in derived:
        return derived[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
