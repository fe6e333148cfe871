"""Embedding analogies and nearest neighbours over a model's input token embeddings (analogies page, ch. 02).

The vectors are the rows of the input embedding matrix, `model.get_input_embeddings().weight`:
`wte` for GPT-2, `tokens_embed` for GPT-1, `roberta.embeddings.word_embeddings` for RoBERTa. No
forward pass runs here. The matrix with every row scaled to length 1 is computed once per model and
kept in a weak dictionary keyed on the model object (it goes when the model goes); the model and its
weights are only read, never changed.

Conventions (gensim's `most_similar` / `most_similar_cosmul`, Levy & Goldberg 2014):
- 3CosAdd: a − b + c over unit vectors â − b̂ + ĉ; each candidate scores cos(x, â − b̂ + ĉ).
- 3CosMul: cos shifted to [0, 1] as (1 + cos) / 2; score = cos'(x, a) · cos'(x, c) / (cos'(x, b) + ε),
  ε = 0.001 as in the paper (gensim uses 1e-6: pass eps to compare).
- Words are looked up with a leading space (" king", the form a word takes inside a sentence) unless
  space=False. A word of several tokens has no row of its own: it is refused, or, with
  mean_pieces=True, stands for the (normalised) mean of its pieces' rows — an approximation.
- With exclusion (the default) the tokens of the input words are never candidates: without it the
  top answer is usually one of the inputs (c itself, most often).
- Rows the model barely trained are left out of the answers by default (lab.learned: tokens seen
  fewer than 1,000 times in training for the course models, Land & Bartolo's weights-only heuristic
  for the others); all_tokens=True keeps every row. The expected word's ranks count the same way.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from lab import learned
from lab.errors import LabError
from lab.text import token_texts

EPS_MUL = 0.001  # Levy & Goldberg's ε for 3CosMul
METHODS = ("add", "mul")
_UNIT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> (V, C) float32 unit rows
_UNIT_LOCK = threading.Lock()

# Presets: (a, b, c, expected, mean_pieces) meaning a − b + c ≈ expected. Each carries a verdict measured on
# both shipped course models with the page's defaults (3CosAdd, leading space, inputs excluded, rarely
# trained rows left out), 2026-12; tests/test_embeddings.py reruns every preset and holds each verdict.
# The course vocabulary (GPT-2's first 7,935 merges) splits " queen", " Rome", " rei", " homem", " mulher"
# and " ele" into two tokens each, so the classics cannot be asked there; English morphology holds, and
# so does Portuguese where its words are single tokens: function words, and the contractions
# do = de + o, no = em + o (" do" − " de" + " em" → " no", first on both).
PRESETS = {
    "king": ("king", "man", "woman", "queen", False),
    "paris": ("Paris", "France", "Italy", "Rome", False),
    "walking": ("walked", "walking", "playing", "played", False),
    "rei": ("rei", "homem", "mulher", "rainha", False),
    "ele": ("ele", "homem", "mulher", "ela", False),
    "users": ("files", "file", "user", "users", False),
    "removed": ("installed", "install", "remove", "removed", False),
    "smaller": ("bigger", "big", "small", "smaller", False),
    "de_e": ("de", "of", "and", "e", False),  # " de" is to " of" as " e" is to " and"
    "do_no": ("do", "de", "em", "no", False),  # de + o = do as em + o = no
    "package": ("file", "arquivo", "pacote", "package", True),  # Portuguese pieces averaged
}
# What each preset does on the course models: "holds" (the expected word first on both), "fails" (asked,
# but not first: " played" is a rarely trained row, " package" ranks 3rd / 2nd), "refused" (a word is
# several tokens there, so the analogy cannot come out right).
PRESET_VERDICTS = {"holds": ("users", "removed", "smaller", "de_e", "do_no"), "fails": ("walking", "package"),
                   "refused": ("king", "paris", "rei", "ele")}
PRESET_LANGUAGES = {"king": "en", "paris": "en", "walking": "en", "rei": "pt", "ele": "pt", "users": "en",
                    "removed": "en", "smaller": "en", "de_e": "pt-en", "do_no": "pt", "package": "pt-en"}


def verdict(key: str) -> str:
    """A preset's measured verdict on the course models: "holds", "fails" or "refused"."""
    return next(v for v, keys in PRESET_VERDICTS.items() if key in keys)


