"""Views for the sampling page (chapter 07): one step's candidates stage by stage, the cumulative
curve that top-p cuts, and generated text coloured by the probability each token had when drawn.

Pure builders: records from lab.sampling in, an Altair chart or an HTML-escaped string out.
"""

from __future__ import annotations

import html
import math

import altair as alt
import pandas as pd

from viz.format import localized, written
from viz.tokens import visible

STAGES = ("raw", "temperature", "top_k", "top_p")  # lab.sampling.record's p_raw, p_temp, p_topk, p_filtered
COLUMNS = {"raw": "p_raw", "temperature": "p_temp", "top_k": "p_topk", "top_p": "p_filtered"}
MARKS = ("sampled", "argmax", "kept", "removed")
MARK_COLOURS = ("#ea580c", "#db2777", "#2563eb", "#cbd5e1")  # argmax pink: violet and blue merge under deuteranopia
NAMES = {"raw": "raw (T = 1)", "temperature": "after temperature", "top_k": "after top-k",
         "top_p": "after top-p (drawn from)", "sampled": "sampled", "argmax": "argmax", "kept": "kept",
         "removed": "removed", "p": "probability", "token": "token", "stage": "stage",
         "cumulative": "cumulative probability", "top_p_line": "top-p"}


def label(rank: int, text: str) -> str:
    """A candidate's axis label: its rank (1 = most likely) and its visible text."""
    return f"{rank + 1} {visible(text)}"


def stages_frame(step: dict, texts: list[str], chosen: int | None) -> pd.DataFrame:
    """Long form (rank, token, stage, p, mark) for one step's candidates; texts: each candidate's text.

    mark: "sampled" for the drawn token, "argmax" for the raw favourite (when it was not drawn),
    "removed" where the stage has filtered the token out, else "kept".
    """
    c = step["candidates"]
    rows = []
    for rank, (tid, text) in enumerate(zip(c["id"], texts, strict=True)):
        for stage in STAGES:
            p = c[COLUMNS[stage]][rank]
            mark = ("sampled" if tid == chosen else "argmax" if rank == 0 else "removed" if p == 0 else "kept")
            rows.append({"rank": rank, "token": label(rank, text), "stage": stage, "p": p, "mark": mark})
    return pd.DataFrame(rows)


