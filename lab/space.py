"""A folder that is a complete Hugging Face Docker Space of the explorer, ready to push (issue 49).

    python -m lab.space build/space        # make space: writes the folder, then checks it
    python -m lab.space build/space --hub-models "gpt2"     # make space SPACE_MODELS=gpt2: other hub models

What a Docker Space needs (Hugging Face's documentation): a README.md whose YAML front matter says `sdk: docker`
and the port the app serves (`app_port`, 7860 by default), a Dockerfile at the root, and everything it copies.
The folder holds deploy/Dockerfile with PORT 7860, the app, the lessons, the course models (through Git LFS: the
Hub refuses plain files over 10 MB) and the training records the pages read. The CPU torch wheel is not pushed:
the Space's variable TORCH_INDEX_URL reaches the build as a build argument (docs/hosting.md, "A Space").
The hub models (HUB_MODELS: GPT-2, DistilGPT-2, GPT-1, RoBERTa base by default) are not pushed either: the Space's
build downloads them from the hub (its Dockerfile's default HUB_MODELS), and its README names them with their sizes.

`check(folder)` returns one line per problem: the front matter parses, names `sdk: docker`, and its `app_port` is
the port the Dockerfile serves; every course model is whole, and every source each COPY of the folder's Dockerfile
names is in the folder at the place the COPY names (read from the Dockerfile itself, so a file copied to the wrong
place fails here, not at the Hub's build). The image built from the
folder is run and opened in tests/test_container_space.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import yaml

from lab.container import model_problems
from lab.models.registry import REGISTRY, human_bytes

ROOT = Path(__file__).resolve().parents[1]
PORT = 7860  # a Docker Space's default app_port
FILES = ("app.py", "requirements.txt")
FOLDERS = (".streamlit", "app_pages", "assets", "lab", "lessons", "models", "ui", "viz")
RECORDS = "docs/course-models-run"  # the fill and fossils pages read the course models' training records
FRONT = {"title": "GPT-1 and GPT-2, taken apart", "emoji": "🔬", "colorFrom": "blue", "colorTo": "gray",
         "sdk": "docker", "app_port": PORT, "pinned": False,
         "short_description": "See what the course explains, page by page"}
LFS = ("*.safetensors", "*.npy", "*.bin", "*.whl")
# The hub models a Space's build bakes in: GPT-2 and GPT-1 as the course describes them, DistilGPT-2 beside GPT-2
# for scale, RoBERTa base for the encoder pages. Measured (docs/hosting.md, "GPT-2 in the hosted image"): see
# MEASURED; a Space's free tier has 16 GB and 50 GB of disk.
HUB_MODELS = ("gpt2", "distilgpt2", "openai-gpt", "roberta-base")
MEASURED = ("Measured on models of these shapes (docs/hosting.md, \"GPT-2 in the hosted image\"): a server that "
            "opened every page on each of the four peaked at 3.5 GB, under the free tier's 16 GB; the app keeps "
            "all four loaded (a memory budget of 2,600 MB); the image grows by about 1.8 GB.")
BODY = """
# GPT-1 and GPT-2, taken apart: the explorer

One page per chapter of the course: tokens, embeddings, attention, layer by layer, scale and perplexity, sampling,
encoders, the detector, code, serving. It runs on the course's own small models, shipped in this Space; nothing is
downloaded when a page runs. Every page shows the `python -m lab` command that prints its numbers on your machine.

