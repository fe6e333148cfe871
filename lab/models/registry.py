"""The models the course uses: hub id, kind, size, memory, context and the chapter each one serves.

Feeds the sidebar's model picker on every page and `python -m lab models`.

Pure Python (no torch), so the sidebar and `python -m lab models` can list models cheaply.

Where the numbers come from (see docs/models.md):
- params: the parameters of the class `lab.models.load` builds (tied embeddings counted once),
  counted by building each architecture's config on torch's meta device (tests/test_models.py,
  test_registry_numbers_match_the_architectures).
- download_bytes: the weights file the hub serves plus the config/tokenizer files. Exact byte sizes
  of the weights file where published (gpt2 548,105,171; distilgpt2 352,824,413; roberta-base
  498,818,054); otherwise computed from the checkpoint's tensor shapes (fp32, with the `attn.bias`
  mask buffers the original OpenAI-era checkpoints carry) plus the safetensors header, which
  reproduces the published sizes above to within 100 bytes.
- memory_bytes: fp32 weights as loaded (params x 4) plus a working margin (tokenizer, activations
  of one short forward pass, allocator slack).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"  # course models shipped in the repo
MB = 1_000_000
GPT2_TOKENIZER_FILES = 2_855_000  # vocab.json + merges.txt + tokenizer.json + configs (GPT-2 BPE)


@dataclass(frozen=True)
class ModelInfo:
    """One model the course uses; `path` is set for models shipped in the repo (no hub id)."""

    name: str
    hub_id: str | None
    kind: str  # "decoder" | "encoder"
    params: int
    download_bytes: int
    memory_bytes: int
    context: int
    chapter: str
    label: str
    path: str | None = None


def memory_estimate(params: int) -> int:
    """Bytes a loaded model holds: fp32 weights plus ~10% and 64 MB of working margin."""
    return int(params * 4 * 1.10) + 64 * MB


def _hub(name, hub_id, kind, params, weights_bytes, context, chapter, label, extra=GPT2_TOKENIZER_FILES):
    return ModelInfo(name, hub_id, kind, params, weights_bytes + extra, memory_estimate(params),
                     context, chapter, label)


def safetensors_params(path: Path) -> tuple[int, int]:
    """(parameter count, bytes per value) read from a .safetensors header, without torch."""
    widths = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
              "BOOL": 1}
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    count, width = 0, 4
    for key, t in header.items():
        if key == "__metadata__":
            continue
        size = 1
        for dim in t["shape"]:
            size *= dim
        count += size
        width = widths.get(t["dtype"], 4)
    return count, width


def _course(name: str, kind: str, chapter: str, label: str) -> ModelInfo:
    """A course model shipped under models/<name>/: real numbers when the directory is there."""
    path = MODELS_DIR / name
    params, download, context = 5_000_000, 10 * MB, 256  # a stand-in when the model's files are not in the checkout
    if (path / "config.json").is_file():
        download = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
        weights = sorted(path.glob("*.safetensors"))
        if weights:
            params = sum(safetensors_params(w)[0] for w in weights)
        cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
        positions = cfg.get("n_positions") or cfg.get("max_position_embeddings") or context
        context = positions - 2 if cfg.get("model_type") == "roberta" else positions
    return ModelInfo(name, None, kind, params, download, memory_estimate(params), context, chapter,
                     label, str(path))


_ENTRIES = [
    _course("course-gpt2", "decoder", "03, 04", "Course model: small GPT-2, offline"),
    _course("course-roberta", "encoder", "04, 11", "Course model: small RoBERTa, offline"),
    # course-gpt2's smaller siblings (same tokenizer, corpus and context): the offline scale curve
    _course("course-gpt2-2x128", "decoder", "06", "Course model: GPT-2, 2 layers × 128 wide, offline"),
    _course("course-gpt2-1x64", "decoder", "06", "Course model: GPT-2, 1 layer × 64 wide, offline"),
    _hub("gpt2", "openai-community/gpt2", "decoder", 124_439_808, 548_105_171, 1024, "01, 03, 04, 06",
         "GPT-2 small (124M)"),
    _hub("gpt2-medium", "openai-community/gpt2-medium", "decoder", 354_823_168, 1_519_984_968, 1024,
         "06", "GPT-2 medium (355M)"),
    _hub("gpt2-large", "openai-community/gpt2-large", "decoder", 774_030_080, 3_247_159_080, 1024, "06",
         "GPT-2 large (774M)"),
    _hub("gpt2-xl", "openai-community/gpt2-xl", "decoder", 1_557_611_200, 6_431_829_968, 1024, "06",
         "GPT-2 XL (1.5B)"),
    _hub("distilgpt2", "distilbert/distilgpt2", "decoder", 81_912_576, 352_824_413, 1024, "06",
         "DistilGPT-2 (82M)"),
    _hub("openai-gpt", "openai-community/openai-gpt", "decoder", 116_534_784, 478_736_208, 512, "09",
         "GPT-1 (117M)", extra=2_550_000),
    _hub("roberta-base", "FacebookAI/roberta-base", "encoder", 124_697_433, 498_818_054, 512, "10, 11",
         "RoBERTa base (125M)", extra=2_720_000),
    # pytorch_model.bin, "487M" (MiB) on the model card: 124M fp32 weights + uint8 attn.bias masks.
    _hub("gpt2-small-portuguese", "pierreguillou/gpt2-small-portuguese", "decoder", 124_439_808,
         510_400_000, 1024, "01", "GPT-2 small, Portuguese (124M)"),
]
REGISTRY: dict[str, ModelInfo] = {m.name: m for m in _ENTRIES}


def info(name: str) -> ModelInfo:
    """The registry entry for `name`; KeyError naming the known models otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(REGISTRY)}") from None


def human_bytes(n: int) -> str:
    """'548 MB', '1.52 GB', '10.2 MB': decimal units, three significant figures."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            v = n / size
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return f"{n} B"
