"""The hosted demo's limits: which models may load, how much text a page reads, how many tokens it writes.

A public server is shared by every reader at once, so `LAB_HOSTED=1` turns on caps that a laptop does
not need: only a few small models, input boxes cut at a length, fewer tokens sampled, a shorter
perplexity text, and a smaller memory budget for models (lab.models.budget reads `budget_mb`).
Without it there are no caps at all. The CLI never reads these limits: it is the lab on your own
machine, whatever the environment says.

Environment (every value optional; on Streamlit Community Cloud put them at the top level of the
app's secrets, which Streamlit exports as environment variables when the server starts):
- LAB_HOSTED                1/true/yes/on or 0/false/no/off. Anything else counts as on, with a
                            warning: whoever sets the variable means to host, and reading a typo as
                            "off" would lift every cap on a public server.
- LAB_HOSTED_MODELS         comma-separated registry names offered (default: gpt2, distilgpt2, the
                            course models and the hub models the image carries, LAB_HUB_MODELS); `all`
                            offers every registry model.
- LAB_MAX_INPUT_CHARS       characters read from each text box (default 2000).
- LAB_MAX_NEW_TOKENS        tokens the sampling page generates at most (default 64).
- LAB_MAX_PERPLEXITY_CHARS  characters of text the perplexity page evaluates (default 3000).
- LAB_HOSTED_BUDGET_MB      memory budget for models in hosted mode (default 1700, or what the course
                            models and the image's hub models need together where that is more;
                            LAB_MEMORY_BUDGET_MB, read by lab.models.budget, overrides both this and the
                            laptop default).
- LAB_HUB_MODELS            set by the image (deploy/Dockerfile), not by hand: the hub models its build
                            baked in, space-separated. They are on the server's disk, so they are offered,
                            and the budget holds them beside the course models: whoever baked them sized
                            the host for them (the image's start asks for their memory, lab.container).
A value that is not a positive whole number falls back to its default with a logged warning.
Pure Python, no Streamlit, no torch.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

import lab.models.registry as registry
from lab import models

HOSTED_ENV = "LAB_HOSTED"
MODELS_ENV = "LAB_HOSTED_MODELS"
INPUT_ENV = "LAB_MAX_INPUT_CHARS"
NEW_TOKENS_ENV = "LAB_MAX_NEW_TOKENS"
PERPLEXITY_ENV = "LAB_MAX_PERPLEXITY_CHARS"
BUDGET_ENV = "LAB_HOSTED_BUDGET_MB"
BAKED_ENV = "LAB_HUB_MODELS"
ENV_KEYS = (HOSTED_ENV, MODELS_ENV, INPUT_ENV, NEW_TOKENS_ENV, PERPLEXITY_ENV, BUDGET_ENV, BAKED_ENV)

# Sized for a 2.7 GB host (Streamlit Community Cloud): ~0.5 GB for Python + Streamlit + torch,
# ~0.5 GB for forward passes and the sessions' cached results; gpt2 + distilgpt2 + the course models
# (about 1.1 GB by the registry's estimates) fit together, so nothing is evicted in a class.
HOSTED_BUDGET_MB = 1700
MAX_INPUT_CHARS = 2000  # ~500 GPT-2 tokens: the attention page keeps every token of it
MAX_NEW_TOKENS = 64  # half the page's own 128
MAX_PERPLEXITY_CHARS = 3000  # about 750 tokens: one GPT-2 window, a few seconds per model on a shared CPU
HUB_MODELS = ("gpt2", "distilgpt2")
ON, OFF = {"1", "true", "yes", "on"}, {"", "0", "false", "no", "off"}
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    """What this server allows; every cap is None when the app is not hosted."""

    hosted: bool = False
    models: frozenset[str] | None = None  # registry names offered; None: every model
    max_input_chars: int | None = None
    max_new_tokens: int | None = None
    max_perplexity_chars: int | None = None
    budget_mb: int | None = None  # None: lab.models.budget's machine default


class ModelNotOffered(models.ModelUnavailable):
    """A model this hosted server does not offer; reason "not_offered", details name the model and the offered ones."""

    reason_default = "not_offered"


def course_models() -> frozenset[str]:
    """Every course model shipped in the repo."""
    return frozenset(n for n, i in registry.REGISTRY.items() if i.hub_id is None)


def default_models(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """gpt2, distilgpt2, every course model shipped in the repo and the hub models the image carries (`env`'s
    LAB_HUB_MODELS)."""
    return course_models() | set(HUB_MODELS) | baked(env or {})


def baked(env: Mapping[str, str]) -> frozenset[str]:
    """The hub models of the registry that the image's build baked in (LAB_HUB_MODELS; other names ignored)."""
    names = (env.get(BAKED_ENV) or "").split()
    return frozenset(n for n in names if n in registry.REGISTRY and registry.REGISTRY[n].hub_id is not None)


