"""The guessing game: a class guesses a passage's next token, position by position, beside the model (issue 52).

Shannon's 1951 game (people guessing the next letter of a text, their guesses read as a probability) played with
a language model's tokens: chapters 06 (cross-entropy, bits per token) and 07 (the next-token distribution) in one
activity. For `python -m lab guess` and, later, the rooms' next-token questions. No Streamlit here.

**The model's side.** The passage is tokenised as every page does (lab.text.encode, the model's tokenizer) and
read by the project's one next-token loop (lab.perplexity.next_token) under inference mode. Position t >= 1 is
the t-th token, predicted from tokens 0..t-1 (position 0 has nothing before it and is never guessed). Per
position: the true token (lab.text.readable_texts), the model's top 5, its probability of the true token and the
true token's rank (1 + the number of tokens the model puts strictly above it).

**A student's answer** at position t is read as the text the model would see there: surrounding whitespace
trimmed, Unicode NFC (a Mac's decomposed "ã" reads as a PC's), and a leading space added when the true token
starts with one. Students type words ("pacote"); GPT-2's word-initial tokens carry their space (" pacote"), and
a student cannot type a space the form trims. The model's probability of an answer is that of the whole text
as a continuation of tokens 0..t-1: the product of its tokens' conditional probabilities, as the perplexity page
counts a text (a chain through next_token); its rank is given when it is one token.

**The class's side.** An answer votes for its first token (the token the model would have to produce next to
write it): "pacote" and "pão" both vote for " p" when the course tokenizer cuts them " p|ac|ote" and " p|ão". So
the class and the model spread probability over the same things, tokens, and their cross-entropies compare. The
class's probability of token x at a position with N answers whose first tokens are k distinct tokens, x of them
counted c(x) times, is add-1/2 (Krichevsky-Trofimov) over those k tokens plus one escape bucket:
    p(x) = (c(x) + 1/2) / (N + (k + 1)/2)                    for a token some student named,
    p(x) = (1/2) / (N + (k + 1)/2) / (V - k)                 for any other of the vocabulary's V tokens,
the escape's mass spread evenly over the tokens nobody named (PPM's escape to a uniform order -1). Why: a token
the whole class named costs almost nothing (20 of 20: 0.035 bits), not a share of a 50,000-token vocabulary; a
token nobody named costs a finite amount, log2 of the escape plus log2(V - k) (about 18 bits for 20 students
and the course model's 8,192 tokens), because a class is never certain; and the rule uses the answers of that
position only, so one position's answers never move another's numbers. The model is not smoothed: its softmax
gives every token a probability already.

**The summary**, over the positions that have answers: the class's cross-entropy and the model's, in bits per
token (the mean of -log2 p of the true tokens); and the share of those positions where the class's most common
first token is the model's top 1 (a tie of m tokens counts 1/m when the model's top 1 is among them).
"""

from __future__ import annotations

import csv
import io
import math
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from lab.errors import LabError
from lab.models import require_decoder
from lab.text import check_fits, encode, readable_texts, token_texts

TOP = 5  # the model's tokens listed per position
ALPHA = 0.5  # Krichevsky-Trofimov: add 1/2 to each named token and to the escape bucket
MAX_ANSWER = 100  # characters in one answer, after trimming
MAX_COUNT = 1_000_000  # students behind one row: far above any class, far below a float's trouble
MAX_ROWS = 10_000  # rows of an answers table (a class of 60 on a passage of 160 tokens)
COLUMNS = ("position", "answer", "count")
LN2 = math.log(2)
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")  # embeddings, overrides and isolates: text that lies in print
_WHOLE = re.compile(r"[+-]?[0-9]{1,18}")  # ASCII digits; 18 at most (Python refuses to read 4,301 and more)


