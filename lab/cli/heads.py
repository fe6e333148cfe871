"""`python -m lab heads`: heads at work (heads page, chapters 04, 05).

    python -m lab heads copy --json [--model M] [--length N] [--seed S] [--text T | --file F]
    python -m lab heads knockout --json [--model M] --heads 2.3,3.3 [--mode zero|mean] [--grid]
                                 [--length N] [--seed S] [--text T | --file F]
    python -m lab heads patch --json [--model M] [--lang en|pt] [--clean T --corrupt T]
                              [--clean-answer W] [--corrupt-answer W]

Without --text/--file both run on the seeded repeated random sequence (lab.heads.repeated). Losses are in bits
per token; `loss[p]` is the loss of predicting token p+1. Grids are [layer][head]. Heads are written layer.head.
`patch` runs lab.patching on --clean/--corrupt (both, the same length in tokens) or on --lang's default pair (its
answers too); an answer left out is that prompt's own top next token. "resid" is [layer][position] (the input of
each block), "heads" [layer][head] (each head's output at the last position): 0 = the corrupted run, 1 = the clean.
"""

from __future__ import annotations

from lab.cli import print_json, print_table, read_text, text_arg
from lab.cli.args import add_model_argument, load_model_arg


def register(sub) -> None:
    """Add the `heads` command and its `copy` and `knockout` sub-commands."""
    from lab.heads import LENGTH, MODES, SEED

    p = sub.add_parser("heads", help="heads at work: the model copies (induction heads), a head knocked out")
    which, made = p.add_subparsers(dest="experiment", required=True, parser_class=type(p)), {}
    for name, helped in (("copy", "a repeated random sequence: loss per position, induction and previous-token "
                                  "scores per head"),
                         ("knockout", "knock heads out (zero or mean) and see the loss change")):
        q = which.add_parser(name, help=helped)
        add_model_argument(q)
        src = q.add_mutually_exclusive_group()
        src.add_argument("--text", type=text_arg, metavar="TEXT", help="the reader's text instead of the sequence")
        src.add_argument("--file", metavar="FILE", help="read the text from a UTF-8 file ('-' = stdin)")
        q.add_argument("--length", type=int, default=LENGTH, metavar="N", help=f"tokens per copy (default {LENGTH})")
        q.add_argument("--seed", type=int, default=SEED, metavar="S", help=f"the sequence's seed (default {SEED})")
        q.add_argument("--json", action="store_true", help="print JSON")
        q.set_defaults(run=run_copy if name == "copy" else run_knockout)
        made[name] = q
    q = made["knockout"]
    q.add_argument("--heads", default="", metavar="L.H,...", help="the heads to knock out, e.g. 2.3,3.3")
    q.add_argument("--mode", choices=MODES, default="zero",
                   help="zero: the head's output set to 0; mean: to its mean over the text's positions")
    q.add_argument("--grid", action="store_true", help="also the loss change of each head knocked out alone")
    _register_patch(which)


def _register_patch(which) -> None:
    """The `patch` sub-command's arguments."""
    q = which.add_parser("patch", help="patch the clean run's residual stream and heads into the corrupted run")
    add_model_argument(q)
    q.add_argument("--lang", choices=("en", "pt"), default="en", help="the default pair's language (en)")
    q.add_argument("--clean", type=text_arg, metavar="TEXT", help="the clean prompt (with --corrupt)")
    q.add_argument("--corrupt", type=text_arg, metavar="TEXT", help="the corrupted prompt, as long in tokens")
    q.add_argument("--clean-answer", type=text_arg, metavar="WORD", help="the clean answer (its first token)")
    q.add_argument("--corrupt-answer", type=text_arg, metavar="WORD", help="the corrupted answer (its first token)")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(run=run_patch)


def _ids(args, loaded):
    """The reader's ids (--text/--file) or None for the repeated sequence."""
    from lab import heads

    if args.text is None and args.file is None:
        return None
    return heads.ids_of(loaded.tokenizer, args.text if args.text is not None else read_text(args.file))


def _rounded(grid) -> list[list[float]]:
    return [[round(float(x), 6) for x in row] for row in grid]


