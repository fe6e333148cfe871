"""The logit lens: every layer's residual stream read out as if it were the last.

For the logit-lens page (chapter 05) and `python -m lab lens`.

One forward pass of the base model with `output_hidden_states=True` gives L + 1 hidden states:
after the embeddings (layer 0) and after each block (1..L). Each is read through the model's own
head: GPT-2's final layer norm `ln_f`, then the unembedding (`lm_head`, tied to `wte`). Hugging
Face's GPT2Model returns the last entry with `ln_f` already applied and the earlier ones raw, so
`ln_f` goes on every entry but the last, and layer L is exactly the model's own next-token
distribution (the tests check both). GPT-1 (post-LN blocks) has no final norm: its lens is the
unembedding alone.

Only the top-k of each cell and the rank and probability of a target token per position are kept: layers x
positions x vocabulary probabilities (13 x 128 x 50,257 floats is 334 MB for GPT-2 small) never exist at once;
logits for at most ROWS (layer, position) rows do, every layer's rows read out together.

The forward pass passes no mask or flag that would touch the model: it is shared and never changed.
"""

from __future__ import annotations

import numpy as np

from lab.errors import LabError
from lab.models import context_of, require_decoder
from lab.text import check_fits, readable_texts, token_texts

LENS_TYPES = ("gpt2", "openai-gpt")  # decoders whose head we know how to apply (final norm or none)
# Rows (a layer's position) read out by one unembedding: every layer's rows go through it together, so its
# 50,257 x 768 weights are read once per ROWS rows instead of once per layer (13 times for a short text); 512 rows of
# 50,257 logits are 103 MB.
ROWS = 512
EMBEDDINGS = "embeddings"  # the name of floor 0 (before any block) in every table, chart and CLI line
# The page's default text per UI language: an unfinished sentence whose next word forms up the floors of the
# course model (course-gpt2, 4 blocks): the final answer is not there after the embeddings, first reaches rank 1
# at a middle floor, stays there to the output, its probability rising floor by floor (tests/test_lens.py checks
# it on the shipped model; docs/lens.md has the numbers and the search that picked them).
DEFAULT_TEXT = {"en": "For more information, see the manual", "pt": "Escolha esta opção no"}


class LensError(LabError):
    """Bad input for the lens. `reason` ("encoder", "unsupported", "empty_text", "too_long",
    "position", "top", "target_empty", "target_tokens") and `details` let a UI write the message in
    its own language; str(e) is the English one-liner the CLI prints. "target_tokens" carries word, n,
    pieces (each token's own text, a lone byte as \\xc3) and readable (lab.text.readable_texts: "ã ·1/2")."""


def check_model(model) -> None:
    """LensError unless the model is a decoder whose final norm and unembedding the lens knows."""
    mtype = model.config.model_type
    require_decoder(model, LensError, "the lens")
    if mtype not in LENS_TYPES:
        raise LensError(f"the lens knows GPT-2 and GPT-1, not {mtype}", "unsupported", model_type=mtype)


def final_norm(model):
    """The final layer norm the lens applies before the unembedding: GPT-2's ln_f; None for GPT-1."""
    return getattr(model.base_model, "ln_f", None)


def hidden_states(model, ids: list[int]) -> tuple:
    """One forward pass of the base model: L + 1 hidden states, each (1, T, C); the last has ln_f applied."""
    return hidden_states_many(model, [ids])


def hidden_states_many(model, batch: list[list[int]]) -> tuple:
    """One forward pass of the base model over right-padded texts: L + 1 hidden states (B, T, C), the padding masked
    (a causal model's real positions never see it); the last has ln_f applied."""
    import torch

    t = max(len(ids) for ids in batch)
    pad = model.config.pad_token_id if model.config.pad_token_id is not None else 0
    input_ids = torch.tensor([list(ids) + [pad] * (t - len(ids)) for ids in batch])
    kw = {} if len(batch) == 1 else {"attention_mask": torch.tensor([[1] * len(ids) + [0] * (t - len(ids))
                                                                      for ids in batch])}
    with torch.inference_mode():
        return model.base_model(input_ids=input_ids, output_hidden_states=True, **kw).hidden_states


