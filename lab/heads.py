"""Heads at work: the model copies (induction heads), and a head knocked out (chapters 04, 05).

For the "Heads at work" page and `python -m lab heads copy|knockout`.

- The repeated sequence (Olsson et al. 2022): `n` token ids drawn without replacement, seeded by a
  per-call `torch.Generator`, from the rows the model actually trained (lab.learned's rarely trained
  rows and the special tokens left out), written twice after the end-of-text token (the start every
  GPT-2 training window may begin with). A model that copies predicts the second copy far better than
  the first: the loss per position (bits) falls.
- Induction score of a head: the mean attention from each query of the second copy (positions
  n+1..2n) to the token after that token's first occurrence (key q - n + 1). TransformerLens'
  tutorial takes the whole offset diagonal, which adds the last two queries of the first copy; here
  only the second copy counts. Previous-token score: the mean attention from query q to key q - 1
  over q = 1..T-1 (lab.attention.layer_summary's "previous"). Both read transformers' own
  `output_attentions` (eager), through lab.attention.
- Knock a head out: the model's forward is run in plain torch on its own weights (lab.gpt2.model; for GPT-1,
  lab.gpt1.model, the same pieces with the layer norms after each sub-block and no ln_f),
  with a recorder that replaces the chosen heads' slice of the attention output before c_proj
  ("attn.mixed", [H, T, D]) by zeros ("zero") or by that head's mean over the positions of the same
  text ("mean": the reference set is the text itself). Nothing of the shared model is written, hooked
  or toggled: the weights are only read, so any number of sessions can knock heads out at once.
"""

from __future__ import annotations

import math

import numpy as np

from lab.errors import LabError
from lab.models import context_of, require_decoder
from lab.text import check_fits

LENGTH = 20  # tokens in one copy of the repeated sequence (the page's default)
SEED = 0
MODES = ("zero", "mean")
LN2 = math.log(2)


class HeadsError(LabError):
    """A request the heads experiments cannot run: reason "empty_text", "one_token" (tokens), "length" (length,
    most), "bad_head" (layer, head, n_layer, n_head), "bad_mode" (mode), "not_gpt2" (model_type), "encoder",
    "too_long"."""


def check_model(model) -> None:
    """A GPT-2 or GPT-1 decoder (lab.gpt2 and lab.gpt1 write their forwards), else HeadsError."""
    from lab.gpt1 import FAMILIES

    require_decoder(model, HeadsError, "knocking heads out")
    if model.config.model_type not in FAMILIES:
        raise HeadsError(f"the heads experiments run GPT-2's and GPT-1's own forwards (lab.gpt2, lab.gpt1); "
                         f"{model.config.model_type} is neither", "not_gpt2", model_type=model.config.model_type)


def check_ids(model, ids: list[int]) -> None:
    """Two tokens at least (a loss needs a next token), and no more than the model's context."""
    if not ids:
        raise HeadsError("the text is empty: type some text", "empty_text")
    if len(ids) < 2:
        raise HeadsError("the text is one token: a loss needs at least two", "one_token", tokens=len(ids))
    check_fits(len(ids), context_of(model.config), HeadsError)


def check_heads(model, heads: list[tuple[int, int]]) -> None:
    """Every (layer, head) inside the model, else HeadsError naming the first one that is not."""
    n_layer, n_head = model.config.n_layer, model.config.n_head
    for layer, head in heads:
        if not (0 <= layer < n_layer and 0 <= head < n_head):
            raise HeadsError(f"there is no head {layer}.{head}: the model has layers 0-{n_layer - 1} and heads "
                             f"0-{n_head - 1}", "bad_head", layer=layer, head=head, n_layer=n_layer, n_head=n_head)


def usable_ids(model, tokenizer) -> np.ndarray:
    """The ids the repeated sequence draws from: every row of the vocabulary the model trained (lab.learned's
    rarely trained rows and the special tokens left out), sorted."""
    from lab import learned

    vocab = min(model.get_input_embeddings().weight.shape[0], len(tokenizer))
    out = np.ones(vocab, dtype=bool)
    out[np.asarray(learned.rarely_trained(model, tokenizer)["ids"], dtype=np.int64)] = False
    out[[i for i in tokenizer.all_special_ids if i < vocab]] = False
    return np.flatnonzero(out)


