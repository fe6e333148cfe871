"""`python -m lab guess`: the guessing game's model side, and the class's beside it (issue 52; chapters 06, 07).

    python -m lab guess --json --model M --text PASSAGE [--answers answers.csv] [--top K]   (or --file FILE)
                        [--unit token|word] [--context TEXT]

The passage is typed with --text or read from a UTF-8 file with --file ('-' = stdin), as the other commands take
text. The answers table is CSV with a header naming `position`, `answer` and `count` (other columns ignored; no
student ids): one row per distinct answer at a position, `count` students gave it. lab/guess.py says how an answer
is read, how the class's counts become a probability (add-1/2 with an escape bucket) and why.

**Units** (issue 56). `--unit token` (the default) walks every token: position t is the passage's t-th token, and
the numbers are bits per token, as before. `--unit word` walks whole words (lab/guess.py, "Word units"): position j
is the passage's j-th word, the true answer the whole word (the chain of its tokens), the model's candidates whole
words, and every number is bits per word; the fields keep their names ("token" holds the word, "id" its first
token) and gain "ids" (the word's tokens) and "start" (its first token's place). `--context TEXT` is read before the
passage and not walked: positions count from the passage's first token or word. A lesson's guessing game is a word
walk with the step's text as context: its export (the teacher's "Answers (CSV ...)") carries a `true_word` column,
and a table with one is read as a word walk when --unit is not given (and refused with --unit token); each true word
must be the passage's word at that position, or the command says which differs (a wrong --context). So

    python -m lab guess --json --model course-gpt2 --context "STEP TEXT" --text "STEP PASSAGE" --answers export.csv

prints the summary the lesson's page shows. The table may be in English or Portuguese (lab.spreadsheet: ";", a
decimal comma, "posição; palavra_verdadeira; resposta; contagem").

The JSON (a contract; floats are probabilities in 0..1 and bits = -log2 p):

    {"model": "course-gpt2", "vocab": 8192, "unit": "token",            # or "word" (--unit)
     "tokens": ["O", " p", ...],                      # the passage's tokens, readable, position 0 first
     "positions": [{"position": 1, "id": 279, "token": " p", "p": 0.02, "bits": 5.6, "rank": 7,
                    "top": [{"id": 280, "token": " c", "p": 0.11}, ...]}, ...],      # every t >= 1; top K (5)
     # with --answers only:
     "class": [{"position": 1, "token": " p", "answers": 12, "right": 5, "p": 0.41, "bits": 1.3,
                "most_common": [{"id": 279, "token": " p", "count": 5}],         # ties: several, ids ascending
                "agrees": 0.0,                                                 # 1, 1/m in a tie of m, or 0
                "guesses": [{"answer": "pacote", "count": 4, "read_as": " pacote",
                             "first": {"id": 279, "token": " p"}, "right": true,
                             "p": 0.003, "bits": 8.4, "rank": null}, ...]}, ...],  # rank: one-token answers
     "summary": {"positions": 2, "answers": 24, "class_bits": 3.1, "model_bits": 4.0, "agreement": 0.5,
                 "model_bits_passage": 4.4},
     "smoothing": {"alpha": 0.5, "rule": "..."}}

"class" lists the positions that have answers, in order; a guess's `p` is the model's probability of the whole
answer as read there (the product over its tokens), `right` whether its first token is the true token. In
"summary", class_bits, model_bits and agreement are over the positions with answers (null when none).
Without --json: a table per position, then the summary.
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, read_text
from lab.cli.args import add_model_argument, add_text_arguments, load_model_arg, the_text


def register(sub) -> None:
    """Add the `guess` command."""
    p = sub.add_parser("guess", help="the guessing game: a passage's next tokens (or words, --unit word), the "
                                     "model's guesses and the class's, in bits per token (or word)")
    add_model_argument(p)
    add_text_arguments(p, "the passage whose tokens are guessed")
    p.add_argument("--answers", metavar="CSV", help="the class's answers: CSV with position, answer, count "
                                                    "('-' = stdin)")
    p.add_argument("--top", type=int, default=5, metavar="K", help="the model's tokens listed per position "
                                                                   "(default 5)")
    p.add_argument("--unit", choices=guess_units(), default=None,
                   help="what one position is: a token (bits per token; the default) or a whole word (bits per "
                        "word, as a lesson's game counts); default: word when the answers table has a true_word "
                        "column (the game's export), else token")
    p.add_argument("--context", metavar="TEXT", default="",
                   help="text read before the passage and not walked (a lesson step's text)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_guess)


def guess_units() -> tuple[str, ...]:
    return ("token", "word")  # lab.guess.UNITS, without importing lab.guess (numpy) to build the parser


def _unit(args, words: dict[int, str] | None) -> str:
    """--unit, or the table's: word when it has a true_word column."""
    if args.unit == "token" and words is not None:
        raise CliError("the answers table has a true_word column: it is a word walk's (a lesson's game); "
                       "use --unit word")
    return args.unit or ("word" if words is not None else "token")


