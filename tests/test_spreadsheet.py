"""A table for a spreadsheet in the reader's language (lab/spreadsheet.py, issue 56) against outside oracles: Python's
csv module and pandas.read_csv with a Brazilian spreadsheet's settings (sep=";", decimal=",", utf-8-sig) read what
write() writes; the floats' rule checked against hand-written expectations; the formula guard on every text cell."""

from __future__ import annotations

import csv
import decimal
import io

import pandas as pd
import pytest

from lab import spreadsheet

COLUMNS = ["question", "round", "answer", "option", "count", "right", "model_probability"]
ROWS = [["Qual é a próxima?", 1, "não", "três", 3, True, 2.98e-33],
        ["Qual é a próxima?", 2, "ação", None, 12345, False, 0.833333]]


@pytest.mark.parametrize(("value", "en", "pt"), [
    (0.833333, "0.8333", "0,8333"), (2e-05, "0.00002", "0,00002"), (0.072314, "0.07231", "0,07231"),
    (2.98e-33, "0." + "0" * 32 + "298", "0," + "0" * 32 + "298"), (24.0, "24", "24"), (12345.67, "12346", "12346"),
    (0.99996, "1", "1"), (0.00012345, "0.0001235", "0,0001235"), (-0.5, "-0.5", "-0,5"), (0.0, "0", "0"),
    (float("nan"), "", ""), (12345, "12345", "12345"), (True, "true", "verdadeiro"), (False, "false", "falso"),
    (decimal.Decimal("3.5"), "3.5", "3,5"), (decimal.Decimal("0.00001"), "0.00001", "0,00001"), (None, "", ""),
])
def test_a_cell_by_its_type(value, en, pt):
    assert (spreadsheet.cell(value, "en"), spreadsheet.cell(value, "pt")) == (en, pt)


def test_the_portuguese_table_reads_in_pandas_as_a_brazilian_spreadsheet_does():
    text = spreadsheet.write(COLUMNS, ROWS, "pt")
    assert text.startswith("\ufeffpergunta;rodada;resposta;opção;contagem;certa;probabilidade_do_modelo\n")
    frame = pd.read_csv(io.BytesIO(text.encode("utf-8")), sep=";", decimal=",", encoding="utf-8-sig")
    assert list(frame.columns) == ["pergunta", "rodada", "resposta", "opção", "contagem", "certa",
                                   "probabilidade_do_modelo"]
    assert list(frame["resposta"]) == ["não", "ação"] and frame["opção"].iloc[0] == "três"
    assert list(frame["contagem"]) == [3, 12345] and list(frame["rodada"]) == [1, 2]
    assert frame["probabilidade_do_modelo"].dtype.kind == "f"
    assert frame["probabilidade_do_modelo"].iloc[0] == pytest.approx(2.98e-33, rel=1e-12)
    assert frame["probabilidade_do_modelo"].iloc[1] == pytest.approx(0.8333, abs=1e-12)
    assert "e-" not in text.lower() and "e+" not in text.lower()


def test_the_english_table_reads_in_pandas_and_python_csv():
    text = spreadsheet.write(COLUMNS, ROWS, "en")
    frame = pd.read_csv(io.StringIO(text), encoding="utf-8-sig")
    assert list(frame.columns) == COLUMNS
    assert frame["model_probability"].iloc[1] == pytest.approx(0.8333, abs=1e-12)
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    assert rows[1] == ["Qual é a próxima?", "1", "não", "três", "3", "true", "0." + "0" * 32 + "298"]
    assert "\r" not in text and text.endswith("\n")


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_read_gives_back_english_keys_and_raw_cells(lang):
    rows = spreadsheet.read(spreadsheet.write(COLUMNS + ["extra"], [r + ["x"] for r in ROWS], lang))
    assert [list(r) for r in rows] == [COLUMNS + ["extra"]] * 2
    assert rows[1]["answer"] == "ação" and rows[1]["option"] == ""
    assert spreadsheet.number(rows[1]["model_probability"]) == pytest.approx(0.8333, abs=1e-12)
    assert rows[0]["right"] == ("true" if lang == "en" else "verdadeiro")


def test_read_takes_a_plain_csv_any_case_and_accents_optional():
    assert spreadsheet.read("answer,count\n1,4\n3,1\n") == [{"answer": "1", "count": "4"}, {"answer": "3",
                                                                                            "count": "1"}]
    assert spreadsheet.read("\ufeff Posicao ;RESPOSTA;Contagem\n2;ã;1\n") == [{"position": "2", "answer": "ã",
                                                                               "count": "1"}]
    keys, rows = spreadsheet.table("answer,count\n\"a\nb\",2\n1\n")
    assert keys == ["answer", "count"] and list(rows) == [(3, {"answer": "a\nb", "count": "2"}), (4, {"answer": "1"})]


@pytest.mark.parametrize("lang", ["en", "pt"])
@pytest.mark.parametrize("first", ["=", "+", "-", "@", "\t", "\r"])
def test_the_formula_guard_on_every_text_cell(lang, first):
    risky = first + "HYPERLINK(\"http://x\")"
    rows = list(csv.reader(io.StringIO(spreadsheet.write(["question", risky], [[risky, risky]], lang)[1:],
                                       newline=""), delimiter=spreadsheet.SEPARATORS[lang]))
    assert rows == [[spreadsheet.HEADERS["question"][lang == "pt"], "'" + risky], ["'" + risky] * 2]
    assert spreadsheet.unguard(rows[1][0]) == risky and spreadsheet.unguard("'tis") == "'tis"


def test_number_reads_either_mark_and_refuses_both():
    assert spreadsheet.number("0,8333") == spreadsheet.number(" 0.8333 ") == 0.8333
    with pytest.raises(ValueError):
        spreadsheet.number("1.000,5")
    with pytest.raises(ValueError):
        spreadsheet.write(["a"], [], "fr")


RISKY = ["@SUM(A1:A9)", "+1+1", "-2+3", "=1+1", "-cmd|' /C calc'!A0"]  # what a student may type


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_both_teacher_exports_guard_an_answer_starting_with_at_plus_or_minus(lang):
    """Issue 58, item 5: the answers export (lab.questions.csv_text) and the guessing game's (lab.questions.game_csv),
    read by Python's csv module as a spreadsheet would split them: an answer starting with @, +, - or = is written
    after a ' (OWASP's CSV injection rule), and each command's reader gives the answer back as typed."""
    from lab import guess, questions

    sep = spreadsheet.SEPARATORS[lang]
    next_token = {"en": "Next?", "pt": "Próxima?", "kind": "next-token", "text": "The cat sat on the"}
    counts = {answer: k for k, answer in enumerate(RISKY, 1)}
    text = questions.csv_text(next_token, {1: counts}, {"kind": "next-token", "answers": {}}, lang)
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), delimiter=sep))
    assert sorted(r[2] for r in rows[1:]) == sorted("'" + a for a in RISKY)
    assert questions.read_answers(next_token, text) == counts
    game = questions.game_csv({"rows": [{"token": " install"}]}, {1: counts}, lang)
    rows = list(csv.reader(io.StringIO(game.removeprefix("\ufeff"), newline=""), delimiter=sep))
    assert sorted(r[2] for r in rows[1:]) == sorted("'" + a for a in RISKY)
    assert sorted(guess.read_answers(game, last=1)) == sorted((1, a, n) for a, n in counts.items())
