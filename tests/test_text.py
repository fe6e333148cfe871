"""lab.text: the one encode (blank text refused with a reason code), against the tokenizer's own output."""

import pytest

from lab import text
from lab.encodings import hf_gpt2_tokenizer
from lab.errors import LabError


@pytest.mark.parametrize("blank", ["", "   ", "\n\t "])
@pytest.mark.parametrize("what", ["text", "prompt"])
def test_a_blank_text_is_refused_with_a_reason_and_one_line(blank, what):
    with pytest.raises(text.EmptyText) as e:
        text.encode(hf_gpt2_tokenizer(), blank, what)
    assert isinstance(e.value, LabError) and isinstance(e.value, ValueError)
    assert (e.value.reason, e.value.details, str(e.value)) == ("empty", {"what": what}, f"the {what} is empty")


def test_encode_is_the_tokenizers_own_ids_even_past_any_context():
    tok = hf_gpt2_tokenizer()
    long = "O troféu não coube na mala. " * 200  # longer than GPT-2's 1,024 tokens: no truncation, no warning
    assert text.encode(tok, long) == tok(long)["input_ids"] and len(text.encode(tok, long)) > 1024


# readable: tokens that together make one character are read as that character (issue 21, part 2)
import codecs  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _course_tokenizer():
    from lab.course import tokenizer as ct
    return ct.decoder_tokenizer()


def test_nao_is_four_course_tokens_read_as_three_runs_the_a_tilde_joined():
    tok = _course_tokenizer()
    ids = text.encode(tok, " não")
    assert text.token_texts(tok, ids) == [" n", "\\xc3", "\\xa3", "o"]
    assert [(r["text"], r["joined"]) for r in text.readable(tok, ids)] == [(" n", False), ("ã", True), ("o", False)]
    assert text.readable_texts(tok, ids) == [" n", "ã ·1/2", "ã ·2/2", "o"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("aãçõéê úÓ€😀\n-"), min_size=1, max_size=30))
def test_readable_runs_join_to_the_tokenizers_own_decode_and_split_only_where_python_cannot(s):
    tok = _course_tokenizer()
    ids = tok(s)["input_ids"]
    runs = text.readable(tok, ids)
    assert "".join(r["text"] for r in runs) == tok.decode(ids)  # the tokenizer's own decode is the oracle
    assert [(r["start"], r["stop"]) for r in runs][-1][1] == len(ids)
    chunks = text.token_bytes(tok, ids)
    for r in runs:  # a run ends where Python's own incremental UTF-8 decoder holds nothing back
        dec = codecs.getincrementaldecoder("utf-8")()
        for k in range(r["start"], r["stop"]):
            dec.decode(chunks[k])
            pending = dec.getstate()[0]
            assert (pending == b"") == (k == r["stop"] - 1), (s, r)
    singles = [r for r in runs if not r["joined"]]
    assert all(r["text"] == text.token_texts(tok, ids[r["start"]:r["stop"]])[0] for r in singles)


def test_token_bytes_agree_with_tiktoken_for_gpt2():
    from lab.encodings import encoding
    enc, tok = encoding("gpt2"), hf_gpt2_tokenizer()
    s = "O troféu não coube na mala 😀 atualizações"
    ids = enc.encode(s)
    assert text.token_bytes(tok, ids) == [enc.decode_single_token_bytes(i) for i in ids]


def test_visible_marks_whitespace_and_control_characters_the_one_way():
    """Worked by hand: space, newline and tab as marks; NUL, carriage return and DEL as their code points."""
    assert text.visible(" king\n\tna\x00o\r\x7f é") == "␣king↵⇥na\\x00o\\x0d\\x7f␣é"
    assert text.labels([" a", "b\n"]) == ["0 ␣a", "1 b↵"]


def test_one_check_and_one_message_for_a_text_too_long_whichever_module_raises_it():
    from lab import causal, fill, sampling, trace
    from ui import messages

    errors = (causal.TrophyError, fill.FillError, sampling.SamplingError, trace.TraceError, LabError)
    text.check_fits(64, 64)  # fits exactly
    raised = []
    for error in errors:
        with pytest.raises(error) as e:
            text.check_fits(1_200, 1_024, error, model="gpt2")
        raised.append(e.value)
    assert {(e.reason, str(e), tuple(sorted(e.details.items()))) for e in raised} == {
        ("too_long", "the text is 1,200 tokens; gpt2 takes at most 1,024",
         (("context", 1024), ("model", "gpt2"), ("new", 0), ("tokens", 1200)))}
    assert {messages.text(e) for e in raised} == {"The text is 1,200 tokens; gpt2 takes at most 1,024."}
    with pytest.raises(LabError, match="60 tokens and 10 new ones; the model takes at most 64"):
        text.check_fits(60, 64, new=10)


def test_require_decoder_refuses_an_encoder_with_one_reason(tiny_model_dirs):
    from lab.ceiling import CeilingError
    from lab.models import load, require_decoder

    encoder, decoder = load(str(tiny_model_dirs["roberta"])), load(str(tiny_model_dirs["gpt2"]))
    require_decoder(decoder, CeilingError, "the ceiling")
    require_decoder(decoder.model)
    with pytest.raises(CeilingError, match="the ceiling needs a decoder") as e:
        require_decoder(encoder, CeilingError, "the ceiling")
    assert e.value.reason == "encoder" and e.value.details == {"model": encoder.name}
    with pytest.raises(LabError, match="roberta is an encoder"):  # a bare transformers model: its type names it
        require_decoder(encoder.model)