def repeated(model, tokenizer, length: int = LENGTH, seed: int = SEED) -> list[int]:
    """[end-of-text] + r + r: r is `length` distinct well-trained ids drawn with a generator seeded by `seed`."""
    import torch

    most = (context_of(model.config) - 1) // 2
    if not 2 <= length <= most:
        raise HeadsError(f"the repeated sequence takes 2 to {most} tokens per copy, not {length}", "length",
                         length=length, most=most)
    pool = usable_ids(model, tokenizer)
    g = torch.Generator().manual_seed(seed)
    r = pool[torch.randperm(len(pool), generator=g)[:length].numpy()].tolist()
    start = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    return start + r + r


def scores(att: np.ndarray, length: int | None = None) -> dict:
    """Per layer x head (L, H) from attention [L, H, T, T]: "previous" (mean of att[q, q-1], q = 1..T-1) and,
    for a repeated sequence whose copies are `length` long and end the ids, "induction" (mean over the second
    copy's queries q of att[q, q - length + 1])."""
    t = att.shape[-1]
    q = np.arange(1, t)
    out = {"previous": att[..., q, q - 1].mean(-1, dtype=np.float64)}
    if length is not None:
        q2 = np.arange(t - length, t)  # the second copy's positions
        out["induction"] = att[..., q2, q2 - length + 1].mean(-1, dtype=np.float64)
    return out


def losses(logits, ids: list[int]) -> np.ndarray:
    """Next-token loss in bits at each position 0..T-2 (predicting ids[1:]) from logits [T, V]."""
    import torch

    nats = torch.nn.functional.cross_entropy(logits[:-1].double(), torch.tensor(ids[1:]), reduction="none")
    return (nats / LN2).numpy()


class Knockout:
    """A lab.gpt2 recorder that replaces chosen heads' outputs before c_proj ("attn.mixed", [H, T, D]); new
    tensors only."""

    def __init__(self, by_layer: dict[int, list[int]], mode: str, layer: int = -1):
        self.by_layer, self.mode, self.here = by_layer, mode, by_layer.get(layer, [])

    def __call__(self, name, x):
        if name != "attn.mixed" or not self.here:
            return x
        x = x.clone()
        for h in self.here:
            x[h] = 0 if self.mode == "zero" else x[h].mean(0, keepdim=True)  # [T, D] -> zeros or the mean row
        return x

    def layer(self, i: int):
        return Knockout(self.by_layer, self.mode, i)


def forward_losses(model, ids: list[int], heads=(), mode: str = "zero") -> np.ndarray:
    """Loss in bits per position of the model's forward in plain torch (lab.gpt2 or lab.gpt1) with `heads`
    [(layer, head)] knocked out."""
    import torch

    by_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        by_layer.setdefault(layer, []).append(head)
    from lab.gpt1 import family  # torch: imported when a forward runs, never by the CLI's start (tokens needs none)

    f = family(model)
    with torch.inference_mode():
        logits, _ = f.model(f.w, torch.tensor(ids), rec=Knockout(by_layer, mode))
    return losses(logits, ids)


def knockout(model, ids: list[int], heads: list[tuple[int, int]], mode: str = "zero") -> dict:
    """The loss per position (bits) with and without `heads` knocked out, and the change ("delta")."""
    check_model(model)
    check_ids(model, ids)
    check_heads(model, heads)
    if mode not in MODES:
        raise HeadsError(f"the mode is 'zero' or 'mean', not {mode!r}", "bad_mode", mode=mode)
    clean, knocked = forward_losses(model, ids), forward_losses(model, ids, heads, mode)
    return {"heads": [list(h) for h in heads], "mode": mode, "clean": clean, "knocked": knocked,
            "delta": knocked - clean, "mean_delta": float((knocked - clean).mean())}


