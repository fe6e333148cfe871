"""Sampling, step by step: temperature, top-k and top-p over the whole vocabulary (sampling page, ch. 07).

`next_token_distribution(logits, temperature, top_k, top_p)` is what transformers' `generate`
samples from: TemperatureLogitsWarper, then TopKLogitsWarper, then TopPLogitsWarper (the order
`generate` builds them in), each skipped at its "off" value (T = 1, k = 0, p = 1), then a softmax.
Top-p runs over the whole vocabulary, never over a pre-cut top 50. Temperature 0 means greedy: all
the probability on the argmax (what `generate(do_sample=False)` picks).

`steps(...)` generates token by token with a key-value cache (the `cache=` keyword, which transformers
5.24 renamed from `past_key_values`; GPT-1 has none in 5.x, so it re-reads the whole sequence each step,
as `generate` does for it) and draws with a per-call `torch.Generator` seeded by the caller: the same seed
gives the same text in any process, and the process-wide RNG is never touched, so sessions sampling at once
cannot disturb each other. Each step records its distribution compactly: the top candidates at every stage, entropies
and counts, never the whole vocabulary. The shared model is only called, never changed.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterator

import torch

from lab.errors import LabError
from lab.text import encode, readable, token_texts

TOP = 20  # candidates recorded per generated token
NEXT_TOP = 50  # candidates shown for the prompt's next token (the CLI's default --top)
# Below this (and above 0) logits / T overflow float32: inf - inf gives NaN probabilities, and the
# distribution is the argmax's to float precision long before (a 0.01 logit gap at T = 1e-6 is e^-10,000).
MIN_TEMPERATURE = 1e-6
PROMPTS = {"en": "The Debian package manager", "pt": "O gerenciador de pacotes do Debian"}  # the page's defaults


class SamplingError(LabError):
    """Bad sampling input. `reason` ("temperature", "top_k", "top_p", "empty_prompt", "max_new_tokens",
    "too_long", "encoder", "seed") and `details` let a UI write its own language; str(e) is the CLI's line."""


def check(temperature: float, top_k: int, top_p: float) -> None:
    """SamplingError unless temperature is 0 or finite >= MIN_TEMPERATURE, top_k >= 0 (an int), 0 < top_p <= 1."""
    if not isinstance(temperature, int | float) or not math.isfinite(temperature) or temperature < 0:
        raise SamplingError(f"temperature must be a finite number >= 0 (0 = greedy), not {temperature}",
                            "temperature", value=temperature)
    if 0 < temperature < MIN_TEMPERATURE:
        raise SamplingError(f"temperature must be 0 (greedy) or at least {MIN_TEMPERATURE:g}, not {temperature}",
                            "temperature", value=temperature)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise SamplingError(f"top-k must be a whole number >= 0 (0 = off), not {top_k}", "top_k", value=top_k)
    if not isinstance(top_p, int | float) or not math.isfinite(top_p) or not 0 < top_p <= 1:
        raise SamplingError(f"top-p must be in (0, 1] (1 = off), not {top_p}", "top_p", value=top_p)


def _stages(logits: torch.Tensor, temperature: float, top_k: int, top_p: float):
    """(after temperature, after top-k, after top-p) scores, each (B, V), as generate's warpers make them.

    Removed tokens get -inf. Not for temperature 0 (greedy needs no filtering).
    """
    scores = logits / temperature if temperature != 1.0 else logits  # TemperatureLogitsWarper
    after_t = scores
    if top_k:  # TopKLogitsWarper: keep every token scoring at least the k-th best (ties stay)
        kth = torch.topk(scores, min(top_k, scores.shape[-1])).values[..., -1:]  # (B, 1)
        scores = scores.masked_fill(scores < kth, -math.inf)
    after_k = scores
    if top_p < 1.0:  # TopPLogitsWarper: drop the least likely tokens whose total stays <= 1 - p
        ascending, order = torch.sort(scores, descending=False)  # (B, V)
        drop = ascending.softmax(-1).cumsum(-1) <= 1 - top_p
        drop[..., -1:] = False  # the most likely token always stays
        scores = scores.masked_fill(drop.scatter(-1, order, drop), -math.inf)
    return after_t, after_k, scores


