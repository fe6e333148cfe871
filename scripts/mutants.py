"""`make mutants`: mutmut 3, one module at a time, each against the fast unit tests that cover it (mutmut then
runs, for each mutant, only those of them that ran its function). Writes setup.cfg's [mutmut] section for the
module, runs `mutmut run`, prints the counts; `python scripts/mutants.py lab.ceiling` runs one module.
Not part of CI or `make test`. Counts and the equivalent mutants: docs/testing.md."""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTMUT = str(ROOT / ".venv" / "bin" / "mutmut")
TESTS = {  # module -> its fast tests
    "lab.detect.evaluation": ["tests/test_mutants_units.py",
                              "tests/test_detect.py::test_auroc_equals_scikit_learn",
                              "tests/test_detect.py::test_roc_rates_and_base_rate",
                              "tests/test_detect.py::test_groups_pair_machine_texts_with_their_humans",
                              "tests/test_mistakes_detector.py::test_the_base_rate_on_a_hand_worked_asymmetric_example"],
    "lab.serving.loadtest": [
        "tests/test_mistakes_serving.py::test_the_load_tests_ttft_and_throughput_on_a_server_of_known_delays",
        "tests/test_mistakes_serving.py::test_the_load_test_summary_on_a_hand_worked_example",
        "tests/test_mistakes_serving.py::test_one_request_sends_its_path_and_headers_and_reports_each_failure",
        "tests/test_mistakes_serving.py::test_the_pool_keeps_its_concurrency_reports_progress_and_keeps_its_deadline"],
    "lab.ceiling": ["tests/test_ceiling.py", "tests/test_mutants_ceiling.py",
                    "tests/test_mistakes_ceiling.py::test_the_conditional_error_rates_on_a_hand_worked_run",
                    "tests/test_mistakes_ceiling.py::test_the_forced_error_summary_equals_transformers"],
    "lab.fill": ["tests/test_fill.py::test_the_table_equals_a_direct_loop_and_the_decoders_softmax",
                 "tests/test_fill.py::test_the_trophy_pair_what_each_model_can_use_for_it"],
    "lab.tokens": ["tests/test_tokens.py::test_premium_equals_tiktoken_ratio",
                   "tests/test_tokens.py::test_counts_equal_tiktoken",
                   "tests/test_tokens.py::test_empty_and_wordless_text_divide_sanely",
                   "tests/test_tokens.py::test_length_mismatch_on_hand_counted_lengths"],
    "lab.questions": ["tests/test_questions.py", "tests/test_game.py"],
    "lab.models.hosting": [f"tests/test_hosting.py::{t}" for t in (
        "test_not_hosted_means_no_caps", "test_hosted_defaults", "test_hosted_settings_are_read",
        "test_the_hub_models_the_image_carries_are_offered_and_held_together",
        "test_the_budget_is_what_the_image_carries_needs_rounded_up_to_100_mb",
        "test_garbage_values_fall_back_to_the_defaults_with_a_warning", "test_garbage_hosted_flag_and_model_lists_warn",
        "test_the_environment_overrides_the_machine_and_the_hosted_cap")],
}
FUNCTIONS = {  # the functions whose mutants count (the module's statistics and estimates)
    "lab.detect.evaluation": ["oriented", "auroc", "roc", "rates", "base_rate", "groups", "evaluate"],
    "lab.serving.loadtest": ["one", "gaps", "summary", "_pool"],
    "lab.ceiling": ["predictions", "correct", "observed", "conditional", "half_life", "measure", "wrong_token",
                    "forced", "forced_summary"],
    "lab.fill": ["compare", "right_context_gain", "encoder_rows", "decoder_rows", "_rank"],
    "lab.tokens": ["premium", "_ratio", "length_mismatch", "token_costs"],
    "lab.questions": ["clean", "_number", "model_side", "_best", "previous_token_shares", "_next_token_side", "_score",
                      "_number_side", "judge", "csv_text", "walk_key", "_walked", "game", "game_play", "game_csv"],
    "lab.models.hosting": ["course_models", "default_models", "baked", "budget_default_mb", "_positive", "_models",
                           "hosted", "parse", "offered", "offered_names", "check_offered", "clip", "new_tokens"],
}
HEADER = """# mutmut 3's settings, written by scripts/mutants.py (`make mutants`) for one module at a time.
[mutmut]
source_paths=lab
also_copy=
    tests
    models
    ui
    viz
    app.py
    app_pages
    assets
    lessons
pytest_add_cli_args=-p no:cacheprovider -q
timeout_constant=10
"""


def configure(module: str) -> None:
    path = module.replace(".", "/") + ".py"
    lines = "\n    ".join(TESTS[module])
    (ROOT / "setup.cfg").write_text(f"{HEADER}only_mutate={path}\npytest_add_cli_args_test_selection=\n    {lines}\n")


def run(module: str) -> dict[str, int]:
    """One module's mutants against its tests, from a fresh mutants/ (mutmut keeps a module it once copied
    unmutated); prints each survivor, returns the counts ("no tests": functions out of scope, e.g. model loops)."""
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    configure(module)
    names = [f"{module}.x_{f}__mutmut_*" for f in FUNCTIONS[module]]
    # mutmut's limit is CPU seconds, (test time + timeout_constant) x 30: a test whose model fixture loads in the
    # forked child spends far more than its measured call (lab.fill: every mutant timed out at the default 1 s);
    # one torch thread per child, so the CPU seconds are the wall seconds
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    subprocess.run(["nice", "-n", "10", MUTMUT, "run", *names], cwd=ROOT, check=False, env=env)
    out = subprocess.run([MUTMUT, "results", "--all", "true"], cwd=ROOT, capture_output=True, text=True).stdout
    counts = collections.Counter()
    for line in out.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name.startswith(module + ".x"):
            counts[status] += 1
            if status not in ("killed", "no tests"):
                print(f"  {name}: {status}")
    return dict(counts)


if __name__ == "__main__":
    kept = (ROOT / "setup.cfg").read_text()
    try:
        for m in sys.argv[1:] or list(TESTS):
            print(m, run(m), flush=True)
    finally:
        (ROOT / "setup.cfg").write_text(kept)
