"""lab.gpt2 (GPT-2's forward pass written out) against transformers: logits to 1e-4 on random tiny GPT-2s with
non-trivial layer norms and on the shipped course models; prefill + decode through `past` equals one pass;
attention weights equal lab.attention's; the shared model is never changed, also with many threads; the
CLI contract and its bad input."""

import json
import threading

import pytest
import torch

from lab import attention, gpt2, trace
from lab.cli import main
from lab.models import load
from lab.testing import random_models

TEXT = "The package manager installs the package and its dependencies."


class Loaded:
    """A lab.models.Loaded stand-in for a model built here (lab.trace reads .name, .model, .tokenizer)."""

    def __init__(self, model, tokenizer, name="tiny"):
        self.model, self.tokenizer, self.name = model, tokenizer, name


def scrambled(seed: int, **sizes):
    """A random tiny GPT-2 whose layer norms and biases are not the identity / zero (eager attention)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from lab.encodings import hf_gpt2_tokenizer

    torch.manual_seed(seed)
    tok = hf_gpt2_tokenizer()
    cfg = GPT2Config(vocab_size=len(tok), attn_implementation="eager", **sizes)
    model = GPT2LMHeadModel(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                p.copy_(1 + 0.5 * torch.randn_like(p))
            elif name.endswith("bias"):
                p.copy_(0.2 * torch.randn_like(p))
    return Loaded(model, tok)


@pytest.fixture(scope="module")
def tiny():
    return scrambled(0, n_layer=3, n_head=4, n_embd=32, n_positions=64)


@pytest.fixture(scope="module")
def course():
    return load("course-gpt2")


def hf_logits(loaded, ids):
    with torch.no_grad():
        return loaded.model(input_ids=torch.tensor([ids])).logits[0]


def ours(loaded, ids, past=None):
    with torch.inference_mode():
        return gpt2.model(trace.weights(loaded.model), torch.tensor(ids), past)


@pytest.mark.parametrize("seed,sizes", [(0, dict(n_layer=3, n_head=4, n_embd=32, n_positions=64)),
                                        (1, dict(n_layer=2, n_head=2, n_embd=48, n_positions=32))])
def test_logits_equal_transformers_on_random_tiny_gpt2s(seed, sizes):
    loaded = scrambled(seed, **sizes)
    ids = torch.randint(0, 2000, (sizes["n_positions"],), generator=torch.Generator().manual_seed(seed)).tolist()
    want = hf_logits(loaded, ids)
    got, present = ours(loaded, ids)
    assert got.shape == want.shape
    assert (got - want).abs().max().item() < 1e-4
    head_dim = sizes["n_embd"] // sizes["n_head"]
    assert list(present.shape) == [sizes["n_layer"], 2, sizes["n_head"], len(ids), head_dim]


@pytest.mark.parametrize("name", ["course-gpt2", "course-gpt2-1x64"])
def test_logits_equal_transformers_on_the_course_models(name):
    loaded = load(name)
    r = trace.trace(loaded, TEXT + " O pacote não foi instalado.")
    assert r["max_abs_diff"] < 1e-4
    ids = trace.token_ids(loaded, TEXT)
    assert (ours(loaded, ids)[0] - hf_logits(loaded, ids)).abs().max().item() < 1e-4


def test_prefill_then_decoding_through_past_equals_one_full_pass(tiny):
    ids = list(range(300, 320))
    full, present = ours(tiny, ids)
    logits, past = ours(tiny, ids[:12])  # prefill
    rows = [logits]
    for i in ids[12:]:  # one token at a time
        logits, past = ours(tiny, [i], past)
        rows.append(logits)
    assert (torch.cat(rows) - full).abs().max().item() < 1e-5
    assert torch.allclose(past, present, atol=1e-6)
    assert list(past.shape) == [3, 2, 4, 20, 8]


def test_attention_weights_equal_lab_attention(tiny):
    ids = list(range(1000, 1030))
    want = [w[0] for w in attention.each_layer(attention.run(tiny.model, [ids]))]
    for layer in range(3):
        for head in (0, 3):
            steps = {s["name"]: s for s in trace.run(tiny, ids, layer, head)[2].steps}
            got = steps[f"h{layer}.attn.weights"]["values"]
            assert got.shape == (30, 30)
            assert abs(got - want[layer][head]).max() < 1e-6


def test_the_masked_scores_are_minus_infinity_above_the_diagonal_and_the_weights_exact_zeros(tiny):
    steps = {s["name"]: s for s in trace.run(tiny, list(range(50, 60)), 1, 2)[2].steps}
    masked, weights = steps["h1.attn.masked"]["values"], steps["h1.attn.weights"]["values"]
    upper = torch.ones(10, 10, dtype=torch.bool).triu(1).numpy()
    assert (masked[upper] == float("-inf")).all() and torch.isfinite(torch.tensor(masked[~upper])).all()
    assert (weights[upper] == 0).all()
    assert abs(weights.sum(-1) - 1).max() < 1e-6


def test_the_trace_holds_every_step_of_the_chosen_layer_and_the_top_tokens(tiny):
    ids = list(range(400, 416))
    logits, _, recorded = trace.run(tiny, ids, 2, 1)
    names = [s["name"] for s in recorded.steps]
    assert names[:2] == ["wte", "wte_plus_wpe"] and names[-3:] == ["ln_f", "logits", "present"]
    assert all(n.startswith("h2.") for n in names[2:-3]) and len(names) == 23
    steps = dict(zip(names, recorded.steps, strict=True))
    assert steps["h2.mlp.c_fc"]["shape"] == [16, 128] and steps["h2.attn.q"]["shape"] == [4, 16, 8]
    assert steps["h2.attn.q"]["values"].shape == (16, 8)
    want = torch.topk(hf_logits(tiny, ids)[-1], trace.TOP)
    assert [i for i, _ in steps["logits"]["top"]] == want.indices.tolist()
    with torch.no_grad():  # the residual stream entering block 2, through transformers' own ln_1
        entering = tiny.model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[2][0]
        ln_1 = tiny.model.transformer.h[2].ln_1(entering)
    assert abs(steps["h2.ln_1"]["norms"] - ln_1.norm(dim=-1).numpy()).max() < 1e-4
    assert abs(steps["h2.ln_1"]["values"] - ln_1[:, :trace.COLUMNS].numpy()).max() < 1e-5


def test_the_shared_model_is_never_changed_with_many_threads(tiny):
    before = {k: v.clone() for k, v in tiny.model.state_dict().items()}
    config = tiny.model.config.to_dict()
    ids = list(range(700, 740))
    want_ours, want_hf = ours(tiny, ids)[0], hf_logits(tiny, ids)
    errors = []

    def work(i):
        try:
            for _ in range(10):
                got = trace.run(tiny, ids, i % 3, i % 4)[0] if i % 2 else hf_logits(tiny, ids)
                want = want_ours if i % 2 else want_hf
                assert torch.equal(got, want) or (got - want).abs().max() < 1e-6
        except Exception as e:  # noqa: BLE001 — reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert all(torch.equal(before[k], v) for k, v in tiny.model.state_dict().items())
    assert tiny.model.config.to_dict() == config


def test_kv_steps_decode_greedily_with_the_cache_growing(course):
    ids = trace.token_ids(course, "The package manager")
    rows = trace.kv_steps(course, ids, new=4, repeats=1)
    greedy = list(ids)  # each token is transformers' own greedy choice
    for _ in range(4):
        greedy.append(int(hf_logits(course, greedy)[-1].argmax()))
    assert [r["token"] for r in rows[1:]] == greedy[len(ids):]
    assert [r["cache"] for r in rows] == [[4, 2, 8, len(ids) + i, 32] for i in range(5)]
    assert all(r["max_abs_diff"] < 1e-4 for r in rows) and all(r["with_cache"] > 0 for r in rows)
    assert [r["tokens"] for r in rows] == [len(ids) + i for i in range(5)]
    assert rows[0]["with_cache"] == rows[0]["without_cache"]  # the prefill: one pass either way
    # which column is which: tests/test_mistakes_code.py times a fake model whose step time it sets


def test_the_map_of_the_original_names_functions_of_lab_gpt2():
    ranges = sorted(v[:2] for v in trace.ORIGINAL.values())
    assert ranges[-1][1] == 175 and all(a[1] < b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    for ours_name in filter(None, (v[2] for v in trace.ORIGINAL.values())):
        assert callable(getattr(gpt2, ours_name))


def test_cli_contract(capsys):
    assert main(["trace", "--json", "--model", "course-gpt2", "--text", TEXT, "--layer", "3", "--head", "7"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert set(r) == {"tokens", "steps", "attention", "top", "max_abs_diff"}
    n = len(r["tokens"])
    assert n == len(load("course-gpt2").tokenizer(TEXT)["input_ids"])
    assert {"name": "h3.attn.weights", "shape": [8, n, n]} in r["steps"]
    assert len(r["attention"]) == n and all(abs(sum(row) - 1) < 1e-5 for row in r["attention"])
    assert len(r["top"]) == 5 and set(r["top"][0]) == {"id", "token", "logit"}
    assert r["max_abs_diff"] < 1e-4


def test_cli_prints_the_whole_attention_matrix_of_a_long_text(capsys):
    """Issue 34, item 12: an 88-token text gives the 88 x 88 matrix (it was cut to 64 columns), equal to
    transformers' own attention weights (eager) for that layer and head."""
    from transformers import AutoModelForCausalLM

    from lab.models import registry

    text = ("O gerenciador de pacotes instala o pacote e as suas dependências, e depois configura cada um deles. "
            * 4)
    assert main(["trace", "--json", "--model", "course-gpt2", "--text", text, "--layer", "1", "--head", "2"]) == 0
    r = json.loads(capsys.readouterr().out)
    n = len(r["tokens"])
    assert n > 64 and len(r["attention"]) == n and all(len(row) == n for row in r["attention"])
    model = AutoModelForCausalLM.from_pretrained(registry.info("course-gpt2").path, dtype=torch.float32,
                                                 attn_implementation="eager")
    ids = load("course-gpt2").tokenizer(text)["input_ids"]
    with torch.no_grad():
        want = model(torch.tensor([ids]), output_attentions=True).attentions[1][0, 2]
    assert torch.allclose(torch.tensor(r["attention"]), want, atol=1e-5)


