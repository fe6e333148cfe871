"""lab.lens and `python -m lab lens` against transformers' own logits and a direct ln_f(h) @ wte.T."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from lab import lens
from lab.cli import main
from lab.models import load
from lab.testing import random_models
from lab.text import encode

ROOT = Path(__file__).resolve().parents[1]
TEXT = "The trophy didn't fit in the suitcase because it was too big."
# Probabilities from two float32 paths (lab's chunked projections, HF's hidden states): on this project's
# 2-core machine GPT-1's differ by up to 1.1e-5 (p = 0.81), CPU kernels differing by machine; the mistakes
# these tests guard against (ln_f twice, or never) move them by more than 1e-2 (the guard test below).
PROB_ATOL = 1e-4


@pytest.fixture(scope="module")
def models():
    """Private tiny GPT-2 and GPT-1 (never the shared fixtures). The (tied) embeddings are scaled to std 1
    so that distributions are peaked, not a near-uniform 1/50,257 that any 1e-5 check would pass; GPT-2's
    ln_f gets random weight and bias: with the init's (1, 0) applying it twice, or not at all, would go
    unnoticed."""
    out = {}
    g = torch.Generator().manual_seed(11)
    for arch in ("gpt2", "openai-gpt"):
        model, tok = random_models.build(arch, "tiny", seed=7)
        model.requires_grad_(False)
        with torch.no_grad():
            model.get_input_embeddings().weight.normal_(0, 1, generator=g)
        out[arch] = (model, tok)
    ln_f = out["gpt2"][0].transformer.ln_f
    with torch.no_grad():
        ln_f.weight.copy_(1 + 0.8 * torch.randn(ln_f.weight.shape, generator=g))
        ln_f.bias.copy_(0.5 * torch.randn(ln_f.bias.shape, generator=g))
    return out


def direct(model, ids) -> tuple[np.ndarray, np.ndarray]:
    """The oracle: HF's own hidden states read as ln_f(h) @ wte.T (the last already normed; GPT-1 no norm),
    softmaxed, (L+1, T, V); and the model's own logits softmaxed, (T, V)."""
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True)
        hs = [h[0] for h in out.hidden_states]  # (T, C) each
        base = model.base_model
        wte = base.wte.weight if hasattr(base, "wte") else base.tokens_embed.weight  # (V, C)
        ln_f = getattr(base, "ln_f", None)
        normed = [ln_f(h) for h in hs[:-1]] + [hs[-1]] if ln_f is not None else hs
        probs = torch.stack([torch.softmax(h @ wte.T, -1) for h in normed])  # (L+1, T, V)
        return probs.numpy(), torch.softmax(out.logits[0], -1).numpy()


def full(result: dict) -> np.ndarray:
    """A lens run with top = vocabulary size, back as (L+1, T, V) probabilities indexed by token id."""
    ids, p = result["top_ids"], result["top_p"]
    dense = np.zeros(ids.shape, np.float32)
    np.put_along_axis(dense, ids, p, axis=-1)
    return dense


@pytest.mark.parametrize("arch", ["gpt2", "openai-gpt"])
def test_every_layer_is_ln_f_then_unembedding_and_the_last_is_the_models_output(models, arch):
    model, tok = models[arch]
    ids = encode(tok, TEXT)
    vocab = model.config.vocab_size
    result = lens.lens(model, ids, top=vocab)
    probs, own = direct(model, ids)
    got = full(result)
    assert result["n_layer"] == model.config.n_layer and got.shape == probs.shape
    np.testing.assert_allclose(got[-1], own, rtol=0, atol=PROB_ATOL)  # the model's own next-token distribution
    np.testing.assert_allclose(got, probs, rtol=0, atol=PROB_ATOL)  # every layer, every token of the vocabulary
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-4)
    assert np.median(got.max(-1)) > 0.05  # peaked: an absolute 1e-5 means something here


def test_the_test_model_would_catch_ln_f_twice_or_never(models):
    """Guards the oracle's power: with this ln_f, normalising the last state again (or skipping ln_f
    on the others) moves the distributions far beyond the tolerance."""
    model, tok = models["gpt2"]
    ids = encode(tok, TEXT)
    with torch.no_grad():
        hs = model(torch.tensor([ids]), output_hidden_states=True).hidden_states
        base = model.transformer
        twice = torch.softmax(base.ln_f(hs[-1][0]) @ base.wte.weight.T, -1)
        once = torch.softmax(hs[-1][0] @ base.wte.weight.T, -1)
        raw = torch.softmax(hs[1][0] @ base.wte.weight.T, -1)
        normed = torch.softmax(base.ln_f(hs[1][0]) @ base.wte.weight.T, -1)
    assert (twice - once).abs().max() > 100 * PROB_ATOL and (raw - normed).abs().max() > 100 * PROB_ATOL


