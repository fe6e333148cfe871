"""Every error a page shows, in the reader's language: one table from (error class, reason code) to words.

Lab errors (lab.errors.LabError) and a link's unusable values (lab.link_codec.LinkValueError) carry a
reason code and the details their message needs. `text(e)` looks the pair up, walking the error's
classes (ModelNotOffered is a ModelUnavailable; LabError's "too_long" covers every module's), then their "*"
entries (a class's "*" covers its other reasons), and writes
the message from the details (plus "message": the error's own English line); where the table's English
is None the English is the error's own line, the one the CLI prints. An error the
table does not know, or one raised without the details its reason promises, reads as its own line.
Classes are named, not imported, so this module costs no torch import.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ui.i18n import num, size, t

Words = Callable[[dict], tuple[str | None, str]]  # details -> (English or None: the error's own line, Portuguese)


def _unavailable(d: dict, why: str) -> tuple[None, str]:
    damaged = f" (uma cópia danificada foi removida: {'; '.join(d['damaged'])})" if d.get("damaged") else ""
    return None, (f"{d['name']} ({d['hub_id']}, {size(d['size'])}) não está no cache local da Hugging Face{damaged} "
                  f"e {why}; baixe-o antes, numa máquina com internet: {d['command']}")


def _not_offered(d: dict) -> tuple[str, str]:
    name, offered = d["model"], ", ".join(d["offered"])
    return (f"This hosted demo does not offer {name}; it offers {offered}. Run the app on your own machine "
            "(`streamlit run app.py`) for every model.",
            f"Esta demonstração hospedada não oferece {name}; ela oferece {offered}. Rode o app na sua máquina "
            "(`streamlit run app.py`) para ter todos os modelos.")


def _too_long(d: dict) -> tuple[str, str]:
    new_en, new_pt = (f" and {num(d['new'])} new ones", f" e {num(d['new'])} novos") if d["new"] else ("", "")
    return (f"The text is {num(d['tokens'])} tokens{new_en}; {d['model'] or 'the model'} takes at most "
            f"{num(d['context'])}.", f"O texto tem {num(d['tokens'])} tokens{new_pt}; {d['model'] or 'o modelo'} "
            f"aceita no máximo {num(d['context'])}.")


MODEL: dict[tuple[str, str], Words] = {
    ("ModelUnavailable", "offline"): lambda d: _unavailable(d, "HF_HUB_OFFLINE está ativado"),
    ("ModelUnavailable", "hub_silent"): lambda d: _unavailable(d, "o hub da Hugging Face não responde"),
    ("ModelUnavailable", "no_space"): lambda d: (None, (
        f"falta espaço em disco para baixar {d['name']}: são precisos mais {size(d['need'])} e {d['cache']} "
        f"tem {size(d['free'])} livres; nada pela metade foi guardado. Libere espaço (ou aponte HF_HOME "
        f"para um disco maior) e rode: {d['command']}")),
    ("ModelTooLarge", "too_large"): lambda d: (None, (
        f"{d['name']} precisa de cerca de {size(d['need'])} de memória, mais do que este servidor reserva "
        f"para modelos ({size(d['budget'])}, definido por {d['env']}); modelos que cabem: "
        f"{', '.join(d['fit']) or 'nenhum'}")),
    ("ModelUnavailable", "missing_shipped"): lambda d: (
        None, f"{d['name']} vem com o repositório ({d['path']}), mas não está nesta cópia"),
    ("ModelUnavailable", "download_failed"): lambda d: (None, f"não foi possível baixar {d['name']}: {d['error']}"),
    ("ModelUnavailable", "load_failed"): lambda d: (None, f"não foi possível carregar {d['name']}: {d['error']}"),
    ("ModelUnavailable", "unreadable_weights"): lambda d: (
        None, f"não foi possível ler os pesos de {d['name']}: {d['error']}"),
    ("ModelUnavailable", "no_weights"): lambda d: (None, f"{d['hub_id']} não tem arquivo de pesos no hub"),
    ("ModelUnavailable", "unknown"): lambda d: (None, (
        f"modelo desconhecido {d['name']!r}: não é um nome do catálogo ({', '.join(d['known'])}) nem uma pasta")),
    ("ModelUnavailable", "not_a_model"): lambda d: (
        None, f"{d['name']} não é uma pasta de modelo da Hugging Face (falta o config.json)"),
    ("ModelNotOffered", "not_offered"): _not_offered,
}

PAGES: dict[tuple[str, str], Words] = {
    ("EmptyText", "empty"): lambda d: ("Type a prompt to continue.", "Digite um prompt para continuar.")
    if d.get("what") == "prompt" else ("The text is empty.", "O texto está vazio."),
    ("PerplexityError", "empty"): lambda d: ("The text is empty.", "O texto está vazio."),
    ("PerplexityError", "one_token"): lambda d: ("The text is a single token: there is nothing to predict.",
                                                 "O texto é um único token: não há nada a prever."),
    ("TrophyError", "empty_word"): lambda d: (None, "a palavra a comparar está vazia"),
    ("TrophyError", "empty_text"): lambda d: (None, "as duas frases precisam de algum texto"),
    ("TrophyError", "missing"): lambda d: (None, (
        f"a palavra {d['word']!r} não está "
        f"{ {'sentence a': 'na frase A', 'sentence b': 'na frase B'}.get(d['which'], 'na frase')} ({d['short']!r})")),
    ("TrophyError", "differ"): lambda d: (None, (
        f"as frases divergem antes de {d['word']!r} (token {d['token']}: {d['a']!r} vs {d['b']!r}); "
        "elas precisam ter os mesmos tokens até a palavra, inclusive")),
    ("LensError", "*"): lambda d: (f"This target cannot be followed ({d['message']}).",
                                   f"Não dá para seguir este alvo ({d['message']})."),
    ("LensError", "target_tokens"): lambda d: (
        f"That is {d['n']} tokens for this model, not one; the lens follows a single token. Its pieces:",
        f"Isso dá {d['n']} tokens para este modelo, não um; a lente segue um único token. Os pedaços:"),
    ("EmbeddingError", "empty"): lambda d: ("Type a word in each box.", "Digite uma palavra em cada caixa."),
    ("EmbeddingError", "multi_token"): lambda d: (
        f"A word is {len(d['pieces'])} tokens in this model's vocabulary. Arithmetic on single tokens needs one row "
        "per word: switch on \"mean of pieces\" to use the average of its pieces (an approximation), "
        "or pick another word.",
        f"Uma palavra tem {len(d['pieces'])} tokens no vocabulário deste modelo. A aritmética de tokens precisa de "
        "uma linha por palavra: ligue \"média dos pedaços\" para usar a média dos pedaços (uma aproximação) "
        "ou escolha outra palavra."),
    ("DetectError", "empty"): lambda d: ("The text is empty.", "O texto está vazio."),
    ("DetectError", "one_token"): lambda d: ("The text is a single token: there is nothing to predict.",
                                             "O texto é um único token: não há nada a prever."),
    ("DetectError", "encoder"): lambda d: (
        None, f"{d['model']} é um encoder (modelo de máscara): o detector precisa das probabilidades do próximo "
              "token de um decoder"),
    ("DetectError", "tokenizer"): lambda d: (
        f"Binoculars needs two models with one tokenizer: {d['model']} and {d['observer']} split text differently. "
        "Pick another observer, or none.",
        f"O Binoculars precisa de dois modelos com o mesmo tokenizador: {d['model']} e {d['observer']} cortam o "
        "texto de jeitos diferentes. Escolha outro observador, ou nenhum."),
    ("CeilingError", "empty"): lambda d: ("The text is empty.", "O texto está vazio."),
    ("CeilingError", "one_token"): lambda d: ("The text is a single token: there is nothing to predict.",
                                              "O texto é um único token: não há nada a prever."),
    ("CeilingError", "encoder"): lambda d: (
        None, f"{d['model']} é um encoder (modelo de máscara): ele não prevê o próximo token"),
    ("TraceError", "encoder"): lambda d: (
        f"{d['model']} is an encoder, and this page runs GPT-2's code, a decoder's.",
        f"{d['model']} é um encoder, e esta página roda o código do GPT-2, o de um decoder."),
    ("TraceError", "not_gpt2"): lambda d: (
        f"{d['model']} is a {d['model_type']} model: this page runs GPT-2's architecture only.",
        f"{d['model']} é um modelo {d['model_type']}: esta página roda só a arquitetura do GPT-2."),
    ("TraceError", "activation"): lambda d: (
        f"{d['model']} uses {d['activation']}, not GPT-2's GELU.", f"{d['model']} usa {d['activation']}, não a "
        "GELU do GPT-2."),
    ("TraceError", "untied"): lambda d: (
        f"{d['model']} has an output layer of its own; GPT-2 reuses wte.",
        f"{d['model']} tem uma camada de saída própria; o GPT-2 reaproveita a wte."),
    ("TraceError", "layer"): lambda d: (f"The layer must be from 0 to {d['layers'] - 1}.",
                                        f"A camada deve ir de 0 a {d['layers'] - 1}."),
    ("TraceError", "head"): lambda d: (f"The head must be from 0 to {d['heads'] - 1}.",
                                       f"A cabeça deve ir de 0 a {d['heads'] - 1}."),
    ("FillError", "empty"): lambda d: ("The text is empty.", "O texto está vazio."),
    ("FillError", "no_mask"): lambda d: ("The text has no mask: put <mask> (or [MASK]) where a word should be guessed.",
                                         "O texto não tem máscara: ponha <mask> (ou [MASK]) onde uma palavra deve ser "
                                         "adivinhada."),
    ("FillError", "in_word"): lambda d: (
        f"The mask at character {num(d['char'])} is inside a word: the model fills whole tokens, so put a space or "
        "punctuation around it.", f"A máscara no caractere {num(d['char'])} está dentro de uma palavra: o modelo "
        "preenche tokens inteiros, então ponha um espaço ou uma pontuação em volta dela."),
    ("FillError", "decoder"): lambda d: (
        f"{d['model']} is a decoder: it continues a text, it cannot fill a blank in the middle.",
        f"{d['model']} é um decoder: ele continua um texto, não preenche uma lacuna no meio."),
    ("FillError", "encoder"): lambda d: (f"{d['model']} is an encoder: compare the encoder with a decoder.",
                                         f"{d['model']} é um encoder: compare o encoder com um decoder."),
    ("FillError", "tokenizer"): lambda d: (
        f"{d['encoder']} and {d['decoder']} split this text differently (from token {d['position']} on): pick a "
        "decoder that shares the encoder's tokenizer (the course pair, or roberta-base with a GPT-2).",
        f"{d['encoder']} e {d['decoder']} cortam este texto de jeitos diferentes (a partir do token "
        f"{d['position']}): escolha um decoder com o mesmo tokenizador do encoder (o par do curso, ou o roberta-base "
        "com um GPT-2)."),
    ("LoadTestError", "url"): lambda d: (f"Not an http(s) URL: {d['url']!r}.", f"Não é uma URL http(s): {d['url']!r}."),
    ("LoadTestError", "remote"): lambda d: (
        f"{d['host']} is not a loopback address: the page measures servers on this machine only.",
        f"{d['host']} não é um endereço de loopback: a página só mede servidores nesta máquina."),
    ("LoadTestError", "bounds"): lambda d: (f"{d['what']} must be from {d['low']} to {d['high']}.",
                                            f"{d['what']} deve ir de {d['low']} a {d['high']}."),
    ("LabError", "too_long"): _too_long,  # lab.text.check_fits, whichever module raised it
}

LINKS: dict[tuple[str, str], Words] = {
    ("LinkValueError", "out_of_range"): lambda d: (f"out of range {num(d['lo'])}–{num(d['hi'])}",
                                                   f"fora do intervalo {num(d['lo'])}–{num(d['hi'])}"),
    ("LinkValueError", "near_zero"): lambda d: (f"neither 0 nor at least {d['least']:g}",
                                                f"nem 0 nem pelo menos {num(d['least'], 6)}"),
    ("LinkValueError", "too_long"): lambda d: (f"longer than {num(d['max'])} characters",
                                               f"mais de {num(d['max'])} caracteres"),
    ("LinkValueError", "unknown_choice"): lambda d: ("not one of the options", "não é uma das opções"),
    ("LinkValueError", "not_integer"): lambda d: ("not a whole number", "não é um número inteiro"),
    ("LinkValueError", "not_number"): lambda d: ("not a number", "não é um número"),
    ("LinkValueError", "not_finite"): lambda d: ("not a finite number", "não é um número finito"),
    ("LinkValueError", "not_boolean"): lambda d: ("not true or false", "não é true nem false"),
    ("LinkValueError", "*"): lambda d: ("not usable here", "não serve aqui"),
}

# A lesson's problems (lab/lessons.py's English, one pattern each) in Portuguese, details included (issue 48): the
# field names (page, inputs.attn_layer) and the file's own values stay as the file writes them.
LESSON_PROBLEMS_PT = [
    (r"must have exactly two texts, en and pt", "precisa ter exatamente dois textos, en e pt"),
    (r"must be a non-empty text", "precisa ser um texto não vazio"),
    (r"is longer than (\d+) characters", r"tem mais de \1 caracteres"),
    (r"must be a mapping with page, inputs, note", "precisa ser um mapeamento com page, inputs, note"),
    (r"is not a field of a step \((.*)\)", r"não é um campo de um passo (\1)"),
    (r"(.*) is not a page; the pages: (.*)", r"\1 não é uma página; as páginas: \2"),
    (r"must be a mapping of link parameters to values", "precisa ser um mapeamento de parâmetros do link para valores"),
    (r"is not an input of the page (\S+) \(its inputs: none\)",
     r"não é uma entrada da página \1 (ela não tem entradas)"),
    (r"is not an input of the page (\S+) \(its inputs: (.*)\)",
     r"não é uma entrada da página \1 (as entradas: \2)"),
    (r"(.*) is not a view of the page (\S+) \(its views: (.*)\)",
     r"\1 não é uma vista da página \2 (as vistas: \3)"),
    (r"must be true or false", "precisa ser true ou false"),
    (r"must be text \(in quotes\)", "precisa ser um texto (entre aspas)"),
    (r"is (\d+) characters; a link carries (\d+)", r"tem \1 caracteres; um link leva \2"),
    (r"(.*) is not one of: (.*)", r"\1 não é uma destas opções: \2"),
    (r"must be a whole number", "precisa ser um número inteiro"),
    (r"must be a number", "precisa ser um número"),
    (r"(.*) is outside (.*)\.\.(.*)", r"\1 está fora do intervalo \2 a \3"),
    (r"(.*) is too close to 0 \(at least (.*)\)", r"\1 está perto demais de 0 (no mínimo \2)"),
    (r"must be a mapping with title, steps \(and model\)", "precisa ser um mapeamento com title, steps (e model)"),
    (r"is not a field of a lesson \((.*)\)", r"não é um campo de uma lição (\1)"),
    (r"(.*) is not a model the app knows", r"\1 não é um modelo que o app conhece"),
    (r"must be a list of (\d+) to (\d+) steps", r"precisa ser uma lista de \1 a \2 passos"),
    (r"is larger than ([\d,]+) bytes", lambda m: f"tem mais de {m.group(1).replace(',', '.')} bytes"),
    (r"not valid YAML.*", "não é YAML válido (confira a indentação, os dois-pontos e as aspas nessa linha)"),
    (r"no such file", "arquivo inexistente"),
    (r"cannot be read as UTF-8 text.*", "não pode ser lido como texto UTF-8"),
    (r"is not a \.yaml or \.yml file", "não é um arquivo .yaml ou .yml"),
    (r"(.*) is not a shipped lesson", r"\1 não é uma lição do app"),
    (r"no such lesson", "lição inexistente"),
]
LESSON_PLACES_PT = [(r"\bstep (\d+)", r"passo \1"), (r"\bline (\d+), column (\d+)", r"linha \1, coluna \2"),
                    (r"^file$", "arquivo"), (r"^lesson$", "lição")]


def _lesson_pt(where: str, problem: str) -> str:
    """A lesson's problem in Portuguese, the detail too: where (passo 2, inputs.attn_layer; linha 3, coluna 5) and
    what (LESSON_PROBLEMS_PT). A problem no pattern knows is named without its English words."""
    for pattern, words in LESSON_PLACES_PT:
        where = re.sub(pattern, words, where)
    for pattern, words in LESSON_PROBLEMS_PT:
        if re.fullmatch(pattern, problem):
            return f"{where}: {re.sub(pattern, words, problem)}"
    return f"{where}: um valor que o app não aceita"


def _line(d: dict) -> tuple[str, str]:
    return (f"Line {d['line']}: ", f"Linha {d['line']}: ") if d.get("line") is not None else ("", "")


def _guess_row(d: dict, en: str, pt: str) -> tuple[str, str]:
    """A guessing game's answer problem, with the table's line when it came from one."""
    where_en, where_pt = _line(d)
    return (where_en + en, where_pt + pt) if where_en else (en[0].upper() + en[1:], pt[0].upper() + pt[1:])


# An answer's own problems and an answers table's, the same in the guessing game (GuessError) and a class's question
# (QuestionError): one wording each, whichever error carries it.
ANSWER: dict[str, Words] = {
    "empty_answer": lambda d: _guess_row(d, "the answer is empty.", "a resposta está vazia."),
    "long_answer": lambda d: _guess_row(
        d, f"the answer is {num(d['chars'])} characters; an answer is at most {num(d['most'])}.",
        f"a resposta tem {num(d['chars'])} caracteres; uma resposta tem no máximo {num(d['most'])}."),
    "control": lambda d: _guess_row(
        d, f"the answer holds a control character ({d['char']}).",
        f"a resposta contém um caractere de controle ({d['char']})."),
    "count": lambda d: _guess_row(d, f"the count must be from 1 to {num(d['most'])}.",
                                  f"a contagem precisa ir de 1 a {num(d['most'])}."),
    "too_many": lambda d: (f"The answers table has more than {num(d['most'])} rows.",
                           f"A tabela de respostas tem mais de {num(d['most'])} linhas."),
}

# The guessing game (lab/guess.py): a passage, a position, an answer, an answers table.
GUESSING: dict[tuple[str, str], Words] = {
    ("GuessError", "empty"): lambda d: ("The passage is empty.", "O trecho está vazio."),
    ("GuessError", "one_token"): lambda d: ("The passage is a single token: there is nothing to guess.",
                                            "O trecho é um único token: não há nada a adivinhar."),
    ("GuessError", "encoder"): lambda d: (
        f"{d['model']} is an encoder (a masked model): the guessing game needs a model that predicts the next "
        "token.", f"{d['model']} é um encoder (modelo de máscara): o jogo de adivinhar precisa de um modelo que "
                  "preveja o próximo token."),
    ("GuessError", "position"): lambda d: _guess_row(
        d, f"position {num(d['position'])} is not in the passage; positions go from 1 to {num(d['last'])}.",
        f"a posição {num(d['position'])} não está no trecho; as posições vão de 1 a {num(d['last'])}."),
    ("GuessError", "not_csv"): lambda d: (
        "The answers are not a CSV table with the columns position, answer and count.",
        "As respostas não são uma tabela CSV com as colunas position, answer e count."),
    ("GuessError", "row"): lambda d: _guess_row(d, "the row has no answer.", "a linha não tem resposta.")
    if d["field"] == "answer" else _guess_row(d, f"the {d['field']} must be a whole number (at most 18 digits).",
                                              f"o campo {d['field']} precisa ser um número inteiro (de até 18 "
                                              "algarismos)."),
    **{("GuessError", reason): words for reason, words in ANSWER.items()},
}

# Answerable questions (lab/questions.py; a lesson's question fields, lab/lessons.py's "bad_question"): an answer, an
# answers table, the model's side; a question's field in Portuguese, the file's own words and values kept.
QUESTIONS: dict[tuple[str, str], Words] = {
    ("QuestionError", "not_answerable"): lambda d: (
        "This question is asked aloud: it takes no answers in the app.",
        "Esta pergunta é feita em voz alta: ela não recebe respostas no app."),
    **{("QuestionError", reason): words for reason, words in ANSWER.items()},
    ("QuestionError", "not_an_option"): lambda d: _guess_row(
        d, f"answer with an option's number, from 1 to {num(d['most'])}.",
        f"responda com o número de uma opção, de 1 a {num(d['most'])}."),
    ("QuestionError", "not_a_number"): lambda d: _guess_row(d, "the answer is not a number (write it like 12 or 3,5).",
                                                            "a resposta não é um número (escreva como 12 ou 3,5)."),
    ("QuestionError", "ambiguous"): lambda d: _guess_row(
        d, f"{d['answer']} could be a whole number with a thousands separator or a decimal: write it without the "
           "separator.", f"{d['answer']} pode ser um número inteiro com separador de milhar ou um decimal: escreva-o "
                         "sem o separador."),
    ("QuestionError", "out_of_range"): lambda d: _guess_row(
        d, f"the answer must be from {num(d['least'])} to {num(d['most'])}.",
        f"a resposta precisa ir de {num(d['least'])} a {num(d['most'])}."),
    ("QuestionError", "no_head"): lambda d: (
        f"The model has no head {d['head']}: its layers go from 0 to {num(d['layers'] - 1)} and its heads from 0 to "
        f"{num(d['heads'] - 1)}.", f"O modelo não tem a cabeça {d['head']}: as camadas vão de 0 a "
                                   f"{num(d['layers'] - 1)} e as cabeças de 0 a {num(d['heads'] - 1)}."),
    ("QuestionError", "one_token"): lambda d: ("The text is a single token: it has no previous token to attend to.",
                                               "O texto é um único token: não há token anterior para olhar."),
    ("QuestionError", "too_long"): lambda d: (
        f"The text is {num(d['tokens'])} tokens; {d['model']} takes at most {num(d['context'])}.",
        f"O texto tem {num(d['tokens'])} tokens; o {d['model']} aceita no máximo {num(d['context'])}."),
    ("QuestionError", "tie"): lambda d: (f"Options {d['options']} tie: no one option is right.",
                                         f"As opções {d['options']} empatam: nenhuma opção sozinha está certa."),
    ("QuestionError", "not_csv"): lambda d: ("The answers are not a CSV table with the columns answer and count.",
                                             "As respostas não são uma tabela CSV com as colunas answer e count."),
    ("QuestionError", "row"): lambda d: _guess_row(d, "the row has no answer.", "a linha não tem resposta.")
    if d["field"] == "answer" else _guess_row(d, "the count must be a whole number.",
                                              "a contagem precisa ser um número inteiro."),
    ("LessonError", "bad_question"): lambda d: (None, f"passo {d['step']}, {d['field']}: " + {
        "not_a_field": f"não é um campo de uma pergunta ({d.get('fields')})",
        "no_kind": f"é de uma pergunta que a turma responde, e ela precisa de um kind ({d.get('kinds')})",
        "not_one_of": f"{d.get('value')!r} não é uma destas opções: {d.get('known')}",
        "not_for_kind": f"não é um campo de uma pergunta {d.get('kind')} (os campos dela: {d.get('fields')})",
        "missing": "está faltando",
        "empty_text": "precisa ser um texto não vazio",
        "long_text": f"tem {num(d.get('chars') or 0)} caracteres; o texto de uma pergunta tem no máximo "
                     f"{num(d.get('most') or 0)}",
        "both": "não combina com right: a opção certa é dada (right) ou calculada (right_from), não as duas",
        "not_whole": "precisa ser um número inteiro (1 é a primeira opção)",
        "right_range": f"{d.get('value')} está fora do intervalo 1 a {d.get('most')}",
        "text_without_rule": "só é lido com right_from (o texto em que a opção certa é calculada)",
        "options": f"precisa ter de {d.get('least')} a {d.get('most')} opções",
        "option": "precisa ter en e pt" + (", e um value (o right_from o lê)" if d.get("rule") else " e nada mais"),
        "repeat": f"repete o value da opção {d.get('other')}",
        "head": 'precisa ser uma cabeça escrita camada.cabeça entre aspas, por exemplo "2.3" (sem aspas, 1.10 seria '
                "lido como o número 1,1)",
        "not_for_of": "só é lido com of: tokens (a perplexidade é a do modelo da lição)",
    }.get(d["code"], "um valor que o app não aceita")),
}

# Lessons and rooms (ui/lesson.py, ui/rooms.py): a room's code is checked against its alphabet before it is shown.
TEACHING: dict[tuple[str, str], Words] = {
    ("LessonError", "bad_lesson"): lambda d: (None, _lesson_pt(d["where"], d["problem"])),
    ("RoomError", "not_a_code"): lambda d: ("That is not a room code (six letters and digits).",
                                            "Isto não é o código de uma sala (seis letras e algarismos)."),
    ("RoomError", "no_room"): lambda d: (f"There is no room {d['code']}: it never existed or it has expired.",
                                         f"Não há sala {d['code']}: ela nunca existiu ou já expirou."),
    ("RoomError", "not_teacher"): lambda d: ("Only the teacher who started this room can move it.",
                                             "Só o professor que abriu esta sala pode movê-la."),
    ("RoomError", "taken_back"): lambda d: (f"Room {d['code']} was taken back with the teacher key in another tab "
                                            "or on another device: this screen no longer moves it.",
                                            f"A sala {d['code']} foi retomada com a chave do professor em outra aba "
                                            "ou outro aparelho: esta tela não a move mais."),
    ("RoomError", "wrong_key"): lambda d: (f"That is not the teacher key of room {d['code']}: check it against the "
                                           "key file (letters and digits; case, spaces and dashes do not matter).",
                                           f"Esta não é a chave do professor da sala {d['code']}: confira-a no "
                                           "arquivo da chave (letras e algarismos; maiúsculas, espaços e hífens "
                                           "não importam)."),
    ("RoomError", "too_many_keys"): lambda d: (f"Too many wrong keys were typed for room {d['code']}: it no longer "
                                               "takes any key back. The screen that holds it keeps it; or start a "
                                               "new room.",
                                               f"Foram digitadas chaves erradas demais para a sala {d['code']}: ela "
                                               "não aceita mais nenhuma chave. A tela que a tem continua com ela; "
                                               "ou abra uma nova sala."),
    ("RoomError", "unreachable"): lambda d: ("The room server cannot be reached right now.",
                                             "O servidor das salas não responde agora."),
    ("RoomError", "closed"): lambda d: ("The teacher has closed this question: your answer was not counted.",
                                        "O professor já fechou esta pergunta: sua resposta não foi contada."),
    ("RoomError", "no_more_rounds"): lambda d: ("This question has had its second vote: there is no third.",
                                                "Esta pergunta já teve a segunda votação: não há uma terceira."),
    **GUESSING,
    **QUESTIONS,
}
# The shared decoding engine (lab/serving/shared.py): a full queue, one reader's generation failing alone.
ENGINE: dict[tuple[str, str], Words] = {
    ("EngineBusy", "busy"): lambda d: (
        f"The server is busy: {num(d['waiting'])} generations are waiting already. Try again in a moment.",
        f"O servidor está ocupado: {num(d['waiting'])} gerações já estão esperando. Tente de novo daqui a pouco."),
    ("GenerationFailed", "failed"): lambda d: (
        f"This generation failed on the server ({d['error']}); the other readers' go on. Try again.",
        f"Esta geração falhou no servidor ({d['error']}); as dos outros leitores continuam. Tente de novo."),
}

# The heads page (lab/heads.py): an empty or one-token text, a head the model does not have.
HEADS: dict[tuple[str, str], Words] = {
    ("HeadsError", "empty_text"): lambda d: ("The text is empty: type some text.",
                                             "O texto está vazio: digite algum texto."),
    ("HeadsError", "one_token"): lambda d: ("The text is one token: a loss needs at least two.",
                                            "O texto tem um só token: uma perda precisa de pelo menos dois."),
    ("HeadsError", "bad_head"): lambda d: (
        f"There is no head {d['layer']}.{d['head']}: the model has layers 0-{d['n_layer'] - 1} and heads "
        f"0-{d['n_head'] - 1}.", f"Não existe a cabeça {d['layer']}.{d['head']}: o modelo tem as camadas "
        f"0-{d['n_layer'] - 1} e as cabeças 0-{d['n_head'] - 1}."),
    ("HeadsError", "bad_head_text"): lambda d: (
        f"A head is written layer.head (like 2.3), not {d['part']!r}.",
        f"Uma cabeça se escreve camada.cabeça (como 2.3), não {d['part']!r}."),
    ("HeadsError", "not_gpt2"): lambda d: (
        f"These experiments run GPT-2's and GPT-1's own forwards; {d['model_type']} is neither.",
        f"Estes experimentos rodam o forward do próprio GPT-2 e o do GPT-1; {d['model_type']} não é nenhum dos dois."),
    ("HeadsError", "encoder"): lambda d: (
        f"{d['model']} is an encoder: knocking heads out here needs a decoder.",
        f"{d['model']} é um encoder: desligar cabeças aqui precisa de um decoder."),
    # Activation patching (lab/patching.py): the pair of prompts and its answers.
    ("HeadsError", "lengths_differ"): lambda d: (
        f"The two prompts must be the same length in tokens: the clean one has {num(d['clean'])}, the corrupted one "
        f"{num(d['corrupt'])}.", f"Os dois prompts precisam ter o mesmo número de tokens: o limpo tem "
        f"{num(d['clean'])}, o corrompido {num(d['corrupt'])}."),
    ("HeadsError", "same_prompts"): lambda d: (
        "The two prompts are the same: change a word of the corrupted one.",
        "Os dois prompts são iguais: mude uma palavra do corrompido."),
    ("HeadsError", "same_answer"): lambda d: (
        "The clean and corrupted answers are the same token: give two different answers.",
        "As respostas limpa e corrompida são o mesmo token: dê duas respostas diferentes."),
    ("HeadsError", "no_gap"): lambda d: (
        "Both prompts give the two answers the same logit difference: there is nothing to bring back.",
        "Os dois prompts dão a mesma diferença de logits às duas respostas: não há nada a recuperar."),
    ("HeadsError", "pair_too_long"): lambda d: (
        f"Patching takes prompts of at most {num(d['most'])} tokens; these have {num(d['tokens'])}.",
        f"O patching aceita prompts de no máximo {num(d['most'])} tokens; estes têm {num(d['tokens'])}."),
    ("HeadsError", "one_prompt"): lambda d: (
        "Give both prompts, the clean and the corrupted one, or neither.",
        "Dê os dois prompts, o limpo e o corrompido, ou nenhum."),
}

TABLE: dict[tuple[str, str], Words] = MODEL | PAGES | LINKS | TEACHING | ENGINE | HEADS


def text(e: Exception) -> str:
    """e in the reader's language (see the module docstring)."""
    reason = getattr(e, "reason", "")
    keys = [(c.__name__, r) for r in (reason, "*") for c in type(e).__mro__]
    words = next((TABLE[k] for k in keys if k in TABLE), None)
    if words is None:
        return str(e)
    try:
        en, pt = words({**getattr(e, "details", {}), "message": str(e)})
    except (KeyError, TypeError):  # raised without the details its reason promises: its own line, at least
        return str(e)
    return t(str(e) if en is None else en, pt)
