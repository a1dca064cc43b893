"""Which running gwdesk is sending a batch: one lock file per process, held while it lives.

The console and the command line may share a profile's outbox. A batch one of them
is sending must not be reconciled or resent by the other, yet a batch whose sender
was killed must be taken over at once (no time-out to wait out). Each outbox
holder takes an exclusive OS lock on its own file `<token>.lock` and keeps it until
it closes; the operating system drops the lock when the process dies, even by
SIGKILL. A batch's `owner` names that token: the owner is alive exactly while its
file stays locked. On a team's server a claim is an advisory lock instead
(`outbox_advisory`). `OutboxClaims` is the claiming half of `outbox.OutboxStore`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING

from gwdesk.private_files import open_private, private_folder
from gwdesk.store.database import StoreError, store_methods
from gwdesk.store.engine import Session, SqliteDatabase
from gwdesk.store.outbox_reads import OutboxReads
from gwdesk.store.outbox_rows import OutboxBusy, OutboxError

if TYPE_CHECKING:
    from gwdesk.store.outbox_advisory import AdvisoryClaims


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


@store_methods
class OutboxClaims(OutboxReads):
    """Taking a batch for sending or reconciling, and letting go (see `outbox.OutboxStore`,
    whose constructor sets what is declared here)."""

    token: str
    """This outbox instance's name in a batch's `owner`."""
    _lock: threading.Lock
    _owners: OwnerLocks | None
    """A profile file's lock files (None: a server, or a file with no folder)."""
    _active: set[int]
    """Batches this instance is sending or reconciling now."""

    def claim(self, batch_id: int) -> None:
        """Take a batch for sending or reconciling; `OutboxBusy` when someone alive has it."""
        with self._lock:
            if batch_id in self._active:
                raise OutboxBusy(f"Outbox batch {batch_id} is already being sent in this window.")
            if self._server is not None:
                self._claim_on_server(self._server, batch_id)
            else:
                self._claim_in_file(batch_id)
            self._active.add(batch_id)

    def _claim_in_file(self, batch_id: int) -> None:
        if self._owners is not None:
            try:
                self._owners.hold()
            except OSError as exc:
                raise OutboxError(f"The outbox cannot be locked: {exc}.") from None
        with self._claim_write() as session:
            row = session.execute(
                "SELECT owner FROM outbox_batches WHERE id = ?", (batch_id,)
            ).fetchone()
            if row is None:
                raise OutboxError(f"There is no outbox batch {batch_id}.")
            owner = row[0]
            if (
                isinstance(owner, str)
                and owner != self.token
                and self._owners is not None
                and self._owners.alive(owner)
            ):
                raise _busy_elsewhere(batch_id)
            session.execute(
                "UPDATE outbox_batches SET owner = ? WHERE id = ?", (self.token, batch_id)
            )

    def _claim_write(self) -> contextlib.AbstractContextManager[Session]:
        """A claim's write to a file, not synced to disk on its own (a claim lost with a
        power cut means nothing: its process, and with it its lock file, died too);
        on a server, a transaction."""
        if isinstance(self.database, SqliteDatabase):
            return self.database.unsynced()
        return self.database.transaction()

    def _claim_on_server(self, server: AdvisoryClaims, batch_id: int) -> None:
        if not server.take(batch_id):
            raise _busy_elsewhere(batch_id)
        try:
            with self.database.session() as session:
                found = session.execute(
                    "UPDATE outbox_batches SET owner = ? WHERE id = ? RETURNING id",
                    (self.token, batch_id),
                ).fetchall()
            if not found:
                raise OutboxError(f"There is no outbox batch {batch_id}.")
        except BaseException:
            server.let_go(batch_id)
            raise

    def release(self, batch_id: int) -> None:
        """Let go of a batch. Never raises: a store closed meanwhile (the profile switched)
        has already let go, as its lock file (or its server connection) went with it."""
        with self._lock:
            self._active.discard(batch_id)
            with contextlib.suppress(StoreError), self._claim_write() as session:
                session.execute(
                    "UPDATE outbox_batches SET owner = NULL WHERE id = ? AND owner = ?",
                    (batch_id, self.token),
                )
            if self._server is not None:
                self._server.let_go(batch_id)

    @property
    def claim_pid(self) -> int | None:
        """The server process whose session holds this outbox's claims (what an
        administrator finds in `pg_stat_activity`); None in a file, 0 before a claim."""
        return None if self._server is None else self._server.pid

    def busy(self, batch_id: int) -> bool:
        """Whether this instance is working on the batch now."""
        with self._lock:
            return batch_id in self._active

    def held_elsewhere(self, batch_id: int) -> bool:
        """Whether another live outbox (another console, or another process of this
        workstation) holds the batch's claim now."""
        if self._server is not None:
            holder = self._server.holders([batch_id]).get(batch_id)
            return holder is not None and holder != self._server.pid
        batch = self.batch(batch_id)
        owner = None if batch is None else batch.owner
        if owner is None or owner == self.token or self._owners is None:
            return False
        with self._lock:
            return self._owners.alive(owner)

    def _not_held(self, batch_id: int) -> OutboxBusy:
        with self._lock:
            ours = batch_id in self._active
        if ours:
            return OutboxBusy(
                f"The claim on outbox batch {batch_id} was lost (the connection holding it "
                "to the shared store dropped), so nothing more is sent from it here; "
                "resume the batch to go on."
            )
        return _busy_elsewhere(batch_id)


def _busy_elsewhere(batch_id: int) -> OutboxBusy:
    return OutboxBusy(
        f"Outbox batch {batch_id} is being sent by another running gwdesk; "
        "try again when it has finished."
    )
