"""The laptop's memory budget and the hosted demo's caps: lab.models.hosting, lab.models.budget's default, the pages."""

import json
import logging
import math
from collections import namedtuple
from pathlib import Path

import psutil
import pytest
from streamlit.testing.v1 import AppTest

from lab import models
from lab.models import budget as model_cache
from lab.models import hosting, registry
from lab.models.budget import ModelCache, budget, models_that_fit
from tests.pages import APP, open_page

GIB = 2**30
Memory = namedtuple("Memory", "total available")
PROMPT = "The trophy didn't fit in the suitcase"


@pytest.fixture
def laptop(monkeypatch):
    """No budget variable, not hosted, no cgroup limit: set_total(bytes) fakes psutil's total."""
    for key in (model_cache.BUDGET_ENV, *hosting.ENV_KEYS):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(model_cache, "CGROUP_LIMITS", ())

    def set_total(total):
        monkeypatch.setattr(psutil, "virtual_memory", lambda: Memory(total, total // 2))

    return set_total


@pytest.fixture
def hosted(monkeypatch):
    """LAB_HOSTED=1 with the default caps, nothing else set."""
    for key in (model_cache.BUDGET_ENV, *hosting.ENV_KEYS):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LAB_HOSTED", "1")


# ---------------------------------------------------------------- the budget follows the machine

def test_a_16_gb_laptop_loads_every_gpt2_size_by_default(laptop):
    laptop(16 * GIB)
    b = budget()
    assert b.source == "machine" and b.machine_bytes == 16 * GIB
    assert b.bytes == 16 * GIB // 2 - 1000 * registry.MB  # half, less the app's own ~1 GB
    fit = models_that_fit(b.bytes)
    assert {"gpt2-large", "gpt2-xl"} <= set(fit) and fit == list(registry.REGISTRY)
    cache = ModelCache(load=lambda key: object(), estimate=models.estimate_bytes)  # the app's default cache
    assert cache.budget == b.bytes
    assert cache.check_fits("gpt2-xl") == registry.info("gpt2-xl").memory_bytes  # not refused


def test_a_small_machine_gets_a_smaller_budget_never_under_the_floor(laptop):
    laptop(8 * GIB)
    fit = models_that_fit(budget().bytes)
    assert "gpt2-medium" in fit and "gpt2-large" not in fit
    laptop(2 * GIB)
    b = budget()
    assert b.bytes == model_cache.MIN_BUDGET_MB * registry.MB
    assert {"gpt2", "course-gpt2", "course-roberta"} <= set(models_that_fit(b.bytes))


def test_a_container_limit_below_the_hosts_memory_is_what_counts(laptop, tmp_path, monkeypatch):
    laptop(64 * GIB)  # psutil reads the host inside a container
    limit = tmp_path / "memory.max"
    limit.write_text(f"{4 * GIB}\n")
    monkeypatch.setattr(model_cache, "CGROUP_LIMITS", (str(tmp_path / "absent"), str(limit)))
    assert budget().machine_bytes == 4 * GIB
    limit.write_text("max\n")  # cgroup v2's "no limit"
    assert budget().machine_bytes == 64 * GIB


def test_the_environment_overrides_the_machine_and_the_hosted_cap(laptop, monkeypatch):
    laptop(16 * GIB)
    monkeypatch.setenv("LAB_MEMORY_BUDGET_MB", "900")
    assert budget() == model_cache.Budget(900 * registry.MB, "env", 16 * GIB)
    monkeypatch.setenv("LAB_HOSTED", "1")
    assert budget().bytes == 900 * registry.MB
    monkeypatch.delenv("LAB_MEMORY_BUDGET_MB")
    assert budget() == model_cache.Budget(hosting.HOSTED_BUDGET_MB * registry.MB, "hosted", 16 * GIB)
    monkeypatch.setenv("LAB_HOSTED_BUDGET_MB", "2000")
    assert budget().bytes == 2000 * registry.MB
    assert "gpt2-large" not in models_that_fit(hosting.HOSTED_BUDGET_MB * registry.MB)


# ---------------------------------------------------------------- parsing the hosted configuration

def test_not_hosted_means_no_caps():
    for value in ("", "0", "off", "False", " no "):
        assert hosting.parse({"LAB_HOSTED": value, "LAB_MAX_NEW_TOKENS": "3"}) == hosting.Limits()
    lim = hosting.Limits()
    assert hosting.offered("gpt2-xl", lim) and hosting.new_tokens(128, lim) == 128
    assert hosting.clip("x" * 10_000, lim.max_input_chars) == ("x" * 10_000, False)


def test_hosted_defaults():
    lim = hosting.parse({"LAB_HOSTED": "1"})
    course = {n for n, i in registry.REGISTRY.items() if i.hub_id is None}
    assert lim.hosted and lim.models == course | {"gpt2", "distilgpt2"}
    assert (lim.max_input_chars, lim.max_new_tokens, lim.max_perplexity_chars, lim.budget_mb) == (
        hosting.MAX_INPUT_CHARS, hosting.MAX_NEW_TOKENS, hosting.MAX_PERPLEXITY_CHARS, hosting.HOSTED_BUDGET_MB)
    assert not hosting.offered("gpt2-xl", lim) and hosting.offered("course-roberta", lim)
    assert hosting.new_tokens(128, lim) == 64 and hosting.new_tokens(10, lim) == 10
    assert hosting.clip("abcdef", 4) == ("abcd", True) and hosting.clip("abcd", 4) == ("abcd", False)
    with pytest.raises(hosting.ModelNotOffered) as e:
        hosting.check_offered("gpt2-xl", lim)
    assert isinstance(e.value, models.ModelUnavailable)  # every page's `except ModelUnavailable` catches it
    assert e.value.reason == "not_offered" and e.value.details["model"] == "gpt2-xl"
    assert "gpt2" in e.value.details["offered"] and "gpt2-xl" not in e.value.details["offered"]


def test_hosted_settings_are_read():
    lim = hosting.parse({"LAB_HOSTED": "yes", "LAB_MAX_INPUT_CHARS": "500", "LAB_MAX_NEW_TOKENS": "16",
                         "LAB_MAX_PERPLEXITY_CHARS": "1_000", "LAB_HOSTED_BUDGET_MB": "2200",
                         "LAB_HOSTED_MODELS": " gpt2 , gpt2-medium"})
    assert (lim.max_input_chars, lim.max_new_tokens, lim.max_perplexity_chars, lim.budget_mb) == (500, 16, 1000, 2200)
    assert lim.models == {"gpt2", "gpt2-medium", models.DEFAULT_OFFLINE}  # the fallback is always offered
    assert hosting.parse({"LAB_HOSTED": "1", "LAB_HOSTED_MODELS": "ALL"}).models is None


SPACE = "gpt2 distilgpt2 openai-gpt roberta-base"  # lab.space.HUB_MODELS, as the image keeps them (LAB_HUB_MODELS)


def test_the_hub_models_the_image_carries_are_offered_and_held_together():
    """Issue 59: the Space bakes in GPT-1 and RoBERTa base; a reader must be able to open them, and a class that
    switches between the four must not wait for one to load again (the 1,700 MB cap holds two of them)."""
    from lab import space

    assert SPACE.split() == list(space.HUB_MODELS)
    lim = hosting.parse({"LAB_HOSTED": "1", "LAB_HUB_MODELS": SPACE})
    on_disk = {n for n, i in registry.REGISTRY.items() if i.hub_id is None} | set(SPACE.split())
    assert on_disk <= lim.models and not hosting.offered("gpt2-xl", lim)
    cache = ModelCache(budget=lim.budget_mb * registry.MB, load=lambda name: name)
    assert sum(cache.check_fits(n) for n in on_disk) <= cache.budget < 2.7e9  # all of them, and a Space has 16 GB
    assert sum(cache.check_fits(n) for n in on_disk) > hosting.HOSTED_BUDGET_MB * registry.MB  # the cap would evict
    for name in on_disk:  # loaded one after another, none is dropped
        cache.get(name)
    assert set(cache.keys()) == on_disk
    # what the image does not carry changes nothing; an owner's own list or budget wins
    assert hosting.parse({"LAB_HOSTED": "1", "LAB_HUB_MODELS": "gpt2 course-gpt2 nonsense"}) == hosting.parse(
        {"LAB_HOSTED": "1", "LAB_HUB_MODELS": "gpt2"})
    assert hosting.parse({"LAB_HOSTED": "1", "LAB_HUB_MODELS": "gpt2"}).budget_mb == hosting.HOSTED_BUDGET_MB
    own = hosting.parse({"LAB_HOSTED": "1", "LAB_HUB_MODELS": SPACE, "LAB_HOSTED_MODELS": "gpt2",
                         "LAB_HOSTED_BUDGET_MB": "1800"})
    assert own.models == {"gpt2", models.DEFAULT_OFFLINE} and own.budget_mb == 1800
    assert hosting.parse({"LAB_HOSTED": "1", "LAB_HUB_MODELS": SPACE, "LAB_HOSTED_MODELS": "nonsense"}).models == (
        lim.models)  # a list naming nothing known falls back to the defaults, the image's models among them


@pytest.mark.parametrize("carried,budget_mb", [(SPACE, 2600), ("gpt2 gpt2-xl", 7900), ("gpt2", 1700)])
def test_the_budget_is_what_the_image_carries_needs_rounded_up_to_100_mb(carried, budget_mb):
    course = [n for n, i in registry.REGISTRY.items() if i.hub_id is None]
    need = sum(registry.REGISTRY[n].memory_bytes for n in course + carried.split())
    assert max(1700, math.ceil(need / 1e8) * 100) == budget_mb  # the registry's estimates, by hand
    assert hosting.parse({"LAB_HOSTED": "1", "LAB_HUB_MODELS": carried}).budget_mb == budget_mb


def test_the_image_keeps_its_hub_models_where_hosting_reads_them():
    from lab import space

    assert f"ENV {hosting.BAKED_ENV}=${{HUB_MODELS}}\n" in (space.ROOT / "deploy" / "Dockerfile").read_text()


@pytest.mark.parametrize("key,field", [("LAB_MAX_INPUT_CHARS", "max_input_chars"),
                                       ("LAB_MAX_NEW_TOKENS", "max_new_tokens"),
                                       ("LAB_MAX_PERPLEXITY_CHARS", "max_perplexity_chars"),
                                       ("LAB_HOSTED_BUDGET_MB", "budget_mb")])
@pytest.mark.parametrize("garbage", ["lots", "-5", "0", "2.5", "1e3"])
def test_garbage_values_fall_back_to_the_defaults_with_a_warning(caplog, key, field, garbage):
    default = getattr(hosting.parse({"LAB_HOSTED": "1"}), field)
    with caplog.at_level(logging.WARNING, logger="lab.models.hosting"):
        lim = hosting.parse({"LAB_HOSTED": "1", key: garbage})
    assert getattr(lim, field) == default
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert key in caplog.text and repr(garbage) in caplog.text


def test_garbage_hosted_flag_and_model_lists_warn(caplog):
    with caplog.at_level(logging.WARNING, logger="lab.models.hosting"):
        lim = hosting.parse({"LAB_HOSTED": "please"})
    assert lim.hosted and lim.max_new_tokens == hosting.MAX_NEW_TOKENS  # a typo never lifts the caps
    assert "LAB_HOSTED" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="lab.models.hosting"):
        lim = hosting.parse({"LAB_HOSTED": "1", "LAB_HOSTED_MODELS": "gpt2, gpt5"})
    assert lim.models == {"gpt2", models.DEFAULT_OFFLINE} and "gpt5" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="lab.models.hosting"):
        lim = hosting.parse({"LAB_HOSTED": "1", "LAB_HOSTED_MODELS": ",,nothing"})
    assert lim.models == hosting.default_models() and "names no known model" in caplog.text


