"""`python -m lab analogy` and `python -m lab neighbours`: a − b + c and nearest tokens over input embeddings.

    python -m lab analogy --json --model M A B C [--k K] [--method add|mul] [--no-exclude] [--no-space]
                          [--mean-pieces] [--expected WORD] [--all-tokens]
    python -m lab neighbours --json --model M WORD [--k K] [--no-space] [--mean-pieces] [--all-tokens]

Both print {"words": [...], "tokens": [[id, ...], ...], "results": [{"token", "id", "score"}, ...],
"left_out": {"count", "method", "min_count" | "cut"}}, best first (analogy adds "expected" when
--expected is given). Rarely trained rows are left out as on the page (lab.learned); --all-tokens keeps
them. No forward pass runs: see lab/embeddings.py for the conventions (3CosAdd / 3CosMul, leading space,
exclusion).
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, text_arg
from lab.cli.args import add_model_argument, load_model_arg


def _k(value: str) -> int:
    """--k: a whole number of at least 1."""
    try:
        k = int(value)
    except ValueError:
        raise CliError(f"--k must be a whole number, not {value!r}") from None
    if k < 1:
        raise CliError(f"--k must be at least 1, not {k}")
    return k


def _common(p) -> None:
    """Options both commands share."""
    add_model_argument(p)
    p.add_argument("--k", type=_k, default=10, help="how many results (default 10)")
    p.add_argument("--no-space", action="store_true",
                   help="look words up as typed, without the leading space (\"king\", not \" king\")")
    p.add_argument("--mean-pieces", action="store_true",
                   help="let a word of several tokens stand for the mean of its pieces (an approximation)")
    p.add_argument("--all-tokens", action="store_true",
                   help="keep the rows the model barely trained among the answers (left out by default)")
    p.add_argument("--json", action="store_true", help="print JSON")


def register(sub) -> None:
    """Add the `analogy` and `neighbours` commands."""
    p = sub.add_parser("analogy", help="A - B + C over the model's input token embeddings")
    p.add_argument("a", type=text_arg, metavar="A")
    p.add_argument("b", type=text_arg, metavar="B")
    p.add_argument("c", type=text_arg, metavar="C")
    _common(p)
    p.add_argument("--method", choices=("add", "mul"), default="add", help="3CosAdd (default) or 3CosMul")
    p.add_argument("--no-exclude", action="store_true", help="let the three input words be results too")
    p.add_argument("--expected", type=text_arg, metavar="WORD",
                   help="also report the rank of this word, with and without exclusion")
    p.set_defaults(run=run_analogy)

    p = sub.add_parser("neighbours", help="the tokens nearest to a word by cosine of input embeddings")
    p.add_argument("word", type=text_arg, metavar="WORD")
    _common(p)
    p.set_defaults(run=run_neighbours)


def _show(out: dict) -> None:
    """The plain-text view: each word's tokens, then the results table."""
    for word, ids in zip(out["words"], out["tokens"], strict=True):
        print(f"{word!r}: tokens {ids}")
    print_table(["token", "id", "score"], [[repr(r["token"]), r["id"], r["score"]] for r in out["results"]])


def run_analogy(args) -> int:
    """Print the k best answers to A - B + C."""
    from lab import embeddings

    loaded = load_model_arg(args.model)
    space = not args.no_space
    try:
        q = embeddings.analogy_scores(loaded.model, loaded.tokenizer, args.a, args.b, args.c, args.method,
                                      space, args.mean_pieces)
        rare, said = embeddings.rare_rows(loaded.model, loaded.tokenizer, args.all_tokens)
        expected = args.expected and embeddings.expected_rank(loaded.tokenizer, q, args.expected, space, rare)
    except embeddings.EmbeddingError as e:
        raise CliError(str(e)) from None
    best = embeddings.top(q["scores"], args.k, (set() if args.no_exclude else embeddings.excluded(q)) | rare)
    out = {"words": q["words"], "tokens": q["tokens"], "results": embeddings.results(loaded.tokenizer, best),
           "left_out": said}
    if expected:
        out["expected"] = {"word": args.expected, "tokens": expected["ids"], "rank": expected["rank"],
                           "rank_without_exclusion": expected["rank_all"]}
    if args.json:
        print_json(out)
    else:
        _show(out)
        if expected:
            print(f"expected {args.expected!r}: rank {expected['rank']} "
                  f"({expected['rank_all']} without exclusion)")
    return 0


def run_neighbours(args) -> int:
    """Print the k tokens nearest to WORD."""
    from lab import embeddings

    loaded = load_model_arg(args.model)
    try:
        out = embeddings.neighbours(loaded.model, loaded.tokenizer, args.word, args.k, not args.no_space,
                                    args.mean_pieces, args.all_tokens)
    except embeddings.EmbeddingError as e:
        raise CliError(str(e)) from None
    if args.json:
        print_json(out)
    else:
        _show(out)
    return 0
