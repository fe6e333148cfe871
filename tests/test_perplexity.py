"""Perplexity against Hugging Face's documented recipe, pseudo-perplexity against a direct loop, the CLI contract."""

import json
import math
import re

import numpy as np
import pytest
import torch

from lab import perplexity
from lab.benchmarks.perplexity import guide_loop
from lab.cli import main
from lab.models import load

LN2 = math.log(2)


def guide(model, ids: list[int], stride: int, context: int, exact_count: bool = False) -> tuple[float, int]:
    """HF's "Perplexity of fixed-length models" loop as printed (lab.benchmarks.perplexity.guide_loop)."""
    return guide_loop(model, torch.tensor([ids]), stride, context, exact_count)


@pytest.fixture(scope="module", params=["gpt2", "openai-gpt"])
def decoder(request, tiny_model_dirs):
    return load(str(tiny_model_dirs[request.param]))


def random_ids(n: int, vocab: int, seed: int = 0) -> list[int]:
    return torch.randint(0, vocab, (n,), generator=torch.Generator().manual_seed(seed)).tolist()


@pytest.mark.parametrize("n,stride_of", [(40, 1.0), (150, 1.0), (150, 0.5), (150, 0.25), (200, 17 / 64), (64, 1.0)])
def test_equals_the_hf_guides_recipe(decoder, n, stride_of):
    """Shorter and longer than the context (64), stride = context and smaller."""
    ctx = decoder.context
    stride = max(1, int(ctx * stride_of))
    ids = random_ids(n, decoder.model.config.vocab_size, seed=n)
    positions, nll = perplexity.token_nll(decoder.model, ids, stride, ctx)
    ours = math.exp(nll.mean())
    want, count = guide(decoder.model, ids, stride, ctx, exact_count=True)
    assert len(nll) == count
    assert ours == pytest.approx(want, rel=1e-5)
    if stride == ctx or n <= ctx:  # the guide's own token count is exact here: the printed loop, unchanged
        printed, printed_count = guide(decoder.model, ids, stride, ctx)
        assert (ours, len(nll)) == (pytest.approx(printed, rel=1e-5), printed_count)
    assert len(set(positions.tolist())) == len(positions) and positions.min() >= 1  # each token once, never the first


def test_stride_equal_to_context_skips_each_windows_first_token(decoder):
    ctx = decoder.context
    positions, _ = perplexity.token_nll(decoder.model, random_ids(3 * ctx, decoder.model.config.vocab_size), ctx, ctx)
    assert 0 not in positions and ctx not in positions and 2 * ctx not in positions
    assert len(positions) == 3 * ctx - 3


def test_every_token_matches_a_full_forward_when_the_text_fits(decoder):
    ids = random_ids(50, decoder.model.config.vocab_size, seed=3)
    positions, nll = perplexity.token_nll(decoder.model, ids, 8, decoder.context)
    with torch.no_grad():
        logp = torch.log_softmax(decoder.model(torch.tensor([ids])).logits[0].double(), dim=-1)
    direct = -logp[torch.arange(49), torch.tensor(ids[1:])].numpy()
    np.testing.assert_allclose(nll, direct, rtol=1e-5)
    assert positions.tolist() == list(range(1, 50))


def test_bits_per_byte_and_per_word_follow_from_the_same_total(decoder):
    text = "A feira de sábado começa cedo. The market opens early, and the bread is gone by eight."
    r = perplexity.evaluate(decoder, text, stride=16)
    total = sum(s["bits"] for s in r["surprisal"]) * LN2
    assert r["nll"] == pytest.approx(total, rel=1e-9)
    assert r["ppl"] == pytest.approx(math.exp(r["nll"] / r["tokens"]))
    assert r["bits_per_byte"] == pytest.approx(r["nll"] / LN2 / len(text.encode("utf-8")))
    assert r["ppl_per_word"] == pytest.approx(math.exp(r["nll"] / len(text.split())))
    assert r["tokens"] == len(decoder.tokenizer(text)["input_ids"]) - 1
    for s in r["surprisal"]:  # character offsets point at the token's own text
        assert s["end"] > s["start"] and text[s["start"]:s["end"]].strip()