class GuessError(LabError):
    """Bad input for the guessing game: `reason` (details):
    "empty" (): the passage is empty or blank; "one_token" (): the passage is one token, nothing to guess;
    "encoder" (model): the model is an encoder, it predicts no next token; "too_long" (tokens, context, model,
    new): the passage does not fit the model's context (lab.text.check_fits);
    "position" (position, last, line): a position below 1 or past the passage's last token (line: the answers
    table's line, None for an answer not from a table);
    "not_csv" (missing, found): the answers are not CSV whose header names position, answer and count;
    "row" (line, field, value): a row without a field, or a position or count that is not a whole number;
    "count" (line, count, most): a count below 1 or over MAX_COUNT; "too_many" (rows, most): a table over MAX_ROWS rows;
    "empty_answer" (line): an answer blank once trimmed; "long_answer" (line, chars, most): an answer over
    MAX_ANSWER characters once trimmed; "control" (line, char: "U+0007"): a control character (Unicode Cc) or a
    bidi embedding, override or isolate in an answer."""


def _at(line: int | None) -> str:
    return f"line {line}: " if line is not None else ""


@dataclass(frozen=True)
class Passage:
    """A passage read by a model: its ids, each token's readable text and own text (token_texts), and logp[t - 1],
    the model's log-probabilities (V,) of the token at position t given tokens 0..t-1."""

    model: str
    ids: list[int]
    readable: list[str]
    texts: list[str]
    logp: np.ndarray  # (n - 1, V) float32

    @property
    def last(self) -> int:
        return len(self.ids) - 1

    @property
    def vocab(self) -> int:
        return int(self.logp.shape[1])


def _log_probs(model, ids: list[int], context: int, start: int = 1) -> np.ndarray:
    """(len(ids) - start, V): the log-probabilities of the tokens at positions start.. (each given the tokens before
    it), through lab.perplexity.next_token; only those rows are kept."""
    import torch

    from lab.perplexity import next_token

    out = None
    with torch.inference_mode():
        for pos, logp in next_token(model, torch.tensor(ids), context):  # (n, V)
            keep = pos >= start
            if out is None:
                out = np.empty((len(ids) - start, logp.shape[-1]), dtype=np.float32)
            if keep.any():
                out[pos[keep].numpy() - start] = logp[keep].numpy()
    return out


def read_passage(loaded, text: str) -> Passage:
    """The model's reading of a passage (GuessError on bad input; see the class's reasons)."""
    require_decoder(loaded, GuessError, "the guessing game")
    if not text or not text.strip():
        raise GuessError("the passage is empty", "empty")
    ids = encode(loaded.tokenizer, text)
    if len(ids) < 2:
        raise GuessError("the passage is a single token: there is nothing to guess", "one_token")
    check_fits(len(ids), loaded.context, GuessError, loaded.name)
    return Passage(loaded.name, ids, readable_texts(loaded.tokenizer, ids), token_texts(loaded.tokenizer, ids),
                   _log_probs(loaded.model, ids, loaded.context))


OPEN = -1  # the id of read_context's open position: no token is there yet


def read_context(loaded, text: str, spaced: bool = True) -> Passage:
    """A text to continue (a next-token question, lab/questions.py), read as a Passage one position longer than
    the text: its last position, the one after the text, holds no token yet (id OPEN), and its row of logp is the
    model's next-token distribution after the text. score() reads an answer there with a leading space when
    `spaced`, as it is otherwise (the own text of the open position is " " or ""). GuessError as read_passage's,
    except that a one-token text is a context too."""
    require_decoder(loaded, GuessError, "a next-token question")
    if not text or not text.strip():
        raise GuessError("the passage is empty", "empty")
    ids = encode(loaded.tokenizer, text)
    check_fits(len(ids) + 1, loaded.context, GuessError, loaded.name)
    logp = _log_probs(loaded.model, ids + [0], loaded.context)  # the placeholder 0 is after every row's context
    return Passage(loaded.name, ids + [OPEN], readable_texts(loaded.tokenizer, ids) + [""],
                   token_texts(loaded.tokenizer, ids) + [" " if spaced else ""], logp)


