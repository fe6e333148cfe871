"""Shared fixtures: tiny random models saved in Hugging Face format (never a download)."""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach for the hub
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# No start-up warm-up (ui/warmup.py) in the app the tests run, nor in the servers they start: tests count loads and
# forward passes. tests/test_warmup.py turns it on where it is the subject.
os.environ["LAB_WARM"] = "0"
# Every chart the tests draw is validated against the Vega-Lite schema (the app skips it: ui/cached/charts.py).
os.environ["LAB_CHECK_CHARTS"] = "1"


@pytest.fixture(scope="session")
def tiny_model_dirs(tmp_path_factory):
    """{"gpt2": dir, "openai-gpt": dir, "roberta": dir}: tiny random models with tokenizer files."""
    from lab.testing import random_models

    root = tmp_path_factory.mktemp("tiny_models")
    return {arch: random_models.save(arch, root / arch) for arch in random_models.ARCHS}


@pytest.fixture
def forwards():
    """Counts real forward passes: every call of a base transformer (GPT2Model, RobertaModel, ...),
    through a process-wide module hook, whoever makes the call."""
    import torch
    from transformers import PreTrainedModel

    count = {"n": 0}

    def hook(module, args, output):
        if isinstance(module, PreTrainedModel) and module.base_model is module:
            count["n"] += 1

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    yield count
    handle.remove()


def pytest_configure(config):
    """The markers (docs/testing.md, "Suite layout and timings"). Both still run in `make test` (CI runs
    everything); `make check` leaves them out: `-m "not browser and not slow"`."""
    config.addinivalue_line("markers", "browser: drives a real Chromium against a real Streamlit server")
    config.addinivalue_line("markers", "slow: a minute or more (real-server reliability, the bad-input "
                                       "matrices); in make test too")


