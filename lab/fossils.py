"""The seven fossils (chapter 00): GPT-1, the four GPT-2 sizes, DistilGPT-2, RoBERTa base and large, and the
course's own models, side by side as a cross-section of history, every number read from a configuration.

Configurations are built offline: transformers' own config classes (`OpenAIGPTConfig`, `GPT2Config`,
`RobertaConfig`) filled with each model's published hyperparameters (each with its source), and the course
models' config.json shipped in models/. Nothing is downloaded.

From a configuration:
- the exact parameter count of the class `lab.models.load` builds (the LM-head model, tied embeddings counted
  once), split into embeddings (token, position, RoBERTa's one token-type row), attention (Q, K, V and output
  projections with biases), MLP (both layers with biases), norms (every layer norm's scale and shift) and head
  (RoBERTa's masked-LM head: its dense layer and output bias; the GPTs' head is the tied embedding);
- forward FLOPs per token: 2 per multiply-add, matrix products only (the convention of Kaplan et al. 2020:
  biases, norms, softmax and GELU left out): 2 x (L x (4 d^2 + 2 d ff) + d V [+ d^2, RoBERTa's head]) for the
  weights, plus 2 x 2 x L x T x d for the attention's scores and weighted sum over T keys (T: the context,
  or `tokens`);
- weights memory: parameters x 4 / 2 / 1 bytes (fp32 / fp16 / int8);
- key-value cache: 2 (K and V) x L x d values per token, in fp32 and fp16; decoders only (an encoder reads
  the whole text at once and keeps no cache).

GPT-2's paper gives 117M / 345M / 762M / 1542M; the released checkpoints count 124M / 355M / 774M / 1558M.
`paper_gap()` does the arithmetic: the gap grows with the width (about 9,400-9,800 rows of d), and the
released architecture counted with a 40,478-row token embedding (GPT-1's vocabulary) instead of 50,257
gives all four paper figures to the nearest million; leaving out the positions, or all embeddings, gives none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from lab.errors import LabError

ROOT = Path(__file__).resolve().parents[1]
MODELS_DIR = ROOT / "models"
TRAINING_RECORD = ROOT / "docs" / "course-models-run" / "training.json"
# Sources, (English, Portuguese): the CLI prints the English.
GPT1_PAPER = ("Radford et al. 2018 (GPT-1's paper), section 4.1", "Radford et al. 2018 (o artigo do GPT-1), §4.1")
GPT2_PAPER = ("Radford et al. 2019 (GPT-2's paper), Table 2", "Radford et al. 2019 (o artigo do GPT-2), Tabela 2")
GPT2_HPARAMS = "openai/gpt-2, hparams.json"
ROBERTA_PAPER = ("Liu et al. 2019 (RoBERTa's paper), arXiv:1907.11692", "Liu et al. 2019 (o artigo do RoBERTa), "
                 "arXiv:1907.11692")
FAIRSEQ = "facebookresearch/fairseq examples/roberta/README.md"
DISTIL_CARD = ("distilbert/distilgpt2, model card", "distilbert/distilgpt2, cartão do modelo")
COURSE_DOC = "docs/course-models.md, docs/course-models-run/training.json"
NOT_PUBLISHED = ("not published", "não publicado")


def _both(*parts) -> tuple[str, str]:
    """Parts (a str in both languages, or an (English, Portuguese) pair) joined with '; ' in each language."""
    return tuple("; ".join(p if isinstance(p, str) else p[i] for p in parts) for i in (0, 1))


GPT1_VOCAB, GPT2_VOCAB = 40_478, 50_257
_GPT2 = dict(n_positions=1024, vocab_size=GPT2_VOCAB)
_ROBERTA = dict(vocab_size=50_265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1)
_WEBTEXT = ("WebText: 8 million web pages linked from Reddit, 40 GB", "WebText: 8 milhões de páginas com link no "
            "Reddit, 40 GB")
_ROBERTA_DATA = ("BookCorpus + Wikipedia, CC-News, OpenWebText, Stories: 160 GB",
                 "BookCorpus + Wikipedia, CC-News, OpenWebText, Stories: 160 GB")
_DEBIAN = ("Debian's documentation and fortunes, English + Portuguese: 6.9 M training tokens",
           "Documentação e fortunes do Debian, inglês + português: 6,9 M tokens de treino")


@dataclass(frozen=True)
class Fossil:
    """One model of the cross-section: its architecture ("openai-gpt", "gpt2", "roberta"), published
    hyperparameters (config kwargs; None: read models/<name>/config.json) and the facts beside them, each text
    an (English, Portuguese) pair."""

    name: str
    arch: str
    date: str  # year-month the weights were released
    hyper: dict | None
    source: tuple[str, str]
    paper_params: int | None = None
    paper_source: tuple[str, str] = ("", "")
    data: tuple[str, str] = ("", "")
    data_bytes: int | None = None
    tokens_seen: int | str | None = None  # a str: that run of docs/course-models-run/training.json
    tokens_source: tuple[str, str] = NOT_PUBLISHED


_GPT2_SOURCE = _both(GPT2_PAPER, GPT2_HPARAMS)
_ROBERTA_SOURCE = _both(ROBERTA_PAPER, FAIRSEQ)
FOSSILS = [  # in lineage order: the table's default, each row compared with the one above
    Fossil("openai-gpt", "openai-gpt", "2018-06", {}, _both(GPT1_PAPER, "transformers OpenAIGPTConfig"), None,
           ("none: GPT-2's paper calls its smallest size equivalent to the original GPT",
            "nenhum: o artigo do GPT-2 diz que o seu menor tamanho equivale ao GPT original"),
           ("BooksCorpus: over 7,000 unpublished books", "BooksCorpus: mais de 7.000 livros inéditos"), None, None,
           ("not published (100 epochs of batches of 64 × 512 tokens)",
            "não publicado (100 épocas de lotes de 64 × 512 tokens)")),
    Fossil("gpt2", "gpt2", "2019-02", dict(_GPT2, n_layer=12, n_embd=768, n_head=12), _GPT2_SOURCE, 117_000_000,
           GPT2_PAPER, _WEBTEXT, 40_000_000_000),
    Fossil("gpt2-medium", "gpt2", "2019-05", dict(_GPT2, n_layer=24, n_embd=1024, n_head=16), _GPT2_SOURCE,
           345_000_000, GPT2_PAPER, _WEBTEXT, 40_000_000_000),
    Fossil("gpt2-large", "gpt2", "2019-08", dict(_GPT2, n_layer=36, n_embd=1280, n_head=20), _GPT2_SOURCE,
           762_000_000, GPT2_PAPER, _WEBTEXT, 40_000_000_000),
    Fossil("gpt2-xl", "gpt2", "2019-11", dict(_GPT2, n_layer=48, n_embd=1600, n_head=25), _GPT2_SOURCE,
           1_542_000_000, GPT2_PAPER, _WEBTEXT, 40_000_000_000),
    Fossil("distilgpt2", "gpt2", "2019-10", dict(_GPT2, n_layer=6, n_embd=768, n_head=12),
           _both(DISTIL_CARD, ("GPT-2 small with 6 layers", "GPT-2 small com 6 camadas")), 82_000_000, DISTIL_CARD,
           ("OpenWebTextCorpus (a re-creation of WebText), distilled from GPT-2 small",
            "OpenWebTextCorpus (uma recriação do WebText), destilado do GPT-2 small"), 38_000_000_000),
    Fossil("roberta-base", "roberta", "2019-07", dict(_ROBERTA, num_hidden_layers=12, hidden_size=768,
                                                      num_attention_heads=12, intermediate_size=3072),
           _ROBERTA_SOURCE, 125_000_000, _both(FAIRSEQ), _ROBERTA_DATA, 160_000_000_000),
    Fossil("roberta-large", "roberta", "2019-07", dict(_ROBERTA, num_hidden_layers=24, hidden_size=1024,
                                                       num_attention_heads=16, intermediate_size=4096),
           _ROBERTA_SOURCE, 355_000_000, _both(FAIRSEQ), _ROBERTA_DATA, 160_000_000_000, 500_000 * 8_192 * 512,
           _both(ROBERTA_PAPER, ("at most: 500,000 steps × 8,192 sequences × 512 tokens",
                                 "no máximo: 500.000 passos × 8.192 sequências × 512 tokens"))),
    Fossil("course-gpt2", "gpt2", "2026-11", None, _both("models/course-gpt2/config.json"), None, ("", ""),
           _DEBIAN, None, "decoder", _both(COURSE_DOC)),
    Fossil("course-roberta", "roberta", "2026-11", None, _both("models/course-roberta/config.json"), None,
           ("", ""), _DEBIAN, None, "encoder", _both(COURSE_DOC)),
    Fossil("course-gpt2-2x128", "gpt2", "2026-12", None, _both("models/course-gpt2-2x128/config.json"), None,
           ("", ""), _DEBIAN, None, 47_964_160, _both(COURSE_DOC, ("3,563 + 2,747 + 4,400 + 1,000 steps of 16 × 256",
                                                                 "3.563 + 2.747 + 4.400 + 1.000 passos de 16 × 256"))),
    Fossil("course-gpt2-1x64", "gpt2", "2026-12", None, _both("models/course-gpt2-1x64/config.json"), None,
           ("", ""), _DEBIAN, None, 25_882_624, _both(COURSE_DOC, ("4,000 + 2,319 steps of 16 × 256",
                                                                 "4.000 + 2.319 passos de 16 × 256"))),
]
BY_NAME = {f.name: f for f in FOSSILS}
# Layer-norm placement, position scheme and tokenizer, by architecture (read from transformers' model code:
# lab.recipes.layer_norm_lines; RoBERTa's positions start after the padding index, hence 514 = 512 + 2).
ARCH = {
    "openai-gpt": {"layer_norm": "post", "position_scheme": "learned", "tokenizer": "char-bpe", "kind": "decoder"},
    "gpt2": {"layer_norm": "pre", "position_scheme": "learned", "tokenizer": "byte-bpe", "kind": "decoder"},
    "roberta": {"layer_norm": "post", "position_scheme": "learned-offset", "tokenizer": "byte-bpe", "kind": "encoder"},
}


class FossilError(LabError):
    """A fossil that cannot be read. Reasons: "unknown" (details: name, known), "no_config" (name: a folder
    without a usable config.json of a GPT-1, GPT-2 or RoBERTa), "tokens" (value: --tokens below 1)."""


def config(name_or_path: str):
    """The transformers configuration of a fossil (built from its published hyperparameters, or read from
    models/<name>/config.json) or of a local Hugging Face folder; FossilError otherwise."""
    from lab import hf_imports

    classes = dict(zip(("openai-gpt", "gpt2", "roberta"),
                       hf_imports.names("OpenAIGPTConfig", "GPT2Config", "RobertaConfig"), strict=True))
    fossil = BY_NAME.get(name_or_path)
    if fossil is not None and fossil.hyper is not None:
        return classes[fossil.arch](**fossil.hyper)
    try:  # a name too long for a file, "~nobody/x" (no such home), a NUL: not a folder either
        folder = MODELS_DIR / name_or_path if fossil is not None else Path(name_or_path).expanduser()
        is_dir = folder.is_dir()
    except (OSError, RuntimeError, ValueError):
        folder, is_dir = None, False
    if not is_dir:
        raise FossilError(f"unknown model {name_or_path!r}; known: {', '.join(BY_NAME)}, or a local Hugging Face "
                          "folder", "unknown", name=name_or_path, known=list(BY_NAME))
    try:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        return classes[data.get("model_type")].from_dict(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise FossilError(f"{name_or_path}: no usable config.json of a GPT-1, GPT-2 or RoBERTa model",
                          "no_config", name=name_or_path) from None


def shape(cfg) -> dict:
    """Layers, heads, width, MLP width, context, positions, vocabulary and architecture of a configuration."""
    arch = {"openai-gpt": "openai-gpt", "gpt2": "gpt2", "roberta": "roberta"}[cfg.model_type]
    d, positions = cfg.hidden_size, cfg.max_position_embeddings
    ff = getattr(cfg, "intermediate_size", None) or getattr(cfg, "n_inner", None) or 4 * d
    context = positions - (cfg.pad_token_id + 1 if arch == "roberta" else 0)  # RoBERTa: positions after padding
    return {"arch": arch, "layers": cfg.num_hidden_layers, "heads": cfg.num_attention_heads, "width": d,
            "ff": ff, "context": context, "positions": positions, "vocabulary": cfg.vocab_size,
            "types": getattr(cfg, "type_vocab_size", 0) if arch == "roberta" else 0,
            "tied": bool(getattr(cfg, "tie_word_embeddings", True))}


def parameters(s: dict) -> dict:
    """The exact parameter count of the LM-head model a shape() builds, split five ways, and its total."""
    L, d, ff, V = s["layers"], s["width"], s["ff"], s["vocabulary"]
    roberta = s["arch"] == "roberta"
    split = {"embeddings": (V + s["positions"] + s["types"]) * d,
             "attention": L * (4 * d * d + 4 * d),  # c_attn (3 d x d + 3 d) and c_proj (d x d + d)
             "mlp": L * (2 * d * ff + ff + d),  # c_fc and c_proj, with biases
             "norms": L * 2 * 2 * d + 2 * d * (s["arch"] == "gpt2" or roberta) + 2 * d * roberta,
             "head": (d * d + d + V) if roberta else (0 if s["tied"] else V * d)}
    return {**split, "total": sum(split.values())}


def flops_per_token(s: dict, tokens: int | None = None) -> dict:
    """Forward FLOPs for one token (2 per multiply-add, matrix products only) with `tokens` keys attended
    (default: the full context): the weights' part, the attention's part and their sum."""
    L, d, ff, V = s["layers"], s["width"], s["ff"], s["vocabulary"]
    attended = min(tokens or s["context"], s["context"])
    weights = 2 * (L * (4 * d * d + 2 * d * ff) + d * V + (d * d if s["arch"] == "roberta" else 0))
    attention = 2 * 2 * L * attended * d  # q . k for each key, then the weighted sum of the values
    return {"attended": attended, "weights": weights, "attention": attention, "total": weights + attention}


def kv_cache(s: dict) -> dict | None:
    """Key-value cache bytes per token and per full context, fp32 and fp16; None for an encoder."""
    if s["arch"] == "roberta":
        return None
    values = 2 * s["layers"] * s["width"]  # a key and a value of width d in every layer
    return {"values_per_token": values, "fp32_per_token": 4 * values, "fp16_per_token": 2 * values,
            "fp32_per_context": 4 * values * s["context"], "fp16_per_context": 2 * values * s["context"]}


def _tokens_seen(f: Fossil) -> int | None:
    if isinstance(f.tokens_seen, str):  # a course model: its run in the training record
        return json.loads(TRAINING_RECORD.read_text(encoding="utf-8"))[f.tokens_seen]["tokens_seen"]
    return f.tokens_seen


def row(name_or_path: str, tokens: int | None = None) -> dict:
    """Everything the fossils table shows for one model: shape, parameters, FLOPs, memory, cache and facts."""
    if tokens is not None and tokens < 1:
        raise FossilError(f"--tokens must be at least 1, not {tokens}", "tokens", value=tokens)
    s = shape(config(name_or_path))
    f = BY_NAME.get(name_or_path)
    p = parameters(s)
    return {"name": name_or_path, **s, **ARCH[s["arch"]], "params": p,
            "flops_per_token": flops_per_token(s, tokens),
            "weights_bytes": {"fp32": 4 * p["total"], "fp16": 2 * p["total"], "int8": p["total"]},
            "kv_cache": kv_cache(s), "date": f.date if f else None,
            "config_source": f.source[0] if f else "config.json",
            "paper_params": f.paper_params if f else None, "paper_source": f.paper_source[0] if f else "",
            "data": f.data[0] if f else None, "data_bytes": f.data_bytes if f else None,
            "tokens_seen": _tokens_seen(f) if f else None, "tokens_source": f.tokens_source[0] if f else ""}


CHANGED_FIELDS = ("layers", "width", "heads", "context", "vocabulary", "tokenizer", "layer_norm", "kind", "data")


def changes(rows: list[dict]) -> None:
    """Add to each row, in place, what changed from the previous one (in the order given): a list of
    {"field", "before", "after"} over CHANGED_FIELDS; the first row has none."""
    for prev, r in zip([None, *rows], rows, strict=False):
        r["changed"] = [] if prev is None else [{"field": k, "before": prev[k], "after": r[k]}
                                                 for k in CHANGED_FIELDS if prev[k] != r[k]]


def table(names: list[str] | None = None, tokens: int | None = None) -> list[dict]:
    """One row per fossil (default: all, in FOSSILS' order; else the names or folders given, in that order), each
    with what changed from the row before it."""
    names = names or list(BY_NAME)
    rows = [row(n, tokens) for n in dict.fromkeys(names)]
    changes(rows)
    return rows


def paper_gap() -> list[dict]:
    """GPT-2's four sizes: the released count against the paper's figure, and which counts reach the figure
    to the nearest million: without the position embeddings, without all embeddings, with GPT-1's
    40,478-token vocabulary instead of 50,257. Also the vocabulary sizes that would fit the figure."""
    out = []
    for name in ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"):
        f, s = BY_NAME[name], shape(config(name))
        total, d, paper = parameters(s)["total"], s["width"], BY_NAME[name].paper_params
        tries = {"no_positions": total - s["positions"] * d,
                 "no_embeddings": total - (s["vocabulary"] + s["positions"]) * d,
                 "gpt1_vocabulary": total - (s["vocabulary"] - GPT1_VOCAB) * d}
        lo = s["vocabulary"] - (total - (paper - 500_000)) / d  # rows whose count rounds to the figure
        hi = s["vocabulary"] - (total - (paper + 500_000)) / d
        out.append({"name": f.name, "width": d, "released": total, "paper": paper, "gap": total - paper,
                    "gap_rows": (total - paper) / d,
                    "tries": {k: {"count": v, "millions": round(v / 1e6), "matches": round(v / 1e6) * 1_000_000
                                  == paper} for k, v in tries.items()},
                    "vocabulary_range": [int(-(-lo // 1)), int(hi // 1)]})
    return out


def fitting_vocabularies(gap: list[dict]) -> list[int]:
    """[lowest, highest] token-embedding rows that give every paper figure at once (the ranges' overlap)."""
    return [max(g["vocabulary_range"][0] for g in gap), min(g["vocabulary_range"][1] for g in gap)]


def report(names: list[str] | None = None, tokens: int | None = None) -> dict:
    """What `python -m lab fossils --json` prints: the rows, and GPT-2's paper-vs-released arithmetic."""
    gap = paper_gap()
    return {"fossils": table(names, tokens), "gpt2_paper_gap": gap, "fitting_vocabularies": fitting_vocabularies(gap)}
