"""Which running gwdesk is sending a batch: one lock file per process, held while it lives.

The console and the command line may share a profile's outbox. A batch one of them
is sending must not be reconciled or resent by the other, yet a batch whose sender
was killed must be taken over at once (no time-out to wait out). Each outbox
holder takes an exclusive OS lock on its own file `<token>.lock` and keeps it until
it closes; the operating system drops the lock when the process dies, even by
SIGKILL. A batch's `owner` names that token: the owner is alive exactly while its
file stays locked.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import IO

from gwdesk.private_files import open_private, private_folder


def _lock(handle: IO[bytes]) -> bool:
    """Take an exclusive lock without waiting; False when another process holds it."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


class OwnerLocks:
    """This process's lock file in `folder`, and liveness checks of other owners' files."""

    def __init__(self, folder: Path, token: str) -> None:
        self.folder = folder
        self.token = token
        self._handle: IO[bytes] | None = None

    def hold(self) -> None:
        """Create and lock this owner's file (once); raises OSError when it cannot."""
        if self._handle is not None:
            return
        private_folder(self.folder)
        handle = open_private(self.folder / f"{self.token}.lock", "a+b")
        if not _lock(handle):
            handle.close()
            raise OSError(f"the outbox lock {self.token} is held elsewhere")
        self._handle = handle

    def alive(self, token: str) -> bool:
        """Whether the process that took `token` still runs (its file is still locked)."""
        if token == self.token:
            return self._handle is not None
        if not _safe_token(token):
            return False
        path = self.folder / f"{token}.lock"
        try:
            handle = open_private(path, "a+b")
        except OSError:
            return False
        with handle:
            if not _lock(handle):
                return True
        with contextlib.suppress(OSError):
            path.unlink()  # a dead owner's leftover
        return False

    def release(self) -> None:
        handle, self._handle = self._handle, None
        if handle is None:
            return
        path = Path(handle.name)
        handle.close()
        with contextlib.suppress(OSError):
            os.unlink(path)


def _safe_token(token: str) -> bool:
    """A token read from the file is used in a path: only what `uuid4().hex` produces."""
    return 0 < len(token) <= 64 and all(c in "0123456789abcdef" for c in token)
