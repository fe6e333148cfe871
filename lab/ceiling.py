"""The ceiling of this path (chapter 16): LeCun's compounding-error argument, measured on a decoder.

If each token is wrong with probability e, independently, an n-token answer is right with probability
(1 - e)^n. Both parts can be measured with teacher forcing (the text itself as context, the
perplexity page's windows for a text longer than the context):
- e: the share of positions whose top-1 next token (the argmax) is not the text's token;
- observed(n): the share of start positions t whose top-1 predictions are right at t, t+1, ..., t+n-1,
  against predicted(n) = (1 - e)^n;
- independence: the error rate right after an error against right after a correct prediction; and,
  forcing one wrong token into the context, the error rate of the next k positions against the same
  positions without it (does the model condition on its own mistake, or recover?).
The text's first token has no context and is not predicted. The shared model is only read.
"""

from __future__ import annotations

import numpy as np

from lab.errors import LabError
from lab.models import require_decoder
from lab.perplexity import next_token
from lab.text import encode

MAX_N = 64
LOGIT_ROWS = 256  # positions whose logits are held at once
FORCED_CONTEXT = 128  # tokens of text before a forced token that the experiment keeps (bounded cost on big models)
COURSE_DECODERS = ("course-gpt2-1x64", "course-gpt2-2x128", "course-gpt2")  # the course table's, smallest first
COURSE_CHARS = 6_000  # the course table reads each unseen text's first 6,000 characters (as the page does)
K = 16  # tokens followed after a forced one


class CeilingError(LabError):
    """Bad input: `reason` "empty", "one_token" (nothing to predict), "encoder" (model), "max_n" (value:
    a whole number from 1 to 4,096), "position" (position, tokens: a forced position inside the text)."""


def check(loaded, max_n: int = MAX_N) -> None:
    """CeilingError for an encoder or a max_n out of range."""
    require_decoder(loaded, CeilingError, "the ceiling")
    if isinstance(max_n, bool) or not isinstance(max_n, int) or not 1 <= max_n <= 4096:
        raise CeilingError(f"max-n must be a whole number from 1 to 4,096, not {max_n}", "max_n", value=max_n)


def predictions(model, ids: list[int], context: int) -> np.ndarray:
    """The top-1 prediction for every token after the first: (n - 1,) ids, predictions[t - 1] for ids[t]."""
    import torch

    out = np.empty(len(ids) - 1, dtype=np.int64)
    with torch.inference_mode():  # 256 x 50,257 logits at a time (51 MB), not the window's
        for pos, logits in next_token(model, ids, context, normalise=None, rows=LOGIT_ROWS):
            out[pos.numpy() - 1] = logits.argmax(-1).numpy()
    return out


def correct(model, ids: list[int], context: int) -> np.ndarray:
    """For every token after the first: True where the top-1 prediction is the text's token."""
    return predictions(model, ids, context) == np.asarray(ids[1:])


def observed(right: np.ndarray, max_n: int) -> np.ndarray:
    """observed[n - 1]: the share of starts t (with t + n - 1 inside the text) whose n predictions from t on
    are all right; NaN where the text has fewer than n predictions."""
    out = np.full(max_n, np.nan)
    run = right.astype(bool)
    for n in range(1, min(max_n, len(right)) + 1):
        if n > 1:
            run = run[:-1] & right[n - 1:]  # all right from t to t + n - 1
        out[n - 1] = run.mean()
    return out


def conditional(right: np.ndarray) -> tuple[float | None, float | None]:
    """(error rate right after an error, right after a correct prediction); None where there is no such case."""
    before, after = right[:-1], ~right[1:]
    rate = lambda mask: float(after[mask].mean()) if mask.any() else None  # noqa: E731
    return rate(~before), rate(before)


def half_life(values: np.ndarray) -> int | None:
    """The first n (1-based) at which a curve falls below one half; None if it never does within the curve."""
    below = np.flatnonzero(np.asarray(values) < 0.5)
    return int(below[0]) + 1 if len(below) else None


