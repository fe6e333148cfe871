"""Load a course model by registry name or local Hugging Face directory, ready to be looked inside.

Every page that runs a model gets it through here (via ui/model_loader.py); so does every CLI command.

`load(name_or_path)` returns a `Loaded`: the model in eval mode with gradients off and eager
attention (under SDPA, `output_attentions=True` silently returns nothing), its tokenizer, and what
pages need to know (kind, context, layers, heads, width). Nothing touches the model afterwards: it
is shared by every session of the app, so callers must never mutate it or its config.

A hub model not yet cached is downloaded first (lab.models.hub: cache checks, downloads, damaged copies,
disk space); a model that cannot be had raises `ModelUnavailable` (defined in lab.models.hub).
Imports torch/transformers only inside `load`, so listing models stays cheap.
"""

from __future__ import annotations

import json
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from lab.errors import LabError
from lab.models import hub, registry
from lab.models.hub import ModelUnavailable

DEFAULT_OFFLINE = "course-gpt2"  # shipped in the repo (models/course-gpt2/), needs no network
PREFERRED = "gpt2"  # the model the course describes: the pages' default wherever it is on this machine
ENCODER_TYPES = {"roberta", "xlm-roberta", "camembert", "bert", "distilbert"}
PAD_OFFSET_TYPES = {"roberta", "xlm-roberta", "camembert"}  # positions start after the pad id
LOAD_LOG_ENV = "LAB_LOAD_LOG"  # a file: load() appends one JSON line per real load (tests count loads)


@dataclass(frozen=True)
class Loaded:
    """A loaded model and what pages need to know about it. Shared: never mutate model or config."""

    name: str
    model: object  # transformers PreTrainedModel, eval mode, requires_grad False, eager attention
    tokenizer: object
    kind: str  # "decoder" | "encoder"
    context: int
    n_layer: int
    n_head: int
    n_embd: int


