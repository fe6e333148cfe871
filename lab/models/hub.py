"""The Hugging Face hub, seen from the lab: is a model cached here, can it be downloaded now, download it.

Hub models live in the standard Hugging Face cache (HF_HUB_CACHE, HF_HOME). A model that is not
cached is downloaded, unless `HF_HUB_OFFLINE` is set or the hub does not answer within a few
seconds: then `ModelUnavailable` says so at once, with the command that prefetches it. A download
that would not fit on the disk is refused before it starts. A damaged cached copy (weights shorter
than their header says, a config that is not JSON) or a partial download left by a killed process
is removed when found, never loaded, so a prefetch fetches those files again.
Loading itself is lab.models; this module never imports torch or transformers, and imports
huggingface_hub only inside its functions.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import struct
import threading
import time
import zipfile
from pathlib import Path

import lab.models.registry as registry
from lab.errors import LabError

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
AUX_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
             "special_tokens_map.json", "added_tokens.json", "vocab.json", "merges.txt")
TOKENIZER_FILES = ("tokenizer.json", "vocab.json")  # a cached hub model needs one of them to load
PROBE_TIMEOUT_S = 3.0
SILENT_HUB_MEMO_S = 60.0  # a hub that did not answer is not asked again for this long
_silent_until: dict[str, float] = {}  # endpoint -> time.monotonic() until which it counts as silent
_silent_guard = threading.Lock()
_download_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


class ModelUnavailable(LabError):
    """A model that cannot be loaded here and now; str(e) is the English line (why, what to do) the CLI prints.

    `reason` and `details` let a page write the message in its reader's language:
    "offline", "hub_silent" (name, hub_id, size in bytes, command, damaged: what was wrong with a damaged
    cached copy that was removed, English, usually empty); "no_space" (name, need and free in bytes,
    cache: the folder, command); "no_weights" (hub_id);
    "missing_shipped" (name, path); "download_failed", "load_failed", "unreadable_weights"
    (name, error: one English line from the library); "unknown" (name, known); "not_a_model" (name).
    Raised here and by lab.models (which imports it from here: callers may take it from either).
    """


# ---------------------------------------------------------------- what the cache holds (no network)

def offline() -> bool:
    """True when HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set, read now, not at import."""
    from huggingface_hub import constants

    flags = (os.environ.get("HF_HUB_OFFLINE"), os.environ.get("TRANSFORMERS_OFFLINE"))
    return any((v or "").strip().upper() in constants.ENV_VARS_TRUE_VALUES for v in flags)


def hub_cache_dir() -> str:
    """The standard Hugging Face hub cache, resolved from the environment now (HF_HUB_CACHE, HF_HOME)."""
    from huggingface_hub import constants

    if os.environ.get("HF_HUB_CACHE"):
        return os.path.expanduser(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return os.path.join(os.path.expanduser(os.environ["HF_HOME"]), "hub")
    return constants.HF_HUB_CACHE


def _cached(hub_id: str, filename: str) -> str | None:
    """Path of `filename` of hub_id's main revision in the local cache, or None (no network)."""
    from huggingface_hub import try_to_load_from_cache

    path = try_to_load_from_cache(hub_id, filename, cache_dir=hub_cache_dir())
    return path if isinstance(path, str) else None


def is_available(name: str) -> bool:
    """Can `name` (registry name or directory) load without the network right now?"""
    info = registry.REGISTRY.get(name)
    if info is None:
        return (Path(name).expanduser() / "config.json").is_file()
    if info.hub_id is None:
        return (Path(info.path) / "config.json").is_file()
    return (_cached(info.hub_id, "config.json") is not None
            and any(_cached(info.hub_id, f) is not None for f in TOKENIZER_FILES)
            and any(_cached(info.hub_id, f) is not None for f in WEIGHT_FILES)
            and not _damage(info.hub_id))


# ---------------------------------------------------------------- a damaged or half-written cache

def _repo_dir(hub_id: str) -> Path:
    """hub_id's folder in the HF cache (models--org--name: blobs/, refs/, snapshots/)."""
    return Path(hub_cache_dir()) / ("models--" + hub_id.replace("/", "--"))