@pytest.mark.parametrize("arch", ["gpt2", "openai-gpt"])
def test_top_k_and_target_rank_against_the_direct_distributions(models, arch):
    model, tok = models[arch]
    ids = encode(tok, TEXT)
    probs, _ = direct(model, ids)  # (L+1, T, V)
    result = lens.lens(model, ids, top=5)
    order = np.argsort(-probs, axis=-1, kind="stable")[..., :5]
    np.testing.assert_array_equal(result["top_ids"], order)
    np.testing.assert_allclose(result["top_p"], np.take_along_axis(probs, order, -1), rtol=0, atol=PROB_ATOL)
    final = probs[-1].argmax(-1)  # (T,): the model's own prediction at each position
    np.testing.assert_array_equal(result["targets"], final)
    at = np.take_along_axis(probs, np.broadcast_to(final[None, :, None], (*probs.shape[:2], 1)), -1)[..., 0]
    np.testing.assert_allclose(result["p"], at, rtol=0, atol=PROB_ATOL)
    np.testing.assert_array_equal(result["rank"], (probs > at[..., None]).sum(-1) + 1)
    assert (result["rank"][-1] == 1).all()
    word = tok(" it", add_special_tokens=False)["input_ids"][0]
    typed = lens.lens(model, ids, top=1, target=word)
    assert (typed["targets"] == word).all()
    np.testing.assert_allclose(typed["p"], probs[..., word], rtol=0, atol=PROB_ATOL)
    np.testing.assert_array_equal(typed["rank"], (probs > probs[..., word:word + 1]).sum(-1) + 1)


@pytest.mark.parametrize("arch", ["gpt2", "openai-gpt"])
def test_reading_positions_in_chunks_changes_nothing(models, monkeypatch, arch):
    model, tok = models[arch]
    ids = encode(tok, TEXT)
    whole = lens.lens(model, ids, top=4)
    monkeypatch.setattr(lens, "ROWS", 7)  # (layers + 1) x 16 rows in chunks of 7: chunks straddle the layers
    parts = lens.lens(model, ids, top=4)
    for key in ("top_ids", "targets", "rank"):
        np.testing.assert_array_equal(parts[key], whole[key])
    for key in ("top_p", "p"):  # a matmul over fewer rows may round differently in the last bits
        np.testing.assert_allclose(parts[key], whole[key], rtol=0, atol=1e-5)
    monkeypatch.setattr(lens, "ROWS", 20)  # the last layer's 16 rows and the first of layer 0 in one chunk
    parts = lens.lens(model, ids, top=4)
    for key in ("top_ids", "targets", "rank"):
        np.testing.assert_array_equal(parts[key], whole[key])
    for key in ("top_p", "p"):  # a matmul over fewer rows may round differently in the last bits
        np.testing.assert_allclose(parts[key], whole[key], rtol=0, atol=1e-5)


def test_the_shared_model_is_left_alone(tiny_model_dirs):
    m = load(str(tiny_model_dirs["gpt2"]))
    before = (m.model.config.to_json_string(), m.model.training)
    lens.lens(m.model, encode(m.tokenizer, TEXT))
    assert (m.model.config.to_json_string(), m.model.training) == before


def test_bad_input_raises_lens_errors_with_reasons(models, tiny_model_dirs):
    model, tok = models["gpt2"]
    with pytest.raises(lens.LensError) as e:
        lens.target_id(tok, "troféu")
    assert e.value.reason == "target_tokens" and e.value.details["n"] > 1
    assert lens.target_id(tok, " it") == tok(" it")["input_ids"][0]
    with pytest.raises(lens.LensError, match="out of range") as e:
        lens.check_position(5, 5)
    assert e.value.reason == "position"
    assert lens.check_position(-1, 5) == 4
    with pytest.raises(lens.LensError) as e:
        lens.lens(model, list(range(65)))  # the tiny model's context is 64
    assert e.value.reason == "too_long"
    enc = load(str(tiny_model_dirs["roberta"]))
    with pytest.raises(lens.LensError) as e:
        lens.lens(enc.model, encode(enc.tokenizer, TEXT))
    assert e.value.reason == "encoder"


@pytest.mark.parametrize("ranks,expected", [
    ([5, 1, 3, 1, 1], (1, 3)), ([3, 2, 1], (2, 2)), ([1, 1, 1], (0, 0)), ([2, 2], (None, None)), ([1, 2], (0, None)),
])
def test_first_and_settled(ranks, expected):
    assert lens.first_and_settled(ranks) == expected


