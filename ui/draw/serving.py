"""What the serving page draws (chapter 14): the commands, the measured charts and table, and what production
adds on top of this server. ui.runs.serving measures."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lab.serving import chat, loadtest
from ui import exports
from ui.i18n import lang, num, t
from ui.runs import serving as run
from viz import serving as viz


def commands(model: str) -> None:
    st.code(f"python -m lab serve --model {model} --port 8000\n"
            "python -m lab loadtest --url http://127.0.0.1:8000 --concurrency 8 --requests 32", language="bash")


def results(saved: dict) -> None:
    """The three charts and the table of the last measurement."""
    data = viz.frame(saved["rows"], run.modes())
    x = t("requests at once (concurrency)", "requisições ao mesmo tempo (concorrência)")
    charts = (("ttft_p50", t("Time to first token (median)", "Tempo até o primeiro token (mediana)"), "ms"),
              ("tbt_mean", t("Time between tokens (mean)", "Tempo entre tokens (média)"), "ms"),
              ("tokens_per_s", t("Throughput, all requests together", "Vazão, todas as requisições juntas"),
               t("tokens per second", "tokens por segundo")))
    for measure, title, unit in charts:  # full width each: four lines and their legend stay legible
        exports.chart(f"serving-{measure}", st, exports.later(viz.chart, data, measure, title, unit, x, lang()),
                      key=f"serve_{measure}")
    ms = lambda v: "—" if v is None else num(1000 * v, 1)  # noqa: E731
    rows = [{t("mode", "modo"): run.modes()[r["mode"]], t("concurrency", "concorrência"): r["concurrency"],
             t("TTFT p50 (ms)", "TTFT p50 (ms)"): ms(r["ttft_p50"]), t("TTFT p95 (ms)", "TTFT p95 (ms)"):
             ms(r["ttft_p95"]), t("between tokens (ms)", "entre tokens (ms)"): ms(r["tbt_mean"]),
             t("tokens/s", "tokens/s"): num(r["tokens_per_s"] or 0, 1), t("errors", "erros"): r["errors"]}
            for r in saved["rows"]]
    st.dataframe(frame := pd.DataFrame(rows), hide_index=True)
    exports.table("serving", st, frame)
    latency(saved["rows"])
    reps, secs = saved.get("repeats", 1), num(saved.get("seconds", 0), 0)
    st.caption(t(f"{saved['model']}, {saved['requests']} requests of up to {saved['max_tokens']} tokens (mixed "
                 f"lengths) at each concurrency, streamed, on this machine's loopback; every server warmed up, the "
                 f"modes interleaved, {reps} repeats: lines are the median repeat, bands the lowest to the highest. "
                 f"The run took {secs} s; the server shares the CPU with the client.",
                 f"{saved['model']}, {saved['requests']} requisições de até {saved['max_tokens']} tokens "
                 f"(comprimentos variados) em cada concorrência, em streaming, pelo loopback desta máquina; cada "
                 f"servidor aquecido, os modos intercalados, {reps} repetições: as linhas são a repetição mediana, as "
                 f"faixas vão da menor à maior. A rodada levou {secs} s; o servidor divide a CPU com o cliente."))
    wide = loadtest.too_wide(saved["rows"])
    if wide:
        st.warning(t(f"At concurrency {', '.join(map(str, wide))} the repeats overlap: the spread is too wide to "
                     "rank those modes. Run again with more requests or repeats before drawing a conclusion.",
                     f"Na concorrência {', '.join(map(str, wide))} as repetições se sobrepõem: a dispersão é "
                     "larga demais para ordenar esses modos. Rode de novo com mais requisições ou repetições antes "
                     "de concluir."))


# The four latency metrics as the serving benchmarks report them: (name, English, Portuguese)
METRICS = [
    ("TTFT", "time to first token: from sending the request to its first token (queueing and reading the prompt).",
     "tempo até o primeiro token: do envio da requisição ao seu primeiro token (fila e leitura do prompt)."),
    ("ITL", "inter-token latency: each gap between two consecutive tokens, all requests' gaps pooled.",
     "latência entre tokens: cada intervalo entre dois tokens seguidos, os de todas as requisições juntos."),
    ("TPOT", "time per output token: one figure per request, (last token − first token) / (tokens − 1).",
     "tempo por token de saída: um número por requisição, (último token − primeiro) / (tokens − 1)."),
    ("E2EL", "end-to-end latency: from sending the request to its last token.",
     "latência de ponta a ponta: do envio da requisição ao seu último token."),
]


def latency(rows: list[dict]) -> None:
    """p50 / p90 / p99 of the four metrics, output tokens/s and goodput, per mode and concurrency."""
    ms = lambda v: "—" if v is None else num(1000 * v, 1)  # noqa: E731
    table = [{t("mode", "modo"): run.modes()[r["mode"]], t("concurrency", "concorrência"): r["concurrency"],
              **{f"{m.upper()} p{q}": ms(r.get(f"{m}_p{q}_s")) for m in ("ttft", "itl", "tpot", "e2el")
                 for q in (50, 90, 99)},
              "goodput": "—" if r.get("goodput") is None else f"{num(100 * r['goodput'], 0)} %"} for r in rows]
    st.dataframe(pd.DataFrame(table), hide_index=True)
    st.markdown("\n".join(f"- **{name}**: {t(en, pt)}" for name, en, pt in METRICS))
    ttft, itl = num(loadtest.SLO["ttft"], 0), num(loadtest.SLO["itl"] * 1000, 0)  # the goodput's default SLOs
    st.caption(t(f"Times in ms. Goodput: the share of requests that met every SLO (TTFT ≤ {ttft} s and each gap ≤ "
                 f"{itl} ms; "
                 "`lab loadtest --goodput ttft:MS itl:MS` sets others). ITL pools every gap, so one stall shows in its "
                 "p99; TPOT averages each request first, so the same stall hides in it.",
                 f"Tempos em ms. Goodput: a parcela das requisições que cumpriu todos os SLOs (TTFT ≤ {ttft} s e cada "
                 f"intervalo ≤ {itl} ms; `lab loadtest --goodput ttft:MS itl:MS` define outros). O ITL junta todos os "
                 "intervalos, então uma pausa aparece no seu p99; o TPOT tira a média de cada requisição antes, e a "
                 "mesma pausa some nele."))


def schedulers() -> None:
    """The three schedulers in words, and the chat template a chat endpoint puts in front of a base model."""
    st.markdown(t(
        "- `off`: one request at a time; the others wait.\n"
        "- `static`: the requests waiting when a batch starts are decoded together; a newcomer waits for the whole "
        "batch to end, and a short request's slot idles until the longest one finishes.\n"
        "- `continuous` (Orca, vLLM): a newcomer joins the running batch at the next token and a finished request "
        "leaves at once; each row keeps its own key-value cache.",
        "- `off` (desligado): uma requisição por vez; as outras esperam.\n"
        "- `static` (estático): as requisições que esperam quando um lote começa são decodificadas juntas; quem "
        "chega depois espera o lote inteiro acabar, e a vaga de uma requisição curta fica ociosa até a mais longa "
        "terminar.\n"
        "- `continuous` (contínuo; Orca, vLLM): quem chega entra no lote em andamento no token seguinte e quem "
        "termina sai na hora; cada linha guarda o seu próprio cache KV."))
    st.code("python -m lab serve --model course-gpt2 --batching continuous", language="bash")
    st.caption(t("The chat endpoint (/v1/chat/completions) is this template plus a stop at the next \"User:\". GPT-2 "
                 "was never trained to chat: it continues the transcript as text, often writing both sides.",
                 "O endpoint de chat (/v1/chat/completions) é este modelo de texto mais uma parada no próximo "
                 "\"User:\". O GPT-2 nunca foi treinado para conversar: ele continua a transcrição como texto, muitas "
                 "vezes escrevendo os dois lados."))
    st.code(chat.render([{"role": "system", "content": "{system}"}, {"role": "user", "content": "{user}"},
                         {"role": "assistant", "content": "{assistant}"}, {"role": "user", "content": "{user}"}]),
            language="text")


# What production adds: (feature en, feature pt, this server en, this server pt)
PRODUCTION = [
    ("authentication", "autenticação", "yes: one API key (--api-key), 401 otherwise",
     "sim: uma chave de API (--api-key), 401 se não"),
    ("queue and 429", "fila e 429", "yes: --max-concurrent running, --max-queue waiting, then 429",
     "sim: --max-concurrent rodando, --max-queue esperando, depois 429"),
    ("streaming", "streaming", "yes: server-sent events, the OpenAI format", "sim: server-sent events, no formato da "
     "OpenAI"),
    ("batching", "lotes", "`--batching` `off`, `static` (the jobs waiting when a batch starts) or `continuous` "
     "(join at the next token, leave when done)", "`--batching` `off`, `static` (os pedidos que esperam quando o lote "
     "começa) ou `continuous` (entra no token seguinte, sai ao terminar)"),
    ("rate limits per client", "limites por cliente", "no", "não"),
    ("timeouts on the server", "tempo-limite no servidor", "no (the client's load test has them)",
     "não (o teste de carga do cliente tem)"),
    ("metrics", "métricas", "no: /health counts the running requests only", "não: /health só conta as requisições "
     "em andamento"),
    ("logging", "registro (logs)", "no: errors only", "não: só erros"),
    ("moderation", "moderação", "no", "não"),
    ("replicas", "réplicas", "no: one process, one model", "não: um processo, um modelo"),
]


def production() -> None:
    """Which of production's layers this server has, and who does them at scale."""
    st.dataframe(pd.DataFrame([{t("layer", "camada"): t(a, b), t("this server", "este servidor"): t(c, d)}
                               for a, b, c, d in PRODUCTION]), hide_index=True)
    st.caption(t("At scale, vLLM's OpenAI-compatible server does all of this with continuous batching (a request "
                 "joins the running batch at the next step, as --batching continuous does here) and a paged key-value "
                 "cache (blocks instead of one tensor per row); Hugging Face's Text "
                 "Generation Inference is now in maintenance mode. The same load test measures them unchanged: "
                 "point --url at their /v1.",
                 "Em escala, o servidor compatível com a OpenAI do vLLM faz tudo isso com lotes contínuos (uma "
                 "requisição entra no lote em andamento no passo seguinte, como --batching continuous faz aqui) e um "
                 "cache KV paginado (blocos em vez de um tensor por linha); o Text "
                 "Generation Inference da Hugging Face está agora em modo de manutenção. O mesmo teste de carga os "
                 "mede sem mudanças: aponte --url para o /v1 deles."))


def reproduce_argvs(model: str, concurrencies: list[int], requests: int, max_tokens: int) -> list[list[str]]:
    """Chapter 15: one `loadtest --json` per mode and concurrency, as the page measures them (mixed lengths); each
    server mode starts its own `lab serve` on a free loopback port (loadtest --serve) and stops it. Timings vary
    from run to run: the commands measure the same things, not the same numbers."""
    common = ["--requests", str(requests), "--max-tokens", str(max_tokens), "--mixed", "--json"]
    sources = [["--in-process", model] if flags is None else ["--serve", model, *flags] for _, flags in loadtest.MODES]
    return [["loadtest", *src, "--concurrency", str(c), *common] for c in sorted(concurrencies) for src in sources]