# Tests marked `slow` from here, in modules this file's owner does not otherwise touch (module -> test functions,
# every parametrisation): the matrices and the real-subprocess tests that `make check` leaves to `make test`.
# docs/testing.md says why each is here. A name that no longer exists in a collected module is an error.
SLOW = {
    "test_shared_links": {"test_fuzzed_links_never_raise", "test_garbage_in_a_link_gives_the_defaults_and_a_notice"},
    "test_translations": {"test_every_page_in_both_languages", "test_errors_and_notices_in_both_languages"},
    "test_language_switch": {"test_switching_to_portuguese_gives_the_portuguese_page",
                             "test_what_the_reader_changed_stays_across_a_switch_and_back",
                             "test_the_perplexity_page_measures_the_portuguese_passage_by_default_in_portuguese"},
    "test_hosting": {"test_the_memory_bench_opens_every_page_in_hosted_mode"},
    "test_hf_imports": {"test_twelve_threads_through_transformers_first_imports_in_a_fresh_interpreter"},  # 3 x 6 s
    "test_sampling": {"test_filters_equal_transformers_warpers", "test_generation_is_generates_token_for_token"},
    "test_lens": {"test_the_real_entry_point", "test_bad_input_exits_2_with_one_line"},
    # 2026-12-06: make check 3 min 0 s with the heads page; its two real-subprocess CLI tests (21 test-seconds)
    "test_heads": {"test_the_cli_prints_what_the_lab_computes", "test_the_cli_refuses_bad_input_in_one_line"},
    "test_heads_patch": {"test_the_cli_prints_what_the_lab_computes", "test_the_cli_refuses_bad_input_in_one_line",
                         "test_every_number_equals_nnsight_on_a_gpt2_small_shaped_model"},
    # GPT-1 small's and GPT-2 small's shapes (5-9 s each): make test; the tiny models' same checks stay in make check
    "test_heads_gpt1": {"test_patching_equals_nnsight_on_a_gpt1_small_shaped_model",
                        "test_the_knockout_grid_equals_nnsight_on_a_gpt1_small_shaped_model",
                        "test_the_losses_equal_transformers_own_forward[small]"},  # [tiny] stays
    "test_ceiling_page": {"test_short_texts_keep_the_page_whole", "test_portuguese_words_and_numbers",
                          "test_an_encoder_in_a_link_is_not_offered",
                          # 2026-12-05: make check was 3 min 47 s; these eight, 56 test-seconds, the slowest left in
                          # it (each recomputes the course table, runs a real subprocess or waits on a warm-up's
                          # grace); they still run in make test
                          "test_the_longest_run_moves_the_axis_without_a_forward_pass",
                          "test_the_legend_keys_solid_against_dashed_and_counts_tokens_in_words",
                          "test_the_forced_view_marks_the_forced_token_and_escapes_text"},
    "test_guess": {"test_the_real_entry_point", "test_bad_input_exits_2_with_one_line",
                   "test_every_bad_input_case_as_a_passage_and_as_an_answer"},
    "test_warmup": {"test_the_course_table_is_its_rows_measured_one_at_a_time",
                    "test_a_warm_up_step_waits_until_no_reader_has_run_for_the_grace",
                    "test_where_gpt2_is_the_pages_default_it_is_warmed_first",
                    "test_the_images_other_decoders_get_their_detector_set_too"},
    "test_game": {"test_the_export_is_what_lab_guess_reads_and_its_summary_is_the_pages",
                  "test_a_right_guess_of_several_tokens_is_drawn_right",
                  "test_the_last_positions_guesses_stay_in_the_table_and_the_summary_once_revealed"},
    "test_mistakes_serving": {"test_the_page_measures_a_given_url_at_the_chosen_concurrencies_in_ms"},
    "test_models": {"test_a_silent_hub_is_remembered_not_probed_on_every_rerun"},
    "test_analogies_page": {"test_every_preset_on_course_gpt2"},
    "test_causal": {"test_trophy_is_bit_for_bit_every_time_even_on_a_busy_cpu"},
    # Real subprocesses and real servers (measured: 572 of make check's 1,169 test-seconds, docs/testing.md).
    "test_reproduce": {"test_every_pages_command_prints_what_it_shows", "test_a_real_command_with_a_tricky_text"},
    "test_train": {"test_smoke_training_writes_loadable_models_and_results",
                   "test_a_sibling_preset_stops_at_the_plateau_and_saves_under_its_own_name",
                   "test_a_run_resumes_from_a_saved_checkpoint"},
    "test_serving_page": {"test_a_run_measures_every_mode_with_real_servers", "test_portuguese"},
    "test_fossils": {"test_cli_json_is_the_same_table_and_bad_input_is_one_line"},
    "test_cli_attention": {"test_the_real_entry_point",
                           "test_text_over_the_context_is_one_line_on_stderr_and_nothing_from_transformers",
                           "test_bad_input_exits_2_with_one_line"},
    "test_embeddings": {"test_cli_bad_input_exits_2_with_one_line"},
    "test_glossary": {"test_every_link_opens_its_view"},
    "test_portuguese_bytes": {"test_no_page_shows_a_byte_escape_in_portuguese"},
    # A live app server, a real subprocess, the real course table, training or a download's retries (2026-12-04:
    # 37 test-seconds of make check's 196 s wall; docs/testing.md).
    "test_class_config": {"test_served_app_forces_no_full_collection_and_watches_nothing"},
    "test_class_readers": {"test_five_readers_of_one_link_each_finish_their_run"},
    "test_ceiling": {"test_cli_course_prints_the_pages_table_and_verdict"},
    "test_reliability_faults": {"test_a_connection_dropped_mid_file_keeps_nothing_and_the_next_try_completes"},
    "test_learned": {"test_training_writes_the_counts_of_the_windows_it_drew"},
    # 2026-12-06 (issue 58): make check had grown to 1,647 test-seconds (measured with --durations on a busy machine;
    # docs/testing.md); these, 495 of them (30 %), leave it: real subprocesses (the app's thread count, pages that
    # never import torch, the CLIs' tables, a command shown run for real), the bad-input matrices of the CLIs and two
    # pages, the perplexity page's error and budget cases, a module whose fixture recomputes the course table, the
    # detector's batched scores on the course model. Each page keeps its AppTests in both languages in make check.
    "test_model_picker": {"test_the_app_leaves_the_browser_a_core", "test_home_and_tokens_pages_never_import_torch"},
    "test_mistakes_ceiling": {"test_the_portuguese_text_is_the_one_measured", "test_the_curves_follow_the_slider",
                              "test_observed_and_predicted_carry_their_own_labels",
                              "test_the_course_table_puts_the_forced_rates_in_their_columns"},
    "test_fossils_page": {"test_the_command_shown_prints_the_pages_numbers"},
    "test_perplexity_page": {"test_an_empty_text_says_so",
                             "test_a_model_over_the_budget_is_reported_and_the_others_still_run",
                             "test_a_model_missing_offline_is_a_warning_not_an_exception",
                             "test_results_survive_a_page_switch_without_another_forward",
                             "test_one_token_is_a_clear_message"},
    "test_tokens": {"test_cli_bad_input_is_one_line_exit_2", "test_cli_premium_json", "test_cli_tokens_course_encoding",
                    "test_cli_tokens_drops_a_byte_order_mark"},
    "test_detect": {"test_batched_set_scores_equal_one_text_at_a_time_and_the_shipped_rows",
                    "test_cli_detect_eval_contract"},
    "test_answers_page": {"test_every_bad_input_as_an_answer_is_a_notice_or_an_answer_shown_as_text"},
    "test_cli_sampling": {"test_bad_input_exits_2_with_one_line"},
    "test_lens_page": {"test_lens_page_bad_inputs"},
    "test_tokens_page": {"test_page_does_not_import_torch"},
    "test_cli_models": {"test_models_json_sees_the_local_cache", "test_models_table_and_no_torch",
                        "test_prefetch_unreachable_hub_exits_2_quickly"},
}


