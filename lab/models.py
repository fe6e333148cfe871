"""Load a course model by registry name or local Hugging Face directory, ready to be looked inside.

Every page that runs a model gets it through here (via ui/model_loader.py); so does every CLI command.

`load(name_or_path)` returns a `Loaded`: the model in eval mode with gradients off and eager
attention (under SDPA, `output_attentions=True` silently returns nothing), its tokenizer, and what
pages need to know (kind, context, layers, heads, width). Nothing touches the model afterwards: it
is shared by every session of the app, so callers must never mutate it or its config.

Hub models load with `from_pretrained(hub_id)` from the standard Hugging Face cache. A model that
is not cached is downloaded first, unless `HF_HUB_OFFLINE` is set or the hub does not answer within
a few seconds: then `ModelUnavailable` says so at once, with the command that prefetches it.
Imports torch/transformers only inside `load`, so listing models stays cheap.
"""

from __future__ import annotations

import os
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from lab import registry

DEFAULT_OFFLINE = "course-gpt2"  # shipped in the repo (models/course-gpt2/), needs no network
ENCODER_TYPES = {"roberta", "xlm-roberta", "camembert", "bert", "distilbert"}
PAD_OFFSET_TYPES = {"roberta", "xlm-roberta", "camembert"}  # positions start after the pad id
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
AUX_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
             "special_tokens_map.json", "added_tokens.json", "vocab.json", "merges.txt")
PROBE_TIMEOUT_S = 3.0
SILENT_HUB_MEMO_S = 60.0  # a hub that did not answer is not asked again for this long
_silent_until: dict[str, float] = {}  # endpoint -> time.monotonic() until which it counts as silent
_silent_guard = threading.Lock()
_download_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


class ModelUnavailable(ValueError):
    """A model that cannot be loaded here and now; the message is one line saying why and what to do."""


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


# ---------------------------------------------------------------- where models live, without torch

def offline() -> bool:
    """True when HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set, read now, not at import."""
    from huggingface_hub import constants

    flags = (os.environ.get("HF_HUB_OFFLINE"), os.environ.get("TRANSFORMERS_OFFLINE"))
    return any((v or "").strip().upper() in constants.ENV_VARS_TRUE_VALUES for v in flags)


