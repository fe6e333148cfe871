"""The course's map for the home page: every chapter 00-16 and the glossary, each with the page that shows it
or the `python -m lab` command, and plainly which ones the app does not cover. Titles are the app's own words."""

from __future__ import annotations

# Each page's title, as the navigation and the course map name it.
TITLES = {
    "app_pages/home.py": ("Home", "Início"),
    "app_pages/fossils.py": ("The fossils", "Os fósseis"),
    "app_pages/glossary.py": ("Glossary", "Glossário"),
    "app_pages/lab_guide.py": ("The lab guide", "O guia do laboratório"),
    "app_pages/tokens.py": ("Tokenization costs", "Custo da tokenização"),
    "app_pages/analogies.py": ("Embedding analogies", "Analogias de embeddings"),
    "app_pages/attention.py": ("Attention heads", "Cabeças de atenção"),
    "app_pages/causal_mask.py": ("The causal mask", "A máscara causal"),
    "app_pages/logit_lens.py": ("Logit lens", "Lente dos logits"),
    "app_pages/perplexity.py": ("Perplexity", "Perplexidade"),
    "app_pages/sampling.py": ("Sampling", "Amostragem"),
    "app_pages/fill.py": ("Fill in the blank", "Preencher a lacuna"),
    "app_pages/detector.py": ("The detector", "O detector"),
    "app_pages/code.py": ("Code beside the tensors", "O código ao lado dos tensores"),
    "app_pages/serving.py": ("Serving over HTTP", "Servir por HTTP"),
    "app_pages/ceiling.py": ("The ceiling", "O teto"),
}

# (chapter, title en, title pt, pages (paths), command or None, what en, what pt); no page and no command: not covered
CHAPTERS = [
    ("00", "The fossils: a cross-section of history", "Os fósseis: um corte da história", ("app_pages/fossils.py",),
     "python -m lab fossils", "GPT-1, GPT-2's four sizes, DistilGPT-2, RoBERTa and the course models side by side: "
     "shape, parameters, FLOPs, memory, the key-value cache, data and year.",
     "GPT-1, os quatro tamanhos do GPT-2, DistilGPT-2, RoBERTa e os modelos do curso lado a lado: forma, "
     "parâmetros, FLOPs, memória, o cache KV, dados e ano."),
    ("01", "Tokens, and what they cost in Portuguese", "Tokens, e quanto custam em português",
     ("app_pages/tokens.py",), None, "Tokens per word and the Portuguese premium in four tokenizers.",
     "Tokens por palavra e o ágio do português em quatro tokenizadores."),
    ("02", "Embeddings", "Embeddings", ("app_pages/analogies.py",), None,
     "Analogies as vector arithmetic, measured honestly.",
     "Analogias como aritmética de vetores, medidas com honestidade."),
    ("03", "Attention", "Atenção", ("app_pages/attention.py",), None, "Every head of every layer on your text.",
     "Todas as cabeças de todas as camadas sobre o seu texto."),
    ("04", "Many heads, and the mask", "Várias cabeças, e a máscara", ("app_pages/attention.py",
                                                                       "app_pages/causal_mask.py"), None,
     "The split into heads and the line that makes a model causal.",
     "A divisão em cabeças e a linha que torna um modelo causal."),
    ("05", "Layer by layer", "Camada por camada", ("app_pages/logit_lens.py",), None,
     "Each layer read out as if it were the last.", "Cada camada lida como se fosse a última."),
    ("06", "What scale buys", "O que a escala compra", ("app_pages/perplexity.py",), None,
     "Three course decoders that differ only in size.", "Três decoders do curso que só diferem no tamanho."),
    ("07", "Temperature, top-k, top-p", "Temperatura, top-k, top-p", ("app_pages/sampling.py",), None,
     "The next-token distribution, stage by stage.", "A distribuição do próximo token, etapa por etapa."),
    ("08", "Perplexity", "Perplexidade", ("app_pages/perplexity.py",), None,
     "One number, compared fairly across tokenizers.", "Um número, comparado com justiça entre tokenizadores."),
    ("09", "From GPT-1 to GPT-2", "Do GPT-1 ao GPT-2", ("app_pages/fill.py", "app_pages/perplexity.py"), None,
     "The decisions side by side, each figure with its source; both models on the same text.",
     "As decisões lado a lado, cada número com a sua fonte; os dois modelos no mesmo texto."),
    ("10", "RoBERTa: training better", "RoBERTa: treinar melhor", ("app_pages/fill.py",), "python -m lab fill",
     "Fill in the blank, and RoBERTa's masking live beside the paper's four decisions.",
     "Preencher a lacuna, e a máscara do RoBERTa ao vivo ao lado das quatro decisões do artigo."),
    ("11", "Encoder against decoder", "Encoder contra decoder", ("app_pages/fill.py", "app_pages/causal_mask.py"),
     None,
     "One line of code, the mask, and what follows from it.", "Uma linha de código, a máscara, e o que decorre dela."),
    ("12", "The detector", "O detector", ("app_pages/detector.py",), None,
     "A model as an AI-text classifier, and whom it wrongly accuses.",
     "Um modelo como classificador de texto de IA, e quem ele acusa por engano."),
    ("13", "GPT-2's original code", "O código original do GPT-2", ("app_pages/code.py",), "python -m lab trace",
     "A forward pass written out, each line beside the tensor it makes, and the KV cache measured.",
     "Um forward escrito por extenso, cada linha ao lado do tensor que produz, e o cache KV medido."),
    ("14", "Serving a model over HTTP", "Servir um modelo por HTTP", ("app_pages/serving.py",),
     "python -m lab serve", "A real server and a real client, measured: batching, the cache, what production adds.",
     "Um servidor e um cliente de verdade, medidos: lotes, o cache, o que a produção acrescenta."),
    ("15", "The lab guide", "O guia do laboratório", ("app_pages/lab_guide.py",), "python -m lab --help",
     "Every command, chapter by chapter, with the page it reproduces; every page shows its own command.",
     "Cada comando, capítulo por capítulo, com a página que ele reproduz; cada página mostra o seu comando."),
    ("16", "The ceiling of this path", "O teto deste caminho", ("app_pages/ceiling.py",), None,
     "The compounding-error argument, measured.", "O argumento do erro que se acumula, medido."),
    ("—", "Glossary", "Glossário", ("app_pages/glossary.py",), None,
     "Every term the course uses, in the app's own words, each linked to the view that shows it.",
     "Cada termo que o curso usa, nas palavras do app, cada um com o link da vista que o mostra."),
]

