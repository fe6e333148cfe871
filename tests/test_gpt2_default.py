"""GPT-2 first where it is there (issue 59, item 3): the pages open on gpt2 when it is cached whole on this machine
(and offered), on the course model otherwise; a link's ?model= and a lesson's step keep theirs; the sidebar names
gpt2 as the model the course describes; the figures the course quotes for it sit beside what this copy gives.

gpt2 here is a tiny random GPT-2 laid out in a private Hugging Face cache as the hub leaves it (the hub never reaches
these machines); presence is all most tests need. The availability check is held against huggingface_hub's own
view of the cache and against transformers loading it offline.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lab import models, quoted
from lab.models import hub
from lab.models.default import default_model
from tests.pages import open_page
from tests.test_models import fake_hub_cache

ROOT = Path(__file__).resolve().parents[1]
GPT2 = "openai-community/gpt2"
COURSE = ROOT.parent / "shared" / "course"


@pytest.fixture
def hf(fresh_caches, tmp_path, monkeypatch):
    """A private, empty, offline Hugging Face cache (every Streamlit and model cache fresh); yields its hub folder."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.delenv("LAB_HOSTED", raising=False)
    monkeypatch.delenv("LAB_HOSTED_MODELS", raising=False)
    (tmp_path / "hf" / "hub").mkdir(parents=True)
    return tmp_path / "hf" / "hub"


@pytest.fixture
def with_gpt2(hf, tiny_model_dirs):
    """gpt2 cached whole (config, tokenizer, weights) in the private cache."""
    fake_hub_cache(hf, GPT2, tiny_model_dirs["gpt2"])
    return hf


def described(at) -> list[str]:
    return [c.value for c in at.caption if "the course describes" in c.value or "o curso descreve" in c.value]


def quoted_split(at) -> list[str]:
    return [c.value for c in at.caption if "quotes GPT-2" in c.value or "cita o GPT-2" in c.value]


# ---------------------------------------------------------------- availability, against huggingface_hub's own view

def hf_view(cache: Path) -> dict:
    """What huggingface_hub says of gpt2 in `cache`: whether its repo is there (scan_cache_dir) and which files of
    its main revision hf_hub_download finds without the network."""
    from huggingface_hub import hf_hub_download, scan_cache_dir
    from huggingface_hub.errors import LocalEntryNotFoundError

    repos = {r.repo_id for r in scan_cache_dir(cache).repos}
    found = set()
    for name in ("config.json", "tokenizer.json", "vocab.json", "model.safetensors", "pytorch_model.bin"):
        try:
            hf_hub_download(GPT2, name, cache_dir=str(cache), local_files_only=True)
            found.add(name)
        except LocalEntryNotFoundError:
            pass
    return {"repo": GPT2 in repos, "files": found}


