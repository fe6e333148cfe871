"""The arguments commands share, and their checks as one CLI line: `--model` (a registry name or a local Hugging
Face directory), `--text` / `--file` (the text typed, or read from a UTF-8 file), a decoder required, a text that
must fit the model's context."""

from __future__ import annotations

from lab.cli import CliError, read_text, text_arg


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


def add_text_arguments(parser, text_help: str = "the text") -> None:
    """Add `--text TEXT` or `--file FILE` (one of them, required) to `parser`."""
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", type=text_arg, metavar="TEXT", help=text_help)
    src.add_argument("--file", metavar="FILE", help="read the text from a UTF-8 file ('-' = stdin)")


def the_text(args) -> str:
    """The text of `--text` or `--file`; CliError when it is empty."""
    text = args.text if args.text is not None else read_text(args.file)
    if not text.strip():
        raise CliError("the text is empty")
    return text


def decoder(loaded, needs: str) -> None:
    """CliError (lab.models.require_decoder's line) when the model is an encoder."""
    from lab.errors import LabError
    from lab.models import require_decoder

    try:
        require_decoder(loaded, needs=needs)
    except LabError as e:
        raise CliError(str(e)) from None


def fits(tokens: int, loaded) -> None:
    """CliError (lab.text.check_fits's line) when `tokens` do not fit the model's context."""
    from lab.errors import LabError
    from lab.text import check_fits

    try:
        check_fits(tokens, loaded.context, model=loaded.name)
    except LabError as e:
        raise CliError(str(e)) from None
