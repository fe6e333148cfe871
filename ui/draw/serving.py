"""What the serving page draws (chapter 14): the commands, the measured charts and table, and what production
adds on top of this server. ui.runs.serving measures."""

from __future__ import annotations

import pandas as pd
import streamlit as st

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
        exports.chart(f"serving-{measure}", st, viz.chart(data, measure, title, unit, x, lang()),
                      key=f"serve_{measure}")
    ms = lambda v: "—" if v is None else num(1000 * v, 1)  # noqa: E731
    rows = [{t("mode", "modo"): run.modes()[r["mode"]], t("concurrency", "concorrência"): r["concurrency"],
             t("TTFT p50 (ms)", "TTFT p50 (ms)"): ms(r["ttft_p50"]), t("TTFT p95 (ms)", "TTFT p95 (ms)"):
             ms(r["ttft_p95"]), t("between tokens (ms)", "entre tokens (ms)"): ms(r["tbt_mean"]),
             t("tokens/s", "tokens/s"): num(r["tokens_per_s"] or 0, 1), t("errors", "erros"): r["errors"]}
            for r in saved["rows"]]
    st.dataframe(frame := pd.DataFrame(rows), hide_index=True)
    exports.table("serving", st, frame)
    st.caption(t(f"{saved['model']}, {saved['requests']} requests of {saved['max_tokens']} tokens at each "
                 "concurrency, streamed, on this machine's loopback; the server shares the CPU with the client.",
                 f"{saved['model']}, {saved['requests']} requisições de {saved['max_tokens']} tokens em cada "
                 "concorrência, em streaming, pelo loopback desta máquina; o servidor divide a CPU com o cliente."))


# What production adds: (feature en, feature pt, this server en, this server pt)
PRODUCTION = [
    ("authentication", "autenticação", "yes: one API key (--api-key), 401 otherwise",
     "sim: uma chave de API (--api-key), 401 se não"),
    ("queue and 429", "fila e 429", "yes: --max-concurrent running, --max-queue waiting, then 429",
     "sim: --max-concurrent rodando, --max-queue esperando, depois 429"),
    ("streaming", "streaming", "yes: server-sent events, the OpenAI format", "sim: server-sent events, no formato da "
     "OpenAI"),
    ("batching", "lotes", "static batches: the jobs waiting when a batch starts; others wait for the next",
     "lotes estáticos: os pedidos que esperam quando o lote começa; os outros esperam o próximo"),
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
                 "joins the running batch at the next step) and a paged key-value cache; Hugging Face's Text "
                 "Generation Inference is now in maintenance mode. The same load test measures them unchanged: "
                 "point --url at their /v1.",
                 "Em escala, o servidor compatível com a OpenAI do vLLM faz tudo isso com lotes contínuos (uma "
                 "requisição entra no lote em andamento no passo seguinte) e um cache KV paginado; o Text "
                 "Generation Inference da Hugging Face está agora em modo de manutenção. O mesmo teste de carga os "
                 "mede sem mudanças: aponte --url para o /v1 deles."))
