"""`python -m lab detect | detect-eval | detect-set`: a language model read as an AI-text detector (chapter 12).

    python -m lab detect --json --model M --file F [--observer O]
    python -m lab detect-eval --json [--model M ...] [--observer O] [--method S] [--percentile P] [--prevalence P]
                              [--shipped]
    python -m lab detect-set [--out lab/data/detect_set.json]

`detect` prints {"model", "tokens": [{"id", "token", "rank", "logprob", "entropy"}], "scores":
{"mean_logprob", "mean_log_rank", "fast_detectgpt", "gltr": {"top10", "top100", "top1000", "rest"},
"binoculars" (only with --observer)}}: every token but the first (it has no context), natural logs;
--model is Binoculars' performer. `detect-eval` scores the shipped evaluation set and prints
{"n_human", "n_machine", "methods": {name: {"auroc", "by_group": {group: auroc}, "median_human",
"median_machine"}}, "at_threshold": what the
detector page shows for --method at --percentile (lab.detect.evaluation.at_threshold: the threshold, its
confusion matrix, TPR, FPR, AUROC, ROC, per-group rates, the base rate at --prevalence), "histogram": the page's
distribution chart of --method (lab.detect.evaluation.histogram: bin edges, each group's share per bin),
"published": the published detector figures the page shows beside ours, each with its source}
(several --model: {"results": [one table per model]}). See lab/detect/scoring.py and lab/detect/evaluation.py
for the methods.
"""

from __future__ import annotations

import argparse

from lab.cli import CliError, print_json, print_table, read_text
from lab.cli.args import add_model_argument, load_model_arg
from lab.detect.scoring import MACHINE_HIGH


def register(sub) -> None:
    """Add the `detect`, `detect-eval` and `detect-set` commands."""
    p = sub.add_parser("detect", help="per-token ranks and a text's detector scores (GLTR, Fast-DetectGPT, ...)")
    add_model_argument(p)
    p.add_argument("--file", required=True, metavar="FILE", help="a UTF-8 text file ('-' = stdin)")
    p.add_argument("--observer", metavar="NAME_OR_DIR", help="a second decoder with the same tokenizer: Binoculars")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_detect)
    p = sub.add_parser("detect-eval", help="AUROC of every detector score on the shipped human/machine set")
    p.add_argument("--model", action="append", metavar="NAME_OR_DIR", help="a decoder; repeat for several "
                   "(default course-gpt2)")
    p.add_argument("--observer", metavar="NAME_OR_DIR", help="a second decoder with the same tokenizer: Binoculars")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--save", action="store_true", help="also ship the rows for the page (lab/data/detect_scores.json)")
    p.add_argument("--shipped", action="store_true", help="read the shipped rows when they are these weights' (as "
                   "the page does: seconds instead of minutes; a test keeps them equal to a fresh scoring)")
    p.add_argument("--method", default="fast_detectgpt", choices=list(MACHINE_HIGH),
                   help="the score read at a threshold, as the page shows it (default fast_detectgpt)")
    p.add_argument("--percentile", type=_percent(1, 99), default=95, metavar="P", help="flag what scores above this "
                   "percentile of the human texts (1-99, default 95: about 5 %% of them wrongly flagged)")
    p.add_argument("--prevalence", type=_percent(1, 90), default=10, metavar="P",
                   help="share of machine-written texts, in %%, for the base rate (1-90, default 10)")
    p.set_defaults(run=run_eval)
    p = sub.add_parser("detect-set", help="rebuild the detector's evaluation set (needs apt-get and dpkg)")
    p.add_argument("--out", default=None, metavar="FILE", help="where to write it (default lab/data/detect_set.json)")
    p.set_defaults(run=run_set)


def _percent(low: int, high: int):
    """An argparse type: a whole number from low to high."""
    def parse(value: str) -> int:
        if not value.strip().isdigit() or not low <= int(value) <= high:
            raise argparse.ArgumentTypeError(f"a whole number from {low} to {high}, not {value!r}")
        return int(value)
    return parse


