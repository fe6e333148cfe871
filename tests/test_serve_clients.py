"""`python -m lab serve` against the clients readers really point at it (issue 36): the official openai client
(completions, chat, streams, stream_options, echo with logprobs, n, every prompt form), guidellm 0.8.1 (a short
concurrent run in both request formats, 0 errors) and lm-eval 0.4.13 (`local-completions`,
`loglikelihood_rolling`: bits per byte equal to a direct transformers computation).

guidellm and lm-eval live in their own environment (requirements-oracles.txt): found in $LAB_ORACLES_BIN,
.venv-oracles/bin or PATH; skipped when absent unless REQUIRE_ORACLES is set (CI sets it).
"""

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from lab.models import load
from lab.serving import chat
from tests.test_serve import PROMPT, Server, alone

ROOT = Path(__file__).resolve().parent.parent
MODEL_DIR = ROOT / "models" / "course-gpt2"


@pytest.fixture(scope="module")
def course():
    return load("course-gpt2")


@pytest.fixture(scope="module")
def server(course):
    with Server(course, max_concurrent=4, max_queue=8, batching="continuous") as s:
        yield s


def client(server):
    from openai import OpenAI

    return OpenAI(api_key="none", base_url=f"{server.url}/v1", max_retries=0, timeout=300)