def measure(loaded, ids: list[int], max_n: int = MAX_N) -> dict:
    """The contract's numbers from ids: tokens, e, curve [{n, observed, predicted}], after_error, after_correct;
    half_observed and half_predicted, the first n where each curve falls below one half (None: not within max_n)."""
    check(loaded, max_n)
    if len(ids) < 2:
        raise CeilingError("the text is a single token: there is nothing to predict", "one_token")
    right = correct(loaded.model, ids, loaded.context)
    e = float(1 - right.mean())
    seen = observed(right, max_n)
    after_error, after_correct = conditional(right)
    curve = [{"n": n, "observed": None if np.isnan(o) else float(o), "predicted": (1 - e) ** n}
             for n, o in zip(range(1, max_n + 1), seen, strict=True)]
    return {"model": loaded.name, "tokens": len(right), "e": e, "curve": curve,
            "after_error": after_error, "after_correct": after_correct,
            "half_observed": half_life(seen), "half_predicted": half_life([c["predicted"] for c in curve])}


def ceiling(loaded, text: str, max_n: int = MAX_N) -> dict:
    """measure() on a text (CeilingError on bad input)."""
    check(loaded, max_n)
    try:
        ids = encode(loaded.tokenizer, text)
    except LabError as e:
        raise CeilingError(str(e), "empty") from None
    return measure(loaded, ids, max_n)


def wrong_token(model, ids: list[int], position: int, context: int) -> int:
    """The token forced at `position`: the one the model ranks lowest there (a token it would never have
    written), given the text before it."""
    import torch

    start = max(0, position - context)
    with torch.inference_mode():
        hidden = model.base_model(input_ids=torch.tensor([ids[start:position]])).last_hidden_state[0, -1]
        return int(model.get_output_embeddings()(hidden).argmin())


def forced(loaded, ids: list[int], position: int, k: int = 16) -> dict:
    """The forced-error experiment at one position: ids[position] replaced by wrong_token; for the next k
    tokens, whether the top-1 prediction is right without and with the forced token, both read with the same
    context (at most FORCED_CONTEXT tokens before the position). {"position", "forced",
    "original", "without": [bool], "with": [bool]}."""
    check(loaded)
    if not 1 <= position < len(ids) - 1:
        raise CeilingError(f"the forced position must be between 1 and {len(ids) - 2}, not {position}", "position",
                           position=position, tokens=len(ids))
    end = min(len(ids), position + 1 + k)
    start = max(0, end - loaded.context, position - FORCED_CONTEXT)
    piece = ids[start:end]
    bad = wrong_token(loaded.model, ids[start:], position - start, loaded.context)
    swapped = piece.copy()
    swapped[position - start] = bad
    after = slice(position - start, end - start - 1)  # predictions of ids[position + 1:end]
    truth = np.asarray(ids[position + 1:end])
    without = predictions(loaded.model, piece, loaded.context)[after] == truth
    with_ = predictions(loaded.model, swapped, loaded.context)[after] == truth
    return {"position": position, "forced": bad, "original": ids[position], "without": without.tolist(),
            "with": with_.tolist()}


def forced_summary(loaded, ids: list[int], k: int = 16, positions: int = 16) -> dict:
    """The forced-error experiment at `positions` evenly spread positions: the error rate of the next k tokens
    without and with a forced wrong token, and per distance 1..k after it."""
    room = len(ids) - 2
    if room < 1:
        raise CeilingError("the text is a single token: there is nothing to predict", "one_token")
    spots = sorted(set(np.linspace(1, room, min(positions, room)).astype(int).tolist()))
    runs = [forced(loaded, ids, p, k) for p in spots]
    width = max(len(r["with"]) for r in runs)
    pad = lambda xs: xs + [np.nan] * (width - len(xs))  # noqa: E731
    without = np.array([pad([not x for x in r["without"]]) for r in runs], dtype=float)
    with_ = np.array([pad([not x for x in r["with"]]) for r in runs], dtype=float)
    return {"positions": spots, "k": k, "error_without": float(np.nanmean(without)),
            "error_with": float(np.nanmean(with_)), "by_distance": {
                "without": np.nanmean(without, axis=0).tolist(), "with": np.nanmean(with_, axis=0).tolist()}}


