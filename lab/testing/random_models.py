"""Random-weight models in Hugging Face format, built from configs and saved locally.

Tests and benchmarks use these instead of downloads: the hub is unreachable from the course
machines, and a random model has the real shapes and code paths. Sizes: "tiny" (fast tests) and
"small" (GPT-2 small's real shapes: 12 layers x 12 heads x 768, 50257 tokens, 1024 positions).
"""

from __future__ import annotations

from pathlib import Path

from lab.encodings import hf_gpt2_tokenizer, hf_roberta_tokenizer

ARCHS = ("gpt2", "openai-gpt", "roberta")
SIZES = {
    "tiny": dict(n_layer=2, n_head=4, n_embd=32, n_positions=64),
    "small": dict(n_layer=12, n_head=12, n_embd=768, n_positions=1024),
}
# The hub models the Space bakes in (lab.space.HUB_MODELS), as random models of their real shapes: (arch, what differs
# from "small"). DistilGPT-2 is GPT-2 small with 6 layers; GPT-1 and RoBERTa base read 512 positions. GPT-1 keeps
# GPT-2's tokenizer here (its own BPE, 40,478 tokens, is not shipped offline), so its embedding is 12 % larger.
HUB_LIKE = {
    "gpt2": ("gpt2", {}),
    "distilgpt2": ("gpt2", {"n_layer": 6}),
    "openai-gpt": ("openai-gpt", {"n_positions": 512}),
    "roberta-base": ("roberta", {"n_positions": 512}),
}


def build(arch: str, size: str = "tiny", seed: int = 0, **changes):
    """(model, tokenizer) with random weights for `arch` at `size` (`changes` replacing some of its shapes: n_layer,
    n_positions...), in eval mode."""
    import torch
    from transformers import (
        GPT2Config,
        GPT2LMHeadModel,
        OpenAIGPTConfig,
        OpenAIGPTLMHeadModel,
        RobertaConfig,
        RobertaForMaskedLM,
    )

    if arch not in ARCHS or size not in SIZES:
        raise ValueError(f"arch must be one of {ARCHS}, size one of {tuple(SIZES)}")
    torch.manual_seed(seed)
    s = SIZES[size] | changes
    if arch == "gpt2":
        tok = hf_gpt2_tokenizer()
        model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), **s))
    elif arch == "openai-gpt":
        tok = hf_gpt2_tokenizer()  # GPT-1's own BPE is not shipped offline; shapes are what matter
        model = OpenAIGPTLMHeadModel(OpenAIGPTConfig(vocab_size=len(tok), **s))
    else:
        tok = hf_roberta_tokenizer()
        cfg = RobertaConfig(vocab_size=len(tok), num_hidden_layers=s["n_layer"],
                            num_attention_heads=s["n_head"], hidden_size=s["n_embd"],
                            intermediate_size=4 * s["n_embd"],
                            max_position_embeddings=s["n_positions"] + 2,
                            pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                            eos_token_id=tok.eos_token_id)
        model = RobertaForMaskedLM(cfg)
    return model.eval(), tok


def save(arch: str, path: str | Path, size: str = "tiny", seed: int = 0, **changes) -> Path:
    """Build a random model and save it with its tokenizer files to `path`; return the path."""
    path = Path(path)
    model, tok = build(arch, size, seed, **changes)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def save_hub_like(name: str, path: str | Path, seed: int = 0) -> Path:
    """A random model of the hub model `name`'s shapes (HUB_LIKE), saved to `path` (made once, reused when there)."""
    path = Path(path)
    if not ((path / "model.safetensors").exists() and (path / "config.json").exists()):
        arch, changes = HUB_LIKE[name]
        save(arch, path, "small", seed, **changes)
    return path