def test_limits_follow_the_environment(monkeypatch, hosted):
    assert hosting.limits().hosted and hosting.limits().max_new_tokens == hosting.MAX_NEW_TOKENS
    monkeypatch.setenv("LAB_MAX_NEW_TOKENS", "7")
    assert hosting.limits().max_new_tokens == 7
    monkeypatch.setenv("LAB_HOSTED", "0")
    assert hosting.limits() == hosting.Limits()


def test_the_cli_is_not_capped(capsys, tiny_model_dirs, hosted, monkeypatch):
    """The lab on your own machine: hosted settings in the environment change nothing in `python -m lab`."""
    from lab.cli import main

    monkeypatch.setenv("LAB_MAX_NEW_TOKENS", "4")
    assert main(["sample", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--prompt", PROMPT, "--seed", "1",
                 "--max-new-tokens", "20"]) == 0
    assert len(json.loads(capsys.readouterr().out)["tokens"]) == 20


# ---------------------------------------------------------------- the pages, hosted

def test_a_link_to_a_model_the_hosted_demo_does_not_offer_is_refused(hosted, course_standins):
    at = open_page(model="gpt2-xl")
    picker = at.selectbox(key="model")
    assert picker.value == models.DEFAULT_OFFLINE and at.query_params["model"] == models.DEFAULT_OFFLINE
    assert "gpt2-xl" not in picker.options and len(picker.options) == len(hosting.default_models())
    assert [w.value for w in at.warning] == [
        "This hosted demo does not offer gpt2-xl. Run the app on your own machine (`streamlit run app.py`) "
        "for every model."]
    assert "Memory for models: 1.7 GB (this hosted demo's cap)" in at.sidebar.caption[0].value
    at = open_page(model="gpt2-xl", lang="pt")
    assert at.warning[0].value.startswith("Esta demonstração hospedada não oferece gpt2-xl.")


