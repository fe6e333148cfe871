"""What the code page computes (chapter 13): lab.gpt2's source and its steps (lab.trace.source_steps), one recorded pass
per (model, text, layer, head) and the key-value cache steps, cached with st.cache_data; models come from
ui.model_loader by name, never hashed. ui.draw.code draws."""

from __future__ import annotations

import inspect

import streamlit as st

from lab import gpt2, trace
from lab.text import encode, readable_labels, token_texts
from ui.model_loader import get_model

PAGE_TOKENS = 64  # the page traces a text's first 64 tokens (the CLI takes a whole context)
KV_NEW = 12  # tokens the key-value cache section decodes


@st.cache_data(show_spinner=False)
def source() -> str:
    """lab/gpt2.py's text."""
    return inspect.getsource(gpt2)


@st.cache_data(show_spinner=False)
def steps() -> dict[str, dict]:
    """lab.trace.source_steps: every step in pass order, with its line in lab/gpt2.py and its shape's axes."""
    return trace.source_steps()


@st.cache_data(show_spinner=False)
def functions() -> dict[str, tuple[int, int]]:
    """Each function of lab.gpt2: (first line, line count)."""
    out = {}
    for name, fn in inspect.getmembers(gpt2, inspect.isfunction):
        if fn.__module__ == gpt2.__name__:
            lines, start = inspect.getsourcelines(fn)
            out[name] = (start, len(lines))
    return out


@st.cache_data(max_entries=32, show_spinner=False)
def traced(model: str, text: str, layer: int, head: int) -> dict:
    """One pass of lab.gpt2 on the text's first PAGE_TOKENS tokens: {"labels" (the tokens as text), "steps"
    {short name: view}, "top" [(token, logit)], "max_abs_diff", "cut" (tokens left out)}. TraceError on bad input."""
    m = get_model(model)
    trace.check(m, layer, head)
    ids = encode(m.tokenizer, text)
    kept = ids[:PAGE_TOKENS]
    logits, _, recorded = trace.run(m, kept, layer, head)
    diff = (logits - trace.reference_logits(m, kept)).abs().max().item()
    steps = {trace.short(s["name"]): s for s in recorded.steps}
    top = [(token_texts(m.tokenizer, [i])[0], v) for i, v in steps["logits"]["top"]]
    return {"labels": readable_labels(m.tokenizer, kept), "steps": steps, "top": top, "max_abs_diff": diff,
            "cut": len(ids) - len(kept), "n_layer": m.model.config.n_layer, "n_head": m.model.config.n_head}


@st.cache_data(max_entries=16, show_spinner=False)
def kv(model: str, text: str) -> list[dict]:
    """lab.trace.kv_steps after the text's first PAGE_TOKENS tokens, KV_NEW new tokens, each with its text."""
    m = get_model(model)
    ids = encode(m.tokenizer, text)[:PAGE_TOKENS]
    rows = trace.kv_steps(m, ids, KV_NEW)
    return [r | {"text": "" if r["token"] is None else token_texts(m.tokenizer, [r["token"]])[0]} for r in rows]