def file_damage(path: str | Path) -> str | None:
    """Why a cached model file cannot be whole (weights shorter than their header says, a config.json
    that is not JSON, a zip without its directory), or None. Reads headers only, never the weights."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            if path.name == "config.json":
                if not isinstance(json.loads(f.read()), dict):
                    return "config.json is not a JSON object"
            elif path.suffix == ".safetensors":
                (n,) = struct.unpack("<Q", f.read(8))
                if 8 + n > size:
                    return f"{path.name} is truncated ({registry.human_bytes(size)}, its header alone is longer)"
                header = json.loads(f.read(n))
                end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
                if 8 + n + end != size:
                    return (f"{path.name} is truncated ({registry.human_bytes(size)} of "
                            f"{registry.human_bytes(8 + n + end)})")
            elif path.suffix == ".bin" and f.read(4) == b"PK\x03\x04":  # torch's zip format (old pickles: unchecked)
                zipfile.ZipFile(f).close()  # its directory sits at the end: gone when the file is cut short
    except (OSError, ValueError, KeyError, TypeError, IndexError, struct.error, zipfile.BadZipFile) as e:
        return f"{path.name} cannot be read ({one_line(e)})"
    return None


def _damage(hub_id: str) -> list[tuple[str, str]]:
    """(path, why) for each damaged config or weights file of hub_id's cached main revision."""
    found = []
    for name in ("config.json", *WEIGHT_FILES):
        path = _cached(hub_id, name)
        why = path and file_damage(path)
        if why:
            found.append((path, why))
    return found


def _remove_cached(path: str, hub_id: str) -> None:
    """Unlink a snapshot file and the blob it links to (inside hub_id's blobs/ only)."""
    link = Path(path)
    blob = link.resolve()
    if link.is_symlink() and blob.parent == _repo_dir(hub_id) / "blobs":
        blob.unlink(missing_ok=True)
    link.unlink(missing_ok=True)


def _discard_partials(hub_id: str) -> None:
    """Delete hub_id's partial downloads (blobs/*.incomplete) whose download lock nobody holds: the
    leftovers of a process killed mid-download. A download under way holds its lock and is left alone."""
    from filelock import FileLock, Timeout

    repo = _repo_dir(hub_id)
    for part in (repo / "blobs").glob("*.incomplete"):
        lock = Path(hub_cache_dir()) / ".locks" / repo.name / (part.name.split(".")[0] + ".lock")
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(lock), timeout=0):
                part.unlink(missing_ok=True)
        except (Timeout, OSError):  # being written right now, or not ours to remove
            continue


def discard_damaged(name: str) -> list[str]:
    """Remove hub model `name`'s damaged files and orphaned partial downloads from the HF cache, so
    nothing half-written is ever taken for the model and a prefetch fetches those files again.
    Returns what was wrong with each removed file (English)."""
    info = registry.REGISTRY.get(name)
    if info is None or info.hub_id is None:
        return []
    whys = []
    for path, why in _damage(info.hub_id):
        try:
            _remove_cached(path, info.hub_id)
        except OSError:
            continue
        whys.append(why)
    _discard_partials(info.hub_id)
    return whys


def prefetch_hint(name: str) -> str:
    """The one command that puts `name` in the local cache."""
    return f"python -m lab prefetch {name}"


def forget_silent_hub() -> None:
    """Forget that the hub did not answer, so the next check probes again (tests use this)."""
    with _silent_guard:
        _silent_until.clear()


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Does the hub answer within `timeout` seconds? (A thread bounds DNS stalls too.)

    A hub that did not answer counts as unreachable for SILENT_HUB_MEMO_S without a new probe,
    so a page rerun on a machine without internet does not wait seconds each time.
    """
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    endpoint = (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
    with _silent_guard:
        if time.monotonic() < _silent_until.get(endpoint, 0.0):
            return False
    done, answered = threading.Event(), []

    def probe():
        try:
            get_session().head(f"{endpoint}/api/models", timeout=timeout)
            answered.append(True)
        except Exception:  # any failure to get an HTTP answer means unreachable
            pass
        finally:
            done.set()

    threading.Thread(target=probe, daemon=True).start()
    if done.wait(timeout + 0.5) and answered:
        return True
    with _silent_guard:
        _silent_until[endpoint] = time.monotonic() + SILENT_HUB_MEMO_S
    return False


def check_online(name: str) -> None:
    """ModelUnavailable at once when hub model `name` cannot be downloaded now (offline, hub silent).

    Called whenever `name` is not available: a damaged cached copy is removed first (discard_damaged)
    and the message says so (details["damaged"]).
    """
    info = _info(name)
    size = registry.human_bytes(info.download_bytes)
    damaged = discard_damaged(name)  # a damaged copy is no copy: removed, so a prefetch replaces it
    where = {"name": name, "hub_id": info.hub_id, "size": info.download_bytes, "command": prefetch_hint(name),
             "damaged": damaged}
    cache = "the local Hugging Face cache" + (f" (a damaged copy was removed: {'; '.join(damaged)})" if damaged else "")
    if offline():
        raise ModelUnavailable(
            f"{name} ({info.hub_id}, {size}) is not in {cache} and HF_HUB_OFFLINE "
            f"is set; prefetch it on a connected machine: {prefetch_hint(name)}", "offline", **where)
    if not hub_reachable():
        raise ModelUnavailable(
            f"{name} ({info.hub_id}, {size}) is not in {cache} and the hub cannot "
            f"be reached; prefetch it while online: {prefetch_hint(name)}", "hub_silent", **where)


def _hub_files(hub_id: str) -> dict[str, int]:
    """The files worth downloading, with their sizes: top-level config/tokenizer files and one weights format."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    files = {f.path: max(f.size or 0, f.lfs.size if f.lfs else 0)  # an LFS file's size, not its pointer's
             for f in HfApi().list_repo_tree(hub_id) if isinstance(f, RepoFile)}
    weights = next((f for f in WEIGHT_FILES if f in files), None)
    if weights is None:
        raise ModelUnavailable(f"{hub_id} has no {' or '.join(WEIGHT_FILES)} on the hub", "no_weights", hub_id=hub_id)
    return {f: files[f] for f in [*(f for f in AUX_FILES if f in files), weights]}


