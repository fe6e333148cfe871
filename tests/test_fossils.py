"""The fossils table (chapter 00) against outside oracles: parameter counts against transformers' own models built
from the same configurations on the meta device (every row), FLOPs against torch's FlopCounterMode on a real
forward pass, key-value cache bytes against the cache a real forward pass returns, and the paper-gap arithmetic
written out here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lab import fossils

ROOT = Path(__file__).resolve().parents[1]


def _model_class(arch: str):
    from transformers import GPT2LMHeadModel, OpenAIGPTLMHeadModel, RobertaForMaskedLM

    return {"openai-gpt": OpenAIGPTLMHeadModel, "gpt2": GPT2LMHeadModel, "roberta": RobertaForMaskedLM}[arch]


def _part(name: str) -> str:
    """Which of the five parts a transformers parameter belongs to, by its name in the checkpoint."""
    if any(k in name for k in ("ln_", "LayerNorm", "layer_norm")):
        return "norms"
    if any(k in name for k in ("wte", "wpe", "tokens_embed", "positions_embed", "_embeddings")):
        return "embeddings"
    if "lm_head" in name:
        return "head"
    if ".attn." in name or ".attention." in name:
        return "attention"
    if ".mlp." in name or ".intermediate." in name or ".output.dense" in name:
        return "mlp"
    raise AssertionError(f"a parameter of no known part: {name}")


@pytest.mark.parametrize("name", list(fossils.BY_NAME))
def test_parameter_counts_equal_transformers_models_on_the_meta_device(name):
    import torch

    row = fossils.row(name)
    cfg = fossils.config(name)
    with torch.device("meta"):
        model = _model_class(row["arch"])(cfg)
    split = dict.fromkeys(("embeddings", "attention", "mlp", "norms", "head"), 0)
    for n, p in model.named_parameters():  # a tied weight is yielded once
        split[_part(n)] += p.numel()
    assert row["params"]["total"] == sum(p.numel() for p in model.parameters()) == model.num_parameters()
    assert {k: row["params"][k] for k in split} == split


def test_the_published_shapes():
    """GPT-1: 12 layers, 768 wide, 12 heads, 512 context, 40,478 tokens; RoBERTa base/large: 12/24 layers,
    768/1024 wide, 514 positions, 50,265 tokens; GPT-2: the four sizes of the paper's Table 2."""
    shape = {r["name"]: r for r in fossils.table()}
    assert [shape["openai-gpt"][k] for k in ("layers", "width", "heads", "context", "vocabulary")] == \
        [12, 768, 12, 512, 40_478]
    for name, (layers, width) in {"roberta-base": (12, 768), "roberta-large": (24, 1024)}.items():
        assert (shape[name]["layers"], shape[name]["width"], shape[name]["positions"],
                shape[name]["vocabulary"], shape[name]["context"]) == (layers, width, 514, 50_265, 512)
    for name, (layers, width) in {"gpt2": (12, 768), "gpt2-medium": (24, 1024), "gpt2-large": (36, 1280),
                                  "gpt2-xl": (48, 1600)}.items():
        assert (shape[name]["layers"], shape[name]["width"], shape[name]["context"]) == (layers, width, 1024)
    from lab.models import registry

    for name in ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "distilgpt2", "openai-gpt", "roberta-base",
                 "course-gpt2", "course-roberta", "course-gpt2-2x128", "course-gpt2-1x64"):
        assert shape[name]["params"]["total"] == registry.info(name).params, name


def test_flops_and_cache_formulas_written_out():
    r = fossils.row("gpt2")
    assert r["flops_per_token"]["total"] == 2 * (12 * (4 * 768**2 + 2 * 768 * 3072) + 768 * 50257) \
        + 2 * 2 * 12 * 1024 * 768
    assert r["kv_cache"]["fp16_per_token"] == 2 * 12 * 768 * 2 == 36_864
    assert r["kv_cache"]["fp32_per_context"] == 2 * 12 * 768 * 4 * 1024
    assert r["weights_bytes"] == {"fp32": 124_439_808 * 4, "fp16": 124_439_808 * 2, "int8": 124_439_808}
    assert fossils.row("gpt2", 10)["flops_per_token"]["attention"] == 2 * 2 * 12 * 10 * 768
    rb = fossils.row("roberta-base")
    assert rb["kv_cache"] is None
    assert rb["flops_per_token"]["weights"] == 2 * (12 * (4 * 768**2 + 2 * 768 * 3072) + 768 * 50265 + 768**2)


