"""Helpers shared by commands: the `--model` argument (registry name or local HF directory)."""

from __future__ import annotations

from lab.cli import CliError


def add_model_argument(parser, default: str | None = None) -> None:
    """Add `--model NAME_OR_DIR` to `parser`; the default is the course's offline model."""
    from lab.models import DEFAULT_OFFLINE
    from lab.models.registry import REGISTRY

    parser.add_argument("--model", default=default or DEFAULT_OFFLINE, metavar="NAME_OR_DIR",
                        help=f"a registry name ({', '.join(REGISTRY)}) or a local Hugging Face model "
                             f"directory (default: {default or DEFAULT_OFFLINE})")


def load_model_arg(value: str):
    """The lab.models.Loaded for a --model value; CliError with one clear line when it cannot load.

    transformers' "Loading weights" bars are turned off so that stderr stays one line on error.
    """
    from transformers.utils import logging

    from lab.models import ModelUnavailable, load

    logging.disable_progress_bar()
    try:
        return load(value)
    except ModelUnavailable as e:
        raise CliError(str(e)) from None
