"""Which embedding rows a model actually learned: training counts where they ship, a heuristic elsewhere.

A cosine search over the input embeddings (lab.embeddings) is crowded by rows the model barely
trained: tokens of the tokenizer's vocabulary that its training text rarely or never contained. On
the course models (GPT-2's first 7,935 merges, learned on web text, trained on Debian documentation)
those are news names and web words (" FBI", " Hillary"); their rows drift together to one place
and answer every analogy at about the same score.

Two sources, by what the model's directory holds:
- "counts": `token_counts.npy` beside the weights (the course models): how many times the trainer
  drew each token id in its training windows, up to the step of the checkpoint shipped
  (lab.course.train writes it for every new run; the shipped files are estimates by
  lab.course.train.estimate_counts, since the corpus rebuilt here is not byte-identical to the one the
  shipped runs read, so their batch sampler cannot be replayed: docs/analogies.md).
  A token seen fewer than MIN_COUNT times is "rarely trained": on course-gpt2 the median norm of such
  rows stays above the median of all rows (1.43 for 300-999 times, 1.73-1.88 under 100, against
  1.36), and from 1,000 on it is at or below it (1.36 for 1,000-2,999, 1.05 past 100,000).
- "indicator": for any other model, Land & Bartolo 2024 ("Fishing for Magikarp: Automatically
  Detecting Under-trained Tokens in Large Language Models", EMNLP 2024, cohere-ai/magikarp): take
  the unembedding matrix (for tied models the same as the input one), remove its first principal
  component, and measure each row's cosine to the mean of reference tokens that can never occur in
  text. For byte-level BPE (GPT-2, RoBERTa) the references are the single-byte tokens of bytes that
  never appear in UTF-8 (0xC0, 0xC1, 0xF5-0xFF: ids 177-187 in GPT-2, the paper's choice). The paper
  uses this only to rank candidates and then verifies them by prompting the model; here a row whose
  score stands out, above the median by INDICATOR_MADS median absolute deviations, is flagged
  without verification: a heuristic. Checked against the counts on course-gpt2: it flags 193 rows,
  the 192 never seen and one seen 26 times (no false alarm, but only 193 of the 2,641 rows seen fewer
  than MIN_COUNT times); on the encoder course-roberta it flags nothing (its rare rows do not stand out).
  A tokenizer with no such byte tokens (GPT-1's) gets no indicator and nothing is left out.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path

import numpy as np

COUNTS_FILE = "token_counts.npy"
MIN_COUNT = 1000  # rows seen fewer times than this in training are left out by default (docs/analogies.md)
INDICATOR_MADS = 8.0  # a row is flagged when its indicator is this many median absolute deviations above the median
NEVER_IN_UTF8 = (0xC0, 0xC1, *range(0xF5, 0x100))  # bytes no UTF-8 text contains
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> the rarely_trained dict
_LOCK = threading.Lock()


def counts_path(model) -> Path | None:
    """Where a model's training counts would be: beside its weights (a local directory), else None."""
    where = getattr(model, "name_or_path", "") or getattr(getattr(model, "config", None), "_name_or_path", "")
    try:
        path = Path(where) / COUNTS_FILE
        return path if where and path.is_file() else None
    except (OSError, ValueError):
        return None


def token_counts(model) -> np.ndarray | None:
    """(V,) int64: how often training saw each token id, when the model ships its counts; else None."""
    path = counts_path(model)
    return None if path is None else np.load(path).astype(np.int64)


def reference_ids(tokenizer) -> list[int]:
    """Ids of the single-byte tokens whose byte never occurs in UTF-8 text (none for a tokenizer without them)."""
    from lab.text import token_bytes

    n = len(tokenizer)
    ids = list(range(n))
    found = []
    for i, b in zip(ids, token_bytes(tokenizer, ids), strict=True):
        if len(b) == 1 and b[0] in NEVER_IN_UTF8:
            found.append(i)
    return found


def indicator(matrix, reference: list[int]) -> np.ndarray:
    """Land & Bartolo's E_out cosine to the reference mean with the first principal component removed, (V,).

    matrix (V, C): the unembedding rows. Higher = more like the rows that never saw training text.
    Computed without copying the matrix (a hosted demo's GPT-2 has 50,257 x 768 of them): the principal
    component from the (C, C) covariance, and each row's part along it taken out inside the dot products
    (x' = x - (x.pc) pc, so x'.r = x.r for the reference mean r, itself without pc, and |x'|^2 = |x|^2 - (x.pc)^2).
    """
    x = np.asarray(matrix, dtype=np.float32)  # the tensor's own memory when it is float32 already
    mean = x.mean(0, dtype=np.float64)
    cov = (x.T @ x).astype(np.float64) / len(x) - np.outer(mean, mean)  # (C, C), the centred rows' covariance
    _, vecs = np.linalg.eigh(cov)  # ascending eigenvalues
    pc = vecs[:, -1]  # the first principal component, unit length
    along = (x @ pc.astype(np.float32)).astype(np.float64)  # (V,)
    ref = (x[reference].astype(np.float64) - np.outer(along[reference], pc)).mean(0)
    dots = (x @ ref.astype(np.float32)).astype(np.float64)  # x'.r = x.r: r, a mean of rows without pc, is ⟂ pc
    sq = np.einsum("ij,ij->i", x, x, dtype=np.float64) - along ** 2
    norms = np.sqrt(np.clip(sq, 0.0, None)) * np.linalg.norm(ref)
    return dots / np.clip(norms, 1e-12, None)


def flagged(score: np.ndarray) -> tuple[np.ndarray, float]:
    """(ids whose indicator stands out, the cut): above the median by INDICATOR_MADS median absolute deviations."""
    median = float(np.median(score))
    cut = median + INDICATOR_MADS * float(np.median(np.abs(score - median)))
    return np.flatnonzero(score > cut), cut


def _compute(model, tokenizer) -> dict:
    """The rarely_trained record, computed (see rarely_trained)."""
    vocab = min(model.get_input_embeddings().weight.shape[0], len(tokenizer))
    counts = token_counts(model)
    if counts is not None:
        ids = np.flatnonzero(counts[:vocab] < MIN_COUNT)
        return {"method": "counts", "ids": ids, "min_count": MIN_COUNT, "counts": counts}
    ref = reference_ids(tokenizer)
    if not ref:
        return {"method": None, "ids": np.array([], dtype=np.int64)}
    out = model.get_output_embeddings()
    matrix = (out.weight if out is not None else model.get_input_embeddings().weight).detach().float().numpy()
    score = indicator(matrix[:vocab], ref)
    ids, cut = flagged(score)
    return {"method": "indicator", "ids": ids, "cut": cut, "reference": ref, "scores": score}


def rarely_trained(model, tokenizer) -> dict:
    """The token ids to leave out of a cosine search by default, and how they were found (cached per model):
    {"method": "counts" | "indicator" | None, "ids": sorted int array, plus "min_count" and "counts", or
    "cut", "reference" and "scores"}. The model is only read."""
    with _LOCK:
        found = _CACHE.get(model)
        if found is None:
            found = _CACHE[model] = _compute(model, tokenizer)
        return found


def left_out(found: dict) -> dict:
    """What the CLI's JSON and the page say about it: {"count", "method", "min_count" or "cut"}."""
    out = {"count": int(len(found["ids"])), "method": found["method"]}
    if found["method"] == "counts":
        out["min_count"] = found["min_count"]
    elif found["method"] == "indicator":
        out["cut"] = round(found["cut"], 4)
    return out