def rank_of(logp: np.ndarray, token: int) -> int:
    """1 + the number of tokens with a strictly higher log-probability than `token`."""
    return int((logp > logp[token]).sum()) + 1


def top_ids(logp: np.ndarray, top: int) -> np.ndarray:
    """The ids of the `top` most likely tokens, most likely first (a tie: the smaller id first)."""
    top = min(top, len(logp))
    kth = np.partition(logp, len(logp) - top)[len(logp) - top]  # the top-th largest value
    found = np.flatnonzero(logp >= kth)  # no full sort of the vocabulary: the top and any ties with its last
    return found[np.lexsort((found, -logp[found]))][:top]


def model_positions(passage: Passage, tokenizer, top: int = TOP) -> list[dict]:
    """Per position t >= 1: {position, id, token (readable), p, bits, rank, top: [{id, token, p}] x top}."""
    out = []
    for t in range(1, passage.last + 1):
        row, true = passage.logp[t - 1], passage.ids[t]
        best = top_ids(row, top)
        names = token_texts(tokenizer, [int(i) for i in best])
        out.append({"position": t, "id": true, "token": passage.readable[t], "p": math.exp(float(row[true])),
                    "bits": -float(row[true]) / LN2, "rank": rank_of(row, true),
                    "top": [{"id": int(i), "token": n, "p": math.exp(float(row[i]))}
                            for i, n in zip(best, names, strict=True)]})
    return out


def check_position(passage: Passage, position: int, line: int | None = None) -> int:
    """GuessError ("position") unless 1 <= position <= the passage's last position."""
    if not 1 <= position <= passage.last:
        raise GuessError(f"{_at(line)}position {position} is not in the passage: positions go from 1 to "
                         f"{passage.last}", "position", position=position, last=passage.last, line=line)
    return position


def clean_answer(answer: str, line: int | None = None) -> str:
    """An answer as the game reads it (whitespace trimmed, NFC), or GuessError: empty, control, too long."""
    text = unicodedata.normalize("NFC", answer).strip()
    if not text:
        raise GuessError(f"{_at(line)}the answer is empty", "empty_answer", line=line)
    bad = next((c for c in text if unicodedata.category(c) == "Cc" or _BIDI.match(c)), None)
    if bad is not None:
        char = f"U+{ord(bad):04X}"
        raise GuessError(f"{_at(line)}the answer holds a control character ({char})", "control", line=line,
                         char=char)
    if len(text) > MAX_ANSWER:
        raise GuessError(f"{_at(line)}the answer is {len(text):,} characters; an answer is at most {MAX_ANSWER}",
                         "long_answer", line=line, chars=len(text), most=MAX_ANSWER)
    return text


def read_as(answer: str, truth: str) -> str:
    """The answer (already clean) as the model would see it at a position whose true token's own text is `truth`:
    with a leading space when the true token has one."""
    return " " + answer if truth.startswith(" ") else answer


def score(loaded, passage: Passage, position: int, answer: str) -> dict:
    """The model's reading of one answer at `position`: {answer, read_as, ids, tokens, first, right, p, bits,
    rank (None unless one token)}; `first` is the id of its first token, `right` whether that is the true token.
    An answer that takes the text past the model's context is read in next_token's windows, as perplexity is."""
    check_position(passage, position)
    answer = clean_answer(answer)
    text = read_as(answer, passage.texts[position])
    ids = encode(loaded.tokenizer, text)
    row = passage.logp[position - 1]
    if len(ids) == 1:
        logp, rank = float(row[ids[0]]), rank_of(row, ids[0])
    else:  # the chain: each token given the passage's first `position` tokens and the answer's tokens before it
        chain = _log_probs(loaded.model, passage.ids[:position] + ids, loaded.context, start=position)
        logp, rank = float(sum(chain[k, i] for k, i in enumerate(ids))), None
    return {"answer": answer, "read_as": text, "ids": ids, "tokens": token_texts(loaded.tokenizer, ids),
            "first": ids[0], "right": ids[0] == passage.ids[position], "p": math.exp(logp), "bits": -logp / LN2,
            "rank": rank}


