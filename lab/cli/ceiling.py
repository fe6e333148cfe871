"""`python -m lab ceiling`: LeCun's compounding-error argument measured on a decoder (chapter 16).

    python -m lab ceiling --json --model M --file F [--max-n 64]

prints {"model", "tokens", "e", "curve": [{"n", "observed", "predicted"}], "after_error", "after_correct"}:
e the share of predicted tokens whose top-1 prediction is wrong (teacher forcing), observed(n) the share of
starts whose next n top-1 predictions are all right, predicted(n) = (1 - e)^n, and the error rate right
after an error and right after a correct prediction. See lab/ceiling.py.
"""

from __future__ import annotations

from lab.cli import CliError, print_json, print_table, read_text
from lab.cli.common import add_model_argument, load_model_arg


def register(sub) -> None:
    """Add the `ceiling` command."""
    p = sub.add_parser("ceiling", help="the compounding-error argument: per-token error e, (1 - e)^n vs observed")
    add_model_argument(p)
    p.add_argument("--file", required=True, metavar="FILE", help="a UTF-8 text file ('-' = stdin)")
    p.add_argument("--max-n", type=int, default=64, metavar="N", help="longest run of tokens measured (default 64)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_ceiling)


def run_ceiling(args) -> int:
    """Measure one text and print the curve and the conditional error rates."""
    from lab.ceiling import CeilingError, ceiling

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
