"""Perplexity of one text under a model, and the same log-likelihood per byte and per word.

For the perplexity page (chapters 06, 08, 09) and `python -m lab perplexity`.

Decoders follow Hugging Face's guide "Perplexity of fixed-length models": windows of the model's
context start every `stride` tokens; in each window only the tokens not yet scored are targets (the
rest is context, label -100); nothing is prepended, so the text's first token is never predicted.
Two differences in how, none in what:
- the windows of full length run as one batch, and logits are computed only where a target is
  predicted (the guide's loop computes them for the context positions too and throws them away);
- tokens are counted exactly. The guide weights each window's mean loss by `valid labels - 1`,
  which is right when a window's first label is a target (the first window; stride = context)
  and one short otherwise. Summing per-token log-likelihoods avoids the question.
Per-token perplexity depends on the tokenizer, so the same total is also reported per UTF-8 byte
(bits per byte) and per whitespace word: those compare models that split text differently.

Encoders have no left-to-right likelihood: `pseudo_perplexity` masks one token at a time and scores
it with everything else visible (Salazar et al. 2020). Not comparable with a decoder's perplexity.
The shared model is only read: base model and LM head are called as they are, under inference mode.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lab.errors import LabError
from lab.text import encode, token_texts

LN2 = math.log(2)
LOGIT_ROWS = 512  # LM-head rows per chunk: 512 x 50,257 float32 logits is 103 MB
BATCH = 2  # full-length windows per forward pass (eager attention holds B x heads x T x T per layer)


class PerplexityError(LabError):
    """Bad input for a perplexity run: `reason` "stride" (stride, context), "empty", "one_token"."""


@dataclass(frozen=True)
class Window:
    """One forward pass: ids[begin:end]; the targets are ids[first:end] (first > begin, or the window start)."""

    begin: int
    end: int
    first: int  # the first token scored in this window


def windows(n: int, context: int, stride: int) -> list[Window]:
    """The guide's windows over n tokens: start every `stride`, at most `context` long, until the end."""
    if stride <= 0 or stride > context:
        raise PerplexityError(f"the stride must be between 1 and the context ({context}); got {stride}", "stride",
                              context=context, stride=stride)
    out, prev_end = [], 0
    for begin in range(0, n, stride):
        end = min(begin + context, n)
        out.append(Window(begin, end, max(prev_end, begin + 1)))  # a window's own first token has no context
        prev_end = end
        if end == n:
            break
    return out


def check_ids(ids: list[int], minimum: int = 2) -> None:
    """PerplexityError unless there are at least `minimum` tokens (one to read, one to predict)."""
    if len(ids) == 0:
        raise PerplexityError("the text is empty", "empty")
    if len(ids) < minimum:
        raise PerplexityError("the text is a single token: there is nothing to predict", "one_token")


