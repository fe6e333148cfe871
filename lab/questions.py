"""Answerable questions: a lesson step's question that the class answers, with the model's side computed here (issue
52; the schema is lab/lessons.py's, the command `python -m lab lesson question`). No Streamlit here.

A question with a `kind` is answerable (lab.lessons checks its fields); a plain {en, pt} question is not.

**next-token**: each student types the word or token that comes next after the question's `text`. The model's side
is its distribution there (lab.guess.read_context: the project's one next-token loop), its top TOP tokens listed. An
answer is read as lab.guess reads one (clean_answer: trimmed, NFC; the whole answer's probability as the chain of
its tokens, as the perplexity page counts a text; a rank when it is one token), in the more likely of two readings:
with a leading space (a word after the text: "is" is read " is") and without (punctuation, or the end of a word:
"," is read ","). A text that ends in whitespace is read without only. The model's side scores the answers it is
given (`answers`), since scoring an answer of several tokens needs the model.

**choice**: a student answers with an option's number, 1..n. The right option is the file's (`right`), or lab's
(`right_from`): `cheapest_tokenizer`, the option whose encoding (lab.encodings, as the tokens page counts) cuts the
text into the fewest tokens; `previous_token_head`, the option whose head ("layer.head") puts the most attention on
the previous token on average over the text's tokens 1..T-1 (lab.attention.layer_summary's "previous", the
attention page's measure), with the lesson's model. Options that tie are refused ("tie"): a lesson must not mark one
of two equal options right. Neither field: no option is right (an opinion, a sampler's output).

**number**: a student answers with a number, "3.5" or the Portuguese "3,5" (one decimal mark, no thousands
separator: "1.000" could be one or one thousand and is refused as "ambiguous"), 0..MAX_NUMBER. The true value is
lab's: the text's tokens under `encoding` (of: tokens), or the lesson's model's perplexity of the text (of:
perplexity, lab.perplexity.evaluate; a pseudo-perplexity for an encoder).

**the guessing game**: a next-token question with a `passage` walks it (game(), game_play()): each of the passage's
words after the text, WALK at most, is guessed in turn (issue 56: whole words, lab.guess's word units); lab.guess
reads the text and passage as one passage and computes both sides (the model's probability of each true word, the
chain of its tokens, and its candidate words; the class's by its add-1/2 rule; the summary in bits per word).
game_csv() writes the answers as `python -m lab guess --answers` reads them, positions 1..n as on the screen.

judge() turns a round's counts {answer: count} into one row per distinct answer (answers cleaned first, so "3,5" and
"3.5" are one row); csv_text() writes the teacher's export. No student ids exist anywhere here.
"""

from __future__ import annotations

import csv
import dataclasses
import decimal
import math
import re

from lab import guess, spreadsheet
from lab.errors import LabError
from lab.lessons import LANGS

TOP = guess.TOP  # the model's tokens listed for a next-token question
MAX_NUMBER = 1e9  # the largest number answer: far above a token count or a perplexity a class estimates
MAX_COUNT, MAX_ROWS = guess.MAX_COUNT, guess.MAX_ROWS  # students behind one answer; rows of an answers table
COLUMNS = ("answer", "count")  # an answers table's header
EXPORT = {"next-token": "model_probability", "choice": "right", "number": "true_value"}  # csv_text's last column
_NUMBER = re.compile(r"(?P<sign>[+-]?)(?P<whole>[0-9]{0,12})(?:[.,](?P<frac>[0-9]{1,12}))?")
_GROUPED = re.compile(r"[+-]?[0-9]{1,3}[.,][0-9]{3}")  # 1.000 or 1,000: one thousand, or one?
_OPTION = re.compile(r"[0-9]{1,2}")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a cell starting so is a formula to a spreadsheet


class QuestionError(LabError):
    """A question that cannot be answered or judged, or an answer that cannot be read: `reason` (details; `line` is
    the answers table's line, None otherwise):
    "not_answerable" (): the question has no kind; "empty_answer" (line), "control" (line, char), "long_answer"
    (line, chars, most): as lab.guess.clean_answer's; "not_an_option" (line, answer, most): a choice's answer is not
    1..most; "not_a_number" (line, answer); "ambiguous" (line, answer): 1.000 or 1,000; "out_of_range" (line, answer,
    least, most); "no_head" (head, layers, heads): an option's head is not in the model; "one_token" (): the text is
    one token, it has no previous token; "too_long" (tokens, context, model, new): the text does not fit the model;
    "tie" (options: "1, 3", value): the rule finds several right options; "not_csv" (missing, found): an answers
    table without the columns answer and count; "row" (line, field, value): a row without an answer, or a count that
    is not a whole number; "count" (line, count, most): a count below 1 or over MAX_COUNT; "too_many" (rows, most):
    over MAX_ROWS rows."""