# ---------------------------------------------------------------- the CLI

def run_json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_lens_json_contract_against_transformers(capsys, tiny_model_dirs):
    path = str(tiny_model_dirs["gpt2"])
    out = run_json(capsys, "lens", "--json", "--model", path, "--text", TEXT, "--top", "3", "--position", "2")
    m = load(path)
    assert set(out) == {"ids", "tokens", "readable", "n_layer", "top", "target"}
    assert out["ids"] == m.tokenizer(TEXT)["input_ids"] and "".join(out["tokens"]) == TEXT
    n, t = out["n_layer"], len(out["ids"])
    assert n == m.n_layer and len(out["top"]) == n + 1 and all(len(layer) == t for layer in out["top"])
    assert all(len(cell) == 3 and set(cell[0]) == {"id", "token", "p"} for layer in out["top"] for cell in layer)
    with torch.no_grad():
        own = torch.softmax(m.model(torch.tensor([out["ids"]])).logits[0], -1)  # (T, V)
    values, indices = own.topk(3, -1)
    assert [[c["id"] for c in cell] for cell in out["top"][n]] == indices.tolist()
    np.testing.assert_allclose([[c["p"] for c in cell] for cell in out["top"][n]], values.numpy(), rtol=0, atol=1e-5)
    tg = out["target"]
    assert set(tg) == {"position", "id", "token", "rank", "p"}
    assert tg["position"] == 2 and tg["id"] == int(indices[2, 0]) and tg["token"] == out["top"][n][2][0]["token"]
    assert len(tg["rank"]) == len(tg["p"]) == n + 1 and tg["rank"][-1] == 1
    assert tg["token"] == m.tokenizer.decode([tg["id"]])


def test_lens_json_with_a_typed_target(capsys, tiny_model_dirs):
    path = str(tiny_model_dirs["gpt2"])
    out = run_json(capsys, "lens", "--json", "--model", path, "--text", TEXT, "--target", " was")
    m = load(path)
    word = m.tokenizer(" was")["input_ids"][0]
    with torch.no_grad():
        own = torch.softmax(m.model(torch.tensor([out["ids"]])).logits[0, -1], -1)  # (V,)
    tg = out["target"]
    assert tg["position"] == len(out["ids"]) - 1 and tg["id"] == word and tg["token"] == " was"
    assert tg["rank"][-1] == int((own > own[word]).sum()) + 1
    assert tg["p"][-1] == pytest.approx(float(own[word]), abs=1e-6)


