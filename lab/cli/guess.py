"""`python -m lab guess`: the guessing game's model side, and the class's beside it (issue 52; chapters 06, 07).

    python -m lab guess --json --model M --text PASSAGE [--answers answers.csv] [--top K]   (or --file FILE)

The passage is typed with --text or read from a UTF-8 file with --file ('-' = stdin), as the other commands take
text. The answers table is CSV with a header naming `position`, `answer` and `count` (other columns ignored; no
student ids): one row per distinct answer at a position, `count` students gave it. lab/guess.py says how an answer
is read, how the class's counts become a probability (add-1/2 with an escape bucket) and why.

The JSON (a contract; floats are probabilities in 0..1 and bits = -log2 p):

    {"model": "course-gpt2", "vocab": 8192,
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
    p = sub.add_parser("guess", help="the guessing game: a passage's next tokens, the model's guesses and the "
                                     "class's, in bits per token")
    add_model_argument(p)
    add_text_arguments(p, "the passage whose tokens are guessed")
    p.add_argument("--answers", metavar="CSV", help="the class's answers: CSV with position, answer, count "
                                                    "('-' = stdin)")
    p.add_argument("--top", type=int, default=5, metavar="K", help="the model's tokens listed per position "
                                                                   "(default 5)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_guess)


def run_guess(args) -> int:
    """Read the passage and the answers, play, print the JSON or the tables."""
    from lab import guess

    if not 1 <= args.top <= 50:
        raise CliError(f"--top must be between 1 and 50; got {args.top}")
    if args.answers == "-" and args.file == "-":
        raise CliError("the passage and the answers cannot both come from stdin")
    text = the_text(args)
    answers = read_text(args.answers) if args.answers is not None else None
    loaded = load_model_arg(args.model)
    passage = guess.read_passage(loaded, text)
    rows = guess.read_answers(answers, passage.last) if answers is not None else None
    doc = guess.play(loaded, passage, rows, args.top)
    if args.json:
        print_json(doc)
        return 0
    _tables(doc)
    return 0


def _tables(doc: dict) -> None:
    """The readable form: the model's side per position; the class's and the summary with answers."""
    from lab.text import visible

    print(f"{doc['model']}: {len(doc['tokens'])} tokens, {len(doc['positions'])} positions to guess")
    print_table(["position", "true token", "p", "bits", "rank", "model's top 1", "top 1 p"],
                [[r["position"], visible(r["token"]), r["p"], r["bits"], r["rank"], visible(r["top"][0]["token"]),
                  r["top"][0]["p"]] for r in doc["positions"]])
    if "class" not in doc:
        return
    print()
    print_table(["position", "true token", "answers", "right", "class p", "class bits", "most common", "agrees"],
                [[c["position"], visible(c["token"]), c["answers"], c["right"], c["p"], c["bits"],
                  " / ".join(visible(m["token"]) for m in c["most_common"]), c["agrees"]] for c in doc["class"]])
    s = doc["summary"]
    if s["positions"]:
        print(f"\nover {s['positions']} positions, {s['answers']} answers: the class {s['class_bits']:.3f} bits "
              f"per token, the model {s['model_bits']:.3f}; the class's most common guess was the model's top 1 "
              f"at {s['agreement']:.0%} of them")
    else:
        print("\nno answers")