def answerable(step) -> bool:
    """Whether a lesson step's question can be answered (it has a kind)."""
    return bool(step.question) and "kind" in step.question


def _kind(question: dict | None) -> str:
    if not question or "kind" not in question:
        raise QuestionError("the question has no kind: it is asked aloud, not answered in the app", "not_answerable")
    return question["kind"]


def _at(line: int | None) -> str:
    return f"line {line}: " if line is not None else ""


def clean(question: dict, raw: str, line: int | None = None) -> str:
    """A student's answer in its one form, or QuestionError: next-token, as lab.guess.clean_answer reads it; choice,
    the option's number "1".."n"; number, the number written with a point and no needless zeros ("3,5" -> "3.5",
    "07" -> "7"). `line`: the answers table's, for the error's words."""
    kind = _kind(question)
    try:
        text = guess.clean_answer(raw if isinstance(raw, str) else "", line)
    except guess.GuessError as e:
        raise QuestionError(str(e), e.reason, **(e.details | {"line": line})) from None
    if kind == "choice":
        most = len(question["options"])
        if not _OPTION.fullmatch(text) or not 1 <= int(text) <= most:
            raise QuestionError(f"{_at(line)}{text[:20]!r} is not an option: answer with a number from 1 to {most}",
                                "not_an_option", line=line, answer=text[:20], most=most)
        return str(int(text))
    return _number(text, line) if kind == "number" else text


def _number(text: str, line: int | None) -> str:
    """A number answer's one form (see clean)."""
    found = _NUMBER.fullmatch(text)
    if _GROUPED.fullmatch(text):
        raise QuestionError(f"{_at(line)}{text!r} could be a whole number with a thousands separator or a decimal: "
                            "write it without the separator", "ambiguous", line=line, answer=text)
    if found is None or not (found["whole"] or found["frac"]):
        raise QuestionError(f"{_at(line)}{text[:20]!r} is not a number", "not_a_number", line=line, answer=text[:20])
    value = float(f"{found['sign']}{found['whole'] or '0'}.{found['frac'] or '0'}")
    if not 0 <= value <= MAX_NUMBER:
        raise QuestionError(f"{_at(line)}{text[:20]} is outside 0..{MAX_NUMBER:,.0f}", "out_of_range", line=line,
                            answer=text[:20], least=0, most=MAX_NUMBER)
    return str(int(value)) if value.is_integer() else format(decimal.Decimal(repr(value)), "f")  # never 1e-05


# ---------------------------------------------------------------- the model's side


def needs_model(question: dict) -> bool:
    """Whether the question's model side needs the model (a next-token distribution, a perplexity, a head's
    attention), not a tokenizer alone."""
    return _kind(question) == "next-token" or question.get("of") == "perplexity" or \
        question.get("right_from") == "previous_token_head"


def _loaded(model):
    """A lab.models.Loaded: `model` itself, or the model of that registry name or directory, loaded now."""
    if isinstance(model, str):
        from lab.models import load

        return load(model)
    return model


def model_side(question: dict, model, answers=()) -> dict:
    """The model's side of an answerable question (JSON-ready; the module docstring says what each kind computes).
    `model`: a lab.models.Loaded, or a name or directory to load (only when the kind needs one). `answers`: the
    answers a next-token side scores (clean() or raw; judge() reads their scores from here).
        next-token: {kind, model, text, top: [{id, token, p}] x TOP, answers: {answer: {read_as, tokens, p, bits,
                    rank (None unless one token)}}}
        choice:     {kind, right (1-based or None), rule (right_from, "right" or None), and what it came from:
                    tokens: {encoding: count} (cheapest_tokenizer); model, previous: {"L.H": share} (the head rule)}
        number:     {kind, of, value, and encoding (tokens) or model, tokens (perplexity)}
    Errors: QuestionError (see its reasons), lab.guess.GuessError (a next-token text an encoder or too long)."""
    kind = _kind(question)
    if kind == "next-token":
        return _next_token_side(question, _loaded(model), answers)
    if kind == "number":
        return _number_side(question, model)
    rule = question.get("right_from")
    side = {"kind": "choice", "right": question.get("right"), "rule": rule or ("right" if "right" in question
                                                                             else None)}
    if rule == "cheapest_tokenizer":
        from lab import encodings

        tokens = {o["value"]: len(encodings.encode(o["value"], question["text"])) for o in question["options"]}
        side |= {"right": _best(question, tokens, min), "tokens": tokens}
    elif rule == "previous_token_head":
        loaded = _loaded(model)
        previous = previous_token_shares(loaded, question["text"], [o["value"] for o in question["options"]])
        side |= {"right": _best(question, previous, max), "model": loaded.name, "previous": previous}
    return side