@pytest.mark.parametrize("arch", ["gpt2", "openai-gpt", "roberta"])
def test_flops_equal_torch_flop_counter_on_a_real_forward(tiny_model_dirs, arch):
    """T tokens through a real (tiny) model under FlopCounterMode: T x FLOPs per token with T keys (the
    attention computes the full T x T square, masked or not)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from lab.models import load

    path = str(tiny_model_dirs[arch])
    r = fossils.row(path, 12)
    model = load(path).model
    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        model(torch.arange(3, 15).unsqueeze(0))
    assert counter.get_total_flops() == 12 * r["flops_per_token"]["total"]


def test_cache_bytes_equal_a_real_forward_passs_cache(tiny_model_dirs):
    import torch

    from lab.models import load

    path = str(tiny_model_dirs["gpt2"])
    r = fossils.row(path)
    with torch.inference_mode():
        out = load(path).model(torch.arange(3, 10).unsqueeze(0), use_cache=True)
    cache = out.past_key_values
    tensors = [t for layer in cache.layers for t in (layer.keys, layer.values)]
    assert sum(t.numel() * t.element_size() for t in tensors) == 7 * r["kv_cache"]["fp32_per_token"]


def test_the_paper_gap_arithmetic():
    """Released minus paper, per row of width; the counts that give the paper's figure to the nearest million."""
    gap = {g["name"]: g for g in fossils.paper_gap()}
    for name, (d, released, paper) in {"gpt2": (768, 124_439_808, 117), "gpt2-medium": (1024, 354_823_168, 345),
                                       "gpt2-large": (1280, 774_030_080, 762),
                                       "gpt2-xl": (1600, 1_557_611_200, 1542)}.items():
        g = gap[name]
        assert (g["released"], g["paper"], g["gap"]) == (released, paper * 10**6, released - paper * 10**6)
        assert round((released - (50257 - 40478) * d) / 1e6) == paper and g["tries"]["gpt1_vocabulary"]["matches"]
        assert round((released - 1024 * d) / 1e6) != paper and not g["tries"]["no_positions"]["matches"]
        assert not g["tries"]["no_embeddings"]["matches"]
    assert fossils.fitting_vocabularies(fossils.paper_gap()) == [40_468, 40_812]


def test_what_changed_from_the_previous_fossil():
    rows = {r["name"]: r for r in fossils.table()}
    assert rows["openai-gpt"]["changed"] == []
    gpt2 = {c["field"]: (c["before"], c["after"]) for c in rows["gpt2"]["changed"]}
    assert gpt2["layer_norm"] == ("post", "pre") and gpt2["context"] == (512, 1024)
    assert gpt2["vocabulary"] == (40_478, 50_257) and gpt2["tokenizer"] == ("char-bpe", "byte-bpe")
    assert "layers" not in gpt2 and "width" not in gpt2


def test_cli_json_is_the_same_table_and_bad_input_is_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "lab", "fossils", "--json", "--model", "gpt2", "--model",
                          "course-roberta"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(out.stdout) == json.loads(json.dumps(fossils.report(["gpt2", "course-roberta"])))
    for argv in (["--model", "nope"], ["--model", str(tmp_path)], ["--tokens", "0"], ["--tokens", "x"]):
        bad = subprocess.run([sys.executable, "-m", "lab", "fossils", "--json", *argv], capture_output=True,
                             text=True, cwd=ROOT)
        assert bad.returncode == 2 and not bad.stdout and bad.stderr.count("\n") == 1, (argv, bad.stderr)
        assert bad.stderr.startswith("lab: error: ")


def test_the_bad_input_matrix_on_fossils():
    """Every case of tests/bad_inputs.py and every garbage name as --model (always exit 2: none is a model),
    every garbage number as --tokens (exit 0 with JSON, or exit 2 with one line)."""
    from tests.bad_inputs import CASES
    from tests.test_reliability_inputs_cli import EXTRA_NAMES, NUMBERS, sweep

    n = sweep({"fossils --model": lambda v: ["fossils", "--json", "--model", v]}, CASES + EXTRA_NAMES, expect_2=True)
    assert n == len(CASES) + len(EXTRA_NAMES)
    assert sweep({"fossils --tokens": lambda v: ["fossils", "--json", "--tokens", v]},
                 [(v, v) for v in NUMBERS]) == len(NUMBERS)
