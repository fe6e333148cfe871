"""`python -m lab corpus | train | course-eval`: build the corpus, train and evaluate the course models."""

from __future__ import annotations

import json
from pathlib import Path

from lab.cli import LabError, print_json


def run_corpus(args) -> int:
    """Assemble the bilingual corpus from Debian packages and print its statistics."""
    import shutil

    from lab.course import corpus

    if not shutil.which("apt-get") or not shutil.which("dpkg"):
        raise LabError("building the corpus needs apt-get and dpkg (a Debian or Ubuntu system)")
    result = corpus.build(args.out, args.work, log=lambda s: print(s, flush=True))
    if args.json:
        print_json(result)
    else:
        for split in ("train", "test"):
            for key, row in result["splits"][split].items():
                if not key.startswith("source:"):
                    print(f"{split:5} {key:8} {row['documents']:6} docs {row['tokens']:10,} tokens "
                          f"{row['chars']:11,} chars")
    return 0


def _check_corpus(path: str) -> None:
    """LabError unless `path` holds the token streams and tokenizers `lab corpus` writes."""
    need = [Path(path) / "tokens" / "train.npy", Path(path) / "tokenizers" / "gpt2"]
    missing = [str(p) for p in need if not p.exists()]
    if missing:
        raise LabError(f"no corpus at {path} (missing {missing[0]}); run `python -m lab corpus` first")


def run_train(args) -> int:
    """Train the decoder and/or encoder, save them, evaluate; print the results summary."""
    from lab.course import train

    _check_corpus(args.corpus)
    if args.init and not (Path(args.init) / "model.safetensors").exists():
        raise LabError(f"--init: no model.safetensors in {args.init}")
    models = tuple(m for m in args.models.split(",") if m)
    if not models or any(m not in train.MODELS for m in models):
        raise LabError(f"--models: choose from {', '.join(train.MODELS)}")
    results = train.run(args.preset, args.corpus, args.out, args.device, args.seed, args.minutes, args.steps,
                        models, not args.no_eval, args.eval_windows, log=lambda s: print(s, flush=True),
                        init=args.init)
    if args.json:
        print_json(results)
    return 0


def run_eval(args) -> int:
    """Evaluate saved course models on the held-out split (results.json and PNGs in --dir)."""
    from lab.course import evaluate as course_eval

    _check_corpus(args.corpus)
    if not (Path(args.dir) / "course-gpt2").exists() and not (Path(args.dir) / "course-roberta").exists():
        raise LabError(f"no course-gpt2/ or course-roberta/ model directory in {args.dir}")
    results = course_eval.run(args.dir, args.corpus, device=args.device, limit=args.eval_windows,
                              log=lambda s: print(s, flush=True))
    if args.json:
        print_json({k: v for k, v in results.items() if k != "training"})
    else:
        print(json.dumps({k: v for k, v in results.items() if k not in ("training",)}, indent=1)[:4000])
    return 0


def register(sub) -> None:
    """Add the corpus, train and course-eval commands."""
    from lab.course.train import add_arguments

    p = sub.add_parser("corpus", help="assemble the bilingual EN + PT-BR corpus from Debian packages")
    p.add_argument("--out", default="corpus", help="output directory (text, tokens, stats.json)")
    p.add_argument("--work", default="build/corpus-work", help="where .deb files are downloaded and unpacked")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(run=run_corpus)

    p = sub.add_parser("train", help="train the course's small decoder and encoder on the corpus")
    add_arguments(p)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(run=run_train)

    p = sub.add_parser("course-eval", help="evaluate saved course models on the held-out split")
    p.add_argument("--dir", default="runs/latest", help="directory holding course-gpt2/ and course-roberta/")
    p.add_argument("--corpus", default="corpus")
    p.add_argument("--device", default="cpu")
    p.add_argument("--eval-windows", type=int, default=None, help="at most this many held-out windows")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run_eval)
