"""Virtual readers: clients of Streamlit's own websocket protocol, no browser.

A reader does what the app's frontend does when a page opens: it connects to `/_stcore/stream`, sends
one BackMsg `rerun_script` with the page's query string and page name (the URL path, "" for home) and
no widget state, then reads ForwardMsgs until `script_finished` ends that run. The seconds from
connecting until then are what a class waits on one link.

    with app_server() as url:                                  # `streamlit run app.py` as `make run` starts it
        one = read(url, "attention", "att_text=Oi")            # a Reading
        crowd = arrive(url, 30, 3.0, "attention", "att_text=Oi")  # 30 readers spread over 3 s

Only for tests and benchmarks. It lives outside lab/ because it speaks Streamlit's protocol with Streamlit's own
protobuf classes (lab never imports streamlit); lab/benchmarks/class_readers.py runs bench_pages/class_play.py,
which uses it, in a fresh interpreter.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT_DIR = Path(__file__).resolve().parents[1]  # the repository: app.py, lab
if str(ROOT_DIR) not in sys.path:
    sys.path.insert(0, str(ROOT_DIR))

from lab.testing.browser import ServerURL, free_port, served  # noqa: E402

FINISHED = "FINISHED_SUCCESSFULLY"


@dataclass
class Reading:
    """One reader's visit: how long until its run finished, and how it ended."""

    page: str
    seconds: float  # connect -> script_finished (or -> the failure)
    finished: bool  # the run ended with FINISHED_SUCCESSFULLY
    status: str  # the last script_finished status, or what went wrong ("timeout", "closed: ...")
    exceptions: int = 0  # st.exception elements the run drew (an error shown to the reader)
    deltas: int = 0  # elements and blocks the run sent
    session_events: tuple[str, ...] = ()  # e.g. "script_changed_on_disk" (the file watcher speaking)
    script_run_id: str = ""
    texts: tuple[str, ...] = ()  # the markdown bodies the run drew (st.write / st.markdown / st.caption)
    received: int = 0  # bytes of ForwardMsgs the reader received until its run finished (the page's payload)
    first_s: float | None = None  # connect -> the first markdown body holding read_async's `mark` (a first token)


def _rerun_message(page: str, query: str, url: str) -> bytes:
    """The BackMsg the frontend sends on opening `url`: rerun_script with the page's name and query string."""
    from ui.streamlit_internals import BackMsg

    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = query
    state.page_name = page
    state.page_script_hash = ""
    state.widget_states.SetInParent()
    state.context_info.timezone = "UTC"
    state.context_info.locale = "en-US"
    state.context_info.url = url
    return msg.SerializeToString()


def _record(fwd, seen: dict) -> str | None:
    """Note one ForwardMsg in `seen`; return the script_finished status name when it is one."""
    from ui.streamlit_internals import ForwardMsg

    kind = fwd.WhichOneof("type")
    if kind == "delta":
        seen["deltas"] += 1
        delta = fwd.delta
        element = delta.new_element if delta.WhichOneof("type") == "new_element" else None
        if element is not None and element.WhichOneof("type") == "exception":
            seen["exceptions"] += 1
        elif element is not None and element.WhichOneof("type") == "markdown":
            seen["texts"].append(element.markdown.body)
    elif kind == "new_session":
        seen["run_id"] = fwd.metadata.run.script_run_id
    elif kind == "session_event":
        seen["events"].append(fwd.session_event.WhichOneof("type") or "")
    elif kind == "page_not_found":
        return "page_not_found"
    elif kind == "script_finished":
        return ForwardMsg.ScriptFinishedStatus.Name(fwd.script_finished)
    return None


