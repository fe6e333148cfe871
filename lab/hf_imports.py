"""One thread at a time through transformers' imports and loads.

transformers 5 exports its names lazily: `from transformers import GPT2Config` imports the module behind the name on
first use, and its modules import each other in circles. When two threads import such a circle at once, Python lets
one of them go on with a partly initialised module (importlib accepts a "concurrent circular import" rather than
deadlock), and that thread fails with "ImportError: cannot import name 'GPT2Config' from 'transformers'". The hosted
container met it on the fossils page of a fresh server while the warm-up thread loaded the course models; twelve
threads importing two names each in a fresh interpreter fail in about half the tries (tests/test_hf_imports.py).

So every place in lab that imports from transformers, or loads a model or tokenizer through it (which imports the
model's modules), does it under LOCK: `names(...)` for names, `with LOCK:` around a load. LOCK is held only for the
import or the load (the files already on disk: a download happens before it), never while waiting on anything else.
"""

from __future__ import annotations

import threading

LOCK = threading.RLock()  # re-entrant: a load under it may ask for names


def names(*wanted: str) -> tuple:
    """transformers' top-level names `wanted`, in order, imported under LOCK."""
    with LOCK:
        import transformers

        return tuple(getattr(transformers, name) for name in wanted)


def name(wanted: str):
    """One of transformers' top-level names, imported under LOCK."""
    return names(wanted)[0]
