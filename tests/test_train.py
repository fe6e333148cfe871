"""The course models' pipeline: corpus cleaners, the prefix tokenizer, and a smoke training run."""

import json

import numpy as np
import pytest

from lab.course import corpus
from lab.course import tokenizer as ct

# ---------------------------------------------------------------- cleaners

HTML = """<html><head><title>Page title</title><style>p { color: red; }</style>
<script>var x = 1;</script></head><body>
<h1>Capítulo 1. Introdução</h1>
<p>Um parágrafo com <b>negrito</b>, uma
quebra de linha &amp; uma entidade&nbsp;aqui.</p>
<pre>$ sudo apt-get install foo
# echo 1 &gt; /proc/sys/x</pre>
<ul><li>First item of the list</li><li>Second item</li></ul>
</body></html>"""


def test_html_to_text_keeps_visible_prose_only():
    paras = corpus.paragraphs(corpus.html_to_text(HTML))
    assert paras == ["Capítulo 1. Introdução",
                     "Um parágrafo com negrito, uma quebra de linha & uma entidade aqui.",
                     "First item of the list", "Second item"]


ROFF = r""".\" Copyright comment line
.TH LS 1 2023-01-01 "GNU coreutils" "User Commands"
.SH NAME
ls \- list directory contents
.SH DESCRIPTION
List information about the
.I FILE
(the current directory by default).
.PP
\fBls\fR sorts entries \(em alphabetically \(em unless
.B \-\-sort
is given; it\(aqs \fIfast\fP.
.nf
int main(void) { return 0; }
.fi
.TP
.BR \-a ", " \-\-all
do not ignore entries starting with .
"""


def test_roff_to_text_keeps_words_and_drops_markup():
    paras = corpus.paragraphs(corpus.roff_to_text(ROFF))
    assert paras == [
        "NAME", "ls - list directory contents", "DESCRIPTION",
        "List information about the FILE (the current directory by default).",
        "ls sorts entries — alphabetically — unless --sort is given; it's fast.",
        "-a, --all do not ignore entries starting with .",
    ]


def test_fortunes_split_on_percent_lines_and_lose_overstrikes():
    text = "Primeira frase.\n%\nB_\bo_\bl_\bd line one\nline two\n\n\t-- Autor\n%\n"
    found = corpus.fortunes(text)
    assert found == ["Primeira frase.", "Bold line one\nline two\n\n\t-- Autor"]
    assert corpus.fortune_text(found[1]) == "Bold line one line two\n-- Autor"


@pytest.mark.parametrize("line, code", [
    ("The package manager installs software and resolves dependencies.", False),
    ("O gerenciador de pacotes instala programas e resolve dependências.", False),
    ("$ sudo apt-get install foo", True),
    ("int main(void) { return 0; }", True),
    ("/usr/share/doc/foo/bar.txt /etc/foo.conf /var/lib/x", True),
    ("FOO=bar BAZ=1 QUX=/tmp ./configure --prefix=/usr", True),
    ("12.3.4 45 67 89", True),
])
def test_is_code_like(line, code):
    assert corpus.is_code_like(line) is code


def test_language_by_common_words():
    assert corpus.language("This is the manual of the system and it is for you.") == "en"
    assert corpus.language("Este é o manual do sistema e não é para você.") == "pt"
    assert corpus.language("Debian GNU/Linux") is None


def test_split_is_seeded_disjoint_and_complete():
    docs = [{"text": f"doc {i}", "lang": "en", "source": "x"} for i in range(100)]
    train, test = corpus.split(docs)
    assert (train, test) == corpus.split(docs)  # same seed, same split
    assert len(test) == 5 and len(train) == 95
    assert sorted(d["text"] for d in train + test) == sorted(d["text"] for d in docs)
    assert corpus.documents(["a" * 10, "b" * 10, "c" * 10], size=25) == ["a" * 10 + "\n" + "b" * 10, "c" * 10]


# ---------------------------------------------------------------- tokenizer

def test_prefix_tokenizer_ids_mean_what_they_mean_in_gpt2():
    from lab.encodings import encoding

    gpt2, ours = encoding("gpt2"), ct.encoding()
    assert ct.VOCAB_SIZE == 8192 and ct.EOT == 8191 and ct.VOCAB_SIZE % 64 == 0
    assert all(ours.decode_single_token_bytes(i) == gpt2.decode_single_token_bytes(i) for i in range(ct.EOT))
    english = "The package is installed and the system can use it now."
    ids = gpt2.encode_ordinary(english)
    assert max(ids) < ct.EOT and ours.encode_ordinary(english) == ids  # common words: GPT-2's own ids
    pt = "A configuração do sistema não é difícil: você só precisa de atenção."
    assert max(gpt2.encode_ordinary(pt)) >= ct.EOT  # rarer merges are cut ...
    assert ours.decode(ours.encode_ordinary(pt)) == pt  # ... yet every text still round-trips


def test_hf_tokenizers_agree_with_the_prefix_encoding():
    text = "Ação e reação: the kernel's scheduler, o núcleo do sistema, 2024."
    ids = ct.encoding().encode_ordinary(text)
    dec = ct.decoder_tokenizer()
    assert len(dec) == ct.VOCAB_SIZE and dec(text)["input_ids"] == ids
    assert dec.convert_tokens_to_ids("<|endoftext|>") == ct.EOT
    enc = ct.encoder_tokenizer()
    assert len(enc) == ct.ENC_VOCAB_SIZE and enc.pad_token_id == 1 and enc.mask_token_id == ct.ENC_MASK
    assert enc(text)["input_ids"] == [ct.ENC_BOS] + [i + ct.ENC_OFFSET for i in ids] + [ct.ENC_EOS]
    assert ct.to_encoder_ids(np.array([5, ct.EOT])).tolist() == [5 + ct.ENC_OFFSET, ct.ENC_EOS]