async def read_async(url: str, page: str = "", query: str = "", timeout: float = 120,
                     linger: float = 0.0, mark: str = "") -> Reading:
    """One reader opens `url`/`page`?`query` and waits for its run to finish (FINISHED_EARLY_FOR_RERUN runs
    are followed to the run that finishes). `linger` seconds are then spent listening (session events). `mark`:
    the time the first markdown body holding it arrived is the reading's first_s (the sampling page's first
    generated token: 'class="samp-tok')."""
    from websockets.asyncio.client import connect

    from ui.streamlit_internals import ForwardMsg

    ws_url = url.replace("http", "ws", 1).rstrip("/") + "/_stcore/stream"
    seen = {"deltas": 0, "exceptions": 0, "run_id": "", "events": [], "texts": [], "bytes": 0}
    status, t0, first = "timeout", time.perf_counter(), None
    page_url = f"{url.rstrip('/')}/{page}" + (f"?{query}" if query else "")
    try:
        async with asyncio.timeout(timeout), connect(ws_url, subprotocols=["streamlit"], max_size=None,
                                                     open_timeout=timeout, ping_interval=None) as ws:
            await ws.send(_rerun_message(page, query, page_url))
            async for data in ws:
                seen["bytes"] += len(data)
                fwd = ForwardMsg()
                fwd.ParseFromString(data)
                got = _record(fwd, seen)
                if mark and first is None and seen["texts"] and mark in seen["texts"][-1]:
                    first = time.perf_counter() - t0
                if got is not None:
                    status = got
                    if got != "FINISHED_EARLY_FOR_RERUN":
                        break
            seconds = time.perf_counter() - t0
            if linger:
                await _listen(ws, linger, seen)
    except TimeoutError:
        seconds = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001  (a dropped connection is a result here, not a crash)
        seconds, status = time.perf_counter() - t0, f"closed: {type(e).__name__}: {e}"[:200]
    return Reading(page, seconds, status == FINISHED, status, seen["exceptions"], seen["deltas"],
                   tuple(seen["events"]), seen["run_id"], tuple(seen["texts"]), seen["bytes"],
                   None if first is None else round(first, 4))


async def _listen(ws, seconds: float, seen: dict) -> None:
    """Keep reading for `seconds`, noting session events."""
    from ui.streamlit_internals import ForwardMsg

    try:
        async with asyncio.timeout(seconds):
            async for data in ws:
                fwd = ForwardMsg()
                fwd.ParseFromString(data)
                _record(fwd, seen)
    except TimeoutError:
        pass


def read(url: str, page: str = "", query: str = "", timeout: float = 120, linger: float = 0.0) -> Reading:
    """read_async, from synchronous code."""
    return asyncio.run(read_async(url, page, query, timeout, linger))


async def arrive_async(url: str, n: int, within: float, page: str = "", query: str | Callable[[int], str] = "",
                       timeout: float = 120, mark: str = "") -> list[Reading]:
    """`n` readers of one link arriving evenly over `within` seconds (all at once when 0); their readings. `query`
    may be a function of the reader's number (0..n-1): each reader then opens its own link (its own text)."""

    async def one(i: int) -> Reading:
        await asyncio.sleep(within * i / max(n - 1, 1) if n > 1 else 0)
        return await read_async(url, page, query(i) if callable(query) else query, timeout, mark=mark)

    return list(await asyncio.gather(*(one(i) for i in range(n))))


def arrive(url: str, n: int, within: float, page: str = "", query: str | Callable[[int], str] = "",
           timeout: float = 120, mark: str = "") -> list[Reading]:
    """arrive_async, from synchronous code."""
    return asyncio.run(arrive_async(url, n, within, page, query, timeout, mark))


def app_command(port: int, script: str = "app.py", *flags: str) -> list[str]:
    """`streamlit run` as `make run` starts it (the repository's .streamlit/config.toml, nothing overridden),
    on 127.0.0.1:`port`; `flags` are added after."""
    return [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
            "--server.address", "127.0.0.1", *flags]


@contextmanager
def app_server(script: str = "app.py", *flags: str, timeout: float = 120, env: dict | None = None,
               port: int | None = None) -> Iterator[ServerURL]:
    """The app served as `make run` serves it (cwd = the repository, so its config applies), on a free loopback
    port; yields its base URL (with .proc and .log()); stopped after."""
    port = port or free_port()
    with served(app_command(port, script, *flags), port, timeout, env) as url:
        yield url
