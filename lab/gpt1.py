"""GPT-1's forward pass in plain torch, built from lab.gpt2's pieces (chapters 04, 05, 09).

GPT-1 (Radford et al. 2018; transformers' OpenAIGPT) has GPT-2's attention (lab.gpt2.attn: causal, scaled by
sqrt(D)) and MLP (lab.gpt2.mlp: the tanh GELU, transformers' "gelu" for this model), with three differences:
- the layer norms come AFTER each sub-block (post-LN): n = norm(x + attn(x)), then out = norm(n + mlp(n));
- there is no final layer norm (ln_f): the last block's output goes straight to the output layer;
- the embeddings are named tokens_embed and positions_embed (the output layer is tokens_embed itself, tied).

Same conventions as lab.gpt2: the weights are the model's own tensors, only read; `rec(name, x)` hands each step to
a recorder. `family(model)` gives a loaded decoder's forward, GPT-1's or GPT-2's, with its weights, as the heads
experiments (lab.heads, lab.patching) run it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from lab.gpt2 import attn, mlp, norm, nothing, positions_for

BLOCK_OUT = "ln_2"  # post-LN: a block's output is its second layer norm
FAMILIES = ("gpt2", "openai-gpt")  # config.model_type of the decoders whose forward lab writes


def weights(model) -> dict:
    """The parameters GPT-1's forward reads, under lab.gpt2's names (no "ln_f.*": GPT-1 has none)."""
    t, cfg = model.transformer, model.config
    from lab.trace import block_weights

    layers = [block_weights(b) for b in t.h]
    return {"wte": t.tokens_embed.weight, "wpe": t.positions_embed.weight, "h": layers, "n_head": cfg.n_head,
            "eps": cfg.layer_norm_epsilon}


def block(x, p, n_head, eps, past, rec):
    """One GPT-1 block, layer norm after: n = norm(x + attn(x)), then norm(n + mlp(n)); [.., T, C] -> [.., T, C]."""
    a, present = attn(x, p, n_head, past, rec)  # [T, C]
    n = rec("ln_1", norm(rec("x_plus_attn", x + a), p["ln_1.g"], p["ln_1.b"], eps))  # [T, C]
    m = mlp(n, p, rec)  # [T, C]
    return rec(BLOCK_OUT, norm(rec("n_plus_mlp", n + m), p["ln_2.g"], p["ln_2.b"], eps)), present  # [T, C]


def final(w, h):
    """Nothing between GPT-1's last block and its output layer (no ln_f): h as it is."""
    return h


def model(w, X, past=None, rec=nothing):
    """Logits [T, V] for the ids X [T], and `present` [L, 2, H, S, D] (the keys and values, as lab.gpt2.model)."""
    past_length = 0 if past is None else past.shape[-2]
    h = rec("wte", w["wte"][X])  # [T, C]
    h = rec("wte_plus_wpe", h + w["wpe"][positions_for(X, past_length)])  # [T, C]
    presents = []
    for layer, p in enumerate(w["h"]):
        h, present = block(h, p, w["n_head"], w["eps"], None if past is None else past[layer], rec.layer(layer))
        presents.append(present)
    logits = rec("logits", final(w, h) @ w["wte"].T)  # [T, V]: tied to tokens_embed
    return logits, rec("present", torch.stack(presents))


def _ln_f(w, h):
    """GPT-2's final layer norm: what runs between its last block and its output layer."""
    return norm(h, w["ln_f.g"], w["ln_f.b"], w["eps"])


@dataclass(frozen=True)
class Family:
    """One architecture's forward as the heads experiments use it: `model(w, X, past, rec)`, `block(x, p, n_head,
    eps, past, rec)`, `final(w, h)` (what runs between the last block and the output layer), `out` (the name of the
    step that is a block's output) and `w` (the model's weights under lab.gpt2's names)."""

    model: Callable
    block: Callable
    final: Callable
    out: str
    w: dict


def family(decoder) -> Family:
    """A loaded decoder's forward: GPT-1's (this module) for model_type "openai-gpt", GPT-2's (lab.gpt2 on
    lab.trace.weights) for "gpt2"; ValueError for any other (callers check first)."""
    kind = decoder.config.model_type
    if kind == "openai-gpt":
        return Family(model, block, final, BLOCK_OUT, weights(decoder))
    if kind == "gpt2":
        from lab import gpt2
        from lab.trace import weights as gpt2_weights

        return Family(gpt2.model, gpt2.block, _ln_f, "x_plus_mlp", gpt2_weights(decoder))
    raise ValueError(f"lab writes the forward of {FAMILIES}, not {kind}")
