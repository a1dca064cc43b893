"""Reading the stored replies back (the reading half of `replies.ReplyStore`): on a
connection of their own, so the views never wait on a commit; a row that cannot be
read is passed over and counted (`Unreadable`), never raised.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gwdesk.domain.settings import REPLIES_SEEN_UP_TO
from gwdesk.store.database import store_methods
from gwdesk.store.engine import Database, containing
from gwdesk.store.reply_values import (
    SELECT_REPLIES,
    ReplyPage,
    StoredReply,
    reply_from_row,
    time_of,
    time_text,
)
from gwdesk.store.stored_settings import StoredSettings
from gwdesk.store.unreadable import Unreadable


@store_methods
class ReplyReads:
    """The stored replies as `StoredReply` values (see `replies.ReplyStore`, whose
    constructor sets what is declared here)."""

    _reader: Database
    settings: StoredSettings
    unreadable: Unreadable

    def seen_up_to(self) -> int:
        """Replies with an id above this have not been seen by the operator."""
        return self.settings.get(REPLIES_SEEN_UP_TO)

    def _select(self, clause: str, params: tuple[object, ...]) -> list[StoredReply]:
        with self._reader.session() as session:
            rows = session.execute(SELECT_REPLIES + clause, params).fetchall()
        return self.unreadable.decoded(rows, reply_from_row)

    def _one(self, sql: str, params: tuple[object, ...] = ()) -> Any:
        with self._reader.session() as session:
            return session.execute(sql, params).fetchone()[0]

    def count(self) -> int:
        return int(self._one("SELECT COUNT(*) FROM replies"))

    def ping(self) -> None:
        """Read the replies' table once (one row at most): raises `StoreError` when the
        store does not answer (a health check's probe; no row is worked through)."""
        with self._reader.session() as session:
            session.execute("SELECT 1 FROM replies LIMIT 1").fetchall()

    def unseen_count(self) -> int:
        return int(self._one("SELECT COUNT(*) FROM replies WHERE id > ?", (self.seen_up_to(),)))

    def get(self, reply_id: int) -> StoredReply | None:
        found = self._select("WHERE id = ?", (reply_id,))
        return found[0] if found else None

    def newest_id(self) -> int:
        """The id of the reply stored last (0: none)."""
        return int(self._one("SELECT COALESCE(MAX(id), 0) FROM replies"))

    def latest(self, limit: int = 500) -> list[StoredReply]:
        """The newest replies by received time, newest first."""
        return self._select("ORDER BY received_at DESC, id DESC LIMIT ?", (limit,))

    def after(self, last_id: int, limit: int = 1000) -> list[StoredReply]:
        """Replies stored after `last_id`, oldest first: catching up after a missed feed."""
        return self.page_after(last_id, limit).replies

    def page_after(self, last_id: int, limit: int = 1000) -> ReplyPage:
        """A page of the replies stored after `last_id`: those that could be read, and where
        the page ends, counting the rows that could not (a reader moves past them)."""
        with self._reader.session() as session:
            query = SELECT_REPLIES + "WHERE id > ? ORDER BY id LIMIT ?"
            rows = session.execute(query, (last_id, limit)).fetchall()
        replies = self.unreadable.decoded(rows, reply_from_row)
        return ReplyPage(
            replies,
            unreadable=len(rows) - len(replies),
            last_id=int(rows[-1][0]) if rows else last_id,
            full=len(rows) >= limit,
        )

    def with_number(self, number: str, limit: int = 1000) -> list[StoredReply]:
        """One customer's replies, oldest first (a conversation)."""
        return self._select(
            "WHERE from_number = ? ORDER BY received_at, id LIMIT ?", (number, limit)
        )

    def search(self, needle: str, limit: int = 500) -> list[StoredReply]:
        """Replies whose text or numbers contain `needle` (case-insensitive), newest first."""
        pattern = containing(needle)
        return self._select(
            "WHERE lower(text) LIKE lower(?) ESCAPE '\\' OR lower(from_number) LIKE lower(?) ESCAPE '\\' "
            "OR lower(to_number) LIKE lower(?) ESCAPE '\\' "
            "ORDER BY received_at DESC, id DESC LIMIT ?",
            (pattern, pattern, pattern, limit),
        )

    def stored_after(
        self, after_id: int, *, received_since: datetime | None = None, limit: int = 1000
    ) -> list[StoredReply]:
        """Replies stored after `after_id`, received at or after `received_since`, in storing
        order: a script's way through them a page at a time (ids only grow)."""
        if received_since is None:
            return self.after(after_id, limit)
        return self._select(
            "WHERE id > ? AND received_at >= ? ORDER BY id LIMIT ?",
            (after_id, time_text(received_since), limit),
        )

    def latest_received_at(self, now: datetime) -> datetime | None:
        """The newest received time not after `now`: a reply dated ahead of this machine's
        clock (stored by an earlier version) must not move a backfill's window."""
        return time_of(
            self._one(
                "SELECT MAX(received_at) FROM replies WHERE received_at <= ?", (time_text(now),)
            )
        )
