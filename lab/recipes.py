"""What the papers decided, with their own figures, beside what the course models did (chapters 09-10).

Every figure has its source. RoBERTa's ablations are read from the paper (Liu et al. 2019, arXiv:1907.11692,
v1's Tables 1-4: development-set results); GPT-1 → GPT-2 is read where each fact lives: the architecture from
transformers' own model code and default configs (those of the released checkpoints) and the registry (the data
and training choices, from the two papers, are on the page: ui/draw/fill.py); course-roberta's training from its
training record.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAINING_RECORD = ROOT / "docs" / "course-models-run" / "training.json"
ROBERTA_PAPER = "https://arxiv.org/abs/1907.11692"
GPT1_PAPER = "https://cdn.openai.com/research-covers/language-unsupervised/language_understanding_paper.pdf"
GPT2_PAPER = ("https://cdn.openai.com/better-language-models/"
              "language_models_are_unsupervised_multitask_learners.pdf")

# RoBERTa's four decisions, each with the paper's ablation: (decision, table, metric names, [(row key, values)]).
# Tables 1-3: BERT-base size on BooksCorpus + Wikipedia (Table 1: medians of 5 seeds; the reference row is the
# published BERT-base); Table 4: BERT-large size, each row adding to the one above.
ROBERTA = [
    ("masking", "Table 1", ("SQuAD 2.0", "MNLI-m", "SST-2"),
     [("reference", (76.3, 84.3, 92.8)), ("static", (78.3, 84.3, 92.5)), ("dynamic", (78.7, 84.0, 92.9))]),
    ("nsp", "Table 2", ("SQuAD 1.1", "SQuAD 2.0", "MNLI-m", "SST-2", "RACE"),
     [("segment_pair", (90.4, 78.7, 84.0, 92.9, 64.2)), ("sentence_pair", (88.7, 76.2, 82.9, 92.1, 63.0)),
      ("full_sentences", (90.4, 79.1, 84.7, 92.5, 64.8)), ("doc_sentences", (90.6, 79.7, 84.7, 92.7, 65.6))]),
    ("batch", "Table 3", ("ppl", "MNLI-m", "SST-2"),
     [("bsz_256", (3.99, 84.7, 92.7)), ("bsz_2k", (3.68, 85.2, 92.9)), ("bsz_8k", (3.77, 84.6, 92.8))]),
    ("data", "Table 4", ("SQuAD 1.1", "SQuAD 2.0", "MNLI-m", "SST-2"),
     [("16gb_100k", (93.6, 87.3, 89.0, 95.3)), ("160gb_100k", (94.0, 87.7, 89.3, 95.6)),
      ("160gb_300k", (94.4, 88.7, 90.0, 96.1)), ("160gb_500k", (94.6, 89.4, 90.2, 96.4))]),
]


# The papers' own figures for GPT-1 -> GPT-2 (the fill page's "decision by decision" table; issue 51: no number typed
# into a translated string), each with where it was read.
PAPER_FIGURES = {
    "openai-gpt": {"data": "BooksCorpus", "books_over": 7_000, "batch_sequences": 64, "sequence_tokens": 512,
                   "bpe_merges": 40_000, "init_std": 0.02, "source": "GPT-1 paper §4.1", "url": GPT1_PAPER},
    "gpt2": {"data": "WebText", "documents_over": 8_000_000, "gigabytes": 40, "reddit_karma_at_least": 3,
             "batch_sequences": 512, "residual_init": "1/sqrt(N), N residual layers", "tokenizer": "byte-level BPE",
             "source": "GPT-2 paper §2", "url": GPT2_PAPER},
}


def gpt_history() -> dict:
    """GPT-1 beside GPT-2, decision by decision: the papers' figures, the shapes and parameters (transformers'
    configs and the registry), where each puts its layer norms (transformers' code). `python -m lab history`."""
    return {"papers": PAPER_FIGURES, "architecture": architecture(), "layer_norm": layer_norm_lines()}


def layer_norm_lines() -> dict[str, list[str]]:
    """Where each model puts its layer norms, read from transformers' own block code: GPT-1 normalises after
    each residual addition, GPT-2 before each sub-block."""
    from lab import hf_imports

    with hf_imports.LOCK:
        from transformers.models.gpt2.modeling_gpt2 import GPT2Block
        from transformers.models.openai.modeling_openai import Block

    def lines(fn):
        return [s.strip() for s in inspect.getsource(fn).splitlines() if "self.ln_" in s and "cross" not in s]

    return {"openai-gpt": lines(Block.forward), "gpt2": lines(GPT2Block.forward)}


def architecture() -> dict[str, dict]:
    """GPT-1's and GPT-2's shapes from transformers' default configs (the released checkpoints') and the
    registry (parameters, context)."""
    from lab import hf_imports
    from lab.models import registry

    GPT2Config, OpenAIGPTConfig = hf_imports.names("GPT2Config", "OpenAIGPTConfig")  # noqa: N806 (classes)

    out = {}
    for name, cfg in (("openai-gpt", OpenAIGPTConfig()), ("gpt2", GPT2Config())):
        info = registry.info(name)
        out[name] = {"layers": cfg.n_layer, "heads": cfg.n_head, "width": cfg.n_embd, "context": info.context,
                     "vocabulary": cfg.vocab_size, "params": info.params,
                     "activation": getattr(cfg, "afn", None) or cfg.activation_function}
    out["gpt2-sizes"] = {n: registry.info(n).params for n in ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl")}
    return out


def course_roberta_training() -> dict:
    """What trained course-roberta, from its training record and the training code: steps, tokens seen, batch
    and window, learning rate, the masking rule (drawn anew for every batch: dynamic) and no second segment."""
    from lab.course import train

    record = json.loads(TRAINING_RECORD.read_text(encoding="utf-8"))
    run, cfg = record["encoder"], record["config"]
    return {"steps": run["steps"], "tokens_seen": run["tokens_seen"], "batch": cfg["batch"], "window": cfg["seq"],
            "lr": cfg["lr"], "masked_share": train.MASK_PROB, "dynamic": True, "nsp": False,
            "best_test_loss": run["best_test_loss"], "params": run["params"]}