class EmbeddingError(LabError):
    """A word that cannot take part: `reason` "empty" or "multi_token" (details: word, pieces, ids).

    str(e) is the English line the CLI prints; a page writes its own from reason and details.
    """


def embedding_matrix(model):
    """The model's input token embeddings, (V, C) — the parameter itself: read it, never write it."""
    return model.get_input_embeddings().weight


def unit_matrix(model):
    """Every embedding row scaled to length 1, (V, C) float32; computed once per model, then cached.

    Zero rows stay zero (their cosine with anything is 0).
    """
    import torch

    with _UNIT_LOCK:
        unit = _UNIT.get(model)
        if unit is None:
            with torch.no_grad():
                w = embedding_matrix(model).detach().to(torch.float32)  # (V, C)
                unit = w / w.norm(dim=1, keepdim=True).clamp_min(1e-12)  # a new tensor: w is untouched
            _UNIT[model] = unit
        return unit


def vocab_size(model, tokenizer) -> int:
    """Rows that are real tokens: the embedding rows the tokenizer can name."""
    return min(embedding_matrix(model).shape[0], len(tokenizer))


def lookup(tokenizer, word: str, space: bool = True) -> list[int]:
    """The token ids of one word (trimmed), with a leading space unless space=False, no special tokens."""
    w = word.strip()
    if not w:
        raise EmbeddingError("a word is empty", "empty")
    return list(tokenizer((" " + w) if space else w, add_special_tokens=False)["input_ids"])


def word_vector(model, tokenizer, word: str, space: bool = True, mean_pieces: bool = False):
    """(ids, unit vector (C,)) of a word: its own row, or the normalised mean of its pieces' rows."""
    import torch

    ids = lookup(tokenizer, word, space)
    if len(ids) > 1 and not mean_pieces:
        pieces = token_texts(tokenizer, ids)
        shown = (" " if space else "") + word.strip()
        raise EmbeddingError(f"{shown!r} is {len(ids)} tokens ({' + '.join(map(repr, pieces))}); single-token "
                             "arithmetic needs one token per word (--mean-pieces uses the mean of its pieces, "
                             "an approximation)", "multi_token", word=shown, pieces=pieces, ids=ids)
    with torch.no_grad():
        v = embedding_matrix(model).detach()[ids].to(torch.float32).mean(0)  # (C,)
        return ids, v / v.norm().clamp_min(1e-12)


def cos_add(unit, vectors):
    """3CosAdd scores of every row of `unit` (V, C) for unit vectors (a, b, c): cos(x, â − b̂ + ĉ)."""
    a, b, c = vectors
    q = a - b + c  # (C,)
    return unit @ (q / q.norm().clamp_min(1e-12))  # (V,)


def cos_mul(unit, vectors, eps: float = EPS_MUL):
    """3CosMul scores for unit vectors (a, b, c): cos'(x, a) · cos'(x, c) / (cos'(x, b) + eps),
    cos' = (1 + cos) / 2."""
    a, b, c = ((1 + unit @ v) / 2 for v in vectors)  # each (V,)
    return a * c / (b + eps)