def _whole(value: str | None, field: str, line: int) -> int:
    if value is None or not _WHOLE.fullmatch(value.strip()):
        raise GuessError(f"line {line}: the {field} must be a whole number (at most 18 digits); got {value!r}",
                         "row", line=line, field=field, value=value)
    return int(value.strip())


def _header(reader) -> dict[str, str]:
    """{column: the header's own spelling} for position, answer, count (case and spaces ignored)."""
    found = [f for f in (reader.fieldnames or []) if f is not None]
    own = {f.strip().lower(): f for f in found}
    missing = [c for c in COLUMNS if c not in own]
    if missing:
        raise GuessError(f"the answers are not CSV with the columns {', '.join(COLUMNS)}: missing "
                         f"{', '.join(missing)} (the header: {', '.join(found) or 'none'})", "not_csv",
                         missing=missing, found=found)
    return {c: own[c] for c in COLUMNS}


def read_answers(text: str, last: int | None = None) -> list[tuple[int, str, int]]:
    """The rows (position, answer, count) of an answers table: CSV with a header naming position, answer and count
    (other columns ignored; no student ids). Answers come back clean (clean_answer); with `last`, positions must be
    1..last. GuessError on any bad row, naming its line (the header is line 1)."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows = []
    try:
        names = _header(reader)
        for record in reader:
            line = reader.line_num
            if len(rows) >= MAX_ROWS:
                raise GuessError(f"the answers table has more than {MAX_ROWS:,} rows", "too_many",
                                 rows=len(rows) + 1, most=MAX_ROWS)
            position, count = _whole(record[names["position"]], "position", line), \
                _whole(record[names["count"]], "count", line)
            if record[names["answer"]] is None:
                raise GuessError(f"line {line}: the row has no answer", "row", line=line, field="answer", value=None)
            if last is not None and not 1 <= position <= last:
                raise GuessError(f"line {line}: position {position} is not in the passage: positions go from 1 to "
                                 f"{last}", "position", position=position, last=last, line=line)
            if not 1 <= count <= MAX_COUNT:
                raise GuessError(f"line {line}: the count must be from 1 to {MAX_COUNT:,}; got {count}", "count",
                                 line=line, count=count, most=MAX_COUNT)
            rows.append((position, clean_answer(record[names["answer"]], line), count))
    except csv.Error as e:
        raise GuessError(f"the answers are not CSV: {e}", "not_csv", missing=[], found=[]) from None
    return rows


# ---------------------------------------------------------------- the class's side: pure counting, then the model


def class_probability(votes: dict[int, int], token: int, vocab: int, alpha: float = ALPHA) -> float:
    """The class's probability of `token` from its votes {first token id: count} at one position (the module
    docstring's rule: add-alpha over the named tokens and one escape bucket spread over the vocab's others)."""
    n, k = sum(votes.values()), len(votes)
    share = 1 / (n + alpha * (k + 1))
    if votes.get(token, 0) > 0:
        return (votes[token] + alpha) * share
    return alpha * share / (vocab - k)


def tally(votes, truth: dict[int, int], vocab: int) -> dict[int, dict]:
    """Pure counting. votes: (position, first token id, count) triples; truth: {position: the true token's id}.
    Returns {position: {answers, votes: {id: count}, right, p, bits, most_common: [ids tied at the most votes,
    ascending]}} for each position with votes. A position's numbers depend on its own votes only."""
    by: dict[int, dict[int, int]] = {}
    for position, token, count in votes:
        slot = by.setdefault(position, {})
        slot[token] = slot.get(token, 0) + count
    out = {}
    for position, counts in sorted(by.items()):
        p, most = class_probability(counts, truth[position], vocab), max(counts.values())
        out[position] = {"answers": sum(counts.values()), "votes": counts, "right": counts.get(truth[position], 0),
                         "p": p, "bits": -math.log2(p),
                         "most_common": sorted(t for t, c in counts.items() if c == most)}
    return out


def agreement(most_common: list[int], top1: int) -> float:
    """1 when the class's most common first token is the model's top 1; a tie of m tokens counts 1/m if it is
    among them (the chance that a coin between them picks it)."""
    return 1 / len(most_common) if top1 in most_common else 0.0


def class_side(loaded, passage: Passage, rows) -> list[dict]:
    """Per position with answers, in order: {position, token, answers, right, p, bits, most_common: [{id, token,
    count}], agrees, guesses: [{answer, count, read_as, first: {id, token}, right, p, bits, rank}]}, guesses by
    count, most first. rows: (position, answer, count), as read_answers gives them."""
    counts: dict[tuple[int, str], int] = {}
    for position, answer, count in rows:
        check_position(passage, position)
        key = (position, clean_answer(answer))
        counts[key] = counts.get(key, 0) + count
    scored = {key: score(loaded, passage, *key) for key in counts}
    truth = {position: passage.ids[position] for position, _ in counts}
    totals = tally([(key[0], scored[key]["first"], n) for key, n in counts.items()], truth, passage.vocab)
    firsts = {s["first"]: s["tokens"][0] for s in scored.values()}
    out = []
    for position, c in totals.items():
        guesses = sorted(((a, n) for (p, a), n in counts.items() if p == position), key=lambda g: (-g[1], g[0]))
        top1 = int(top_ids(passage.logp[position - 1], 1)[0])
        out.append({"position": position, "token": passage.readable[position], "answers": c["answers"],
                    "right": c["right"], "p": c["p"], "bits": c["bits"],
                    "most_common": [{"id": t, "token": firsts[t], "count": c["votes"][t]}
                                    for t in c["most_common"]],
                    "agrees": agreement(c["most_common"], top1),
                    "guesses": [_guess(scored[(position, a)], n) for a, n in guesses]})
    return out


def _guess(s: dict, count: int) -> dict:
    return {"answer": s["answer"], "count": count, "read_as": s["read_as"],
            "first": {"id": s["first"], "token": s["tokens"][0]}, "right": s["right"], "p": s["p"],
            "bits": s["bits"], "rank": s["rank"]}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summary(model_rows: list[dict], class_rows: list[dict]) -> dict:
    """Over the positions with answers: {positions, answers, class_bits, model_bits (bits per token), agreement
    (share of positions whose most common first token is the model's top 1)}; None for each mean when no position
    has answers. model_bits_passage: the model's bits per token over every position of the passage."""
    bits = {r["position"]: r["bits"] for r in model_rows}
    return {"positions": len(class_rows), "answers": sum(c["answers"] for c in class_rows),
            "class_bits": _mean([c["bits"] for c in class_rows]),
            "model_bits": _mean([bits[c["position"]] for c in class_rows]),
            "agreement": _mean([c["agrees"] for c in class_rows]),
            "model_bits_passage": _mean(list(bits.values()))}


def play(loaded, passage: Passage, rows=None, top: int = TOP) -> dict:
    """The whole game as `python -m lab guess --json` prints it (lab/cli/guess.py's docstring has the shape) for a
    passage (read_passage): the model's side, and with `rows` (position, answer, count) the class's side and the
    summary."""
    model_rows = model_positions(passage, loaded.tokenizer, top)
    doc = {"model": passage.model, "vocab": passage.vocab, "tokens": passage.readable, "positions": model_rows}
    if rows is not None:
        class_rows = class_side(loaded, passage, rows)
        doc |= {"class": class_rows, "summary": summary(model_rows, class_rows),
                "smoothing": {"alpha": ALPHA, "rule": "add-1/2 over the first tokens the class named plus one "
                              "escape bucket spread evenly over the rest of the vocabulary"}}
    return doc
