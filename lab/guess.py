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

**Word units** (issue 56; the lesson's game walks words, `python -m lab guess --unit word`). People guess whole
words while the model writes tokens, and a class guessing " a" then "pt" measures something else than one guessing
"apt". So the game can walk word starts instead: a **word** is a maximal run of letters and digits, with an
apostrophe or hyphen inside it ("don't", "guarda-chuva"), found in the passage's decoded text; a position is a
word, its tokens those that hold its characters (GPT-2-style tokenizers keep the space before a word in its first
token: " install"). Punctuation and whitespace between words are not walked: they are part of the text before the
next word. The true answer at a position is the whole word, the chain of its tokens; the model's probability of it is
the product of the chain's conditional probabilities (its bits the sum); the model's candidates are whole words too:
its likeliest first tokens that start a word (the top K, more when two complete to the same word), each completed
greedily, token by token, while the next likeliest token goes on with the word (no leading space, still letters or
digits), each candidate's probability its chain's product, listed most likely first. A guess is right when its
tokens are the word's tokens; the class votes for whole answers (their token chains), by the same add-1/2 rule,
except that the escape bucket is spread over every chain of tokens, each token a uniform 1/V and a halving for
each token more, (1/2 x 1/V)^m for a word of m tokens, which sums to 1 over all chains. Both sides then count bits
per word, like with like. The rank of a word is its place among the model's K candidates (None when not among them).

**The summary**, over the positions that have answers: the class's cross-entropy and the model's, in bits per
token (the mean of -log2 p of the true tokens); and the share of those positions where the class's most common
first token is the model's top 1 (a tie of m tokens counts 1/m when the model's top 1 is among them).
"""

from __future__ import annotations

import csv
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
WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")  # letters and digits, an apostrophe or hyphen inside
UNITS = ("token", "word")  # what one position of a walk is
MOST_WORD_TOKENS = 12  # a candidate word's greedy completion stops there
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


# ---------------------------------------------------------------- walks: which positions are guessed, tokens or words


def token_walk(passage: Passage, start: int = 1) -> list[tuple[int, int]]:
    """The token ranges [a, b) of a token walk: every token from `start` (at least 1) on, one token each."""
    return [(t, t + 1) for t in range(max(1, start), passage.last + 1)]


def _chunks(tokenizer, ids: list[int]) -> list[bytes]:
    from lab.text import token_bytes

    return token_bytes(tokenizer, [i for i in ids if i != OPEN])


def word_walk(passage: Passage, tokenizer, start: int = 1) -> list[tuple[int, int]]:
    """The token ranges [a, b) of the passage's words (WORD, in its decoded text) whose first token is at `start`
    (at least 1) or later: a word's tokens are those that hold its characters; two words that share a token are one."""
    import bisect

    chunks = _chunks(tokenizer, passage.ids)
    begins = [0]
    for c in chunks:
        begins.append(begins[-1] + len(c))
    data = b"".join(chunks)
    text = data.decode("utf-8", errors="replace")
    spans: list[list[int]] = []
    for m in WORD.finditer(text):
        lo, hi = len(text[:m.start()].encode()), len(text[:m.end()].encode())
        a, b = bisect.bisect_right(begins, lo) - 1, bisect.bisect_left(begins, hi)
        if spans and a < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], b)  # a token holds the end of one word and the start of the next
        else:
            spans.append([a, b])
    return [(a, b) for a, b in spans if a >= max(1, start)]


def walk_of(passage: Passage, tokenizer, unit: str = "token", start: int = 1) -> list[tuple[int, int]]:
    """The walk in `unit` ("token" or "word") from token `start` on."""
    return word_walk(passage, tokenizer, start) if unit == "word" else token_walk(passage, start)


def _starts_word(chunk: bytes, after_word: bool) -> bool:
    """Whether a first token can start a word: a leading space (or other whitespace) then a letter or digit (or a
    byte of a character not yet complete), or no space where the text before does not end in a letter or digit."""
    rest = chunk.lstrip()
    if not rest or (after_word and rest == chunk):
        return False
    head = rest.decode("utf-8", errors="ignore")[:1]
    return head.isalnum() if head else rest[0] >= 0x80


def _goes_on(word: bytes, chunk: bytes) -> bool:
    """Whether a next token goes on with the word: no leading whitespace, and the word with it still a WORD (a byte
    of a character not yet complete is given the benefit of the doubt until the character is)."""
    if not chunk or chunk[:1].isspace():
        return False
    return WORD.fullmatch((word + chunk).decode("utf-8", errors="ignore").strip()) is not None