def next_token(model, ids, context: int, stride: int | None = None, normalise: str | None = "log_softmax",
               rows: int = LOGIT_ROWS, batch: int = 1, progress: Callable[[float], None] | None = None):
    """The one windowed next-token loop (perplexity, the detector, the ceiling, the detector's set): hidden states
    -> output head -> log-probabilities, a chunk of `rows` positions at a time. Yields (positions, values): every
    token after the first, each once, with the distribution that predicts it, values (n, V), or (B, n, V) when
    ids is a (B, T) batch of equal-length rows. `normalise`: "log_softmax", "softmax" or None (the raw logits).
    Windows: windows(T, context, stride), stride half the context by default; with one sequence, `batch`
    full-length windows go through the model at once. `progress(share)` after each forward pass. The caller runs
    it under torch.inference_mode (a generator suspended inside that context would leave it on for the thread if
    finalised out of order)."""
    import torch

    x = torch.as_tensor(ids)
    one = x.dim() == 1
    x = x[None] if one else x
    fn = {"log_softmax": torch.log_softmax, "softmax": torch.softmax, None: None}[normalise]
    plan = windows(x.shape[1], context, stride or max(1, context // 2))
    full = [w for w in plan if w.end - w.begin == context] if one else []
    groups = [full[i:i + batch] for i in range(0, len(full), batch)] + [[w] for w in plan if w not in full]
    head, done = model.get_output_embeddings(), 0
    for group in groups:
        hidden = model.base_model(input_ids=torch.cat([x[:, w.begin:w.end] for w in group])).last_hidden_state
        for row, w in enumerate(group):  # hidden: (len(group) x B, T, d)
            h = hidden[row:row + 1] if one else hidden
            for c in range(w.first, w.end, rows):
                pos = torch.arange(c, min(c + rows, w.end))  # targets; the states at pos - 1 predict them
                out = head(h[:, pos - 1 - w.begin]).float()
                out = fn(out, dim=-1) if fn is not None else out
                yield pos, out[0] if one else out
        done += len(group)
        if progress:
            progress(done / len(plan))


def token_nll(model, ids: list[int], stride: int, context: int,
              progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(positions, nll): the tokens the guide's windows predict, each once, with its NLL in nats.

    With stride = context a window's first token has no context and is not predicted, as in the guide.
    """
    import torch

    check_ids(ids)
    x = torch.tensor(ids)
    out = np.full(len(ids), np.nan)
    with torch.inference_mode():
        for pos, logp in next_token(model, x, context, stride, batch=BATCH, progress=progress):  # (n, V)
            out[pos.numpy()] = (-logp.gather(1, x[pos][:, None])[:, 0]).double().numpy()
    positions = np.flatnonzero(~np.isnan(out))
    return positions, out[positions]


def pseudo_nll(model, ids: list[int], mask_id: int, specials: set[int], context: int, batch: int = 32,
               progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(positions, nll): each non-special token masked alone and scored with the rest of its window visible.

    Text longer than the context is cut into consecutive windows; a window keeps the tokenizer's
    <s> and </s> around its piece, as the encoder saw in training.
    """
    positions, nll = [], []
    for where, logp, target, done in masked_rows(model, ids, mask_id, specials, context, batch):
        positions += where
        nll.append(-logp.gather(1, target[:, None])[:, 0].double().numpy())
        if progress:
            progress(done)
    return np.array(positions), np.concatenate(nll)


def masked_rows(model, ids: list[int], mask_id: int, specials: set[int], context: int, batch: int = 32):
    """For pseudo_nll and lab.fill: each non-special token masked alone, `batch` at a time; yields (positions in
    ids, log-probabilities at the masked slots (B, V), the true ids (B,), share done)."""
    import torch

    jobs = _mask_jobs(ids, specials, context)
    with torch.inference_mode():
        for s in range(0, len(jobs), batch):
            part = jobs[s:s + batch]
            t = max(len(r) for r, _, _ in part)
            x = torch.tensor([r + [r[-1]] * (t - len(r)) for r, _, _ in part])  # (B, T), padded
            valid = torch.tensor([[1] * len(r) + [0] * (t - len(r)) for r, _, _ in part])
            where = torch.tensor([k for _, k, _ in part])
            target = x[torch.arange(len(part)), where]
            x[torch.arange(len(part)), where] = mask_id
            hidden = model.base_model(input_ids=x, attention_mask=valid).last_hidden_state  # (B, T, d)
            logits = model.lm_head(hidden[torch.arange(len(part)), where])  # (B, V): masked slots only
            yield ([p for _, _, p in part], torch.log_softmax(logits.float(), dim=-1), target,
                   min(1.0, (s + len(part)) / len(jobs)))


def _mask_jobs(ids: list[int], specials: set[int], context: int) -> list[tuple[list[int], int, int]]:
    """(window ids, index of the masked token in the window, its position in ids) for every non-special token."""
    body = [i for i, t in enumerate(ids) if t not in specials]
    if not body:
        raise PerplexityError("the text is empty", "empty")
    if len(body) < 2:
        raise PerplexityError("the text is a single token: there is nothing to predict", "one_token")
    first, last = ids[0] if ids[0] in specials else None, ids[-1] if ids[-1] in specials else None
    room = context - (first is not None) - (last is not None)
    jobs = []
    for start in range(0, len(body), room):
        piece = body[start:start + room]
        row = ([first] if first is not None else []) + [ids[p] for p in piece] + ([last] if last is not None else [])
        shift = 1 if first is not None else 0
        jobs += [(row, k + shift, p) for k, p in enumerate(piece)]
    return jobs


def exp_or_inf(x: float) -> float:
    """exp(x), or infinity past the largest float (a 5,000-letter "word" has a per-word perplexity of e^6000)."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def summary(nll: float, tokens: int, text: str) -> dict:
    """The contract's numbers from one total: ppl per token, bits per UTF-8 byte, ppl per whitespace word."""
    n_bytes, n_words = len(text.encode("utf-8")), len(text.split())
    return {"tokens": int(tokens), "nll": float(nll), "ppl": exp_or_inf(nll / tokens),
            "bits_per_byte": nll / LN2 / n_bytes, "ppl_per_word": exp_or_inf(nll / n_words)}


def evaluate(loaded, text: str, stride: int | None = None,
             progress: Callable[[float], None] | None = None) -> dict:
    """Everything the page and the CLI show for one model on one text (PerplexityError on bad input).

    Returns the contract's fields (model, tokens, nll, ppl, bits_per_byte, ppl_per_word, and
    pseudo for encoders) plus `stride`, `context`, and per-token `surprisal` records
    {position, id, token, start, end, bits} with character offsets into `text`.
    """
    ids = encode(loaded.tokenizer, text)
    tok = loaded.tokenizer
    if loaded.kind == "encoder":
        specials = set(tok.all_special_ids)
        positions, nll = pseudo_nll(loaded.model, ids, tok.mask_token_id, specials, loaded.context,
                                    progress=progress)
        stride = None
    else:
        stride = stride or max(1, loaded.context // 2)
        positions, nll = token_nll(loaded.model, ids, stride, loaded.context, progress)
    offsets = tok(text, return_offsets_mapping=True, verbose=False)["offset_mapping"]
    texts = token_texts(tok, ids)
    result = {"model": loaded.name, **summary(float(nll.sum()), len(nll), text)}
    if loaded.kind == "encoder":
        result["pseudo"] = True
    result.update(stride=stride, context=loaded.context, surprisal=[
        {"position": int(p), "id": int(ids[p]), "token": texts[p], "start": int(offsets[p][0]),
         "end": int(offsets[p][1]), "bits": float(v / LN2)} for p, v in zip(positions, nll, strict=True)])
    return result


def by_character(records: list[dict], n_chars: int) -> np.ndarray:
    """Bits per character of the text: each token's surprisal spread evenly over the characters it covers.

    Two models that split the text differently become comparable position by position: the
    difference of their arrays says where, in the text, one is less surprised than the other.
    Characters no scored token covers (the first token of a decoder) are NaN.
    """
    out = np.full(n_chars, np.nan)
    for r in records:
        if r["end"] > r["start"]:
            span = slice(r["start"], r["end"])
            out[span] = np.nan_to_num(out[span]) + r["bits"] / (r["end"] - r["start"])
    return out


# ---------------------------------------------------------------- reference data for the page

DATA = Path(__file__).resolve().parent / "data"

# Published figures, with their sources, beside the measured ones.
PUBLISHED = [
    {"model": "gpt2", "dataset": "WikiText-2", "ppl": 29.41,
     "source": "GPT-2 paper (Radford et al. 2019), table 3, zero-shot"},
    {"model": "gpt2-medium", "dataset": "WikiText-2", "ppl": 22.76, "source": "GPT-2 paper, table 3, zero-shot"},
    {"model": "gpt2-large", "dataset": "WikiText-2", "ppl": 19.93, "source": "GPT-2 paper, table 3, zero-shot"},
    {"model": "gpt2-xl", "dataset": "WikiText-2", "ppl": 18.34, "source": "GPT-2 paper, table 3, zero-shot"},
    {"model": "gpt2-large", "dataset": "WikiText-2 (raw), stride 1024", "ppl": 19.44,
     "source": "Hugging Face guide \"Perplexity of fixed-length models\""},
    {"model": "gpt2-large", "dataset": "WikiText-2 (raw), stride 512", "ppl": 16.44,
     "source": "Hugging Face guide \"Perplexity of fixed-length models\""},
]


def passages() -> list[dict]:
    """The page's bundled passages: {"id", "lang", "title", "text"}, written by the project."""
    return json.loads((DATA / "perplexity_passages.json").read_text(encoding="utf-8"))["passages"]


def non_embedding_params(model) -> int:
    """Parameters outside the token and position embeddings (the usual x axis of scaling curves)."""
    skip = {id(m.weight) for m in (model.get_input_embeddings(),)}
    base = model.base_model
    for name in ("wpe", "positions_embed", "embeddings"):
        part = getattr(base, name, None)
        if part is not None:
            skip |= {id(p) for p in part.parameters()}
    return sum(p.numel() for p in model.parameters() if id(p) not in skip)


def unigram_nll(ids: list[int], positions) -> float | None:
    """Summed NLL (nats) of ids at `positions` under add-one unigram counts of the course corpus's training split.

    The baseline of the offline scale curve: it knows how often each course-tokenizer token occurs
    and nothing about order. None for ids outside the course tokenizer's vocabulary.
    """
    data = json.loads((DATA / "course_unigram_counts.json").read_text(encoding="utf-8"))
    counts, total = np.asarray(data["counts"], dtype=np.float64), data["total"]
    picked = np.asarray(ids)[np.asarray(positions, dtype=int)]
    if picked.size and picked.max() >= len(counts):
        return None  # not the course tokenizer
    logp = np.log((counts + 1) / (total + len(counts)))
    return float(-logp[picked].sum())


def unseen_texts() -> dict[str, str]:
    """{"en": text, "pt": text}: Debian documentation no course model saw (lab/course/unseen.py)."""
    docs = json.loads((DATA / "course_unseen.json").read_text(encoding="utf-8"))["documents"]
    return {lang: "\n\n".join(d["text"] for d in docs if d["lang"] == lang) for lang in ("en", "pt")}