# The heaviest modules, heaviest first (worker-seconds of a full run, docs/testing.md): `make test` hands whole
# modules to its workers in collection order (xdist --dist loadfile --no-loadscope-reorder; xdist's own reorder
# puts the modules with the most tests first, whatever their time), so these go first and the light ones fill in
# at the end, instead of one heavy module left alone on one worker while the other has nothing to do.
HEAVY_FIRST = ("test_browser_a11y", "test_container_hub", "test_reproduce", "test_reliability_inputs_pages",
               "test_browser_presentation",
               "test_lessons", "test_browser_sampling", "test_reliability_sessions", "test_train",
               "test_browser_serving", "test_browser_lessons", "test_ceiling_page", "test_reliability_server",
               "test_serving_page", "test_browser_classroom", "test_translations", "test_shared_links",
               "test_browser_links", "test_language_switch")


def module_of(item) -> str:
    return item.nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    """Marks SLOW's tests `slow`; fails the run when SLOW names a test its module no longer has. Puts the
    HEAVY_FIRST modules first, in that order (the others keep theirs, after them)."""
    rank = {m: i for i, m in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(module_of(item), len(rank)))  # stable: a module's tests keep their order
    stale = set()
    for item in items:
        module = module_of(item)
        if module not in SLOW:
            continue
        stale |= {f"{module}.{name}" for name in SLOW[module] if not hasattr(item.module, name.split("[")[0])}
        if {getattr(item, "originalname", None) or item.name, item.name} & SLOW[module]:  # a test, or one case
            item.add_marker(pytest.mark.slow)
    if stale:
        raise pytest.UsageError(f"tests/conftest.py SLOW names tests that are gone: {sorted(stale)}")