def run_copy(args) -> int:
    """The copy experiment as JSON, or the best heads as a table."""
    from lab import heads

    loaded = load_model_arg(args.model)
    r = heads.copying(loaded.model, loaded.tokenizer, _ids(args, loaded), args.length, args.seed)
    doc = {"model": loaded.name, "ids": r["ids"], "own_text": r["own"], "length": r["length"], "seed": r["seed"],
           "loss": [round(float(x), 6) for x in r["loss"]], "previous": _rounded(r["previous"]),
           "best_previous": heads.best(r["previous"])}
    if not r["own"]:
        doc |= {"first_half": round(r["first_half"], 6), "second_half": round(r["second_half"], 6),
                "induction": _rounded(r["induction"]), "best_induction": heads.best(r["induction"])}
    if args.json:
        print_json(doc)
        return 0
    if not r["own"]:
        print(f"loss, first copy: {r['first_half']:.2f} bits/token; second copy: {r['second_half']:.2f}")
    for key in ("best_induction", "best_previous"):
        if key in doc:
            print_table([key.replace("_", " "), "score"], [[f"{b['layer']}.{b['head']}", b["score"]] for b in doc[key]])
    return 0


def run_knockout(args) -> int:
    """The knock-out as JSON (per-position losses, their change, and the grid with --grid), or a summary line."""
    from lab import heads

    loaded = load_model_arg(args.model)
    knocked = heads.parse_heads(args.heads)
    ids = _ids(args, loaded)
    if ids is None:
        heads.check_model(loaded.model)
        ids = heads.repeated(loaded.model, loaded.tokenizer, args.length, args.seed)
    r = heads.knockout(loaded.model, ids, knocked, args.mode)
    doc = {"model": loaded.name, "ids": ids, "heads": r["heads"], "mode": r["mode"],
           "clean": [round(float(x), 6) for x in r["clean"]], "knocked": [round(float(x), 6) for x in r["knocked"]],
           "delta": [round(float(x), 6) for x in r["delta"]], "mean_delta": round(r["mean_delta"], 6)}
    if args.grid:
        doc["grid"] = _rounded(heads.knockout_grid(loaded.model, ids, args.mode))
    if args.json:
        print_json(doc)
        return 0
    print(f"{args.mode}-ablating {args.heads or 'no head'}: loss {r['clean'].mean():.3f} -> "
          f"{r['knocked'].mean():.3f} bits/token ({r['mean_delta']:+.3f})")
    return 0


def run_patch(args) -> int:
    """The patching experiment as JSON (the two grids, raw and scored), or the best cells as a table."""
    from lab import patching

    if (args.clean is None) != (args.corrupt is None):
        raise patching.HeadsError("give both --clean and --corrupt, or neither (the default pair)", "one_prompt")
    clean, corrupt, a, b = patching.defaults(args.lang)
    if args.clean is not None:
        clean, corrupt, a, b = args.clean, args.corrupt, None, None
    a = args.clean_answer if args.clean_answer is not None else a
    b = args.corrupt_answer if args.corrupt_answer is not None else b
    loaded = load_model_arg(args.model)
    r = patching.patching(loaded.model, loaded.tokenizer, clean, corrupt, a, b)
    doc = {"model": loaded.name, "lang": args.lang, "clean": clean, "corrupt": corrupt, "clean_ids": r["clean_ids"],
           "corrupt_ids": r["corrupt_ids"], "labels": r["labels"], "answers": r["answers"],
           "answer_texts": r["answer_texts"], "where": r["where"], "clean_diff": round(r["clean_diff"], 6),
           "corrupt_diff": round(r["corrupt_diff"], 6), "resid": _rounded(r["resid"]), "heads": _rounded(r["heads"]),
           "resid_diff": _rounded(r["resid_diff"]), "heads_diff": _rounded(r["heads_diff"])}
    if args.json:
        print_json(doc)
        return 0
    print(f"logit difference {r['answer_texts'][0]!r} - {r['answer_texts'][1]!r}: clean {r['clean_diff']:.3f}, "
          f"corrupted {r['corrupt_diff']:.3f}")
    from lab.heads import best

    rows = [[f"{x['layer']}.{x['head']}", x["score"]] for x in best(r["heads"])]
    print_table(["head (last position)", "score"], rows)
    return 0