def hub_cache_dir() -> str:
    """The standard Hugging Face hub cache, resolved from the environment now (HF_HUB_CACHE, HF_HOME)."""
    from huggingface_hub import constants

    if os.environ.get("HF_HUB_CACHE"):
        return os.path.expanduser(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return os.path.join(os.path.expanduser(os.environ["HF_HOME"]), "hub")
    return constants.HF_HUB_CACHE


def _cached(hub_id: str, filename: str) -> str | None:
    """Path of `filename` of hub_id's main revision in the local cache, or None (no network)."""
    from huggingface_hub import try_to_load_from_cache

    path = try_to_load_from_cache(hub_id, filename, cache_dir=hub_cache_dir())
    return path if isinstance(path, str) else None


def is_available(name: str) -> bool:
    """Can `name` (registry name or directory) load without the network right now?"""
    info = registry.REGISTRY.get(name)
    if info is None:
        return (Path(name).expanduser() / "config.json").is_file()
    if info.hub_id is None:
        return (Path(info.path) / "config.json").is_file()
    return _cached(info.hub_id, "config.json") is not None and any(
        _cached(info.hub_id, f) is not None for f in WEIGHT_FILES)


def prefetch_hint(name: str) -> str:
    """The one command that puts `name` in the local cache."""
    return f"python -m lab prefetch {name}"


def forget_silent_hub() -> None:
    """Forget that the hub did not answer, so the next check probes again (tests use this)."""
    with _silent_guard:
        _silent_until.clear()


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Does the hub answer within `timeout` seconds? (A thread bounds DNS stalls too.)

    A hub that did not answer counts as unreachable for SILENT_HUB_MEMO_S without a new probe,
    so a page rerun on a machine without internet does not wait seconds each time.
    """
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    endpoint = (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
    with _silent_guard:
        if time.monotonic() < _silent_until.get(endpoint, 0.0):
            return False
    done, answered = threading.Event(), []

    def probe():
        try:
            get_session().head(f"{endpoint}/api/models", timeout=timeout)
            answered.append(True)
        except Exception:  # any failure to get an HTTP answer means unreachable
            pass
        finally:
            done.set()

    threading.Thread(target=probe, daemon=True).start()
    if done.wait(timeout + 0.5) and answered:
        return True
    with _silent_guard:
        _silent_until[endpoint] = time.monotonic() + SILENT_HUB_MEMO_S
    return False


def check_online(name: str) -> None:
    """ModelUnavailable at once when hub model `name` cannot be downloaded now (offline, hub silent)."""
    info = _info(name)
    size = registry.human_bytes(info.download_bytes)
    if offline():
        raise ModelUnavailable(
            f"{name} ({info.hub_id}, {size}) is not in the local Hugging Face cache and HF_HUB_OFFLINE "
            f"is set; prefetch it on a connected machine: {prefetch_hint(name)}")
    if not hub_reachable():
        raise ModelUnavailable(
            f"{name} ({info.hub_id}, {size}) is not in the local Hugging Face cache and the hub cannot "
            f"be reached; prefetch it while online: {prefetch_hint(name)}")


def _hub_files(hub_id: str) -> list[str]:
    """The files worth downloading: top-level config/tokenizer files and one weights format."""
    from huggingface_hub import HfApi

    files = set(HfApi().list_repo_files(hub_id))
    weights = next((f for f in WEIGHT_FILES if f in files), None)
    if weights is None:
        raise ModelUnavailable(f"{hub_id} has no {' or '.join(WEIGHT_FILES)} on the hub")
    return [f for f in AUX_FILES if f in files] + [weights]


def download(name: str) -> str:
    """Put registry model `name` in the standard HF cache (no-op if there); its snapshot folder."""
    from huggingface_hub import snapshot_download

    info = _info(name)
    if info.hub_id is None:
        if is_available(name):
            return info.path
        raise ModelUnavailable(f"{name} ships with the repository ({info.path}) but is missing there")
    with _locks_guard:
        lock = _download_locks.setdefault(name, threading.Lock())
    with lock:  # one download per model per process; the hub's file locks cover other processes
        if is_available(name):
            return os.path.dirname(_cached(info.hub_id, "config.json"))
        check_online(name)
        try:
            return snapshot_download(info.hub_id, allow_patterns=_hub_files(info.hub_id),
                                     cache_dir=hub_cache_dir(), etag_timeout=5)
        except ModelUnavailable:
            raise
        except Exception as e:  # network drop, repo gone, disk full: one line
            raise ModelUnavailable(f"downloading {name} ({info.hub_id}) failed: {_one_line(e)}") from e


def downloaded_bytes(name: str) -> int:
    """Bytes of `name` in the HF cache so far, partial files included (for a progress bar)."""
    info = _info(name)
    if info.hub_id is None:
        return info.download_bytes
    blobs = Path(hub_cache_dir()) / ("models--" + info.hub_id.replace("/", "--")) / "blobs"
    try:
        return sum(e.stat().st_size for e in os.scandir(blobs) if e.is_file())
    except OSError:
        return 0


def estimate_bytes(name_or_path: str) -> int:
    """Memory a loaded model will hold (fp32), known before loading: registry, or the weights' headers."""
    info = registry.REGISTRY.get(name_or_path)
    if info is not None:
        return info.memory_bytes
    path = Path(name_or_path).expanduser()
    try:
        params = sum(registry.safetensors_params(f)[0] for f in path.glob("*.safetensors"))
    except (OSError, ValueError, KeyError, TypeError, struct.error) as e:  # truncated or not a header
        raise ModelUnavailable(f"cannot read the weights of {name_or_path}: {_one_line(e)}") from e
    params += sum(f.stat().st_size // 4 for f in path.glob("pytorch_model*.bin"))
    return registry.memory_estimate(params)


def canonical(name_or_path: str) -> str:
    """A registry name as is; a directory as its absolute path (one cache key per model)."""
    if name_or_path in registry.REGISTRY:
        return name_or_path
    return str(Path(name_or_path).expanduser().resolve())


def _info(name: str) -> registry.ModelInfo:
    try:
        return registry.info(name)
    except KeyError as e:
        raise ModelUnavailable(e.args[0]) from None


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")


# ---------------------------------------------------------------- loading

def kind_of(config) -> str:
    """'encoder' (bidirectional, masked LM) or 'decoder' (causal, left to right), from a config."""
    return "encoder" if config.model_type in ENCODER_TYPES else "decoder"


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
        if not is_available(name_or_path):
            download(name_or_path)
        # local_files_only: the files are cached now; no update check that could hang on bad wifi
        return name_or_path, info.hub_id, {"cache_dir": hub_cache_dir(), "local_files_only": True}
    if info is not None:  # a course model shipped in the repo
        if not is_available(name_or_path):
            raise ModelUnavailable(
                f"{name_or_path} is not in this checkout (expected a model in {info.path})")
        return name_or_path, info.path, {}
    path = Path(name_or_path).expanduser()
    if not path.exists():
        raise ModelUnavailable(f"unknown model {name_or_path!r}: not a registry name "
                               f"({', '.join(registry.REGISTRY)}) and no such directory")
    if not (path / "config.json").is_file():
        raise ModelUnavailable(f"{name_or_path} is not a Hugging Face model directory (no config.json)")
    return str(path.resolve()), str(path.resolve()), {}


def load(name_or_path: str) -> Loaded:
    """The model and tokenizer for a registry name or local HF directory: eval, no grads, eager."""
    name, source, kw = _source(name_or_path)
    import pickle

    import torch
    from safetensors import SafetensorError
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    # What a broken checkpoint raises: a truncated .safetensors (SafetensorError), a truncated
    # pytorch_model.bin (RuntimeError from torch's zip reader, EOFError) or a file that is not one
    # (UnpicklingError); besides missing or malformed files (OSError, ValueError, KeyError).
    broken = (OSError, ValueError, KeyError, RuntimeError, EOFError, SafetensorError, pickle.UnpicklingError)

    try:
        config = AutoConfig.from_pretrained(source, **kw)
        kind = kind_of(config)
        auto = AutoModelForMaskedLM if kind == "encoder" else AutoModelForCausalLM
        model = auto.from_pretrained(source, config=config, attn_implementation="eager",
                                     dtype=torch.float32, **kw)
        tokenizer = AutoTokenizer.from_pretrained(source, **kw)
    except broken as e:
        raise ModelUnavailable(f"cannot load {name}: {_one_line(e)}") from e
    model.eval()
    model.requires_grad_(False)
    return Loaded(name=name, model=model, tokenizer=tokenizer, kind=kind, context=context_of(config),
                  n_layer=config.num_hidden_layers, n_head=config.num_attention_heads,
                  n_embd=config.hidden_size)