def test_per_character_alignment_conserves_each_models_total(decoder):
    text = "Todo sábado de manhã a minha avó ia a pé até a feira."
    r = perplexity.evaluate(decoder, text, stride=8)
    chars = perplexity.by_character(r["surprisal"], len(text))
    assert np.nansum(chars) == pytest.approx(sum(s["bits"] for s in r["surprisal"]))
    first = r["surprisal"][0]["start"]
    assert np.isnan(chars[:first]).all()  # the first token is never predicted


def test_pseudo_perplexity_equals_a_direct_mask_one_at_a_time_loop(tiny_model_dirs):
    enc = load(str(tiny_model_dirs["roberta"]))
    text = "O último ônibus sai às onze e quarenta."
    ids = enc.tokenizer(text)["input_ids"]
    r = perplexity.evaluate(enc, text)
    direct = []
    with torch.no_grad():
        for i in range(1, len(ids) - 1):  # every token but <s> and </s>
            x = torch.tensor([ids])
            x[0, i] = enc.tokenizer.mask_token_id
            logp = torch.log_softmax(enc.model(x).logits[0, i].double(), dim=-1)
            direct.append(-logp[ids[i]].item())
    assert r["pseudo"] is True and r["tokens"] == len(ids) - 2
    assert r["nll"] == pytest.approx(sum(direct), rel=1e-5)
    assert [s["position"] for s in r["surprisal"]] == list(range(1, len(ids) - 1))


def test_pseudo_perplexity_windows_text_longer_than_the_context(tiny_model_dirs):
    enc = load(str(tiny_model_dirs["roberta"]))
    text = " ".join(["palavra"] * 150)
    r = perplexity.evaluate(enc, text)
    assert r["tokens"] == len(enc.tokenizer(text, verbose=False)["input_ids"]) - 2 > enc.context


def test_the_shared_model_is_only_read(decoder):
    before = (decoder.model.training, decoder.model.config.to_json_string(),
              {k: v.clone() for k, v in decoder.model.state_dict().items()})
    perplexity.evaluate(decoder, "The last bus leaves at eleven forty. " * 6, stride=8)
    assert decoder.model.training == before[0] and decoder.model.config.to_json_string() == before[1]
    assert all(torch.equal(v, before[2][k]) for k, v in decoder.model.state_dict().items())


@pytest.mark.parametrize("ids,reason", [([], "empty"), ([5], "one_token")])
def test_too_little_text_is_a_clear_error(decoder, ids, reason):
    with pytest.raises(perplexity.PerplexityError) as e:
        perplexity.token_nll(decoder.model, ids, 8, decoder.context)
    assert e.value.reason == reason


@pytest.mark.parametrize("stride", [0, -3, 65])
def test_a_stride_outside_1_to_context_is_refused(stride):
    with pytest.raises(perplexity.PerplexityError) as e:
        perplexity.windows(100, 64, stride)
    assert e.value.reason == "stride"


# ---------------------------------------------------------------- the CLI

def test_cli_json_contract_for_a_decoder_and_an_encoder(tmp_path, tiny_model_dirs, capsys):
    f = tmp_path / "t.txt"
    f.write_text("The bus still leaves at eleven forty, and the driver waits when it rains. " * 4, encoding="utf-8")
    assert main(["perplexity", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--model",
                 str(tiny_model_dirs["roberta"]), "--file", str(f), "--stride", "32"]) == 0
    out = json.loads(capsys.readouterr().out)
    dec, enc = out["results"]
    assert set(dec) == {"model", "tokens", "nll", "ppl", "bits_per_byte", "ppl_per_word"}
    assert set(enc) == set(dec) | {"pseudo"} and enc["pseudo"] is True
    ref = perplexity.evaluate(load(str(tiny_model_dirs["gpt2"])), f.read_text(encoding="utf-8"), 32)
    assert dec["nll"] == pytest.approx(ref["nll"], rel=1e-9) and dec["tokens"] == ref["tokens"]


