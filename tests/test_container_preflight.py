"""The container's own checks (lab/container.py), without a container: what a deployer's mistake prints."""

from __future__ import annotations

import shutil

import pytest

from lab import container
from lab.models.registry import MODELS_DIR


@pytest.mark.parametrize("value", [None, "", "  ", "http", "8501x", "0", "65536", "-1", "80.5"])
def test_a_port_that_is_not_a_port_is_refused_in_one_line(value):
    problem = container.port_problem(value)
    assert problem and "\n" not in problem and "PORT" in problem


@pytest.mark.parametrize("value", ["1", "7860", "8501", "65535", " 8501 "])
def test_a_port_number_is_served_on(value):
    assert container.port_problem(value) is None


def test_the_memory_limit_is_read_from_cgroup_v2_or_v1(tmp_path):
    v2, v1 = tmp_path / "memory.max", tmp_path / "limit_in_bytes"
    v2.write_text("max\n")
    assert container.memory_limit((str(v2),)) is None
    v2.write_text("536870912\n")
    assert container.memory_limit((str(v2), str(v1))) == 512 * container.MIB
    v1.write_text("9223372036854771712\n")  # cgroup v1's "no limit"
    assert container.memory_limit((str(tmp_path / "absent"), str(v1))) is None
    assert container.memory_limit((str(tmp_path / "absent"),)) is None


def test_too_little_memory_names_both_figures():
    need = container.MIN_MEMORY_MIB
    assert container.memory_problem(None) is None
    assert container.memory_problem(need * container.MIB) is None
    problem = container.memory_problem((need - 1) * container.MIB)
    assert f"{need - 1} MiB" in problem and f"at least {need} MiB" in problem


def test_every_course_model_is_checked_and_a_missing_one_is_named(tmp_path):
    assert container.model_problems() == []
    assert set(container.course_models()) == {p.name for p in MODELS_DIR.iterdir() if (p / "config.json").is_file()}
    shutil.copytree(MODELS_DIR, tmp_path / "models")
    shutil.rmtree(tmp_path / "models" / "course-roberta")
    (tmp_path / "models" / "course-gpt2" / "config.json").write_text("{not json")
    problems = container.model_problems(tmp_path / "models")
    assert len(problems) == 2
    assert any("course-roberta: missing config.json, model.safetensors, tokenizer.json" in p for p in problems)
    assert any("course-gpt2/config.json: not JSON" in p for p in problems)


def test_serve_refuses_before_it_starts_anything(monkeypatch, capsys):
    monkeypatch.setenv("PORT", "nope")
    monkeypatch.setattr(container.os, "execvp", lambda *a: pytest.fail("started a server"))
    assert container.main(["serve"]) == 2
    assert capsys.readouterr().err.startswith("lab.container: PORT='nope'")
    monkeypatch.setenv("PORT", "8501")
    monkeypatch.setattr(container, "memory_limit", lambda: 256 * container.MIB)
    assert container.main(["serve"]) == 3
    started = []
    monkeypatch.setattr(container, "memory_limit", lambda: None)
    monkeypatch.setattr(container.os, "execvp", lambda prog, cmd: started.append(cmd))
    container.main(["serve"])
    assert started == [["streamlit", "run", "app.py", "--server.port", "8501", "--server.address", "0.0.0.0"]]