def analogy_scores(model, tokenizer, a: str, b: str, c: str, method: str = "add", space: bool = True,
                   mean_pieces: bool = False, eps: float = EPS_MUL) -> dict:
    """Scores of every token as the answer to a − b + c: words, their token ids and pieces, scores (V,) float32."""
    import torch

    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    looked = [word_vector(model, tokenizer, w, space, mean_pieces) for w in (a, b, c)]
    unit = unit_matrix(model)[:vocab_size(model, tokenizer)]
    vectors = [v for _, v in looked]
    with torch.no_grad():
        scores = cos_add(unit, vectors) if method == "add" else cos_mul(unit, vectors, eps)
    ids = [i for i, _ in looked]
    return {"words": [a, b, c], "tokens": ids, "pieces": [token_texts(tokenizer, i) for i in ids],
            "vectors": np.stack([v.numpy() for v in vectors]), "scores": scores.numpy()}


def neighbour_scores(model, tokenizer, word: str, space: bool = True, mean_pieces: bool = False) -> dict:
    """Cosine of every token with one word: words, token ids, pieces, vectors (1, C), scores (V,)."""
    import torch

    ids, v = word_vector(model, tokenizer, word, space, mean_pieces)
    with torch.no_grad():
        scores = unit_matrix(model)[:vocab_size(model, tokenizer)] @ v
    return {"words": [word], "tokens": [ids], "pieces": [token_texts(tokenizer, ids)],
            "vectors": v.numpy()[None], "scores": scores.numpy()}


def excluded(query: dict) -> set[int]:
    """The token ids of the input words (every piece of a word averaged from pieces)."""
    return {i for ids in query["tokens"] for i in ids}


def top(scores: np.ndarray, k: int, exclude=()) -> list[tuple[int, float]]:
    """The k best (id, score), best first, leaving out the ids in `exclude`."""
    s = np.array(scores, dtype=np.float32)  # a copy: the caller's scores stay as they are
    drop = [i for i in exclude if i < len(s)]
    s[drop] = -np.inf
    k = max(0, min(k, len(s) - len(drop)))
    best = np.argpartition(s, -k)[-k:] if 0 < k < len(s) else np.arange(len(s))
    best = best[np.lexsort((best, -s[best]))][:k]  # by score, ties by id
    return [(int(i), float(scores[i])) for i in best]


def rank(scores: np.ndarray, token_id: int, exclude=()) -> int | None:
    """1 + how many candidates score strictly higher than token_id; None when it is excluded."""
    if token_id in set(exclude):
        return None
    s = np.asarray(scores)
    higher = s > s[token_id]
    higher[[i for i in exclude if i < len(s)]] = False
    return int(higher.sum()) + 1


def results(tokenizer, best: list[tuple[int, float]]) -> list[dict]:
    """[{"token", "id", "score"}] for (id, score) pairs: the CLI's and the page's result rows."""
    texts = token_texts(tokenizer, [i for i, _ in best])
    return [{"token": t, "id": i, "score": s} for t, (i, s) in zip(texts, best, strict=True)]


def rare_rows(model, tokenizer, all_tokens: bool = False) -> tuple[set[int], dict]:
    """(ids left out of the answers, what the CLI's "left_out" says): the rarely trained rows
    (lab.learned), or none with all_tokens=True."""
    if all_tokens:
        return set(), {"count": 0, "method": None}
    found = learned.rarely_trained(model, tokenizer)
    return {int(i) for i in found["ids"]}, learned.left_out(found)


def analogy(model, tokenizer, a: str, b: str, c: str, k: int = 10, method: str = "add", exclude: bool = True,
            space: bool = True, mean_pieces: bool = False, eps: float = EPS_MUL, all_tokens: bool = False) -> dict:
    """a − b + c: {"words", "tokens", "results", "left_out"}, the k best tokens, best first (the CLI's shape)."""
    q = analogy_scores(model, tokenizer, a, b, c, method, space, mean_pieces, eps)
    rare, said = rare_rows(model, tokenizer, all_tokens)
    best = top(q["scores"], k, (excluded(q) if exclude else set()) | rare)
    return {"words": q["words"], "tokens": q["tokens"], "results": results(tokenizer, best), "left_out": said}


