"""`python -m lab next` and `python -m lab sample`: JSON contracts against transformers, exit 2 cases."""

import json

import numpy as np
import pytest
import torch
from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

from lab.cli import main
from lab.models import load

PROMPT = "The trophy didn't fit in the suitcase"


def run_json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_next_json_is_transformers_warpers_on_the_models_logits(capsys, tiny_model_dirs):
    path = str(tiny_model_dirs["gpt2"])
    out = run_json(capsys, "next", "--json", "--model", path, "--prompt", PROMPT, "--temperature", "0.5",
                   "--top-k", "30", "--top-p", "0.5", "--top", "40")
    assert set(out) == {"ids", "tokens", "candidates"}
    m = load(path)
    assert out["ids"] == m.tokenizer(PROMPT)["input_ids"] and "".join(out["tokens"]) == PROMPT
    with torch.no_grad():
        logits = m.model(torch.tensor([out["ids"]])).logits[:, -1]
    raw = logits.softmax(-1)[0]
    warped = LogitsProcessorList([TemperatureLogitsWarper(0.5), TopKLogitsWarper(30), TopPLogitsWarper(0.5)])
    filtered = warped(None, logits).softmax(-1)[0]
    c = out["candidates"]
    assert len(c) == 40 and set(c[0]) == {"id", "token", "p_raw", "p_filtered"}
    assert [x["id"] for x in c] == raw.topk(40).indices.tolist()  # the most probable raw candidates, best first
    np.testing.assert_allclose([x["p_raw"] for x in c], raw[[x["id"] for x in c]].numpy(), atol=1e-7)
    np.testing.assert_allclose([x["p_filtered"] for x in c], filtered[[x["id"] for x in c]].numpy(), atol=1e-6)
    assert sum(x["p_filtered"] > 0 for x in c) == int((filtered > 0).sum())  # survivors, 0 for the removed
    assert c[0]["token"] == m.tokenizer.decode([c[0]["id"]])


def test_sample_json_is_generate_with_the_same_seed(capsys, tiny_model_dirs):
    path = str(tiny_model_dirs["gpt2"])
    argv = ["sample", "--json", "--model", path, "--prompt", PROMPT, "--seed", "5", "--max-new-tokens", "8",
            "--temperature", "0.9", "--top-p", "0.9"]
    out = run_json(capsys, *argv)
    assert set(out) == {"text", "tokens", "runs"} and set(out["tokens"][0]) == {"id", "token", "p"}
    m = load(path)
    ids = m.tokenizer(PROMPT)["input_ids"]
    torch.manual_seed(5)
    ref = m.model.generate(torch.tensor([ids]), do_sample=True, max_new_tokens=8, temperature=0.9, top_k=0,
                           top_p=0.9, pad_token_id=0, return_dict_in_generate=True, output_scores=True)
    new = ref.sequences[0, len(ids):].tolist()
    assert [t["id"] for t in out["tokens"]] == new
    assert out["text"] == m.tokenizer.decode(new)
    for t, scores in zip(out["tokens"], ref.scores, strict=True):
        assert t["p"] == pytest.approx(float(scores.softmax(-1)[0, t["id"]]), abs=1e-6)
    assert run_json(capsys, *argv) == out  # same seed, same text, another run
    greedy = run_json(capsys, "sample", "--json", "--model", path, "--prompt", PROMPT, "--seed", "1",
                      "--max-new-tokens", "4", "--temperature", "0")
    want = m.model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=4, pad_token_id=0)
    assert [t["id"] for t in greedy["tokens"]] == want[0, len(ids):].tolist()


@pytest.mark.parametrize("argv,message", [
    (["sample", "--seed", "1", "--max-new-tokens", "3", "--temperature", "-1"], "temperature must be"),
    (["sample", "--seed", "1", "--max-new-tokens", "3", "--temperature", "nan"], "temperature must be"),
    (["next", "--top-p", "0"], "top-p must be in (0, 1]"),
    (["next", "--top-p", "1.5"], "top-p must be in (0, 1]"),
    (["next", "--top-k", "-3"], "top-k must be"),
    (["next", "--top-k", "2.5"], "not a whole number"),
    (["next", "--temperature", "warm"], "not a number"),
    (["next", "--top", "0"], "--top must be at least 1"),
    (["sample", "--seed", "1", "--max-new-tokens", "0"], "--max-new-tokens must be at least 1"),
    (["sample", "--seed", "1", "--max-new-tokens", "-2"], "--max-new-tokens must be at least 1"),
    (["sample", "--seed", "1", "--max-new-tokens", "60"], "takes at most 64"),
    (["sample", "--seed", "-1", "--max-new-tokens", "3"], "the seed must be"),
    (["sample", "--seed", str(2**64), "--max-new-tokens", "3"], "the seed must be"),
])
def test_bad_input_exits_2_with_one_line(capsys, tiny_model_dirs, argv, message):
    assert main([*argv, "--model", str(tiny_model_dirs["gpt2"]), "--prompt", PROMPT]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("lab: error: ") and message in err


@pytest.mark.parametrize("prompt", ["", "   "])
def test_empty_prompt_exits_2(capsys, tiny_model_dirs, prompt):
    assert main(["next", "--model", str(tiny_model_dirs["gpt2"]), "--prompt", prompt]) == 2
    assert "the prompt is empty" in capsys.readouterr().err


def test_an_encoder_exits_2(capsys, tiny_model_dirs):
    assert main(["sample", "--model", str(tiny_model_dirs["roberta"]), "--prompt", PROMPT, "--seed", "1",
                 "--max-new-tokens", "3"]) == 2
    assert "sampling needs a decoder" in capsys.readouterr().err


def test_gpt1_samples_without_a_cache(capsys, tiny_model_dirs):
    path = str(tiny_model_dirs["openai-gpt"])
    out = run_json(capsys, "sample", "--json", "--model", path, "--prompt", PROMPT, "--seed", "2",
                   "--max-new-tokens", "5")
    m = load(path)
    ids = m.tokenizer(PROMPT)["input_ids"]
    torch.manual_seed(2)
    ref = m.model.generate(torch.tensor([ids]), do_sample=True, max_new_tokens=5, top_k=0, pad_token_id=0)
    assert [t["id"] for t in out["tokens"]] == ref[0, len(ids):].tolist()


def test_sample_json_runs_read_split_characters_whole(capsys):
    """`runs` (added beside text and tokens): the shipped course-gpt2 on Portuguese, seed 0, splits "ã" and "õ"
    into byte tokens; the runs' texts join to the tokenizer's own decode, the split ones marked joined."""
    from transformers import AutoTokenizer

    from lab.models import registry
    from lab.sampling import PROMPTS

    argv = ["sample", "--json", "--model", "course-gpt2", "--prompt", PROMPTS["pt"], "--seed", "0",
            "--max-new-tokens", "32", "--temperature", "1", "--top-k", "50", "--top-p", "0.9"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    tok = AutoTokenizer.from_pretrained(registry.info("course-gpt2").path)
    ids = [t["id"] for t in out["tokens"]]
    assert "".join(r["text"] for r in out["runs"]) == tok.decode(ids) == out["text"]
    joined = [r for r in out["runs"] if r["joined"]]
    assert {"ã", "õ"} <= {r["text"] for r in joined}
    assert all(r["stop"] - r["start"] == 2 and "\ufffd" in tok.decode([ids[r["start"]]]) for r in joined)
    starts = [r["start"] for r in out["runs"]]
    assert starts == sorted(set(starts)) and out["runs"][-1]["stop"] == len(ids) == 32