# Each `python -m lab` command: (chapters, the page it reproduces or None). The lab-guide page lists the parser's
# commands (lab.cli.guide), grouped by these chapters; a command missing here is listed under "other".
COMMANDS = {
    "fossils": ("00", "app_pages/fossils.py"), "models": ("00", None), "prefetch": ("00", None),
    "tokens": ("01", "app_pages/tokens.py"), "premium": ("01", "app_pages/tokens.py"),
    "analogy": ("02", "app_pages/analogies.py"), "neighbours": ("02", "app_pages/analogies.py"),
    "attention": ("03, 04", "app_pages/attention.py"), "trophy": ("04, 11", "app_pages/causal_mask.py"),
    "lens": ("05", "app_pages/logit_lens.py"), "perplexity": ("06, 08, 09", "app_pages/perplexity.py"),
    "next": ("07", "app_pages/sampling.py"), "sample": ("07", "app_pages/sampling.py"),
    "fill": ("09, 10, 11", "app_pages/fill.py"), "history": ("09, 10, 11", "app_pages/fill.py"),
    "detect": ("12", "app_pages/detector.py"),
    "detect-eval": ("12", "app_pages/detector.py"), "detect-set": ("12", None), "trace": ("13", "app_pages/code.py"),
    "serve": ("14", "app_pages/serving.py"), "loadtest": ("14", "app_pages/serving.py"),
    "ceiling": ("16", "app_pages/ceiling.py"), "bench": ("15", None), "corpus": ("15", None), "train": ("15", None),
    "course-eval": ("15", None), "replicas": ("15", None), "lesson": ("15", None),
}