@pytest.mark.parametrize("content,args,message", [
    ("", [], "the text is empty"),
    ("   \n", [], "the text is empty"),
    ("Hello", [], "single token"),
    ("Some text to read here.", ["--stride", "0"], "--stride must be a positive"),
    ("Some text to read here.", ["--stride", "65"], "above"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, tiny_model_dirs, capsys, content, args, message):
    f = tmp_path / "t.txt"
    f.write_text(content, encoding="utf-8")
    assert main(["perplexity", "--json", "--model", str(tiny_model_dirs["gpt2"]), "--file", str(f), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_long_text_prints_no_tokenizer_warning(tmp_path, tiny_model_dirs, capfd):
    f = tmp_path / "t.txt"
    f.write_text("word " * 400, encoding="utf-8")
    assert main(["perplexity", "--model", str(tiny_model_dirs["gpt2"]), "--file", str(f), "--stride", "32"]) == 0
    captured = capfd.readouterr()
    assert "Token indices sequence length" not in captured.err and "course" not in captured.err
    assert "ppl / token" in captured.out


def test_a_word_too_long_for_a_float_has_an_infinite_perplexity_per_word():
    s = perplexity.summary(6000.0, 1250, "a" * 5000)  # one 5,000-letter "word": e^6000 is past any float
    assert s["ppl_per_word"] == math.inf and s["ppl"] == pytest.approx(math.exp(6000.0 / 1250))
    assert perplexity.summary(30.0, 10, "um dois três")["ppl_per_word"] == pytest.approx(math.exp(10.0))


# split(" ") finds 11 words here (tabs, newlines and the no-break space join words), 17 are there
MESSY = "Todo sábado\tde manhã,\n\na minha avó ia a\u00a0pé\r\naté a feira.\n\nThe market\topens early."


def test_words_are_counted_across_any_whitespace(decoder):
    """Per word means per whitespace-separated word: double spaces, tabs, newlines, CRLF and no-break spaces
    separate words too (the other tests' texts have single spaces only)."""
    words = re.findall(r"\S+", MESSY)
    assert len(words) == 17  # by hand: Todo sábado de manhã, a minha avó ia a pé até a feira. The market opens early.
    r = perplexity.evaluate(decoder, MESSY, stride=16)
    assert r["ppl_per_word"] == pytest.approx(math.exp(r["nll"] / len(words)), rel=1e-12)
    assert perplexity.summary(12.0, 6, "um\tdois  três\nquatro")["ppl_per_word"] == pytest.approx(math.exp(3.0))


def test_the_unigram_baseline_is_add_one_over_the_whole_vocabulary(tmp_path, monkeypatch):
    """log p(i) = log((c_i + 1) / (N + V)) on a three-token vocabulary, by hand: counts 3, 0, 1 (N = 4, V = 3)."""
    (tmp_path / "course_unigram_counts.json").write_text(json.dumps({"total": 4, "counts": [3, 0, 1]}))
    monkeypatch.setattr(perplexity, "DATA", tmp_path)
    ids = [2, 0, 1, 1, 0]
    expected = -(math.log(4 / 7) + 2 * math.log(1 / 7) + math.log(4 / 7))  # positions 1..4: ids 0, 1, 1, 0
    assert perplexity.unigram_nll(ids, [1, 2, 3, 4]) == pytest.approx(expected, rel=1e-12)
    assert perplexity.unigram_nll(ids, [0]) == pytest.approx(-math.log(2 / 7), rel=1e-12)
    assert perplexity.unigram_nll([0, 3], [1]) is None  # id 3 is outside this vocabulary


def test_the_unigram_baseline_matches_the_shipped_counts_computed_here():
    """The same formula in plain Python over the shipped training counts (8,192 ids), on a few positions."""
    data = json.loads((perplexity.DATA / "course_unigram_counts.json").read_text(encoding="utf-8"))
    counts, n, v = data["counts"], data["total"], len(data["counts"])
    assert v == 8192 and sum(counts) == n
    ids = [464, 0, 8191, 1000, 464, 262, 7000]
    expected = -sum(math.log((counts[i] + 1) / (n + v)) for i in ids[1:])
    assert perplexity.unigram_nll(ids, range(1, len(ids))) == pytest.approx(expected, rel=1e-12)
