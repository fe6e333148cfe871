"""Serving the model: from a function call to an HTTP server, measured (chapter 14)."""

import streamlit as st

from lab.models import hosting
from lab.serving import loadtest
from ui import presentation, widgets
from ui.draw import reproduce
from ui.draw import serving as draw
from ui.i18n import num, t
from ui.messages import text as worded
from ui.model_loader import current_decoder
from ui.runs import serving as run

st.title(t("Serving the model over HTTP", "Servir o modelo por HTTP"))
presentation.explain(t(
    "A model behind a function call answers one caller. Behind an HTTP server it answers many at once, and the "
    "server decides how: one request at a time, or several decoded together in one batch. This page starts "
    "`python -m lab serve` on this machine and measures it with `python -m lab loadtest`, the same client that "
    "measures any OpenAI-compatible server.",
    "Um modelo atrás de uma chamada de função atende quem chama. Atrás de um servidor HTTP atende muitos ao mesmo "
    "tempo, e o servidor decide como: uma requisição por vez, ou várias decodificadas juntas num lote. Esta página "
    "inicia `python -m lab serve` nesta máquina e o mede com `python -m lab loadtest`, o mesmo cliente que mede "
    "qualquer servidor compatível com a OpenAI."))

model = current_decoder("Serving", "Servir o modelo").name
with presentation.view("commands"):
    draw.commands(model)
if hosting.limits().hosted:
    st.info(t("This hosted demo starts no server: a server per reader would not fit its memory, and it must not "
              "open ports. Run the app on your own machine (`streamlit run app.py`), or the two commands above.",
              "Esta demonstração hospedada não inicia servidores: um servidor por leitor não caberia na memória, e "
              "ela não deve abrir portas. Rode o app na sua máquina (`streamlit run app.py`), ou os dois comandos "
              "acima."))
else:
    sources = {"start": t("start lab serve here", "iniciar o lab serve aqui"),
               "url": t("a URL I give", "uma URL que eu der")}  # words made now: a format_func runs later too
    source = widgets.Choice("serve_source", t("Server", "Servidor"), list(sources), "start", kind="radio",
                            horizontal=True, format_func=sources.get).draw()
    url = widgets.Text("serve_url", t("Server URL (loopback)", "URL do servidor (loopback)"), "http://127.0.0.1:8000",
                       kind="text_input").draw() if source == "url" else None
    left, mid, right, last = st.columns(4)
    concurrencies = widgets.MultiSelect("serve_conc", t("Concurrency", "Concorrência"), [1, 2, 4, 8, 16],
                                        [1, 8]).draw(left)
    requests = widgets.Slider("serve_requests", t("Requests at each concurrency", "Requisições em cada concorrência"),
                              2, 32, 8).draw(mid)
    max_tokens = widgets.Slider("serve_tokens", t("Tokens per request (at most)", "Tokens por requisição (no máximo)"),
                                4, 64, 16).draw(right)
    repeats = widgets.Slider("serve_repeats", t("Repeats", "Repetições"), 1, 5, 2).draw(last)
    if concurrencies:  # chapter 15: this view from the shell, one command per mode and concurrency
        reproduce.command(*draw.reproduce_argvs(model, concurrencies, requests, max_tokens))
    if url is not None and not url.strip():
        st.info(t("Type the server's URL.", "Digite a URL do servidor."))
    elif st.button(t("Run the load test", "Rodar o teste de carga"), type="primary", disabled=not concurrencies):
        try:
            loadtest.check(url or "http://127.0.0.1:1", max(concurrencies), requests)
            run.measure(model, url, sorted(concurrencies), requests, max_tokens, st.progress(0.0), repeats)
        except (loadtest.LoadTestError, RuntimeError, OSError) as e:
            st.error(worded(e) if isinstance(e, loadtest.LoadTestError) else str(e))
    if run.RESULTS in st.session_state:
        draw.results(st.session_state[run.RESULTS])
    else:
        secs = num(loadtest.estimate_s(concurrencies or [1], requests, max_tokens, repeats), 0)
        st.caption(t(f"Nothing measured yet: with these settings it takes about {secs} s on the course model.",
                     f"Nada medido ainda: com estes ajustes leva cerca de {secs} s no modelo do curso."))

st.subheader(t("Three schedulers, and a chat endpoint on a base model", "Três escalonadores, e um endpoint de chat "
               "num modelo base"))
draw.schedulers()

st.subheader(t("What production adds", "O que a produção acrescenta"))
draw.production()
