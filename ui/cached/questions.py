"""The model's side of a lesson step's answerable question (lab.questions.model_side), computed once per question,
model and set of answers: the lesson bar asks for it on every run of a step that has one, and every student of a
room asks for the same one. The model comes from ui.model_loader by name, never hashed, and is never changed."""

from __future__ import annotations

import json

import streamlit as st

from lab import questions
from ui.model_loader import get_model


@st.cache_data(max_entries=256, show_spinner=False)
def side(question_json: str, model_name: str, answers: tuple[str, ...] = ()) -> dict:
    """model_side of the question (its JSON text: a cache key), with `model_name` where its kind needs a model, and
    the next-token `answers` scored (sorted, cleaned: one entry per set of answers)."""
    question = json.loads(question_json)
    model = get_model(model_name) if questions.needs_model(question) else None
    return questions.model_side(question, model, answers)


@st.cache_data(max_entries=64, show_spinner=False)
def game(question_json: str, model_name: str) -> dict:
    """The guessing game's model side (lab.questions.game): its positions, the text before each, the model's rows."""
    return questions.game(json.loads(question_json), get_model(model_name))


@st.cache_data(max_entries=256, show_spinner=False)
def game_play(question_json: str, model_name: str, answers_json: str) -> dict:
    """The class's side of the walk (lab.questions.game_play) for the answers {j: {answer: count}} (JSON text)."""
    answers = {int(j): counts for j, counts in json.loads(answers_json).items()}
    return questions.game_play(json.loads(question_json), get_model(model_name), answers,
                               game(question_json, model_name))  # the model's candidate words, computed once