# ---------------------------------------------------------------- smoke training

EN = ["The system keeps a list of packages and their versions.",
      "Each package has a name, a version and a short description.",
      "The manager downloads the files and checks them before it installs them."]
PT = ["O sistema guarda uma lista de pacotes e das suas versões.",
      "Cada pacote tem um nome, uma versão e uma descrição curta.",
      "O gerenciador baixa os arquivos e confere antes de instalar."]


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    """A corpus directory like `lab corpus` writes, from a few inline sentences."""
    out = tmp_path_factory.mktemp("corpus")
    docs = [{"text": " ".join(s[(i + j) % 3] for j in range(3)), "lang": lang, "source": f"inline:{lang}"}
            for i in range(60) for lang, s in (("en", EN), ("pt", PT))]
    train, test = corpus.split(docs, test_fraction=0.2)
    corpus.write_corpus(train, test, out)
    return out


def test_smoke_training_writes_loadable_models_and_results(tiny_corpus, tmp_path):
    from PIL import Image

    from lab import models
    from lab.course import train

    out = tmp_path / "run"
    results = train.run("smoke", tiny_corpus, out, device="cpu", log=lambda s: None)
    for kind in ("decoder", "encoder"):
        curve = results["training"][kind]["curve"]
        assert results["training"][kind]["best_test_loss"] < curve[0]["test_loss"] - 1.0  # it learned
    dec = models.load(str(out / "course-gpt2"))
    enc = models.load(str(out / "course-roberta"))
    assert (dec.kind, enc.kind) == ("decoder", "encoder")
    assert dec.tokenizer("the system")["input_ids"] == ct.encoding().encode_ordinary("the system")
    config = json.loads((out / "course-gpt2" / "config.json").read_text())
    assert config["vocab_size"] == ct.VOCAB_SIZE and config["dtype"] == "float16"
    ppl = results["decoder"]["perplexity"]["all"]
    assert ppl["perplexity"] < ppl["unigram_perplexity"]  # even the smoke model beats unigram here
    assert set(results["decoder"]["heads"]) >= {"previous", "first", "self", "best_previous"}
    assert len(results["decoder"]["heads"]["previous"]) == train.PRESETS["smoke"]["n_layer"]
    assert 0 <= results["encoder"]["masked"]["accuracy"] <= 1
    for png in ("curve.png", "heads.png"):
        assert Image.open(out / png).size[0] > 100
    saved = json.loads((out / "results.json").read_text())
    assert saved["decoder"]["samples"]["pt"].startswith("O sistema Debian é")


def test_a_sibling_preset_stops_at_the_plateau_and_saves_under_its_own_name(tiny_corpus, tmp_path, monkeypatch):
    """A constant learning rate and a patience of 2 evaluations: on three repeated sentences the held-out
    loss stops improving long before 5,000 steps, the run stops there and keeps its best checkpoint."""
    from lab import models
    from lab.course import train

    small = dict(train.PRESETS["smoke"], schedule="constant", patience=2, steps=5000, eval_every=25,
                 name="course-gpt2-tiny")
    monkeypatch.setitem(train.PRESETS, "sibling-test", small)
    out = tmp_path / "run"
    results = train.run("sibling-test", tiny_corpus, out, device="cpu", models=("decoder",), evaluate=False,
                        log=lambda s: None)
    record = results["training"]["decoder"]
    assert record["stopped"] == "plateau" and record["steps"] < 5000
    losses = [c["test_loss"] for c in record["curve"]]
    assert record["best_test_loss"] == min(losses)
    assert not (out / "course-gpt2").exists()
    assert models.load(str(out / "course-gpt2-tiny")).kind == "decoder"
    assert train.lr_at(4000, 5000, small) == small["lr"]  # constant after warmup


def test_a_run_resumes_from_a_saved_checkpoint(tiny_corpus, tmp_path, monkeypatch):
    """--init: the resumed run starts where the saved model ended (its first held-out loss is the saved
    best, up to fp16 storage), records where it came from, and refuses a checkpoint of other shapes."""
    from lab.course import train

    small = dict(train.PRESETS["smoke"], schedule="constant", steps=60, eval_every=30, name="course-gpt2-tiny")
    monkeypatch.setitem(train.PRESETS, "resume-test", small)
    first = train.run("resume-test", tiny_corpus, tmp_path / "a", device="cpu", models=("decoder",),
                      evaluate=False, log=lambda s: None)["training"]["decoder"]
    fresh_start = first["curve"][0]["test_loss"]
    saved = tmp_path / "a" / "course-gpt2-tiny"
    again = train.run("resume-test", tiny_corpus, tmp_path / "b", device="cpu", models=("decoder",), steps=30,
                      evaluate=False, log=lambda s: None, init=str(saved))["training"]
    start = again["decoder"]["curve"][0]["test_loss"]
    assert abs(start - first["best_test_loss"]) < 0.02 < fresh_start - start
    assert again["init"] == again["decoder"]["init"] == str(saved)
    assert again["decoder"]["best_test_loss"] <= start

    wider = dict(small, n_embd=64)
    monkeypatch.setitem(train.PRESETS, "resume-wider", wider)
    with pytest.raises(ValueError, match="other shapes"):
        train.run("resume-wider", tiny_corpus, tmp_path / "c", device="cpu", models=("decoder",), steps=1,
                  evaluate=False, log=lambda s: None, init=str(saved))
    with pytest.raises(ValueError, match="one model"):
        train.run("resume-test", tiny_corpus, tmp_path / "d", device="cpu", steps=1, evaluate=False,
                  log=lambda s: None, init=str(saved))
