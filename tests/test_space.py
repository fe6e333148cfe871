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


def test_the_training_records_in_the_wrong_place_are_named(folder, tmp_path):
    """Issue 58: the records copied beside their folder instead of into it. The folder they belong in is still
    there (empty), but the Dockerfile's COPY docs/course-models-run/*.json finds nothing: the Hub's build would stop."""
    copy = _broken(folder, tmp_path)
    records = sorted((copy / space.RECORDS).glob("*.json"))
    assert records  # the fill and fossils pages read them
    for record in records:
        record.rename(copy / "docs" / record.name)
    assert (copy / space.RECORDS).is_dir()
    assert space.check(copy) == ["Dockerfile: COPY docs/course-models-run/*.json: nothing at "
                                 "docs/course-models-run/*.json in the folder"]


def test_every_copy_of_the_dockerfile_is_checked(folder, tmp_path):
    """Each source the Space's Dockerfile copies, read from the file (flags, continuations, JSON form, --from=
    left out), must be in the folder where the COPY names it."""
    assert space.copied((folder / "Dockerfile").read_text(encoding="utf-8")) == [
        "requirements.txt", "deploy/wheelhouse/", "lab/", "app.py", ".streamlit/", "app_pages/", "assets/",
        "lessons/", "docs/course-models-run/*.json", "models/", "ui/", "viz/"]
    written = ("COPY --from=base /opt/x /opt/x\nCOPY --chown=1:1 [\"a b.txt\", \"c/\", \"/d/\"]\n"
               "ADD e \\\n    f/ /g/\n# COPY h /i\nRUN echo COPY j /k\n")
    assert space.copied(written) == ["a b.txt", "c/", "e", "f/"]
    copy = _broken(folder, tmp_path)
    dockerfile = copy / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("COPY --chown=app:app viz/ viz/",
                                                         "COPY --chown=app:app viz/ viz/\nCOPY [\"extra.txt\", \"x\"]"))
    assert space.check(copy) == ["Dockerfile: COPY extra.txt: nothing at extra.txt in the folder"]
    (copy / "extra.txt").write_text("x")
    shutil.rmtree(copy / "deploy" / "wheelhouse")
    assert space.check(copy) == ["Dockerfile: COPY deploy/wheelhouse/: nothing at deploy/wheelhouse in the folder"]


def test_the_front_matter_is_what_the_hub_reads():
    meta = yaml.safe_load(space.readme().split("---\n")[1])
    assert meta == space.FRONT
    assert space.main([]) == 2


def test_the_space_downloads_the_course_s_real_models_and_its_readme_names_them(folder, tmp_path):
    """Issue 59: the Space's build bakes in GPT-2, DistilGPT-2, GPT-1 and RoBERTa base (its Dockerfile's default
    HUB_MODELS), the repository's image none; the README names each with its hub id and download size."""
    dockerfile = (folder / "Dockerfile").read_text(encoding="utf-8")
    assert 'ARG HUB_MODELS="gpt2 distilgpt2 openai-gpt roberta-base"' in dockerfile
    assert "ARG HUB_MODELS=\n" in (space.ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    readme = (folder / "README.md").read_text(encoding="utf-8")
    # the hub ids and sizes as the hub lists them (registry: the published weights plus the tokenizer files)
    for row in ("| `gpt2` | GPT-2 small (124M) | `openai-community/gpt2` | 551 MB |",
                "| `distilgpt2` | DistilGPT-2 (82M) | `distilbert/distilgpt2` | 356 MB |",
                "| `openai-gpt` | GPT-1 (117M) | `openai-community/openai-gpt` | 481 MB |",
                "| `roberta-base` | RoBERTa base (125M) | `FacebookAI/roberta-base` | 502 MB |"):
        assert row in readme, row
    copy = _broken(folder, tmp_path)
    (copy / "README.md").write_text(readme.replace("| `openai-gpt` |", "| GPT-1 |"), encoding="utf-8")
    assert space.check(copy) == ["README.md: does not name openai-gpt, which the Dockerfile's HUB_MODELS downloads"]
    (copy / "Dockerfile").write_text(dockerfile.replace("roberta-base\"", "course-roberta\""), encoding="utf-8")
    assert "Dockerfile: HUB_MODELS names course-roberta, not a hub model of the registry" in space.check(copy)


def test_make_space_can_name_other_hub_models_or_none(tmp_path, capsys):
    assert space.main([str(tmp_path / "one"), "--hub-models", "gpt2"]) == 0
    assert 'ARG HUB_MODELS="gpt2"\n' in (tmp_path / "one" / "Dockerfile").read_text(encoding="utf-8")
    assert "its build downloads gpt2" in capsys.readouterr().out
    assert space.main([str(tmp_path / "none"), "--hub-models", ""]) == 0
    assert space.baked((tmp_path / "none" / "Dockerfile").read_text(encoding="utf-8")) == []
    assert "course models only" in (tmp_path / "none" / "README.md").read_text(encoding="utf-8")
    assert space.main([str(tmp_path / "bad"), "--hub-models", "gpt5"]) == 2
    assert "not hub models of the registry: gpt5" in capsys.readouterr().err