def _loaded_pair(model: str, observer: str | None):
    """(performer, observer or None), checked: decoders, one tokenizer (CliError with one line)."""
    from lab.detect.scoring import DetectError, check_decoder, check_pair

    performer = load_model_arg(model)
    other = load_model_arg(observer) if observer is not None else None  # "" is a name, and a bad one
    try:
        check_pair(performer, other) if other is not None else check_decoder(performer)
    except DetectError as e:
        raise CliError(str(e)) from None
    return performer, other


def run_detect(args) -> int:
    """Score one text and print its tokens and scores."""
    from lab.detect.scoring import DetectError, detect

    text = read_text(args.file)
    if not text.strip():
        raise CliError(f"the text is empty: {args.file}")
    performer, observer = _loaded_pair(args.model, args.observer)
    try:
        r = detect(performer, text, observer)
    except DetectError as e:
        raise CliError(f"{performer.name}: {e}") from None
    out = {"model": r["model"], "tokens": [{k: t[k] for k in ("id", "token", "rank", "logprob", "entropy")}
                                           for t in r["tokens"]], "scores": r["scores"]}
    if args.json:
        print_json(out)
    else:
        s = r["scores"]
        print_table(["score", "value"], [[k, v] for k, v in s.items() if k != "gltr"]
                    + [[f"gltr {k}", v] for k, v in s["gltr"].items()])
    return 0


def run_eval(args) -> int:
    """Score the evaluation set under each model and print the AUROC table(s)."""
    from lab.detect import evaluation as detect_eval
    from lab.detect import labelled_set as detect_set
    from lab.models import DEFAULT_OFFLINE

    texts = detect_set.load()["texts"]
    tables = []
    for name in args.model or [DEFAULT_OFFLINE]:
        performer, observer = _loaded_pair(name, args.observer)
        rows = (args.shipped and detect_eval.shipped_rows(performer, observer)) or detect_eval.score_set(
            performer, texts, observer)
        if args.save:
            detect_eval.save_rows(performer, observer, rows)
        if args.method not in rows[0]:
            raise CliError(f"--method {args.method} needs --observer (a second decoder with the same tokenizer)")
        table = detect_eval.evaluate(rows)
        at = detect_eval.at_threshold(rows, args.method, args.percentile, args.prevalence / 100)
        tables.append({"model": performer.name, **table, "at_threshold": at,
                       "histogram": detect_eval.histogram(rows, args.method), "published": detect_eval.PUBLISHED})
    if args.json:
        print_json({k: v for k, v in tables[0].items() if k != "model"} if len(tables) == 1 else {"results": tables})
        return 0
    for t in tables:
        groups = list(next(iter(t["methods"].values()))["by_group"])
        print(f"{t['model']}: {t['n_human']} human, {t['n_machine']} machine texts")
        print_table(["method", "auroc", *groups], [[m, v["auroc"], *v["by_group"].values()]
                                                   for m, v in t["methods"].items()])
        at = t["at_threshold"]
        print(f"{at['method']} at the {at['percentile']}th percentile of the human texts (threshold "
              f"{at['score_threshold']:.4g}): TPR {at['tpr']:.3f}, FPR {at['fpr']:.3f}; at {args.prevalence} % machine "
              f"text, {'-' if at['flagged_human_share'] is None else format(at['flagged_human_share'], '.3f')} of "
              "the flagged texts were written by people")
        print_table(["group", "rate", "value", "texts"], [[g, v["rate"], v["value"], v["texts"]]
                                                          for g, v in at["by_group"].items()])
    return 0


def run_set(args) -> int:
    """Rebuild the evaluation set from Debian packages and the course decoders."""
    import json
    import shutil
    from pathlib import Path

    from lab.detect import labelled_set as detect_set

    if not shutil.which("apt-get") or not shutil.which("dpkg"):
        raise CliError("building the set needs apt-get and dpkg (a Debian or Ubuntu system)")
    out = Path(args.out) if args.out else detect_set.PATH
    data = detect_set.build(log=lambda s: print(s, flush=True))
    out.write_text(json.dumps(data, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{out}: {len(data['texts'])} texts")
    return 0