def layer_logits(model, hidden, last: bool):
    """Logits (T, V) of one hidden state (1, T, C): ln_f (unless it is the last, already normed) then lm_head."""
    import torch

    norm = final_norm(model)
    with torch.inference_mode():
        h = hidden[0] if last or norm is None else norm(hidden[0])  # (T, C)
        return model.get_output_embeddings()(h).float()  # (T, V)


def _normed_rows(model, hs: tuple, lengths: list[int]):
    """Every text's hidden states as rows ready for the unembedding, and each row's text, layer and position: the last
    layer's rows of every text first (they name the default targets), then layers 0..L-1 through the final norm
    (GPT-1: none). One matrix, so the unembedding reads its weights once per ROWS rows, not once per layer and text."""
    import torch

    norm, n_layer = final_norm(model), len(hs) - 1
    rows, who, layers, positions = [], [], [], []
    for layer in (n_layer, *range(n_layer)):
        for b, t in enumerate(lengths):
            h = hs[layer][b, :t]  # (t, C)
            rows.append(h if layer == n_layer or norm is None else norm(h))
            who += [b] * t
            layers += [layer] * t
            positions += range(t)
    return torch.cat(rows), torch.tensor(who), torch.tensor(layers), torch.tensor(positions)


def check_position(position: int, n: int) -> int:
    """The position as an index 0..n-1 (negative counts from the end); LensError when out of range."""
    if not -n <= position < n:
        raise LensError(f"position {position} is out of range: the text has {n} tokens (0..{n - 1})", "position",
                        position=position, n=n)
    return position % n


def target_id(tokenizer, word: str) -> int:
    """The one token id of `word`, tokenized exactly as typed (GPT-2's ' big' and 'big' differ)."""
    if not word:
        raise LensError("the target word is empty", "target_empty")
    ids = list(tokenizer(word, add_special_tokens=False)["input_ids"])
    if len(ids) != 1:
        pieces = token_texts(tokenizer, ids)
        raise LensError(f"the target {word!r} is {len(ids)} tokens {pieces}, not one; the lens follows a single token",
                        "target_tokens", word=word, n=len(ids), pieces=pieces, readable=readable_texts(tokenizer, ids))
    return ids[0]


def lens(model, ids: list[int], top: int = 5, target: int | None = None) -> dict:
    """The logit lens of one text: per layer 0..L and position, the top-k ids and probabilities,
    and the rank (1 = top) and probability of a target token at every position.

    The target is `target` (one id) at every position, or by default each position's final top-1
    (the model's own prediction there). Returns numpy arrays: top_ids (L+1, T, k) int64, top_p
    (L+1, T, k) float32, targets (T,) int64, rank (L+1, T) int64, p (L+1, T) float32.
    """
    return lens_many(model, [ids], top, target)[0]


def check_inputs(model, batch: list[list[int]], top: int, target: int | None) -> None:
    """LensError for a model, text, --top or target the lens cannot take."""
    check_model(model)
    vocab = model.get_output_embeddings().weight.shape[0]
    for ids in batch:
        if not ids:
            raise LensError("the text is empty", "empty_text")
        check_fits(len(ids), context_of(model.config), LensError)
    if not 1 <= top <= vocab:
        raise LensError(f"--top must be between 1 and the vocabulary size {vocab}, not {top}", "top", top=top)
    if target is not None and not 0 <= target < vocab:
        raise LensError(f"target id {target} is outside the vocabulary (0..{vocab - 1})", "target_tokens")


