"""`python -m lab corpus | train | course-eval`: build the corpus, train and evaluate the course models."""

from __future__ import annotations

import json
import math
from pathlib import Path

from lab.cli import CliError, print_json


def run_corpus(args) -> int:
    """Assemble the bilingual corpus from Debian packages and print its statistics."""
    import shutil

    from lab.course import corpus

    if not shutil.which("apt-get") or not shutil.which("dpkg"):
        raise CliError("building the corpus needs apt-get and dpkg (a Debian or Ubuntu system)")
    _make_dir(args.out, "--out")
    _make_dir(args.work, "--work")
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


def _exists(path: Path) -> bool:
    """path.exists(), and False for a name no file can have (too long, a NUL in it)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _make_dir(value: str, option: str) -> None:
    """Create the output directory `value` now, before hours of work; CliError with one line if it cannot be."""
    if not value.strip():
        raise CliError(f"{option}: give a directory name")
    try:
        Path(value).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CliError(f"{option} {value}: a file of that name is in the way") from None
    except (OSError, ValueError) as e:  # too long, read-only, a NUL in the name...
        why = getattr(e, "strerror", None) or e
        raise CliError(f"{option} {value}: cannot create this directory ({why})") from None


def _check_numbers(args) -> None:
    """CliError for a count below 1, a budget that is not a positive number of minutes, a seed numpy refuses."""
    for option, value in (("--steps", getattr(args, "steps", None)), ("--eval-windows", args.eval_windows)):
        if value is not None and value < 1:
            raise CliError(f"{option} must be at least 1, not {value}")
    minutes = getattr(args, "minutes", None)
    if minutes is not None and not (math.isfinite(minutes) and minutes > 0):
        raise CliError(f"--minutes must be a positive number of minutes, not {minutes}")
    seed = getattr(args, "seed", 0)
    if not 0 <= seed < 2**32:
        raise CliError(f"--seed must be between 0 and 2**32 - 1, not {seed}")


def _check_device(name: str) -> str:
    """The device `name` stands for (auto resolved); CliError unless it is cpu, mps or a CUDA device here."""
    import torch

    from lab.course.train import pick_device

    try:
        device = torch.device(pick_device(name))
    except (RuntimeError, ValueError, TypeError):
        device = None
    if device is None or device.type not in ("cpu", "cuda", "mps"):
        raise CliError(f"--device {name!r}: not a device; use auto, cpu, cuda, cuda:N or mps")
    if device.type == "cuda" and not (torch.cuda.is_available() and (device.index or 0) < torch.cuda.device_count()):
        raise CliError(f"--device {name}: no such CUDA device on this machine")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise CliError(f"--device {name}: MPS is not available on this machine")
    return str(device)


def _check_corpus(path: str) -> None:
    """CliError unless `path` holds the token streams and tokenizers `lab corpus` writes."""
    need = [Path(path) / "tokens" / "train.npy", Path(path) / "tokenizers" / "gpt2"]
    missing = [str(p) for p in need if not _exists(p)]
    if missing:
        raise CliError(f"no corpus at {path} (missing {missing[0]}); run `python -m lab corpus` first")


def run_train(args) -> int:
    """Train the decoder and/or encoder, save them, evaluate; print the results summary."""
    from lab.course import train

    _check_numbers(args)
    models = tuple(m for m in args.models.split(",") if m)
    if not models or any(m not in train.MODELS for m in models):
        raise CliError(f"--models: choose from {', '.join(train.MODELS)}")
    _check_corpus(args.corpus)
    if args.init and not _exists(Path(args.init) / "model.safetensors"):
        raise CliError(f"--init: no model.safetensors in {args.init}")
    if args.init and len(models) != 1:
        raise CliError("--init resumes one model: pass --models decoder or --models encoder")
    _check_device(args.device)
    _make_dir(args.out, "--out")
    results = train.run(args.preset, args.corpus, args.out, args.device, args.seed, args.minutes, args.steps,
                        models, not args.no_eval, args.eval_windows, log=lambda s: print(s, flush=True),
                        init=args.init)
    if args.json:
        print_json(results)
    return 0


def run_eval(args) -> int:
    """Evaluate saved course models on the held-out split (results.json and PNGs in --dir)."""
    from lab.course import evaluate as course_eval

    _check_numbers(args)
    _check_corpus(args.corpus)
    if not _exists(Path(args.dir) / "course-gpt2") and not _exists(Path(args.dir) / "course-roberta"):
        raise CliError(f"no course-gpt2/ or course-roberta/ model directory in {args.dir}")
    device = _check_device(args.device)
    results = course_eval.run(args.dir, args.corpus, device=device, limit=args.eval_windows,
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
