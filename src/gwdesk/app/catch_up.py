"""Reading what other clients of a shared store added, from where this client last was.

A team's server says only "replies changed" (`gwdesk.store.changes`); each console
then reads the rows itself, past the last id it has shown. Ids only grow, so the
same read serves a notification, a burst of them, and the resync after a lost
connection alike: nothing is missed and nothing is shown twice. A row this gwdesk
cannot read (another client wrote it) is passed over and counted, never read again and
again: the next reply still shows.
"""

from __future__ import annotations

from typing import Final

from gwdesk.store.replies import ReplyStore, StoredReply

PAGE: Final = 1000
"""Rows read per query while catching up: a long absence costs several short reads."""


class ReplyCatchUp:
    """The replies stored after `last_id`, read in pages (blocking: call it off the GUI
    thread, one read at a time)."""

    def __init__(self, replies: ReplyStore, last_id: int = 0, page: int = PAGE) -> None:
        self.replies = replies
        self.last_id = last_id
        self.page = page
        self.unreadable = 0
        """Rows passed over so far because they could not be read."""

    def read(self) -> list[StoredReply]:
        """Everything stored since the last read, oldest first; `last_id` moves past it
        (and past rows that could not be read, counted in `unreadable`) once all of it is
        read (a read that fails part way leaves it, to read it again)."""
        found: list[StoredReply] = []
        unreadable = 0
        last_id = self.last_id
        while True:
            page = self.replies.page_after(last_id, self.page)
            found.extend(page.replies)
            unreadable += page.unreadable
            last_id = page.last_id
            if not page.full:
                self.last_id = last_id
                self.unreadable += unreadable
                return found

    def skip_to(self, last_id: int) -> None:
        """This console has shown up to `last_id` by another way (its own listener)."""
        self.last_id = max(self.last_id, last_id)