def test_a_link_to_a_hub_model_the_image_carries_opens_it(hosted, course_standins, monkeypatch):
    monkeypatch.setenv("LAB_HUB_MODELS", SPACE)
    for lang, cap in (("en", "Memory for models: 2.6 GB (this hosted demo's cap)"),
                      ("pt", "Memória para modelos: 2,6 GB")):
        at = open_page(model="openai-gpt", lang=lang)
        picker = at.selectbox(key="model")
        assert picker.value == "openai-gpt" and at.query_params["model"] == "openai-gpt" and not at.warning
        assert len(picker.options) == len(hosting.default_models({"LAB_HUB_MODELS": SPACE})) == 8
        assert any(o.startswith("GPT-1 (117M)") for o in picker.options)
        assert any(o.startswith("RoBERTa base (125M)") for o in picker.options)
        assert cap in at.sidebar.caption[0].value


def loaded_name_page():
    """A model page in miniature: which model current_model() gave."""
    import streamlit as st

    from ui.model_loader import current_model

    st.write(f"loaded: {current_model().name}")


def test_the_loader_refuses_a_model_not_offered_even_past_the_picker(hosted, course_standins):
    at = AppTest.from_function(loaded_name_page, default_timeout=30)
    at.session_state["model"] = "gpt2-xl"
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and at.error[0].value.startswith("This hosted demo does not offer gpt2-xl; it offers ")
    assert at.markdown[0].value == f"loaded: {models.DEFAULT_OFFLINE}"


