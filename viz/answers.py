"""The class's answers to a step's question (issue 52): each round's answers as shares of the class, side by side,
with the model's answer marked; for a next-token question the model's own top 5 beside them; for a number, the
class's spread around the true value.

Pure builders: rows from lab.questions.judge in, a DataFrame or an Altair chart out. No student id reaches here.
"""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from viz.format import localized, written
from viz.tokens import visible

MARKS = ("right", "wrong", "unmarked")
MARK_COLOURS = ("#15803d", "#b91c1c", "#2563eb")  # green/red carry words too (the legend), not colour alone
NAMES = {"right": "the model's answer", "wrong": "another answer", "unmarked": "an answer",
         "share": "share of the class",
         "answer": "answer", "round": "round", "count": "students", "p": "the model's probability",
         "value": "estimate", "truth": "true value"}
MOST_ANSWERS = 12  # bars per round; the rest are summed into "others"


def mark(row: dict) -> str:
    """How a judged answer is drawn: right (the model's top 1, the right option, the exact value), wrong, or unmarked
    (no option is right)."""
    right = row.get("right")
    if "rank" in row:
        right = row["rank"] == 1
    return "unmarked" if right is None else "right" if right else "wrong"


def rounds_frame(rounds: dict[int, list[dict]], others: str = "others") -> pd.DataFrame:
    """Long form (round, answer, count, share, mark, order) of each round's judged rows: the MOST_ANSWERS most
    common answers of a round, the rest summed as `others`."""
    rows = []
    for number, judged in sorted(rounds.items()):
        total = sum(r["count"] for r in judged) or 1
        kept, rest = judged[:MOST_ANSWERS], judged[MOST_ANSWERS:]
        for order, r in enumerate(kept):
            rows.append({"round": number, "answer": visible(str(r["answer"])), "count": r["count"],
                         "share": r["count"] / total, "mark": mark(r), "order": order})
        if rest:
            rows.append({"round": number, "answer": others, "count": sum(r["count"] for r in rest),
                         "share": sum(r["count"] for r in rest) / total, "mark": "unmarked", "order": len(kept)})
    return pd.DataFrame(rows, columns=["round", "answer", "count", "share", "mark", "order"])


