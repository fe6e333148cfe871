"""How well each detector score separates the evaluation set's human and machine texts, and who it wrongs.

For the detector page (chapter 12) and `python -m lab detect-eval`. Machine text is the positive
class. Each score is read in its fixed direction (lab.detect.scoring.MACHINE_HIGH): `oriented` flips the
scores where machine text is expected low, so "flagged" is always oriented score >= threshold.

- `auroc`: the Mann-Whitney form, P(a machine text scores above a human one) + half the ties;
  equal to scikit-learn's roc_auc_score (tested).
- Groups: a language, a length band or a decoding setting / generating model compare that group's
  machine texts with the human texts they are paired with (same language, same length band; every
  human text for a setting or a generator, which all have one continuation per human text).
- `base_rate`: of the texts flagged, the share written by a person, by Bayes' rule from the measured
  true- and false-positive rates and a prevalence of machine text.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from pathlib import Path

import numpy as np

from lab.detect.labelled_set import PATH as SET_PATH
from lab.detect.labelled_set import band
from lab.detect.scoring import BUCKETS, MACHINE_HIGH, check_decoder, check_pair, flat, moments, scores, token_stats
from lab.perplexity import next_token

# The set's rows for the course pair (course-gpt2, observer course-gpt2-2x128), computed once and shipped so
# that the page opens at once (docs/detector.md: the time it saves); `python -m lab detect-eval --save` writes
# them, and a test recomputes a sample. Used only when the models' weights, the set and the buckets all match.
SCORES_PATH = Path(__file__).resolve().parents[1] / "data" / "detect_scores.json"


BATCH_FLOATS = 8_000_000  # log-probabilities per batch (texts x tokens x vocabulary): 32 MB, ~5 such arrays live


def _batch_stats(loaded, batch: list[list[int]], observer=None) -> list[dict]:
    """token_stats' logprob, rank, mu, var (and x_entropy) for texts that fit the context, in one forward pass
    per model (lab.perplexity.next_token over the batch): right-padded, so a causal model's real positions never
    see the padding."""
    import torch

    t = max(len(ids) for ids in batch)
    x = torch.tensor([ids + [ids[-1]] * (t - len(ids)) for ids in batch])  # (B, T)
    parts = []
    with torch.inference_mode():  # both generators run and end inside it (see lab.perplexity.next_token)
        theirs = next_token(observer.model, x, t, normalise="softmax") if observer is not None else None
        for pos, logp in next_token(loaded.model, x, t):  # (B, n, V): position p predicts x[:, p]
            got = logp.gather(2, x[:, pos, None])[..., 0]
            part = {"logprob": got, "rank": (logp > got[..., None]).sum(-1) + 1}
            part["mu"], part["var"] = moments(logp)
            if theirs is not None:
                part["x_entropy"] = -(next(theirs)[1] * logp).sum(-1)
            parts.append(part)
        if theirs is not None:
            theirs.close()
    stats = {k: torch.cat([p[k] for p in parts], dim=1) for k in parts[0]}  # (B, T - 1) each
    return [{k: v[b, :len(ids) - 1].numpy() if k == "rank" else v[b, :len(ids) - 1].double().numpy()
             for k, v in stats.items()} for b, ids in enumerate(batch)]


def score_set(loaded, texts: list[dict], observer=None, thresholds=BUCKETS, progress=None) -> list[dict]:
    """One row per text: its id, label and groups, and every score (binoculars only with an observer).
    Texts that fit the context go several at a time, up to BATCH_FLOATS log-probabilities per batch (the same
    numbers as token_stats, tested); longer ones alone."""
    check_decoder(loaded)
    if observer is not None:
        check_pair(loaded, observer)
    context = min(loaded.context, observer.context) if observer is not None else loaded.context
    encoded = [loaded.tokenizer(item["text"], verbose=False)["input_ids"] for item in texts]
    stats: list = [None] * len(texts)
    fits = [i for i, ids in enumerate(encoded) if 2 <= len(ids) <= context]
    size = max(1, BATCH_FLOATS // (context * len(loaded.tokenizer)))
    for s in range(0, len(fits), size):
        part = fits[s:s + size]
        for i, st in zip(part, _batch_stats(loaded, [encoded[i] for i in part], observer), strict=True):
            stats[i] = st
        if progress:
            progress(min(1.0, (s + len(part)) / len(texts)))
    for i in (i for i, st in enumerate(stats) if st is None):
        stats[i] = token_stats(loaded, encoded[i], observer)
    return [{"id": item["id"], "label": item["label"], "lang": item["lang"], "band": band(item["tokens"]),
             "setting": item.get("setting"), "generator": item.get("generator"), **flat(scores(st, thresholds))}
            for item, st in zip(texts, stats, strict=True)]


def oriented(method: str, values) -> np.ndarray:
    """Scores turned so that machine text is expected high (a flag is oriented >= threshold)."""
    v = np.asarray(values, dtype=float)
    return v if MACHINE_HIGH[method] else -v


def auroc(labels, values) -> float:
    """Area under the ROC curve (labels 1 = machine): P(machine > human) + P(tie) / 2, by midranks."""
    y, s = np.asarray(labels, dtype=bool), np.asarray(values, dtype=float)
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    start = 0
    for end in range(1, len(s) + 1):  # midranks for ties
        if end == len(s) or sorted_s[end] != sorted_s[start]:
            ranks[order[start:end]] = (start + end + 1) / 2
            start = end
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def roc(labels, values) -> dict[str, np.ndarray]:
    """The ROC curve: for each distinct threshold (highest first), the false- and true-positive rates of
    flagging every text scoring at or above it; starts at (0, 0)."""
    y, s = np.asarray(labels, dtype=bool), np.asarray(values, dtype=float)
    thresholds = np.unique(s)[::-1]

    def at_or_above(group: np.ndarray) -> np.ndarray:  # the share of `group` scoring >= each threshold
        return (len(group) - np.searchsorted(np.sort(group), thresholds, side="left")) / len(group)

    tpr, fpr = (np.concatenate([[0.0], at_or_above(s[mask])]) for mask in (y, ~y))
    return {"threshold": np.concatenate([[np.inf], thresholds]), "fpr": fpr, "tpr": tpr}


def rates(labels, values, threshold: float) -> dict:
    """The confusion matrix of flagging oriented scores >= threshold, with its TPR and FPR."""
    y, flagged = np.asarray(labels, dtype=bool), np.asarray(values, dtype=float) >= threshold
    tp, fp = int((flagged & y).sum()), int((flagged & ~y).sum())
    fn, tn = int((~flagged & y).sum()), int((~flagged & ~y).sum())
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "tpr": tp / max(1, tp + fn), "fpr": fp / max(1, fp + tn)}


def base_rate(tpr: float, fpr: float, prevalence: float) -> float | None:
    """Of the texts flagged, the share written by a person: fpr (1 - pi) / (fpr (1 - pi) + tpr pi); None when
    nothing is flagged."""
    flagged = fpr * (1 - prevalence) + tpr * prevalence
    return None if flagged == 0 else fpr * (1 - prevalence) / flagged


def groups(rows: list[dict]) -> dict[str, np.ndarray]:
    """Each group's rows as a boolean mask: "lang:en", "length:short", "setting:greedy", "generator:course-gpt2"
    (a group of machine texts with the human texts it is compared against)."""
    label = np.array([r["label"] for r in rows])
    human = label == "human"
    out = {}
    for field, name in (("lang", "lang"), ("band", "length")):
        for value in sorted({r[field] for r in rows}):
            out[f"{name}:{value}"] = np.array([r[field] == value for r in rows])
    for field in ("setting", "generator"):
        for value in dict.fromkeys(r[field] for r in rows if r[field]):
            out[f"{field}:{value}"] = human | np.array([r[field] == value for r in rows])
    return out


RAID_FPRS = (0.01, 0.05)  # RAID's headline (Dugan et al. 2024): the true-positive rate at 1 % and 5 % false positives


def tpr_at_fpr(labels, values, fpr: float) -> float:
    """The true-positive rate of the best threshold whose false-positive rate is at most fpr (the ROC curve read
    at fpr, as RAID reports it): with n human texts, fewer than one in 1/fpr of them may be flagged."""
    curve = roc(labels, values)
    return float(curve["tpr"][curve["fpr"] <= fpr + 1e-12].max())


def evaluate(rows: list[dict]) -> dict:
    """The contract's table: {"n_human", "n_machine", "methods": {name: {"auroc", "by_group": {group: auroc},
    "tpr_at_fpr": {"0.01": tpr, "0.05": tpr}, "median_human", "median_machine"}}}} (tpr_at_fpr: RAID's headline
    figure, over the whole set; the medians are of the raw scores: the page shows them beside a text's)."""
    labels = is_machine(rows)
    methods = [m for m in MACHINE_HIGH if all(m in r for r in rows)]
    masks = groups(rows)
    table = {}
    for m in methods:
        s = oriented(m, [r[m] for r in rows])
        raw = np.array([r[m] for r in rows], dtype=float)
        table[m] = {"auroc": auroc(labels, s), "by_group": {g: auroc(labels[k], s[k]) for g, k in masks.items()},
                    "tpr_at_fpr": {f"{f:g}": tpr_at_fpr(labels, s, f) for f in RAID_FPRS},
                    "median_human": float(np.nanmedian(raw[~labels])),
                    "median_machine": float(np.nanmedian(raw[labels]))}
    return {"n_human": int((~labels).sum()), "n_machine": int(labels.sum()), "methods": table}


def is_machine(rows: list[dict]) -> np.ndarray:
    """True for each machine-written text of the rows (the positive class)."""
    return np.array([r["label"] == "machine" for r in rows])


def at_threshold(rows: list[dict], method: str, percentile: float, prevalence: float | None = None) -> dict:
    """A detector tuned on this set: flag what scores above `percentile` of the human texts' oriented scores
    (so about 100 - percentile % of them are wrongly flagged, the way a false-positive rate is chosen).

    {"method", "percentile", "threshold" (oriented), "score_threshold" (in the score's own direction), "tp", "fp",
    "fn", "tn", "tpr", "fpr", "auroc", "roc": {"fpr", "tpr"}, "by_group": {group: {"rate": "fpr" | "tpr",
    "value", "texts"}}}: the false-positive rate of human texts per language and length band, the true-positive
    rate per decoding setting and generating model; with a prevalence (share of machine text), "prevalence" and
    "flagged_human_share" (base_rate: of the flagged texts, the share a person wrote; None when none is flagged).
    """
    y, s = is_machine(rows), oriented(method, [r[method] for r in rows])
    cut = float(np.percentile(s[~y], percentile))
    curve = roc(y, s)
    out = {"method": method, "percentile": percentile, "threshold": cut,
           "score_threshold": cut if MACHINE_HIGH[method] else -cut, **rates(y, s, cut), "auroc": auroc(y, s),
           "roc": {"fpr": curve["fpr"].tolist(), "tpr": curve["tpr"].tolist()}, "by_group": {}}
    for name, mask in groups(rows).items():
        kind = "fpr" if name.split(":")[0] in ("lang", "length") else "tpr"
        out["by_group"][name] = {"rate": kind, "value": rates(y[mask], s[mask], cut)[kind],
                                 "texts": int((~y[mask]).sum() if kind == "fpr" else y[mask].sum())}
    if prevalence is not None:
        out |= {"prevalence": prevalence, "flagged_human_share": base_rate(out["tpr"], out["fpr"], prevalence)}
    return out


def nice_edges(lo: float, hi: float, max_bins: int = 40) -> np.ndarray:
    """Bin edges from lo to hi in a round step (1, 2 or 5 times a power of ten, as Vega-Lite's `bin` picks): the
    smallest such step that covers lo..hi in at most `max_bins` bins, the first edge at or below lo and the last
    at or above hi."""
    span = hi - lo if hi > lo else max(abs(lo), 1.0)
    magnitude = 10.0 ** np.floor(np.log10(span / max_bins))
    for step in (m * magnitude for m in (1, 2, 5, 10, 20, 50)):
        start, stop = np.floor(lo / step), np.ceil(hi / step)
        n = max(1, int(stop - start))
        if n <= max_bins:
            return (start + np.arange(n + 1)) * step
    raise AssertionError("unreachable: a step of 50 x 10^k spans lo..hi in fewer bins")


def histogram(rows: list[dict], method: str, max_bins: int = 40) -> dict:
    """One score (in its own direction) over the set, human against machine: {"edges": the bins' edges (nice_edges),
    "human", "machine": each group's share of its own texts in each bin (np.histogram's: a bin holds its left edge,
    the last one both)}. The detector page draws it (there are several machine texts for each human one, so
    counts would hide the human texts)."""
    values, machine = np.array([r[method] for r in rows], dtype=float), is_machine(rows)
    edges = nice_edges(float(values.min()), float(values.max()), max_bins)
    shares = {who: np.histogram(values[mask], edges)[0] / max(1, int(mask.sum()))
              for who, mask in (("human", ~machine), ("machine", machine))}
    return {"edges": edges.tolist(), "human": shares["human"].tolist(), "machine": shares["machine"].tolist()}


# Published figures the detector page shows beside its own (issue 51: no number typed into a translated string),
# each with where it was read (DESIGN.md's references; docs/detector.md).
PUBLISHED = {
    "openai_roberta": {"accuracy_pct": 95, "generator_params_b": 1.5,
                       "source": "Solaiman et al. 2019, Release Strategies and the Social Impacts of Language Models"},
    "openai_classifier": {"caught_pct": 26, "human_flagged_pct": 9, "released": "January 2023",
                          "withdrawn": "July 2023",
                          "source": "OpenAI, New AI classifier for indicating AI-written text (2023; withdrawn)"},
    "liang_2023": {"detectors": 7, "source": "Liang et al. 2023, GPT detectors are biased against non-native English "
                                             "writers (Patterns)"},
}


_WEIGHTS_IDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a loaded model -> its fingerprint


def weights_id(loaded) -> str:
    """A short fingerprint of a model's weights: its input embeddings' first 64 rows (a stand-in or a retrained
    model differs). Computed once per loaded model object (a loaded model is never changed: DESIGN.md), since the
    detector page asks on every rerun."""
    found = _WEIGHTS_IDS.get(loaded.model)
    if found is None:
        rows = loaded.model.get_input_embeddings().weight[:64].detach().float().contiguous().numpy()
        found = _WEIGHTS_IDS[loaded.model] = hashlib.sha256(rows.tobytes() + str(rows.shape).encode()).hexdigest()[:16]
    return found


def _key(loaded, observer, thresholds) -> dict:
    return {"model": weights_id(loaded), "observer": weights_id(observer) if observer is not None else None,
            "buckets": list(thresholds), "set": hashlib.sha256(SET_PATH.read_bytes()).hexdigest()[:16]}


def shipped_rows(loaded, observer=None, thresholds=BUCKETS) -> list[dict] | None:
    """The shipped rows when they were computed by these very models on this set with these buckets; without
    an observer, the rows of any shipped observer less their binoculars column. None otherwise."""
    if not SCORES_PATH.exists():
        return None
    want = _key(loaded, observer, thresholds)
    for entry in json.loads(SCORES_PATH.read_text(encoding="utf-8"))["entries"]:
        key = entry["key"]
        if key == want or (observer is None and {**key, "observer": None} == want):
            keep = observer is not None
            return [{k: v for k, v in r.items() if keep or k != "binoculars"} for r in entry["rows"]]
    return None


def save_rows(loaded, observer, rows: list[dict], thresholds=BUCKETS) -> None:
    """Ship these rows (replacing any entry for the same models and buckets, and every entry of an older set)."""
    key = _key(loaded, observer, thresholds)
    entries = json.loads(SCORES_PATH.read_text(encoding="utf-8"))["entries"] if SCORES_PATH.exists() else []
    entry = {"model": loaded.name, "observer": getattr(observer, "name", None), "key": key, "rows": rows}
    entries = [e for e in entries if e["key"] != key and e["key"]["set"] == key["set"]] + [entry]
    note = "lab.detect.evaluation.score_set's rows, shipped (python -m lab detect-eval --save)"
    SCORES_PATH.write_text(json.dumps({"note": note, "entries": entries}) + "\n", encoding="utf-8")