def _after(loaded, seqs: list[list[int]]) -> np.ndarray:
    """(B, V): the model's next-token log-probabilities after each of the equal-length sequences, one batch through
    lab.perplexity.next_token (the placeholder token 0 after each is what the last row predicts)."""
    import torch

    from lab.perplexity import next_token

    x = torch.tensor([s + [0] for s in seqs])
    last = x.shape[1] - 1
    with torch.inference_mode():
        for pos, logp in next_token(loaded.model, x, loaded.context):  # logp (B, n, V)
            if bool((pos == last).any()):
                return logp[:, int((pos == last).nonzero()[0, 0])].numpy()
    raise AssertionError("next_token yielded no last row")


def _greedy(loaded, context: list[int], firsts: list[int], row: np.ndarray) -> list[tuple[list[int], float]]:
    """Each first token completed greedily to the end of its word: (chain, log-probability of the chain)."""
    chains = [[f] for f in firsts]
    logps = [float(row[f]) for f in firsts]
    words = [_chunks(loaded.tokenizer, [f])[0] for f in firsts]
    live = list(range(len(firsts)))
    while live and len(chains[live[0]]) < MOST_WORD_TOKENS:
        rows = _after(loaded, [context + chains[i] for i in live])
        going = []
        for i, r in zip(live, rows, strict=True):
            best = int(top_ids(r, 1)[0])
            chunk = _chunks(loaded.tokenizer, [best])[0]
            if _goes_on(words[i], chunk):
                chains[i].append(best)
                logps[i] += float(r[best])
                words[i] += chunk
                going.append(i)
        live = going
    return [(c, lp) for c, lp, w in zip(chains, logps, words, strict=True)
            if WORD.fullmatch(w.decode("utf-8", errors="replace").strip())]


def candidates(loaded, passage: Passage, a: int, top: int = TOP) -> list[dict]:
    """The model's `top` candidate words at a word starting at token a: its likeliest first tokens that start a word,
    K at a time until K distinct words (at most 8K first tokens looked at), each completed greedily; {id, ids,
    token (the word's text), p (the chain's product)}, most likely first."""
    row, context = passage.logp[a - 1], passage.ids[:a]
    before = b"".join(_chunks(loaded.tokenizer, context)).decode("utf-8", errors="ignore")[-1:]
    order = [int(i) for i in top_ids(row, 8 * top)]
    firsts = [i for i in order if _starts_word(_chunks(loaded.tokenizer, [i])[0], before.isalnum())]
    found: dict[str, dict] = {}
    for k in range(0, len(firsts), top):
        for chain, logp in _greedy(loaded, context, firsts[k:k + top], row):
            text = b"".join(_chunks(loaded.tokenizer, chain)).decode("utf-8", errors="replace")
            if text not in found or found[text]["p"] < math.exp(logp):
                found[text] = {"id": chain[0], "ids": chain, "token": text, "p": math.exp(logp)}
        if len(found) >= top:
            break
    return sorted(found.values(), key=lambda c: (-c["p"], c["ids"]))[:top]


def word_text(passage: Passage, tokenizer, a: int, b: int) -> str:
    """The text of tokens a..b-1 (a word: its leading space included)."""
    return b"".join(_chunks(tokenizer, passage.ids[a:b])).decode("utf-8", errors="replace")


def walk_rows(loaded, passage: Passage, walk: list[tuple[int, int]], unit: str = "token", top: int = TOP) -> list[dict]:
    """The model's side of a walk, position j = 1.. its j-th range [a, b): model_positions' row of token a (renumbered
    j) in token units; in word units {position, start: a, id, ids, token: the word, p and bits of the whole chain,
    rank: its place among the model's candidates (None when not among them), top: candidates()}."""
    if unit != "word":
        rows = {r["position"]: r for r in model_positions(passage, loaded.tokenizer, top)}
        return [rows[a] | {"position": j} for j, (a, _) in enumerate(walk, 1)]
    out = []
    for j, (a, b) in enumerate(walk, 1):
        chain = passage.ids[a:b]
        logp = sum(float(passage.logp[t - 1][passage.ids[t]]) for t in range(a, b))
        cands = candidates(loaded, passage, a, top)
        rank = next((k for k, c in enumerate(cands, 1) if c["ids"] == chain), None)
        out.append({"position": j, "start": a, "id": chain[0], "ids": chain,
                    "token": word_text(passage, loaded.tokenizer, a, b), "p": math.exp(logp), "bits": -logp / LN2,
                    "rank": rank, "top": cands})
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