def unseen_texts() -> dict[str, str]:
    """{"en", "pt"}: the Debian documentation no course model saw (lab.perplexity.unseen_texts' documents, each
    once: the shipped file repeats five of them)."""
    import json

    from lab.perplexity import DATA

    docs = json.loads((DATA / "course_unseen.json").read_text(encoding="utf-8"))["documents"]
    unique = list(dict.fromkeys((d["lang"], d["text"]) for d in docs))
    return {lang: "\n\n".join(text for code, text in unique if code == lang) for lang in ("en", "pt")}


def course_row(loaded, text: str, max_n: int = MAX_N, k: int = K, measured: dict | None = None) -> dict:
    """One row of the course table: a model on one text, its e, half-lives, conditional error rates, the
    observed and predicted share of runs of 4 right tokens, and the forced-error experiment's error rates
    (`measured`: ceiling(loaded, text, max_n), when already had)."""
    r = measured if measured is not None else ceiling(loaded, text, max_n)
    f = forced_summary(loaded, encode(loaded.tokenizer, text), k=k)
    return {"model": loaded.name, "tokens": r["tokens"], "e": r["e"],
            "half_observed": r["half_observed"], "half_predicted": r["half_predicted"],
            "after_error": r["after_error"], "after_correct": r["after_correct"],
            "observed_4": r["curve"][3]["observed"], "predicted_4": r["curve"][3]["predicted"],
            "forced_without": f["error_without"], "forced_with": f["error_with"],
            "forced_first_without": f["by_distance"]["without"][0], "forced_first_with": f["by_distance"]["with"][0]}


def falls_with_size(rows: list[dict], order=COURSE_DECODERS) -> bool:
    """True when each bigger model (later in `order`) has a lower e than the smaller one, in every language."""
    for code in {r["lang"] for r in rows}:
        es = [r["e"] for r in sorted((r for r in rows if r["lang"] == code), key=lambda r: order.index(r["model"]))]
        if any(b >= a for a, b in zip(es, es[1:], strict=False)):
            return False
    return True


def verdict(rows: list[dict], order=COURSE_DECODERS) -> dict:
    """Where the simple argument holds on the course table's rows (course_row's, each with its "lang") and where
    it does not: {"falls_with_size", "best": the row with the lowest e {"model", "lang", "e", "half_observed"},
    "error_ratio": {"min", "max"} of after_error / after_correct, "dependence": "clusters" (every ratio above
    1.02), "recovers" (every ratio below 0.98) or "none", "runs_of_4_above": pairs whose runs of 4 right tokens are
    more frequent than (1 - e)^4, "pairs", "forced_first_points" and "forced_points": {"min", "max"}, the rise in
    percentage points of the error of the next token and of the next k tokens after a forced wrong one}."""
    best = min(rows, key=lambda r: r["e"])
    ratio = [r["after_error"] / r["after_correct"] for r in rows if r["after_error"] and r["after_correct"]]
    lift = [100 * (r["forced_with"] - r["forced_without"]) for r in rows]
    first = [100 * (r["forced_first_with"] - r["forced_first_without"]) for r in rows]
    dependence = "clusters" if min(ratio) > 1.02 else "recovers" if max(ratio) < 0.98 else "none"
    return {"falls_with_size": falls_with_size(rows, order),
            "best": {k: best[k] for k in ("model", "lang", "e", "half_observed")},
            "error_ratio": {"min": min(ratio), "max": max(ratio)}, "dependence": dependence,
            "runs_of_4_above": sum(r["observed_4"] > r["predicted_4"] for r in rows), "pairs": len(rows),
            "forced_first_points": {"min": min(first), "max": max(first)},
            "forced_points": {"min": min(lift), "max": max(lift)}}