def next_token_distribution(logits, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    """Probabilities over the whole vocabulary after temperature, top-k and top-p (float32, sums to 1).

    `logits` is (V,) or (B, V); temperature 0 puts probability 1 on the argmax (the first one on ties).
    """
    check(temperature, top_k, top_p)
    logits = torch.as_tensor(logits, dtype=torch.float32)
    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(torch.float32)
    return _stages(logits, temperature, top_k, top_p)[2].softmax(-1)


def record(logits: torch.Tensor, temperature: float, top_k: int, top_p: float, top: int = TOP) -> dict:
    """One step's distribution, compactly: the `top` raw candidates (best first) at every stage, plus
    entropies (bits), survivor counts, and `p`, the final probabilities over the whole vocabulary.

    logits: (1, V) float32. Candidate lists: id, p_raw (T = 1), p_temp (after temperature), p_topk
    (after top-k, renormalised: its running sum is the curve top-p cuts), p_filtered (after all).
    Only what generate computes anyway runs over the whole vocabulary, plus a few reductions.
    """
    vocab = logits.shape[-1]
    ids = torch.topk(logits[0], min(top, vocab)).indices  # raw order is logit order
    raw = logits[0].softmax(-1)  # (V,)
    log_z = float(logits[0, ids[0]]) - math.log(float(raw[ids[0]]))  # log Z = s_i - log p_i, at the argmax
    entropy_raw = (log_z - float(raw @ logits[0])) / math.log(2)  # H = log Z - E[s], in bits
    if temperature == 0:
        p = next_token_distribution(logits, 0, top_k, top_p)
        p_temp = p_topk = p[0, ids].tolist()
        kept_topk = 1
    else:
        t_scores, k_scores, p_scores = _stages(logits, temperature, top_k, top_p)
        p = p_scores.softmax(-1)  # what is drawn from (generate computes it too)
        after_t = t_scores[0].softmax(-1) if temperature != 1.0 else raw  # fused softmax: the cheap full pass
        after_k = k_scores[0].softmax(-1) if top_k else after_t
        p_temp, p_topk = after_t[ids].tolist(), after_k[ids].tolist()
        kept_topk = int(torch.count_nonzero(after_k)) if top_k else vocab
    survivors = p[0][p[0] > 0]  # a handful of tokens once top-k or top-p has cut
    return {"p": p[0], "log_z": log_z, "argmax": int(ids[0]), "entropy_raw": entropy_raw,
            "entropy": float(-(survivors * survivors.log2()).sum()), "kept_topk": kept_topk,
            "kept": int(survivors.numel()), "vocab": vocab,
            "candidates": {"id": ids.tolist(), "p_raw": raw[ids].tolist(), "p_temp": p_temp,
                           "p_topk": p_topk, "p_filtered": p[0, ids].tolist()}}


def cache_argument(model) -> str | None:
    """The forward keyword that carries the key-value cache: "cache" (transformers 5.24 renamed it),
    "past_key_values" (before), or None when the model has no cache (GPT-1)."""
    params = inspect.signature(model.forward).parameters
    return next((name for name in ("cache", "past_key_values") if name in params), None)


def uses_cache(model) -> bool:
    """True when the model can generate with a key-value cache (GPT-2 can; GPT-1 cannot in 5.x)."""
    return cache_argument(model) is not None


def _check_run(model, ids: list[int], max_new_tokens: int) -> None:
    """SamplingError for an encoder, a bad token count, or a prompt + tokens beyond the context."""
    from lab.models import context_of, require_decoder
    from lab.text import check_fits

    require_decoder(model, SamplingError, "sampling")
    if not ids:
        raise SamplingError("the prompt is empty", "empty_prompt")
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise SamplingError(f"the number of new tokens must be a whole number >= 1, not {max_new_tokens}",
                            "max_new_tokens", value=max_new_tokens)
    check_fits(len(ids), context_of(model.config), SamplingError, new=max_new_tokens)


def next_token(model, ids: list[int], temperature: float, top_k: int, top_p: float, top: int = NEXT_TOP) -> dict:
    """The distribution of the token after `ids` (one forward pass): record() of the last position."""
    check(temperature, top_k, top_p)
    _check_run(model, ids, 1)
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids]), use_cache=False).logits[:, -1].to(torch.float32)
    return record(logits, temperature, top_k, top_p, top)