def rounds_chart(frame: pd.DataFrame, names: dict | None = None, lang: str = "en") -> alt.Chart:
    """One bar chart per round, side by side: each answer's share of the class, the model's answer in its colour."""
    n = {**NAMES, **(names or {})}
    data = frame.assign(mark_name=frame["mark"].map(n), round_name=frame["round"].map(lambda r: f"{n['round']} {r}"))
    return localized(alt.Chart(data).mark_bar().encode(
        x=alt.X("share:Q", title=n["share"], axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("answer:N", title=None, sort=alt.EncodingSortField("order", order="ascending"),
                axis=alt.Axis(labelOverlap=False, labelLimit=140)),
        color=alt.Color("mark_name:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=0),
                        scale=alt.Scale(domain=[n[m] for m in MARKS], range=list(MARK_COLOURS))),
        column=alt.Column("round_name:N", title=None),
        tooltip=[alt.Tooltip("answer:N", title=n["answer"]), alt.Tooltip("count:Q", title=n["count"]),
                 alt.Tooltip("share:Q", title=n["share"], format=".0%")],
    ).properties(width=260, height=alt.Step(22)), lang)


def model_frame(top: list[dict]) -> pd.DataFrame:
    """The model's top tokens (each {"token", "p"}) as (rank, token, p)."""
    return pd.DataFrame([{"rank": i + 1, "token": f"{i + 1} {visible(r['token'])}", "p": r["p"]}
                         for i, r in enumerate(top)], columns=["rank", "token", "p"])


def model_chart(frame: pd.DataFrame, names: dict | None = None, lang: str = "en") -> alt.Chart:
    """The model's top tokens at the question's position, most likely first."""
    n = {**NAMES, **(names or {})}
    return localized(alt.Chart(frame).mark_bar(color=MARK_COLOURS[0]).encode(
        x=alt.X("p:Q", title=n["p"], scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("token:N", title=None, sort=alt.EncodingSortField("rank", order="ascending")),
        tooltip=[alt.Tooltip("token:N", title=n["answer"]), alt.Tooltip("p:Q", title=n["p"], format=".3f")],
    ).properties(height=alt.Step(22)), lang)


def estimates_frame(rounds: dict[int, dict[str, int]]) -> pd.DataFrame:
    """(round, value, count) of each round's numeric estimates (answers are numbers written as text)."""
    rows = [{"round": number, "value": float(answer), "count": count}
            for number, counts in sorted(rounds.items()) for answer, count in counts.items()]
    return pd.DataFrame(rows, columns=["round", "value", "count"])


def estimates_chart(frame: pd.DataFrame, truth: float, names: dict | None = None, lang: str = "en") -> alt.Chart:
    """The class's estimates as dots (bigger: more students), one row per round, and the true value as a rule."""
    n = {**NAMES, **(names or {})}
    data = frame.assign(round_name=frame["round"].map(lambda r: f"{n['round']} {r}"))
    dots = alt.Chart(data).mark_circle(color=MARK_COLOURS[2], opacity=0.8).encode(
        x=alt.X("value:Q", title=n["value"]), y=alt.Y("round_name:N", title=None),
        size=alt.Size("count:Q", title=n["count"], legend=alt.Legend(orient="bottom", format="d", tickMinStep=1)),
        tooltip=[alt.Tooltip("value:Q", title=n["value"]), alt.Tooltip("count:Q", title=n["count"])])
    rule = alt.Chart(pd.DataFrame({"truth": [truth], "label": [n["truth"]]})).mark_rule(
        color=MARK_COLOURS[0], strokeWidth=3).encode(x="truth:Q", tooltip=[alt.Tooltip("truth:Q", title=n["truth"])])
    return localized(alt.layer(dots, rule).properties(height=alt.Step(40)), lang)


def probability(p: float | None, lang: str = "en") -> str:
    """A probability as a reader reads it in a table: three significant digits, never an exponent (0.833, 0.0723,
    0.00002), below a millionth as "< 0.000001"; a decimal comma in Portuguese; None as —."""
    if p is None:
        return "—"
    if p < 1e-6:
        return "< " + written("0.000001", lang)
    digits = max(0, 2 - math.floor(math.log10(p)))
    text = f"{p:.{digits}f}"
    return written(text.rstrip("0").rstrip(".") if "." in text else text, lang)


def guesses_frame(guesses: list[dict], position: int, others: str = "others") -> pd.DataFrame:
    """The guessing game's guesses at one position as rounds_frame's rows: each drawn as lab counts it (right when
    lab.guess says so: in word units, when its tokens are the true word's, however many tokens that is)."""
    rows = [{"answer": g["answer"], "count": g["count"], "right": bool(g["right"])} for g in guesses]
    return rounds_frame({position: rows}, others)


def walk_frame(rows: list[dict], by: dict[int, dict], columns: tuple[str, ...], lang: str = "en") -> pd.DataFrame:
    """The guessing game's table: per revealed position (1..n, the rows' own), the true word (or token), the class's
    most common guess, the class's and the model's probability of the true word, the model's top 1 (`columns`: six
    names), the probabilities as text in `lang`'s style."""
    out = []
    for row in rows:
        c = by.get(row["position"])
        out.append([row["position"], visible(row["token"]),
                    " / ".join(visible(m["token"]) for m in c["most_common"]) if c else "—",
                    probability(c["p"] if c else None, lang), probability(row["p"], lang),
                    visible(row["top"][0]["token"]) if row["top"] else "—"])
    return pd.DataFrame(out, columns=list(columns))
