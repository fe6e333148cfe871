"""Attention weights of every layer and head, from one forward pass: [layer, head, query, key].

For the attention page (chapters 03, 04) and, through lab.causal, the causal-mask page.

The ids are exactly what the model's tokenizer gives (`tokenizer(text)`): nothing is prepended for
GPT-2 or GPT-1, and RoBERTa sees its own <s> ... </s>. So every number reproduces with plain
transformers code, and GPT-2's habit of parking attention on the first token (an "attention
sink") shows up as it is in the "first" column of the per-head summaries.

The causal mask is a parameter, never a patch: GPT-2 always gets an explicit 4D additive mask,
shape (B, 1, T, T) — the lower triangle (or, with causal=False, nothing) combined with key padding —
which transformers 5.x uses as is (`create_causal_mask` returns a 4D mask untouched and eager
attention adds it to the scores). So no call depends on, or writes, shared state: transformers'
`is_causal=` keyword writes the config during the call and is never used. GPT-1 bakes its mask into
each layer (a fixed lower-triangular buffer `bias`, applied before any attention_mask), so it runs
with the mask only.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from lab.errors import LabError
from lab.models import context_of, kind_of

# Decoders (config.model_type) that can drop the causal mask through a 4D attention_mask alone
# (checked in transformers 5.24's modeling code).
NO_MASK_OK = ("gpt2",)
FLOAT32 = 4  # bytes per attention weight


class MaskUnsupported(LabError):
    """The model cannot run without its causal mask unless it is changed, which the lab never does: reason
    "mask_unsupported" (model_type)."""

    reason_default = "mask_unsupported"


def shapes(model) -> dict:
    """n_layer, n_head, n_embd and head_dim read from the config (n_embd = n_head x head_dim)."""
    cfg = model.config
    n_layer = cfg.num_hidden_layers
    n_head, n_embd = cfg.num_attention_heads, cfg.hidden_size
    return {"n_layer": n_layer, "n_head": n_head, "n_embd": n_embd, "head_dim": n_embd // n_head}


def split(model, n_tokens: int) -> dict:
    """The head split and the shapes of Q, K, V (per layer) for n_tokens tokens, batch of one."""
    s = shapes(model)
    h, d, e = s["n_head"], s["head_dim"], s["n_embd"]
    return {**s, "n_tokens": n_tokens,
            "qkv_projection": [e, 3 * e] if kind_of(model.config) == "decoder" else [e, e],
            "x": [1, n_tokens, e],                  # (B, T, C) into the layer
            "q": [1, h, n_tokens, d], "k": [1, h, n_tokens, d], "v": [1, h, n_tokens, d],  # (B, nh, T, hs)
            "scores": [1, h, n_tokens, n_tokens]}   # (B, nh, T, T) = q @ k^T / sqrt(hs)


def additive_mask(valid, causal: bool, dtype):
    """(B, 1, T, T) float mask: 0 where a query may look at a key, the dtype's minimum elsewhere.

    `valid` is (B, T) bool (False on right padding); causal adds the lower triangle on top.
    """
    import torch

    b, t = valid.shape
    allowed = valid[:, None, None, :].expand(b, 1, t, t)  # key padding
    if causal:
        allowed = allowed & torch.ones(t, t, dtype=torch.bool).tril()
    zero = torch.zeros((), dtype=dtype)
    return torch.where(allowed, zero, torch.finfo(dtype).min)  # (B, 1, T, T)


def can_drop_mask(model) -> bool:
    """Whether this decoder can run without its causal mask while staying unchanged (GPT-2: yes, GPT-1: no)."""
    return kind_of(model.config) == "decoder" and model.config.model_type in NO_MASK_OK


def run(model, batch: list[list[int]], causal: bool = True, hidden: bool = False, logits: bool = False):
    """One forward pass over a right-padded batch of id lists; the model's output object.

    Without `logits` only the base model runs (the LM head is skipped: attention does not need it).
    Decoders get an explicit 4D mask (GPT-2) or their built-in one (GPT-1); encoders a 2D padding
    mask. Raises MaskUnsupported for causal=False on a decoder that cannot drop its mask.
    """
    import torch

    if model.config._attn_implementation != "eager":
        raise ValueError("attention weights need the model loaded with attn_implementation='eager'")
    if not batch or not all(batch):
        raise ValueError("nothing to run: empty ids")
    t = max(len(ids) for ids in batch)
    if t > context_of(model.config):
        raise ValueError(f"{t} tokens is more than the model's context of {context_of(model.config)}")
    pad = model.config.pad_token_id if model.config.pad_token_id is not None else 0
    input_ids = torch.tensor([ids + [pad] * (t - len(ids)) for ids in batch])  # (B, T)
    valid = torch.tensor([[True] * len(ids) + [False] * (t - len(ids)) for ids in batch])  # (B, T)
    mtype = model.config.model_type
    if can_drop_mask(model):
        mask = additive_mask(valid, causal, model.dtype)  # (B, 1, T, T)
    elif kind_of(model.config) == "decoder" and not causal:
        raise MaskUnsupported(f"{mtype} builds its causal mask into every attention layer; running it "
                              "without the mask would mean changing the shared model, which the lab never does",
                              model_type=mtype)
    else:
        mask = valid.long()  # (B, T): padding only; GPT-1 adds its own causal mask, encoders none
    net = model if logits else model.base_model
    with torch.inference_mode():
        return net(input_ids=input_ids, attention_mask=mask, output_attentions=True, output_hidden_states=hidden)


def max_tokens(n_layer: int, n_head: int, budget_bytes: int) -> int:
    """The most tokens whose weights [layer, head, T, T] (float32) fit in budget_bytes."""
    return int((budget_bytes / (n_layer * n_head * FLOAT32)) ** 0.5)


def each_layer(out) -> Iterator[np.ndarray]:
    """The weights of a forward pass one layer at a time, as float32 arrays (B, H, T, T).

    Takes the tensors out of `out` (its `attentions` becomes None) and lets each one go as soon as
    the next layer is asked for, so a caller that keeps only what it needs never holds two copies.
    """
    layers = list(out.attentions)
    out["attentions"] = None
    for i in range(len(layers)):
        tensor, layers[i] = layers[i], None
        yield tensor.float().numpy()  # (B, H, T, T); shares the tensor's memory
        del tensor


def stack(out) -> np.ndarray:
    """out.attentions -> one float32 array (B, L, H, T, T), filled layer by layer into one allocation."""
    n_layer = len(out.attentions)
    att = None
    for i, layer in enumerate(each_layer(out)):
        if att is None:
            att = np.empty((layer.shape[0], n_layer, *layer.shape[1:]), np.float32)  # (B, L, H, T, T)
        att[:, i] = layer
    return att


def attention_by_layer(model, ids: list[int], causal: bool = True) -> Iterator[np.ndarray]:
    """Attention weights (H, T, T) of each layer in turn, from one forward pass over ids.

    For an encoder there is no causal mask to toggle: `causal` is ignored.
    """
    out = run(model, [list(ids)], causal=causal or kind_of(model.config) == "encoder")
    for layer in each_layer(out):
        yield layer[0]  # (H, T, T)


def attention(model, ids: list[int], causal: bool = True) -> np.ndarray:
    """Attention weights [layer, head, query, key] (float32) of one forward pass over ids."""
    att = None
    for i, layer in enumerate(attention_by_layer(model, ids, causal)):  # (H, T, T)
        if att is None:
            att = np.empty((model.config.num_hidden_layers, *layer.shape), np.float32)  # (L, H, T, T)
        att[i] = layer
    return att


def layer_summary(layer_att: np.ndarray, layer: int) -> list[dict]:
    """Per head of one layer's weights (H, T, T), averaged over queries 1..T-1: entropy (bits),
    weight on the previous token, on the first, on itself.

    Query 0 is left out: under a causal mask it can only look at itself, which says nothing about
    the head. With a single token every average is NaN.
    """
    n_head, t, _ = layer_att.shape
    q = np.arange(1, t)
    a = layer_att[:, 1:, :]  # (H, T-1, T): queries 1..T-1
    plogp = a * np.log2(np.where(a > 0, a, 1))  # 0 log 0 = 0
    measures = {"entropy": -plogp.sum(-1, dtype=np.float64),  # (H, T-1)
                "previous": a[:, q - 1, q - 1],  # query q, key q-1
                "first": a[:, :, 0],
                "self": a[:, q - 1, q]}
    return [{"layer": layer, "head": head,
             **{k: float(v[head].mean(dtype=np.float64)) if t > 1 else float("nan") for k, v in measures.items()}}
            for head in range(n_head)]


def head_summary(att: np.ndarray) -> list[dict]:
    """layer_summary of every layer of att [layer, head, T, T], layer by layer."""
    return [row for layer in range(att.shape[0]) for row in layer_summary(att[layer], layer)]
