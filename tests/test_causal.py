"""lab.causal: scores whose softmax is the model's attention, the trophy experiment, the loss."""

import copy
import threading

import numpy as np
import pytest
import torch

from lab import attention, causal
from lab import text as lab_text
from lab.encodings import hf_gpt2_tokenizer
from lab.models import load

EN, PT = causal.TROPHY["en"], causal.TROPHY["pt"]
# Sentences of clearly different lengths (10 and 26 tokens). On the wide model two unbatched passes
# over them differ in the last bits (7.5e-8 measured here, 2 threads: the matrix kernels change with
# the sequence length), where the one batched pass gives exactly 0.0. EN (14/14) and PT (20/21) pass
# either way, so they alone would not notice the trophy splitting its pass in two.
UNEVEN = ("The trophy didn't fit because it was big.",
          "The trophy didn't fit because it was far too small for the old suitcase that my grandmother gave me "
          "when I first left home.", "it")


@pytest.fixture(scope="module")
def models(tiny_model_dirs):
    return {arch: load(str(path)) for arch, path in tiny_model_dirs.items()}


@pytest.fixture(scope="module")
def wide():
    """A random GPT-2 as wide as GPT-2 small (768 = 12 x 64), 2 layers: big enough for threaded BLAS."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(1)
    tok = hf_gpt2_tokenizer()
    cfg = GPT2Config(vocab_size=len(tok), n_layer=2, n_head=12, n_embd=768, n_positions=128,
                     attn_implementation="eager")
    return GPT2LMHeadModel(cfg).eval(), tok


@pytest.mark.parametrize("arch,causal_", [("gpt2", True), ("gpt2", False), ("openai-gpt", True),
                                          ("roberta", False)])
def test_softmax_of_scores_is_the_models_attention(models, arch, causal_):
    m = models[arch]
    ids = lab_text.encode(m.tokenizer, EN[0])
    view = causal.view(m.model, ids, causal=causal_)
    t = len(ids)
    upper = np.triu(np.ones((t, t), bool), 1)
    assert view["scores"].shape == view["attention"].shape == (m.n_layer, m.n_head, t, t)
    if causal_:
        assert np.isneginf(view["scores"][..., upper]).all()
        assert np.isfinite(view["scores"][..., ~upper]).all()
        assert (view["attention"][..., upper] == 0.0).all()
    else:
        assert np.isfinite(view["scores"]).all()
    soft = torch.softmax(torch.from_numpy(view["scores"]), dim=-1).numpy()
    np.testing.assert_allclose(soft, view["attention"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(view["attention"], attention.attention(m.model, ids, causal_), rtol=0, atol=1e-6)


def test_loss_equals_transformers_loss(models):
    m = models["gpt2"]
    ids = lab_text.encode(m.tokenizer, EN[0])
    with torch.no_grad():
        ref = m.model(torch.tensor([ids]), labels=torch.tensor([ids])).loss.item()
        private = copy.deepcopy(m.model)  # transformers' own unmasked run, on a throwaway copy
        free = private(torch.tensor([ids]), labels=torch.tensor([ids]), is_causal=False).loss.item()
    assert causal.view(m.model, ids)["loss"] == pytest.approx(ref, abs=1e-5)
    assert causal.view(m.model, ids, causal=False)["loss"] == pytest.approx(free, abs=1e-5)
    assert causal.view(models["roberta"].model, [0, 5, 2])["loss"] is None


@pytest.mark.parametrize("pair", [EN, PT])
def test_trophy_position_is_the_word(models, pair):
    m = models["gpt2"]
    a, b, word = pair
    result = causal.trophy(m.model, m.tokenizer, a, b, word)
    assert result["tokens_a"][result["position"]] == " " + word
    assert result["tokens_a"][: result["position"] + 1] == result["tokens_b"][: result["position"] + 1]
    assert len(result["per_layer"]) == m.n_layer
    assert result["max_abs_diff"] == max(result["per_layer"]) == 0.0


def test_trophy_is_bit_for_bit_every_time_even_on_a_busy_cpu(models, wide):
    """With the mask: exactly 0.0 on every run (200 on a tiny model, 20 on a 768-wide one),
    half of them while another thread keeps the CPU busy with matrix products."""
    tiny = models["gpt2"]
    stop = threading.Event()

    def hog():
        x = torch.randn(256, 256)
        while not stop.is_set():
            x = torch.tanh(x @ x)

    def runs(n):
        return ([causal.trophy(tiny.model, tiny.tokenizer, *(EN, PT)[i % 2])["max_abs_diff"] for i in range(n)]
                + [causal.trophy(*wide, *(EN, PT, UNEVEN)[i % 3])["max_abs_diff"] for i in range(n // 10)])

    diffs = runs(100)
    busy = threading.Thread(target=hog)
    busy.start()
    try:
        diffs += runs(100)
    finally:
        stop.set()
        busy.join()
    assert diffs == [0.0] * 220
    free = causal.trophy(*wide, *EN, causal=False)
    assert free["max_abs_diff"] > 0 and all(d > 0 for d in free["per_layer"])


def test_trophy_is_one_batched_pass_bit_for_bit_on_sentences_of_different_lengths(wide, forwards):
    """The claim "bit for bit, because both sentences share one pass" on a pair where two passes would
    not be: 10 and 26 tokens, a 768-wide model. Fails if trophy ran the sentences one at a time."""
    result = causal.trophy(*wide, *UNEVEN)
    assert len(result["tokens_a"]) == 10 and len(result["tokens_b"]) == 26
    assert forwards["n"] == 1  # one forward pass over the batch of two, not one per sentence
    assert result["max_abs_diff"] == 0.0 and result["per_layer"] == [0.0, 0.0]
    assert causal.trophy(*wide, *UNEVEN, causal=False)["max_abs_diff"] > 0  # the row does read the rest


def test_trophy_differs_without_the_mask_and_in_an_encoder(models):
    m = models["gpt2"]
    assert causal.trophy(m.model, m.tokenizer, *EN, causal=False)["max_abs_diff"] > 0
    enc = models["roberta"]
    result = causal.trophy(enc.model, enc.tokenizer, *EN)
    assert result["tokens_a"][0] == "<s>" and result["tokens_a"][result["position"]] == " it"
    assert result["max_abs_diff"] > 0


def test_trophy_on_gpt1_with_the_mask_and_refusal_without(models):
    m = models["openai-gpt"]
    assert causal.trophy(m.model, m.tokenizer, *EN)["max_abs_diff"] == 0.0
    with pytest.raises(attention.MaskUnsupported):
        causal.trophy(m.model, m.tokenizer, *EN, causal=False)


@pytest.mark.parametrize("a,b,word,message", [
    ("The cup broke because it fell.", "The box broke because it fell.", "it", "differ before 'it'"),
    ("it rained.", "so it rained.", "it", "differ before"),
    ("The trophy was big.", "The trophy was small.", "it", "not in sentence a"),
    ("The trophy, it was big.", "The trophy was small.", "it", "not in sentence b"),
    ("", "it", "it", "need some text"),
    ("it was", "it is", " ", "word to compare is empty"),
])
def test_trophy_bad_input(models, a, b, word, message):
    m = models["gpt2"]
    with pytest.raises(causal.TrophyError, match=message):
        causal.trophy(m.model, m.tokenizer, a, b, word)


def test_word_position_takes_the_last_token_of_a_word(models):
    m = models["gpt2"]
    text = "O troféu não coube na mala."
    pos = causal.word_position(m.tokenizer, text, "troféu")
    texts = lab_text.token_texts(m.tokenizer, lab_text.encode(m.tokenizer, text))
    assert "".join(texts[: pos + 1]) == "O troféu"


def test_trophy_word_with_spaces_around_it(models):
    m = models["gpt2"]
    assert causal.trophy(m.model, m.tokenizer, *EN[:2], " it ") == causal.trophy(m.model, m.tokenizer, *EN[:2], "it")


@pytest.mark.parametrize("arch", ["gpt2", "roberta"])
@pytest.mark.parametrize("word,before", [("🏆", "The 🏆"), ("troféu", "The troféu")])
def test_trophy_compares_the_last_token_of_a_word_of_several_tokens(models, arch, word, before):
    """A word of several tokens (🏆 is three byte tokens) is compared at its last token: the
    position is that of the tokenizer's own last token for the text up to the word."""
    m = models[arch]
    a, b = f"The {word} was too big.", f"The {word} was too small."
    result = causal.trophy(m.model, m.tokenizer, a, b, word)
    up_to = m.tokenizer(before, add_special_tokens=False)["input_ids"]
    assert len(lab_text.token_texts(m.tokenizer, up_to[1:])) >= 2  # the word really is several tokens
    assert result["position"] == len(up_to) - 1 + (arch == "roberta")  # RoBERTa's <s> comes first
    assert result["tokens_a"][result["position"] + 1] == " was"


def test_trophy_too_long_is_a_trophy_error_with_details(models):
    """Past the context: a TrophyError (the UI translates it from reason + details), not a bare ValueError."""
    m = models["gpt2"]
    long = "it was " + "very " * m.model.config.n_positions
    with pytest.raises(causal.TrophyError, match="the model takes at most") as e:
        causal.trophy(m.model, m.tokenizer, long + "big.", long + "small.", "it")
    assert e.value.reason == "too_long" and e.value.details["context"] == m.model.config.n_positions
    assert e.value.details["tokens"] > m.model.config.n_positions
