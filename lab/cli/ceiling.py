"""`python -m lab ceiling`: LeCun's compounding-error argument measured on a decoder (chapter 16).

    python -m lab ceiling --json --model M --file F [--max-n 64]
    python -m lab ceiling --json --course [--max-n 64]

prints {"model", "tokens", "e", "curve": [{"n", "observed", "predicted"}], "after_error", "after_correct",
"half_observed", "half_predicted"}: e the share of predicted tokens whose top-1 prediction is wrong (teacher
forcing), observed(n) the share of starts whose next n top-1 predictions are all right, predicted(n) = (1 - e)^n,
the error rate right after an error and right after a correct prediction, and the first n at which each curve
falls below one half (null: not within --max-n). With --course, the ceiling page's course table and its verdict:
{"rows": [lab.ceiling.course_row for each course decoder and language, with "lang"], "verdict":
lab.ceiling.verdict}. See lab/ceiling.py.
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, read_text
from lab.cli.args import add_model_argument, load_model_arg


def register(sub) -> None:
    """Add the `ceiling` command."""
    p = sub.add_parser("ceiling", help="the compounding-error argument: per-token error e, (1 - e)^n vs observed")
    add_model_argument(p)
    p.add_argument("--file", metavar="FILE", help="a UTF-8 text file ('-' = stdin)")
    p.add_argument("--course", action="store_true", help="instead of --file: the course decoders on the unseen "
                   "documentation, and the verdict the ceiling page draws from them")
    p.add_argument("--max-n", type=int, default=64, metavar="N", help="longest run of tokens measured (default 64)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_ceiling)


def run_ceiling(args) -> int:
    """Measure one text and print the curve and the conditional error rates."""
    from lab.ceiling import CeilingError, ceiling

    if args.course == (args.file is not None):
        raise CliError("give either --file FILE or --course")
    if args.course:
        return _course(args)
    text = read_text(args.file)
    if not text.strip():
        raise CliError(f"the text is empty: {args.file}")
    loaded = load_model_arg(args.model)
    try:
        r = ceiling(loaded, text, args.max_n)
    except CeilingError as e:
        raise CliError(f"{loaded.name}: {e}") from None
    if args.json:
        print_json(r)
    else:
        print(f"{r['model']}: {r['tokens']} predicted tokens, e = {r['e']:.4f}, error after an error "
              f"{r['after_error']}, after a correct prediction {r['after_correct']}")
        print_table(["n", "observed", "(1 - e)^n"], [[c["n"], c["observed"], c["predicted"]] for c in r["curve"]])
    return 0


def _course(args) -> int:
    """The course table (every course decoder on the unseen documentation, per language) and its verdict."""
    from lab import ceiling

    if not 4 <= args.max_n <= 4096:  # the verdict reads runs of 4
        raise CliError(f"--max-n must be a whole number from 4 to 4,096 with --course, not {args.max_n}")
    rows = []
    for name in ceiling.COURSE_DECODERS:
        loaded = load_model_arg(name)
        for lang, text in ceiling.unseen_texts().items():
            rows.append({**ceiling.course_row(loaded, text[:ceiling.COURSE_CHARS], args.max_n), "lang": lang})
    v = ceiling.verdict(rows)
    if args.json:
        print_json({"rows": rows, "verdict": v})
        return 0
    print_table(["model", "lang", "e", "half observed", "error after error", "after right", "forced k", "unforced"],
                [[r["model"], r["lang"], r["e"], r["half_observed"], r["after_error"], r["after_correct"],
                  r["forced_with"], r["forced_without"]] for r in rows])
    print(f"e falls with size: {v['falls_with_size']}; dependence: {v['dependence']} (after an error / after a right "
          f"token {v['error_ratio']['min']:.2f}-{v['error_ratio']['max']:.2f}); runs of 4 above (1 - e)^4 in "
          f"{v['runs_of_4_above']} of {v['pairs']}; a forced token adds {v['forced_first_points']['min']:.0f}-"
          f"{v['forced_first_points']['max']:.0f} points to the next token's error, "
          f"{v['forced_points']['min']:.1f}-{v['forced_points']['max']:.1f} to the next {ceiling.K}")
    return 0
