"""The course's glossary: every term the course uses, defined in the app's own words in English and Portuguese,
each with the view that shows it (a page and the inputs to open it with: a link, not just a page).

A term is (key, (term en, term pt), (definition en, definition pt), page, query parameters); the parameters are
the pages' own input keys (ui.widgets), so the link opens that view. tests/test_glossary.py opens every link.
"""

from __future__ import annotations

import unicodedata

from lab.link_codec import write_boolean

TROPHY_EN = "The trophy didn't fit in the suitcase because it was too big."
TERMS = [
    ("token", ("token", "token"),
     ("The unit a model reads and writes: a piece of text (a word, part of a word, a byte) with a number, its id.",
      "A unidade que um modelo lê e escreve: um pedaço de texto (palavra, parte de palavra, um byte) com um "
      "número, o seu id."),
     "app_pages/tokens.py", {"tokens_pt": "O troféu não coube na mala porque ele era grande demais."}),
    ("bpe", ("BPE (byte-pair encoding)", "BPE (codificação por pares de bytes)"),
     ("How GPT-2 cuts text into tokens: start from bytes and merge the most frequent neighbouring pair, again and "
      "again; frequent words end up as one token, rare ones in pieces.",
      "Como o GPT-2 corta o texto em tokens: começa pelos bytes e junta o par vizinho mais frequente, de novo e de "
      "novo; palavras frequentes viram um token, as raras ficam em pedaços."),
     "app_pages/tokens.py", {"tokens_pt": "anticonstitucionalmente"}),
    ("vocabulary", ("vocabulary", "vocabulário"),
     ("Every token a model knows, one row each in its embedding table: 40,478 in GPT-1, 50,257 in GPT-2.",
      "Todos os tokens que um modelo conhece, uma linha cada na tabela de embeddings: 40.478 no GPT-1, 50.257 no "
      "GPT-2."),
     "app_pages/fossils.py", {"fos_models": "openai-gpt,gpt2"}),
    ("embedding", ("embedding", "embedding"),
     ("The vector a token id becomes on the way in: a learned row of numbers, where related tokens end up near "
      "each other.", "O vetor em que o id de um token se transforma na entrada: uma linha de números aprendida, "
      "onde tokens parecidos ficam perto uns dos outros."),
     "app_pages/analogies.py", {"an_preset": "paris"}),
    ("parameter", ("parameter", "parâmetro"),
     ("One learned number of a model. GPT-2 small has 124,439,808 of them; most sit in its attention and MLP "
      "layers, about a third in its embeddings.", "Um número aprendido de um modelo. O GPT-2 small tem 124.439.808; a "
      "maioria fica nas camadas de atenção e de MLP, cerca de um terço nos embeddings."),
     "app_pages/fossils.py", {"fos_models": "gpt2,gpt2-medium,gpt2-large,gpt2-xl"}),
    ("layer", ("layer (block)", "camada (bloco)"),
     ("One floor of the model: attention, then an MLP, each added back to the residual stream. GPT-2 small has 12, "
      "GPT-2 XL 48.", "Um andar do modelo: atenção, depois um MLP, cada um somado de volta ao fluxo residual. O "
      "GPT-2 small tem 12, o GPT-2 XL, 48."),
     "app_pages/logit_lens.py", {"lens_text": "The Debian package manager installs"}),
    ("attention", ("attention", "atenção"),
     ("Each token asks a question (query), compares it with every visible token's key, and takes a weighted mix of "
      "their values; the weights of a row add up to 1.",
      "Cada token faz uma pergunta (query), compara com a chave (key) de cada token visível e pega uma mistura "
      "ponderada dos valores (values); os pesos de uma linha somam 1."),
     "app_pages/attention.py", {"attn_text": TROPHY_EN}),
    ("head", ("attention head", "cabeça de atenção"),
     ("One of the parallel attentions inside a layer, each with its own slice of the width (768 = 12 × 64 in GPT-2 "
      "small) and its own pattern.", "Uma das atenções paralelas de uma camada, cada uma com a sua fatia da largura "
      "(768 = 12 × 64 no GPT-2 small) e o seu próprio padrão."),
     "app_pages/attention.py", {"attn_layer": "2", "attn_head": "3"}),
    ("mask", ("causal mask", "máscara causal"),
     ("Minus infinity on every score above the diagonal, so after the softmax a token gives exactly zero weight to "
      "the tokens after it: what makes a model a decoder.",
      "Menos infinito em cada score acima da diagonal, para que depois do softmax um token dê peso exatamente zero "
      "aos tokens depois dele: é o que faz de um modelo um decoder."),
     "app_pages/causal_mask.py", {"mask_text": TROPHY_EN}),
    ("residual", ("residual stream", "fluxo residual"),
     ("The running vector of each position that every layer reads and adds its output to; the logit lens reads it "
      "between floors.", "O vetor de cada posição que cada camada lê e ao qual soma a sua saída; a lente dos logits "
      "o lê entre os andares."),
     "app_pages/logit_lens.py", {"lens_text": "Paris is the capital of"}),
    ("previous_token_head", ("previous-token head", "cabeça de token anterior"),
     ("A head that puts most of its attention on the token just before each token. Its score: the mean attention "
      "to that token. Course-gpt2's clearest is layer 2, head 3.",
      "Uma cabeça que põe a maior parte da atenção no token logo antes de cada token. A pontuação dela: a atenção "
      "média a esse token. A mais nítida do course-gpt2 é a camada 2, cabeça 3."),
     "app_pages/heads.py", {"heads_score": "previous"}),
    ("induction_head", ("induction head", "cabeça de indução"),
     ("A head that, at a token seen before, attends to the token that followed its earlier occurrence, so the "
      "model can copy it. It needs a previous-token head in an earlier layer: a one-layer model has none. Its "
      "score: the mean attention to that token over the second copy of a repeated sequence.",
      "Uma cabeça que, num token já visto, presta atenção ao token que veio depois da ocorrência anterior dele, e "
      "assim o modelo pode copiá-lo. Ela precisa de uma cabeça de token anterior numa camada antes: um modelo de "
      "uma camada não tem nenhuma. A pontuação dela: a atenção média a esse token na segunda cópia de uma "
      "sequência repetida."),
     "app_pages/heads.py", {"heads_score": "induction"}),
    ("icl_drop", ("in-context learning drop (loss on the second copy)",
                  "queda do aprendizado em contexto (perda na segunda cópia)"),
     ("A random run of tokens written twice: how much lower the loss is on the second copy than on the first, in "
      "bits per token. No weight changes; the model learns from the text in front of it.",
      "Uma sequência aleatória de tokens escrita duas vezes: quanto a perda é menor na segunda cópia do que na "
      "primeira, em bits por token. Nenhum peso muda; o modelo aprende com o texto que tem à frente."),
     "app_pages/heads.py", {"heads_length": "40"}),
    ("knockout", ("knock-out (ablation): zero or mean", "desligar uma cabeça (ablação): por zeros ou pela média"),
     ("Replacing a head's output by zeros (zero ablation) or by its mean over the text's positions (mean "
      "ablation), then measuring how much the loss grows: what that head was doing for the model.",
      "Trocar a saída de uma cabeça por zeros (ablação por zeros) ou pela média dela nas posições do texto "
      "(ablação pela média) e medir quanto a perda cresce: o que essa cabeça fazia pelo modelo."),
     "app_pages/heads.py", {"heads_knock": "2.3"}),
    ("activation_patching", ("activation patching", "patching de ativações"),
     ("Run the model on a corrupted prompt, but copy one piece of a run on the clean prompt into it (one layer's "
      "residual stream at one position, or one head's output), and see how much of the clean answer comes back: "
      "0 is the corrupted run's, 1 the clean run's. It shows where the information lives.",
      "Rodar o modelo num prompt corrompido, mas copiar para ele um pedaço de uma rodada no prompt limpo (o fluxo "
      "residual de uma camada numa posição, ou a saída de uma cabeça) e ver quanto da resposta limpa volta: 0 é a "
      "da rodada corrompida, 1 a da limpa. Mostra onde a informação mora."),
     "app_pages/heads.py", {"heads_pair": "default"}),
    ("logit_difference", ("logit difference", "diferença de logits"),
     ("The clean answer's logit minus the corrupted answer's, at the last position: how strongly the model prefers "
      "one answer to the other. Activation patching measures how much of it comes back.",
      "O logit da resposta limpa menos o da resposta corrompida, na última posição: o quanto o modelo prefere uma "
      "resposta à outra. O patching de ativações mede quanto dela volta."),
     "app_pages/heads.py", {"heads_pair": "default"}),
    ("layer_norm", ("layer norm", "normalização de camada"),
     ("Rescales a vector to mean 0 and variance 1, then applies a learned scale and shift. GPT-1 puts it after each "
      "sub-block, GPT-2 before each one and once more at the end.",
      "Reescala um vetor para média 0 e variância 1 e aplica uma escala e um deslocamento aprendidos. O GPT-1 a põe "
      "depois de cada sub-bloco, o GPT-2 antes de cada um e mais uma vez no fim."),
     "app_pages/code.py", {"code_step": "ln_1"}),
    ("mlp", ("MLP (feed-forward)", "MLP (feed-forward)"),
     ("The second half of a layer: widen each position four times, apply GELU, narrow it back. It acts on each "
      "token alone.", "A segunda metade de uma camada: alarga cada posição quatro vezes, aplica a GELU, estreita de "
      "volta. Age em cada token sozinho."),
     "app_pages/code.py", {"code_step": "mlp.gelu"}),
    ("logit", ("logit", "logit"),
     ("The raw score the model gives each vocabulary token for the next position, before the softmax.",
      "A pontuação bruta que o modelo dá a cada token do vocabulário para a próxima posição, antes do softmax."),
     "app_pages/logit_lens.py", {"lens_text": "O pacote foi instalado com"}),
    ("softmax", ("softmax", "softmax"),
     ("Turns scores into probabilities: exponentiate each, divide by their sum. Minus infinity becomes exactly 0.",
      "Transforma scores em probabilidades: exponencial de cada um, dividida pela soma. Menos infinito vira "
      "exatamente 0."),
     "app_pages/sampling.py", {"samp_temperature": "1.0", "samp_top_k": "0", "samp_top_p": "1.0"}),
    ("temperature", ("temperature", "temperatura"),
     ("Divides the logits before the softmax: below 1 the likeliest tokens win more often, above 1 the "
      "distribution flattens; 0 means always the likeliest (greedy).",
      "Divide os logits antes do softmax: abaixo de 1 os tokens mais prováveis ganham mais vezes, acima de 1 a "
      "distribuição achata; 0 quer dizer sempre o mais provável (guloso)."),
     "app_pages/sampling.py", {"samp_temperature": "1.6", "samp_top_k": "0", "samp_top_p": "1.0"}),
    ("top_k_p", ("top-k and top-p", "top-k e top-p"),
     ("Filters before the draw: top-k keeps the k likeliest tokens, top-p the fewest whose probabilities reach p.",
      "Filtros antes do sorteio: o top-k mantém os k tokens mais prováveis, o top-p os poucos cujas probabilidades "
      "somam p."),
     "app_pages/sampling.py", {"samp_top_k": "5", "samp_top_p": "0.5"}),
    ("seed", ("seed", "semente"),
     ("The number that fixes the random draws: the same seed and settings give the same text.",
      "O número que fixa os sorteios: mesma semente e mesmas configurações dão o mesmo texto."),
     "app_pages/sampling.py", {"samp_seed": "7"}),
    ("perplexity", ("perplexity", "perplexidade"),
     ("The exponential of the average surprise (negative log-probability) per token: how many tokens, in effect, "
      "the model hesitates between. Lower is better; it depends on the tokenizer.",
      "A exponencial da surpresa média (menos o log da probabilidade) por token: entre quantos tokens, na prática, "
      "o modelo hesita. Menor é melhor; depende do tokenizador."),
     "app_pages/perplexity.py", {"ppl_models": "course-gpt2-1x64,course-gpt2-2x128,course-gpt2"}),
    ("bpb", ("bits per byte", "bits por byte"),
     ("The same surprise counted per byte of text instead of per token, so models with different tokenizers can be "
      "compared fairly.", "A mesma surpresa contada por byte de texto em vez de por token, para comparar com "
      "justiça modelos de tokenizadores diferentes."),
     "app_pages/perplexity.py", {"ppl_models": "course-gpt2-1x64,course-gpt2"}),
    ("context", ("context window", "janela de contexto"),
     ("How many tokens a model can see at once: 512 for GPT-1, 1,024 for GPT-2, 256 for the course models.",
      "Quantos tokens um modelo enxerga de uma vez: 512 no GPT-1, 1.024 no GPT-2, 256 nos modelos do curso."),
     "app_pages/fossils.py", {"fos_models": "openai-gpt,gpt2,course-gpt2"}),
    ("flops", ("FLOPs per token", "FLOPs por token"),
     ("The arithmetic one token costs in a forward pass, about twice the parameters plus the attention over the "
      "context.", "A aritmética que um token custa num forward, cerca do dobro dos parâmetros mais a atenção sobre "
      "o contexto."),
     "app_pages/fossils.py", {"fos_models": "distilgpt2,gpt2"}),
    ("encoder", ("encoder", "encoder"),
     ("A model whose tokens see both sides (no causal mask), trained to fill in masked words: RoBERTa.",
      "Um modelo cujos tokens enxergam os dois lados (sem máscara causal), treinado para preencher palavras "
      "mascaradas: o RoBERTa."),
     "app_pages/fill.py", {"fill_text": "Debian is a free <mask> system."}),
    ("decoder", ("decoder", "decoder"),
     ("A model whose tokens see only the past (causal mask), trained to predict the next token: GPT-1, GPT-2.",
      "Um modelo cujos tokens só enxergam o passado (máscara causal), treinado para prever o próximo token: GPT-1, "
      "GPT-2."),
     "app_pages/sampling.py", {"samp_prompt": "The Debian package"}),
    ("masking", ("masked language modelling", "modelagem de linguagem mascarada"),
     ("RoBERTa's training task: hide 15 % of the tokens (80 % as <mask>, 10 % random, 10 % unchanged) and predict "
      "them from both sides; drawn anew every time (dynamic masking).",
      "A tarefa de treino do RoBERTa: esconder 15 % dos tokens (80 % como <mask>, 10 % aleatórios, 10 % iguais) e "
      "prevê-los pelos dois lados; sorteados de novo a cada vez (máscara dinâmica)."),
     "app_pages/fill.py", {"fill_dynamic": write_boolean(True)}),
    ("kv_cache", ("KV cache (key-value cache)", "cache KV (de chaves e valores)"),
     ("The keys and values of the tokens already read, kept so each new token costs one step instead of re-reading "
      "the text: 36,864 bytes per token for GPT-2 small in fp16.",
      "As chaves e os valores dos tokens já lidos, guardados para que cada token novo custe um passo em vez de "
      "reler o texto: 36.864 bytes por token no GPT-2 small em fp16."),
     "app_pages/fossils.py", {"fos_models": "gpt2,gpt2-xl,course-gpt2"}),
    ("batch", ("batch", "lote (batch)"),
     ("Several sequences computed together in one pass: more tokens per second for the server, a little more "
      "waiting for each request.", "Várias sequências calculadas juntas numa passada: mais tokens por segundo para "
      "o servidor, um pouco mais de espera para cada requisição."),
     "app_pages/serving.py", {"serve_requests": "16"}),
    ("ttft", ("TTFT (time to first token)", "TTFT (tempo até o primeiro token)"),
     ("How long a request waits before its first token arrives; what a reader feels as latency.",
      "Quanto uma requisição espera até chegar o primeiro token; é o que o leitor sente como demora."),
     "app_pages/serving.py", {"serve_requests": "8"}),
    ("auroc", ("AUROC", "AUROC"),
     ("The chance that a detector scores a random machine text above a random human one: 0.5 is a coin, 1 is "
      "perfect.", "A chance de um detector dar a um texto de máquina qualquer um escore maior que a um texto humano "
      "qualquer: 0,5 é uma moeda, 1 é perfeito."),
     "app_pages/detector.py", {"det_method": "fast_detectgpt"}),
    ("error_rate", ("per-token error rate e", "taxa de erro por token e"),
     ("The share of positions where the model's likeliest next token is not the text's; (1 − e)ⁿ is the chance of "
      "n right in a row if errors were independent.",
      "A fração das posições em que o próximo token mais provável do modelo não é o do texto; (1 − e)ⁿ seria a "
      "chance de n acertos seguidos se os erros fossem independentes."),
     "app_pages/ceiling.py", {"ceil_n": "32"}),
]


def folded(s: str) -> str:
    """Lower case without accents: "Atenção" and "atencao" match."""
    return "".join(c for c in unicodedata.normalize("NFD", s.casefold()) if unicodedata.category(c) != "Mn")


def matching(query: str, pt: bool) -> list[tuple]:
    """The terms whose name (in either language) or definition (in the reader's) holds `query`: those matched by
    name first, each group in the glossary's order."""
    q = folded(query.strip())
    by_name = [term for term in TERMS if any(q in folded(s) for s in term[1])]
    return by_name + [term for term in TERMS if term not in by_name and q in folded(term[2][pt])]