def stages_chart(frame: pd.DataFrame, names: dict | None = None, lang: str = "en") -> alt.Chart:
    """One bar chart per stage, candidates top to bottom by raw rank; the drawn token and argmax marked."""
    n = {**NAMES, **(names or {})}
    data = frame.assign(stage_name=frame["stage"].map(n), mark_name=frame["mark"].map(n))
    order = [n[s] for s in STAGES]
    return localized(alt.Chart(data).mark_bar().encode(
        x=alt.X("p:Q", title=n["p"], scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("token:N", title=None, sort=alt.EncodingSortField("rank", order="ascending"),
                axis=alt.Axis(labelOverlap=False, labelLimit=110)),
        color=alt.Color("mark_name:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=0),
                        scale=alt.Scale(domain=[n[m] for m in MARKS], range=list(MARK_COLOURS))),
        tooltip=[alt.Tooltip("token:N", title=n["token"]), alt.Tooltip("stage_name:N", title=n["stage"]),
                 alt.Tooltip("p:Q", title=n["p"], format=".4f")],
    ).properties(width=140, height=alt.Step(16)).facet(
        column=alt.Column("stage_name:N", title=None, sort=order)), lang)


def cumulative_frame(step: dict, texts: list[str]) -> pd.DataFrame:
    """(rank, token, cumulative, kept): the running sum of the after-top-k probabilities, best first,
    and whether top-p kept each candidate."""
    c = step["candidates"]
    total, rows = 0.0, []
    for rank, (text, p, f) in enumerate(zip(texts, c["p_topk"], c["p_filtered"], strict=True)):
        total += p
        rows.append({"rank": rank, "token": label(rank, text), "cumulative": min(total, 1.0), "kept": f > 0})
    return pd.DataFrame(rows)


def cumulative_chart(frame: pd.DataFrame, top_p: float, names: dict | None = None, lang: str = "en") -> alt.LayerChart:
    """The cumulative curve top-p cuts: points kept (blue) or removed (grey), a rule at top_p."""
    n = {**NAMES, **(names or {})}
    data = frame.assign(mark_name=frame["kept"].map({True: n["kept"], False: n["removed"]}))
    x = alt.X("token:N", title=None, sort=alt.EncodingSortField("rank", order="ascending"),
              axis=alt.Axis(labelAngle=-45, labelOverlap=False, labelLimit=90))
    base = alt.Chart(data).encode(x=x, y=alt.Y("cumulative:Q", title=n["cumulative"], scale=alt.Scale(domain=[0, 1])))
    line = base.mark_line(color="#94a3b8")
    points = base.mark_circle(size=60).encode(
        color=alt.Color("mark_name:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=0),
                        scale=alt.Scale(domain=[n["kept"], n["removed"]], range=["#2563eb", "#cbd5e1"])),
        tooltip=[alt.Tooltip("token:N", title=n["token"]), alt.Tooltip("cumulative:Q", format=".4f")])
    rule = alt.Chart(pd.DataFrame({"y": [top_p]})).mark_rule(color="#ea580c", strokeDash=[4, 3]).encode(
        y="y:Q", tooltip=[alt.Tooltip("y:Q", title=n["top_p_line"])])
    return localized(alt.layer(line, points, rule).properties(height=220), lang)


def colour(p: float) -> str:
    """Background for a token drawn with probability p: pale for unlikely, deep blue for certain."""
    return f"rgba(37, 99, 235, {0.08 + 0.62 * max(0.0, min(1.0, p)):.3f})"


def one_line_html(text: str) -> str:
    """text escaped for HTML that st.markdown shows as typed: newlines as &#10; (a blank line would end the HTML
    block, and the Markdown after it, ** $ :red[...], would be rendered), colons as &#58; (Streamlit rewrites
    ":material/" in the source before parsing it). CR and CRLF show as a newline, as an HTML parser makes them."""
    return (html.escape(text).replace("\r\n", "\n").replace("\r", "\n").replace("\n", "&#10;")
            .replace(":", "&#58;"))


def coloured_tokens(tokens: list[dict], prompt: str = "", cursor: bool = False, lang: str = "en",
                    runs: list[dict] | None = None, joined: str = "{n} tokens make this text") -> str:
    """The prompt (plain grey) then the generated text on a background by probability; escaped HTML on one line
    (st.markdown shows it: see one_line_html).

    tokens: dicts with token, p. runs: lab.text.readable's runs over the tokens' ids, so that tokens which
    together make one character read as that character: one chip for the pieces (class samp-joined, a dotted
    underline, data-tokens = how many, `joined` with {n} in its title), coloured by the product of their
    probabilities (the chance of drawing them all). Without runs, one chip per token, as the token's own text.
    """
    runs = runs or [{"text": t["token"], "start": i, "stop": i + 1, "joined": False} for i, t in enumerate(tokens)]
    spans = [f'<span style="color:#64748b;white-space:pre-wrap">{one_line_html(prompt)}</span>'] if prompt else []
    for run in runs:
        pieces = tokens[run["start"]:run["stop"]]
        p = math.prod(t["p"] for t in pieces)
        where = f"{run['start'] + 1}" if len(pieces) == 1 else f"{run['start'] + 1}–{run['stop']}"
        tip = f"{where} · p = " + " × ".join(written(f"{t['p']:.4f}", lang) for t in pieces)
        cls, extra = "samp-tok", ""
        if len(pieces) > 1:
            cls, extra = "samp-tok samp-joined", "text-decoration:underline dotted;"
            tip += " · " + joined.format(n=len(pieces))
        spans.append(f'<span class="{cls}" data-tokens="{len(pieces)}" title="{html.escape(tip, quote=True)}" '
                     f'style="background:{colour(p)};{extra}white-space:pre-wrap;border-radius:3px">'
                     f'{one_line_html(run["text"])}</span>')
    if cursor:
        spans.append('<span style="color:#64748b">▍</span>')  # 4.8:1 on the page, as the prompt's grey
    return f'<div class="samp-text" style="line-height:1.9;font-size:1.05em">{"".join(spans)}</div>'