def lens_many(model, batch: list[list[int]], top: int = 5, target: int | None = None) -> list[dict]:
    """lens() of several texts from one right-padded forward pass, every text's rows read out by the same
    unembedding passes; one result per text, as lens() gives it. (Gathering several readers' texts this way was
    measured slower on 2 cores than each reader's own pass: docs/hosting.md, "A class that types its own text".)"""
    import torch

    check_inputs(model, batch, top, target)
    hs = hidden_states_many(model, batch)
    n_layer, lengths = len(hs) - 1, [len(ids) for ids in batch]
    out = [{"n_layer": n_layer, "top_ids": np.empty((n_layer + 1, t, top), np.int64),
            "top_p": np.empty((n_layer + 1, t, top), np.float32), "rank": np.empty((n_layer + 1, t), np.int64),
            "p": np.empty((n_layer + 1, t), np.float32)} for t in lengths]
    with torch.inference_mode():
        rows, who, layers, positions = _normed_rows(model, hs, lengths)  # the last layer's rows first
        targets = torch.full((len(batch), max(lengths)), -1 if target is None else target)  # (B, T): -1 to fill
        for lo in range(0, rows.shape[0], ROWS):  # at most ROWS rows x V logits at once, one pass over the matrix
            part = slice(lo, lo + ROWS)
            logits = model.get_output_embeddings()(rows[part]).float()  # (r, V)
            norm = torch.logsumexp(logits, -1, keepdim=True)  # (r, 1): p = exp(logit - norm)
            values, indices = logits.topk(top, -1)  # (r, k), by logit = by probability
            w, lay, pos = who[part], layers[part], positions[part]
            if target is None:  # the last layer's rows (all before any other): the model's own predictions
                last = lay == n_layer
                targets[w[last], pos[last]] = indices[last, 0]
            hit = logits.gather(1, targets[w, pos][:, None])  # (r, 1): the target's logit
            found = {"rank": ((logits > hit).sum(-1) + 1).numpy(), "p": (hit - norm).exp()[:, 0].numpy(),
                     "top_ids": indices.numpy(), "top_p": (values - norm).exp().numpy()}
            for b in w.unique().tolist():
                mine = (w == b).numpy()
                for key, value in found.items():
                    out[b][key][lay[mine].numpy(), pos[mine].numpy()] = value[mine]
            del logits
    for b, result in enumerate(out):
        result["targets"] = targets[b, :lengths[b]].numpy().astype(np.int64)
    return out


def first_and_settled(ranks) -> tuple[int | None, int | None]:
    """The first layer where the target is at rank 1, and the layer from which it stays there to the end
    (None, None when it never is; settled None when the last layer does not have it at rank 1)."""
    ranks = list(ranks)
    first = next((i for i, r in enumerate(ranks) if r == 1), None)
    if not ranks or ranks[-1] != 1:
        return first, None
    settled = len(ranks) - 1
    while settled > 0 and ranks[settled - 1] == 1:
        settled -= 1
    return first, settled


def floor_name(layer: int, embeddings: str = EMBEDDINGS) -> str:
    """A floor as tables and charts name it: `embeddings` for 0 (before any block), else the block's number."""
    return embeddings if layer == 0 else str(layer)


def token_names(tokenizer, result: dict) -> dict[int, str]:
    """id -> token text for every id a lens result mentions (top-k cells and targets), decoded once each."""
    unique = np.union1d(result["top_ids"].ravel(), result["targets"]).tolist()  # sorted ints
    return dict(zip(unique, token_texts(tokenizer, unique), strict=True))


def to_json(result: dict, tokenizer, ids: list[int], position: int) -> dict:
    """The `python -m lab lens --json` document for one lens result and a position (already checked).
    "tokens" are each token's own text (a lone byte as \\xc3), "readable" the same positions as text reads
    (lab.text.readable_texts: "ã ·1/2", "ã ·2/2" for the two byte tokens of ã)."""
    names = token_names(tokenizer, result)
    top = [[[{"id": int(i), "token": names[int(i)], "p": float(q)} for i, q in zip(cell_ids, cell_p, strict=True)]
            for cell_ids, cell_p in zip(layer_ids, layer_p, strict=True)]
           for layer_ids, layer_p in zip(result["top_ids"], result["top_p"], strict=True)]
    tid = int(result["targets"][position])
    return {"ids": list(ids), "tokens": token_texts(tokenizer, ids), "readable": readable_texts(tokenizer, ids),
            "n_layer": result["n_layer"], "top": top,
            "target": {"position": position, "id": tid, "token": names[tid],
                       "rank": [int(r) for r in result["rank"][:, position]],
                       "p": [float(q) for q in result["p"][:, position]]}}


def target_word(word: str, new_word: bool) -> str | None:
    """The token to follow as the reader typed it, a space in front when it starts a new word; None when empty."""
    if not word.strip():
        return None
    return " " + word if new_word and not word[0].isspace() else word
