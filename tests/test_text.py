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
