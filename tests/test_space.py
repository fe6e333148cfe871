"""The Hugging Face Space's folder (lab/space.py), checked without a container: its front matter and contents."""

from __future__ import annotations

import shutil

import pytest
import yaml

from lab import space


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return space.write(tmp_path_factory.mktemp("space") / "space")


def test_the_folder_is_a_docker_space_serving_7860(folder):
    assert space.check(folder) == []
    meta = space.front_matter((folder / "README.md").read_text(encoding="utf-8"))
    assert meta["sdk"] == "docker" and meta["app_port"] == 7860
    assert len(meta["short_description"]) <= 60  # the Hub's limit
    assert "ARG PORT=7860" in (folder / "Dockerfile").read_text() and "ARG PORT=8501" not in (folder / "Dockerfile"
                                                                                               ).read_text()
    assert "*.safetensors filter=lfs" in (folder / ".gitattributes").read_text()
    assert (folder / "models" / "course-gpt2" / "model.safetensors").is_file()
    assert (folder / ".dockerignore").read_text() == (space.ROOT / "deploy" / "Dockerfile.dockerignore").read_text()


def _broken(folder, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    return copy


def test_a_wrong_sdk_or_port_or_no_front_matter_is_named(folder, tmp_path):
    copy = _broken(folder, tmp_path)
    readme = copy / "README.md"
    readme.write_text(readme.read_text().replace("sdk: docker", "sdk: streamlit"))
    assert space.check(copy) == ["README.md: sdk is 'streamlit', not 'docker'"]
    readme.write_text(space.readme().replace("app_port: 7860", "app_port: 8501"))
    assert space.check(copy) == ["README.md: app_port 8501 is not the port the Dockerfile serves (7860)"]
    readme.write_text("# no front matter\n")
    assert space.check(copy)[0].startswith("README.md: README.md does not start with YAML front matter")
    readme.write_text("---\n- a list\n---\n")
    assert space.check(copy) == ["README.md: README.md's front matter is not a mapping"]


def test_a_missing_model_or_folder_is_named(folder, tmp_path):
    copy = _broken(folder, tmp_path)
    shutil.rmtree(copy / "models" / "course-gpt2-1x64")
    shutil.rmtree(copy / "lessons")
    problems = space.check(copy)
    assert "missing lessons" in problems
    assert any("course-gpt2-1x64: missing config.json" in p for p in problems) and len(problems) == 2


def test_the_front_matter_is_what_the_hub_reads():
    meta = yaml.safe_load(space.readme().split("---\n")[1])
    assert meta == space.FRONT
    assert space.main([]) == 2
