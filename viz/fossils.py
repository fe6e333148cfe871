"""The fossils page's charts (chapter 00): a timeline of parameters, parameters against context, and each
model's parameters split into its parts. Pure builders: rows of `lab.fossils.table` in, alt.Chart out, every
word passed in."""

from __future__ import annotations

import altair as alt
import pandas as pd

from viz.format import localized

PARTS = ("embeddings", "attention", "mlp", "norms", "head")


def frame(rows: list[dict]) -> pd.DataFrame:
    """One line per model: name, date (first of the month), params, context, layers, width, kind."""
    return pd.DataFrame([{"model": r["name"], "date": pd.Timestamp(f"{r['date']}-01") if r["date"] else pd.NaT,
                          "params": r["params"]["total"], "context": r["context"], "layers": r["layers"],
                          "width": r["width"], "kind": r["kind"]} for r in rows],
                        columns=["model", "date", "params", "context", "layers", "width", "kind"])


def timeline(df: pd.DataFrame, words: dict, lang: str) -> alt.Chart:
    """Parameters (log scale) against release month, one labelled point per model, shaped by kind."""
    base = alt.Chart(df.dropna(subset=["date"])).encode(
        x=alt.X("date:T", title=words["date"], axis=alt.Axis(format="%Y-%m")),
        y=alt.Y("params:Q", title=words["params"], scale=alt.Scale(type="log"), axis=alt.Axis(format="~s")),
        tooltip=[alt.Tooltip("model:N", title=words["model"]), alt.Tooltip("params:Q", format=",", title=words[
            "params"]), alt.Tooltip("date:T", format="%Y-%m", title=words["date"])])
    points = base.mark_point(size=90, filled=True).encode(
        shape=alt.Shape("kind:N", title=None, legend=alt.Legend(orient="top", labelLimit=0)),
        color=alt.Color("kind:N", title=None, legend=None))
    labels = base.mark_text(align="left", dx=7, dy=-6, fontSize=11).encode(text="model:N")
    return localized(alt.layer(points, labels, title=words["title"]).properties(height=320), lang)


def by_context(df: pd.DataFrame, words: dict, lang: str) -> alt.Chart:
    """Parameters (log) against context length (log), one labelled point per model."""
    base = alt.Chart(df).encode(
        x=alt.X("context:Q", title=words["context"], scale=alt.Scale(type="log"), axis=alt.Axis(format=",")),
        y=alt.Y("params:Q", title=words["params"], scale=alt.Scale(type="log"), axis=alt.Axis(format="~s")),
        tooltip=[alt.Tooltip("model:N", title=words["model"]), alt.Tooltip("params:Q", format=",", title=words[
            "params"]), alt.Tooltip("context:Q", format=",", title=words["context"])])
    points = base.mark_circle(size=90).encode(color=alt.Color("kind:N", title=None, legend=alt.Legend(
        orient="top", labelLimit=0)))
    labels = base.mark_text(align="left", dx=7, dy=-6, fontSize=11).encode(text="model:N")
    return localized(alt.layer(points, labels, title=words["title"]).properties(height=320), lang)


def split(rows: list[dict], part_words: dict, words: dict, lang: str) -> alt.Chart:
    """Each model's parameters as shares of its five parts (stacked to 100 %)."""
    df = pd.DataFrame([{"model": r["name"], "part": part_words[p], "params": r["params"][p], "order": i}
                       for r in rows for i, p in enumerate(PARTS)])
    return localized(alt.Chart(df, title=words["title"]).mark_bar().encode(
        y=alt.Y("model:N", title=None, sort=[r["name"] for r in rows]),
        x=alt.X("params:Q", stack="normalize", title=words["share"], axis=alt.Axis(format="%")),
        color=alt.Color("part:N", title=None, sort=[part_words[p] for p in PARTS], legend=alt.Legend(
            orient="top", labelLimit=0)),
        order="order:Q",
        tooltip=[alt.Tooltip("model:N", title=words["model"]), alt.Tooltip("part:N", title=words["part"]),
                 alt.Tooltip("params:Q", format=",", title=words["params"])]).properties(height=24 * len(rows) + 40),
                     lang)
