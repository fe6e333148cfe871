"""`python -m lab attention` and `python -m lab trophy`: JSON shapes against transformers, exit 2 cases."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from lab.cli import main
from lab.models import load

ROOT = Path(__file__).resolve().parents[1]
TEXT = "The trophy didn't fit in the suitcase because it was too big."


def run_json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_attention_json_is_what_transformers_gives(capsys, tiny_model_dirs):
    path = str(tiny_model_dirs["gpt2"])
    out = run_json(capsys, "attention", "--json", "--model", path, "--text", TEXT)
    assert set(out) == {"ids", "tokens", "n_layer", "n_head", "attention"}
    m = load(path)
    assert out["ids"] == m.tokenizer(TEXT)["input_ids"]
    assert "".join(out["tokens"]) == TEXT
    with torch.no_grad():
        ref = torch.stack(m.model(torch.tensor([out["ids"]]), output_attentions=True).attentions, 1)[0].numpy()
    att = np.array(out["attention"], dtype=np.float32)
    assert (out["n_layer"], out["n_head"]) == (m.n_layer, m.n_head)
    assert att.shape == (m.n_layer, m.n_head, len(out["ids"]), len(out["ids"]))
    np.testing.assert_allclose(att, ref, rtol=0, atol=1e-6)


def test_attention_no_causal_and_encoder(capsys, tiny_model_dirs):
    path = str(tiny_model_dirs["gpt2"])
    free = np.array(run_json(capsys, "attention", "--json", "--model", path, "--text", TEXT,
                             "--no-causal")["attention"])
    upper = np.triu(np.ones(free.shape[-2:], bool), 1)
    assert (free[..., upper] > 0).all()  # every head looks ahead once the mask is gone
    enc = run_json(capsys, "attention", "--json", "--model", str(tiny_model_dirs["roberta"]), "--text", TEXT)
    assert enc["tokens"][0] == "<s>" and enc["tokens"][-1] == "</s>"


def test_trophy_json(capsys, tiny_model_dirs):
    path = str(tiny_model_dirs["gpt2"])
    out = run_json(capsys, "trophy", "--json", "--model", path)
    assert set(out) == {"tokens_a", "tokens_b", "position", "max_abs_diff", "per_layer"}
    assert out["tokens_a"][out["position"]] == " it" and out["max_abs_diff"] == 0.0
    assert out["per_layer"] == [0.0, 0.0]
    free = run_json(capsys, "trophy", "--json", "--model", path, "--no-causal")
    assert free["max_abs_diff"] > 0 and free["max_abs_diff"] == max(free["per_layer"])
    pt = run_json(capsys, "trophy", "--json", "--model", path, "--pair", "pt")
    assert pt["tokens_a"][pt["position"]] == " era" and pt["max_abs_diff"] == 0.0
    own = run_json(capsys, "trophy", "--json", "--model", path, "--a", "I saw it here.", "--b", "I saw it there.",
                   "--word", "saw")
    assert own["position"] == 1 and own["max_abs_diff"] == 0.0


@pytest.mark.parametrize("argv,message", [
    (["trophy", "--a", "The cup fell because it slid.", "--b", "The box fell because it slid."], "differ before 'it'"),
    (["trophy", "--a", "The trophy was big.", "--b", "The trophy was small."], "not in sentence a"),
    (["trophy", "--word", "banana"], "'banana' is not in sentence a"),
    (["trophy", "--a", "it", "--b", " "], "need some text"),
    (["trophy", "--a", "it was"], "--a and --b go together"),
    (["attention", "--text", ""], "the text is empty"),
    (["attention", "--text", "it " * 100], "at most 64"),
])
def test_bad_input_exits_2_with_one_line(capsys, tiny_model_dirs, argv, message):
    assert main([*argv, "--model", str(tiny_model_dirs["gpt2"])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("lab: error: ") and message in err


def test_gpt1_without_its_mask_exits_2(capsys, tiny_model_dirs):
    assert main(["trophy", "--no-causal", "--model", str(tiny_model_dirs["openai-gpt"])]) == 2
    assert "never does" in capsys.readouterr().err


def test_the_real_entry_point(tiny_model_dirs):
    """Through `python -m lab` itself: a word missing from the sentences is one line on stderr, exit 2."""
    cmd = [sys.executable, "-m", "lab", "trophy", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--word", "banana"]
    bad = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("lab: error: the word 'banana'")


def test_attention_json_refuses_an_array_over_max_floats(capsys, tiny_model_dirs):
    path = str(tiny_model_dirs["gpt2"])
    m = load(path)
    n = len(m.tokenizer(TEXT)["input_ids"])
    floats = m.n_layer * m.n_head * n * n
    assert main(["attention", "--json", "--model", path, "--text", TEXT, "--max-floats", str(floats - 1)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{floats:,} attention weights" in err and "--max-floats" in err
    out = run_json(capsys, "attention", "--json", "--model", path, "--text", TEXT, "--max-floats", str(floats))
    assert np.asarray(out["attention"]).size == floats


@pytest.mark.parametrize("command", [["attention", "--text"], ["lens", "--text"], ["next", "--prompt"]])
def test_text_over_the_context_is_one_line_on_stderr_and_nothing_from_transformers(command):
    """transformers warns "Token indices sequence length is longer than..." when a tokenizer that knows its
    maximum (the shipped course model's: 256) meets a longer text; the CLI's stderr must still be its own one
    line (a fresh process, as a reader runs it)."""
    text = "palavra " * 3000
    cmd = [sys.executable, "-m", "lab", command[0], "--json", "--model", "course-gpt2", command[1], text]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lab: error:") and "tokens" in lines[0], out.stderr