@pytest.mark.parametrize("args,words", [
    (["--text", "   "], "empty"),
    (["--model", "course-roberta", "--text", "hi"], "encoder"),
    (["--text", "hi", "--layer", "4"], "layer must be from 0 to 3"),
    (["--text", "hi", "--head", "8"], "head must be from 0 to 7"),
    (["--text", "a " * 600], "takes at most 256"),
])
def test_cli_bad_input_exits_2_with_one_line(args, words, capsys):
    assert main(["trace", "--json", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


def test_random_models_of_the_lab_run_too(tiny_model_dirs):
    loaded = load(str(tiny_model_dirs["gpt2"]))
    assert trace.trace(loaded, TEXT)["max_abs_diff"] < 1e-4
    assert random_models.ARCHS[0] == "gpt2"


def test_source_steps_are_the_recorded_steps_in_order_with_a_shape_comment_of_their_rank(tiny):
    """The code page's steps come from lab/gpt2.py itself: every rec() of a real pass, in its order, with the line
    that records it and a shape comment naming as many axes as the tensor has (P = 3 cached tokens, so S = T + 3)."""
    ids = [1, 2, 3, 4]
    _, past, _ = trace.run(tiny, ids[:3])
    _, _, recorded = trace.run(tiny, ids[3:], layer=0, past=past)
    steps = trace.source_steps()
    assert list(steps) == [trace.short(s["name"]) for s in recorded.steps]
    lines = open(gpt2.__file__, encoding="utf-8").read().splitlines()
    cfg = tiny.model.config
    sizes = {"T": 1, "S": 4, "H": cfg.n_head, "D": cfg.n_embd // cfg.n_head, "C": cfg.n_embd, "3C": 3 * cfg.n_embd,
             "4C": 4 * cfg.n_embd, "2": 2, "L": cfg.n_layer, "V": cfg.vocab_size}
    for s in recorded.steps:
        step = steps[trace.short(s["name"])]
        assert f'rec("{trace.short(s["name"])}"' in lines[step["line"] - 1]
        assert [sizes[a] for a in step["axes"]] == s["shape"], (s["name"], step["axes"], s["shape"])