def _header(keys: list[str]) -> None:
    """GuessError ("not_csv") unless the header names position, answer and count (in English or Portuguese, any
    case: lab.spreadsheet reads the names)."""
    missing = [c for c in COLUMNS if c not in keys]
    if missing:
        found = [k for k in keys if k]
        raise GuessError(f"the answers are not CSV with the columns {', '.join(COLUMNS)}: missing "
                         f"{', '.join(missing)} (the header: {', '.join(found) or 'none'})", "not_csv",
                         missing=missing, found=found)


def read_answers(text: str, last: int | None = None) -> list[tuple[int, str, int]]:
    """The rows (position, answer, count) of an answers table: CSV with a header naming position, answer and count
    (other columns ignored; no student ids), in English or Portuguese as lab.spreadsheet writes it (";" and
    "posição; resposta; contagem" too; an answer written after a formula's ' read back without it). Answers come back
    clean (clean_answer); with `last`, positions must be 1..last. GuessError on any bad row, naming its line (the
    header is line 1)."""
    from lab import spreadsheet

    rows = []
    try:
        keys, records = spreadsheet.table(text)
        _header(keys)
        for line, record in records:
            if len(rows) >= MAX_ROWS:
                raise GuessError(f"the answers table has more than {MAX_ROWS:,} rows", "too_many",
                                 rows=len(rows) + 1, most=MAX_ROWS)
            position, count = _whole(record.get("position"), "position", line), \
                _whole(record.get("count"), "count", line)
            if record.get("answer") is None:
                raise GuessError(f"line {line}: the row has no answer", "row", line=line, field="answer", value=None)
            if last is not None and not 1 <= position <= last:
                raise GuessError(f"line {line}: position {position} is not in the passage: positions go from 1 to "
                                 f"{last}", "position", position=position, last=last, line=line)
            if not 1 <= count <= MAX_COUNT:
                raise GuessError(f"line {line}: the count must be from 1 to {MAX_COUNT:,}; got {count}", "count",
                                 line=line, count=count, most=MAX_COUNT)
            rows.append((position, clean_answer(spreadsheet.unguard(record["answer"]), line), count))
    except csv.Error as e:
        raise GuessError(f"the answers are not CSV: {e}", "not_csv", missing=[], found=[]) from None
    return rows


def true_words(text: str) -> dict[int, str] | None:
    """{position: true word} from an answers table's `true_word` column (the game's export writes one: a table with
    it is a word walk's), None without one. Positions that are not whole numbers are left to read_answers."""
    from lab import spreadsheet

    try:
        keys, records = spreadsheet.table(text)
        if "true_word" not in keys:
            return None
        return {int(r["position"]): spreadsheet.unguard(r["true_word"]) for _, r in records
                if _WHOLE.fullmatch((r.get("position") or "").strip()) and r.get("true_word") is not None}
    except csv.Error:
        return None


# ---------------------------------------------------------------- the class's side: pure counting, then the model


def class_probability(votes: dict, token, vocab: int, alpha: float = ALPHA) -> float:
    """The class's probability of `token` from its votes {first token id: count} at one position (the module
    docstring's rule: add-alpha over the named tokens and one escape bucket spread over the vocab's others). In word
    units the votes and `token` are token chains (tuples of ids) and the escape is spread over every chain: a chain
    of m tokens nobody named gets (1 / (2 V))^m of it."""
    n, k = sum(votes.values()), len(votes)
    share = 1 / (n + alpha * (k + 1))
    if votes.get(token, 0) > 0:
        return (votes[token] + alpha) * share
    if isinstance(token, tuple):
        return alpha * share * (1 / (2 * vocab)) ** len(token)
    return alpha * share / (vocab - k)


def tally(votes, truth: dict, vocab: int) -> dict[int, dict]:
    """Pure counting. votes: (position, first token id, count) triples; truth: {position: the true token's id}; in
    word units token chains (tuples of ids) instead of ids. Returns {position: {answers, votes: {id: count}, right,
    p, bits, most_common: [ids tied at the most votes, ascending]}} for each position with votes. A position's
    numbers depend on its own votes only."""
    by: dict[int, dict] = {}
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