def test_on_a_laptop_the_same_link_opens_the_model(laptop, course_standins):
    laptop(16 * GIB)
    at = open_page(model="gpt2-xl")
    assert at.selectbox(key="model").value == "gpt2-xl" and not at.warning
    assert "Every model listed fits." in at.sidebar.caption[0].value


def test_a_text_over_the_cap_is_cut_with_a_notice(hosted, monkeypatch):
    monkeypatch.setenv("LAB_MAX_INPUT_CHARS", "50")
    at = open_page("app_pages/tokens.py")
    assert at.text_area(key="tokens_pt").max_chars == 50
    at.text_area(key="tokens_pt").set_value("á" * 80).run()  # longer than a browser would let through
    assert not at.exception
    assert at.text_area(key="tokens_pt").value == "á" * 50
    assert [w.value for w in at.warning][:1] == [
        "This hosted demo reads at most 50 characters here: the text was cut there. Run the app on your own "
        "machine (`streamlit run app.py`) for no limit."]
    chars = at.table[0].value.loc["characters"].iloc[0]
    assert chars == "50"  # the page measured the cut text
    at.selectbox(key="tokens_sample").select("all").run()  # a sample of 4,000+ characters
    assert not at.exception and len(at.text_area(key="tokens_pt").value) == 50
    assert any("at most 50 characters" in w.value for w in at.warning)