def _check_words(doc: dict, words: dict[int, str] | None) -> None:
    """Each true word of the table is the passage's word at its position (a wrong --context shifts them)."""
    for row in doc["positions"]:
        want = (words or {}).get(row["position"])
        if want is not None and want.strip() != row["token"].strip():
            raise CliError(f"position {row['position']}: the answers table's true word is {want.strip()!r} but the "
                           f"passage's is {row['token'].strip()!r}: is --context the text before the passage?")


def run_guess(args) -> int:
    """Read the passage and the answers, play, print the JSON or the tables."""
    from lab import guess
    from lab.text import encode

    if not 1 <= args.top <= 50:
        raise CliError(f"--top must be between 1 and 50; got {args.top}")
    if args.answers == "-" and args.file == "-":
        raise CliError("the passage and the answers cannot both come from stdin")
    text = the_text(args)
    answers = read_text(args.answers) if args.answers is not None else None
    words = guess.true_words(answers) if answers is not None else None
    unit = _unit(args, words)
    loaded = load_model_arg(args.model)
    passage = guess.read_passage(loaded, args.context + text)
    start = max(1, len(encode(loaded.tokenizer, args.context))) if args.context.strip() else 1
    last = len(guess.walk_of(passage, loaded.tokenizer, unit, start))
    rows = guess.read_answers(answers, last) if answers is not None else None
    doc = guess.play(loaded, passage, rows, args.top, unit, start)
    _check_words(doc, words)
    if args.json:
        print_json(doc)
        return 0
    _tables(doc)
    return 0


def _tables(doc: dict) -> None:
    """The readable form: the model's side per position; the class's and the summary with answers."""
    from lab.text import visible

    unit = doc["unit"]
    print(f"{doc['model']}: {len(doc['tokens'])} tokens, {len(doc['positions'])} positions to guess ({unit}s)")
    print_table(["position", f"true {unit}", "p", "bits", "rank", "model's top 1", "top 1 p"],
                [[r["position"], visible(r["token"]), r["p"], r["bits"], r["rank"],
                  visible(r["top"][0]["token"]) if r["top"] else "", r["top"][0]["p"] if r["top"] else None]
                 for r in doc["positions"]])
    if "class" not in doc:
        return
    print()
    print_table(["position", f"true {unit}", "answers", "right", "class p", "class bits", "most common", "agrees"],
                [[c["position"], visible(c["token"]), c["answers"], c["right"], c["p"], c["bits"],
                  " / ".join(visible(m["token"]) for m in c["most_common"]), c["agrees"]] for c in doc["class"]])
    s = doc["summary"]
    if s["positions"]:
        print(f"\nover {s['positions']} positions, {s['answers']} answers: the class {s['class_bits']:.2f} bits "
              f"per {unit}, the model {s['model_bits']:.2f}; the class's most common guess was the model's top 1 "
              f"at {s['agreement']:.0%} of them")
    else:
        print("\nno answers")
