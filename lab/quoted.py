"""GPT-2 small as the course quotes it: the figures a page shows beside what the loaded model gives.

The course ("GPT-1 and GPT-2, taken apart") describes one model, OpenAI's GPT-2 small (`gpt2`). When that model is
the one a page runs, the page puts these quoted figures next to its own measurements, so a reader sees both the
published number and what this machine's copy gives (a random stand-in in the tests, the real weights on a
reader's laptop or the hosted image).

Sources, one per figure (`SOURCES`):
- the shape (12 layers, 12 heads, 768 wide, 64 per head, 1,024 positions, 50,257 tokens): the released
  checkpoint's configuration (openai-community/gpt2 config.json); the 12 x 64 split is chapter 04's own example;
- parameters: 124,439,808 counted from that configuration (lab.fossils, tests/test_fossils.py); the paper's
  table 2 says 117M (lab.fossils.paper_gap works out why);
- training data: WebText, about 8 million documents and 40 GB of text (the paper, section 2.1);
- WikiText-2 perplexity 29.41, zero-shot (the paper, table 3; lab.perplexity.PUBLISHED, first row).
Pure data, no torch, no Streamlit.
"""

from __future__ import annotations

from lab import perplexity

NAME = "gpt2"  # the registry name of the model the course describes
N_LAYER, N_HEAD, N_EMBD, HEAD_DIM = 12, 12, 768, 64
CONTEXT, VOCABULARY = 1024, 50_257
PARAMS_RELEASED, PARAMS_PAPER = 124_439_808, 117_000_000
WEBTEXT_DOCUMENTS, WEBTEXT_GB = 8_000_000, 40
PAPER = "Radford et al. 2019, Language Models are Unsupervised Multitask Learners"
SOURCES = {
    "shape": "openai-community/gpt2 config.json (n_layer 12, n_head 12, n_embd 768, n_ctx 1024); chapter 04",
    "params": "counted from that configuration (lab.fossils); the paper's table 2 says 117M",
    "data": f"{PAPER}, section 2.1 (WebText)",
    "perplexity": f"{PAPER}, table 3, zero-shot",
}


def wikitext2_ppl() -> float:
    """The paper's zero-shot WikiText-2 perplexity for GPT-2 small (its 117M row), as lab.perplexity publishes it."""
    return next(r["ppl"] for r in perplexity.PUBLISHED if r["model"] == NAME and r["dataset"] == "WikiText-2")


def figures() -> dict:
    """Every quoted figure by name, and the source line of each group (what the pages and the docs show)."""
    return {"name": NAME, "n_layer": N_LAYER, "n_head": N_HEAD, "n_embd": N_EMBD, "head_dim": HEAD_DIM,
            "context": CONTEXT, "vocabulary": VOCABULARY, "params_released": PARAMS_RELEASED,
            "params_paper": PARAMS_PAPER, "webtext_documents": WEBTEXT_DOCUMENTS, "webtext_gb": WEBTEXT_GB,
            "wikitext2_ppl": wikitext2_ppl(), "sources": dict(SOURCES)}
