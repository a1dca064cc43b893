"""Rows a store cannot read: passed over, each logged once, so no reader ever stalls on one.

On a team's server another client may have written a row this gwdesk cannot read (an
older or newer gwdesk, a damaged row, a row written before the server checked them).
A reader that raised on it would raise on every later try too: the reply catch-up would
never get past it, and a command listing the rows would die. So each store reads its
rows through `Unreadable.decoded`: a row that does not decode is left out (the opt-out
list keeps it the safe way instead, see `store/optouts.py`), logged once by its key,
and counted, so the console and the command line can say "1 reply could not be read".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any, Final, TypeVar

T = TypeVar("T")
DECODE_ERRORS: Final = (ValueError, TypeError, KeyError, IndexError, OverflowError)
"""What decoding a row the reader does not understand raises (a time that is no time, an
unknown `how`, a missing column)."""

log = logging.getLogger("gwdesk.store.unreadable")


def first_column(row: Any) -> object:
    return row[0]


class Unreadable:
    """The rows of one table that one store could not read (see the module docstring)."""

    def __init__(self, table: str, key: Callable[[Any], object] = first_column) -> None:
        self.table = table
        self._key = key
        self._seen: set[object] = set()
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        """How many distinct rows could not be read so far."""
        with self._lock:
            return len(self._seen)

    def note(self, row: Any, exc: BaseException) -> object:
        """Log a row that could not be read (once per row); its key."""
        try:
            key = self._key(row)
        except DECODE_ERRORS:
            key = repr(row)[:80]
        with self._lock:
            new = key not in self._seen
            self._seen.add(key)
        if new:
            log.warning(
                "%s: row %r could not be read and is passed over (%s)", self.table, key, exc
            )
        return key

    def decoded(self, rows: Iterable[Any], decode: Callable[[Any], T]) -> list[T]:
        """Each row decoded; a row that cannot be is noted and left out."""
        found = []
        for row in rows:
            try:
                found.append(decode(row))
            except DECODE_ERRORS as exc:
                self.note(row, exc)
        return found