def _best(question: dict, values: dict[str, float], pick) -> int:
    """The 1-based option whose value's figure is `pick`'s (min, max); QuestionError "tie" when several are."""
    best = pick(values.values())
    right = [k for k, o in enumerate(question["options"], 1) if values[o["value"]] == best]
    if len(right) > 1:
        options = ", ".join(map(str, right))
        raise QuestionError(f"options {options} tie at {best}: no one option is right", "tie", options=options,
                            value=best)
    return right[0]


def previous_token_shares(loaded, text: str, heads: list[str]) -> dict[str, float]:
    """{"L.H": the head's attention on the previous token, averaged over the text's tokens 1..T-1} for each head,
    with `loaded` (lab.attention.layer_summary's "previous", from one forward pass). QuestionError: no_head,
    one_token, too_long."""
    from lab import attention
    from lab.text import check_fits, encode

    wanted = [tuple(map(int, head.split("."))) for head in heads]
    for (layer, head), name in zip(wanted, heads, strict=True):
        if layer >= loaded.n_layer or head >= loaded.n_head:
            raise QuestionError(f"{loaded.name} has no head {name}: its layers are 0..{loaded.n_layer - 1} and its "
                                f"heads 0..{loaded.n_head - 1}", "no_head", head=name, layers=loaded.n_layer,
                                heads=loaded.n_head)
    ids = encode(loaded.tokenizer, text)
    if len(ids) < 2:
        raise QuestionError("the text is a single token: it has no previous token to attend to", "one_token")
    check_fits(len(ids), loaded.context, QuestionError, loaded.name)
    att = attention.attention(loaded.model, ids)  # (L, H, T, T)
    return {name: attention.layer_summary(att[layer], layer)[head]["previous"]
            for (layer, head), name in zip(wanted, heads, strict=True)}


def _next_token_side(question: dict, loaded, answers) -> dict:
    """The model's top TOP after the text, and each given answer scored (module docstring)."""
    from lab.text import token_texts

    passage = guess.read_context(loaded, question["text"])
    row = passage.logp[-1]
    best = [int(i) for i in guess.top_ids(row, TOP)]
    top = [{"id": i, "token": name, "p": math.exp(float(row[i]))}
           for i, name in zip(best, token_texts(loaded.tokenizer, best), strict=True)]
    scored = {answer: _score(loaded, passage, answer) for answer in {clean(question, a) for a in answers}}
    return {"kind": "next-token", "model": loaded.name, "text": question["text"], "top": top, "answers": scored}


def _score(loaded, passage: guess.Passage, answer: str) -> dict:
    """One answer at the open position after the text: the more likely of its readings with and without a leading
    space (only without when the text ends in whitespace)."""
    readings = [dataclasses.replace(passage, texts=[*passage.texts[:-1], ""])]
    if not passage.texts[-2][-1:].isspace():
        readings.append(passage)  # its open position reads " "
    scores = [guess.score(loaded, reading, passage.last, answer) for reading in readings]
    best = max(scores, key=lambda s: s["p"])
    return {k: best[k] for k in ("read_as", "tokens", "p", "bits", "rank")}


def _number_side(question: dict, model) -> dict:
    """The true value: the text's tokens under the encoding, or the model's perplexity of it."""
    if question["of"] == "tokens":
        from lab import encodings

        return {"kind": "number", "of": "tokens", "encoding": question["encoding"],
                "value": len(encodings.encode(question["encoding"], question["text"]))}
    from lab import perplexity

    loaded = _loaded(model)
    found = perplexity.evaluate(loaded, question["text"])
    return {"kind": "number", "of": "perplexity", "model": loaded.name, "value": found["ppl"],
            "tokens": found["tokens"], "pseudo": loaded.kind == "encoder"}


# ---------------------------------------------------------------- the class's side