def test_on_a_laptop_text_is_not_cut(laptop):
    at = open_page("app_pages/tokens.py")
    assert at.text_area(key="tokens_pt").max_chars == 0  # 0: no max_chars
    at.text_area(key="tokens_pt").set_value("á" * 3000).run()
    assert at.text_area(key="tokens_pt").value == "á" * 3000
    assert not any("at most" in w.value for w in at.warning)


def test_sampling_generates_at_most_the_hosted_cap(hosted, course_standins, monkeypatch):
    monkeypatch.setenv("LAB_MAX_NEW_TOKENS", "8")
    at = open_page("app_pages/sampling.py")
    slider = at.slider(key="samp_n")
    assert slider.max == 8 and slider.value == 8  # the page's default, 32, is cut to the cap
    tokens = list(at.session_state["samp_results"].values())[-1]["tokens"]
    assert len(tokens) == 8
    assert any("at most 8 new tokens" in c.value for c in at.caption)


def test_perplexity_text_and_models_are_capped(hosted, course_standins, monkeypatch):
    from ui.runs import perplexity as perplexity_results

    monkeypatch.setenv("LAB_MAX_PERPLEXITY_CHARS", "300")
    perplexity_results.clear()
    at = open_page("app_pages/perplexity.py", timeout=120,
                   state={"ppl_models": ["course-gpt2", "gpt2-xl"]})  # as a shared link might ask
    assert "gpt2-xl" not in at.multiselect(key="ppl_models").options
    assert at.multiselect(key="ppl_models").value == ["course-gpt2"]
    warnings = [w.value for w in at.warning]
    assert any("does not offer gpt2-xl" in w for w in warnings)
    assert any("at most 300 characters" in w for w in warnings)
    assert len(at.text[0].value) == 300  # the unseen documentation, as shown and evaluated
    perplexity_results.clear()


def test_the_memory_bench_opens_every_page_in_hosted_mode(tiny_model_dirs):
    """`lab bench --only hosting` on a tiny model: a fresh hosted process opened every page without an exception."""
    from lab.benchmarks import hosting as bench

    d = tiny_model_dirs["gpt2"]
    run = bench.hosted_run(d, registry.safetensors_params(d / "model.safetensors")[0])
    files = sorted(p.name for p in (Path(APP).parent / "app_pages").glob("*.py"))
    assert sorted(Path(p).name for p in run["rss"]) == files and next(iter(run["rss"])) == "app_pages/home.py"
    assert run["peak"] >= max(run["rss"].values()) > 0 and not run["problems"]
    assert models.DEFAULT_OFFLINE in run["models"] and "gpt2" not in run["models"]