def class_side(loaded, passage: Passage, rows, walk: list[tuple[int, int]] | None = None, unit: str = "token",
               model_rows: list[dict] | None = None) -> list[dict]:
    """Per position with answers, in order: {position, token, answers, right, p, bits, most_common: [{id, token,
    count}], agrees, guesses: [{answer, count, read_as, first: {id, token}, right, p, bits, rank}]}, guesses by
    count, most first. rows: (position, answer, count), as read_answers gives them; positions number the walk's
    ranges (default: every token, position t = token t). In word units a guess votes for its whole chain and is right
    when the chain is the word's (most_common and guesses also carry `ids`, a guess its `tokens`), and the model's
    top 1 is its likeliest candidate word: `model_rows` (walk_rows' rows of this walk) spare computing them again."""
    walk = walk if walk is not None else token_walk(passage)
    words = unit == "word"
    counts: dict[tuple[int, str], int] = {}
    for position, answer, count in rows:
        if not 1 <= position <= len(walk):
            raise GuessError(f"position {position} is not in the passage: positions go from 1 to {len(walk)}",
                             "position", position=position, last=len(walk), line=None)
        key = (position, clean_answer(answer))
        counts[key] = counts.get(key, 0) + count
    scored = {key: score(loaded, passage, walk[key[0] - 1][0], key[1]) for key in counts}
    truth = {j: tuple(passage.ids[slice(*walk[j - 1])]) if words else passage.ids[walk[j - 1][0]]
             for j, _ in counts}
    vote = {key: tuple(s["ids"]) if words else s["first"] for key, s in scored.items()}
    for key, s in scored.items():
        s["right"] = vote[key] == truth[key[0]]
    totals = tally([(key[0], vote[key], n) for key, n in counts.items()], truth, passage.vocab)
    names = {vote[key]: "".join(s["tokens"]) if words else s["tokens"][0] for key, s in scored.items()}
    out = []
    for position, c in totals.items():
        guesses = sorted(((a, n) for (p, a), n in counts.items() if p == position), key=lambda g: (-g[1], g[0]))
        a = walk[position - 1][0]
        top1 = int(top_ids(passage.logp[a - 1], 1)[0])
        if words:
            best = (model_rows[position - 1]["top"] if model_rows else candidates(loaded, passage, a)) or [{"ids": []}]
            top1 = tuple(best[0]["ids"])
        out.append({"position": position, "token": word_text(passage, loaded.tokenizer, *walk[position - 1])
                    if words else passage.readable[a], "answers": c["answers"], "right": c["right"], "p": c["p"],
                    "bits": c["bits"], "most_common": [_named(t, names[t], c["votes"][t]) for t in c["most_common"]],
                    "agrees": agreement(c["most_common"], top1),
                    "guesses": [_guess(scored[(position, a)], n, words) for a, n in guesses]})
    return out


def _named(vote, name: str, count: int) -> dict:
    if isinstance(vote, tuple):
        return {"id": vote[0], "ids": list(vote), "token": name, "count": count}
    return {"id": vote, "token": name, "count": count}


def _guess(s: dict, count: int, words: bool = False) -> dict:
    out = {"answer": s["answer"], "count": count, "read_as": s["read_as"],
           "first": {"id": s["first"], "token": s["tokens"][0]}, "right": s["right"], "p": s["p"],
           "bits": s["bits"], "rank": s["rank"]}
    return out | {"ids": s["ids"], "tokens": s["tokens"]} if words else out


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


def play(loaded, passage: Passage, rows=None, top: int = TOP, unit: str = "token", start: int = 1) -> dict:
    """The whole game as `python -m lab guess --json` prints it (lab/cli/guess.py's docstring has the shape) for a
    passage (read_passage): the model's side, and with `rows` (position, answer, count) the class's side and the
    summary. `unit`: "token" or "word" (walk_of); `start`: the first token walked (after a context not guessed)."""
    walk = walk_of(passage, loaded.tokenizer, unit, start)
    model_rows = walk_rows(loaded, passage, walk, unit, top)
    doc = {"model": passage.model, "vocab": passage.vocab, "tokens": passage.readable, "unit": unit,
           "positions": model_rows}
    if rows is not None:
        class_rows = class_side(loaded, passage, rows, walk, unit, model_rows)
        rule = "first tokens" if unit == "token" else "words (token chains)"
        doc |= {"class": class_rows, "summary": summary(model_rows, class_rows),
                "smoothing": {"alpha": ALPHA, "rule": f"add-1/2 over the {rule} the class named plus one escape "
                              "bucket spread evenly over the rest of the vocabulary" + (
                                  "" if unit == "token" else ", (1/(2V))^m for a chain of m tokens")}}
    return doc