Built from the project's `deploy/Dockerfile` (port 7860, uid 1000, offline models). Set the Space variable
`TORCH_INDEX_URL` to PyTorch's CPU wheel index (PyTorch's installation page: Linux, Pip, CPU) so the build
installs the CPU build of torch; Hugging Face passes a Space's variables to a Docker build as build arguments.
"""


def readme(hub_models=HUB_MODELS) -> str:
    return "---\n" + yaml.safe_dump(FRONT, sort_keys=False, allow_unicode=True) + "---\n" + BODY + carried(hub_models)


def carried(hub_models) -> str:
    """The README's section naming the hub models the Space's build downloads, with their sizes."""
    if not hub_models:
        return "\n## Models\n\nThis Space carries the course models only (its Dockerfile's HUB_MODELS is empty).\n"
    rows = "".join(f"| `{m}` | {REGISTRY[m].label} | `{REGISTRY[m].hub_id}` | "
                   f"{human_bytes(REGISTRY[m].download_bytes)} | {human_bytes(REGISTRY[m].memory_bytes)} |\n"
                   for m in hub_models)
    return ("\n## Models\n\nBesides the course models, the build downloads these from the Hugging Face hub into "
            "the image (its Dockerfile's HUB_MODELS; the Space's variable HUB_MODELS changes the list) and the app "
            "loads them offline:\n\n| name | model | hub id | download | memory, loaded (fp32, estimated) |\n"
            "|---|---|---|---|---|\n" + rows + (f"\n{MEASURED}\n" if MEASURED else ""))


def dockerfile(hub_models=HUB_MODELS) -> str:
    """deploy/Dockerfile with the Space's port and hub models as its defaults."""
    text = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    text = re.sub(r"^ARG PORT=\d+$", f"ARG PORT={PORT}", text, count=1, flags=re.M)
    listed = f'"{" ".join(hub_models)}"' if hub_models else ""
    return re.sub(r"^ARG HUB_MODELS=.*$", f"ARG HUB_MODELS={listed}", text, count=1, flags=re.M)


def baked(dockerfile_text: str) -> list[str]:
    """The hub models a Dockerfile's build downloads by default (its ARG HUB_MODELS)."""
    found = re.search(r"^ARG HUB_MODELS=(.*)$", dockerfile_text, flags=re.M)
    return found.group(1).strip().strip('"').split() if found else []


def _link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def write(dest: Path, hub_models=HUB_MODELS) -> Path:
    """The Space's folder at `dest` (replaced if there), its build downloading `hub_models`."""
    unknown = [m for m in hub_models if m not in REGISTRY or REGISTRY[m].hub_id is None]
    if unknown:
        raise ValueError(f"not hub models of the registry: {', '.join(unknown)}")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in FILES:
        shutil.copy2(ROOT / name, dest / name)
    for name in FOLDERS:
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (dest / RECORDS).mkdir(parents=True)
    for record in (ROOT / RECORDS).glob("*.json"):
        shutil.copy2(record, dest / RECORDS / record.name)
    wheels = dest / "deploy" / "wheelhouse"
    wheels.mkdir(parents=True)
    for wheel in (ROOT / "deploy" / "wheelhouse").iterdir():  # README, and a local wheel for a build here
        _link_or_copy(wheel, wheels / wheel.name)
    (dest / "Dockerfile").write_text(dockerfile(hub_models), encoding="utf-8")
    shutil.copy2(ROOT / "deploy" / "Dockerfile.dockerignore", dest / ".dockerignore")
    (dest / "README.md").write_text(readme(hub_models), encoding="utf-8")
    (dest / ".gitattributes").write_text("".join(f"{p} filter=lfs diff=lfs merge=lfs -text\n" for p in LFS))
    (dest / ".gitignore").write_text("deploy/wheelhouse/*.whl\n__pycache__/\n")
    return dest


def front_matter(text: str) -> dict:
    """The README's YAML front matter (ValueError when it has none or it does not parse to a mapping)."""
    match = re.match(r"---\n(.*?)\n---\n", text, flags=re.S)
    if not match:
        raise ValueError("README.md does not start with YAML front matter between --- lines")
    data = yaml.safe_load(match.group(1))
    if not isinstance(data, dict):
        raise ValueError("README.md's front matter is not a mapping")
    return data


