"""GPT-2's forward pass in plain torch, written to be read beside openai/gpt-2's src/model.py (chapter 13).

The functions carry the original's names and do what it does on one sequence (`block` also takes a batch, [B, T, C]).
Shapes in the comments: T tokens in this call, P tokens already in the cache (`past`), S = P + T,
C = n_embd, H = n_head, D = C / H, V = vocabulary, L = n_layer.

The weights are read from a loaded GPT-2-family transformers model (`weights`) and never written: every
step makes new tensors. `rec(name, x)` hands a step's output to a trace (lab.trace) and returns it as it
is; `nothing`, the default, records nothing.
"""

from __future__ import annotations

import math

import torch


class Nothing:
    """The recorder when nobody records: every step's value passes through untouched."""

    def __call__(self, name: str, x: torch.Tensor) -> torch.Tensor:
        return x

    def layer(self, i: int) -> Nothing:
        return self


nothing = Nothing()


def gelu(x):
    """GELU in the tanh form GPT-2 was trained with (transformers calls it "gelu_new")."""
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def norm(x, g, b, eps=1e-5):
    """Layer norm: each row to mean 0 and variance 1, then the learned scale g and shift b."""
    u = x.mean(-1, keepdim=True)  # [T, 1]
    s = ((x - u) ** 2).mean(-1, keepdim=True)  # [T, 1]
    return (x - u) * torch.rsqrt(s + eps) * g + b


def split_states(x, n):
    """The last axis cut into n pieces: [..., C] -> [..., n, C / n]."""
    *start, m = x.shape
    return x.reshape(*start, n, m // n)


def merge_states(x):
    """The last two axes glued back: [..., a, b] -> [..., a * b]."""
    *start, a, b = x.shape
    return x.reshape(*start, a * b)


def conv1d(x, w, b):
    """GPT-2's "conv1d" has a kernel of width 1: a matrix product plus a bias, [T, C_in] -> [T, C_out]."""
    return x @ w + b


def attention_mask(nd, ns):
    """True where query i (one of the nd new tokens) may see key j (one of all ns): the lower triangle
    counted from the lower right corner, so new tokens see the whole past."""
    i = torch.arange(nd)[:, None]  # [T, 1]
    j = torch.arange(ns)  # [S]
    return i >= j - ns + nd  # [T, S]


def attn(x, p, n_head, past, rec):
    """Masked multi-head self-attention; the output and `present`, this layer's keys and values so far."""
    c = rec("attn.c_attn", conv1d(x, p["attn.c_attn.w"], p["attn.c_attn.b"]))  # [T, 3C]
    q, k, v = c.chunk(3, dim=-1)  # 3 x [T, C]
    q = rec("attn.q", split_states(q, n_head).transpose(-3, -2))  # split_heads: [H, T, D]
    k = rec("attn.k", split_states(k, n_head).transpose(-3, -2))  # [H, T, D]
    v = rec("attn.v", split_states(v, n_head).transpose(-3, -2))  # [H, T, D]
    if past is not None:
        k = torch.cat([past[0], k], dim=-2)  # [H, S, D]
        v = torch.cat([past[1], v], dim=-2)  # [H, S, D]
    present = rec("attn.present", torch.stack([k, v]))  # [2, H, S, D]
    w = rec("attn.scores", q @ k.transpose(-1, -2) / math.sqrt(v.shape[-1]))  # [H, T, S]
    w = rec("attn.masked", w.masked_fill(~attention_mask(*w.shape[-2:]), float("-inf")))  # [H, T, S]
    w = rec("attn.weights", torch.softmax(w, dim=-1))  # [H, T, S]
    a = rec("attn.mixed", w @ v)  # [H, T, D]
    a = rec("attn.merge_heads", merge_states(a.transpose(-3, -2)))  # [T, C]
    return rec("attn.c_proj", conv1d(a, p["attn.c_proj.w"], p["attn.c_proj.b"])), present  # [T, C]


def mlp(x, p, rec):
    """The feed-forward layer: widen to 4C, GELU, back to C."""
    h = rec("mlp.c_fc", conv1d(x, p["mlp.c_fc.w"], p["mlp.c_fc.b"]))  # [T, 4C]
    h = rec("mlp.gelu", gelu(h))  # [T, 4C]
    return rec("mlp.c_proj", conv1d(h, p["mlp.c_proj.w"], p["mlp.c_proj.b"]))  # [T, C]


def block(x, p, n_head, eps, past, rec):
    """One transformer block, layer norm first: x + attn(norm(x)), then x + mlp(norm(x))."""
    a, present = attn(rec("ln_1", norm(x, p["ln_1.g"], p["ln_1.b"], eps)), p, n_head, past, rec)  # [T, C]
    x = rec("x_plus_attn", x + a)  # [T, C]
    m = mlp(rec("ln_2", norm(x, p["ln_2.g"], p["ln_2.b"], eps)), p, rec)  # [T, C]
    return rec("x_plus_mlp", x + m), present  # [T, C]


def positions_for(tokens, past_length):
    """The positions of the new tokens: they come after the past ones."""
    return past_length + torch.arange(len(tokens))  # [T]


def model(w, X, past=None, rec=nothing):
    """Logits [T, V] for the ids X [T], and `present` [L, 2, H, S, D]: the key-value cache with X added,
    to pass back as `past` with the next token."""
    past_length = 0 if past is None else past.shape[-2]
    h = rec("wte", w["wte"][X])  # [T, C]: one row of the token embedding per id
    h = rec("wte_plus_wpe", h + w["wpe"][positions_for(X, past_length)])  # [T, C]: plus its position's row
    presents = []
    for layer, p in enumerate(w["h"]):
        h, present = block(h, p, w["n_head"], w["eps"], None if past is None else past[layer], rec.layer(layer))
        presents.append(present)  # [2, H, S, D]
    h = rec("ln_f", norm(h, w["ln_f.g"], w["ln_f.b"], w["eps"]))  # [T, C]
    logits = rec("logits", h @ w["wte"].T)  # [T, V]: the output layer is wte itself (tied)
    return logits, rec("present", torch.stack(presents))  # [L, 2, H, S, D]