def knockout_grid(model, ids: list[int], mode: str = "zero") -> np.ndarray:
    """(L, H): the mean loss change (bits per token) when each head alone is knocked out. A head of layer L changes
    nothing before block L, so the H knock-outs of a layer run as one batch from the plain run's input of block L
    (KnockEach), not as L x H whole forward passes: on GPT-2 small's shapes, 41 tokens, the heads page's grid took
    20 s as 144 passes (its first reader's wait on gpt2)."""
    import torch

    from lab import gpt2
    from lab.gpt1 import family

    check_model(model)
    check_ids(model, ids)
    f = family(model)
    w, n_head = f.w, model.config.n_head
    with torch.inference_mode():
        inputs = BlockInputs(f.out)
        clean = losses(f.model(w, torch.tensor(ids), rec=inputs)[0], ids).mean()
        grid = []
        for layer in range(len(w["h"])):
            h = inputs.resid[layer].expand(n_head, -1, -1)  # [H runs, T, C]: read only
            for i in range(layer, len(w["h"])):
                h, _ = f.block(h, w["h"][i], n_head, w["eps"], None, KnockEach(mode) if i == layer else gpt2.nothing)
            logits = f.final(w, h) @ w["wte"].T  # [H, T, V]
            grid.append([losses(logits[b], ids).mean() - clean for b in range(n_head)])
    return np.array(grid)


class BlockInputs:
    """A recorder that keeps every block's input (block 0's: the embeddings; `out` names the step that is a block's
    output: lab.gpt1.Family.out) and returns what it is given."""

    def __init__(self, out: str):
        self.out, self.resid = out, []

    def __call__(self, name, x):
        if name in ("wte_plus_wpe", self.out):
            self.resid.append(x)
        return x

    def layer(self, i: int):
        return self


class KnockEach:
    """A block's recorder for a batch of H runs ("attn.mixed" [B = H, H, T, D]): run b has head b knocked out, by
    zeros or by its mean over the positions (as Knockout does to one run); new tensors only."""

    def __init__(self, mode: str):
        self.mode = mode

    def __call__(self, name, x):
        if name != "attn.mixed":
            return x
        import torch

        x, b = x.clone(), torch.arange(x.shape[0])
        x[b, b] = 0 if self.mode == "zero" else x[b, b].mean(1, keepdim=True)
        return x


def copying(model, tokenizer, ids: list[int] | None = None, length: int = LENGTH, seed: int = SEED) -> dict:
    """The copy experiment: on the seeded repeated sequence (ids None), or on the reader's ids (then no
    induction score): loss per position (bits), its mean over each copy, and the (L, H) score grids."""
    from lab.attention import attention

    check_model(model)
    own = ids is not None
    ids = list(ids) if own else repeated(model, tokenizer, length, seed)
    check_ids(model, ids)
    bits = forward_losses(model, ids)
    grids = scores(attention(model, ids), None if own else length)
    out = {"ids": ids, "own": own, "length": None if own else length, "seed": None if own else seed,
           "loss": bits, **grids}
    if not own:  # bits[p] predicts ids[p + 1]: the first copy's tokens are ids[1..n], the second's ids[n+1..2n]
        out["first_half"] = float(bits[:length].mean())
        out["second_half"] = float(bits[length:].mean())
    return out


def best(grid: np.ndarray, k: int = 3) -> list[dict]:
    """The k highest cells of an (L, H) grid, best first: {"layer", "head", "score"}."""
    order = np.argsort(-grid, axis=None, kind="stable")[:k]
    return [{"layer": int(i // grid.shape[1]), "head": int(i % grid.shape[1]), "score": float(grid.flat[i])}
            for i in order]


def parse_heads(text: str) -> list[tuple[int, int]]:
    """'2.3, 1.0' -> [(2, 3), (1, 0)]; HeadsError (reason "bad_head_text") for anything else."""
    out = []
    for part in text.replace(";", ",").split(","):
        if not part.strip():
            continue
        try:
            layer, head = (int(x) for x in part.strip().split("."))
        except ValueError:
            raise HeadsError(f"a head is written layer.head (like 2.3), not {part.strip()!r}", "bad_head_text",
                             part=part.strip()) from None
        out.append((layer, head))
    return out


def ids_of(tokenizer, text: str) -> list[int]:
    """The ids of a reader's text (lab.text.encode), or [] for a blank one (check_ids then says "empty_text")."""
    from lab.text import encode

    return encode(tokenizer, text) if text.strip() else []