def estimate_bytes(name_or_path: str) -> int:
    """Memory a loaded model will hold (fp32), known before loading: registry, or the weights' headers."""
    info = registry.REGISTRY.get(name_or_path)
    if info is not None:
        return info.memory_bytes
    path = Path(name_or_path).expanduser()
    try:
        params = sum(registry.safetensors_params(f)[0] for f in path.glob("*.safetensors"))
    except (OSError, ValueError, KeyError, TypeError, struct.error) as e:  # truncated or not a header
        raise ModelUnavailable(f"cannot read the weights of {name_or_path}: {hub.one_line(e)}", "unreadable_weights",
                               name=name_or_path, error=hub.one_line(e)) from e
    params += sum(f.stat().st_size // 4 for f in path.glob("pytorch_model*.bin"))
    return registry.memory_estimate(params)


def canonical(name_or_path: str) -> str:
    """A registry name as is; a directory as its absolute path (one cache key per model)."""
    if name_or_path in registry.REGISTRY:
        return name_or_path
    return str(Path(name_or_path).expanduser().resolve())


# ---------------------------------------------------------------- loading

def kind_of(config) -> str:
    """'encoder' (bidirectional, masked LM) or 'decoder' (causal, left to right), from a config."""
    return "encoder" if config.model_type in ENCODER_TYPES else "decoder"


def require_decoder(model, error: type = LabError, needs: str = "this") -> None:
    """Raise `error` (reason "encoder", details: model) when `model` (a Loaded or a transformers model) is an
    encoder: a masked LM sees both sides and predicts no next token. `needs` names what needs the decoder."""
    inner = getattr(model, "model", model)
    if kind_of(inner.config) == "encoder":
        name = getattr(model, "name", None) or inner.config.model_type
        raise error(f"{needs} needs a decoder, a model that predicts the next token: {name} is an encoder (a masked "
                    "LM)", "encoder", model=name)


def context_of(config) -> int:
    """How many tokens the model takes at once (RoBERTa-style positions start after the pad id)."""
    context = config.max_position_embeddings
    if config.model_type in PAD_OFFSET_TYPES:
        context -= (config.pad_token_id or 0) + 1
    return int(context)


def _source(name_or_path: str) -> tuple[str, str, dict]:
    """(name, what from_pretrained reads, its kwargs), downloading a hub model first if needed."""
    info = registry.REGISTRY.get(name_or_path)
    if info is not None and info.hub_id is not None:
        if not hub.is_available(name_or_path):
            hub.download(name_or_path)
        # local_files_only: the files are cached now; no update check that could hang on bad wifi
        return name_or_path, info.hub_id, {"cache_dir": hub.hub_cache_dir(), "local_files_only": True}
    if info is not None:  # a course model shipped in the repo
        if not hub.is_available(name_or_path):
            raise ModelUnavailable(
                f"{name_or_path} is not in this checkout (expected a model in {info.path})", "missing_shipped",
                name=name_or_path, path=info.path)
        return name_or_path, info.path, {}
    return _directory(name_or_path)


def _directory(name_or_path: str) -> tuple[str, str, dict]:
    """_source for a name that is not in the registry: it must be a local Hugging Face model directory."""
    try:
        path = Path(name_or_path).expanduser()
        exists = path.exists()
    except (OSError, RuntimeError, ValueError):  # a name too long for a path, "~nobody/...": no such directory
        path, exists = Path(name_or_path), False
    if not exists:
        raise ModelUnavailable(f"unknown model {name_or_path!r}: not a registry name "
                               f"({', '.join(registry.REGISTRY)}) and no such directory", "unknown",
                               name=name_or_path, known=list(registry.REGISTRY))
    if not (path / "config.json").is_file():
        raise ModelUnavailable(f"{name_or_path} is not a Hugging Face model directory (no config.json)",
                               "not_a_model", name=name_or_path)
    return str(path.resolve()), str(path.resolve()), {}


def load(name_or_path: str) -> Loaded:
    """The model and tokenizer for a registry name or local HF directory: eval, no grads, eager."""
    started = time.perf_counter()
    name, source, kw = _source(name_or_path)
    config, model, tokenizer = _from_pretrained(name, source, kw)
    model.eval()
    model.requires_grad_(False)
    _log_load(name, time.perf_counter() - started)
    return Loaded(name=name, model=model, tokenizer=tokenizer, kind=kind_of(config), context=context_of(config),
                  n_layer=config.num_hidden_layers, n_head=config.num_attention_heads,
                  n_embd=config.hidden_size)


def _from_pretrained(name: str, source: str, kw: dict) -> tuple[object, object, object]:
    """(config, model, tokenizer) read from `source` (float32, eager attention); a broken checkpoint is
    ModelUnavailable "load_failed"."""
    import pickle

    import torch
    from safetensors import SafetensorError

    from lab import hf_imports

    # What a broken checkpoint raises: a truncated .safetensors (SafetensorError), a truncated
    # pytorch_model.bin (RuntimeError from torch's zip reader, EOFError) or a file that is not one
    # (UnpicklingError); besides missing or malformed files (OSError, ValueError, KeyError).
    broken = (OSError, ValueError, KeyError, RuntimeError, EOFError, SafetensorError, pickle.UnpicklingError)

    try:
        with hf_imports.LOCK:  # one thread at a time through transformers' imports (lab/hf_imports.py)
            auto_config, causal, masked, auto_tokenizer = hf_imports.names(
                "AutoConfig", "AutoModelForCausalLM", "AutoModelForMaskedLM", "AutoTokenizer")
            config = auto_config.from_pretrained(source, **kw)
            auto = masked if kind_of(config) == "encoder" else causal
            model = auto.from_pretrained(source, config=config, attn_implementation="eager", dtype=torch.float32, **kw)
            tokenizer = auto_tokenizer.from_pretrained(source, **kw)
    except broken as e:
        raise ModelUnavailable(f"cannot load {name}: {hub.one_line(e)}", "load_failed", name=name,
                               error=hub.one_line(e)) from e
    return config, model, tokenizer


def _log_load(name: str, seconds: float) -> None:
    """One JSON line per real load appended to $LAB_LOAD_LOG, when set: how a test counts the loads
    of a running server, whichever sessions asked."""
    path = os.environ.get(LOAD_LOG_ENV)
    if path:
        line = json.dumps({"name": name, "pid": os.getpid(), "seconds": round(seconds, 3)})
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
