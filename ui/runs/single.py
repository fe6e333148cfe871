"""One computation per key at a time: the first caller computes while callers of the same key arriving meanwhile
wait, then read what it stored. A class opening a cold link computes it once, not once per reader (st.cache_data
does the same for the cached functions; these results are kept outside it, beside their progress bars)."""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager


class Single:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns: dict[Hashable, list] = {}  # key -> [its lock, callers holding or waiting for it]

    @contextmanager
    def turn(self, key: Hashable) -> Iterator[None]:
        """Hold `key`'s turn: one caller at a time per key (other keys run alongside). A caller that stops
        (the reader left, an error) hands the turn to the next."""
        with self._lock:
            entry = self._turns.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._turns[key]

    def waiting(self) -> int:
        """Keys with a caller holding or waiting for their turn (tests: none is left behind)."""
        with self._lock:
            return len(self._turns)