def neighbours(model, tokenizer, word: str, k: int = 10, space: bool = True, mean_pieces: bool = False,
               all_tokens: bool = False) -> dict:
    """The k tokens nearest to a word by cosine (its own tokens and, by default, the rarely trained rows left
    out): {"words", "tokens", "results", "left_out"}."""
    q = neighbour_scores(model, tokenizer, word, space, mean_pieces)
    rare, said = rare_rows(model, tokenizer, all_tokens)
    return {"words": q["words"], "tokens": q["tokens"], "results": results(tokenizer, top(q["scores"], k,
                                                                                          excluded(q) | rare)),
            "left_out": said}


def expected_rank(tokenizer, query: dict, word: str, space: bool = True, leave_out=()) -> dict:
    """Where the expected word lands: {"ids", "pieces", "rank" (inputs and `leave_out` excluded), "rank_all"
    (nothing excluded), "left_out" (the word is one of `leave_out`)}.

    A word of several tokens has no row to rank: both ranks are None and `pieces` says why.
    """
    ids = lookup(tokenizer, word, space)
    out = {"word": word, "ids": ids, "pieces": token_texts(tokenizer, ids), "rank": None, "rank_all": None,
           "left_out": len(ids) == 1 and ids[0] in set(leave_out)}
    if len(ids) == 1 and ids[0] < len(query["scores"]):
        out["rank"] = rank(query["scores"], ids[0], excluded(query) | set(leave_out))
        out["rank_all"] = rank(query["scores"], ids[0])
    return out


def pca2(points: np.ndarray) -> tuple[np.ndarray, float]:
    """(N, 2) coordinates on the two main axes of the centred points, and the share of variance they keep.

    Signs are fixed so that each axis's largest loading is positive (the same picture every run).
    """
    x = np.asarray(points, dtype=np.float64)
    x = x - x.mean(0)
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    vt = vt[:2]  # (2, C): the two main axes
    vt = vt * np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(1)])[:, None]
    total = float((s ** 2).sum())
    kept = float((s[:2] ** 2).sum() / total) if total > 0 else 1.0
    coords = x @ vt.T
    if coords.shape[1] < 2:  # one point: no second axis
        coords = np.hstack([coords, np.zeros((len(x), 2 - coords.shape[1]))])
    return coords, kept


def picture(model, query: dict, best: list[tuple[int, float]], tokenizer, expected: int | None = None) -> dict:
    """The analogy in 2D: a, b, c, the point a − b + c, the results and the expected token (an id, or None).

    Returns {"points": [{"label", "role", "x", "y"}], "arrows": [{"from", "to", "pair"}], "kept"}.
    The PCA is fitted on exactly the points drawn; a projection keeps parallel arrows parallel, so
    b→a and c→(a − b + c) stay the two equal sides of the parallelogram. a − b + c is drawn as the
    sum itself (not scaled to length 1), so the parallelogram closes; the scores compare directions.
    """
    va, vb, vc = query["vectors"]
    unit = unit_matrix(model)
    ids = [i for i, _ in best] + ([expected] if expected is not None and expected not in {i for i, _ in best} else [])
    labels = [(query["words"][n], role) for n, role in enumerate(("a", "b", "c"))] + [("a − b + c", "target")]
    labels += [(text, "expected" if i == expected else "result") for i, text in zip(ids, token_texts(tokenizer, ids),
                                                                                     strict=True)]
    rows = np.vstack([va, vb, vc, va - vb + vc] + ([unit[ids].numpy()] if ids else []))
    coords, kept = pca2(rows)
    points = [{"label": lab, "role": role, "x": float(x), "y": float(y)}
              for (lab, role), (x, y) in zip(labels, coords, strict=True)]
    arrows = [{"from": 1, "to": 0, "pair": "a − b"}, {"from": 2, "to": 3, "pair": "a − b"},
              {"from": 1, "to": 2, "pair": "c − b"}, {"from": 0, "to": 3, "pair": "c − b"}]
    return {"points": points, "arrows": arrows, "kept": kept}
