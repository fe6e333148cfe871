"""lab.fill against transformers: fill equals the fill-mask pipeline (ids and probabilities to 1e-5), masks filled
in order equal the pipeline run again on the filled text, the per-position table equals a direct
mask-one-at-a-time loop and the decoder's own softmax, the trophy pair, the 80/10/10 masking; the CLI contract
and its bad input."""

import copy
import json

import numpy as np
import pytest
import torch
from tokenizers import AddedToken
from transformers import pipeline

from lab import fill, perplexity
from lab.causal import TROPHY
from lab.cli import main
from lab.models import load


@pytest.fixture(scope="module")
def course():
    return load("course-roberta"), load("course-gpt2")


@pytest.fixture(scope="module")
def tiny_roberta(tiny_model_dirs):
    return load(str(tiny_model_dirs["roberta"]))


def hub_like(tokenizer):
    """A private copy of the tokenizer whose <mask> strips the space before it, as roberta-base's does."""
    tok = copy.deepcopy(tokenizer)
    tok.add_special_tokens({"mask_token": AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False,
                                                     special=True)})
    return tok


def pipeline_fill(loaded, text, top, tokenizer=None):
    """transformers' fill-mask pipeline: per mask, [(id, score)]."""
    fm = pipeline("fill-mask", model=loaded.model, tokenizer=tokenizer or loaded.tokenizer, top_k=top)
    out = fm(text)
    per_mask = out if isinstance(out[0], list) else [out]
    return [[(c["token"], c["score"]) for c in mask] for mask in per_mask]


def ours(r):
    return [[(c["id"], c["p"]) for c in m["candidates"]] for m in r["masks"]]


def assert_same(got, want):
    assert [[i for i, _ in m] for m in got] == [[i for i, _ in m] for m in want]
    assert max(abs(a - b) for g, w in zip(got, want, strict=True) for (_, a), (_, b) in zip(g, w, strict=True)) < 1e-5


@pytest.mark.parametrize("text", ["The cat sat on the <mask>.", "The <mask> sat on the <mask> mat.",
                                  "A [MASK] and a <mask>, then <mask>!"])
def test_fill_equals_the_pipeline_on_a_roberta_base_style_tokenizer(tiny_roberta, text):
    want = pipeline_fill(tiny_roberta, text.replace("[MASK]", "<mask>"), 7, hub_like(tiny_roberta.tokenizer))
    assert_same(ours(fill.fill(tiny_roberta, text, 7)), want)


@pytest.mark.parametrize("text", ["<mask> is a free operating system.", "Debian (<mask>) ships packages.",
                                  "O pacote\n<mask> foi instalado."])
def test_fill_equals_the_pipeline_on_course_roberta(course, text):
    encoder, _ = course
    assert_same(ours(fill.fill(encoder, text, 10)), pipeline_fill(encoder, text, 10))


def test_a_mask_takes_the_space_before_it(course):
    encoder, _ = course
    ids, masks = fill.masked_ids(encoder.tokenizer, "Debian is a free <mask> system.")
    assert ids == hub_like(encoder.tokenizer)("Debian is a free <mask> system.")["input_ids"]
    assert encoder.tokenizer.convert_ids_to_tokens(ids)[masks[0] - 1] == "Ġfree"
    top = fill.fill(encoder, "Debian is a free <mask> system.", 3)["masks"][0]["candidates"]
    assert top[0]["token"] == " operating"  # the course model knows its Debian


@pytest.mark.parametrize("text", ["Debian is a free <mask> system.", "The <mask> manager installs the package.",
                                  "O pacote foi <mask>.", "O arquivo de configuração fica no diretório <mask>."])