def steps(model, ids: list[int], max_new_tokens: int, temperature: float, top_k: int, top_p: float,
          seed: int, top: int = TOP, stop_at_eos: bool = True, use_cache: bool = True) -> Iterator[dict]:
    """Generate token by token, yielding each step as soon as it is drawn (a generator: stop any time).

    Each step: id, p (its probability when drawn), p_raw, rank (among raw candidates, 0 = argmax), and
    record()'s fields without the full vocabulary. Stops early after the model's end-of-text token
    (as generate does) unless stop_at_eos is False. use_cache=False re-reads the whole sequence every step
    (the serving lesson's switch; the tokens are the same).
    """
    check_generation(model, ids, max_new_tokens, temperature, top_k, top_p, seed)
    rng = torch.Generator().manual_seed(seed)  # this call's own random stream
    eos = model.generation_config.eos_token_id if stop_at_eos else None
    eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
    cache = cache_argument(model) if use_cache else None
    seq = torch.tensor([ids])  # (1, T)
    kw = {"logits_to_keep": 1} if "logits_to_keep" in inspect.signature(model.forward).parameters else {}
    past = None
    for _ in range(max_new_tokens):
        with torch.inference_mode():
            if cache:  # the prompt once, then one new token at a time against the cached keys and values
                out = model(input_ids=seq if past is None else seq[:, -1:], use_cache=True, **{cache: past}, **kw)
                past = getattr(out, cache)
            else:
                out = model(input_ids=seq, **kw)  # the whole sequence again, last logits only
            step = drawn(out.logits[:, -1].to(torch.float32), temperature, top_k, top_p, rng, top)  # (1, V)
        yield step
        token = step["id"]
        if token in eos:
            return
        seq = torch.cat([seq, torch.tensor([[token]])], dim=-1)


def check_generation(model, ids: list[int], max_new_tokens: int, temperature: float, top_k: int, top_p: float,
                     seed: int) -> None:
    """SamplingError for anything steps() would refuse: the settings, the model, the prompt's room, the seed."""
    check(temperature, top_k, top_p)
    _check_run(model, ids, max_new_tokens)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise SamplingError(f"the seed must be a whole number from 0 to 2**64 - 1, not {seed}", "seed", value=seed)


def drawn(logits: torch.Tensor, temperature: float, top_k: int, top_p: float, rng: torch.Generator,
          top: int = TOP) -> dict:
    """One generated step from the next-token logits (1, V) float32: record()'s fields without the whole
    vocabulary, and the token drawn with `rng` (the argmax at temperature 0): id, p (its probability when drawn),
    p_raw, rank (among the raw candidates, 0 = argmax). steps() and the shared engine (lab.serving.engine) both
    draw here, so a sequence decoded in a batch draws what it draws alone from the same logits."""
    step = record(logits, temperature, top_k, top_p, top)
    p, log_z = step.pop("p"), step.pop("log_z")
    if temperature == 0:
        token = int(logits.argmax(-1))
    else:
        token = int(torch.multinomial(p[None], 1, generator=rng))
    score, best = logits[0, token], step["candidates"]["id"]
    rank = best.index(token) if token in best else int((logits[0] > score).sum())  # ties aside
    step.update(id=token, p=float(p[token]), p_raw=math.exp(float(score) - log_z), rank=rank)
    return step


def sample(model, tokenizer, prompt: str, max_new_tokens: int, temperature: float, top_k: int, top_p: float,
           seed: int, top: int = TOP) -> dict:
    """The whole generation at once: prompt ids, new text, and every step (steps() collected)."""
    ids = encode(tokenizer, prompt, "prompt")
    done = list(steps(model, ids, max_new_tokens, temperature, top_k, top_p, seed, top))
    new = [s["id"] for s in done]
    texts = token_texts(tokenizer, new)
    return {"ids": ids, "text": tokenizer.decode(new), "steps": done,
            "tokens": [{"id": s["id"], "token": tx, "p": s["p"]} for s, tx in zip(done, texts, strict=True)]}


def with_texts(step: dict, tokenizer) -> dict:
    """A step as the sampling page keeps it: its candidates' texts added."""
    step["texts"] = token_texts(tokenizer, step["candidates"]["id"])
    return step


def runs(tokenizer, tokens: list[dict]) -> list[dict]:
    """lab.text.readable over generated tokens: the runs that make whole characters (one chip each on the page)."""
    return readable(tokenizer, [x["id"] for x in tokens])