def transformers_loads(cache: Path) -> bool:
    """Whether transformers itself loads gpt2 and its tokenizer from `cache` offline."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        AutoModelForCausalLM.from_pretrained(GPT2, cache_dir=str(cache), local_files_only=True)
        AutoTokenizer.from_pretrained(GPT2, cache_dir=str(cache), local_files_only=True)
    except OSError:
        return False
    return True


def test_a_whole_copy_is_available_and_the_default(with_gpt2):
    view = hf_view(with_gpt2)
    assert view["repo"] and {"config.json", "model.safetensors"} <= view["files"]
    assert transformers_loads(with_gpt2)
    assert hub.is_available("gpt2") and default_model() == "gpt2"


def test_a_config_without_weights_is_absent(hf, tiny_model_dirs, tmp_path):
    """A partial download: config and tokenizer files in the cache, no weights. huggingface_hub sees the repo, and
    transformers cannot load it: absent, and the default stays the course model."""
    partial = tmp_path / "partial"
    partial.mkdir()
    for f in tiny_model_dirs["gpt2"].iterdir():
        if f.suffix not in (".safetensors", ".bin"):
            (partial / f.name).write_bytes(f.read_bytes())
    fake_hub_cache(hf, GPT2, partial)
    view = hf_view(hf)
    assert view["repo"] and "config.json" in view["files"] and "model.safetensors" not in view["files"]
    assert not transformers_loads(hf)
    assert not hub.is_available("gpt2") and default_model() == models.DEFAULT_OFFLINE


def test_weights_still_downloading_are_absent(with_gpt2):
    """A download cut short: the weights only as blobs/*.incomplete, no snapshot link (how huggingface_hub writes)."""
    snapshot = next((with_gpt2 / "models--openai-community--gpt2" / "snapshots").iterdir())
    weights = snapshot / "model.safetensors"
    blobs = with_gpt2 / "models--openai-community--gpt2" / "blobs"
    blobs.mkdir(exist_ok=True)
    (blobs / "0123abcd.incomplete").write_bytes(weights.read_bytes()[:1000])
    weights.unlink()
    assert "model.safetensors" not in hf_view(with_gpt2)["files"] and not transformers_loads(with_gpt2)
    assert default_model() == models.DEFAULT_OFFLINE


def test_an_empty_cache_keeps_todays_default(hf):
    assert not hf_view(hf)["repo"] and default_model() == "course-gpt2"


def test_hosted_gpt2_only_where_offered_and_it_fits(with_gpt2, monkeypatch):
    monkeypatch.setenv("LAB_HOSTED", "1")
    assert default_model() == "gpt2"  # the hosted default list offers gpt2
    monkeypatch.setenv("LAB_HOSTED_MODELS", "distilgpt2")
    assert default_model() == "course-gpt2"
    monkeypatch.delenv("LAB_HOSTED")
    monkeypatch.setenv("LAB_MEMORY_BUDGET_MB", "600")  # gpt2 needs 611 MB by the registry
    assert default_model() == "course-gpt2"


def test_the_choice_loads_no_model(with_gpt2):
    """Cheap: the default is chosen without importing torch or transformers (a fresh interpreter)."""
    code = ("import sys, json\nfrom lab.models.default import default_model\nname = default_model()\n"
            "print(json.dumps([name, 'torch' in sys.modules, 'transformers' in sys.modules]))")
    env = os.environ | {"HF_HOME": str(with_gpt2.parent), "HF_HUB_CACHE": str(with_gpt2), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["gpt2", False, False], out.stderr[-500:]


# ---------------------------------------------------------------- the pages

@pytest.mark.parametrize("lang,words", [("en", ("The model the course describes: GPT-2 small, 124M parameters "
                                                "(124,439,808 counted; its paper says 117M); 12 × 12 × 64: 12 layers, "
                                                "12 heads of 64 dimensions each, 768 wide", "WebText", "29.41.")),
                                        ("pt", ("O modelo que o curso descreve: GPT-2 small, 124 milhões de parâmetros "
                                                "(124.439.808 contados; o artigo diz 117 milhões); 12 × 12 × 64: 12 "
                                                "camadas, 12 cabeças de 64 dimensões cada, 768 de largura", "WebText",
                                                "29,41."))])
def test_pages_open_on_gpt2_when_it_is_here(with_gpt2, lang, words):
    at = open_page("app_pages/attention.py", lang=lang)
    assert at.selectbox(key="model").value == "gpt2" and at.query_params["model"] == "gpt2"
    assert len(described(at)) == 1 and all(w in described(at)[0] for w in words)
    split = quoted_split(at)
    if lang == "en":  # the quoted split beside the tiny stand-in's own (32 = 4 x 8, 2 layers)
        assert split == ["As the course quotes GPT-2 small (chapter 04): 768 = 12 heads × 64 dimensions, 12 layers. "
                         "This copy: 32 = 4 × 8, 2 layers: not the released shape."]
    else:
        assert split == ["Como o curso cita o GPT-2 small (capítulo 04): 768 = 12 cabeças × 64 dimensões, 12 camadas. "
                         "Esta cópia: 32 = 4 × 8, 2 camadas: não é o formato publicado."]


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_pages_open_on_the_course_model_without_it(hf, lang):
    at = open_page("app_pages/attention.py", lang=lang)
    assert at.selectbox(key="model").value == "course-gpt2" and at.query_params["model"] == "course-gpt2"
    assert not described(at) and not quoted_split(at)


def test_a_links_model_keeps_winning(with_gpt2):
    at = open_page("app_pages/attention.py", model="course-gpt2")
    assert at.selectbox(key="model").value == "course-gpt2" and not described(at)


def test_a_lesson_step_keeps_its_model(with_gpt2):
    """Lesson 04 names no model: its notes speak of the course model's heads (layer 2, head 3), so its steps open
    on the course model even where gpt2 is the pages' default."""
    at = open_page(None, lesson="04-heads-and-mask", step="2")
    assert at.session_state["model"] == "course-gpt2" and at.query_params["model"] == "course-gpt2"
    assert (at.session_state["attn_layer"], at.session_state["attn_head"]) == (2, 3)


@pytest.mark.parametrize("lang,paper", [("en", "its paper gives 29.41 on WikiText-2"),
                                        ("pt", "o artigo dele dá 29,41 no WikiText-2")])
def test_the_perplexity_page_puts_the_papers_figure_beside_gpt2s(with_gpt2, lang, paper):
    at = open_page("app_pages/perplexity.py", lang=lang, ppl_models="gpt2", ppl_source="market:en")
    shown = [i.value for i in at.info if "GPT-2 small" in i.value]
    table = at.dataframe[0].value
    measured = str(table[table.columns[3]].iloc[0])  # ppl / token, written the reader's way
    assert len(shown) == 1 and paper in shown[0] and f"{measured} " in shown[0]


# ---------------------------------------------------------------- the quoted figures, against their sources

def test_the_quoted_shape_is_gpt2_smalls_configuration_and_chapter_04s_split():
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config()  # transformers' defaults are GPT-2 small's released configuration
    q = quoted.figures()
    assert (q["n_layer"], q["n_head"], q["n_embd"], q["context"], q["vocabulary"]) == (
        cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.n_positions, cfg.vocab_size)
    with torch.device("meta"):
        assert sum(p.numel() for p in GPT2LMHeadModel(cfg).parameters()) == q["params_released"]
    if COURSE.is_dir():  # chapter 04's blurb: "the 768 dimensions are split into 12 slices of 64"
        text = (COURSE / "ch04-twelve-heads.txt").read_text(encoding="utf-8")
        dims, heads, each = map(int, re.search(r"(\d+) dimensions are split into (\d+) slices of (\d+)", text).groups())
        assert (dims, heads, each) == (q["n_embd"], q["n_head"], q["head_dim"])


def test_the_quoted_paper_figures():
    q = quoted.figures()  # the GPT-2 paper: table 2 (117M), table 3 (WikiText-2 29.41), section 2.1 (WebText)
    assert (q["params_paper"], q["wikitext2_ppl"], q["webtext_documents"], q["webtext_gb"]) == (
        117_000_000, 29.41, 8_000_000, 40)
    assert set(q["sources"]) == {"shape", "params", "data", "perplexity"}