def test_the_pipeline_on_the_shipped_files_gives_the_pages_candidates(course, text):
    """Issue 34, item 12: a reader who runs transformers' own fill-mask pipeline on models/course-roberta (its
    tokenizer and weights read from the files, nothing from lab) gets the page's candidates, ids and probabilities
    on sentences with a space before the mask, in both languages: the shipped <mask> strips left."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from lab.models import registry

    path = registry.info("course-roberta").path
    tok = AutoTokenizer.from_pretrained(path)
    assert tok.convert_ids_to_tokens(tok(text)["input_ids"]).count("Ġ") == 0  # no lone space before the mask
    fm = pipeline("fill-mask", model=AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32),
                  tokenizer=tok, top_k=10)
    want = [[(c["token"], c["score"]) for c in fm(text)]]
    encoder, _ = course
    assert_same(ours(fill.fill(encoder, text, 10)), want)
    assert [c["token_str"] for c in fm(text)][:3] == [c["token"] for c in fill.fill(encoder, text, 3)["masks"][0][
        "candidates"]]


def test_masks_filled_in_order_equal_the_pipeline_on_the_filled_text(course):
    encoder, _ = course
    text = "The <mask> manager installs the <mask>."
    r = fill.fill_in_order(encoder, text, 5)
    first, second = r["masks"]
    assert [c["id"] for c in first["candidates"]] == [c["id"] for c in fill.fill(encoder, text, 5)["masks"][0][
        "candidates"]]
    filled = text.replace(" <mask>", first["chosen"], 1)
    assert_same([[(c["id"], c["p"]) for c in second["candidates"]]], pipeline_fill(encoder, filled, 5,
                                                                                   hub_like(encoder.tokenizer)))
    assert r["ids"][second["position"]] == second["candidates"][0]["id"]


def direct_encoder(encoder, ids):
    """Each non-special token masked alone, one forward pass each, transformers' own softmax."""
    specials = set(encoder.tokenizer.all_special_ids)
    out = []
    for i, t in enumerate(ids):
        if t in specials:
            continue
        x = list(ids)
        x[i] = encoder.tokenizer.mask_token_id
        with torch.no_grad():
            p = torch.softmax(encoder.model(input_ids=torch.tensor([x])).logits[0, i], -1)
        out.append((p[t].item(), int((p > p[t]).sum()) + 1))
    return out


def test_the_table_equals_a_direct_loop_and_the_decoders_softmax(course):
    encoder, decoder = course
    text = "The package manager keeps a list of the files of each package. O pacote não foi instalado."
    r = fill.compare(encoder, decoder, text)["positions"]
    enc_ids = encoder.tokenizer(text)["input_ids"]
    direct = direct_encoder(encoder, enc_ids)
    assert len(r) == len(direct) == len(enc_ids) - 2
    assert max(abs(x["encoder_p"] - p) for x, (p, _) in zip(r, direct, strict=True)) < 1e-5
    assert [x["encoder_rank"] for x in r] == [k for _, k in direct]
    _, nll = perplexity.pseudo_nll(encoder.model, enc_ids, encoder.tokenizer.mask_token_id,
                                   set(encoder.tokenizer.all_special_ids), 256)
    assert np.allclose([x["encoder_p"] for x in r], np.exp(-nll), atol=1e-6)
    dec_ids = decoder.tokenizer(text)["input_ids"]
    with torch.no_grad():
        p = torch.softmax(decoder.model(input_ids=torch.tensor([dec_ids])).logits[0], -1)
    assert r[0]["decoder_p"] is None and r[0]["decoder_rank"] is None
    for t in range(1, len(dec_ids)):
        assert r[t]["decoder_p"] == pytest.approx(p[t - 1, dec_ids[t]].item(), abs=1e-6)
        assert r[t]["decoder_rank"] == int((p[t - 1] > p[t - 1, dec_ids[t]]).sum()) + 1


def test_the_trophy_pair_what_each_model_can_use_for_it(course):
    """The decoder reads "it" before "big"/"small": its probability of " it" is the same in both sentences; the
    encoder sees the word after it, and its probability of " it" changes."""
    encoder, decoder = course
    a, b, word = TROPHY["en"]
    ra, rb = (fill.compare(encoder, decoder, s)["positions"] for s in (a, b))
    k = next(i for i, x in enumerate(ra) if x["token"] == f" {word}")
    assert ra[k]["decoder_p"] == rb[k]["decoder_p"] and ra[k]["encoder_p"] != rb[k]["encoder_p"]
    gains = fill.right_context_gain(ra)
    assert gains[0] is None and gains[k] == pytest.approx(np.log(ra[k]["encoder_p"] / ra[k]["decoder_p"]))