def _free_bytes(path: str) -> int:
    """Free bytes on the disk that holds `path` (or its nearest existing parent)."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


def _no_space(name: str, hub_id: str, need: int, during: bool) -> ModelUnavailable:
    """The error for a download that does not fit on the disk (refused before, or cut short by ENOSPC)."""
    cache, free = hub_cache_dir(), _free_bytes(hub_cache_dir())
    what = "ran out of disk space while downloading" if during else "not enough disk space to download"
    return ModelUnavailable(
        f"{what} {name} ({hub_id}): it needs {registry.human_bytes(need)} more and {cache} has "
        f"{registry.human_bytes(free)} free; nothing partial was kept. Free some space (or point HF_HOME at a "
        f"bigger disk) and run: {prefetch_hint(name)}", "no_space",
        name=name, need=need, free=free, cache=cache, command=prefetch_hint(name))


def _is_disk_full(e: BaseException) -> bool:
    """True when ENOSPC (or a disk quota) is anywhere in e's chain of causes."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            return True
        e = e.__cause__ or e.__context__
    return False


def download(name: str) -> str:
    """Put registry model `name` in the standard HF cache (no-op if there); its snapshot folder."""
    from huggingface_hub import snapshot_download

    info = _info(name)
    if info.hub_id is None:
        if is_available(name):
            return info.path
        raise ModelUnavailable(f"{name} ships with the repository ({info.path}) but is missing there",
                               "missing_shipped", name=name, path=info.path)
    with _locks_guard:
        lock = _download_locks.setdefault(name, threading.Lock())
    with lock:  # one download per model per process; the hub's file locks cover other processes
        if is_available(name):
            return os.path.dirname(_cached(info.hub_id, "config.json"))
        check_online(name)
        need = info.download_bytes
        try:
            files = _hub_files(info.hub_id)
            need = sum(size for f, size in files.items() if _cached(info.hub_id, f) is None)
            if need > _free_bytes(hub_cache_dir()):  # refuse before filling the disk
                raise _no_space(name, info.hub_id, need, during=False)
            return snapshot_download(info.hub_id, allow_patterns=list(files),
                                     cache_dir=hub_cache_dir(), etag_timeout=5)
        except ModelUnavailable:
            raise
        except Exception as e:  # network drop, repo gone, disk full: one line
            _discard_partials(info.hub_id)  # huggingface_hub removes its own; this catches any it left
            if _is_disk_full(e):
                raise _no_space(name, info.hub_id, need, during=True) from e
            raise ModelUnavailable(f"downloading {name} ({info.hub_id}) failed: {one_line(e)}", "download_failed",
                                   name=name, error=one_line(e)) from e


def downloaded_bytes(name: str) -> int:
    """Bytes of `name` in the HF cache so far, partial files included (for a progress bar)."""
    info = _info(name)
    if info.hub_id is None:
        return info.download_bytes
    blobs = _repo_dir(info.hub_id) / "blobs"
    try:
        return sum(e.stat().st_size for e in os.scandir(blobs) if e.is_file())
    except OSError:
        return 0


def _info(name: str) -> registry.ModelInfo:
    """registry.info(name), or ModelUnavailable "unknown"."""
    try:
        return registry.info(name)
    except KeyError as e:
        raise ModelUnavailable(e.args[0], "unknown", name=name, known=list(registry.REGISTRY)) from None


def one_line(e: BaseException) -> str:
    """An exception as one line, "Type: its first line" (what the CLI and the pages show)."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")