@pytest.mark.parametrize("argv,message", [
    (["--text", " "], "the text is empty"),
    (["--text", "it " * 100], "takes at most 64"),
    (["--text", TEXT, "--position", "99"], "position 99 is out of range"),
    (["--text", TEXT, "--target", "troféu"], "not one"),
    (["--text", TEXT, "--target", ""], "target word is empty"),
    (["--text", TEXT, "--top", "0"], "--top must be between 1"),
])
def test_bad_input_exits_2_with_one_line(capsys, tiny_model_dirs, argv, message):
    assert main(["lens", "--json", *argv, "--model", str(tiny_model_dirs["gpt2"])]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("lab: error: ") and message in captured.err


def test_encoder_exits_2(capsys, tiny_model_dirs):
    assert main(["lens", "--json", "--text", TEXT, "--model", str(tiny_model_dirs["roberta"])]) == 2
    assert "is an encoder" in capsys.readouterr().err


def test_the_real_entry_point(tiny_model_dirs):
    """Through `python -m lab` itself: a target of several tokens is one line on stderr, exit 2."""
    cmd = [sys.executable, "-m", "lab", "lens", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--text", TEXT,
           "--target", "troféu"]
    bad = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("lab: error: the target 'troféu' is ")


def test_table_output(capsys, tiny_model_dirs):
    assert main(["lens", "--text", TEXT, "--model", str(tiny_model_dirs["openai-gpt"])]) == 0
    out = capsys.readouterr().out
    assert "settled from layer" in out and out.count("\n") == 2 + 2 + 3  # header lines, table head, 3 layers
    rows = out.splitlines()[4:]
    assert [r.split()[0] for r in rows] == ["embeddings", "1", "2"]  # floor 0 named as the page's charts name it


# ---------------------------------------------------------------- the shipped course model

def course_oracle(text: str):
    """The shipped course-gpt2 through transformers itself (fp32): ids, the direct lens (L+1, T, V) of
    test_lens's `direct`, and its tokens' bytes from tiktoken's GPT-2 encoding (the course tokenizer is GPT-2's
    first merges: the same ids below 8,191)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lab.encodings import encoding

    path = ROOT / "models" / "course-gpt2"
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    ids = tok(text)["input_ids"]
    probs, _ = direct(model, ids)
    return ids, probs, encoding("gpt2")


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_default_texts_answer_forms_up_the_floors_of_the_course_model(lang):
    """What the page says of its default text, on the shipped course-gpt2: the final answer at the last token is a
    word, far down the list after the embeddings, first at rank 1 at a middle floor, there to the output, its
    probability rising floor by floor; and the whole sentence fits one grid (no window)."""
    from viz.lens import GRID_MAX

    ids, probs, gpt2 = course_oracle(lens.DEFAULT_TEXT[lang])
    last = probs[:, -1]  # (L+1, V)
    answer = int(last[-1].argmax())
    word = gpt2.decode_single_token_bytes(answer).decode("utf-8")
    assert word[0] == " " and word[1:].isalpha() and len(word) >= 4, word
    rank = (last > last[:, answer:answer + 1]).sum(-1) + 1  # (L+1,)
    n_layer = len(rank) - 1
    first = int(np.argmax(rank == 1))
    assert rank[0] > 10 and 0 < first < n_layer and (rank[first:] == 1).all(), rank
    assert (np.diff(last[:, answer]) > 0).all(), last[:, answer]
    assert len(ids) <= GRID_MAX
    m = load("course-gpt2")  # and lab's lens says the same: the page's metrics
    result = lens.lens(m.model, encode(m.tokenizer, lens.DEFAULT_TEXT[lang]))
    assert int(result["targets"][-1]) == answer and lens.first_and_settled(result["rank"][:, -1]) == (first, first)


def test_readable_labels_in_the_json_on_the_course_tokenizer(capsys):
    """On the course tokenizer "não" is four tokens, ã two bytes: "readable" names both byte tokens as the
    character tiktoken's bytes make (Python's decoder), marked 1/2 and 2/2; "tokens" keeps each token's own bytes."""
    text = "O troféu não coube na mala."
    out = run_json(capsys, "lens", "--json", "--model", "course-gpt2", "--text", text, "--top", "1")
    ids, _, gpt2 = course_oracle(text)
    assert out["ids"] == ids
    raw = [gpt2.decode_single_token_bytes(i) for i in ids]
    split = [i for i, b in enumerate(raw) if not b.decode("utf-8", "ignore") == b.decode("utf-8", "replace")]
    assert len(split) == 2 and split[1] == split[0] + 1  # ã: one token per byte
    char = (raw[split[0]] + raw[split[1]]).decode("utf-8")
    assert char == "ã"
    assert out["readable"][split[0]:split[1] + 1] == ["ã ·1/2", "ã ·2/2"]
    assert out["tokens"][split[0]] == raw[split[0]].decode("utf-8", "backslashreplace") == "\\xc3"
    whole = [r for i, r in enumerate(out["readable"]) if i not in split]
    assert whole == [b.decode("utf-8") for i, b in enumerate(raw) if i not in split]
    assert not any("\\x" in r for r in out["readable"])


@pytest.mark.parametrize("arch", ["gpt2", "openai-gpt"])
@pytest.mark.parametrize("target", [None, 13])
def test_several_texts_read_at_once_equal_each_alone(models, monkeypatch, arch, target):
    """lens_many: texts of different lengths in one right-padded forward pass (the padding masked), every text's rows
    through shared unembedding passes in chunks that mix texts and layers, each result as lens() gives it alone.
    Tolerance: a padded batch is not bit-identical (measured on course-gpt2, twelve texts: probabilities within
    1.8e-6 at 1 and 2 threads, ids, targets and ranks identical)."""
    model, tok = models[arch]
    texts = [TEXT, "Hello", "O gerenciador de pacotes do Debian", "apt-get install"]
    batch = [encode(tok, x) for x in texts]
    monkeypatch.setattr(lens, "ROWS", 7)
    together = lens.lens_many(model, batch, top=4, target=target)
    monkeypatch.setattr(lens, "ROWS", 512)
    for ids, got in zip(batch, together, strict=True):
        alone = lens.lens(model, ids, top=4, target=target)
        for key in ("top_ids", "targets", "rank"):
            np.testing.assert_array_equal(got[key], alone[key], err_msg=key)
        for key in ("top_p", "p"):
            np.testing.assert_allclose(got[key], alone[key], rtol=0, atol=1e-5, err_msg=key)