def test_masking_follows_15_then_80_10_10_seeded_static_and_dynamic(course):
    encoder, _ = course
    text = " ".join(["The package manager installs the package and its dependencies."] * 40)
    ids = encoder.tokenizer(text)["input_ids"][:255] + [encoder.tokenizer.sep_token_id]  # <s> … </s>
    epochs = fill.masking_epochs(ids, 400, seed=7, dynamic=True)
    flat = [a for e in epochs for a in e[1:-1]]  # <s> and </s> are never asked about
    assert all(e[0] is None and e[-1] is None for e in epochs)
    chosen = [a for a in flat if a]
    assert abs(len(chosen) / len(flat) - 0.15) < 0.005
    shares = {a: chosen.count(a) / len(chosen) for a in fill.ACTIONS}
    assert abs(shares["mask"] - 0.8) < 0.01 and abs(shares["random"] - 0.1) < 0.01
    assert abs(shares["kept"] - 0.1) < 0.01
    assert fill.masking_epochs(ids, 3, seed=7, dynamic=True) == epochs[:3]  # seeded
    static = fill.masking_epochs(ids, 5, seed=7, dynamic=False)
    assert all(e == static[0] for e in static) and static[0] == epochs[0]
    assert len({tuple(e) for e in epochs[:5]}) == 5  # dynamic: a new pattern every epoch


def test_cli_contracts(capsys):
    assert main(["fill", "--json", "--text", "Debian is a free <mask> system.", "--top", "3"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert set(r) == {"masks"} and len(r["masks"]) == 1 and set(r["masks"][0]) == {"position", "candidates"}
    assert [set(c) for c in r["masks"][0]["candidates"]] == [{"id", "token", "p"}] * 3
    assert main(["fill", "--json", "--model", "course-roberta", "--compare", "course-gpt2", "--text", "O pacote."]) == 0
    r = json.loads(capsys.readouterr().out)
    assert set(r) == {"positions"} and r["positions"][0]["decoder_p"] is None
    assert set(r["positions"][1]) == {"token", "encoder_p", "encoder_rank", "decoder_p", "decoder_rank"}


@pytest.mark.parametrize("args,words", [
    (["--text", "no mask here"], "has no mask"),
    (["--model", "course-gpt2", "--text", "a <mask>"], "is a decoder"),
    (["--text", "instal<mask> it"], "inside a word"),
    (["--text", "<mask>s are"], "inside a word"),
    (["--text", "a <mask> " + "b " * 300], "course-roberta takes at most 256"),
    (["--compare", "course-roberta", "--text", "hi"], "is an encoder"),
    (["--text", " \n "], "empty"),
])
def test_cli_bad_input_exits_2_with_one_line(args, words, capsys):
    assert main(["fill", "--json", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


def test_a_decoder_that_splits_the_text_differently_is_refused(tiny_model_dirs, capsys):
    """course-roberta has GPT-2's first 7,935 merges; the tiny test GPT-2 all of them: "dependencies" differs."""
    assert main(["fill", "--json", "--compare", str(tiny_model_dirs["gpt2"]), "--text", "its dependencies"]) == 2
    assert "split the text differently" in capsys.readouterr().err


def test_the_gpt_history_figures_come_from_lab_and_its_command(capsys):
    """Issue 51: the fill page's paper figures (40 GB, 40,000 merges, 64 x 512) live in lab with their sources and
    `python -m lab history --json` prints them; the shapes are transformers' default configs'."""
    from transformers import GPT2Config, OpenAIGPTConfig

    from lab import recipes

    assert main(["history", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["papers"] == json.loads(json.dumps(recipes.PAPER_FIGURES))
    gpt1, gpt2 = out["papers"]["openai-gpt"], out["papers"]["gpt2"]
    assert (gpt1["bpe_merges"], gpt1["batch_sequences"], gpt1["sequence_tokens"]) == (40_000, 64, 512)
    assert (gpt2["gigabytes"], gpt2["batch_sequences"]) == (40, 512) and "§" in gpt1["source"] + gpt2["source"]
    assert out["architecture"]["openai-gpt"]["vocabulary"] == OpenAIGPTConfig().vocab_size == 40_478
    assert out["architecture"]["gpt2"]["layers"] == GPT2Config().n_layer == 12
    assert any("ln_1" in line for line in out["layer_norm"]["gpt2"])