def test_chat_whole_and_streamed_is_the_template_completed(server, course):
    messages = [{"role": "system", "content": "A helpful assistant."},
                {"role": "user", "content": "What is a package?"}]
    text = chat.render(messages)
    assert text == "A helpful assistant.\n\nUser: What is a package?\nAssistant:"
    want = alone(course, text, 12, 0, 0)
    want = want[:want.index("\nUser:")] if "\nUser:" in want else want
    r = client(server).chat.completions.create(model="course-gpt2", messages=messages, max_tokens=12, temperature=0)
    assert r.choices[0].message.content == want and r.choices[0].message.role == "assistant"
    assert r.usage.prompt_tokens == len(course.tokenizer(text)["input_ids"])
    chunks = list(client(server).chat.completions.create(
        model="course-gpt2", messages=messages, max_completion_tokens=12, temperature=0, stream=True,
        stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == want
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == r.usage.completion_tokens
    assert all(c.usage is None for c in chunks[:-1])


def test_stream_options_include_usage_sends_a_last_usage_chunk(server, course):
    chunks = list(client(server).completions.create(model="course-gpt2", prompt=PROMPT, max_tokens=6, seed=2,
                                                    stream=True, stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 6
    assert "".join(c.choices[0].text for c in chunks if c.choices) == alone(course, PROMPT, 6, 1.0, 2)


def test_echo_with_logprobs_scores_the_prompt_itself(server, course):
    ids = course.tokenizer(PROMPT)["input_ids"]
    r = client(server).completions.create(model="course-gpt2", prompt=PROMPT, max_tokens=1, temperature=0,
                                          logprobs=2, echo=True)
    lp = r.choices[0].logprobs
    with torch.no_grad():
        logp = torch.log_softmax(course.model(torch.tensor([ids])).logits[0].float(), -1)
    assert lp.token_logprobs[0] is None and lp.top_logprobs[0] is None and len(lp.token_logprobs) == len(ids) + 1
    for t in range(1, len(ids)):
        assert lp.token_logprobs[t] == pytest.approx(float(logp[t - 1, ids[t]]), abs=1e-4)
        assert len(lp.top_logprobs[t]) == 2
    assert lp.token_logprobs[-1] == pytest.approx(float(logp[-1].max()), abs=1e-4)
    assert r.choices[0].text.startswith(PROMPT) and lp.tokens[:len(ids)] == [course.tokenizer.decode([i]) for i in ids]


def test_n_and_every_prompt_form(server, course):
    ids = course.tokenizer("O pacote")["input_ids"]
    r = client(server).completions.create(model="course-gpt2", prompt=["O pacote", PROMPT], max_tokens=5, n=2,
                                          seed=7, temperature=0.9, extra_body={"top_k": -1})
    texts = {c.index: c.text for c in r.choices}
    assert sorted(texts) == [0, 1, 2, 3]  # prompt p, choice k: index p * n + k, seed + index
    assert [texts[i] for i in range(4)] == [alone(course, "O pacote", 5, 0.9, 7), alone(course, "O pacote", 5, 0.9, 8),
                                            alone(course, PROMPT, 5, 0.9, 9), alone(course, PROMPT, 5, 0.9, 10)]
    for prompt in (ids, [ids]):
        r = client(server).completions.create(model="course-gpt2", prompt=prompt, max_tokens=5, seed=7,
                                              temperature=0.9)
        assert r.choices[0].text == texts[0] and r.usage.prompt_tokens == len(ids)


def oracle(name: str) -> str:
    """The path of an outside client's command, or skip (fail under REQUIRE_ORACLES)."""
    for folder in (os.environ.get("LAB_ORACLES_BIN"), str(ROOT / ".venv-oracles" / "bin")):
        if folder and (Path(folder) / name).exists():
            return str(Path(folder) / name)
    found = shutil.which(name)
    if found:
        return found
    if os.environ.get("REQUIRE_ORACLES"):
        pytest.fail(f"{name} is not installed (requirements-oracles.txt)")
    pytest.skip(f"{name} is not installed (requirements-oracles.txt)")


OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.mark.slow
@pytest.mark.parametrize("request_format", ["/v1/completions", "/v1/chat/completions"])
def test_guidellm_runs_without_an_error(server, request_format, tmp_path):
    out = tmp_path / "guidellm.json"
    cmd = [oracle("guidellm"), "run", "--backend",
           f"kind=openai_http,target={server.url},model=course-gpt2,request_format={request_format}",
           "--profile", "kind=concurrent,streams=4", "--data", "kind=synthetic_text,prompt_tokens=32,output_tokens=8",
           "--tokenizer", f"kind=huggingface_auto,model={MODEL_DIR}", "--constraint", "kind=max_requests,count=8",
           "--output", f"kind=json,path={out}", "--disable-console-interactive"]
    done = subprocess.run(cmd, env=OFFLINE, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    metrics = json.loads(out.read_text())["benchmarks"][0]["metrics"]
    assert metrics["request_totals"] == {"successful": 8, "errored": 0, "incomplete": 0, "total": 8}
    assert metrics["output_token_count"]["successful"]["total_sum"] == 64  # ignore_eos: exactly 8 each


PARAGRAPHS = ["The package manager keeps a list of every file it installed, so that removing a package removes "
              "exactly those files.",
              "O gerenciador de pacotes guarda a lista de arquivos instalados, para que remover um pacote remova "
              "exatamente esses arquivos.",
              "Configuration files are kept when a package is removed; purging it deletes them too."]


def direct_bits_per_byte(course) -> float:
    """lm-eval's rolling log-likelihood, computed here: each paragraph after the end-of-text token, every token's
    log-probability summed, over the paragraphs' UTF-8 bytes, in bits."""
    eos, total, size = course.tokenizer.eos_token_id, 0.0, 0
    for text in PARAGRAPHS:
        ids = [eos, *course.tokenizer(text)["input_ids"]]
        with torch.no_grad():
            logp = torch.log_softmax(course.model(torch.tensor([ids])).logits[0].float(), -1)
        total += sum(float(logp[t - 1, ids[t]]) for t in range(1, len(ids)))
        size += len(text.encode("utf-8"))
    return -total / size / math.log(2)


@pytest.mark.slow
def test_lm_eval_bits_per_byte_equal_a_direct_computation(server, course, tmp_path):
    (tmp_path / "paras.jsonl").write_text("".join(json.dumps({"text": p}) + "\n" for p in PARAGRAPHS))
    (tmp_path / "lab_paragraphs.yaml").write_text(
        f"task: lab_paragraphs\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {tmp_path}/paras.jsonl\n"
        "test_split: test\noutput_type: loglikelihood_rolling\ndoc_to_text: \"\"\ndoc_to_target: \"{{text}}\"\n"
        "metric_list:\n  - metric: bits_per_byte\n")
    args = (f"model=course-gpt2,base_url={server.url}/v1/completions,tokenizer={MODEL_DIR},"
            "tokenizer_backend=huggingface,max_length=255,num_concurrent=2,max_retries=1")
    cmd = [oracle("lm_eval"), "--model", "local-completions", "--model_args", args, "--tasks", "lab_paragraphs",
           "--include_path", str(tmp_path), "--output_path", str(tmp_path / "out")]
    done = subprocess.run(cmd, env=OFFLINE, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads(next((tmp_path / "out").rglob("results_*.json")).read_text())["results"]["lab_paragraphs"]
    assert results["bits_per_byte,none"] == pytest.approx(direct_bits_per_byte(course), rel=1e-4)
