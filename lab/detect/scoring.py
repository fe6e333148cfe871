"""A language model read as an AI-text detector, and the numbers that say why it must decide nothing.

For the detector page (chapter 12) and `python -m lab detect` / `detect-eval`.

Per token of a text under a decoder (teacher forcing, the perplexity page's windows for a text longer
than the context): the rank of the actual token in the next-token distribution (1 = the argmax;
1 + the number of tokens with a strictly higher probability), its log-probability, the distribution's
entropy, p(actual) / p(best), and the mean and variance of log p under that distribution. The text's
first token has no context and is not scored.

Document scores, each as its source computes it (natural logs):
- mean log-probability (the perplexity signal GPTZero starts from) and mean log-rank;
- GLTR's bucket fractions (Gehrmann, Strobelt and Rush 2019, HendrikStrobelt/detecting-fake-text):
  ranks within the top 10, 100, 1,000, and beyond (thresholds adjustable);
- Fast-DetectGPT, analytic, the model as its own reference (Bao et al. 2024):
  (sum_t log p(x_t) - sum_t mu_t) / sqrt(sum_t var_t);
- Binoculars (Hans et al. 2024, ahans30/Binoculars): the text's log-perplexity under the performer
  divided by the mean over tokens of sum_v softmax(observer)_v * -log softmax(performer)_v. It needs
  two models with one tokenizer.
Each score has a direction: which side the machine-written texts fall on (MACHINE_HIGH). The
evaluation (lab.detect.evaluation) reports every AUROC with that fixed direction, so a score that ranks the
classes backwards on some group shows as an AUROC under 0.5.

The shared models are only read, under inference mode.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from lab.errors import LabError
from lab.models import require_decoder
from lab.perplexity import next_token
from lab.text import encode, token_texts

BUCKETS = (10, 100, 1000)  # GLTR's: top 10, top 100, top 1,000, beyond
BUCKET_NAMES = ("top10", "top100", "top1000", "rest")
TOP = 5  # top predictions kept per position (the page's hover)
LOGIT_ROWS = 64  # positions per chunk: 64 x 50,257 float32 log-probabilities (13 MB) stay in cache across passes
# The side machine text falls on, for each document score (the papers' own directions).
MACHINE_HIGH = {"mean_logprob": True, "mean_log_rank": False, "fast_detectgpt": True, "gltr_top10": True,
                "binoculars": False}


class DetectError(LabError):
    """Bad input for the detector: `reason` "empty" / "one_token" (nothing to score), "encoder" (model: a
    masked LM has no next-token distribution), "tokenizer" (model, observer: Binoculars needs one
    tokenizer), "thresholds" (value: three increasing whole numbers from 1)."""


def check_thresholds(thresholds) -> tuple[int, int, int]:
    """The three bucket edges as ints; DetectError unless they are increasing whole numbers from 1."""
    t = tuple(thresholds)
    if len(t) != 3 or not all(isinstance(x, int) and not isinstance(x, bool) for x in t) or not 1 <= t[0] < t[1] < t[2]:
        raise DetectError(f"bucket thresholds must be three increasing whole numbers from 1, not {t}", "thresholds",
                          value=str(t))
    return t


def check_decoder(loaded) -> None:
    """DetectError for an encoder: a masked LM sees both sides and has no next-token distribution."""
    require_decoder(loaded, DetectError, "the detector")


_SAME: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tokenizer -> {other tokenizer: same?}


def same_tokenizer(a, b) -> bool:
    """True when two tokenizers map every token to the same id (Binoculars compares distributions id by id);
    remembered per pair of live tokenizers (comparing two 50,257-entry vocabularies is not free)."""
    if a is b:
        return True
    known = _SAME.setdefault(a, weakref.WeakKeyDictionary())
    if b not in known:
        known[b] = len(a) == len(b) and a.get_vocab() == b.get_vocab()
    return known[b]


def check_pair(performer, observer) -> None:
    """DetectError unless both are decoders with one tokenizer."""
    check_decoder(performer)
    check_decoder(observer)
    if not same_tokenizer(performer.tokenizer, observer.tokenizer):
        raise DetectError(f"Binoculars needs two models with one tokenizer: {performer.name} and {observer.name} "
                          "split text differently", "tokenizer", model=performer.name, observer=observer.name)


def moments(logp):
    """(mu, var) of log p under the distribution itself, over the last axis: mu = sum p log p (= -entropy),
    var = sum p (log p - mu)^2, centred first (E[(log p)^2] - mu^2 loses the digits in float32 when the
    distribution is flat: both terms near 117 for GPT-2's vocabulary, their difference near 0.01). Sums, not
    dot products: torch sums pairwise, a float32 dot product over 50,257 terms drifts by 1e-4."""
    p = logp.exp()
    mu = (p * logp).sum(-1)
    return mu, (logp - mu[..., None]).square_().mul_(p).sum(-1)


def _stats(logp, actual, top: int) -> dict:
    """Per-position statistics of one chunk: logp (n, V), actual (n,) ids."""
    import torch

    got = logp.gather(1, actual[:, None])[:, 0]  # (n,)
    mu, var = moments(logp)
    values, ids = logp.topk(top, -1)  # values[:, 0] is the best log p
    higher = (logp > got[:, None]).float().sum(-1).long()  # a float sum of ones: exact, and twice as fast
    return {"logprob": got, "rank": higher + 1, "entropy": -mu, "mu": mu,
            "var": var, "ratio": torch.exp(got - values[:, 0]), "top_id": ids, "top_p": values.exp()}


def token_stats(loaded, ids: list[int], observer=None, top: int = TOP) -> dict[str, np.ndarray]:
    """Arrays over the scored tokens (every token but the first): position, id, rank, logprob, entropy,
    ratio (p(actual) / p(best)), mu, var, top_id / top_p (n, top); with an observer, x_entropy: the
    observer's distribution against the performer's log-probabilities (Binoculars' denominator)."""
    import torch

    check_decoder(loaded)
    if observer is not None:
        check_pair(loaded, observer)
    if len(ids) < 2:
        raise DetectError("the text is a single token: there is nothing to predict", "one_token")
    context = min(loaded.context, observer.context) if observer is not None else loaded.context
    x = torch.tensor(ids)
    parts = []
    with torch.inference_mode():  # both generators run and end inside it (see lab.perplexity.next_token)
        theirs = (next_token(observer.model, ids, context, normalise="softmax", rows=LOGIT_ROWS)
                  if observer is not None else None)
        for pos, logp in next_token(loaded.model, ids, context, rows=LOGIT_ROWS):
            part = {"position": pos, "id": x[pos], **_stats(logp, x[pos], top)}
            if theirs is not None:
                _, obs = next(theirs)  # the observer's probabilities at the same positions
                part["x_entropy"] = -(obs * logp).sum(-1)
            parts.append(part)
        if theirs is not None:
            theirs.close()
    return {k: torch.cat([p[k] for p in parts]).double().numpy() if k not in ("position", "id", "rank", "top_id")
            else torch.cat([p[k] for p in parts]).numpy() for k in parts[0]}


def buckets(ranks: np.ndarray, thresholds=BUCKETS) -> np.ndarray:
    """Each rank's GLTR bucket: 0 (rank <= t0), 1 (<= t1), 2 (<= t2), 3 (beyond)."""
    t = check_thresholds(thresholds)
    return np.searchsorted(np.array(t), np.asarray(ranks), side="left")


def scores(stats: dict[str, np.ndarray], thresholds=BUCKETS) -> dict:
    """The document scores of one text from its token_stats (binoculars only with an observer's x_entropy)."""
    n = len(stats["rank"])
    fractions = np.bincount(buckets(stats["rank"], thresholds), minlength=4) / n
    out = {"mean_logprob": float(stats["logprob"].mean()),
           "mean_log_rank": float(np.log(stats["rank"]).mean()),
           "fast_detectgpt": fast_detectgpt(stats["logprob"], stats["mu"], stats["var"]),
           "gltr": dict(zip(BUCKET_NAMES, (float(f) for f in fractions), strict=True))}
    if "x_entropy" in stats:
        out["binoculars"] = binoculars(stats["logprob"], stats["x_entropy"])
    return out


def fast_detectgpt(logprob: np.ndarray, mu: np.ndarray, var: np.ndarray) -> float:
    """Fast-DetectGPT's analytic sampling discrepancy: (sum log p(x) - sum mu) / sqrt(sum var)."""
    total = float(var.sum())
    return float((logprob.sum() - mu.sum()) / math.sqrt(total)) if total > 0 else 0.0


def binoculars(logprob: np.ndarray, x_entropy: np.ndarray) -> float:
    """Binoculars: log-perplexity under the performer / mean cross-entropy (observer against performer)."""
    return float(-logprob.mean() / x_entropy.mean())


def flat(doc: dict) -> dict[str, float]:
    """One row of named scores (the GLTR top-10 fraction as gltr_top10), the evaluation's methods."""
    row = {k: v for k, v in doc.items() if k != "gltr"}
    return row | {"gltr_top10": doc["gltr"]["top10"]}


def detect(loaded, text: str, observer=None, thresholds=BUCKETS, top: int = TOP) -> dict:
    """Everything the page and the CLI show for one text: {"model", "observer", "tokens": [{position, id,
    token, rank, logprob, p, entropy, ratio, bucket, top: [{id, token, p}]}], "scores", "ids"}."""
    try:
        ids = encode(loaded.tokenizer, text)
    except LabError as e:
        raise DetectError(str(e), "empty") from None
    stats = token_stats(loaded, ids, observer, top)
    texts = token_texts(loaded.tokenizer, ids)
    names = dict(zip(np.unique(stats["top_id"]).tolist(),
                     token_texts(loaded.tokenizer, np.unique(stats["top_id"]).tolist()), strict=True))
    bucket = buckets(stats["rank"], thresholds)
    tokens = [{"position": int(p), "id": int(ids[p]), "token": texts[p], "rank": int(r), "logprob": float(lp),
               "p": math.exp(lp), "entropy": float(h), "ratio": float(q), "bucket": int(b),
               "top": [{"id": int(i), "token": names[int(i)], "p": float(v)} for i, v in zip(ti, tp, strict=True)]}
              for p, r, lp, h, q, b, ti, tp in zip(stats["position"], stats["rank"], stats["logprob"],
                                                   stats["entropy"], stats["ratio"], bucket, stats["top_id"],
                                                   stats["top_p"], strict=True)]
    return {"model": loaded.name, "observer": observer.name if observer is not None else None, "ids": ids,
            "tokens": tokens, "scores": scores(stats, thresholds)}