def copied(dockerfile_text: str) -> list[str]:
    """The sources of every COPY and ADD of a Dockerfile from its build context, in order: continuation lines
    joined, flags (--chown=...) and each line's destination left out, the JSON form read; a COPY --from= another
    stage or image copies nothing from the folder and is left out."""
    text = re.sub(r"\\\n", " ", dockerfile_text)
    sources = []
    for line in text.splitlines():
        words = line.strip().split(None, 1)
        if len(words) < 2 or words[0].upper() not in ("COPY", "ADD"):
            continue
        rest = words[1].strip()
        while rest.startswith("--"):
            flag, _, rest = rest.partition(" ")
            if flag.startswith("--from="):
                rest = ""
            rest = rest.strip()
        sources += _arguments(rest)[:-1]
    return sources


def _arguments(rest: str) -> list[str]:
    """A COPY's arguments: the JSON form ["a", "b", "/dest/"], else words."""
    if rest.startswith("["):
        try:
            parts = json.loads(rest)
        except ValueError:
            parts = None
        if isinstance(parts, list) and all(isinstance(p, str) for p in parts):
            return parts
    return rest.split()


def copy_problems(folder: Path) -> list[str]:
    """One line per source a COPY of the folder's Dockerfile names that is not in the folder at that place (the
    Hub's build would stop there): a file, a folder, or a pattern that matches nothing."""
    problems = []
    for source in copied((folder / "Dockerfile").read_text(encoding="utf-8")):
        pattern = source.strip("/") or "."
        if pattern == "." or any(folder.glob(pattern)):
            continue
        problems.append(f"Dockerfile: COPY {source}: nothing at {pattern} in the folder")
    return problems


def check(folder: Path) -> list[str]:
    """One line per reason the folder is not a Docker Space serving the explorer."""
    try:
        meta = front_matter((folder / "README.md").read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError) as e:
        return [f"README.md: {e}"]
    problems = [] if meta.get("sdk") == "docker" else [f"README.md: sdk is {meta.get('sdk')!r}, not 'docker'"]
    served = re.search(r"^ARG PORT=(\d+)$", (folder / "Dockerfile").read_text(encoding="utf-8"), flags=re.M)
    if not served or int(served.group(1)) != meta.get("app_port", PORT):
        problems.append(f"README.md: app_port {meta.get('app_port', PORT)} is not the port the Dockerfile serves "
                        f"({served.group(1) if served else 'none'})")
    missing = [name for name in (*FILES, *FOLDERS, RECORDS) if not (folder / name).exists()]
    problems += [f"missing {name}" for name in missing]
    problems += [p for p in copy_problems(folder) if not any(p.endswith(f" nothing at {m} in the folder")
                                                             for m in missing)]  # named once, as missing
    return problems + model_problems(folder / "models") + hub_problems(folder)


def hub_problems(folder: Path) -> list[str]:
    """One line per hub model the folder's Dockerfile downloads that is not a hub model of the registry, or that
    the README does not name (a reader of the Space's page must see what it carries)."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    problems = []
    for name in baked((folder / "Dockerfile").read_text(encoding="utf-8")):
        if name not in REGISTRY or REGISTRY[name].hub_id is None:
            problems.append(f"Dockerfile: HUB_MODELS names {name}, not a hub model of the registry")
        elif f"`{name}`" not in text:
            problems.append(f"README.md: does not name {name}, which the Dockerfile's HUB_MODELS downloads")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    hub_models = HUB_MODELS
    if len(args) == 3 and args[1] == "--hub-models":
        args, hub_models = args[:1], tuple(args[2].split())
    if len(args) != 1:
        print("usage: python -m lab.space FOLDER [--hub-models \"gpt2 ...\"]", file=sys.stderr)
        return 2
    try:
        folder = write(Path(args[0]), hub_models)
    except ValueError as e:
        print(f"lab.space: {e}", file=sys.stderr)
        return 2
    problems = check(folder)
    for line in problems:
        print(f"lab.space: {line}", file=sys.stderr)
    if not problems:
        size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and f.suffix != ".whl")
        print(f"lab.space: {folder} is a Docker Space (sdk: docker, app_port {PORT}), {size / 1e6:.0f} MB to push; "
              f"its build downloads {', '.join(hub_models) or 'no hub models'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