def judge(question: dict, side: dict, counts: dict[str, int]) -> list[dict]:
    """One row per distinct answer of a round (answers cleaned first, their counts summed), by count, most first,
    then by answer (a number's and an option's by value): {answer, count} and, next-token: read_as, p (the model's
    probability of the whole answer), rank (one token only; None otherwise); p, rank and read_as are None for an
    answer model_side was not given.
    choice: right (True, False, or None when no option is right). number: error (the answer minus the true
    value). QuestionError for an answer clean() refuses or a count below 1."""
    kind, merged = _kind(question), {}
    for raw, count in counts.items():
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
            raise QuestionError(f"the count must be from 1 to {MAX_COUNT:,}; got {count!r}", "count", line=None,
                                count=count, most=MAX_COUNT)
        answer = clean(question, raw)
        merged[answer] = merged.get(answer, 0) + count
    rows = []
    for answer, count in merged.items():
        row = {"answer": answer, "count": count}
        if kind == "next-token":
            scored = side["answers"].get(answer, {})
            row |= {k: scored.get(k) for k in ("read_as", "p", "rank")}
        elif kind == "choice":
            row["right"] = None if side["right"] is None else int(answer) == side["right"]
        else:
            row["error"] = float(answer) - side["value"]
        rows.append(row)
    numeric = kind != "next-token"  # a number's or an option's answers in the order of their values
    return sorted(rows, key=lambda r: (-r["count"], float(r["answer"]) if numeric else 0.0, r["answer"]))


def read_answers(question: dict, text: str) -> dict[str, int]:
    """An answers table (CSV whose header names answer and count; other columns ignored; no student ids) as
    {answer in clean() form: count}, equal answers summed. The table may be today's plain English CSV or csv_text's
    export in either language (lab.spreadsheet.read: a byte-order mark, ";" and Portuguese column names; a
    formula's guarding ' dropped). QuestionError naming the line (the header is line 1)."""
    counts = {}
    try:
        found, records = spreadsheet.table(text)
        missing = [c for c in COLUMNS if c not in found]
        if missing:
            raise QuestionError(f"the answers are not CSV with the columns {', '.join(COLUMNS)}: missing "
                                f"{', '.join(missing)}", "not_csv", missing=missing, found=found)
        for n, (line, record) in enumerate(records, 1):
            raw_count = (record.get("count") or "").strip()
            if n > MAX_ROWS:
                raise QuestionError(f"the answers table has more than {MAX_ROWS:,} rows", "too_many", rows=n,
                                    most=MAX_ROWS)
            if record.get("answer") is None or not re.fullmatch(r"[0-9]{1,18}", raw_count):
                field = "answer" if record.get("answer") is None else "count"
                raise QuestionError(f"line {line}: the row has no answer" if field == "answer" else
                                    f"line {line}: the count must be a whole number; got {raw_count[:20]!r}", "row",
                                    line=line, field=field, value=raw_count[:20])
            if not 1 <= int(raw_count) <= MAX_COUNT:
                raise QuestionError(f"line {line}: the count must be from 1 to {MAX_COUNT:,}; got {raw_count}",
                                    "count", line=line, count=int(raw_count), most=MAX_COUNT)
            answer = clean(question, spreadsheet.unguard(record["answer"]), line)
            counts[answer] = counts.get(answer, 0) + int(raw_count)
    except csv.Error as e:
        raise QuestionError(f"the answers are not CSV: {e}", "not_csv", missing=[], found=[]) from None
    return counts


def _cells(question: dict, kind: str, row: dict, side: dict, lang: str) -> list:
    """csv_text's cells after the round for one judged row: the answer (a number's as a number, in the export's
    decimal mark; an option's number and its words in `lang`), its count, and the kind's EXPORT cell."""
    answer = row["answer"]
    if kind == "next-token":
        return [answer, row["count"], row["p"]]
    if kind == "choice":
        return [int(answer), question["options"][int(answer) - 1][lang], row["count"], row["right"]]
    value = side["value"]
    return [decimal.Decimal(answer), row["count"], float(value) if isinstance(value, float) else value]


def csv_text(question: dict, rounds: dict[int, dict[str, int]], side: dict, lang: str = "en") -> str:
    """The teacher's export, for a spreadsheet in `lang` (lab.spreadsheet.write: a byte-order mark, the column names
    in `lang`, "," and a decimal point in English, ";" and a decimal comma in Portuguese, numbers plain, a
    probability to 4 significant digits): one row per round and distinct answer (judge's order), columns question
    (in `lang`), round, answer, option (a choice's: the option's words in `lang`, beside its number), count and the
    kind's EXPORT column: model_probability, right (true/false, verdadeiro/falso, or empty) or true_value. No
    student ids. A text a spreadsheet would run as a formula (=, +, -, @ first) is written after a ' (OWASP)."""
    kind = _kind(question)
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}")
    columns = ["question", "round", "answer"] + (["option"] if kind == "choice" else []) + ["count", EXPORT[kind]]
    rows = [[question[lang], number, *_cells(question, kind, row, side, lang)]
            for number in sorted(rounds) for row in judge(question, side, rounds[number])]
    return spreadsheet.write(columns, rows, lang)


