"""`python -m lab serve` against the official openai client and plain HTTP: completions and streams equal what
lab.sampling draws for the same seed, batching and the cache change nothing in the tokens, every bad request
gets its 4xx with an OpenAI-style body, 429 over the limit, a client leaving mid-stream frees its slot, and the
default bind is loopback. The load-test client's bounds."""

import concurrent.futures as cf
import http.client
import json
import threading
import time

import pytest

from lab import sampling
from lab.cli import main
from lab.models import load
from lab.serving import loadtest
from lab.serving import server as serve
from lab.testing.browser import free_port

PROMPT = "O gerenciador de pacotes"


class Server:
    """lab.serving.server's app on a free loopback port, in a thread; stops itself."""

    def __init__(self, loaded, **options):
        import uvicorn

        self.app = serve.make_app(loaded, serve.Options(**options))
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="error"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        for _ in range(200):
            if self.server.started:
                return self
            time.sleep(0.05)
        raise RuntimeError("the server did not start")

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def post(self, body, headers=None, raw=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request("POST", "/v1/completions", raw if raw is not None else json.dumps(body),
                     {"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        status, data = r.status, r.read()
        conn.close()
        return status, json.loads(data)

    def active(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", "/health")
        n = json.loads(conn.getresponse().read())["active"]
        conn.close()
        return n


@pytest.fixture(scope="module")
def course():
    return load("course-gpt2")


@pytest.fixture(scope="module")
def server(course):
    with Server(course, api_key="sekret", max_concurrent=4, max_queue=4) as s:
        yield s


def client(server, key="sekret"):
    from openai import OpenAI

    return OpenAI(api_key=key, base_url=f"{server.url}/v1", max_retries=0)


def lab_text(course, n, temperature, top_k, top_p, seed):
    return sampling.sample(course.model, course.tokenizer, PROMPT, n, temperature, top_k, top_p, seed)["text"]


def test_the_openai_client_completes_as_lab_sample_draws(server, course):
    r = client(server).completions.create(model="course-gpt2", prompt=PROMPT, max_tokens=24, temperature=0.8,
                                          top_p=0.95, seed=3, extra_body={"top_k": 40})
    assert r.choices[0].text == lab_text(course, 24, 0.8, 40, 0.95, 3)
    assert r.usage.completion_tokens == 24 and r.choices[0].finish_reason == "length"
    assert [m.id for m in client(server).models.list().data] == ["course-gpt2"]


def test_the_openai_client_streams_the_same_tokens(server, course):
    chunks = list(client(server).completions.create(model="course-gpt2", prompt=PROMPT, max_tokens=20, seed=5,
                                                    stream=True))
    text = "".join(c.choices[0].text for c in chunks)
    assert text == lab_text(course, 20, 1.0, 0, 1.0, 5)
    assert len(chunks) == 21 and chunks[-1].choices[0].finish_reason == "length"  # one per token, then the end


def test_logprobs_are_the_models_own(server, course):
    import torch

    r = client(server).completions.create(model="course-gpt2", prompt=PROMPT, max_tokens=1, temperature=0,
                                          logprobs=3)
    ids = course.tokenizer(PROMPT)["input_ids"]
    with torch.no_grad():
        logp = torch.log_softmax(course.model(torch.tensor([ids])).logits[0, -1], -1)
    assert r.choices[0].logprobs.token_logprobs[0] == pytest.approx(logp.max().item(), abs=1e-4)
    assert len(r.choices[0].logprobs.top_logprobs[0]) == 3


def test_stop_strings_cut_the_text(server, course):
    full = lab_text(course, 24, 0.8, 40, 0.95, 3)
    stop = full[10:13]
    status, body = server.post({"model": "course-gpt2", "prompt": PROMPT, "max_tokens": 24, "temperature": 0.8,
                                "top_k": 40, "top_p": 0.95, "seed": 3, "stop": stop},
                               {"Authorization": "Bearer sekret"})
    assert status == 200 and body["choices"][0]["text"] == full[:full.index(stop)]
    assert body["choices"][0]["finish_reason"] == "stop"


KEY = {"Authorization": "Bearer sekret"}
GOOD = {"model": "course-gpt2", "prompt": "O pacote", "max_tokens": 4}


@pytest.mark.parametrize("body,raw,headers,status,words", [
    (None, "{not json", KEY, 400, "not valid JSON"),
    (None, "[1, 2]", KEY, 400, "valid dictionary"),
    ({**GOOD, "frequency_penalty": 1}, None, KEY, 400, "frequency_penalty"),
    ({**GOOD, "max_tokens": 0}, None, KEY, 400, "max_tokens"),
    ({**GOOD, "temperature": 3}, None, KEY, 400, "temperature"),
    ({**GOOD, "top_p": 0}, None, KEY, 400, "top_p"),
    ({**GOOD, "seed": -1}, None, KEY, 400, "seed"),
    ({**GOOD, "n": 2}, None, KEY, 400, "n"),
    ({**GOOD, "max_tokens": 300}, None, KEY, 400, "context"),
    ({**GOOD, "prompt": ""}, None, KEY, 400, "prompt"),
    ({**GOOD, "model": "course-roberta"}, None, KEY, 404, "not served here"),
    (GOOD, None, {}, 401, "API key"),
    (GOOD, None, {"Authorization": "Bearer wrong"}, 401, "API key"),
])
def test_bad_requests_get_their_status_and_an_openai_error(server, body, raw, headers, status, words):
    got, data = server.post(body, headers, raw)
    assert got == status and set(data) == {"error"} and words in data["error"]["message"]
    assert set(data["error"]) == {"message", "type", "param", "code"} and "Traceback" not in json.dumps(data)


def test_batching_and_the_cache_change_no_token(course):
    prompts = ("O pacote", "The package manager", "Debian", "O arquivo de configuração fica")
    bodies = [{"model": "course-gpt2", "prompt": p, "max_tokens": 12, "temperature": 0.9, "top_k": 40, "seed": i}
              for i, p in enumerate(prompts)]  # each row its own seed and generator
    want = [lab_text_for(course, b["prompt"], b["seed"]) for b in bodies]
    for options in ({"batching": True}, {"batching": True, "cache": False}, {"batching": False}):
        with Server(course, max_concurrent=4, **options) as s:
            with cf.ThreadPoolExecutor(4) as pool:
                out = list(pool.map(s.post, bodies))
            assert [o[1]["choices"][0]["text"] for o in out] == want, options
            batches = s.app.state.engine.batches
            assert (max(batches) > 1) == options["batching"], (options, batches)


def lab_text_for(course, prompt, seed):
    return sampling.sample(course.model, course.tokenizer, prompt, 12, 0.9, 40, 1.0, seed)["text"]


def stream_open(s, max_tokens=200):
    """A streamed request left open after its first chunk: (connection, response)."""
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    conn.request("POST", "/v1/completions", json.dumps({**GOOD, "max_tokens": max_tokens, "stream": True}),
                 {"Content-Type": "application/json"})
    r = conn.getresponse()
    r.readline()
    return conn, r


def test_over_the_limit_429_and_a_client_leaving_frees_its_slot(course):
    with Server(course, max_concurrent=1, max_queue=0) as s:
        conn, _ = stream_open(s)
        assert s.active() == 1
        status, data = s.post(GOOD)
        assert status == 429 and data["error"]["type"] == "rate_limit_error"
        conn.sock.close()  # the client goes away mid-stream
        conn.close()
        for _ in range(100):
            if s.active() == 0:
                break
            time.sleep(0.02)
        assert s.active() == 0
        assert s.post(GOOD)[0] == 200


def test_the_default_bind_is_loopback_and_an_encoder_is_refused(capsys):
    import argparse

    from lab.cli import serve as cli

    sub = argparse.ArgumentParser().add_subparsers()
    cli.register(sub)
    args = sub.choices["serve"].parse_args([])
    assert args.host == "127.0.0.1" and args.host in serve.LOOPBACK
    assert main(["serve", "--model", "course-roberta"]) == 2
    assert "is an encoder" in capsys.readouterr().err


def test_the_load_test_measures_and_refuses_what_it_should(server):
    r = loadtest.run(server.url, 2, 4, max_tokens=8, api_key="sekret")
    assert r["errors"] == 0 and r["tokens"] == 32 and r["ttft_p50"] > 0 and r["tokens_per_s"] > 0
    assert (r["requests"], r["concurrency"]) == (4, 2) and 0 < r["ttft_p50"] <= r["ttft_p95"] < r["wall_s"]
    assert r["tokens_per_s"] == pytest.approx(32 / r["wall_s"])  # all requests' tokens over the whole test
    # TTFT, gaps and tokens/s against known delays: tests/test_mistakes_serving.py's fake server
    with pytest.raises(loadtest.LoadTestError, match="not a loopback"):
        loadtest.check("http://203.0.113.7:8000", 1, 1)
    with pytest.raises(loadtest.LoadTestError, match="concurrency must be"):
        loadtest.check("http://127.0.0.1:8000", 65, 1)
    assert main(["loadtest", "--url", "ftp://x", "--requests", "1"]) == 2