# The course models' tiny stand-ins for AppTest: the sizes differ, the names and kinds are the course's.
COURSE_STANDINS = {"course-gpt2": "gpt2", "course-gpt2-1x64": "gpt2", "course-gpt2-2x128": "openai-gpt",
                   "course-roberta": "roberta"}


@pytest.fixture
def fresh_caches(monkeypatch):
    """Offline (HF_HUB_OFFLINE=1); every Streamlit cache, the shared model cache and the perplexity cache
    empty before and after. The course models are the shipped ones (course_standins swaps them)."""
    import streamlit as st

    from ui import warmup
    from ui.model_loader import model_cache
    from ui.runs import detect as detect_rows
    from ui.runs import perplexity as perplexity_results

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    clears = (model_cache.clear, warmup.reset, st.cache_data.clear, perplexity_results.clear, detect_rows.clear)
    for clear in clears:
        clear()
    yield
    for clear in clears:
        clear()


@pytest.fixture
def shared_runtime(monkeypatch):
    """For tests that run several AppTest sessions at once in threads (a class on one link). Each AppTest run sets
    Streamlit's global Runtime instance when it starts and clears it when it ends, so one session ending can pull
    it from under another one starting ("Runtime hasn't been created!"). Here a run's start still sets it and its
    end leaves it; it is cleared after the test."""
    from streamlit.testing.v1 import app_test

    from ui.streamlit_internals import Runtime

    class Keep(type):
        def __setattr__(cls, name, value):
            if not (name == "_instance" and value is None):
                setattr(Runtime, name, value)

    monkeypatch.setattr(app_test, "Runtime", Keep("KeptRuntime", (Runtime,), {}))
    yield
    Runtime._instance = None


@pytest.fixture
def course_standins(fresh_caches, tmp_path, monkeypatch, tiny_model_dirs):
    """Every course model is a tiny random one (COURSE_STANDINS); an offline, private HF cache; every
    Streamlit cache and the shared model cache empty before and after (fresh_caches). Yields the private
    hub folder."""
    import dataclasses

    from lab.models import registry

    for name, arch in COURSE_STANDINS.items():
        monkeypatch.setitem(registry.REGISTRY, name, dataclasses.replace(registry.info(name),
                                                                         path=str(tiny_model_dirs[arch])))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    yield tmp_path / "hf" / "hub"


@pytest.fixture(scope="session")
def app_url():
    """The app's URL on the one real Streamlit server every browser module shares (started on first use,
    loopback, a free port; stopped at the end of the session), offline on the shipped course models. A module
    that changes the server's environment (a fake hub, LAB_HOSTED, a load log) starts its own instead.
    Skips (or fails, with REQUIRE_BROWSER=1) without Chromium."""
    from tests.pages import APP
    from tests.streamlit_server import require_browser, streamlit_server

    require_browser()
    with streamlit_server(APP, env={"HF_HUB_OFFLINE": "1"}) as url:
        yield url


@pytest.fixture(scope="session")
def tiny_hub_app(tmp_path_factory, tiny_model_dirs):
    """The app's URL on a second shared real server (one per session, started on first use), offline, where
    "gpt2" and "roberta-base" are tiny random models (2 layers x 4 heads) in a fake Hugging Face cache. Needs
    Chromium (require_browser)."""
    from tests.pages import APP
    from tests.streamlit_server import require_browser, streamlit_server
    from tests.test_models import fake_hub_cache

    require_browser()
    hf = tmp_path_factory.mktemp("hf")
    fake_hub_cache(hf / "hub", "openai-community/gpt2", tiny_model_dirs["gpt2"])
    fake_hub_cache(hf / "hub", "FacebookAI/roberta-base", tiny_model_dirs["roberta"])
    env = {"HF_HOME": str(hf), "HF_HUB_CACHE": str(hf / "hub"), "HF_HUB_OFFLINE": "1"}
    with streamlit_server(APP, env=env) as url:
        yield url