# ---------------------------------------------------------------- the guessing game: a next-token question's walk

WALK = 20  # positions the guessing game walks at most (a class's attention, and the room's step numbers)


def walks(question: dict | None) -> bool:
    """Whether the question is a guessing game: a next-token question with a `passage` to walk after its text."""
    return _kind(question) == "next-token" and "passage" in question


def walk_key(k: int, j: int) -> int:
    """The room's step number under which position j (1..WALK) of lesson step k's walk keeps its answers rounds:
    k + MAX_STEPS * j, never a lesson step (those are 1..MAX_STEPS) and within the rooms' steps (lab.rooms)."""
    from lab.lessons import MAX_STEPS

    if not 1 <= j <= WALK:
        raise ValueError(f"position {j} is not 1..{WALK}")
    return k + MAX_STEPS * j


def _walked(question: dict, loaded) -> tuple[guess.Passage, list[tuple[int, int]], int]:
    """The question's text and passage read as one passage (lab.guess.read_passage), the words of the passage the
    game walks (lab.guess.word_walk: the token range of each word starting at or after the end of the text, WALK at
    most) and the first token after the text."""
    from lab.text import encode

    passage = guess.read_passage(loaded, question["text"] + question["passage"])
    start = max(1, len(encode(loaded.tokenizer, question["text"])))
    return passage, guess.word_walk(passage, loaded.tokenizer, start)[:WALK], start


def game(question: dict, model) -> dict:
    """The model's side of the walk (JSON-ready): {model, unit: "word", positions: [1..n] (as the screen, the export
    and `python -m lab guess --unit word --context TEXT` number them), starts: each word's first token in the text
    and passage read as one, before: [the text before each word], rows: [lab.guess.walk_rows' row of each]}."""
    loaded = _loaded(model)
    passage, walk, _ = _walked(question, loaded)
    return {"model": loaded.name, "unit": "word", "positions": list(range(1, len(walk) + 1)),
            "starts": [a for a, _ in walk],
            "before": [guess.word_text(passage, loaded.tokenizer, 0, a) for a, _ in walk],
            "rows": guess.walk_rows(loaded, passage, walk, "word")}


def game_play(question: dict, model, answers: dict[int, dict[str, int]], side: dict | None = None) -> dict:
    """The class's side of the walk: answers {j (1..n, the walked word): {answer: count}} -> {unit: "word", class:
    lab.guess's class rows of the answered positions, summary: the class's and the model's bits per word over them
    and the share where the class's most common guess is the model's top 1 word (lab.guess.summary)}. `side`:
    game()'s result, when the caller has it (the model's candidate words are not computed again)."""
    loaded = _loaded(model)
    passage, walk, _ = _walked(question, loaded)
    rows = [(j, answer, count) for j, counts in sorted(answers.items()) if j <= len(walk)
            for answer, count in counts.items()]
    model_rows = side["rows"] if side is not None else guess.walk_rows(loaded, passage, walk, "word")
    class_rows = guess.class_side(loaded, passage, rows, walk, "word", model_rows)
    return {"unit": "word", "class": class_rows, "summary": guess.summary(model_rows, class_rows)}


GAME_COLUMNS = ("position", "true_word", "answer", "count")  # the game's export; true_word marks a word walk


def game_csv(side: dict, answers: dict[int, dict[str, int]], lang: str = "en") -> str:
    """The walk's answers as `python -m lab guess --answers` reads them, written by lab.spreadsheet for a spreadsheet
    in `lang`: position (1..n, as on the screen), the true word (a table with it is a word walk's: the command walks
    words), answer, count, most common first. No student ids. An answer a spreadsheet would run as a formula is
    written after a ' (lab.spreadsheet; the command reads it back without)."""
    from lab import spreadsheet

    rows = [[j, side["rows"][j - 1]["token"].strip(), answer, count] for j, counts in sorted(answers.items())
            for answer, count in sorted(counts.items(), key=lambda a: (-a[1], a[0]))]
    return spreadsheet.write(list(GAME_COLUMNS), rows, lang)


def game_command(question: dict, model_name: str, answers_file: str = "answers.csv") -> str:
    """The shell command that prints the page's summary from the export: the text as --context (read, not walked),
    the passage as --text, every argument shell-quoted."""
    import shlex

    return " ".join(["python -m lab guess --json --model", shlex.quote(model_name), "--context",
                     shlex.quote(question["text"]), "--text", shlex.quote(question["passage"]), "--answers",
                     shlex.quote(answers_file)])