def budget_default_mb(env: Mapping[str, str]) -> int:
    """HOSTED_BUDGET_MB, or, where the image carries hub models, what they and the course models need together by
    the registry's estimates (rounded up to 100 MB) if that is more: the Space's four take 2,600 MB, so a reader
    switching between GPT-1 and GPT-2 never waits for one to load again."""
    need = sum(registry.REGISTRY[n].memory_bytes for n in course_models() | baked(env))
    return max(HOSTED_BUDGET_MB, -(-need // (100 * registry.MB)) * 100) if baked(env) else HOSTED_BUDGET_MB


def _positive(env: Mapping[str, str], key: str, default: int) -> int:
    """env[key] as a positive whole number, else `default` (with a warning when a value was given)."""
    raw = (env.get(key) or "").strip()
    if not raw:
        return default
    try:
        value = int(raw.replace("_", ""))
        if value > 0:
            return value
    except ValueError:
        pass
    log.warning("%s=%r is not a positive whole number; using %d", key, raw, default)
    return default


def _models(env: Mapping[str, str]) -> frozenset[str] | None:
    """The offered registry names from env (unknown names dropped with a warning); None for `all`."""
    raw = (env.get(MODELS_ENV) or "").strip()
    if raw.lower() == "all":
        return None
    if not raw:
        return default_models(env)
    names = [n.strip() for n in raw.split(",") if n.strip()]
    unknown = [n for n in names if n not in registry.REGISTRY]
    if unknown:
        log.warning("%s: unknown model(s) %s ignored; known: %s", MODELS_ENV, ", ".join(unknown),
                    ", ".join(registry.REGISTRY))
    known = {n for n in names if n in registry.REGISTRY}
    if not known:
        log.warning("%s=%r names no known model; offering the defaults", MODELS_ENV, raw)
        return default_models(env)
    return frozenset(known | {models.DEFAULT_OFFLINE})  # the fallback every page relies on


def hosted(env: Mapping[str, str]) -> bool:
    """Whether LAB_HOSTED turns the caps on (an unrecognised value: on, with a warning)."""
    raw = (env.get(HOSTED_ENV) or "").strip()
    if raw.lower() in ON:
        return True
    if raw.lower() in OFF:
        return False
    log.warning("%s=%r is neither on (1/true/yes/on) nor off (0/false/no/off); hosting with the caps on",
                HOSTED_ENV, raw)
    return True


def parse(env: Mapping[str, str]) -> Limits:
    """The limits an environment asks for (pure: logs a warning per bad value)."""
    if not hosted(env):
        return Limits()
    return Limits(hosted=True, models=_models(env),
                  max_input_chars=_positive(env, INPUT_ENV, MAX_INPUT_CHARS),
                  max_new_tokens=_positive(env, NEW_TOKENS_ENV, MAX_NEW_TOKENS),
                  max_perplexity_chars=_positive(env, PERPLEXITY_ENV, MAX_PERPLEXITY_CHARS),
                  budget_mb=_positive(env, BUDGET_ENV, budget_default_mb(env)))


@functools.lru_cache(maxsize=8)
def _parsed(values: tuple[str | None, ...]) -> Limits:
    return parse(dict(zip(ENV_KEYS, values, strict=True)))


def limits() -> Limits:
    """This process's limits, from the environment now (each distinct setting parsed and warned about once)."""
    return _parsed(tuple(os.environ.get(k) for k in ENV_KEYS))


def offered(name: str, lim: Limits | None = None) -> bool:
    """Whether `name` (a registry name or a directory) may be loaded here."""
    lim = lim or limits()
    return lim.models is None or name in lim.models


def offered_names(names, lim: Limits | None = None) -> list[str]:
    """`names` without those this server does not offer, order kept."""
    return [n for n in names if offered(n, lim)]


def check_offered(name: str, lim: Limits | None = None) -> None:
    """ModelNotOffered unless `name` may be loaded here."""
    lim = lim or limits()
    if not offered(name, lim):
        offered_now = offered_names(registry.REGISTRY, lim)
        raise ModelNotOffered(f"{name} is not offered on this hosted demo (offered: {', '.join(offered_now)}); "
                              "run the app on your own machine for every model", model=name, offered=offered_now)


def clip(text: str, cap: int | None) -> tuple[str, bool]:
    """(text cut to `cap` characters, whether it was cut); None: no cap."""
    if cap is None or len(text) <= cap:
        return text, False
    return text[:cap], True


def new_tokens(most: int, lim: Limits | None = None) -> int:
    """How many new tokens a page may generate, at most `most` (its own limit)."""
    cap = (lim or limits()).max_new_tokens
    return most if cap is None else min(most, cap)
